//! The lossless fabric's packet path (`net::fabric`): admission into a switch's shared
//! buffer, PFC's ingress accounting and its PAUSE/RESUME frames, ports obeying pauses,
//! and the deadlock check. Runs only when `network.buffer` or `network.pfc` is set;
//! otherwise `enqueue` and `tx_done` never come here.
//!
//! PAUSE frames are events, not packets: a frame leaves after the frame being
//! serialised on its link direction and after the PFC frame sent before it there, and
//! acts a serialisation (64 bytes) and a propagation delay later. It takes no bandwidth
//! from the data behind it (at most 64 bytes per pause, against the MTU-sized frames it
//! stops). A pause lasts until the
//! RESUME (a quanta of 0xFFFF refreshed while congested, as switches send it, behaves
//! the same). In a run over several threads a frame to another partition's node goes
//! there as a message, as a packet does (`sim::parallel`). A capture of the sending
//! port records the frame at its start (`Sim::observe_pfc_sent`).

use super::capture::Join;
use super::events::EventKind;
use super::Sim;
use crate::capture::DropReason;
use crate::net::fabric::NO_PORT;
use crate::net::network::NodeKind;
use crate::net::packet::{Desc, Ecn};
use crate::net::pfc::{find_cycle, Charge, CLASSES, PAUSE_FRAME_BYTES};
use crate::net::queue::Fate;
use crate::time::{to_secs, SimTime};

/// The lossless fabric's drops and deadlocks over the run.
#[derive(Default)]
pub(super) struct LosslessCounts {
    /// Packets dropped because PFC headroom and the shared pool were full.
    pub headroom_drops: u64,
    /// PFC deadlocks found (the run stops at the first), and what was found.
    pub deadlocks: u64,
    pub deadlock_message: String,
}

/// How long the ports of a cycle must all have been paused before it counts as a
/// deadlock: a pause in a cycle that is about to resolve lasts far less.
pub(super) const DEADLOCK_HOLD: SimTime = 200_000_000;

/// What the deadlock check sees of some ports at the check's instant: one thread's of
/// the whole fabric, or one partition's of its own switches, which a run over several
/// threads gathers into the whole fabric's (`sim::parallel`).
#[derive(Clone, Debug, Default)]
pub(super) struct PausedView {
    /// (port, class): paused for at least `DEADLOCK_HOLD`, with packets of the class
    /// waiting.
    pub held: Vec<(u32, u8)>,
    /// (p, class, q): port q holds packets that came in over port p's link (q held in
    /// `class`): p, paused by q's switch, waits for them to leave through q.
    pub waits: Vec<(u32, u8, u32)>,
}

impl PausedView {
    /// Adds another partition's view.
    pub fn extend(&mut self, other: &PausedView) {
        self.held.extend_from_slice(&other.held);
        self.waits.extend_from_slice(&other.waits);
    }
}

impl Sim {
    /// `enqueue` in a fabric with shared buffers or PFC. `via` is the switch's port the
    /// packet came in by (`NO_PORT`: a host's own packet).
    #[inline(never)]
    pub(super) fn enqueue_fabric(&mut self, port_id: u32, d: Desc, via: u32) {
        let now = self.now;
        let ect = d.ecn != Ecn::NotEct;
        let class = d.priority().min(1) as usize;
        let port = &mut self.net.ports[port_id as usize];
        if !port.txdone_pending
            && port.busy_until <= now
            && port.queue.is_empty()
            && port.queue.takes_idle_shortcut()
            && port.paused & (1 << class) == 0
        {
            return self.onto_idle_link(port_id, d, ect);
        }
        let owner = port.owner as usize;
        let wire = d.wire as u64;
        let fifo = port.queue.fifo_of(&d);
        // A packet that came in over a PFC link is lossless: its ingress queue pauses
        // the sender before the buffer runs out, so the egress limits do not apply.
        let lossless = via != NO_PORT && self.fabric.ports[via as usize].pfc;
        let bq = self.fabric.ports[port_id as usize].local as usize * CLASSES + fifo;
        if let Some(b) = self.fabric.buffers[owner].as_mut() {
            let checked = if lossless {
                b.sb.check_space(wire)
            } else {
                b.sb.check(bq, wire)
            };
            let refused = checked.is_err();
            if let Err(r) = checked {
                b.sb.count_refusal(bq, r);
            }
            if refused {
                if self.observe {
                    self.observe_drop(port_id, &d, DropReason::Buffer);
                }
                self.net.ports[port_id as usize].queue.stats.drops += 1;
                self.counts.dropped += 1;
                self.pkts.free(d.pkt);
                return;
            }
        }
        if lossless {
            let local = self.fabric.ports[via as usize].local as usize;
            let pfc = self.fabric.pfc[owner].as_mut().expect("PFC at a switch");
            match pfc.arrive(local, class, wire) {
                Charge::Admitted => {}
                Charge::Pause => self.send_pfc(via, class, true),
                Charge::Overflow => {
                    if self.observe {
                        self.observe_drop(port_id, &d, DropReason::Buffer);
                    }
                    self.lossless.headroom_drops += 1;
                    self.counts.dropped += 1;
                    self.pkts.free(d.pkt);
                    return;
                }
            }
        }
        let port = &mut self.net.ports[port_id as usize];
        let admit = if lossless {
            port.queue.enqueue_lossless(now, d, ect)
        } else {
            port.queue.enqueue(now, d, ect)
        };
        // The buffer's and PFC's share of the outcome; the rest is every queue's
        // (`settle_admission`), except that a paused class waits for its RESUME rather
        // than a `TxDone`.
        match admit.arriving.1 {
            Fate::Dropped | Fate::Returned => {
                // RED's early drop (a lossless packet meets no limit).
                if lossless {
                    self.release_ingress(owner, via, class, wire);
                }
            }
            Fate::Queued | Fate::Header => {
                if let Some(b) = self.fabric.buffers[owner].as_mut() {
                    b.account(now);
                    b.sb.enqueue(bq, wire);
                }
                let f = &mut self.fabric.ports[port_id as usize];
                f.ingress[fifo].push_back(if lossless { via } else { NO_PORT });
            }
        }
        if self.net.ports[port_id as usize].paused & (1 << class) == 0 {
            self.settle_admission(port_id, admit);
        } else {
            // Nothing is evicted in a lossless fabric's FIFOs.
            if self.observe {
                self.observe_admission(port_id, &admit);
            }
            self.settle_fate(port_id, admit.arriving);
        }
    }

    /// `tx_done` in a fabric with shared buffers or PFC: the next packet of a class
    /// that is not paused starts, and releases its buffer and ingress bytes. (`tx_done`
    /// then wakes the endpoints waiting for room at a host's NIC.)
    #[inline(never)]
    pub(super) fn tx_done_fabric(&mut self, port_id: u32) {
        let now = self.now;
        let port = &mut self.net.ports[port_id as usize];
        if let Some(mut d) = port.queue.dequeue_unpaused(now, port.paused) {
            let fifo = port.queue.fifo_of(&d);
            let owner = port.owner as usize;
            if d.ecn == Ecn::Ect && port.queue.mark_departure() {
                d.ecn = Ecn::Ce;
            }
            let wire = d.wire as u64;
            let f = &mut self.fabric.ports[port_id as usize];
            let ingress = f.ingress[fifo].pop_front().unwrap_or(NO_PORT);
            let bq = f.local as usize * CLASSES + fifo;
            if let Some(b) = self.fabric.buffers[owner].as_mut() {
                b.account(now);
                b.sb.dequeue(bq, wire);
            }
            if ingress != NO_PORT {
                self.release_ingress(owner, ingress, d.priority().min(1) as usize, wire);
            }
            let start = self.start_time(port_id);
            self.transmit(port_id, d, start, Join::Queued);
        }
    }

    /// A packet that came in by `ingress` (a port of switch `owner`) in class `class`
    /// leaves: its bytes are released, and the ingress queue resumes its sender once it
    /// has drained enough.
    fn release_ingress(&mut self, owner: usize, ingress: u32, class: usize, wire: u64) {
        let local = self.fabric.ports[ingress as usize].local as usize;
        let pfc = self.fabric.pfc[owner].as_mut().expect("PFC at a switch");
        if pfc.depart(local, class, wire) {
            self.send_pfc(ingress, class, false);
        }
    }

    /// Sends PAUSE (`on`) or RESUME for `class` on port `via` to the port at its other
    /// end: after the frame on the wire, a 64-byte frame's serialisation and the link's
    /// delay. A frame to a node of another partition goes there as a message, like a
    /// packet: it arrives at least a link delay later, in a later window.
    fn send_pfc(&mut self, via: u32, class: usize, on: bool) {
        let p = &self.net.ports[via as usize];
        let f = &mut self.fabric.ports[via as usize];
        // Frames leave one after another: a RESUME sent while its PAUSE still waits for
        // the wire goes after it and arrives after it, never at the same instant (where
        // the event order, not the send order, would decide, and a RESUME handled first
        // would leave the port paused for good).
        let start = p.busy_until.max(self.now).max(f.frame_free);
        f.frame_free = start + p.rate.serialization(PAUSE_FRAME_BYTES);
        let at = f.frame_free + p.delay;
        let (to, remote) = (p.reverse, p.remote);
        if on {
            f.xoff_sent[class] += 1;
        } else {
            f.xon_sent[class] += 1;
        }
        if self.observe {
            self.observe_pfc_sent(via, class as u8, on, start);
        }
        let b = class as u32 | (on as u32) << 1;
        if remote {
            return self.send_remote_pause(at, to, b);
        }
        self.events.schedule(at, EventKind::Pause, to, b);
    }

    /// A PAUSE or RESUME frame reaches port `port_id` (`b`: class, and bit 1 for PAUSE).
    pub(super) fn pause(&mut self, port_id: u32, b: u32) {
        let now = self.now;
        let (class, on) = ((b & 1) as usize, b & 2 != 0);
        let bit = 1u8 << class;
        if self.observe {
            self.observe_pause(port_id, class as u8, on);
        }
        let port = &mut self.net.ports[port_id as usize];
        let f = &mut self.fabric.ports[port_id as usize];
        if on {
            f.xoff_received[class] += 1;
            if port.paused & bit == 0 {
                port.paused |= bit;
                f.paused_since[class] = now;
            }
        } else if port.paused & bit != 0 {
            port.paused &= !bit;
            f.paused_time[class] += now - f.paused_since[class];
            if port.queue.has_unpaused(port.paused) {
                self.schedule_tx_done(port_id);
            }
        }
    }

    /// The periodic deadlock check: false when the run stops here. On one thread it
    /// looks for a cycle in the whole fabric's view (`note_deadlock`) and stops on one;
    /// a replica of a run over several threads only takes its own nodes' view and
    /// stops, for the threads to gather every partition's and decide together
    /// (`sim::parallel`). Either way the cycle is looked for in the same graph, taken
    /// at the same point of the check's instant.
    pub(super) fn pfc_check(&mut self) -> bool {
        let now = self.now;
        if now + DEADLOCK_HOLD <= self.plan.duration {
            self.events
                .schedule(now + DEADLOCK_HOLD, EventKind::PfcCheck, 0, 0);
        }
        let mut view = PausedView::default();
        self.paused_view(&mut view);
        match self.part.as_deref_mut() {
            Some(part) => {
                part.view = Some(view);
                false
            }
            None => !self.note_deadlock(&view),
        }
    }

    /// Adds this replica's own ports to `view` (every port, on one thread): each class
    /// paused for at least `DEADLOCK_HOLD` with packets of that class waiting, and for
    /// each such port the links its waiting packets came in by. All of it is the
    /// port's switch's own state.
    pub(super) fn paused_view(&self, view: &mut PausedView) {
        let now = self.now;
        for (q, port) in self.net.ports.iter().enumerate() {
            if port.paused == 0 || !self.owns_node(port.owner) {
                continue;
            }
            let f = &self.fabric.ports[q];
            for c in 0..CLASSES {
                if port.paused & (1 << c) != 0
                    && f.paused_since[c] + DEADLOCK_HOLD <= now
                    && port.queue.holds_class(c)
                {
                    view.held.push((q as u32, c as u8));
                    // Port q's packets (of any FIFO) that came in by port `r` wait for
                    // the port at r's other end: p, r's reverse. (Runs of one ingress
                    // are listed once; `note_deadlock` drops the other repeats.)
                    let mut last = NO_PORT;
                    for &r in f.ingress.iter().flatten() {
                        if r != NO_PORT && r != last {
                            let p = self.net.ports[r as usize].reverse;
                            view.waits.push((p, c as u8, q as u32));
                            last = r;
                        }
                    }
                }
            }
        }
    }

    /// Looks for a deadlock in `view`, the whole fabric's: ports paused in a cycle,
    /// each holding packets of the paused class that can only leave through the next,
    /// all for at least `DEADLOCK_HOLD`. True (counted, with its message) if there is
    /// one.
    pub(super) fn note_deadlock(&mut self, view: &PausedView) -> bool {
        let net = &self.net;
        // Wait-for graph over the held (port, class), in port then class order: port
        // p's packets wait at its peer, in the ingress queue of the link back; they
        // leave by the peer's ports holding packets from it, in port order.
        let mut nodes = view.held.clone();
        nodes.sort_unstable();
        let mut waits = view.waits.clone();
        waits.sort_unstable();
        let index = |pc: (u32, u8)| nodes.binary_search(&pc).ok().map(|i| i as u32);
        let mut edges: Vec<Vec<u32>> = vec![Vec::new(); nodes.len()];
        for &(p, c, q) in &waits {
            if let (Some(from), Some(to)) = (index((p, c)), index((q, c))) {
                if edges[from as usize].last() != Some(&to) {
                    edges[from as usize].push(to);
                }
            }
        }
        let Some(cycle) = find_cycle(&edges) else {
            return false;
        };
        let ports: Vec<String> = cycle
            .iter()
            .map(|&i| {
                let (p, c) = nodes[i as usize];
                let port = &net.ports[p as usize];
                format!(
                    "{}→{} (class {c})",
                    net.names[port.owner as usize], net.names[port.peer as usize]
                )
            })
            .collect();
        self.lossless.deadlocks += 1;
        self.lossless.deadlock_message = format!(
            "PFC deadlock at {:.6} s: ports paused in a cycle, each holding packets only \
             the next can take (a cyclic buffer dependency): {}; the run stopped there",
            to_secs(self.now),
            ports.join(", ")
        );
        true
    }

    /// Stamps an INT record on packet `pkt` starting at `start` onto the link of switch
    /// port `port_id` (HPCC): the bytes its queue holds behind it, the port's bytes
    /// transmitted so far, this one included, the time and the link rate. A port that
    /// fixes departures at enqueue (no shared buffer or PFC) stamps the queue the
    /// packet joined.
    #[inline(never)]
    pub(super) fn stamp_int(&mut self, port_id: u32, d: &Desc, start: SimTime) {
        let port = &self.net.ports[port_id as usize];
        if self.net.kinds[port.owner as usize] != NodeKind::Switch {
            return;
        }
        let qlen = if port.queue.is_committed() {
            port.queue.bytes().saturating_sub(d.wire as u64)
        } else {
            port.queue.bytes()
        };
        let hop = crate::net::int::IntHop {
            qlen_bytes: qlen,
            tx_bytes: port.tx_bytes,
            ts: start,
            rate_bps: port.rate.bits_per_sec(),
        };
        self.pkts.int_mut(d.pkt).push(hop);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::int::IntHop;
    use crate::net::packet::{Packet, INT};
    use crate::net::queue::Fate;
    use crate::scenario::Plan;
    use std::path::Path;

    /// A star (host 0 receives) with `extra` network settings; no event runs.
    fn sim(extra: &str) -> Sim {
        let text = format!(
            r#"
            duration_ms = 1
            [topology.star]
            senders = 2
            [network.link]
            rate_gbps = 10
            {extra}
            [[traffic]]
            pattern = "incast"
            size = {{ fixed = 1000 }}
            "#
        );
        Sim::new(Plan::from_toml(&text, Path::new(".")).unwrap())
    }

    fn packet(s: &mut Sim, class: u8) -> Desc {
        let pkt = s.pkts.alloc(Packet::default());
        s.pkts.clear_int(pkt);
        Desc {
            pkt,
            wire: 1000,
            class,
            ..Desc::default()
        }
    }

    #[test]
    fn switch_ports_stamp_int_as_packets_start() {
        let mut s = sim("[network.buffer]\nbytes = 1000000\n");
        let switch = s.net.ports[s.net.host_nic[1] as usize].peer;
        let port = s
            .net
            .ports_of(switch)
            .find(|&p| s.net.ports[p as usize].peer == 0)
            .expect("the port to host 0");
        let (a, b, c) = (packet(&mut s, INT), packet(&mut s, INT), packet(&mut s, 0));
        s.now = 5;
        // a finds the link idle and starts now; b and c wait.
        s.enqueue_fabric(port, a, NO_PORT);
        s.enqueue_fabric(port, b, NO_PORT);
        s.enqueue_fabric(port, c, NO_PORT);
        let rate_bps = 10_000_000_000;
        let hop = |qlen_bytes, tx_bytes, ts| IntHop {
            qlen_bytes,
            tx_bytes,
            ts,
            rate_bps,
        };
        assert_eq!(s.pkts.int(a.pkt).hops(), &[hop(0, 1000, 5)]);
        assert!(s.pkts.int(b.pkt).hops().is_empty(), "not started yet");
        // b starts when a is done (1000 bytes at 10 Gb/s: 800 ns), leaving c behind.
        s.now = s.net.ports[port as usize].busy_until;
        s.tx_done(port);
        assert_eq!(s.pkts.int(b.pkt).hops(), &[hop(1000, 2000, 5 + 800_000)]);
        s.now = s.net.ports[port as usize].busy_until;
        s.tx_done(port);
        assert!(s.pkts.int(c.pkt).hops().is_empty(), "no INT bit, no record");
        // A host's NIC stamps nothing.
        let d = packet(&mut s, INT);
        s.enqueue_fabric(s.net.host_nic[1], d, NO_PORT);
        assert!(s.pkts.int(d.pkt).hops().is_empty());
    }

    #[test]
    fn a_paused_class_waits_and_resume_restarts_it() {
        let mut s = sim("[network.buffer]\nbytes = 1000000\n[network.pfc]\n");
        let nic = s.net.host_nic[1];
        // PAUSE for class 0 reaches the NIC: a packet offered to the idle NIC waits.
        s.now = 10;
        s.pause(nic, 0b10);
        let a = packet(&mut s, 0);
        s.enqueue_fabric(nic, a, NO_PORT);
        assert_eq!(s.net.ports[nic as usize].queue.packets(), 1);
        assert_eq!(s.net.ports[nic as usize].tx_packets, 0);
        // A TxDone while paused sends nothing.
        s.tx_done(nic);
        assert_eq!(s.net.ports[nic as usize].tx_packets, 0);
        // RESUME 1 µs later: time paused is exact, and a TxDone restarts the port.
        s.now = 1_000_010;
        s.pause(nic, 0b00);
        let f = &s.fabric.ports[nic as usize];
        assert_eq!(f.paused_time[0], 1_000_000);
        assert_eq!(f.xoff_received[0], 1);
        assert!(s.net.ports[nic as usize].txdone_pending);
        s.tx_done(nic);
        assert_eq!(s.net.ports[nic as usize].tx_packets, 1);
        // Class 1 is not held by a class 0 pause.
        s.pause(nic, 0b10);
        s.now = s.net.ports[nic as usize].busy_until;
        let b = packet(&mut s, 1);
        s.enqueue_fabric(nic, b, NO_PORT);
        assert_eq!(s.net.ports[nic as usize].tx_packets, 2);
    }

    /// Peak buffer occupancy and buffer drops of switch `node` in results `r`.
    fn buffer_of(r: &crate::metrics::Results, node: &str) -> (u64, u64) {
        let ports: Vec<_> = r.queues.iter().filter(|q| q.node == node).collect();
        let drops = ports
            .iter()
            .map(|q| q.buffer_drops_threshold + q.buffer_drops_full)
            .sum();
        (ports[0].buffer_peak_bytes, drops)
    }

    /// Two switch tiers with different buffers each keep to their own: an incast from
    /// two leaves (40 Gb/s hosts, 10 Gb/s uplinks) through the spine fills the leaves'
    /// uplinks (tier `host`'s switches) and the spine's port down (tier `fabric`'s). The
    /// tier given 30 kB peaks within it and drops by threshold, the other (1 MB) goes
    /// beyond 30 kB; swapping the sizes swaps the outcome. With `buffer = false` the
    /// spine has no buffer: its queue grows past what α = 1 of 1 MB allows.
    #[test]
    fn each_switch_tier_keeps_to_its_own_buffer() {
        // `host` and `fabric`: extra lines of each tier's table.
        let run = |host: &str, fabric: &str| {
            let text = format!(
                r#"
                duration_ms = 5
                [topology.leaf_spine]
                leaves = 3
                spines = 1
                hosts_per_leaf = 2
                [network.queue]
                limit_packets = 10000
                [network.buffer]
                bytes = 1000000
                [network.tiers.host]
                rate_gbps = 40
                {host}
                [network.tiers.fabric]
                rate_gbps = 10
                {fabric}
                [[traffic]]
                pattern = "incast"
                transport = "tcp"
                hosts = [0, 2, 3, 4, 5]
                size = {{ fixed = 300000 }}
                "#
            );
            let mut s = Sim::new(Plan::from_toml(&text, Path::new(".")).unwrap());
            s.run();
            s.results(0.0)
        };
        const SMALL: u64 = 30_000;
        let small = |b: (u64, u64)| b.0 <= SMALL && b.1 > 0;
        let r = run("", "buffer = { bytes = 30000 }");
        let leaves = [buffer_of(&r, "leaf1"), buffer_of(&r, "leaf2")];
        assert!(
            small(buffer_of(&r, "spine0")),
            "{:?}",
            buffer_of(&r, "spine0")
        );
        assert!(leaves.iter().any(|l| l.0 > SMALL), "{leaves:?}");
        let r = run("buffer = { bytes = 30000 }", "");
        let leaves = [buffer_of(&r, "leaf1"), buffer_of(&r, "leaf2")];
        assert!(leaves.iter().all(|&l| small(l)), "{leaves:?}");
        assert!(
            buffer_of(&r, "spine0").0 > SMALL,
            "{:?}",
            buffer_of(&r, "spine0")
        );
        // Without a buffer the spine's port to the receiver's leaf grows past half the
        // 1 MB buffer, where α = 1 would have stopped it.
        let r = run("", "buffer = false");
        let spine: Vec<_> = r.queues.iter().filter(|q| q.node == "spine0").collect();
        assert!(
            spine.iter().all(|q| q.buffer_peak_bytes == 0),
            "no buffer at the spine"
        );
        assert!(spine.iter().any(|q| q.max_bytes > 500_000));
        assert!(buffer_of(&r, "leaf1").0 > 0);
    }

    /// A leaf-spine of `leaves` leaves and as many spines, with a 1 MB shared buffer and
    /// PFC, carrying one flow of `size` from host 0 to host 1; `head` goes first.
    fn pfc_leaf_spine(leaves: u32, hosts_per_leaf: u32, head: &str, size: &str) -> String {
        format!(
            "{head}\n[topology.leaf_spine]\nleaves = {leaves}\nspines = {leaves}\n\
             hosts_per_leaf = {hosts_per_leaf}\n[network.buffer]\nbytes = 1000000\n\
             [network.pfc]\n[[traffic]]\npattern = \"pair\"\nsrc = 0\ndst = 1\nsize = {size}\n"
        )
    }

    /// A PAUSE and the RESUME right behind it, sent at one instant while the wire is
    /// busy, arrive in that order: every port ends the run unpaused. (Arriving at the same
    /// instant, they would run in the event order, a hash of their content, and about half
    /// the ports would stay paused for good.)
    #[test]
    fn a_resume_sent_right_after_its_pause_arrives_after_it() {
        let text = pfc_leaf_spine(4, 2, "duration_ms = 1", "{ fixed = 1000 }");
        let mut s = Sim::new(Plan::from_toml(&text, Path::new(".")).unwrap());
        let switches: Vec<u32> = (0..s.net.ports.len() as u32)
            .filter(|&p| {
                let port = &s.net.ports[p as usize];
                s.net.kinds[port.owner as usize] == NodeKind::Switch
            })
            .collect();
        assert!(switches.len() >= 16);
        for (i, &p) in switches.iter().enumerate() {
            // The wire busy with a frame for a while (or not), as a data packet keeps it.
            s.net.ports[p as usize].busy_until = (i as u64 % 3) * 10_000;
            s.send_pfc(p, 1, true);
            s.send_pfc(p, 1, false);
        }
        s.run();
        for &p in &switches {
            let paused = s.net.ports[p as usize].reverse;
            assert_eq!(
                s.net.ports[paused as usize].paused, 0,
                "port {paused} left paused"
            );
            assert_eq!(s.fabric.ports[paused as usize].xoff_received[1], 1);
        }
    }

    /// The port of node `a` towards node `b` (by name).
    fn port_of(s: &Sim, a: &str, b: &str) -> u32 {
        (0..s.net.ports.len() as u32)
            .find(|&p| {
                let port = &s.net.ports[p as usize];
                s.net.names[port.owner as usize] == a && s.net.names[port.peer as usize] == b
            })
            .expect("a port")
    }

    /// Ports paused in a cycle (leaf 0 → spine 0 → leaf 1 → spine 1 → leaf 0), each
    /// holding a packet that came in over the previous link, are a deadlock: the check
    /// finds it once they have been paused for `DEADLOCK_HOLD`, the run stops there,
    /// marked partial, with the message in its counters. Without one link of the cycle
    /// holding packets from the previous, there is none. (The state is set by hand: with
    /// shortest-path routing a small fabric does not build a cyclic dependency.)
    #[test]
    fn a_cycle_of_paused_ports_is_a_deadlock_and_stops_the_run() {
        let text = pfc_leaf_spine(
            2,
            1,
            "duration_ms = 10\nstop_when_done = false",
            "\"long_lived\"",
        );
        for (hold_all, deadlock) in [(true, true), (false, false)] {
            let mut s = Sim::new(Plan::from_toml(&text, Path::new(".")).unwrap());
            let cycle = [
                port_of(&s, "leaf0", "spine0"),
                port_of(&s, "spine0", "leaf1"),
                port_of(&s, "leaf1", "spine1"),
                port_of(&s, "spine1", "leaf0"),
            ];
            for (i, &p) in cycle.iter().enumerate() {
                let prev = cycle[(i + cycle.len() - 1) % cycle.len()];
                s.pause(p, 0b10);
                let d = packet(&mut s, 0);
                let q = &mut s.net.ports[p as usize].queue;
                assert_eq!(q.enqueue_lossless(0, d, false).arriving.1, Fate::Queued);
                // Its packet came in over the previous link (at the previous port's
                // peer, by the port back) — except, in the second case, on one link.
                let via = if hold_all || i != 2 {
                    s.net.ports[prev as usize].reverse
                } else {
                    NO_PORT
                };
                s.fabric.ports[p as usize].ingress[0].push_back(via);
            }
            s.run();
            let r = s.results(0.0);
            let c = &r.counters;
            if deadlock {
                assert_eq!(c.deadlocks, 1);
                assert!(c.partial);
                assert_eq!(c.sim_time, DEADLOCK_HOLD, "found at the first check");
                assert!(
                    c.deadlock_message.contains("PFC deadlock")
                        && c.deadlock_message.contains("leaf0→spine0"),
                    "{}",
                    c.deadlock_message
                );
            } else {
                assert_eq!(c.deadlocks, 0);
                assert!(!c.partial && c.deadlock_message.is_empty());
                assert_eq!(c.sim_time, 10_000_000_000, "ran to its end");
            }
        }
    }
}
