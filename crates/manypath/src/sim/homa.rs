//! Homa in the engine: every host's Homa agents (`transport::homa`), the one packet at a
//! time each host's sender hands its NIC, the grants and RESENDs its receiver sends, the
//! messages' timers and their completions.
//!
//! A Homa message is a connection whose endpoints are a record (`Endpoints::Homa`); its
//! packets go to the agents of its hosts instead of to the connection. A host's sender
//! is asked for a packet whenever its NIC has none waiting (when a message starts, when
//! a grant or RESEND arrives, and as the NIC frees, from `unblock`), so at most one data
//! packet waits behind the one on the wire and the choice of the next is made as late as
//! it can be (SRPT at the sender). Grants and RESENDs go out at once, in level 0.

use super::events::EventKind;
use super::{Conn, Flow, Sim, NO_FLOW};
use crate::connection::Endpoints;
use crate::engine::rng::{stream, Rng};
use crate::net::network::Network;
use crate::net::packet::{Packet, TO_CLIENT, TO_SERVER};
use crate::scenario::Plan;
use crate::time::SimTime;
use crate::transport::homa::receiver::{Arrival, Control};
use crate::transport::homa::sender::SenderTimer;
use crate::transport::homa::{HomaConfig, HostReceiver, HostSender};
use crate::transport::tcp::Segment;

/// Message sizes drawn from the workload to cut the unscheduled levels at.
const SIZE_SAMPLE: usize = 100_000;

/// Every host's Homa agents.
pub(super) struct HomaHosts {
    cfg: HomaConfig,
    senders: Vec<HostSender>,
    receivers: Vec<HostReceiver>,
    /// Per host port (NIC): its host.
    nic_host: Vec<u32>,
    /// Per connection, the flow whose message it carries (`NO_FLOW`: not a Homa
    /// message), for its receiver to complete.
    msg_flow: Vec<u32>,
    /// Per host, the messages its sender learns are complete, with when: it forgets
    /// each before anything it does from then on (`homa_forget`).
    releases: Vec<Vec<(SimTime, u32)>>,
}

impl HomaHosts {
    /// The agents of a run with Homa messages (`None` without any), and which flow each
    /// message carries (`flows` on `conns`). The transport's settings are resolved against the network's base RTT
    /// (`base_rtt` for packets of `data` wire bytes there and `ack` back), the first
    /// host's line rate, and a sample of the sizes of the traffic entries that use it
    /// (all or, by a size split, their larger flows: then the entry's whole
    /// distribution).
    pub(super) fn build(
        plan: &Plan,
        net: &mut Network,
        conns: &[Conn],
        flows: &[Flow],
        base_rtt: impl FnOnce(&mut Network, u32, u32) -> crate::time::SimTime,
    ) -> Option<Box<HomaHosts>> {
        if !conns.iter().any(|c| matches!(c.ep, Endpoints::Homa(_))) {
            return None;
        }
        let (index, t) = plan
            .transports
            .iter()
            .enumerate()
            .find(|(_, t)| t.homa.is_some())?;
        let settings = t.homa?;
        let mut rng = Rng::new(plan.seed, stream::HOMA, 0);
        let dists: Vec<_> = plan
            .traffic
            .iter()
            .filter(|g| {
                g.transport as usize == index
                    || g.split.is_some_and(|s| s.transport as usize == index)
            })
            .map(|g| &g.size)
            .collect();
        let mut sizes: Vec<u64> = if dists.is_empty() {
            Vec::new()
        } else {
            (0..SIZE_SAMPLE)
                .filter_map(|i| dists[i % dists.len()].sample(&mut rng))
                .collect()
        };
        let rtt = base_rtt(net, t.tcp.mss + t.tcp.header, t.tcp.header);
        let host_nic = &net.host_nic;
        let line_bps = host_nic
            .first()
            .map_or(0.0, |&p| net.ports[p as usize].rate.bits_per_sec() as f64);
        let cfg = settings.config(t.tcp.mss, rtt, line_bps, &mut sizes);
        let mut nic_host = vec![u32::MAX; net.host_ports()];
        for (h, &p) in host_nic.iter().enumerate() {
            nic_host[p as usize] = h as u32;
        }
        let mut msg_flow = vec![NO_FLOW; conns.len()];
        for (f, flow) in flows.iter().enumerate() {
            for &c in flow.copies() {
                if matches!(conns[c as usize].ep, Endpoints::Homa(_)) {
                    msg_flow[c as usize] = f as u32;
                }
            }
        }
        Some(Box::new(HomaHosts {
            cfg,
            msg_flow,
            releases: vec![Vec::new(); host_nic.len()],
            senders: vec![HostSender::default(); host_nic.len()],
            receivers: vec![HostReceiver::default(); host_nic.len()],
            nic_host,
        }))
    }

    /// The settings the run uses.
    #[cfg(test)]
    pub(super) fn config(&self) -> &HomaConfig {
        &self.cfg
    }
}

impl Sim {
    /// The agents (only called in runs that have them).
    fn agents(&mut self) -> &mut HomaHosts {
        self.homa.as_deref_mut().expect("a run with Homa")
    }

    /// Hands connection `conn_id`'s message to its sender's agent as its flow starts (not
    /// a Homa message: nothing).
    pub(super) fn homa_start(&mut self, conn_id: u32) {
        let now = self.now;
        let c = &self.conns[conn_id as usize];
        let Endpoints::Homa(m) = &c.ep else {
            return;
        };
        let (len, src) = (m.len, c.src);
        self.homa_forget(src);
        let h = self.agents();
        h.senders[src as usize].add(now, &h.cfg, conn_id, len);
        self.homa_pump(src);
    }

    /// A packet of a Homa message reached its host; whether it was one (else the
    /// caller hands it to the connection). Each host acts on its own agent and its own
    /// part of the message's record only (`HomaMessage`): what the other host learns, it
    /// learns from a packet, or, for the completion, a step later (`homa_release`).
    pub(super) fn homa_deliver(&mut self, p: &Packet) -> bool {
        let now = self.now;
        let c = &mut self.conns[p.conn as usize];
        let (src, dst) = (c.src, c.dst);
        let Endpoints::Homa(m) = &mut c.ep else {
            return false;
        };
        if p.dir == TO_SERVER {
            // A late copy of a packet of a message its receiver has in full.
            if m.finish.is_some() {
                return true;
            }
            // The message's length comes in every data packet's header (`dsn`).
            let h = self.homa.as_deref_mut().expect("a run with Homa");
            let arrival =
                h.receivers[dst as usize].on_data(now, &h.cfg, p.conn, p.dsn, p.seq, p.payload);
            let timeout = h.cfg.resend_timeout;
            self.homa_controls(dst);
            match arrival {
                Arrival::Complete => {
                    if let Endpoints::Homa(m) = &mut self.conns[p.conn as usize].ep {
                        m.finish = Some(now);
                    }
                    self.conns[p.conn as usize].pending.clear();
                    self.homa_tell_sender(p.conn, src);
                    // Its flow completes here, at the receiver.
                    let flow = self.agents().msg_flow[p.conn as usize];
                    // Delivered in full and done at once: receive-done, then send-done.
                    if !self.closed.triggers.recv_watch.is_empty() {
                        self.flow_received(flow);
                    }
                    self.copy_done(flow);
                }
                Arrival::Partial => self.homa_arm(p.conn, 1, now + timeout),
                Arrival::Duplicate => {}
            }
        } else {
            // A GRANT or RESEND for a message its sender has forgotten.
            if m.released(now) {
                return true;
            }
            let seg = Segment {
                seq: p.seq,
                ack: p.ack,
                flags: p.flags,
                ..Segment::default()
            };
            let ctl = Control::of_segment(p.conn, &seg);
            match ctl {
                Control::Grant { .. } => m.stats.grants += 1,
                Control::Resend { .. } => m.stats.resends += 1,
            }
            self.homa_forget(src);
            self.agents().senders[src as usize].on_control(now, ctl);
            self.homa_pump(src);
        }
        true
    }

    /// Message `conn_id`'s receiver has all of it: its sender (on host `src`) learns so
    /// a synchronisation step later (the fabric's smallest link delay), on every run.
    /// News from another host takes at least that long, which is also what lets a run
    /// over several threads pass it to the sender's partition in time. (Homa carries no
    /// such acknowledgement for a one-way message; the sender's forgetting it stands for
    /// the RPC's response, and keeps its list of messages short.)
    fn homa_tell_sender(&mut self, conn_id: u32, src: u32) {
        let at = self.now + self.windows.step;
        if self.owns_node(src) {
            self.homa_release(at, conn_id);
        } else {
            self.send_homa_done(at, conn_id);
        }
    }

    /// Message `conn_id`'s sender learns at `at` that its receiver has all of it: from
    /// then on the message is forgotten (`homa_forget`, before anything else the sender
    /// does).
    pub(super) fn homa_release(&mut self, at: SimTime, conn_id: u32) {
        let c = &mut self.conns[conn_id as usize];
        let src = c.src;
        if let Endpoints::Homa(m) = &mut c.ep {
            m.release = Some(at);
        }
        self.agents().releases[src as usize].push((at, conn_id));
    }

    /// Host `host`'s sender forgets the messages it has learnt are complete by now.
    #[inline]
    fn homa_forget(&mut self, host: u32) {
        let now = self.now;
        let h = self.agents();
        let pending = &mut h.releases[host as usize];
        if pending.is_empty() {
            return;
        }
        let sender = &mut h.senders[host as usize];
        pending.retain(|&(at, msg)| {
            if at <= now {
                sender.remove(msg);
            }
            at > now
        });
    }

    /// A Homa message's timer (endpoint 0: its sender's, 1: its receiver's); whether
    /// the connection was one.
    pub(super) fn homa_timer(&mut self, conn_id: u32, ep: u32) -> bool {
        let now = self.now;
        let c = &mut self.conns[conn_id as usize];
        let (src, dst) = (c.src, c.dst);
        let Endpoints::Homa(m) = &mut c.ep else {
            return false;
        };
        if c.timer_at[ep as usize] == now {
            c.timer_at[ep as usize] = 0;
        }
        // Each end's timer stops once that end knows the message is done.
        let done = if ep == 0 {
            m.released(now)
        } else {
            m.finish.is_some()
        };
        if done {
            return true;
        }
        if ep == 0 {
            self.homa_forget(src);
            let h = self.agents();
            match h.senders[src as usize].on_timer(now, &h.cfg, conn_id) {
                SenderTimer::Later(at) => self.homa_arm(conn_id, 0, at),
                SenderTimer::Repeat => {
                    if let Endpoints::Homa(m) = &mut self.conns[conn_id as usize].ep {
                        m.stats.timeouts += 1;
                    }
                    self.homa_pump(src);
                }
                SenderTimer::Off => {}
            }
        } else {
            let h = self.agents();
            if let Some(at) = h.receivers[dst as usize].on_timer(now, &h.cfg, conn_id) {
                self.homa_arm(conn_id, 1, at);
            }
            self.homa_controls(dst);
        }
        true
    }

    /// NIC `nic` has room: its host's sender may hand it a packet.
    #[inline]
    pub(super) fn homa_nic_free(&mut self, nic: u32) {
        let host = self.agents().nic_host[nic as usize];
        if host != u32::MAX {
            self.homa_pump(host);
        }
    }

    /// Hands host `host`'s NIC data packets while none waits in its queue: one goes onto
    /// the wire (if the link is free) and one waits.
    fn homa_pump(&mut self, host: u32) {
        let now = self.now;
        self.homa_forget(host);
        let nic = self.net.host_nic[host as usize];
        while self.net.ports[nic as usize].queue.is_empty() {
            let h = self.homa.as_deref_mut().expect("a run with Homa");
            let Some(pkt) = h.senders[host as usize].poll_transmit(now, &h.cfg) else {
                return;
            };
            let timeout = h.cfg.resend_timeout;
            // The sender's timer watches only messages whose receiver has not been
            // heard from (`HostSender::on_timer`).
            let mut unheard = false;
            if let Endpoints::Homa(m) = &mut self.conns[pkt.msg as usize].ep {
                unheard = m.stats.grants == 0 && m.stats.resends == 0;
                m.stats.packets_sent += 1;
                m.stats.bytes_sent += pkt.len as u64;
                if pkt.retx {
                    m.stats.packets_retx += 1;
                    m.stats.bytes_retx += pkt.len as u64;
                }
            }
            let seg = Segment {
                seq: pkt.offset,
                len: pkt.len,
                dsn: pkt.msg_len,
                ..Segment::default()
            };
            self.send_classed(pkt.msg, TO_SERVER, 0, &seg, pkt.level);
            if pkt.idle_after && unheard {
                self.homa_arm(pkt.msg, 0, now + timeout);
            }
        }
    }

    /// Sends host `host`'s receiver's GRANTs and RESENDs, in level 0.
    fn homa_controls(&mut self, host: u32) {
        while let Some(ctl) = self.agents().receivers[host as usize].poll_control() {
            self.send_classed(ctl.msg(), TO_CLIENT, 0, &ctl.segment(), 0);
        }
    }

    /// Makes sure endpoint `ep` of connection `conn_id` has a timer event at `at` or
    /// before (the agents look again when it fires).
    fn homa_arm(&mut self, conn_id: u32, ep: usize, at: crate::time::SimTime) {
        let c = &mut self.conns[conn_id as usize];
        if c.timer_at[ep] == 0 || c.timer_at[ep] > at {
            c.timer_at[ep] = at;
            self.events
                .schedule(at, EventKind::Timer, conn_id, ep as u32);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// A star of 10 Gb/s links and 8-level switch queues: host 1 sends host 0 a message
    /// of `long` bytes at time 0, host 2 one of `short` bytes at `later_us`.
    fn run(long: u64, short: u64, later_us: f64, extra: &str) -> Sim {
        let text = format!(
            r#"
            duration_ms = 20
            [topology.star]
            senders = 2
            [network.link]
            rate_gbps = 10
            delay_us = 1
            [network.queue]
            limit_packets = 1000
            priority_levels = 8
            [transports.homa]
            cc = "homa"
            {extra}
            [[traffic]]
            pattern = "pair"
            transport = "homa"
            src = 1
            dst = 0
            size = {{ fixed = {long} }}
            [[traffic]]
            pattern = "pair"
            transport = "homa"
            src = 2
            dst = 0
            start_us = {later_us}
            size = {{ fixed = {short} }}
            "#
        );
        let mut sim = Sim::new(Plan::from_toml(&text, Path::new(".")).unwrap());
        sim.run();
        sim
    }

    fn finish(s: &Sim, flow: usize) -> crate::time::SimTime {
        s.flows[flow].finish.expect("finished")
    }

    fn grants(s: &Sim, flow: usize) -> u32 {
        s.conns[s.flows[flow].conns[0] as usize]
            .ep
            .recovery_counters()
            .grants
    }

    #[test]
    fn the_shorter_message_finishes_first_though_it_came_later() {
        // 1 MB from 0 µs, 200 KB from 100 µs. Under SRPT the short one takes the link
        // and ends about its own transmission time (160 µs) after it starts; sharing the
        // link (two messages granted, one priority level) it takes twice that.
        let s = run(1_000_000, 200_000, 100.0, "");
        let (long, short) = (finish(&s, 0), finish(&s, 1));
        assert!(short < long, "short {short} long {long}");
        let alone = 160_000_000u64; // 200 KB at 10 Gb/s, in ps
        assert!(
            short - 100_000_000 < alone + alone / 4,
            "short took {}",
            short - 100_000_000
        );
        assert!(grants(&s, 0) > 0 && grants(&s, 1) > 0);
    }

    #[test]
    fn a_message_within_the_unscheduled_bytes_needs_no_grant() {
        let s = run(1_000_000, 5_000, 100.0, "homa_rtt_bytes = 9700");
        assert_eq!(s.homa.as_ref().unwrap().config().rtt_bytes, 9700);
        assert_eq!(grants(&s, 1), 0);
        assert!(finish(&s, 1) < finish(&s, 0));
        assert!(grants(&s, 0) > 0);
        // Nothing was lost or sent again.
        for f in 0..2 {
            let r = s.conns[s.flows[f].conns[0] as usize].ep.recovery_counters();
            assert_eq!((r.packets_retx, r.resends), (0, 0));
        }
    }

    #[test]
    fn rtt_bytes_default_to_one_base_rtt_at_line_rate() {
        let s = run(100_000, 5_000, 0.0, "");
        let cfg = s.homa.as_ref().unwrap().config();
        // Two 1 µs hops each way, a 1500-byte packet there (1.2 µs per hop at 10 Gb/s)
        // and a header back: about 6.5 µs, 8 KB at 10 Gb/s.
        assert!((7_000..9_000).contains(&cfg.rtt_bytes), "{}", cfg.rtt_bytes);
        assert_eq!(cfg.priorities.levels, 8);
        assert_eq!(cfg.overcommit as u8, cfg.priorities.scheduled().len() as u8);
    }
}
