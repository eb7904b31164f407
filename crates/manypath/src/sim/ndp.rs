//! NDP's engine glue: arrivals at trimming switch ports (what the queue decided: queued,
//! dropped, or a header sent back to its sender), delivery of NDP packets (a trimmed
//! header or a returned one flagged for the transport), and the receiving hosts' pull
//! pacers, woken by `NdpPull` events. None of it runs without NDP: trimming ports fix no
//! departure before the packet leaves (their `TxDone`s are deferred, not events:
//! `Port::defers_tx_done`), and NDP connections are a flag of their own.

use super::capture::Join;
use super::events::EventKind;
use super::Sim;
use crate::net::packet::{Desc, Packet, TO_SERVER};
use crate::transport::ndp::flags as ndp_flags;
use crate::transport::ndp::NdpPair;
use crate::transport::tcp::Segment;

impl Sim {
    /// A packet reaches port `port_id`'s trimming queue (the link is busy or packets
    /// wait).
    pub(super) fn enqueue_trimming(&mut self, port_id: u32, d: Desc) {
        let now = self.now;
        let port = &mut self.net.ports[port_id as usize];
        // A control header whose turn is certain goes onto the wire now, to start when
        // the link is done with what it carries (`OutQueue::fixes_header`). A `TxDone`
        // pending for the data waiting behind it moves to its end if it is deferred and
        // due after now (`transmit` defers it again); an event could not move.
        let start = port.busy_until;
        let txdone_can_follow = !port.txdone_pending || (port.defers_tx_done && start > now);
        if txdone_can_follow && port.queue.fixes_header(&d) {
            port.queue.commit_header(now, &d, start);
            // The `TxDone` that would have started it counts among the events, taken
            // in place, so that the event count does not depend on deferral (nor on
            // the threads of a parallel run, whose links between partitions defer
            // nothing).
            self.events.count_run_unscheduled();
            return self.transmit(port_id, d, start, Join::Committed);
        }
        let a = port.queue.arrive_trimming(now, d);
        self.settle_admission(port_id, a);
    }

    /// A trimmed header that found port `port_id`'s header queue full goes back from
    /// the port's switch towards the host that sent it (NDP's return-to-sender): its
    /// destination becomes that host, and the transport learns on delivery that it came
    /// back. A returned header that meets a full header queue again is dropped there.
    #[cold]
    pub(super) fn return_to_sender(&mut self, port_id: u32, mut d: Desc) {
        let node = self.net.ports[port_id as usize].owner;
        let p = self.pkts.get(d.pkt);
        let c = &self.conns[p.conn as usize];
        d.dst = if p.dir == TO_SERVER { c.src } else { c.dst };
        match self.net.next_port(node, d.dst, d.hash) {
            Some(port) => {
                if self.deferred.defers_tx_done {
                    self.settle_port(port, self.now);
                }
                self.enqueue(port, d)
            }
            None => {
                self.counts.route_drops += 1;
                self.counts.dropped += 1;
                self.pkts.free(d.pkt);
            }
        }
    }

    /// Delivers a packet of an NDP connection: a data packet that arrives shorter than
    /// it was sent was trimmed; a data packet delivered to its own sender was returned.
    /// The receiver's requests for PULLs go to its host's pacer.
    pub(super) fn deliver_ndp(&mut self, d: Desc, p: Packet) {
        self.pkts.free(d.pkt);
        self.counts.delivered += 1;
        let now = self.now;
        let conn_id = p.conn;
        let conn = &mut self.conns[conn_id as usize];
        let returned = p.dir == TO_SERVER && d.dst == conn.src;
        let mut flags = p.flags;
        if p.payload > 0 && (d.wire as u32) < p.payload + conn.wire.header {
            flags |= ndp_flags::TRIMMED;
        }
        if returned {
            flags |= ndp_flags::RETURNED;
        }
        let seg = Segment {
            seq: p.seq,
            ack: p.ack,
            len: p.payload,
            flags,
            ts: p.ts,
            ts_echo: p.ts_echo,
            ..Segment::default()
        };
        let ep = if p.dir == TO_SERVER && !returned {
            1
        } else {
            0
        };
        conn.ep.on_segment(now, ep, 0, &seg);
        if ep == 1 {
            let host = conn.dst as usize;
            let requests = conn.ep.as_ndp_mut().map_or(0, NdpPair::pull_requests);
            for _ in 0..requests {
                self.pacers[host].request(conn_id);
            }
            self.wake_pacer(host, Some(conn_id));
        }
        self.flush_ep(conn_id, ep);
    }

    /// Makes sure host `host`'s pacer has a wake-up pending if it has requests; a pacer
    /// free now sends at once, without an event. `ack_of`: the connection whose
    /// receiver has just queued the ACK or NACK that asked for a PULL.
    fn wake_pacer(&mut self, host: usize, ack_of: Option<u32>) {
        if let Some(at) = self.pacers[host].wake_at(self.now) {
            if at == self.now {
                self.pull_tick(host as u32, ack_of);
            } else {
                self.events.schedule(at, EventKind::NdpPull, host as u32, 0);
            }
        }
    }

    /// Host `host`'s pull pacer may send: the next flow that still wants data sends
    /// its PULL, and the pacer waits one full data packet's time at the NIC's rate. A
    /// pacer that was idle with nothing waiting grants the PULL as the request comes:
    /// then the next flow is `ack_of`, whose ACK or NACK has not gone yet and carries it
    /// (htsim's pacer sends such a PULL on the ACK or NACK).
    pub(super) fn pull_tick(&mut self, host: u32, ack_of: Option<u32>) {
        let now = self.now;
        let h = host as usize;
        self.pacers[h].woken();
        while let Some(conn_id) = self.pacers[h].next(now) {
            let conn = &mut self.conns[conn_id as usize];
            let on_ack = ack_of == Some(conn_id);
            if conn.ep.as_ndp_mut().is_some_and(|p| p.pull(on_ack)) {
                let nic = self.net.host_nic[h];
                let interval = self.net.ports[nic as usize]
                    .rate
                    .serialization(conn.wire.max_wire);
                self.pacers[h].sent(now, interval);
                self.flush_ep(conn_id, 1);
                break;
            }
        }
        self.wake_pacer(h, None);
    }
}
