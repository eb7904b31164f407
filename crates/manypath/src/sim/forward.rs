//! Forwarding: a packet's way through ports, links and switches. Arrivals at switches
//! (routing, RWNDQ's header reading) and at relaying hosts, output queues and the
//! idle-link shortcut, transmission and its `TxDone` events, losses to link faults,
//! RWNDQ's timer ticks and scheduled link changes. This is the per-packet path: the
//! handlers the event loop inlines are marked `#[inline]`, the rare ones are kept out
//! of line.

use super::capture::Join;
use super::events::EventKind;
use super::Sim;
use crate::capture::DropReason;
use crate::net::fabric::NO_PORT;
use crate::net::faults::NO_FAULT;
use crate::net::network::{NodeKind, NO_RWNDQ};
use crate::net::packet::flags;
use crate::net::packet::{Desc, Ecn};
use crate::net::queue::{Admission, Fate};
use crate::time::SimTime;

/// The `TxDone`s ports defer (`Port::defers_tx_done`).
pub(super) struct Deferred {
    /// Some port defers its `TxDone`s; then, per port, when the `TxDone` deferred by the
    /// port at the other end of its link is due (`SimTime::MAX`: none). Indexed by the
    /// far port, so that an arrival finds the `TxDone` of the port it came from in a
    /// small table, without reading that port.
    pub defers_tx_done: bool,
    pub tx_due: Vec<DeferredTxDone>,
}

/// The `TxDone` a port deferred (`Port::defers_tx_done`), kept under the port at the
/// far end of its link: an arrival there finds it without reading the port.
#[derive(Clone, Copy, Debug)]
pub(super) struct DeferredTxDone {
    /// When it is due (`SimTime::MAX`: none).
    pub at: SimTime,
    /// The port that deferred it.
    pub port: u32,
}

impl Sim {
    #[inline]
    pub(super) fn arrive(&mut self, node: u32, via: u32, d: Desc) {
        // One test of the flag when no port defers its `TxDone`s.
        let deferring = self.deferred.defers_tx_done;
        if deferring && self.deferred.tx_due[via as usize].at < self.now {
            // The packet's port deferred its `TxDone` to when the link was done with it.
            self.settle_tx_done(self.deferred.tx_due[via as usize].port, via, self.now);
        }
        if self.net.kinds[node as usize] == NodeKind::Switch {
            let next = if d.pinned() {
                self.net.pinned_port(node, d.hash)
            } else {
                self.net.next_port(node, d.dst, d.hash)
            };
            match next {
                Some(port) => {
                    if deferring {
                        // The port's `TxDone`s due before now run before a packet joins.
                        self.settle_port(port, self.now);
                    }
                    if self.rwndq_on && self.net.rwndq_node[node as usize] {
                        self.rwndq_inspect(via, port, d);
                    }
                    self.enqueue_via(port, d, via)
                }
                None => {
                    self.counts.route_drops += 1;
                    self.counts.dropped += 1;
                    self.pkts.free(d.pkt);
                }
            }
        } else if d.pinned() && d.dst != node {
            self.relay(node, d);
        } else {
            if deferring {
                // What the host does may read its NIC: its `TxDone`s due before now first.
                self.settle_host_nic(node, self.now);
            }
            self.deliver(d);
        }
    }

    /// A host on a pinned route that is not the packet's destination passes it on (BCube).
    fn relay(&mut self, node: u32, d: Desc) {
        match self.net.pinned_port(node, d.hash) {
            Some(port) => self.enqueue(port, d),
            None => {
                self.counts.route_drops += 1;
                self.counts.dropped += 1;
                self.pkts.free(d.pkt);
            }
        }
    }

    /// When a packet that finds port `port_id` idle starts onto the wire: now, or, on a
    /// host interface with send jitter, after the interface's random hold.
    #[inline]
    pub(super) fn start_time(&mut self, port_id: u32) -> SimTime {
        if self.hosts.jitter.is_on() && (port_id as usize) < self.hosts.blocked.len() {
            self.now + self.hosts.jitter.draw(port_id)
        } else {
            self.now
        }
    }

    /// Offers a packet to a port; one that finds the link idle goes onto the wire (after
    /// the hold of a host interface's send jitter).
    #[inline]
    pub(super) fn enqueue(&mut self, port_id: u32, d: Desc) {
        self.enqueue_via(port_id, d, NO_PORT)
    }

    /// `enqueue` of a packet that came in by port `via` of a switch (`NO_PORT`: a host's
    /// own packet), which PFC's ingress accounting charges.
    #[inline]
    fn enqueue_via(&mut self, port_id: u32, d: Desc, via: u32) {
        if self.fabric_on {
            return self.enqueue_fabric(port_id, d, via);
        }
        let now = self.now;
        let ect = d.ecn != Ecn::NotEct;
        let port = &mut self.net.ports[port_id as usize];
        if port.queue.fixes_departures() {
            port.queue.advance(now, port.rate);
        }
        if !port.txdone_pending
            && port.busy_until <= now
            && port.queue.is_empty()
            && port.queue.takes_idle_shortcut()
        {
            return self.onto_idle_link(port_id, d, ect);
        }
        // A committed queue (or a priority queue's top level, with nothing waiting in a
        // FIFO) fixes the packet's start now: when the link is done with the packets
        // ahead of it.
        let start = port.busy_until;
        if port.queue.fixes(&d, port.txdone_pending) {
            let a = port.queue.commit(now, d, ect, start);
            match a.arriving {
                (d, Fate::Queued) => self.transmit(port_id, d, start, Join::Committed),
                (_, Fate::Header | Fate::Dropped | Fate::Returned) => {
                    self.settle_admission(port_id, a)
                }
            }
        } else if port.queue.holds_aside() {
            self.enqueue_aside(port_id, d)
        } else {
            let a = port.queue.enqueue(now, d, ect);
            self.settle_admission(port_id, a)
        }
    }

    /// A packet reaches a queue that keeps its packets aside from the FIFOs: a trimming
    /// queue (NDP) or a pFabric queue.
    #[inline(never)]
    fn enqueue_aside(&mut self, port_id: u32, d: Desc) {
        if self.net.ports[port_id as usize].queue.trims() {
            self.enqueue_trimming(port_id, d)
        } else {
            self.enqueue_pfabric(port_id, d)
        }
    }

    /// What port `port_id`'s queue did with an arrival, settled in one place for every
    /// discipline: the observers hear of it, the packets it did not keep are dropped
    /// (counted and freed) or returned to their senders, and if a packet now waits the
    /// port has a `TxDone` pending.
    #[inline(always)]
    pub(super) fn settle_admission(&mut self, port_id: u32, a: Admission) {
        if self.observe {
            self.observe_admission(port_id, &a);
        }
        // The arrival, then any packet evicted for it (written out, not as a loop over
        // the two: the common case, queued with nothing evicted, then costs two tests).
        self.settle_fate(port_id, a.arriving);
        if let Some(e) = a.evicted {
            self.settle_fate(port_id, e);
        }
        if a.waits() {
            self.schedule_tx_done(port_id);
        }
    }

    /// What becomes of a packet a queue of port `port_id` decided on.
    #[inline(always)]
    pub(super) fn settle_fate(&mut self, port_id: u32, (x, fate): (Desc, Fate)) {
        match fate {
            Fate::Queued | Fate::Header => {}
            Fate::Dropped => {
                self.counts.dropped += 1;
                self.pkts.free(x.pkt);
            }
            Fate::Returned => self.return_to_sender(port_id, x),
        }
    }

    /// A packet that finds port `port_id`'s link idle and nothing queued goes straight onto
    /// the wire (after a host interface's send-jitter hold), marked CE if the queue's ECN
    /// threshold says so.
    #[inline(always)]
    pub(super) fn onto_idle_link(&mut self, port_id: u32, mut d: Desc, ect: bool) {
        let port = &mut self.net.ports[port_id as usize];
        port.queue.pass_through();
        if ect && (port.queue.marks_on_enqueue() || port.queue.marks_on_dequeue()) {
            d.ecn = Ecn::Ce;
            port.queue.count_mark();
        }
        let start = self.start_time(port_id);
        self.transmit(port_id, d, start, Join::Idle);
    }

    /// Makes sure port `port_id` has a `TxDone` pending, when its link frees (or now),
    /// for the packets waiting in its queue.
    #[inline(always)]
    pub(super) fn schedule_tx_done(&mut self, port_id: u32) {
        if !self.net.ports[port_id as usize].txdone_pending {
            self.tx_done_when_free(port_id);
        }
    }

    /// Gives port `port_id` its `TxDone` when its link frees (or now): an event, or, on
    /// a port that defers them, the time alone, if the packet on the wire has not ended
    /// yet (its arrival at the far end is then still to come, and takes it).
    #[inline(always)]
    fn tx_done_when_free(&mut self, port_id: u32) {
        let port = &mut self.net.ports[port_id as usize];
        port.txdone_pending = true;
        // A host interface's `TxDone` wakes the endpoints waiting for room in its queue:
        // deferred only while none waits (one that starts to wait turns it back into an
        // event, `undefer_tx_done`).
        let (far, free_at) = (port.reverse as usize, port.busy_until);
        if port.defers_tx_done
            && free_at > self.now
            && self
                .hosts
                .blocked
                .get(port_id as usize)
                .is_none_or(|b| b.is_empty())
        {
            self.deferred.tx_due[far].at = free_at;
        } else {
            let at = free_at.max(self.now);
            self.events.schedule(at, EventKind::TxDone, port_id, 0);
        }
    }

    /// Runs port `port_id`'s deferred `TxDone`s due before `before`, each at its own
    /// time, as their events would have run: nothing has reached the port or read its
    /// queue since (each arrival there and each queue sample settles them first), and
    /// what they put on the wire arrives after now. `far`: the port at the far end of
    /// its link.
    #[inline(never)]
    pub(super) fn settle_tx_done(&mut self, port_id: u32, far: u32, before: SimTime) {
        let now = self.now;
        let far = far as usize;
        loop {
            let due = self.deferred.tx_due[far].at;
            if due >= before {
                break;
            }
            self.deferred.tx_due[far].at = SimTime::MAX;
            self.now = due;
            self.events.count_run_unscheduled();
            self.tx_done(port_id);
        }
        self.now = now;
    }

    /// Runs port `port_id`'s deferred `TxDone`s due before `before`, if it has any: before
    /// something reaches or reads the port (`before`: the current time for an arrival,
    /// which ran before a `TxDone` at the same time; just after it for the other kinds).
    #[inline(always)]
    pub(super) fn settle_port(&mut self, port_id: u32, before: SimTime) {
        let port = &self.net.ports[port_id as usize];
        if port.txdone_pending && port.defers_tx_done {
            let far = port.reverse;
            self.settle_tx_done(port_id, far, before);
        }
    }

    /// Before a host acts (an arrival, or an event `Sim::host_acting` names), its NIC's
    /// `TxDone`s due before `before` run (`settle_port`): what the host does may read or
    /// fill the NIC's queue.
    #[inline(always)]
    pub(super) fn settle_host_nic(&mut self, host: u32, before: SimTime) {
        self.settle_port(self.net.host_nic[host as usize], before);
    }

    /// An endpoint starts to wait for room in host interface `nic`: a `TxDone` the NIC
    /// deferred becomes an event again, to wake it when due (at the current time, among
    /// the events due now in their order: this only happens in an arrival, as every
    /// other kind of event at a host runs the NIC's `TxDone` due at its time first).
    #[cold]
    pub(super) fn undefer_tx_done(&mut self, nic: u32) {
        let far = self.net.ports[nic as usize].reverse as usize;
        let at = self.deferred.tx_due[far].at;
        if at == SimTime::MAX {
            return;
        }
        self.deferred.tx_due[far].at = SimTime::MAX;
        debug_assert!(at >= self.now, "a deferred TxDone left behind");
        if at > self.now {
            self.events.schedule(at, EventKind::TxDone, nic, 0);
        } else {
            self.events.schedule_now_in_order(EventKind::TxDone, nic, 0);
        }
    }

    /// Runs every deferred `TxDone` due at or before `until` (the end of a run, or
    /// of its stopped part).
    pub(super) fn settle_all_tx_done(&mut self, until: SimTime) {
        if !self.deferred.defers_tx_done {
            return;
        }
        for p in 0..self.net.ports.len() as u32 {
            self.settle_port(p, until.saturating_add(1));
        }
    }

    /// Puts a packet on the wire of `port_id` from time `start` (now, or later for a
    /// host interface with send jitter, which stays busy, idle on the wire, until then).
    /// `how` says how it came to start (a constant at each call, for capture and trace).
    #[inline(always)]
    pub(super) fn transmit(&mut self, port_id: u32, d: Desc, start: SimTime, how: Join) {
        self.transmit_then::<true>(port_id, d, start, how)
    }

    /// `transmit`; with `TX_DONE` false, without scheduling the port's `TxDone` for the
    /// packets still waiting (the caller puts more on the wire behind this one first).
    #[inline]
    pub(super) fn transmit_then<const TX_DONE: bool>(
        &mut self,
        port_id: u32,
        d: Desc,
        start: SimTime,
        how: Join,
    ) {
        if self.observe {
            self.observe_tx(port_id, &d, start, how);
        }
        let port = &mut self.net.ports[port_id as usize];
        let ser = port.rate.serialization(d.wire as u32);
        port.busy_until = start + ser;
        port.busy_time += ser;
        port.tx_packets += 1;
        port.tx_bytes += d.wire as u64;
        self.counts.hops += 1;
        if d.has_int() {
            self.stamp_int(port_id, &d, start);
        }
        let port = &mut self.net.ports[port_id as usize];
        let (arrive_at, peer, via, faulty, remote) = (
            start + ser + port.delay,
            port.peer,
            port.reverse,
            port.fault != NO_FAULT,
            port.remote,
        );
        if TX_DONE && port.queue.holds_unfixed() {
            self.tx_done_when_free(port_id);
        }
        if faulty && self.net.link_loses(port_id, d.hash) {
            self.lose_on_link(port_id, d);
            return;
        }
        if remote {
            return self.send_remote(arrive_at, peer, via, d);
        }
        self.events.schedule_arrival(arrive_at, peer, via, d);
    }

    /// A packet leaves port `port_id`'s queue at its `TxDone`, followed onto the wire by
    /// those whose turn is certain (`start_certain_next`). Out of line, so that it weighs
    /// nothing on the inlining of the event loop's handlers.
    #[inline(never)]
    fn transmit_with_certain_next(&mut self, port_id: u32, d: Desc, start: SimTime) {
        self.transmit_then::<false>(port_id, d, start, Join::Queued);
        self.start_certain_next(port_id);
    }

    /// Puts on port `port_id`'s wire, behind what it carries, the packets whose turn is
    /// certain whatever arrives before they start (`OutQueue::fix_certain_next`): they
    /// need no `TxDone` of their own. The port's `TxDone` comes when the link is done
    /// with them all, if packets still wait.
    pub(super) fn start_certain_next(&mut self, port_id: u32) {
        loop {
            let port = &mut self.net.ports[port_id as usize];
            let start = port.busy_until.max(self.now);
            let Some(next) = port.queue.fix_certain_next(start) else {
                break;
            };
            self.transmit_then::<false>(port_id, next, start, Join::Committed);
        }
        if self.net.ports[port_id as usize].queue.holds_unfixed() {
            self.tx_done_when_free(port_id);
        }
    }

    /// RWNDQ at a switch: the packet came in on port `via` and leaves by port `out`
    /// (Listing 2 of the RWNDQ document). Only switches with an RWNDQ port read the
    /// packet's TCP header.
    fn rwndq_inspect(&mut self, via: u32, out: u32, d: Desc) {
        let (rin, rout) = (
            self.net.ports[via as usize].rwndq,
            self.net.ports[out as usize].rwndq,
        );
        let p = self.pkts.get_mut(d.pkt);
        if p.has(flags::SYN) && p.has(flags::ACK) {
            for r in [rin, rout] {
                if r != NO_RWNDQ && self.net.rwndq[r as usize].on_syn_ack() {
                    let port = if r == rin { via } else { out };
                    self.net.rwndq[r as usize].timer_armed = true;
                    let at = self.now + self.net.rwndq[r as usize].cfg.interval;
                    self.events.schedule(at, EventKind::RwndqTick, port, 0);
                }
            }
        }
        if rin == NO_RWNDQ {
            return;
        }
        let state = &mut self.net.rwndq[rin as usize];
        if p.has(flags::FIN) || p.has(flags::RST) {
            state.on_fin();
        }
        if p.has(flags::ACK) {
            p.rwnd = state.rewrite(p.rwnd);
        }
    }

    /// RWNDQ's window-update timer of one port (Listing 1).
    pub(super) fn rwndq_tick(&mut self, port_id: u32) {
        let port = &self.net.ports[port_id as usize];
        let backlog = port.queue.bytes();
        let state = &mut self.net.rwndq[port.rwndq as usize];
        if state.on_tick(backlog) {
            let at = self.now + state.cfg.interval;
            self.events.schedule(at, EventKind::RwndqTick, port_id, 0);
        }
    }

    /// Kept out of line so the rare routing recomputation does not weigh on the
    /// inlining of the event loop's packet handlers.
    #[cold]
    #[inline(never)]
    pub(super) fn link_change(&mut self, i: u32) {
        let e = self.link_events[i as usize];
        self.net.apply_link_event(&e);
    }

    #[cold]
    fn lose_on_link(&mut self, port_id: u32, d: Desc) {
        if self.observe {
            self.observe_drop(port_id, &d, DropReason::Link);
        }
        self.net.ports[port_id as usize].fault_drops += 1;
        self.counts.dropped += 1;
        self.pkts.free(d.pkt);
    }

    #[inline]
    pub(super) fn tx_done(&mut self, port_id: u32) {
        let now = self.now;
        let port = &mut self.net.ports[port_id as usize];
        port.txdone_pending = false;
        if self.fabric_on {
            self.tx_done_fabric(port_id);
        } else if let Some(mut d) = port.queue.dequeue_after_fixed(now, port.rate) {
            if d.ecn == Ecn::Ect && port.queue.mark_departure() {
                d.ecn = Ecn::Ce;
            }
            let start = self.start_time(port_id);
            if self.net.ports[port_id as usize].queue.fixes_certain_next() {
                self.transmit_with_certain_next(port_id, d, start);
            } else {
                self.transmit(port_id, d, start, Join::Queued);
            }
        }
        if (port_id as usize) < self.hosts.blocked.len() {
            self.unblock(port_id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Plan;
    use std::path::Path;

    /// `text`'s result tables (printed), run with its ports deferring their `TxDone`s
    /// or each one an event, and with its trimming queues fixing the headers they can
    /// or holding all; the event count, how many `TxDone`s ran unscheduled and how many
    /// headers were fixed.
    fn tables(text: &str, defer: bool, fix_headers: bool) -> (String, u64, u64, u64) {
        let mut sim = Sim::new(Plan::from_toml(text, Path::new(".")).unwrap());
        if !defer {
            for p in &mut sim.net.ports {
                p.defers_tx_done = false;
            }
            sim.deferred.defers_tx_done = false;
        }
        if !fix_headers {
            for p in &mut sim.net.ports {
                p.queue.hold_headers();
            }
        }
        let (printed, events, fixed) = run_tables(&mut sim);
        (printed, events, sim.events.run_unscheduled(), fixed)
    }

    /// Runs `sim` to its end: its result tables printed (the event count left out), its
    /// event count and its trimming queues' fixed headers.
    fn run_tables(sim: &mut Sim) -> (String, u64, u64) {
        sim.run();
        let mut r = sim.results(0.0);
        let events = std::mem::take(&mut r.counters.events);
        let printed = format!(
            "{:?}",
            (
                &r.counters,
                &r.flows,
                &r.subflows,
                &r.queues,
                &r.queue_samples
            )
        );
        let fixed = sim
            .net
            .ports
            .iter()
            .filter_map(|p| p.queue.trim_stats())
            .map(|t| t.fixed)
            .sum();
        (printed, events, fixed)
    }

    /// Deferred `TxDone`s give the tables of `TxDone` events, bit for bit, the event
    /// count included, and at least `deferred` of them are deferred; so do trimming
    /// queues that fix the departures of at least `fixed` headers (more with deferred
    /// `TxDone`s, which move behind them), against queues that hold every header.
    fn same_deferred(text: &str, deferred: u64, fixed: u64) {
        let (events, e_events, none, fixed_events) = tables(text, false, true);
        let (taken, e_taken, n, fixed_taken) = tables(text, true, true);
        let (held, e_held, _, fixed_held) = tables(text, true, false);
        assert_eq!(none, fixed_events);
        assert!(
            n - fixed_taken >= deferred,
            "{} deferred TxDones",
            n - fixed_taken
        );
        assert!(
            fixed_taken >= fixed && fixed_taken >= fixed_events,
            "{fixed_taken} headers fixed"
        );
        assert_eq!(fixed_held, 0);
        assert!(events == taken, "events:\n{events}\ndeferred:\n{taken}");
        assert!(
            held == taken,
            "headers held:\n{held}\nheaders fixed:\n{taken}"
        );
        assert_eq!((e_events, e_taken), (e_held, e_held));
    }

    /// NDP's permutation on a k = 4 fat tree whose switch queues are `queue`, every flow
    /// starting at 0 and every data packet 7.2 µs, so that arrivals, departures and
    /// queue samples (every 36 µs) fall on the same instants; `more` adds to it.
    fn ndp_permutation(queue: &str, more: &str) -> String {
        format!(
            r#"
            duration_ms = 2
            [topology.fat_tree]
            k = 4
            [network.link]
            rate_gbps = 10
            delay_us = 1
            [network.queue]
            {queue}
            [network.host_queue]
            priority = true
            [transports.ndp]
            cc = "ndp"
            window_bytes = 135000
            [output]
            queue_sample_us = 36
            [[traffic]]
            pattern = "permutation"
            transport = "ndp"
            size = "long_lived"
            {more}
            "#
        )
    }

    #[test]
    fn deferred_tx_dones_match_events_on_trimming_queues() {
        let text = ndp_permutation("limit_packets = 100\ntrim = {}", "");
        same_deferred(&text, 10_000, 10_000);
    }

    /// NDP's permutation on small trimming queues that trim, fill their header queues
    /// (returning headers to their senders), refuse TCP packets at their drop-tail limit
    /// and turn their round robin to data after each header, beside TCP flows: fixed
    /// headers keep every table of held ones.
    #[test]
    fn fixed_headers_match_held_ones_on_small_trimming_queues() {
        let text = ndp_permutation(
            "limit_packets = 3\ntrim = { threshold_packets = 2, header_queue_packets = 3, \
             header_weight = 1, return_to_sender = true }",
            r#"
            [transports.tcp]
            cc = "reno"
            [[traffic]]
            pattern = "permutation"
            transport = "tcp"
            size = "long_lived"
            "#,
        );
        same_deferred(&text, 10_000, 5_000);
    }

    /// An NDP incast that ends when its flows are done (the last deferred `TxDone`s run
    /// at the end).
    #[test]
    fn deferred_tx_dones_match_events_in_an_incast() {
        let mut text = String::from(
            r#"
            duration_ms = 50
            [topology.star]
            senders = 24
            [network.link]
            rate_gbps = 10
            delay_us = 1
            [network.queue]
            limit_packets = 100
            trim = {}
            [transports.ndp]
            cc = "ndp"
            "#,
        );
        for k in 0..24 {
            text += &format!(
                "[[traffic]]\npattern = \"pair\"\nsrc = {k}\ndst = 24\ntransport = \"ndp\"\nsize = {{ fixed = 200000 }}\nstart_us = {}\n",
                k % 3
            );
        }
        same_deferred(&text, 500, 0);
    }

    /// Homa's strict-priority queues at 80% load, sampled every 10 µs.
    #[test]
    fn deferred_tx_dones_match_events_on_priority_queues() {
        same_deferred(
            r#"
            duration_ms = 2
            stop_when_done = false
            [topology.fat_tree]
            k = 4
            [network.queue]
            limit_packets = 60
            priority_levels = 8
            [transports.homa]
            cc = "homa"
            [output]
            queue_sample_us = 10
            [[traffic]]
            pattern = "random_pairs"
            transport = "homa"
            size = { cdf_step = "../../workloads/homa_w4_fb_hadoop.cdf" }
            arrival = "poisson"
            load = 0.8
            "#,
            5_000,
            0,
        );
    }

    /// TCP senders that wait for room in 4-packet NIC queues (their NICs' `TxDone`s turn
    /// back into events as they start to wait, some at the very instant one is due),
    /// with every flow starting at 0 and 1500-byte packets, so that instants coincide;
    /// and flows of DCTCP, paced BBR and Swift arriving at random.
    #[test]
    fn deferred_tx_dones_match_events_at_host_interfaces() {
        same_deferred(
            r#"
            duration_ms = 3
            stop_when_done = false
            [topology.fat_tree]
            k = 4
            [network.queue]
            limit_packets = 30
            ecn_k_packets = 10
            [network.host_queue]
            limit_packets = 4
            [output]
            flow_sample_us = 50
            queue_sample_us = 12
            [[traffic]]
            pattern = "permutation"
            transport = "dctcp"
            size = "long_lived"
            [transports.bbr]
            cc = "bbr"
            [transports.swift]
            cc = "swift"
            [[traffic]]
            pattern = "random_pairs"
            transport = "dctcp"
            size = { cdf = "websearch" }
            arrival = "poisson"
            load = 0.3
            [[traffic]]
            pattern = "random_pairs"
            transport = "bbr"
            size = { cdf = "websearch" }
            arrival = "poisson"
            load = 0.1
            [[traffic]]
            pattern = "random_pairs"
            transport = "swift"
            size = { cdf = "websearch" }
            arrival = "poisson"
            load = 0.1
            "#,
            5_000,
            0,
        );
    }

    /// pFabric's queues, dropping the least urgent packets.
    #[test]
    fn deferred_tx_dones_match_events_on_pfabric_queues() {
        same_deferred(
            r#"
            duration_ms = 2
            stop_when_done = false
            [topology.fat_tree]
            k = 4
            [network.queue]
            limit_bytes = 19499
            pfabric = true
            [network.host_queue]
            pfabric = true
            [transports.pf]
            cc = "pfabric"
            [[traffic]]
            pattern = "random_pairs"
            transport = "pf"
            size = { cdf_step = "../../workloads/homa_w4_fb_hadoop.cdf" }
            arrival = "poisson"
            load = 0.7
            "#,
            2_000,
            0,
        );
    }

    /// `text`'s result tables (printed, the event count left out), its event count and
    /// the trimming queues' fixed headers, run with every shortcut its ports decide
    /// (`setup::fast_paths`) or with every departure held for its `TxDone`.
    fn tables_with_shortcuts(text: &str, held: bool) -> (String, u64, u64) {
        run_tables(&mut Sim::build(
            Plan::from_toml(text, Path::new(".")).unwrap(),
            held,
        ))
    }

    /// Every kind of switch queue gives the same tables with its ports' shortcuts as
    /// with every departure held for a `TxDone`, and only the queues that may fix
    /// departures ahead (a plain FIFO, strict priority's top level, a trimming queue's
    /// headers) fix any (a fixed packet saves an event, but a trimming queue's header
    /// counts as the `TxDone` it replaces): a discipline routed through the FIFO's fixed
    /// departures by mistake serves or drops as a FIFO would, and fails here.
    #[test]
    fn every_queue_kind_gives_the_held_tables() {
        // Web-search flows of `transport` at `load` (`more`: extra fields of the entry).
        let websearch = |transport: &str, load: f64, more: &str| {
            format!(
                "[[traffic]]\npattern = \"random_pairs\"\ntransport = \"{transport}\"\n\
                 size = {{ cdf = \"websearch\" }}\narrival = \"poisson\"\nload = {load}\n{more}\n"
            )
        };
        let dctcp = websearch("dctcp", 0.6, "");
        let reno = format!(
            "[transports.reno]\ncc = \"reno\"\n{}",
            websearch("reno", 0.6, "")
        );
        let two_classes = websearch("dctcp", 0.4, "") + &websearch("dctcp", 0.4, "priority = 1");
        const HOMA: &str = r#"
            [transports.homa]
            cc = "homa"
            [[traffic]]
            pattern = "random_pairs"
            transport = "homa"
            size = { cdf_step = "../../workloads/homa_w4_fb_hadoop.cdf" }
            arrival = "poisson"
            load = 0.7
            "#;
        const NDP: &str = r#"
            [transports.ndp]
            cc = "ndp"
            [[traffic]]
            pattern = "permutation"
            transport = "ndp"
            size = "long_lived"
            "#;
        const PFABRIC: &str = r#"
            [network.host_queue]
            pfabric = true
            [transports.pf]
            cc = "pfabric"
            [[traffic]]
            pattern = "random_pairs"
            transport = "pf"
            size = { cdf_step = "../../workloads/homa_w4_fb_hadoop.cdf" }
            arrival = "poisson"
            load = 0.7
            "#;
        // (queue settings, traffic, whether its departures may be fixed ahead)
        let kinds = [
            (
                "limit_packets = 20\necn_k_packets = 8",
                dctcp.as_str(),
                true,
            ),
            ("limit_packets = 20", reno.as_str(), true),
            (
                "limit_bytes = 30000\necn_k_bytes = 12000",
                dctcp.as_str(),
                true,
            ),
            (
                "limit_packets = 20\necn_k_packets = 8\necn_mark = \"dequeue\"",
                dctcp.as_str(),
                false,
            ),
            (
                "ecn_red = { kmin_bytes = 3000, kmax_bytes = 20000, pmax = 0.2 }",
                dctcp.as_str(),
                true,
            ),
            (
                "ecn_red = { kmin_bytes = 3000, kmax_bytes = 20000, pmax = 0.2 }\n\
                 ecn_mark = \"dequeue\"",
                dctcp.as_str(),
                false,
            ),
            (
                "limit_packets = 20\nred = { min_packets = 4, max_packets = 12 }",
                reno.as_str(),
                false,
            ),
            (
                "limit_packets = 20\nred = { min_packets = 4, max_packets = 12, ecn = true }",
                dctcp.as_str(),
                false,
            ),
            (
                "limit_packets = 20\necn_k_packets = 8\npriority = true",
                two_classes.as_str(),
                true,
            ),
            ("limit_packets = 50\npriority_levels = 8", HOMA, true),
            ("limit_packets = 8\ntrim = {}", NDP, true),
            ("limit_bytes = 19499\npfabric = true", PFABRIC, false),
        ];
        for (queue, traffic, fixes) in kinds {
            let text = format!(
                r#"
                duration_ms = 2
                stop_when_done = false
                [topology.fat_tree]
                k = 4
                [network.link]
                rate_gbps = 10
                delay_us = 1
                [network.queue]
                {queue}
                [output]
                queue_sample_us = 23
                {traffic}
                "#
            );
            let (fast, fast_events, fast_headers) = tables_with_shortcuts(&text, false);
            let (held, held_events, held_headers) = tables_with_shortcuts(&text, true);
            assert!(fast == held, "{queue}: the shortcuts changed the tables");
            // A deferred `TxDone` counts as an event, and so does a fixed header.
            let fixed = fast_events < held_events || fast_headers > 0;
            assert_eq!(fixed, fixes, "{queue}");
            assert!(fast_events <= held_events, "{queue}");
            assert_eq!(held_headers, 0, "{queue}");
        }
    }
}
