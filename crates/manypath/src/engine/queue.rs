//! The event queue, ordered by (time, insertion order).
//!
//! Events are 40-byte plain values (no boxed closures), so the heap stays compact and a
//! run is a pure function of its inputs: two events at the same time always run in the
//! order they were scheduled.

use crate::net::packet::Desc;
use crate::time::SimTime;
use std::cmp::Ordering;

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
    /// For packet events, the packet's descriptor; otherwise `d.pkt` holds operand `b`.
    pub d: Desc,
}

impl Event {
    /// The second operand of a non-packet event.
    #[inline]
    pub fn b(&self) -> u32 {
        self.d.pkt
    }

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

/// A radix heap over the 128-bit key (time, insertion order). Keys only grow (an event is
/// never scheduled before the one being processed), which is what a radix heap needs:
/// an event sits in the bucket named by the highest bit in which its key differs from
/// the last key popped, pushes are O(1) appends, and each pop redistributes one bucket
/// into lower ones. Every access is sequential within a bucket's vector, so the queue
/// stays fast when it holds many thousands of events, where a binary heap's sift-downs
/// miss the cache at every level.
pub struct EventQueue {
    buckets: Vec<Vec<Event>>,
    /// Bit b set when bucket b is non-empty (buckets 0..=128).
    nonempty: [u64; 3],
    last: u128,
    len: usize,
    next_seq: u64,
    processed: u64,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue::new()
    }
}

#[inline]
fn key(e: &Event) -> u128 {
    ((e.time as u128) << 64) | e.order as u128
}

#[inline]
fn bucket_of(x: u128) -> usize {
    (128 - x.leading_zeros()) as usize
}

impl EventQueue {
    pub fn new() -> EventQueue {
        EventQueue {
            buckets: (0..129).map(|_| Vec::new()).collect(),
            nonempty: [0; 3],
            last: 0,
            len: 0,
            next_seq: 0,
            processed: 0,
        }
    }

    #[inline]
    fn put(&mut self, e: Event) {
        let b = bucket_of(key(&e) ^ self.last);
        self.buckets[b].push(e);
        self.nonempty[b >> 6] |= 1 << (b & 63);
    }

    #[inline]
    pub fn schedule(&mut self, time: SimTime, kind: EventKind, a: u32, b: u32) {
        self.schedule_with(
            time,
            kind,
            a,
            Desc {
                pkt: b,
                ..Desc::default()
            },
        );
    }

    /// Schedules a packet event carrying the packet's descriptor.
    #[inline]
    pub fn schedule_with(&mut self, time: SimTime, kind: EventKind, a: u32, d: Desc) {
        let order = (self.next_seq << 8) | kind as u64;
        self.next_seq += 1;
        let e = Event { time, order, a, d };
        debug_assert!(key(&e) >= self.last, "event scheduled in the past");
        self.put(e);
        self.len += 1;
    }

    /// Moves the smallest event into bucket 0 (where it is alone: keys are unique).
    #[inline]
    fn settle(&mut self) -> bool {
        if self.nonempty[0] & 1 != 0 {
            return true;
        }
        let b = if self.nonempty[0] != 0 {
            self.nonempty[0].trailing_zeros() as usize
        } else if self.nonempty[1] != 0 {
            64 + self.nonempty[1].trailing_zeros() as usize
        } else if self.nonempty[2] != 0 {
            128
        } else {
            return false;
        };
        let mut items = std::mem::take(&mut self.buckets[b]);
        self.nonempty[b >> 6] &= !(1 << (b & 63));
        self.last = items.iter().map(key).min().expect("non-empty bucket");
        for e in items.drain(..) {
            self.put(e);
        }
        // Hand the emptied vector back so its capacity is reused.
        self.buckets[b] = items;
        true
    }

    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        if !self.settle() {
            return None;
        }
        let e = self.buckets[0].pop().expect("settled");
        self.nonempty[0] &= !1;
        self.len -= 1;
        self.processed += 1;
        Some(e)
    }

    pub fn peek_time(&mut self) -> Option<SimTime> {
        if self.settle() {
            Some(self.buckets[0][0].time)
        } else {
            None
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Events popped so far.
    pub fn processed(&self) -> u64 {
        self.processed
    }

    /// The pending events, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &Event> {
        self.buckets.iter().flatten()
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
    fn matches_a_sorted_order_under_random_interleaving() {
        use crate::engine::Rng;
        let mut q = EventQueue::new();
        let mut r = Rng::new(9, 0, 0);
        let mut now = 0;
        let mut popped = Vec::new();
        let mut id = 0;
        for _ in 0..20_000 {
            if r.below(3) < 2 {
                // Often at the same time as now, to exercise ties.
                let t = now
                    + if r.below(4) == 0 {
                        0
                    } else {
                        r.below(5_000_000)
                    };
                q.schedule(t, EventKind::Arrive, id, 0);
                id += 1;
            } else if let Some(e) = q.pop() {
                assert!(e.time >= now);
                now = e.time;
                popped.push((e.time, e.order));
            }
        }
        while let Some(e) = q.pop() {
            popped.push((e.time, e.order));
        }
        assert_eq!(popped.len(), id as usize);
        assert!(
            popped.windows(2).all(|w| w[0] < w[1]),
            "strictly increasing (time, order)"
        );
    }

    #[test]
    fn kind_round_trips() {
        let mut q = EventQueue::new();
        q.schedule(1, EventKind::Warmup, 0, 0);
        assert_eq!(q.pop().unwrap().kind(), EventKind::Warmup);
    }
}
