//! The hosts' endpoints: delivering packets to the transports, their timers, pumping
//! their segments into the NICs (waiting for room, and woken as a NIC drains), and the
//! flows' lifecycle: starts (opening connections, or offering bytes to persistent ones),
//! copies done, finishes and the closed loops they release.

use super::events::EventKind;
use super::results::Tally;
use super::triggers::{Triggers, NO_TRIGGER};
use super::{Sim, WireKind, NO_FLOW};
use crate::engine::Rng;
use crate::net::jitter::NicJitter;
use crate::net::packet::flags;
use crate::net::packet::{Desc, Ecn, Packet, PacketExt, INT, NDP, PINNED, TO_CLIENT, TO_SERVER};
use crate::time::SimTime;
use crate::transport::pair::ServerCounters;
use crate::transport::roce;
use crate::transport::tcp::Segment;
use std::collections::VecDeque;

/// What the engine keeps per host for its endpoints.
pub(super) struct Hosts {
    /// Per host port (NIC), the connection endpoints (conn << 1 | endpoint) waiting for
    /// room in its queue, served in order as it drains.
    pub blocked: Vec<VecDeque<u32>>,
    /// The hosts relay packets (BCube): they send without waiting for room.
    pub relaying: bool,
    /// Per host, draws the random paths of the MMPTCP packets it scatters (a stream per
    /// host, so a host's draws do not depend on other hosts' sends).
    pub scatter_rng: Vec<Rng>,
    /// Send jitter at the hosts' interfaces (`network.host_jitter_us`).
    pub jitter: NicJitter,
    /// Per host, when its receive processing is free (`host_rx`); empty when no
    /// connection has a host delay.
    pub host_rx_free: Vec<SimTime>,
}

/// Closed loops (`FlowSpec::after`) and triggers: closed-loop jobs (`FlowSpec::after_job`)
/// and dependency graphs (`FlowSpec::deps`).
pub(super) struct ClosedLoops {
    /// The flow each flow's finish starts (`NO_FLOW`: none), and each flow's think time
    /// after its predecessor's finish or its trigger's firing.
    pub successor: Vec<u32>,
    pub think: Vec<SimTime>,
    /// The triggers (a job is a barrier its flows' finishes activate).
    pub triggers: Triggers,
}

/// A RoCE or NDP packet's class byte: data in the connection's priority (HPCC's with the
/// `INT` bit, so switch ports stamp it), control packets (ACK, NAK, CNP; NDP's ACK, NACK,
/// PULL) in class 0, as NICs and switches give them a high-priority queue; NDP's keep
/// their `NDP` bit.
#[inline]
fn control_class(priority: u8, int: bool, seg: &Segment) -> u8 {
    if seg.len == 0 {
        priority & NDP
    } else if int {
        priority | INT
    } else {
        priority
    }
}

impl Sim {
    /// Lets endpoints waiting for room in a host's NIC queue send again.
    pub(super) fn unblock(&mut self, nic: u32) {
        let waiting = nic as usize;
        while let Some(&entry) = self.hosts.blocked[waiting].front() {
            let (conn_id, ep) = (entry >> 1, (entry & 1) as usize);
            let wire = self.conns[conn_id as usize].wire.max_wire;
            if !self.net.ports[nic as usize].queue.has_room(wire) {
                return;
            }
            self.hosts.blocked[waiting].pop_front();
            self.conns[conn_id as usize].blocked[ep] = false;
            self.flush_ep(conn_id, ep);
        }
        if self.homa.is_some() {
            self.homa_nic_free(nic);
        }
    }

    pub(super) fn deliver(&mut self, d: Desc) {
        if !self.hosts.host_rx_free.is_empty() && self.hold_for_host(d) {
            return;
        }
        self.process(d)
    }

    /// The receiving host processes packet `d`: its endpoint reads it.
    pub(super) fn process(&mut self, d: Desc) {
        let p = *self.pkts.get(d.pkt);
        match self.conns[p.conn as usize].wire.kind {
            WireKind::Ndp => return self.deliver_ndp(d, p),
            WireKind::Plain | WireKind::Pfabric | WireKind::Roce | WireKind::Hpcc => {}
        }
        // Freed first, its slots read after: nothing allocates before the endpoint's
        // sends (`flush`), and the arena reuses the slot then.
        self.pkts.free(d.pkt);
        self.counts.delivered += 1;
        if self.homa.is_some() && self.homa_deliver(&p) {
            return;
        }
        let conn = &mut self.conns[p.conn as usize];
        // The descriptor holds the ECN codepoint as the fabric left it.
        let incoming_ecn = if p.dir == TO_SERVER {
            d.ecn == Ecn::Ce
        } else {
            p.has(flags::ECE)
        };
        let mut seg = Segment {
            seq: p.seq,
            ack: p.ack,
            len: p.payload,
            flags: p.flags,
            ecn: incoming_ecn,
            rwnd: p.rwnd,
            ts: p.ts,
            ts_echo: p.ts_echo,
            dsn: p.dsn,
            data_ack: p.data_ack,
            scatter: false,
            ..Segment::default()
        };
        if p.has(flags::SACK | flags::CODED) {
            let ext = self.pkts.ext(d.pkt);
            seg.sack = ext.sack;
            seg.sack_n = ext.sack_n;
            seg.coded_len = ext.coded_len;
        }
        let ep = if p.dir == TO_SERVER { 1 } else { 0 };
        if conn.wire.kind.carries_int() {
            self.deliver_int(p.conn, ep, d.pkt, &seg);
        } else {
            conn.ep.on_segment(self.now, ep, p.sub as usize, &seg);
        }
        self.flush_ep(p.conn, ep);
    }

    /// `deliver` to an HPCC endpoint, with packet `pkt`'s INT records: on its data the
    /// switches' stamps, on its ACKs the echo (every packet of an HPCC connection has its
    /// slot, cleared at send). Out of line, so other transports pay one flag test.
    #[inline(never)]
    fn deliver_int(&mut self, conn: u32, ep: usize, pkt: u32, seg: &Segment) {
        // Read in place (the arena and the connections are apart): no copy of the stack.
        let stack = self.pkts.int(pkt);
        let pair = &mut self.conns[conn as usize].ep;
        match pair.as_roce_mut() {
            Some(p) => p.on_segment_int(self.now, ep, seg, stack),
            // Only RoCE queue pairs run HPCC (`Wire::of`).
            None => pair.on_segment(self.now, ep, 0, seg),
        }
    }

    pub(super) fn timer(&mut self, conn_id: u32, endpoint: u32) {
        if self.homa.is_some() && self.homa_timer(conn_id, endpoint) {
            return;
        }
        let now = self.now;
        let conn = &mut self.conns[conn_id as usize];
        if conn.timer_at[endpoint as usize] == now {
            conn.timer_at[endpoint as usize] = 0;
        }
        conn.ep.on_timer(now, endpoint as usize);
        self.flush_ep(conn_id, endpoint as usize);
    }

    /// Sends whatever endpoint `ep` (0: client, 1: server) of a connection has to send,
    /// keeps one timer event pending for it at or before its deadline, and completes the
    /// flows whose bytes are acknowledged. Only the endpoint whose host handled the event
    /// acts: the other one's state has not changed, and a host's events never touch
    /// another host's endpoint (which a run split over threads needs).
    pub(super) fn flush_ep(&mut self, conn_id: u32, ep: usize) {
        let host = {
            let c = &self.conns[conn_id as usize];
            if ep == 0 {
                c.src
            } else {
                c.dst
            }
        };
        self.pump(conn_id, ep, host);
        if ep == 1 && !self.server_log.is_empty() {
            self.log_server(conn_id);
        }
        if ep == 1 && !self.closed.triggers.recv_watch.is_empty() {
            let c = &self.conns[conn_id as usize];
            if c.ep.data_received() >= c.watch_end {
                self.check_received(conn_id);
            }
        }
        let conn = &mut self.conns[conn_id as usize];
        if let Some(d) = conn.ep.timer_deadline(ep) {
            let at = conn.timer_at[ep];
            if at == 0 || at > d {
                conn.timer_at[ep] = d;
                self.events
                    .schedule(d, EventKind::Timer, conn_id, ep as u32);
            }
        }
        loop {
            let conn = &mut self.conns[conn_id as usize];
            match conn.pending.front() {
                Some(&(f, end)) if conn.ep.data_acked() >= end => {
                    conn.pending.pop_front();
                    self.copy_done(f);
                }
                _ => break,
            }
        }
    }

    /// Notes connection `conn_id`'s server counters if they changed (its server just
    /// acted).
    #[inline(never)]
    fn log_server(&mut self, conn_id: u32) {
        let now = self.now;
        let counters = self.conns[conn_id as usize].ep.server_counters();
        let log = &mut self.server_log[conn_id as usize];
        if log.last().map_or(ServerCounters::default(), |&(_, c)| c) != counters {
            log.push((now, counters));
        }
    }

    /// Flow `f` starts: its connections open, or its bytes go to its persistent ones.
    pub(super) fn start_flow(&mut self, f: u32) {
        let flow = &mut self.flows[f as usize];
        flow.started = true;
        let persistent = flow.spec.conn.is_some();
        let size = flow.spec.size;
        for k in 0..flow.copies as usize {
            let id = if persistent && k == 0 {
                self.pick_connection(f)
            } else {
                self.flows[f as usize].conns[k]
            };
            let conn = &mut self.conns[id as usize];
            match (persistent, size) {
                (false, Some(size)) => {
                    conn.ep.open();
                    conn.pending.push_back((f, size));
                    // A Homa message goes to its sender's agent (the checker keeps Homa
                    // off persistent connections and long-lived flows).
                    if self.homa.is_some() {
                        self.homa_start(id);
                    }
                }
                (false, None) => conn.ep.open(),
                (true, size) => {
                    let size = size.expect("messages have a size");
                    if self.pools.opened_by(id) == Some(f) {
                        conn.ep.open();
                    }
                    let watched = self.closed.triggers.persistent_end.get(f as usize);
                    if let Some(&end) = watched.filter(|&&end| end > 0) {
                        // The receive-done watch counted on this order (`Triggers::watch`).
                        assert_eq!(
                            conn.offered + size,
                            end,
                            "message {f} started out of its connection's order"
                        );
                    }
                    self.flows[f as usize]
                        .persistent
                        .get_or_insert_with(Default::default)
                        .base[k] = Tally::of(&conn.ep);
                    conn.offered += size;
                    conn.ep.offer(size);
                    conn.pending.push_back((f, conn.offered));
                }
            }
            self.flush_ep(id, 0);
        }
    }

    /// A copy of flow `f` has been acknowledged in full: the first completes the flow.
    pub(super) fn copy_done(&mut self, f: u32) {
        let flow = &mut self.flows[f as usize];
        if flow.finish.is_some() {
            return;
        }
        flow.finish = Some(self.now);
        if flow.spec.conn.is_some() {
            let share = self.persistent_share(f);
            self.flows[f as usize]
                .persistent
                .get_or_insert_with(Default::default)
                .share = Some(share);
        }
        self.unfinished -= 1;
        let next = self.closed.successor[f as usize];
        if next != NO_FLOW {
            let here = self.finish_host(f);
            let signal = if self.flows[next as usize].spec.src == here {
                0
            } else {
                self.windows.step
            };
            self.start_later(next, self.now, signal);
        }
        let trigger = self.closed.triggers.on_finish.get(f as usize);
        if let Some(&t) = trigger.filter(|&&t| t != NO_TRIGGER) {
            self.activate(t, f);
        }
    }

    /// A waiting flow's turn has come: it starts after its think time, and no sooner
    /// than `signal` after the finish that released it. The finish of a flow from
    /// another host, or of a job's last flow (its flows finish on many hosts), is news
    /// that has to cross the fabric: `signal` is then one synchronisation step (the
    /// smallest link delay), which is also what lets a run split over threads tell
    /// another thread of it in time.
    /// `finished` is the releasing finish's time (now, or, for a job counted at a
    /// window's end in a run over several threads, when its last flow finished).
    pub(super) fn start_later(&mut self, f: u32, finished: SimTime, signal: SimTime) {
        let at = finished + self.closed.think[f as usize].max(signal);
        if !self.owns_flow(f) {
            return self.send_flow_start(at, f);
        }
        self.flows[f as usize].spec.start = at;
        self.events.schedule(at, EventKind::FlowStart, f, 0);
    }

    /// Hands an endpoint's segments to its host's NIC while the NIC queue has room. A
    /// full NIC makes the endpoint wait (as Linux's TCP small queues do) instead of
    /// dropping the host's own packets.
    fn pump(&mut self, conn_id: u32, ep: usize, host: u32) {
        let now = self.now;
        let nic = self.net.host_nic[host as usize];
        if ep == 0 && now >= self.conns[conn_id as usize].stop_at {
            return;
        }
        loop {
            let c = &mut self.conns[conn_id as usize];
            // A host with several NICs waits on any that is full.
            let nic = if self.net.multi_nic {
                self.net.full_nic(host, c.wire.max_wire).unwrap_or(nic)
            } else {
                nic
            };
            // Relaying hosts (BCube) offer their own packets to their interfaces as they
            // do relayed ones: a full queue drops them.
            if !self.net.ports[nic as usize].queue.has_room(c.wire.max_wire) && !self.hosts.relaying
            {
                if !c.blocked[ep] {
                    c.blocked[ep] = true;
                    self.hosts.blocked[nic as usize].push_back(conn_id << 1 | ep as u32);
                    if self.deferred.defers_tx_done {
                        self.undefer_tx_done(nic);
                    }
                }
                return;
            }
            match c.ep.poll_transmit(now, ep) {
                Some((sub, seg)) => {
                    let dir = if ep == 0 { TO_SERVER } else { TO_CLIENT };
                    self.send(conn_id, dir, sub, &seg)
                }
                None => return,
            }
        }
    }

    /// What a packet of pFabric, RoCE or NDP adds at send. pFabric: a data packet of the
    /// client carries its flow's unacknowledged bytes, its priority at pFabric queues.
    /// RoCE and NDP: its class byte (`control_class`), and for HPCC its INT slot: data
    /// starts with no records; an ACK or NAK carries the responder's echo of the latest
    /// data packet's (CNPs carry none). Out of line: TCP pays a flag test.
    #[inline(never)]
    fn special_send(&mut self, conn_id: u32, id: u32, d: &mut Desc, dir: u8, seg: &Segment) {
        let c = &self.conns[conn_id as usize];
        let w = c.wire;
        match w.kind {
            WireKind::Plain => {}
            WireKind::Pfabric => {
                if dir == TO_SERVER && seg.len > 0 {
                    self.pkts.get_mut(id).dsn = c.ep.unacked_bytes();
                }
            }
            WireKind::Roce | WireKind::Ndp => {
                d.class = control_class(w.priority, false, seg) | w.pinned;
            }
            WireKind::Hpcc => {
                d.class = control_class(w.priority, true, seg) | w.pinned;
                self.pkts.clear_int(id);
                if seg.len == 0 && !seg.has(roce::flags::CNP) {
                    if let Some(p) = c.ep.as_roce() {
                        *self.pkts.int_mut(id) = *p.int_echo();
                    }
                }
            }
        }
    }

    #[inline(never)]
    fn send(&mut self, conn_id: u32, dir: u8, sub: usize, seg: &Segment) {
        let class = self.conns[conn_id as usize].wire.priority;
        self.send_classed(conn_id, dir, sub, seg, class)
    }

    /// Sends a segment as a packet whose class byte has priority `class` (and the
    /// connection's `PINNED` bit); RoCE and NDP then set their control packets' class,
    /// pFabric its data's priority (`special_send`).
    #[inline(always)]
    pub(super) fn send_classed(
        &mut self,
        conn_id: u32,
        dir: u8,
        sub: usize,
        seg: &Segment,
        class: u8,
    ) {
        let c = &self.conns[conn_id as usize];
        let (src, dst) = if dir == TO_SERVER {
            (c.src, c.dst)
        } else {
            (c.dst, c.src)
        };
        let pkt = Packet {
            seq: seg.seq,
            ack: seg.ack,
            ts: seg.ts,
            ts_echo: seg.ts_echo,
            dsn: seg.dsn,
            // Swift's receiver echoes its endpoint delay in the data-ack slot, which
            // single-path connections do not use otherwise (`host_rx`).
            data_ack: if c.host_rx.per_packet > 0 && dir == TO_CLIENT {
                c.host_rx.echo
            } else {
                seg.data_ack
            },
            conn: conn_id,
            rwnd: seg.rwnd,
            payload: seg.len,
            flags: seg.flags,
            dir,
            sub: sub as u8,
        };
        let id = self.pkts.alloc(pkt);
        let mut d = Desc {
            pkt: id,
            dst,
            // A scattered packet takes a random source port, hence a random ECMP path.
            hash: if seg.scatter {
                self.hosts.scatter_rng[src as usize].next_u64() as u32
            } else {
                c.hash[sub][dir as usize]
            },
            wire: (seg.len + c.wire.header) as u16,
            ecn: if seg.ecn && seg.len > 0 {
                Ecn::Ect
            } else {
                Ecn::NotEct
            },
            class: class | c.wire.pinned,
        };
        if c.wire.kind.adds_at_send() {
            self.special_send(conn_id, id, &mut d, dir, seg);
        }
        if seg.has(flags::SACK | flags::CODED) {
            self.pkts.set_ext(
                id,
                PacketExt {
                    sack: seg.sack,
                    sack_n: seg.sack_n,
                    coded_len: seg.coded_len,
                },
            );
        }
        let nic = if d.class & PINNED != 0 {
            self.net
                .pinned_first(d.hash)
                .unwrap_or(self.net.host_nic[src as usize])
        } else {
            self.net.source_port(src, d.hash)
        };
        self.enqueue(nic, d);
    }
}
