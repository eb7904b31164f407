//! The event queue: a binary min-heap ordered by (time, insertion order).
//!
//! Events are 24-byte plain values (no boxed closures), so the heap stays compact and a
//! run is a pure function of its inputs: two events at the same time always run in the
//! order they were scheduled.

use crate::time::SimTime;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// What an event does; `a` and `b` are its operands (a node, port, packet or connection).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum EventKind {
    /// Packet `b` arrives at node `a`.
    Arrive = 0,
    /// Port `a` finished serialising a packet and has more queued.
    TxDone = 1,
    /// Connection `a` opens.
    FlowStart = 2,
    /// Timer of connection `a`, endpoint `b` (0 client, 1 server).
    Timer = 3,
    /// Snapshot of per-flow counters at the end of the warm-up.
    Warmup = 4,
    /// Periodic sampling of queues.
    Sample = 5,
}

impl EventKind {
    fn from_u8(v: u8) -> EventKind {
        match v {
            0 => EventKind::Arrive,
            1 => EventKind::TxDone,
            2 => EventKind::FlowStart,
            3 => EventKind::Timer,
            4 => EventKind::Warmup,
            _ => EventKind::Sample,
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Event {
    pub time: SimTime,
    /// Insertion sequence in the upper 56 bits, kind in the low 8: unique, so it breaks
    /// every tie between equal times.
    order: u64,
    pub a: u32,
    pub b: u32,
}

impl Event {
    pub fn kind(&self) -> EventKind {
        EventKind::from_u8((self.order & 0xff) as u8)
    }
}

impl PartialEq for Event {
    fn eq(&self, other: &Self) -> bool {
        self.time == other.time && self.order == other.order
    }
}
impl Eq for Event {}
impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Event {
    /// Reversed, so std's max-heap pops the earliest event.
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .time
            .cmp(&self.time)
            .then_with(|| other.order.cmp(&self.order))
    }
}

#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Event>,
    next_seq: u64,
    processed: u64,
}

impl EventQueue {
    pub fn new() -> EventQueue {
        EventQueue {
            heap: BinaryHeap::with_capacity(1 << 12),
            next_seq: 0,
            processed: 0,
        }
    }

    #[inline]
    pub fn schedule(&mut self, time: SimTime, kind: EventKind, a: u32, b: u32) {
        let order = (self.next_seq << 8) | kind as u64;
        self.next_seq += 1;
        self.heap.push(Event { time, order, a, b });
    }

    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        let ev = self.heap.pop();
        if ev.is_some() {
            self.processed += 1;
        }
        ev
    }

    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| e.time)
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Events popped so far.
    pub fn processed(&self) -> u64 {
        self.processed
    }

    /// The pending events, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &Event> {
        self.heap.iter()
    }

    /// Drains the remaining events (used at the end of a run to account for packets
    /// still in flight).
    pub fn drain(&mut self) -> impl Iterator<Item = Event> + '_ {
        self.heap.drain()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_then_insertion_order() {
        let mut q = EventQueue::new();
        q.schedule(5, EventKind::Arrive, 1, 0);
        q.schedule(3, EventKind::TxDone, 2, 0);
        q.schedule(5, EventKind::Timer, 3, 0);
        q.schedule(3, EventKind::Arrive, 4, 0);
        let order: Vec<u32> = std::iter::from_fn(|| q.pop()).map(|e| e.a).collect();
        assert_eq!(order, vec![2, 4, 1, 3]);
    }

    #[test]
    fn kind_round_trips() {
        let mut q = EventQueue::new();
        q.schedule(1, EventKind::Warmup, 0, 0);
        assert_eq!(q.pop().unwrap().kind(), EventKind::Warmup);
    }
}
