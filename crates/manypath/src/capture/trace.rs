//! Event traces: what happened at selected ports, one record per event (a packet
//! joining the queue, starting onto the wire, dropped, marked, trimmed; a PFC pause or
//! resume of the port), with the queue's occupancy after the event.
//!
//! A committed queue (`net::queue`) fixes a packet's start as it joins, so its departure
//! is recorded then, with a later time. Occupancy is therefore computed at the end, per
//! port, from the events in time order: a packet that waits adds itself at its enqueue
//! and takes itself off at its dequeue (at equal times, arrivals first: a packet that
//! starts at the instant of an arrival still counts as waiting for it). A packet that
//! finds the link idle has both events at the same time and never counts as waiting.

use super::{merge_order, EventKey};
use crate::time::SimTime;

/// What happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum TraceKind {
    /// The packet joined the port (its queue, or straight onto an idle link).
    Enqueue,
    /// The packet started onto the wire.
    Dequeue,
    Drop,
    /// The port marked the packet CE.
    Mark,
    /// The port cut the packet to its header (NDP).
    Trim,
    /// The port's peer paused (PFC) one of the port's classes, or resumed it.
    Pause,
    Resume,
}

impl TraceKind {
    pub const ALL: [TraceKind; 7] = [
        TraceKind::Enqueue,
        TraceKind::Dequeue,
        TraceKind::Drop,
        TraceKind::Mark,
        TraceKind::Trim,
        TraceKind::Pause,
        TraceKind::Resume,
    ];

    pub fn name(self) -> &'static str {
        match self {
            TraceKind::Enqueue => "enqueue",
            TraceKind::Dequeue => "dequeue",
            TraceKind::Drop => "drop",
            TraceKind::Mark => "mark",
            TraceKind::Trim => "trim",
            TraceKind::Pause => "pause",
            TraceKind::Resume => "resume",
        }
    }

    /// The order of simultaneous events at one port: arrivals before departures.
    fn order(self) -> u8 {
        match self {
            TraceKind::Enqueue
            | TraceKind::Drop
            | TraceKind::Mark
            | TraceKind::Trim
            | TraceKind::Pause
            | TraceKind::Resume => 0,
            TraceKind::Dequeue => 1,
        }
    }
}

/// A flow id for events that are not a flow's (PFC frames).
pub const NO_FLOW: u32 = u32::MAX;

/// One event at one port.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TraceEvent {
    pub time: SimTime,
    pub port: u32,
    pub kind: TraceKind,
    /// The packet waits in the queue (enqueue and dequeue of a packet that did not go
    /// straight onto an idle link; drop and trim of a packet that had been waiting).
    pub queued: bool,
    pub flow: u32,
    pub subflow: u8,
    /// The packet's priority class, or the paused class.
    pub class: u8,
    /// The packet's size on the wire.
    pub bytes: u32,
    /// Packets and bytes waiting in the port's queue after the event (filled in by
    /// `Trace::events`).
    pub queue_packets: u64,
    pub queue_bytes: u64,
}

/// The trace of a run: which ports, the window, the cap, and the events so far.
pub struct Trace {
    traced: Vec<bool>,
    from: SimTime,
    until: SimTime,
    cap: u64,
    events: Vec<TraceEvent>,
    /// In a run over several threads, each event's key (`EventKey`); empty on one
    /// thread, whose events are in the order recorded.
    keys: Vec<EventKey>,
    /// Events in the window after the cap was reached.
    pub missed: u64,
    /// Per port, its ECN mark counter when last seen.
    marks_seen: Vec<u64>,
}

impl Trace {
    pub fn new(
        n_ports: usize,
        ports: &[u32],
        (from, until, cap): (SimTime, SimTime, u64),
    ) -> Trace {
        let mut traced = vec![false; n_ports];
        for &p in ports {
            traced[p as usize] = true;
        }
        Trace {
            traced,
            from,
            until,
            cap,
            events: Vec::with_capacity(cap.min(1 << 16) as usize),
            keys: Vec::new(),
            missed: 0,
            marks_seen: vec![0; n_ports],
        }
    }

    #[inline]
    pub fn covers(&self, port: u32) -> bool {
        self.traced[port as usize]
    }

    /// True once per new ECN mark of `port` (its counter now `marks`).
    pub fn marked(&mut self, port: u32, marks: u64) -> bool {
        let seen = &mut self.marks_seen[port as usize];
        let new = marks > *seen;
        *seen = marks;
        new
    }

    /// Records `e` if its port is traced and its time in the window; `key`: the key of
    /// the event that made it in a run over several threads (`None`: one thread).
    pub fn push(&mut self, e: TraceEvent, key: Option<EventKey>) {
        if !self.traced[e.port as usize] || e.time < self.from || e.time >= self.until {
            return;
        }
        if self.events.len() as u64 >= self.cap {
            self.missed += 1;
            return;
        }
        self.events.push(e);
        if let Some(key) = key {
            self.keys.push(key);
        }
    }

    /// The trace of a run over several threads, from its partitions' (each traced its
    /// own ports, keyed): the events one thread records, in its order, and those it
    /// leaves out by the cap.
    pub fn merge(mut parts: Vec<Trace>) -> Trace {
        let seen: u64 = parts.iter().map(|t| t.events.len() as u64 + t.missed).sum();
        let keys: Vec<&[EventKey]> = parts.iter().map(|t| &t.keys[..]).collect();
        let events: Vec<TraceEvent> = merge_order(&keys, parts[0].cap)
            .into_iter()
            .map(|(p, i)| parts[p].events[i])
            .collect();
        let mut merged = parts.swap_remove(0);
        merged.missed = seen - events.len() as u64;
        merged.events = events;
        merged.keys.clear();
        merged
    }

    /// The events up to `end` in time order (per time, arrivals first, then in the
    /// order recorded), with each port's occupancy after each event.
    pub fn events(&self, end: SimTime) -> Vec<TraceEvent> {
        let mut out: Vec<TraceEvent> = self
            .events
            .iter()
            .filter(|e| e.time <= end)
            .copied()
            .collect();
        out.sort_by_key(|e| (e.time, e.kind.order()));
        let mut occupancy: std::collections::HashMap<u32, (u64, u64)> = Default::default();
        for e in &mut out {
            let q = occupancy.entry(e.port).or_default();
            if e.queued {
                match e.kind {
                    TraceKind::Enqueue => {
                        q.0 += 1;
                        q.1 += e.bytes as u64;
                    }
                    TraceKind::Dequeue => {
                        q.0 = q.0.saturating_sub(1);
                        q.1 = q.1.saturating_sub(e.bytes as u64);
                    }
                    // A packet that waited and is dropped (trimmed off the tail, its
                    // header then dropped or returned) leaves the queue; one trimmed
                    // while it waited leaves its payload's bytes.
                    TraceKind::Drop => {
                        q.0 = q.0.saturating_sub(1);
                        q.1 = q.1.saturating_sub(e.bytes as u64);
                    }
                    TraceKind::Trim => q.1 = q.1.saturating_sub(e.bytes as u64),
                    TraceKind::Mark | TraceKind::Pause | TraceKind::Resume => {}
                }
            }
            (e.queue_packets, e.queue_bytes) = *q;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(time: SimTime, kind: TraceKind, queued: bool) -> TraceEvent {
        TraceEvent {
            time,
            port: 0,
            kind,
            queued,
            flow: 0,
            subflow: 0,
            class: 0,
            bytes: 100,
            queue_packets: 0,
            queue_bytes: 0,
        }
    }

    #[test]
    fn occupancy_follows_the_events_in_time_order() {
        let mut t = Trace::new(1, &[0], (0, SimTime::MAX, 100));
        // A packet onto an idle link, then two that wait; the committed queue records
        // their departures as they join.
        t.push(ev(0, TraceKind::Enqueue, false), None);
        t.push(ev(0, TraceKind::Dequeue, false), None);
        t.push(ev(5, TraceKind::Enqueue, true), None);
        t.push(ev(10, TraceKind::Dequeue, true), None);
        t.push(ev(6, TraceKind::Enqueue, true), None);
        t.push(ev(20, TraceKind::Dequeue, true), None);
        // Arrives as the first waiting packet starts: counts it as waiting.
        t.push(ev(10, TraceKind::Enqueue, true), None);
        t.push(ev(30, TraceKind::Dequeue, true), None);
        let occ: Vec<(SimTime, u64)> = t
            .events(100)
            .iter()
            .map(|e| (e.time, e.queue_packets))
            .collect();
        assert_eq!(
            occ,
            [
                (0, 0),
                (0, 0),
                (5, 1),
                (6, 2),
                (10, 3),
                (10, 2),
                (20, 1),
                (30, 0)
            ]
        );
    }

    #[test]
    fn merged_partitions_give_the_first_events_by_key_and_count_the_rest() {
        let key = |time, order| EventKey {
            time,
            depth: 0,
            root: (order, 0),
            path: 0,
        };
        // Two partitions, each capped at 3; one thread records 0..6 in key order.
        let mut parts = [
            Trace::new(1, &[0], (0, SimTime::MAX, 3)),
            Trace::new(1, &[0], (0, SimTime::MAX, 3)),
        ];
        for (k, part) in [0, 1, 1, 0, 1, 0, 0].into_iter().enumerate() {
            // Each event records a later start (as a committed queue does), at times
            // falling as the keys rise.
            let e = ev(100 - k as u64, TraceKind::Dequeue, true);
            parts[part].push(e, Some(key(k as u64, 0)));
        }
        let merged = Trace::merge(parts.into());
        let times: Vec<SimTime> = merged.events.iter().map(|e| e.time).collect();
        assert_eq!(times, [100, 99, 98]);
        assert_eq!(merged.missed, 4);
        assert!(merged.keys.is_empty());
    }

    #[test]
    fn the_cap_and_window_are_honoured() {
        let mut t = Trace::new(2, &[0], (10, 20, 2));
        for time in 0..30 {
            t.push(ev(time, TraceKind::Drop, false), None);
        }
        let mut other = ev(15, TraceKind::Drop, false);
        other.port = 1;
        t.push(other, None);
        assert_eq!(t.events(100).len(), 2);
        assert_eq!(t.missed, 8);
    }
}
