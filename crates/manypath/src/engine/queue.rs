//! The event queue, ordered by time and, at equal times, by what the events are.
//!
//! Events are 32-byte plain values (no boxed closures), so the heap stays compact and a
//! run is a pure function of its inputs. Events at the same time run in an order fixed
//! by their content (`Event::order`), not by when they were scheduled: arrivals first,
//! then the other kinds in the order of their codes (`Kind::code`), each kind in an order drawn from
//! a hash of its time and operands (arrivals grouped by node first). That order does not depend on which part of the simulator scheduled an
//! event first, so a run split over threads (each part scheduling its own events, with
//! the others' arriving in batches) runs every node's events in the same order as one
//! thread does. Events scheduled for the time being processed run after those already
//! due at that time, in the order they were scheduled (only a node's own handlers
//! schedule such events, for itself).

use crate::time::SimTime;

/// What an event carries besides its time, node and kind: the simulator's packet
/// descriptor. Plain data the queue moves and does not read, except an event's second
/// operand, which orders events of one time.
pub trait Payload: Copy + Default {
    /// The payload of an event that carries only operands: `b`.
    fn operand(b: u32) -> Self;
    /// The second operand (`operand`'s `b`).
    fn b(&self) -> u32;
}

/// The kinds of events the simulator defines. Arrivals (`schedule_arrival`) are a kind
/// of their own, with an incoming port, and run first at their time; every other kind
/// has a code.
pub trait Kind: Copy {
    /// The kind of the events `schedule_arrival` makes.
    const ARRIVAL: Self;
    /// This kind's code: 1 to 15, the order in which kinds run at one time, plus
    /// `CARRIES_PACKET` if its events carry a packet's descriptor, which is no content of
    /// theirs (they are ordered by kind and first operand alone, and run after the other
    /// kinds of their time); 0 for `ARRIVAL`.
    fn code(self) -> u32;
    /// The kind of code `c`; any other value is an arrival (`Event::kind` passes an
    /// arrival's incoming port less `KIND_TAG`, wrapped).
    fn of_code(c: u32) -> Self;
}

/// Added to a kind's code when its events carry a packet's descriptor (`Kind::code`).
pub const CARRIES_PACKET: u32 = 16;

#[derive(Clone, Copy, Debug)]
pub struct Event<P> {
    pub time: SimTime,
    pub a: u32,
    /// `Arrive`: the port of node `a` on the link the packet came in by (the switch's
    /// "in" device); any other kind: `KIND_TAG` plus the kind. Sharing the field keeps an
    /// event at 32 bytes, two to a cache line.
    tag: u32,
    /// For packet events, the packet's descriptor; otherwise operand `b`
    /// (`Payload::operand`).
    pub d: P,
}

/// Tags from here up name an event kind (`KIND_TAG` plus its code); below it, an
/// arrival's port (port numbers are far below it).
const KIND_TAG: u32 = u32::MAX - 31;

impl<P: Payload> Event<P> {
    /// The second operand of a non-packet event.
    #[inline]
    pub fn b(&self) -> u32 {
        self.d.b()
    }

    /// An `Arrive`'s incoming port.
    #[inline]
    pub fn via(&self) -> u32 {
        self.tag
    }

    /// The order of events at equal times (see the module's comment): `Arrive`s first,
    /// then the other kinds in the order of their codes; `Arrive`s grouped by node;
    /// within a kind (and node), by a hash of the time and the operands (an `Arrive`'s node and incoming port, unique to the
    /// link, which delivers one packet at a time), then the operands themselves. The
    /// hash keeps ties fair: packets reaching a switch at the same instant by different
    /// links (common with equal links and synchronised starts) join its queues in an
    /// order that varies from one instant to the next instead of always favouring the
    /// lowest port. A kind that carries a packet's descriptor (`CARRIES_PACKET`), whose
    /// arena slot is no content, is ordered by its first operand alone (the simulator's
    /// `HostRx`: its host orders it, one packet at a time being processed per host).
    #[inline]
    pub fn order(&self) -> (u64, u64) {
        // Branch-free (the batches' kinds mix at random): an `Arrive`'s tag is below
        // `KIND_TAG`, so the saturating subtraction gives it rank 0.
        let rank = self.tag.saturating_sub(KIND_TAG - 1) as u64;
        let b = if self.tag >= KIND_TAG + CARRIES_PACKET {
            0
        } else {
            self.d.b()
        };
        let operands = if rank == 0 {
            (self.tag as u64) << 32 | self.a as u64
        } else {
            (self.a as u64) << 32 | b as u64
        };
        // A multiplicative hash (one multiply; its high bits mix every input bit) under
        // the kind's rank in the top 5 bits.
        let hash = (self.time ^ operands).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 5;
        // Arrivals at one node run together, in hash order among themselves: the node's
        // state stays in cache and the branches on its kind repeat (3% faster on
        // fattree8-dctcp). The node's low 19 bits lead; a larger fabric's nodes share
        // groups, which only loosens the grouping. Events at different nodes at one
        // instant touch different state, so grouping them moves no result.
        let mixed = if rank == 0 {
            (self.a as u64 & 0x7_ffff) << 40 | hash >> 19
        } else {
            hash
        };
        (rank << 59 | mixed, operands)
    }

    #[inline]
    pub fn kind<K: Kind>(&self) -> K {
        K::of_code(self.tag.wrapping_sub(KIND_TAG))
    }
}

/// A radix heap over event times, with 64-way buckets per 6-bit digit, and a run of the
/// earliest pending events. Times only grow (an event is never scheduled before the one
/// being processed), which is what a radix heap needs: an event sits in the bucket named
/// by the highest digit in which its time differs from `last`, the time of the last
/// event popped, and by its value of that digit. Pushes are O(1) appends; when the run
/// runs dry, the lowest bucket, whose events all come before any other bucket's, becomes
/// the next run: whole if its events share one time or are few and close (`refill`),
/// otherwise its events at its smallest time, the others filed one digit lower or more.
/// So an event moves at most once per digit of its distance from the present (times are
/// picoseconds: at most about twice for a few microseconds), and every access is
/// sequential within a bucket's vector, so the queue stays fast with many thousands of
/// events, where a binary heap's sift-downs miss the cache. (Hex digits moved events
/// more often and ran 3-6% slower at k = 8; 7-bit digits, with their 128-bit masks, 10%
/// slower.)
///
/// Events at equal times run in their content order (`Event::order`): when a time's
/// events join the run, they are sorted (a dozen or so in the fat-tree benchmarks, by a
/// sorting network); an event scheduled at the current time while it is processed joins
/// the end of its events, one scheduled for a later time in the run its place among
/// them.
pub struct EventQueue<P> {
    /// The run: the earliest pending events, `due[due_next..]`, in the order they pop:
    /// by time, and at one time in content order, then those scheduled at that time
    /// while it ran. Its events are all before `run_end`, the other pending ones all
    /// from it on.
    due: Vec<Event<P>>,
    due_next: usize,
    /// Where the run's times end: an event scheduled before it joins the run.
    run_end: SimTime,
    /// `buckets[l * WAYS + d]`: events whose highest digit differing from `last` is `l`,
    /// where their digit `l` is `d`.
    buckets: Vec<Vec<Event<P>>>,
    /// Bit d of `level_mask[l]` is set when bucket (l, d) is non-empty.
    level_mask: [u64; LEVELS],
    /// Bit l is set when level l has a non-empty bucket.
    levels: u32,
    last: SimTime,
    len: usize,
    processed: u64,
    /// Of `processed`, those run without being scheduled (`count_run_unscheduled`).
    unscheduled: u64,
    /// Space for sorting a batch (`sort_due`).
    scratch: SortScratch<P>,
}

/// Bits of time per level (a digit), and the buckets per level.
const DIGIT: u32 = 6;
const WAYS: usize = 1 << DIGIT;
const LEVELS: usize = 64usize.div_ceil(DIGIT as usize);
/// The highest level whose small buckets become runs whole: 262 ns wide, so their
/// times fit a run's short keys (`sort_run`).
const RUN_LEVELS: usize = 3;

impl<P: Payload> Default for EventQueue<P> {
    fn default() -> Self {
        EventQueue::new()
    }
}

impl<P: Payload> EventQueue<P> {
    pub fn new() -> EventQueue<P> {
        EventQueue {
            due: Vec::new(),
            due_next: 0,
            run_end: 1,
            buckets: (0..LEVELS * WAYS).map(|_| Vec::new()).collect(),
            level_mask: [0; LEVELS],
            levels: 0,
            last: 0,
            len: 0,
            processed: 0,
            unscheduled: 0,
            scratch: SortScratch::default(),
        }
    }

    #[inline(always)]
    fn put(&mut self, e: Event<P>) {
        if e.time < self.run_end {
            return self.put_in_run(e);
        }
        let x = e.time ^ self.last;
        let l = ((63 - x.leading_zeros()) / DIGIT) as usize;
        let d = ((e.time >> (DIGIT as usize * l)) & (WAYS as u64 - 1)) as usize;
        self.buckets[l * WAYS + d].push(e);
        self.level_mask[l] |= 1 << d;
        self.levels |= 1 << l;
    }

    /// An event within the run's times joins it in its place. Most runs hold one time
    /// (or the event comes after all the run's): it joins the end.
    #[inline(always)]
    fn put_in_run(&mut self, e: Event<P>) {
        match self.due.last() {
            Some(t) if t.time > e.time || (t.time == e.time && e.time != self.last) => {
                self.insert_in_run(e)
            }
            _ => self.due.push(e),
        }
    }

    /// `put_in_run` of an event before the run's last: after the events of earlier
    /// times, and among those of its own time in content order (at the current time,
    /// after them all: it was scheduled while the time ran).
    #[inline(never)]
    fn insert_in_run(&mut self, e: Event<P>) {
        self.insert_in_order(e, e.time == self.last);
    }

    /// Puts `e` in the run after the events of earlier times and, among those of its own
    /// time, in content order, or after them all with `last_of_its_time`.
    fn insert_in_order(&mut self, e: Event<P>, last_of_its_time: bool) {
        let order = e.order();
        let at = self.due[self.due_next..]
            .iter()
            .position(|o| {
                o.time > e.time || (o.time == e.time && !last_of_its_time && o.order() > order)
            })
            .map_or(self.due.len(), |i| self.due_next + i);
        self.due.insert(at, e);
    }

    #[inline]
    pub fn schedule<K: Kind>(&mut self, time: SimTime, kind: K, a: u32, b: u32) {
        self.schedule_with(time, kind, a, P::operand(b));
    }

    /// Schedules a packet event carrying the packet's descriptor.
    #[inline]
    pub fn schedule_with<K: Kind>(&mut self, time: SimTime, kind: K, a: u32, d: P) {
        self.push_event(time, kind, a, 0, d);
    }

    /// Schedules packet `d`'s arrival at `node` through its port `via`.
    #[inline]
    pub fn schedule_arrival(&mut self, time: SimTime, node: u32, via: u32, d: P) {
        debug_assert!(time >= self.last, "event scheduled in the past");
        debug_assert!(via < KIND_TAG);
        self.put(Event {
            time,
            a: node,
            tag: via,
            d,
        });
        self.len += 1;
    }

    #[inline]
    fn push_event<K: Kind>(&mut self, time: SimTime, kind: K, a: u32, via: u32, d: P) {
        debug_assert!(time >= self.last, "event scheduled in the past");
        self.put(Self::event(time, kind, a, via, d));
        self.len += 1;
    }

    /// The event of kind `kind` at `time` on `a`: an arrival through port `via`, any
    /// other kind tagged with its code.
    #[inline(always)]
    fn event<K: Kind>(time: SimTime, kind: K, a: u32, via: u32, d: P) -> Event<P> {
        let tag = match kind.code() {
            0 => {
                debug_assert!(via < KIND_TAG);
                via
            }
            code => KIND_TAG + code,
        };
        Event { time, a, tag, d }
    }

    /// Schedules an event at the current time in its content order among the events
    /// still due then, as if it had been scheduled before the time began (not after
    /// them all, as `schedule` puts one scheduled while its time runs): for an event
    /// the simulator had kept out of the queue (a deferred `TxDone`) that must run after
    /// all.
    pub fn schedule_now_in_order<K: Kind>(&mut self, kind: K, a: u32, b: u32) {
        debug_assert!(kind.code() != 0);
        let d = P::operand(b);
        self.insert_in_order(Self::event(self.last, kind, a, 0, d), false);
        self.len += 1;
    }

    /// Schedules an event as it is (a replica of the simulator keeping the events of its
    /// own nodes).
    pub fn reschedule(&mut self, e: Event<P>) {
        debug_assert!(e.time >= self.last, "event scheduled in the past");
        self.put(e);
        self.len += 1;
    }

    /// Makes `due` hold the earliest pending events. Most calls find it non-empty (in
    /// the fat-tree benchmarks a dozen events share each time stamp: packet times and
    /// link delays are whole multiples of each other), so only that check is inlined.
    #[inline(always)]
    fn settle(&mut self) -> bool {
        self.due_next < self.due.len() || self.refill()
    }

    /// Makes the lowest bucket the run: whole, in time order, if its events are few and
    /// close; otherwise its events at its smallest time, the others filed lower.
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
        // The bucket becomes `due` (and the emptied `due` the bucket), with no event
        // moved, when its events share one time (every bucket of level 0, which differs
        // from `last` in the lowest digit only, all by `d`; every bucket of one), or when
        // they are few and within a few hundred nanoseconds: then they are sorted by time
        // once, and pop one time after another with no refill between (where events
        // rarely share a time stamp, as with Homa's messages of any size, most times
        // would otherwise each take a refill and each event a move per level).
        let (lo, hi) = if l == 0 {
            (self.buckets[b][0].time, self.buckets[b][0].time)
        } else {
            self.buckets[b]
                .iter()
                .fold((SimTime::MAX, 0), |(lo, hi), e| {
                    (lo.min(e.time), hi.max(e.time))
                })
        };
        if lo == hi {
            std::mem::swap(&mut self.due, &mut self.buckets[b]);
            self.last = lo;
            self.run_end = lo + 1;
            sort_due(&mut self.due, &mut self.scratch);
            return true;
        }
        let span = DIGIT as usize * l;
        if l <= RUN_LEVELS && self.buckets[b].len() <= NETWORK {
            std::mem::swap(&mut self.due, &mut self.buckets[b]);
            self.last = lo;
            // The bucket's range: its events differ from one another below digit `l`.
            self.run_end = ((lo >> span) + 1) << span;
            sort_run(&mut self.due, lo, &mut self.scratch);
            return true;
        }
        let mut items = std::mem::take(&mut self.buckets[b]);
        self.last = lo;
        self.run_end = lo + 1;
        // The events at the new `last` go to `due` in bucket order; every other one lands
        // at least one digit lower, never back here, so the emptied vector (and its
        // capacity) can return to its bucket.
        for e in items.drain(..) {
            self.put(e);
        }
        self.buckets[b] = items;
        sort_due(&mut self.due, &mut self.scratch);
        true
    }

    /// Sorts the events due at the current time that have not run yet into content
    /// order: after events from elsewhere join at the current time (a parallel run's
    /// batch from other threads), as at a refill.
    pub fn sort_pending_due(&mut self) {
        let end = self.due_end(self.due_next);
        sort_batch(&mut self.due[self.due_next..end], &mut self.scratch);
    }

    /// The end of the run's events at time `last`, from index `from` on.
    fn due_end(&self, from: usize) -> usize {
        from + self.due[from..]
            .iter()
            .take_while(|e| e.time == self.last)
            .count()
    }

    #[inline]
    pub fn pop(&mut self) -> Option<Event<P>> {
        if !self.settle() {
            return None;
        }
        let e = self.due[self.due_next];
        self.last = e.time;
        self.due_next += 1;
        self.len -= 1;
        self.processed += 1;
        Some(e)
    }

    /// Where the event popped last stands among the events due at its time (run and
    /// pending), and how many those are: a run over several threads that captures
    /// packets keys each record by the one-thread order of the event that made it
    /// (`capture::EventKey`), which the place tells (below the count at the time's first
    /// pop: due when the time began; from it on, scheduled for the time, in order).
    pub fn due_place(&self) -> (usize, usize) {
        let popped = &self.due[..self.due_next];
        let first = popped.len()
            - popped
                .iter()
                .rev()
                .take_while(|e| e.time == self.last)
                .count();
        (
            self.due_next.wrapping_sub(1).wrapping_sub(first),
            self.due_end(self.due_next) - first,
        )
    }

    /// The time of the earliest pending event, without making it current: the queue
    /// stays open to events before it (and after the current time).
    pub fn next_time(&self) -> Option<SimTime> {
        if let Some(e) = self.due.get(self.due_next) {
            return Some(e.time);
        }
        if self.levels == 0 {
            return None;
        }
        let l = self.levels.trailing_zeros() as usize;
        let d = self.level_mask[l].trailing_zeros() as usize;
        self.buckets[l * WAYS + d].iter().map(|e| e.time).min()
    }

    /// `peek_time`, if the earliest event comes before `until`; otherwise `None`, and
    /// the queue has not moved past its current time, so another part of a run over
    /// several threads may still schedule events from `until` on.
    #[inline]
    pub fn peek_time_before(&mut self, until: SimTime) -> Option<SimTime> {
        match self.next_time() {
            Some(t) if t < until => self.peek_time(),
            _ => None,
        }
    }

    pub fn peek_time(&mut self) -> Option<SimTime> {
        if self.settle() {
            Some(self.due[self.due_next].time)
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

    /// Events run so far: those popped, and those the simulator ran without scheduling
    /// them (`count_run_unscheduled`), so that the count is the model's, however its
    /// events were carried.
    pub fn processed(&self) -> u64 {
        self.processed
    }

    /// Counts an event the simulator ran without putting it in the queue (a deferred
    /// `TxDone`, see `Port::defers_tx_done`).
    #[inline(always)]
    pub fn count_run_unscheduled(&mut self) {
        self.processed += 1;
        self.unscheduled += 1;
    }

    /// Of the events run, those run without being scheduled.
    pub fn run_unscheduled(&self) -> u64 {
        self.unscheduled
    }

    /// The pending events, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &Event<P>> {
        self.due[self.due_next..]
            .iter()
            .chain(self.buckets.iter().flatten())
    }
}

/// Puts one time's events, the whole of `due`, in content order. Each event's order key,
/// its low bits replaced by the event's place in the batch, is sorted alone (8 bytes
/// where an event with its full key is 48), and the events are then gathered once into
/// the spare vector, which becomes `due`. Most batches are small (two to eight events
/// in the fat-tree benchmarks, their sizes varying from one time stamp to the next):
/// their keys go through a sorting network, which has no data-dependent branches (an
/// insertion sort mispredicted about one branch per event); larger ones (hundreds of
/// events on a big fabric of equal links) through the library's sort of integers. Keys
/// that agree above those low bits (a hash collision, in practice never) take the full
/// comparison (`sort_large`), so the order is always exactly `Event::order`'s.
#[inline]
fn sort_due<P: Payload>(due: &mut Vec<Event<P>>, scratch: &mut SortScratch<P>) {
    if due.len() < 3 {
        return sort_pair(due, scratch);
    }
    if !scratch.sort_keys(due) {
        return sort_large(due, &mut scratch.keyed);
    }
    let SortScratch { keys, moved, .. } = scratch;
    moved.clear();
    moved.extend(keys[..due.len()].iter().map(|k| due[(k & SLOT) as usize]));
    std::mem::swap(due, moved);
}

/// Puts a run of events of different times, at most `NETWORK` and all within 2^18 ps
/// of `base`, the earliest, in time order, and each time's events in content order:
/// their short keys (time from `base`, then place) through a sorting network, then each
/// time's events, if several, by `sort_batch`.
fn sort_run<P: Payload>(due: &mut Vec<Event<P>>, base: SimTime, scratch: &mut SortScratch<P>) {
    // Two events (most runs of Homa's off-grid times): in place, as `sort_pair` does.
    if let [a, b] = &mut due[..] {
        if a.time > b.time {
            std::mem::swap(a, b);
        }
        if a.time == b.time {
            sort_pair(due, scratch);
        }
        return;
    }
    let n = due.len();
    debug_assert!(n <= NETWORK);
    let mut keys = padded_keys();
    for (i, (key, e)) in keys.iter_mut().zip(due.iter()).enumerate() {
        *key = (e.time - base) << 16 | i as u64;
    }
    sort_network(&mut keys, n);
    let moved = &mut scratch.moved;
    moved.clear();
    moved.extend(keys[..n].iter().map(|k| due[(k & SLOT) as usize]));
    std::mem::swap(due, moved);
    let mut i = 0;
    while i < n {
        let j = i + due[i..]
            .iter()
            .take_while(|e| e.time == due[i].time)
            .count();
        if j - i > 1 {
            sort_batch(&mut due[i..j], scratch);
        }
        i = j;
    }
}

/// `sort_due` for a batch of at most two events: a pair is put in order in place, by
/// the short keys' comparison (the full keys' if the short ones agree), with no keys
/// stored and no events gathered (most batches in NDP's and Homa's runs are pairs).
#[inline(always)]
fn sort_pair<P: Payload>(due: &mut [Event<P>], scratch: &mut SortScratch<P>) {
    if let [a, b] = due {
        let (x, y) = (a.order().0 & !SLOT, b.order().0 & !SLOT);
        if x == y {
            return sort_large(due, &mut scratch.keyed);
        }
        if x > y {
            std::mem::swap(a, b);
        }
    }
}

/// `sort_due` for a batch that is part of a vector: events from elsewhere joining the
/// time being processed (a run over several threads).
fn sort_batch<P: Payload>(due: &mut [Event<P>], scratch: &mut SortScratch<P>) {
    if due.len() < 3 {
        return sort_pair(due, scratch);
    }
    if !scratch.sort_keys(due) {
        return sort_large(due, &mut scratch.keyed);
    }
    scratch.moved.clear();
    scratch.moved.extend_from_slice(due);
    for (slot, key) in due.iter_mut().zip(scratch.keys.iter()) {
        *slot = scratch.moved[(key & SLOT) as usize];
    }
}

/// The low key bits that hold an event's place in its batch, and so the largest batch
/// sorted by short keys.
const SLOT: u64 = 0xffff;
/// The largest batch sorted by a network.
const NETWORK: usize = 16;

/// What sorting keeps from batch to batch, so that it never allocates once warm.
#[derive(Default)]
struct SortScratch<P> {
    /// A batch's short keys (`sort_keys`).
    keys: Vec<u64>,
    /// A batch's events in order, before it becomes `due`.
    moved: Vec<Event<P>>,
    /// Keys and events of a batch whose short keys collide (`sort_large`).
    keyed: Vec<((u64, u64), Event<P>)>,
}

impl<P: Payload> SortScratch<P> {
    /// Fills `keys` with the batch's short keys (order key and place) in ascending
    /// order; false if the batch is too large for its places to fit the slot bits or
    /// two keys agree above them (the caller then compares the full keys).
    #[inline]
    fn sort_keys(&mut self, due: &[Event<P>]) -> bool {
        let n = due.len();
        if n > NETWORK {
            return self.sort_long_keys(due);
        }
        let mut keys = padded_keys();
        for (i, (key, e)) in keys.iter_mut().zip(due).enumerate() {
            *key = e.order().0 & !SLOT | i as u64;
        }
        sort_network(&mut keys, n);
        let distinct = distinct(&keys[..n]);
        self.keys.clear();
        self.keys.extend_from_slice(&keys[..n]);
        distinct
    }

    /// `sort_keys` for a batch larger than the networks.
    #[cold]
    #[inline(never)]
    fn sort_long_keys(&mut self, due: &[Event<P>]) -> bool {
        if due.len() > SLOT as usize + 1 {
            return false;
        }
        self.keys.clear();
        self.keys.extend(
            due.iter()
                .enumerate()
                .map(|(i, e)| e.order().0 & !SLOT | i as u64),
        );
        self.keys.sort_unstable();
        distinct(&self.keys)
    }
}

/// No two neighbouring keys agree above their slot bits (no early exit, so no
/// data-dependent branch).
#[inline(always)]
fn distinct(keys: &[u64]) -> bool {
    let mut all = true;
    for w in keys.windows(2) {
        all &= (w[0] ^ w[1]) > SLOT;
    }
    all
}

/// A compare-exchange: the smaller key to `a`, branch-free.
#[inline(always)]
fn exchange(keys: &mut [u64; NETWORK], a: usize, b: usize) {
    let (x, y) = (keys[a], keys[b]);
    keys[a] = x.min(y);
    keys[b] = x.max(y);
}

/// Spells out a sorting network's comparators (constant indices: no bounds checks, the
/// keys kept in registers).
macro_rules! network {
    ($keys:ident: $(($a:literal, $b:literal)),* $(,)?) => {
        $(exchange($keys, $a, $b);)*
    };
}

/// A network's keys before a batch's are written over the first of them: padding above
/// every real key (an order key's rank, in the top bits, is far below 31; a run's time
/// offset below 2^18), each pad distinct from the next above the slot bits.
#[inline(always)]
fn padded_keys() -> [u64; NETWORK] {
    std::array::from_fn(|i| u64::MAX - ((i as u64) << 16))
}

/// Sorts the first `n` keys (at most `NETWORK`; the others are padding above them) by
/// the smallest network that covers them: most batches are of two to four events.
#[inline(always)]
fn sort_network(keys: &mut [u64; NETWORK], n: usize) {
    if n <= 2 {
        exchange(keys, 0, 1);
    } else if n <= 4 {
        sort_4(keys);
    } else if n <= 8 {
        sort_8(keys);
    } else {
        sort_16(keys);
    }
}

/// Sorts `keys[..4]`: the optimal 5-comparator network for 4 inputs.
#[inline(always)]
fn sort_4(keys: &mut [u64; NETWORK]) {
    network!(keys: (0, 1), (2, 3), (0, 2), (1, 3), (1, 2));
}

/// Sorts `keys[..8]`: the optimal 19-comparator network for 8 inputs (Knuth, TAOCP
/// vol. 3, 5.3.4).
#[inline(always)]
fn sort_8(keys: &mut [u64; NETWORK]) {
    network!(keys: (0, 2), (1, 3), (4, 6), (5, 7), (0, 4), (1, 5), (2, 6), (3, 7),
        (0, 1), (2, 3), (4, 5), (6, 7), (2, 4), (3, 5), (1, 4), (3, 6), (1, 2), (3, 4),
        (5, 6));
}

/// Sorts `keys[..16]`: Batcher's odd-even merge sort (63 comparators).
#[inline(never)]
fn sort_16(keys: &mut [u64; NETWORK]) {
    network!(keys: (0, 1), (2, 3), (4, 5), (6, 7), (8, 9), (10, 11), (12, 13), (14, 15),
        (0, 2), (1, 3), (4, 6), (5, 7), (8, 10), (9, 11), (12, 14), (13, 15), (1, 2),
        (5, 6), (9, 10), (13, 14), (0, 4), (1, 5), (2, 6), (3, 7), (8, 12), (9, 13),
        (10, 14), (11, 15), (2, 4), (3, 5), (10, 12), (11, 13), (1, 2), (3, 4), (5, 6),
        (9, 10), (11, 12), (13, 14), (0, 8), (1, 9), (2, 10), (3, 11), (4, 12), (5, 13),
        (6, 14), (7, 15), (4, 8), (5, 9), (6, 10), (7, 11), (2, 4), (3, 5), (6, 8),
        (7, 9), (10, 12), (11, 13), (1, 2), (3, 4), (5, 6), (7, 8), (9, 10), (11, 12),
        (13, 14));
}

/// `sort_due` for a batch whose short keys collide (or of more than 65,536 events): each
/// full key computed once, the events sorted with them. `keyed` is the queue's scratch space, kept from batch to batch.
#[cold]
#[inline(never)]
fn sort_large<P: Payload>(due: &mut [Event<P>], keyed: &mut Vec<((u64, u64), Event<P>)>) {
    keyed.clear();
    keyed.extend(due.iter().map(|e| (e.order(), *e)));
    keyed.sort_unstable_by_key(|k| k.0);
    for (slot, (_, e)) in due.iter_mut().zip(keyed.iter()) {
        *slot = *e;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kinds for the tests: an arrival, eleven others, and one carrying a packet.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum TestKind {
        Arrive,
        K1,
        K2,
        K3,
        K4,
        K5,
        K6,
        K7,
        K8,
        K9,
        K10,
        K11,
        Packet,
    }

    const KINDS: [TestKind; 13] = [
        TestKind::Arrive,
        TestKind::K1,
        TestKind::K2,
        TestKind::K3,
        TestKind::K4,
        TestKind::K5,
        TestKind::K6,
        TestKind::K7,
        TestKind::K8,
        TestKind::K9,
        TestKind::K10,
        TestKind::K11,
        TestKind::Packet,
    ];

    impl Kind for TestKind {
        const ARRIVAL: TestKind = TestKind::Arrive;
        fn code(self) -> u32 {
            match self {
                TestKind::Packet => 12 | CARRIES_PACKET,
                k => k as u32,
            }
        }
        fn of_code(c: u32) -> TestKind {
            match c {
                1..=11 => KINDS[c as usize],
                c if c == 12 | CARRIES_PACKET => TestKind::Packet,
                _ => TestKind::Arrive,
            }
        }
    }

    /// A payload of the simulator's descriptor's size.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    struct TestPayload {
        pkt: u32,
        rest: [u32; 3],
    }

    impl Payload for TestPayload {
        fn operand(b: u32) -> TestPayload {
            TestPayload {
                pkt: b,
                ..TestPayload::default()
            }
        }
        fn b(&self) -> u32 {
            self.pkt
        }
    }

    #[test]
    fn pops_in_time_then_content_order() {
        let mut q = EventQueue::<TestPayload>::new();
        q.schedule(5, TestKind::K3, 3, 1);
        q.schedule(5, TestKind::K3, 3, 0);
        q.schedule(3, TestKind::K1, 2, 0);
        q.schedule_arrival(5, 1, 7, TestPayload::default());
        q.schedule(3, TestKind::K1, 1, 0);
        q.schedule_arrival(3, 4, 9, TestPayload::default());
        q.schedule_arrival(3, 8, 2, TestPayload::default());
        let popped: Vec<Event<TestPayload>> = std::iter::from_fn(|| q.pop()).collect();
        let kinds: Vec<(u64, TestKind)> = popped.iter().map(|e| (e.time, e.kind())).collect();
        use TestKind::*;
        // By time; at each time the arrivals first, then the kinds in their order.
        assert_eq!(
            kinds,
            vec![
                (3, Arrive),
                (3, Arrive),
                (3, K1),
                (3, K1),
                (5, Arrive),
                (5, K3),
                (5, K3)
            ]
        );
        assert!(popped
            .windows(2)
            .all(|w| (w[0].time, w[0].order()) < (w[1].time, w[1].order())));
    }

    /// An event put back at the current time in its content order runs after the
    /// arrivals still due then and before the later kinds already due, where one
    /// scheduled while the time runs goes after them all.
    #[test]
    fn an_event_scheduled_now_in_order_takes_its_place() {
        let kinds_after = |in_order: bool| {
            let mut q = EventQueue::<TestPayload>::new();
            q.schedule(9, TestKind::K3, 3, 0);
            q.schedule_arrival(9, 1, 7, TestPayload::default());
            q.schedule_arrival(9, 2, 8, TestPayload::default());
            q.schedule(20, TestKind::K3, 4, 0);
            assert_eq!(q.pop().map(|e| e.kind()), Some(TestKind::Arrive));
            if in_order {
                q.schedule_now_in_order(TestKind::K1, 5, 0);
            } else {
                q.schedule(9, TestKind::K1, 5, 0);
            }
            assert_eq!(q.len(), 4);
            std::iter::from_fn(|| q.pop())
                .map(|e| (e.time, e.kind()))
                .collect::<Vec<_>>()
        };
        use TestKind::*;
        assert_eq!(
            kinds_after(true),
            vec![(9, Arrive), (9, K1), (9, K3), (20, K3)]
        );
        assert_eq!(
            kinds_after(false),
            vec![(9, Arrive), (9, K3), (9, K1), (20, K3)]
        );
    }

    /// Two links delivering at the same instants: neither always goes first.
    #[test]
    fn ties_between_links_do_not_always_favour_one() {
        let mut q = EventQueue::<TestPayload>::new();
        let instants = 1_000u64;
        for t in 0..instants {
            q.schedule_arrival(1_000 * t + 7, 3, 2, TestPayload::default());
            q.schedule_arrival(1_000 * t + 7, 3, 1, TestPayload::default());
        }
        let mut first = 0;
        while let Some(e) = q.pop() {
            let second = q.pop().unwrap();
            assert_eq!(e.time, second.time);
            first += (e.via() == 1) as u64;
        }
        assert!(
            (400..=600).contains(&first),
            "port 1 first at {first} of {instants}"
        );
    }

    /// The order of a time's events is the same whichever order they were scheduled
    /// in, and events scheduled at the current time run after the ones due.
    #[test]
    fn equal_times_run_in_the_same_order_whatever_the_scheduling_order() {
        let run = |reverse: bool| {
            let mut q = EventQueue::<TestPayload>::new();
            let mut ids: Vec<u32> = (0..40).collect();
            if reverse {
                ids.reverse();
            }
            for &i in &ids {
                q.schedule(10 + (i % 3) as u64, TestKind::K2, i, 0);
                q.schedule_arrival(10 + (i % 2) as u64, i, 100 + i, TestPayload::default());
            }
            let mut out = Vec::new();
            while let Some(e) = q.pop() {
                if e.a == 5 && e.kind::<TestKind>() == TestKind::K2 {
                    q.schedule(e.time, TestKind::K3, 0, 0);
                }
                out.push((e.time, e.kind::<TestKind>().code() as u8, e.a));
            }
            out
        };
        let forward = run(false);
        assert_eq!(forward, run(true));
        let timer = forward
            .iter()
            .position(|&(_, k, _)| k == TestKind::K3.code() as u8)
            .unwrap();
        // Flow 5 starts at 12; the timer it schedules then runs after every event due at 12.
        assert_eq!(forward[timer].0, 12);
        assert!(forward[timer + 1..].iter().all(|&(t, _, _)| t > 12));
    }

    #[test]
    fn peeking_before_a_bound_keeps_the_queue_open_to_earlier_events() {
        let mut q = EventQueue::<TestPayload>::new();
        q.schedule(1, TestKind::K1, 1, 0);
        q.schedule(500, TestKind::K1, 2, 0);
        q.schedule(90_000, TestKind::K1, 3, 0);
        assert_eq!(q.peek_time_before(100), Some(1));
        q.pop();
        assert_eq!(q.peek_time_before(100), None);
        assert_eq!(q.next_time(), Some(500));
        // Events from elsewhere, after the bound but before the next one.
        q.schedule(100, TestKind::K1, 4, 0);
        q.schedule(499, TestKind::K1, 5, 0);
        let order: Vec<u64> = std::iter::from_fn(|| q.pop()).map(|e| e.time).collect();
        assert_eq!(order, vec![100, 499, 500, 90_000]);
    }

    #[test]
    fn sorting_pending_due_orders_a_late_batch() {
        let mut q = EventQueue::<TestPayload>::new();
        q.schedule(4, TestKind::K1, 9, 0);
        assert_eq!(q.peek_time(), Some(4));
        // A batch from elsewhere joins at the time already due.
        q.schedule(4, TestKind::K1, 3, 0);
        q.schedule_arrival(4, 1, 5, TestPayload::default());
        q.sort_pending_due();
        let popped: Vec<Event<TestPayload>> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(popped[0].kind::<TestKind>(), TestKind::Arrive);
        assert!(popped.windows(2).all(|w| w[0].order() < w[1].order()));
    }

    /// Interleaves random schedules (up to `spread` ps ahead, a quarter at the current
    /// time) and pops, and checks events come out in strictly increasing (time, order).
    fn check_order(seed: u64, ops: usize, spread: u64) {
        use crate::engine::Rng;
        let mut q = EventQueue::<TestPayload>::new();
        let mut r = Rng::new(seed, 0, 0);
        let mut now = 0;
        // (time, scheduled at the current time, content order)
        let mut popped = Vec::new();
        let mut late = std::collections::HashSet::new();
        let mut id = 0;
        let pop = |q: &mut EventQueue<TestPayload>, late: &std::collections::HashSet<u32>| {
            q.pop().map(|e| (e.time, late.contains(&e.a), e.order()))
        };
        for _ in 0..ops {
            if r.below(3) < 2 {
                let t = now + if r.below(4) == 0 { 0 } else { r.below(spread) };
                if t == now {
                    late.insert(id);
                }
                q.schedule_arrival(t, id, r.below(1 << 20) as u32, TestPayload::default());
                id += 1;
            } else if let Some(e) = pop(&mut q, &late) {
                assert!(e.0 >= now);
                now = e.0;
                popped.push(e);
            }
        }
        assert_eq!(q.len(), q.iter().count());
        while let Some(e) = pop(&mut q, &late) {
            popped.push(e);
        }
        assert_eq!(popped.len(), id as usize);
        // Time first; at one time, the events scheduled before it came in content order,
        // then those scheduled at it.
        assert!(
            popped.windows(2).all(|w| w[0].0 < w[1].0
                || (w[0].0 == w[1].0 && (w[0].1 as u8, w[0].2) <= (w[1].1 as u8, w[1].2))
                || (w[0].0 == w[1].0 && w[0].1 && w[1].1)),
            "(time, order)"
        );
    }

    /// Interleaves random schedules (a third at the current time, the others up to
    /// `spread` ps ahead, some within a few picoseconds) and pops, and checks every pop
    /// against a plain model of the order: by time; at one time, the events scheduled
    /// before it began in content order, then those scheduled while it ran, in the order
    /// they were.
    fn check_against_model(seed: u64, ops: usize, spread: u64) {
        use crate::engine::Rng;
        let mut q = EventQueue::<TestPayload>::new();
        let mut r = Rng::new(seed, 0, 0);
        // (time, scheduled while its time ran, its rank then, content order, id)
        type Pending = (u64, bool, u64, (u64, u64), u32);
        let mut model: Vec<Pending> = Vec::new();
        let (mut now, mut id, mut seq, mut popped) = (1, 0u32, 0u64, false);
        for _ in 0..ops {
            if r.below(5) < 3 {
                let t = match r.below(3) {
                    0 => now,
                    1 => now + r.below(4),
                    _ => now + r.below(spread),
                };
                let late = popped && t == now;
                // Nodes unique, in no relation to the order they are scheduled in.
                let (node, via) = (id.reverse_bits() >> 12, r.below(1 << 20) as u32);
                let d = TestPayload {
                    pkt: id,
                    ..TestPayload::default()
                };
                q.schedule_arrival(t, node, via, d);
                let e = Event {
                    time: t,
                    a: node,
                    tag: via,
                    d,
                };
                seq += 1;
                model.push((t, late, seq, e.order(), id));
                id += 1;
            } else if let Some(e) = q.pop() {
                let i = (0..model.len())
                    .min_by_key(|&i| {
                        let m = model[i];
                        (m.0, m.1, if m.1 { (m.2, 0) } else { m.3 })
                    })
                    .unwrap();
                let m = model.swap_remove(i);
                assert_eq!((e.time, e.d.pkt), (m.0, m.4), "pop after {seq} schedules");
                now = e.time;
                popped = true;
            }
            assert_eq!(q.len(), model.len());
        }
    }

    /// An event joining a run of several times takes its place by time, and among its
    /// time's events by content order.
    #[test]
    fn an_event_joins_a_run_in_its_place() {
        let mut q = EventQueue::<TestPayload>::new();
        let order = |a: u32| {
            Event {
                time: 100,
                a,
                tag: 0,
                d: TestPayload::default(),
            }
            .order()
        };
        // Two operands of opposite content order at time 100.
        let (low, high) = if order(1) < order(2) { (1, 2) } else { (2, 1) };
        q.schedule_arrival(70, 0, 0, TestPayload::default());
        q.schedule_arrival(100, high, 0, TestPayload::default());
        q.schedule_arrival(90, 3, 0, TestPayload::default());
        assert_eq!(q.pop().map(|e| e.time), Some(70));
        q.schedule_arrival(100, low, 0, TestPayload::default());
        q.schedule_arrival(80, 4, 0, TestPayload::default());
        let popped: Vec<(u64, u32)> = std::iter::from_fn(|| q.pop())
            .map(|e| (e.time, e.a))
            .collect();
        assert_eq!(popped, vec![(80, 4), (90, 3), (100, low), (100, high)]);
    }

    #[test]
    fn pops_as_a_model_of_the_order_does() {
        for (seed, spread) in [(1, 50), (2, 300), (3, 5_000), (4, 300_000), (5, 1 << 30)] {
            check_against_model(seed, 20_000, spread);
        }
    }

    #[test]
    fn matches_a_sorted_order_under_random_interleaving() {
        check_order(9, 20_000, 5_000_000);
        check_order(1, 100_000, 50);
        check_order(2, 100_000, 1 << 40);
        check_order(3, 100_000, u32::MAX as u64);
    }

    /// The networks sort every 0-1 input, so they sort every input (Knuth's 0-1
    /// principle).
    #[test]
    fn sorting_networks_sort() {
        let pair = |keys: &mut [u64; NETWORK]| exchange(keys, 0, 1);
        for (n, sort) in [
            (2, pair as fn(&mut [u64; NETWORK])),
            (4, sort_4),
            (8, sort_8),
            (16, sort_16),
        ] {
            for bits in 0u32..1 << n {
                let mut keys = [u64::MAX; NETWORK];
                for (i, key) in keys.iter_mut().enumerate().take(n) {
                    *key = (bits >> i & 1) as u64;
                }
                sort(&mut keys);
                assert!(keys[..n].windows(2).all(|w| w[0] <= w[1]), "{n}: {bits:b}");
            }
        }
    }

    fn batch(orders: &[u32]) -> Vec<Event<TestPayload>> {
        orders
            .iter()
            .map(|&a| Event {
                time: 9,
                a,
                tag: KIND_TAG + TestKind::K1 as u32,
                d: TestPayload::default(),
            })
            .collect()
    }

    /// Every batch size comes out in `Event::order`'s order, through the networks, past
    /// them, and from within a vector.
    #[test]
    fn batches_of_every_size_sort_by_order() {
        use crate::engine::Rng;
        let mut r = Rng::new(4, 0, 0);
        let mut scratch = SortScratch::default();
        for n in (0..=40).chain([300, 1000]) {
            for _ in 0..50 {
                let orders: Vec<u32> = (0..n).map(|_| r.below(1 << 30) as u32).collect();
                let mut due = batch(&orders);
                sort_due(&mut due, &mut scratch);
                assert_eq!(due.len(), n);
                assert!(due.windows(2).all(|w| w[0].order() <= w[1].order()));
                let mut tail = batch(&orders);
                tail.insert(0, batch(&[u32::MAX])[0]);
                sort_batch(&mut tail[1..], &mut scratch);
                assert_eq!(tail[0].a, u32::MAX);
                assert!(tail[1..].iter().zip(&due).all(|(x, y)| x.a == y.a));
            }
        }
    }

    /// Keys that agree above their slot bits are reported, for the full comparison.
    #[test]
    fn short_keys_that_agree_are_reported() {
        let mut scratch = SortScratch::default();
        assert!(scratch.sort_keys(&batch(&[1, 2, 3])));
        for n in (2..=NETWORK + 2).chain([300]) {
            let mut due = batch(&(0..n as u32).collect::<Vec<u32>>());
            due[n - 1].a = 0;
            assert!(!scratch.sort_keys(&due), "{n} events");
        }
        assert!(!scratch.sort_keys(&batch(&vec![0; SLOT as usize + 2])));
    }

    #[test]
    fn events_stay_32_bytes() {
        assert_eq!(std::mem::size_of::<Event<TestPayload>>(), 32);
    }

    #[test]
    fn kind_and_port_round_trip() {
        use TestKind::*;
        let mut q = EventQueue::<TestPayload>::new();
        let kinds = [K1, K2, K3, K4, K5, K6, K7, K8, K9, K10, K11, Packet];
        for (t, &k) in kinds.iter().enumerate() {
            q.schedule(t as u64, k, 7, 9);
        }
        q.schedule_arrival(100, 3, 0, TestPayload::default());
        q.schedule_arrival(101, 3, KIND_TAG - 1, TestPayload::default());
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
