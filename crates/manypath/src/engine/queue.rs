//! The event queue, ordered by (time, insertion order).
//!
//! Events are 40-byte plain values (no boxed closures), so the heap stays compact and a
//! run is a pure function of its inputs: two events at the same time always run in the
//! order they were scheduled.

use crate::net::packet::Desc;
use crate::time::SimTime;

/// What an event does; `a` and `b` are its operands (a node, port, packet or connection).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum EventKind {
    /// Packet `b` arrives at node `a`.
    Arrive = 0,
    /// Port `a` finished serialising a packet and has more queued.
    TxDone = 1,
    /// Flow `a` starts: its connection opens, or its bytes go to its persistent one.
    FlowStart = 2,
    /// Timer of connection `a`, endpoint `b` (0 client, 1 server).
    Timer = 3,
    /// Snapshot of per-flow counters at the end of the warm-up.
    Warmup = 4,
    /// Periodic sampling of queues.
    Sample = 5,
    /// RWNDQ window-update timer of port `a`.
    RwndqTick = 6,
    /// Scheduled link change `a` (down, up, or routing catching up with either).
    LinkChange = 7,
    /// Persistent connection `a` opens.
    ConnOpen = 8,
}

#[derive(Clone, Copy, Debug)]
pub struct Event {
    pub time: SimTime,
    pub a: u32,
    /// `Arrive`: the port of node `a` on the link the packet came in by (the switch's
    /// "in" device). It fills what would otherwise be padding.
    pub via: u32,
    /// For packet events, the packet's descriptor; otherwise `d.pkt` holds operand `b`.
    pub d: Desc,
    kind: EventKind,
}

impl Event {
    /// The second operand of a non-packet event.
    #[inline]
    pub fn b(&self) -> u32 {
        self.d.pkt
    }

    #[inline]
    pub fn kind(&self) -> EventKind {
        self.kind
    }
}

/// A radix heap over event times, with 16-way buckets per hex digit, and a FIFO of the
/// events due at the current time. Times only grow (an event is never scheduled before
/// the one being processed), which is what a radix heap needs: an event sits in the
/// bucket named by the highest hex digit in which its time differs from `last`, the
/// time of the last event popped, and by its value of that digit. Pushes are O(1)
/// appends; when the FIFO runs dry, the lowest bucket is emptied: the events at its
/// smallest time become the FIFO and the others are filed one digit lower or more. So an
/// event moves at most once per hex digit of its distance from the present (about five
/// times for a few microseconds), and every access is sequential within a bucket's
/// vector, so the queue stays fast with many thousands of events, where a binary heap's
/// sift-downs miss the cache.
///
/// Events at equal times run in the order they were scheduled, without a sequence
/// number: events of equal time always share a bucket (a bucket is a function of the time
/// and `last`), a bucket keeps its events in the order they entered, and a bucket's
/// events move together, so within a bucket equal times stay in scheduling order.
pub struct EventQueue {
    /// The events at time `last` not yet popped: `due[due_next..]`.
    due: Vec<Event>,
    due_next: usize,
    /// `buckets[l * 16 + d]`: events whose highest hex digit differing from `last` is `l`,
    /// where their digit `l` is `d`.
    buckets: Vec<Vec<Event>>,
    /// Bit d of `level_mask[l]` is set when bucket (l, d) is non-empty.
    level_mask: [u16; LEVELS],
    /// Bit l is set when level l has a non-empty bucket.
    levels: u32,
    last: SimTime,
    len: usize,
    processed: u64,
}

const LEVELS: usize = 16;

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue::new()
    }
}

impl EventQueue {
    pub fn new() -> EventQueue {
        EventQueue {
            due: Vec::new(),
            due_next: 0,
            buckets: (0..LEVELS * 16).map(|_| Vec::new()).collect(),
            level_mask: [0; LEVELS],
            levels: 0,
            last: 0,
            len: 0,
            processed: 0,
        }
    }

    #[inline]
    fn put(&mut self, e: Event) {
        let x = e.time ^ self.last;
        if x == 0 {
            self.due.push(e);
            return;
        }
        let l = ((63 - x.leading_zeros()) / 4) as usize;
        let d = ((e.time >> (4 * l)) & 15) as usize;
        self.buckets[l * 16 + d].push(e);
        self.level_mask[l] |= 1 << d;
        self.levels |= 1 << l;
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
        self.push_event(time, kind, a, 0, d);
    }

    /// Schedules packet `d`'s arrival at `node` through its port `via`.
    #[inline]
    pub fn schedule_arrival(&mut self, time: SimTime, node: u32, via: u32, d: Desc) {
        self.push_event(time, EventKind::Arrive, node, via, d);
    }

    #[inline]
    fn push_event(&mut self, time: SimTime, kind: EventKind, a: u32, via: u32, d: Desc) {
        debug_assert!(time >= self.last, "event scheduled in the past");
        self.put(Event {
            time,
            a,
            via,
            d,
            kind,
        });
        self.len += 1;
    }

    /// Makes `due` hold the earliest pending events.
    #[inline]
    fn settle(&mut self) -> bool {
        if self.due_next < self.due.len() {
            return true;
        }
        self.due.clear();
        self.due_next = 0;
        if self.levels == 0 {
            return false;
        }
        let l = self.levels.trailing_zeros() as usize;
        let d = self.level_mask[l].trailing_zeros() as usize;
        let mut items = std::mem::take(&mut self.buckets[l * 16 + d]);
        self.level_mask[l] &= !(1 << d);
        if self.level_mask[l] == 0 {
            self.levels &= !(1 << l);
        }
        self.last = items
            .iter()
            .map(|e| e.time)
            .min()
            .expect("non-empty bucket");
        // The events at the new `last` go to `due` in bucket order; every other one lands
        // at least one digit lower, never back here, so the emptied vector (and its
        // capacity) can return to its bucket.
        for e in items.drain(..) {
            self.put(e);
        }
        self.buckets[l * 16 + d] = items;
        true
    }

    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        if !self.settle() {
            return None;
        }
        let e = self.due[self.due_next];
        self.due_next += 1;
        self.len -= 1;
        self.processed += 1;
        Some(e)
    }

    pub fn peek_time(&mut self) -> Option<SimTime> {
        if self.settle() {
            Some(self.last)
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
        self.due[self.due_next..]
            .iter()
            .chain(self.buckets.iter().flatten())
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

    /// Interleaves random schedules (up to `spread` ps ahead, a quarter at the current
    /// time) and pops, and checks events come out in strictly increasing (time, order).
    fn check_order(seed: u64, ops: usize, spread: u64) {
        use crate::engine::Rng;
        let mut q = EventQueue::new();
        let mut r = Rng::new(seed, 0, 0);
        let mut now = 0;
        let mut popped = Vec::new();
        let mut id = 0;
        for _ in 0..ops {
            if r.below(3) < 2 {
                let t = now + if r.below(4) == 0 { 0 } else { r.below(spread) };
                q.schedule(t, EventKind::Arrive, id, 0);
                id += 1;
            } else if let Some(e) = q.pop() {
                assert!(e.time >= now);
                now = e.time;
                popped.push((e.time, e.a));
            }
        }
        assert_eq!(q.len(), q.iter().count());
        while let Some(e) = q.pop() {
            popped.push((e.time, e.a));
        }
        assert_eq!(popped.len(), id as usize);
        assert!(
            popped.windows(2).all(|w| w[0] < w[1]),
            "strictly increasing (time, order)"
        );
    }

    #[test]
    fn matches_a_sorted_order_under_random_interleaving() {
        check_order(9, 20_000, 5_000_000);
        check_order(1, 100_000, 50);
        check_order(2, 100_000, 1 << 40);
        check_order(3, 100_000, u32::MAX as u64);
    }

    #[test]
    fn events_stay_40_bytes() {
        assert_eq!(std::mem::size_of::<Event>(), 40);
    }

    #[test]
    fn kind_round_trips() {
        let mut q = EventQueue::new();
        q.schedule(1, EventKind::Warmup, 0, 0);
        assert_eq!(q.pop().unwrap().kind(), EventKind::Warmup);
    }
}
