//! The event queue, ordered by (time, insertion order).
//!
//! Events are 32-byte plain values (no boxed closures), so the heap stays compact and a
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
    /// A PFC frame reaches port `a`: class `b & 1`, PAUSE if `b & 2`, else RESUME.
    Pause = 9,
    /// The periodic PFC deadlock check.
    PfcCheck = 10,
    /// The NDP pull pacer of host `a` may send a PULL.
    NdpPull = 11,
    /// Host `a` has processed a received data packet (its descriptor in the event):
    /// Swift's host delay (`sim::host_rx`).
    HostRx = 12,
}

#[derive(Clone, Copy, Debug)]
pub struct Event {
    pub time: SimTime,
    pub a: u32,
    /// `Arrive`: the port of node `a` on the link the packet came in by (the switch's
    /// "in" device); any other kind: `KIND_TAG` plus the kind. Sharing the field keeps an
    /// event at 32 bytes, two to a cache line.
    tag: u32,
    /// For packet events, the packet's descriptor; otherwise `d.pkt` holds operand `b`.
    pub d: Desc,
}

/// Tags from here up name an event kind; below it, an `Arrive`'s port (port numbers
/// are far below it).
const KIND_TAG: u32 = u32::MAX - 15;

impl Event {
    /// The second operand of a non-packet event.
    #[inline]
    pub fn b(&self) -> u32 {
        self.d.pkt
    }

    /// An `Arrive`'s incoming port.
    #[inline]
    pub fn via(&self) -> u32 {
        self.tag
    }

    #[inline]
    pub fn kind(&self) -> EventKind {
        match self.tag.wrapping_sub(KIND_TAG) {
            1 => EventKind::TxDone,
            2 => EventKind::FlowStart,
            3 => EventKind::Timer,
            4 => EventKind::Warmup,
            5 => EventKind::Sample,
            6 => EventKind::RwndqTick,
            7 => EventKind::LinkChange,
            8 => EventKind::ConnOpen,
            9 => EventKind::Pause,
            10 => EventKind::PfcCheck,
            11 => EventKind::NdpPull,
            12 => EventKind::HostRx,
            _ => EventKind::Arrive,
        }
    }
}

/// A radix heap over event times, with 64-way buckets per 6-bit digit, and a FIFO of the
/// events due at the current time. Times only grow (an event is never scheduled before
/// the one being processed), which is what a radix heap needs: an event sits in the
/// bucket named by the highest digit in which its time differs from `last`, the time of
/// the last event popped, and by its value of that digit. Pushes are O(1) appends; when
/// the FIFO runs dry, the lowest bucket is emptied: the events at its smallest time
/// become the FIFO and the others are filed one digit lower or more. So an event moves
/// at most once per digit of its distance from the present (times are picoseconds, so
/// about three times for a few microseconds), and every access is sequential within a bucket's
/// vector, so the queue stays fast with many thousands of events, where a binary heap's
/// sift-downs miss the cache. (Hex digits moved events more often and ran 3-6% slower at
/// k = 8; 7-bit digits, with their 128-bit masks, 10% slower.)
///
/// Events at equal times run in the order they were scheduled, without a sequence
/// number: events of equal time always share a bucket (a bucket is a function of the time
/// and `last`), a bucket keeps its events in the order they entered, and a bucket's
/// events move together, so within a bucket equal times stay in scheduling order.
pub struct EventQueue {
    /// The events at time `last` not yet popped: `due[due_next..]`.
    due: Vec<Event>,
    due_next: usize,
    /// `buckets[l * WAYS + d]`: events whose highest digit differing from `last` is `l`,
    /// where their digit `l` is `d`.
    buckets: Vec<Vec<Event>>,
    /// Bit d of `level_mask[l]` is set when bucket (l, d) is non-empty.
    level_mask: [u64; LEVELS],
    /// Bit l is set when level l has a non-empty bucket.
    levels: u32,
    last: SimTime,
    len: usize,
    processed: u64,
}

/// Bits of time per level (a digit), and the buckets per level.
const DIGIT: u32 = 6;
const WAYS: usize = 1 << DIGIT;
const LEVELS: usize = 64usize.div_ceil(DIGIT as usize);

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
            buckets: (0..LEVELS * WAYS).map(|_| Vec::new()).collect(),
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
        let l = ((63 - x.leading_zeros()) / DIGIT) as usize;
        let d = ((e.time >> (DIGIT as usize * l)) & (WAYS as u64 - 1)) as usize;
        self.buckets[l * WAYS + d].push(e);
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
        let tag = match kind {
            EventKind::Arrive => {
                debug_assert!(via < KIND_TAG);
                via
            }
            _ => KIND_TAG + kind as u32,
        };
        self.put(Event { time, a, tag, d });
        self.len += 1;
    }

    /// Makes `due` hold the earliest pending events. Most calls find it non-empty (in
    /// the fat-tree benchmarks a dozen events share each time stamp: packet times and
    /// link delays are whole multiples of each other), so only that check is inlined.
    #[inline(always)]
    fn settle(&mut self) -> bool {
        self.due_next < self.due.len() || self.refill()
    }

    /// Empties the lowest bucket into `due` and the buckets below it.
    #[inline(never)]
    fn refill(&mut self) -> bool {
        self.due.clear();
        self.due_next = 0;
        if self.levels == 0 {
            return false;
        }
        let l = self.levels.trailing_zeros() as usize;
        let d = self.level_mask[l].trailing_zeros() as usize;
        self.level_mask[l] &= !(1 << d);
        if self.level_mask[l] == 0 {
            self.levels &= !(1 << l);
        }
        let b = l * WAYS + d;
        // A bucket of level 0 differs from `last` in the lowest digit only, all by `d`,
        // so its events share one time; so do those of a bucket of one. They are all due,
        // in bucket order: the bucket becomes `due` (and the emptied `due` the bucket),
        // with no scan for the smallest time and no event moved. Where events rarely
        // share a time stamp (flows arriving at random, off the packet-time grid) most
        // refills take this path.
        if l == 0 || self.buckets[b].len() == 1 {
            std::mem::swap(&mut self.due, &mut self.buckets[b]);
            self.last = self.due[0].time;
            return true;
        }
        let mut items = std::mem::take(&mut self.buckets[b]);
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
        self.buckets[b] = items;
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
    fn events_stay_32_bytes() {
        assert_eq!(std::mem::size_of::<Event>(), 32);
    }

    #[test]
    fn kind_and_port_round_trip() {
        use EventKind::*;
        let mut q = EventQueue::new();
        let kinds = [
            TxDone, FlowStart, Timer, Warmup, Sample, RwndqTick, LinkChange, ConnOpen, Pause,
            PfcCheck, NdpPull, HostRx,
        ];
        for (t, &k) in kinds.iter().enumerate() {
            q.schedule(t as u64, k, 7, 9);
        }
        q.schedule_arrival(100, 3, 0, Desc::default());
        q.schedule_arrival(101, 3, KIND_TAG - 1, Desc::default());
        for &k in &kinds {
            let e = q.pop().unwrap();
            assert_eq!((e.kind(), e.a, e.b()), (k, 7, 9));
        }
        for via in [0, KIND_TAG - 1] {
            let e = q.pop().unwrap();
            assert_eq!((e.kind(), e.via()), (Arrive, via));
        }
    }
}
