//! Output queues: drop-tail in packets or bytes, ECN step marking on the instantaneous
//! queue at a threshold K (at enqueue, or at dequeue), RED (`net::red`) as an option, and
//! strict priority between two classes or, with `priority_levels`, between N levels (as
//! Homa's switches: level 0 first). One struct with plain settings rather than a boxed
//! discipline: the checks are a few compares on the per-packet path.
//!
//! Occupancy counts the packets waiting, not the one being serialised.
//!
//! A plain FIFO (no RED, no priority, marking at enqueue) can fix each packet's
//! departure as it joins: the link is a FIFO server, so a packet starts when the ones
//! ahead of it are done. Such a *committed* queue keeps only the sizes of its waiting
//! packets and the start time of the first (the others follow back to back at the link's
//! rate), and the packets themselves travel on as arrival events at the next node;
//! `advance` forgets those that have started, so occupancy, drops and marks are what they
//! would be with the packets held until their turn. The start time sits with the
//! counters, so an arrival at a queue whose first packet has not started reads no ring
//! slot.
//!
//! A strict-priority queue can fix the departures of its top level (0) the same way
//! while nothing of a lower level waits (`commit_top_level`): a level-0 packet is served
//! before every lower level and after the level-0 packets ahead of it, so nothing that
//! arrives later can start before it. Its start is then when the link is done with the
//! packets ahead. A packet of a lower level (or one of level 0 that finds one waiting)
//! waits in its FIFO and the port's `TxDone` takes it, after the fixed packets.
//!
//! When a port's `TxDone` takes a packet from a strict-priority queue, its waiting
//! level-0 packets, whose turn comes next whatever arrives before they start, have their
//! departures fixed with it (`fix_certain_next`). They are held as the fixed level-0
//! packets are, and the port's next `TxDone` comes after them.
//!
//! A trimming queue fixes the departures of the control headers that find no header
//! waiting in it, as long as its round robin could not turn to data before them
//! (`TrimQueue::fixes`), the same way; with data waiting, only behind a deferred
//! `TxDone`, which moves behind them (`Sim::enqueue_trimming`). As a packet leaves it
//! fixes none: its switch
//! ports' `TxDone`s are not events (`Port::defers_tx_done`), and fixing its headers
//! then cost more than it saved (4% of fattree8-ndp's time).
//!
//! A pFabric queue (`net::pfabric`) holds its packets in its own buffer, picks the next
//! by the priorities its packets carry and, when full, drops the least urgent: no
//! departure of it is fixed before the packet leaves.

pub use super::admission::{Admission, Fate};
use super::ecn_red::{EcnRed, EcnRedConfig};
use super::packet::Desc;
use super::pfabric::{PfabricQueue, Slot};
use super::red::{Red, RedConfig, RedVerdict};
use super::trim::{TrimConfig, TrimQueue, TrimStats};
use crate::engine::rng::Rng;
use crate::time::{Rate, SimTime};
use std::collections::VecDeque;

/// When ECN marking looks at the queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkAt {
    /// An arriving ECT packet is marked if the queue already holds at least K.
    Enqueue,
    /// A departing ECT packet is marked if the queue it leaves behind holds at least K.
    Dequeue,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QueueConfig {
    /// Drop-tail limit in packets (`u64::MAX` when the limit is in bytes only).
    pub limit_packets: u64,
    /// Drop-tail limit in bytes (`u64::MAX` when the limit is in packets only).
    pub limit_bytes: u64,
    /// ECN marking threshold in packets (`u64::MAX`: off).
    pub ecn_k_packets: u64,
    /// ECN marking threshold in bytes (`u64::MAX`: off).
    pub ecn_k_bytes: u64,
    pub mark_at: MarkAt,
    /// Serve class 0 strictly before class 1; otherwise one FIFO.
    pub priority: bool,
    /// Strict priority over this many levels (0 first); 0: as `priority` says (two
    /// levels or one). A packet's level is its priority, capped at the last level.
    pub priority_levels: u8,
    /// Keep a time-weighted histogram of occupancy in packets.
    pub histogram: bool,
    /// pFabric's scheduling and dropping by the packets' priorities (`net::pfabric`).
    pub pfabric: bool,
}

impl Default for QueueConfig {
    fn default() -> Self {
        QueueConfig {
            limit_packets: 100,
            limit_bytes: u64::MAX,
            ecn_k_packets: u64::MAX,
            ecn_k_bytes: u64::MAX,
            mark_at: MarkAt::Enqueue,
            priority: false,
            priority_levels: 0,
            histogram: false,
            pfabric: false,
        }
    }
}

impl QueueConfig {
    /// The number of strict-priority levels (1: one FIFO).
    pub fn levels(&self) -> u8 {
        if self.priority_levels > 0 {
            self.priority_levels
        } else if self.priority {
            2
        } else {
            1
        }
    }

    pub fn ecn_enabled(&self) -> bool {
        self.ecn_k_packets != u64::MAX || self.ecn_k_bytes != u64::MAX
    }
}

/// Counters of one queue.
#[derive(Clone, Debug, Default)]
pub struct QueueStats {
    pub enqueued: u64,
    pub drops: u64,
    /// Of the drops, those RED made early (before the queue was full).
    pub early_drops: u64,
    pub marks: u64,
    pub max_packets: u64,
    pub max_bytes: u64,
    /// Integral of occupancy over time, in packet·ps and byte·ps.
    pub area_packets: u128,
    pub area_bytes: u128,
    pub last_change: SimTime,
    /// Time (ps) spent at each occupancy in packets, if enabled.
    pub histogram: Vec<u64>,
}

/// The per-packet shortcuts a queue may take (`OutQueue::fast_paths`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FastPaths {
    /// A packet that finds the queue empty and the link idle goes straight onto the
    /// wire (`Sim::onto_idle_link`), never seen waiting.
    pub idle_shortcut: bool,
    /// The departures fixed before the port's `TxDone` (see the module comment).
    pub fixes: Fixes,
}

impl FastPaths {
    /// No shortcut: every packet joins the queue and leaves at a `TxDone`.
    pub const NONE: FastPaths = FastPaths {
        idle_shortcut: false,
        fixes: Fixes::Nothing,
    };
}

/// Which departures a queue fixes before its port's `TxDone` would start them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fixes {
    /// Every packet's, at enqueue: a FIFO whose every decision is made as a packet
    /// joins (a committed queue).
    Every,
    /// Strict priority: a level-0 packet's at enqueue while no packet waits in a FIFO,
    /// and the waiting level-0 packets' as a packet leaves (`fix_certain_next`).
    TopLevel,
    /// A trimming queue's control headers whose turn is certain (`TrimQueue::fixes`).
    Headers,
    /// None: every packet waits for the port's `TxDone`.
    Nothing,
}

/// The queues that keep their packets in a buffer of their own.
enum Aside {
    /// NDP's trimming (`net::trim`): its data and header queues.
    Trim(TrimQueue),
    /// pFabric's buffer (`net::pfabric`).
    Pfabric(PfabricQueue),
}

pub struct OutQueue {
    pub cfg: QueueConfig,
    fifo: [VecDeque<Desc>; 2],
    /// The FIFOs of levels 2 and up (`QueueConfig::priority_levels` > 2; empty otherwise).
    more: Box<[VecDeque<Desc>]>,
    /// The last priority level (0: one FIFO).
    top: u8,
    packets: u64,
    bytes: u64,
    pub stats: QueueStats,
    red: Option<Box<Red>>,
    /// RED-style ECN marking on the instantaneous queue, with the port's random stream.
    ecn_red: Option<Box<(EcnRed, Rng)>>,
    /// A queue that keeps its packets aside from `fifo`, in a buffer of its own: NDP's
    /// trimming queue or pFabric's (one `Option`, the one test on the per-packet path).
    aside: Option<Box<Aside>>,
    /// A packet that finds the queue empty and its link idle may skip it
    /// (`take_fast_paths`; false before it). The departures fixed are the flags below.
    idle_shortcut: bool,
    /// Departures fixed at enqueue: the waiting packets are in `sizes`, not `fifo`.
    committed: bool,
    /// A strict-priority queue whose level-0 packets' departures are fixed at enqueue
    /// while no packet waits in a FIFO (`commit_top_level`).
    commit_top: bool,
    /// A trimming queue whose control headers' departures are fixed at enqueue when no
    /// header waits and the round robin cannot turn to data before them
    /// (`commit_top_level`, `TrimQueue::fixes`).
    commit_headers: bool,
    /// Committed (or level-0 packets fixed): when the first fixed packet starts onto
    /// the wire.
    head_start: SimTime,
    /// Wire bytes of each packet whose departure is fixed and that has not started, in
    /// order.
    sizes: VecDeque<u16>,
    /// The start of the last packet whose departure was fixed as another left
    /// (`fix_certain_next`; 0: none yet): those starting by then took the place of a
    /// `TxDone` (see `advance_to_read`).
    certain_until: SimTime,
}

impl OutQueue {
    pub fn new(cfg: QueueConfig) -> OutQueue {
        let cap = cfg.limit_packets.min(256) as usize;
        let top = cfg.levels().max(1) - 1;
        OutQueue {
            cfg,
            fifo: [VecDeque::with_capacity(cap), VecDeque::new()],
            more: (2..=top).map(|_| VecDeque::new()).collect(),
            top,
            packets: 0,
            bytes: 0,
            stats: QueueStats::default(),
            red: None,
            ecn_red: None,
            aside: cfg
                .pfabric
                .then(|| Box::new(Aside::Pfabric(PfabricQueue::new()))),
            idle_shortcut: false,
            committed: false,
            commit_top: false,
            commit_headers: false,
            head_start: 0,
            sizes: VecDeque::new(),
            certain_until: 0,
        }
    }

    /// Puts RED in front of the drop-tail limit; `packet_time` is the transmission time
    /// of a full-sized packet on the port's link.
    pub fn start_red(&mut self, cfg: RedConfig, packet_time: SimTime, rng: Rng) {
        self.red = Some(Box::new(Red::new(cfg, packet_time, rng)));
    }

    /// Marks ECT packets on the instantaneous queue in bytes (`net::ecn_red`), drawing
    /// from `rng`, the port's own stream: at enqueue on the queue an arrival finds, or,
    /// with `mark_at` = `Dequeue`, on the queue a departing packet leaves behind it (as
    /// the HPCC authors' simulator marks). Marking at enqueue the queue can still commit
    /// departures: marking looks only at the queue an arrival finds.
    pub fn start_ecn_red(&mut self, cfg: EcnRedConfig, rng: Rng) {
        self.ecn_red = Some(Box::new((EcnRed::new(cfg), rng)));
    }

    /// Makes this a trimming queue (`net::trim`), drawing from `rng`, the port's own
    /// stream. Its packets always go through `arrive_trimming` and `dequeue`.
    pub fn start_trim(&mut self, cfg: TrimConfig, rng: Rng) {
        self.aside = Some(Box::new(Aside::Trim(TrimQueue::new(cfg, rng))));
    }

    /// Arrivals do not join a FIFO: they go through `arrive_trimming` (`trims`) or
    /// `arrive_pfabric`.
    #[inline]
    pub fn holds_aside(&self) -> bool {
        self.aside.is_some()
    }

    /// The trimming queue, if this is one.
    fn trim(&self) -> Option<&TrimQueue> {
        match self.aside.as_deref() {
            Some(Aside::Trim(t)) => Some(t),
            Some(Aside::Pfabric(_)) | None => None,
        }
    }

    fn trim_mut(&mut self) -> Option<&mut TrimQueue> {
        match self.aside.as_deref_mut() {
            Some(Aside::Trim(t)) => Some(t),
            Some(Aside::Pfabric(_)) | None => None,
        }
    }

    /// An arrival at a pFabric queue, with its priority and flow: whether it waits, and
    /// which packet is dropped to keep the queue within its limits (occupancy and
    /// counters follow).
    #[inline(never)]
    pub fn arrive_pfabric(&mut self, now: SimTime, s: Slot) -> Admission {
        let limits = (self.cfg.limit_packets, self.cfg.limit_bytes);
        let Some(Aside::Pfabric(q)) = self.aside.as_deref_mut() else {
            panic!("a pFabric queue");
        };
        let a = q.arrive(s, (self.packets, self.bytes), limits);
        self.account(now);
        if !a.arriving.1.waits() {
            self.stats.drops += 1;
            return a;
        }
        match a.evicted {
            Some((x, _)) => {
                self.stats.drops += 1;
                self.bytes -= x.wire as u64;
            }
            None => self.packets += 1,
        }
        self.bytes += s.d.wire as u64;
        self.stats.enqueued += 1;
        self.stats.max_packets = self.stats.max_packets.max(self.packets);
        self.stats.max_bytes = self.stats.max_bytes.max(self.bytes);
        a
    }

    /// This queue trims NDP's data (its arrivals go through `arrive_trimming`).
    #[inline]
    pub fn trims(&self) -> bool {
        self.trim().is_some()
    }

    /// The trimming counters (`None` for other queues).
    pub fn trim_stats(&self) -> Option<TrimStats> {
        self.trim().map(|t| t.stats)
    }

    /// An arrival at a trimming queue: what became of it and of any packet trimmed off
    /// the data queue's tail for it. Occupancy counts both of its queues.
    pub fn arrive_trimming(&mut self, now: SimTime, d: Desc) -> Admission {
        let room = self.has_room(d.wire as u32);
        let fixed = self.sizes.len() as u64;
        let t = self.trim_mut().expect("a trimming queue");
        let a = t.arrive(d, room, fixed);
        let mut packets = self.packets;
        let mut bytes = self.bytes;
        match a.arriving.1 {
            Fate::Queued | Fate::Header => {
                packets += 1;
                bytes += a.arriving.0.wire as u64;
                self.stats.enqueued += 1;
            }
            Fate::Dropped | Fate::Returned => self.stats.drops += 1,
        }
        if let Some((e, fate)) = a.evicted {
            // It waited as a full data packet.
            bytes -= a.evicted_wire as u64;
            match fate {
                Fate::Queued | Fate::Header => bytes += e.wire as u64,
                Fate::Dropped | Fate::Returned => {
                    packets -= 1;
                    self.stats.drops += 1;
                }
            }
        }
        self.account(now);
        self.packets = packets;
        self.bytes = bytes;
        self.stats.max_packets = self.stats.max_packets.max(self.packets);
        self.stats.max_bytes = self.stats.max_bytes.max(self.bytes);
        a
    }

    /// Stops fixing a trimming queue's headers (`commit_top_level`), before the first
    /// packet: for tests that compare runs with and without.
    #[cfg(test)]
    pub(crate) fn hold_headers(&mut self) {
        self.commit_headers = false;
    }

    /// RED's average queue in packets (NaN without RED).
    pub fn red_average(&self) -> f64 {
        self.red.as_ref().map_or(f64::NAN, |r| r.avg)
    }

    #[inline]
    pub fn packets(&self) -> u64 {
        self.packets
    }

    #[inline]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.packets == 0
    }

    #[inline]
    fn above_k(&self) -> bool {
        self.packets >= self.cfg.ecn_k_packets || self.bytes >= self.cfg.ecn_k_bytes
    }

    #[inline]
    fn account(&mut self, now: SimTime) {
        let dt = now - self.stats.last_change;
        if dt > 0 {
            self.stats.area_packets += self.packets as u128 * dt as u128;
            self.stats.area_bytes += self.bytes as u128 * dt as u128;
            if self.cfg.histogram {
                let i = self.packets as usize;
                if i >= self.stats.histogram.len() {
                    self.stats.histogram.resize(i + 1, 0);
                }
                self.stats.histogram[i] += dt;
            }
            self.stats.last_change = now;
        }
    }

    /// Would an arriving ECT packet be marked at enqueue right now?
    #[inline]
    pub fn marks_on_enqueue(&self) -> bool {
        self.cfg.mark_at == MarkAt::Enqueue && self.above_k()
    }

    /// Would a packet leaving now (with the queue as it is after its removal) be marked
    /// by the step threshold? (RED-style marking never marks what leaves an empty
    /// queue, the only place this is asked without `mark_departure`.)
    #[inline]
    pub fn marks_on_dequeue(&self) -> bool {
        self.cfg.mark_at == MarkAt::Dequeue && self.above_k()
    }

    /// Whether to mark the ECT packet just dequeued, on the queue it leaves behind: the
    /// step threshold or the RED-style curve, when this queue marks at dequeue. Counts
    /// the mark.
    #[inline]
    pub fn mark_departure(&mut self) -> bool {
        if self.cfg.mark_at != MarkAt::Dequeue {
            return false;
        }
        let bytes = self.bytes;
        let mark = self.above_k()
            || self
                .ecn_red
                .as_deref_mut()
                .is_some_and(|(m, rng)| m.mark(bytes, rng));
        self.stats.marks += mark as u64;
        mark
    }

    /// The per-packet shortcuts this queue may take, from every setting and feature it
    /// has. The one place that decides them: each field of the configuration and each
    /// optional feature is named here, so a new one does not compile until someone
    /// decides whether it lets a packet skip the queue's own code. A feature that
    /// decides anything as a packet arrives must refuse the idle-link shortcut; one that
    /// decides as a packet leaves (or picks which packet leaves) must fix nothing at
    /// enqueue.
    pub fn fast_paths(&self) -> FastPaths {
        let OutQueue {
            cfg,
            fifo: _,
            more: _,
            top: _,
            packets,
            bytes: _,
            stats: _,
            red,
            // RED-style ECN marking at enqueue reads only the queue an arrival finds (an
            // empty one marks nothing and draws nothing, and a fixed departure keeps what
            // later arrivals find exact); at dequeue it is `mark_at`'s, below.
            ecn_red: _,
            aside,
            idle_shortcut: _,
            committed: _,
            commit_top: _,
            commit_headers: _,
            head_start: _,
            sizes: _,
            certain_until: _,
        } = self;
        let QueueConfig {
            // Drop-tail limits and step marking at enqueue decide on the queue an arrival
            // finds, which a fixed departure keeps exact (`advance`).
            limit_packets: _,
            limit_bytes: _,
            ecn_k_packets: _,
            ecn_k_bytes: _,
            mark_at,
            // Read through `levels()`: the level count alone decides.
            priority: _,
            priority_levels: _,
            // Occupancy is integrated at each fixed start as at each dequeue.
            histogram: _,
            // A pFabric queue is the `Aside::Pfabric` below.
            pfabric: _,
        } = *cfg;
        if *packets != 0 {
            // Decided before the first packet only.
            return FastPaths::NONE;
        }
        // RED updates its average at every arrival, an empty queue's included (its idle
        // decay), so no packet may pass it by.
        let red_sees_arrivals = red.is_some();
        let idle_shortcut = !red_sees_arrivals;
        // Marking at dequeue reads the queue a packet leaves behind, as it leaves.
        let decides_at_departure = match mark_at {
            MarkAt::Enqueue => false,
            MarkAt::Dequeue => true,
        };
        let fixes = match aside.as_deref() {
            // NDP's trimming queue: its control headers whose turn is certain
            // (`TrimQueue::fixes`); data waits for the round robin. It neither marks nor
            // runs RED (the scenario's checks).
            Some(Aside::Trim(_)) => Fixes::Headers,
            // pFabric picks the most urgent packet as the link frees.
            Some(Aside::Pfabric(_)) => Fixes::Nothing,
            None if red_sees_arrivals || decides_at_departure => Fixes::Nothing,
            None if self.cfg.levels() > 1 => Fixes::TopLevel,
            None => Fixes::Every,
        };
        FastPaths {
            idle_shortcut,
            fixes,
        }
    }

    /// Takes the shortcuts `fast_paths` allows, those that fix departures only if
    /// `fix` (the port lets them: see `Sim`'s setup), before the first packet; returns
    /// the departures fixed. Until it is called a queue takes none.
    pub fn take_fast_paths(&mut self, fix: bool) -> Fixes {
        let paths = self.fast_paths();
        self.idle_shortcut = paths.idle_shortcut;
        let fixes = if fix { paths.fixes } else { Fixes::Nothing };
        let cap = self.cfg.limit_packets.min(256) as usize;
        match fixes {
            Fixes::Every => {
                self.committed = true;
                self.fifo[0] = VecDeque::new();
                self.sizes = VecDeque::with_capacity(cap);
            }
            Fixes::TopLevel => {
                self.commit_top = true;
                self.sizes = VecDeque::with_capacity(cap);
            }
            Fixes::Headers => {
                self.commit_headers = true;
                // No more than `header_weight` are fixed at a time (`TrimQueue::fixes`).
                let weight = self.trim().map_or(0, |t| t.cfg.header_weight);
                self.sizes = VecDeque::with_capacity(weight as usize);
            }
            Fixes::Nothing => {}
        }
        fixes
    }

    /// A packet that finds this queue empty and its link idle may go straight onto the
    /// wire without the queue seeing it wait (`fast_paths`).
    #[inline]
    pub fn takes_idle_shortcut(&self) -> bool {
        self.idle_shortcut
    }

    /// Every departure is fixed at enqueue: the waiting packets are in `sizes`.
    #[inline]
    pub fn is_committed(&self) -> bool {
        self.committed
    }

    /// When a packet leaves at a `TxDone`, the packets whose turn comes next whatever
    /// arrives before they start have their departures fixed too (`fix_certain_next`):
    /// a strict-priority queue's waiting level-0 packets.
    #[inline]
    pub fn fixes_certain_next(&self) -> bool {
        self.commit_top
    }

    /// With a packet just gone onto the wire by `dequeue` (and those fixed behind it so
    /// far), the packet whose turn comes next whatever arrives before then, if there is
    /// one: a strict-priority queue's next level-0 packet (a later one joins behind it,
    /// and no level goes before level 0). Its departure is fixed at `start`, when the
    /// link is done with the packets ahead of it; it still counts as waiting until then
    /// (`advance`). Not a packet that carries INT (its stamp reads the queue as it
    /// leaves).
    #[inline]
    pub fn fix_certain_next(&mut self, start: SimTime) -> Option<Desc> {
        debug_assert!(self.fixes_certain_next());
        // A trimming or pFabric queue fixes nothing (`commit_top_level` leaves them out).
        if self.fifo[0].front()?.has_int() {
            return None;
        }
        let d = self.fifo[0].pop_front()?;
        if self.sizes.is_empty() {
            self.head_start = start;
        }
        self.sizes.push_back(d.wire);
        self.certain_until = start;
        Some(d)
    }

    /// Brings the queue up to `now` for a reading taken after the events due at `now`
    /// (a queue sample): as `advance`, except that a packet fixed by `fix_certain_next`
    /// (or a trimming queue's fixed header) that starts at `now` has left, as it did at
    /// its `TxDone` (which runs before a sample at the same time).
    #[inline]
    pub fn advance_to_read(&mut self, now: SimTime, rate: Rate) {
        self.advance(now, rate);
        if self.certain_until != 0
            && now <= self.certain_until
            && self.head_start == now
            && !self.sizes.is_empty()
        {
            self.advance(now + 1, rate);
        }
    }

    /// This queue fixes some departures (committed, its top level, or a trimming queue's
    /// control headers): `advance` brings it up to date.
    #[inline]
    pub fn fixes_departures(&self) -> bool {
        self.committed | self.commit_top | self.commit_headers
    }

    /// Whether packet `d` joining now would have its departure fixed: every packet of a
    /// committed queue; a level-0 packet of a queue that commits its top level, when no
    /// packet waits in a FIFO (`fifo_waiting`: the port's `TxDone` is pending), unless
    /// it carries INT (whose stamp reads the queue as the packet leaves it). (A trimming
    /// queue's headers: `fixes_header`.)
    #[inline]
    pub fn fixes(&self, d: &Desc, fifo_waiting: bool) -> bool {
        self.committed || (self.commit_top && !fifo_waiting && self.fifo_of(d) == 0 && !d.has_int())
    }

    /// Whether this trimming queue can fix the departure of control header `d` joining
    /// now (`TrimQueue::fixes`), if its drop-tail limit admits it (`commit_header` applies
    /// the limit; a header it refuses waits in the header queue, which ignores the
    /// limit). The caller checks that the port's `TxDone`, if pending, can move behind it.
    #[inline]
    pub fn fixes_header(&self, d: &Desc) -> bool {
        let fixed = self.sizes.len() as u64;
        self.commit_headers
            && self.trim().is_some_and(|t| t.fixes(d, fixed))
            && !d.has_int()
            && self.has_room(d.wire as u32)
    }

    /// Fixes the departure of control header `d` (`fixes_header`) at `start`, in place of
    /// the `TxDone` that would have started it: it counts as waiting until then
    /// (`advance`), is gone at that instant for a reading after its events
    /// (`advance_to_read`), and takes its turn of the round robin if data waits.
    #[inline]
    pub fn commit_header(&mut self, now: SimTime, d: &Desc, start: SimTime) {
        // A trimming queue has no RED and marks nothing; `fixes_header` checked the limit.
        self.join(now, d.wire as u32);
        if self.sizes.is_empty() {
            self.head_start = start;
        }
        self.sizes.push_back(d.wire);
        self.certain_until = start;
        self.trim_mut().expect("a trimming queue").fix();
    }

    /// Some packet waits in a FIFO for the port's `TxDone` (not only packets whose
    /// departures are fixed).
    #[inline]
    pub fn holds_unfixed(&self) -> bool {
        self.packets > self.sizes.len() as u64
    }

    /// Admits (marking it CE if the queue is at K and it is ECT) or drops a packet.
    #[inline]
    pub fn enqueue(&mut self, now: SimTime, mut d: Desc, ect: bool) -> Admission {
        if !self.admit::<true>(now, &mut d, ect) {
            return Admission::of(d, Fate::Dropped);
        }
        let c = self.fifo_of(&d);
        self.level_mut(c).push_back(d);
        Admission::of(d, Fate::Queued)
    }

    /// The FIFO of priority level `c`.
    #[inline]
    fn level_mut(&mut self, c: usize) -> &mut VecDeque<Desc> {
        if c < 2 {
            &mut self.fifo[c]
        } else {
            &mut self.more[c - 2]
        }
    }

    /// The FIFOs of every level, highest priority first.
    fn levels(&self) -> impl Iterator<Item = &VecDeque<Desc>> + '_ {
        let n = (self.top as usize + 1).min(2);
        self.fifo[..n].iter().chain(self.more.iter())
    }

    /// Enqueues a packet of a lossless (PFC) class: its switch's ingress accounting
    /// admitted it and holds the sender back, so the queue's own limits do not apply.
    #[inline]
    pub fn enqueue_lossless(&mut self, now: SimTime, mut d: Desc, ect: bool) -> Admission {
        if !self.admit::<false>(now, &mut d, ect) {
            return Admission::of(d, Fate::Dropped);
        }
        let c = self.fifo_of(&d);
        self.level_mut(c).push_back(d);
        Admission::of(d, Fate::Queued)
    }

    /// The FIFO a packet waits in: its priority level with priority queues (capped at the
    /// last level), else the one FIFO.
    #[inline]
    pub fn fifo_of(&self, d: &Desc) -> usize {
        d.priority().min(self.top) as usize
    }

    /// Removes the next packet to serialise whose class is not paused (bit c of `paused`:
    /// class c). With one FIFO a paused class at its head blocks it (head-of-line
    /// blocking); with priority queues the other class may go.
    #[inline]
    pub fn dequeue_unpaused(&mut self, now: SimTime, paused: u8) -> Option<Desc> {
        if paused == 0 {
            return self.dequeue(now);
        }
        // PFC tells two classes apart: level c pauses with class min(c, 1).
        let c = if self.top > 0 {
            let ok = |q: &VecDeque<Desc>, c: usize| !q.is_empty() && paused & (1 << c.min(1)) == 0;
            self.levels().enumerate().position(|(c, q)| ok(q, c))?
        } else {
            let head = self.fifo[0].front()?;
            if paused & (1 << head.priority().min(1)) != 0 {
                return None;
            }
            0
        };
        let d = self.level_mut(c).pop_front()?;
        self.account(now);
        self.packets -= 1;
        self.bytes -= d.wire as u64;
        Some(d)
    }

    /// Whether some waiting packet could start now, given the paused classes.
    pub fn has_unpaused(&self, paused: u8) -> bool {
        if self.top > 0 {
            self.levels()
                .enumerate()
                .any(|(c, q)| !q.is_empty() && paused & (1 << c.min(1)) == 0)
        } else {
            self.fifo[0]
                .front()
                .is_some_and(|d| paused & (1 << d.priority().min(1)) == 0)
        }
    }

    /// Whether the queue holds packets of class `class` (for the deadlock check).
    pub fn holds_class(&self, class: usize) -> bool {
        self.fifo
            .iter()
            .chain(self.more.iter())
            .any(|f| f.iter().any(|d| d.priority().min(1) as usize == class))
    }

    /// A committed queue's enqueue: admits (marking `d` CE if the queue is at K and it is
    /// ECT) a packet that will start onto the wire at `start`, when the link is done with
    /// the packets ahead of it, or drops it.
    #[inline]
    pub fn commit(&mut self, now: SimTime, mut d: Desc, ect: bool, start: SimTime) -> Admission {
        debug_assert!(self.committed || self.commit_top);
        if !self.admit::<true>(now, &mut d, ect) {
            return Admission::of(d, Fate::Dropped);
        }
        if self.sizes.is_empty() {
            self.head_start = start;
        }
        self.sizes.push_back(d.wire);
        Admission::of(d, Fate::Queued)
    }

    /// Brings a committed queue up to `now`: the packets that started onto the wire
    /// before then stop counting, each at its own start time. One starting at `now`
    /// still counts, so an arrival at the instant a packet leaves finds it in the queue,
    /// as when the departure was an event scheduled after the arrival's. `rate` is the
    /// rate of the link the queue feeds: its packets start back to back.
    #[inline(always)]
    pub fn advance(&mut self, now: SimTime, rate: Rate) {
        while self.head_start < now {
            let Some(wire) = self.sizes.pop_front() else {
                return;
            };
            self.account(self.head_start);
            self.packets -= 1;
            self.bytes -= wire as u64;
            self.head_start += rate.serialization(wire as u32);
        }
    }

    /// Of the packets whose departures were fixed, what has not started by `now` (after
    /// `advance(now)`): packets, bytes, and the time from the first one's start until
    /// the last one's end. `busy_until` is when the link is free; the fixed packets are
    /// the last to have started (a packet waiting in a FIFO has not).
    pub fn not_started(&self, busy_until: SimTime) -> (u64, u64, SimTime) {
        if self.sizes.is_empty() {
            (0, 0, 0)
        } else {
            let bytes = self.sizes.iter().map(|&w| w as u64).sum();
            (self.sizes.len() as u64, bytes, busy_until - self.head_start)
        }
    }

    /// Counts in a packet (marking it CE if it is ECT and the queue marks it), or
    /// refuses it (false).
    #[inline]
    fn admit<const LIMITED: bool>(&mut self, now: SimTime, d: &mut Desc, ect: bool) -> bool {
        let wire = d.wire as u32;
        let mut red_mark = false;
        if let Some(red) = self.red.as_deref_mut() {
            if red.on_arrival(now, self.packets) == RedVerdict::Early {
                if ect && red.cfg.ecn {
                    red_mark = true;
                } else {
                    self.stats.drops += 1;
                    self.stats.early_drops += 1;
                    return false;
                }
            }
        }
        if LIMITED
            && (self.packets + 1 > self.cfg.limit_packets
                || self.bytes + wire as u64 > self.cfg.limit_bytes)
        {
            self.stats.drops += 1;
            return false;
        }
        let bytes = self.bytes;
        let mark = ect
            && (red_mark
                || self.marks_on_enqueue()
                || (self.cfg.mark_at == MarkAt::Enqueue
                    && self
                        .ecn_red
                        .as_deref_mut()
                        .is_some_and(|(m, rng)| m.mark(bytes, rng))));
        if mark {
            self.stats.marks += 1;
            d.ecn = super::packet::Ecn::Ce;
        }
        self.join(now, wire);
        true
    }

    /// A packet of `wire` bytes joins: occupancy, its integral and counters.
    #[inline(always)]
    fn join(&mut self, now: SimTime, wire: u32) {
        self.account(now);
        self.packets += 1;
        self.bytes += wire as u64;
        self.stats.enqueued += 1;
        self.stats.max_packets = self.stats.max_packets.max(self.packets);
        self.stats.max_bytes = self.stats.max_bytes.max(self.bytes);
    }

    /// Whether a packet of `wire` bytes would be admitted now.
    #[inline]
    pub fn has_room(&self, wire: u32) -> bool {
        self.packets < self.cfg.limit_packets && self.bytes + wire as u64 <= self.cfg.limit_bytes
    }

    /// Counts a packet that went straight onto an idle link without waiting.
    #[inline]
    pub fn pass_through(&mut self) {
        self.stats.enqueued += 1;
    }

    /// Removes the next packet to serialise: class 0 first.
    #[inline(always)]
    pub fn dequeue(&mut self, now: SimTime) -> Option<Desc> {
        let d = match self.aside.as_deref_mut() {
            None if !self.fifo[0].is_empty() => self.fifo[0].pop_front(),
            None if self.more.is_empty() || !self.fifo[1].is_empty() => self.fifo[1].pop_front(),
            None => self.more.iter_mut().find_map(|f| f.pop_front()),
            Some(Aside::Trim(t)) => t.dequeue(),
            Some(Aside::Pfabric(q)) => q.dequeue(),
        }?;
        self.account(now);
        self.packets -= 1;
        self.bytes -= d.wire as u64;
        if self.packets == 0 {
            if let Some(red) = self.red.as_deref_mut() {
                red.on_empty(now);
            }
        }
        Some(d)
    }

    /// `dequeue` at a port's `TxDone`: the packets whose departures were fixed ahead of
    /// those waiting (a priority queue's level 0, a trimming queue's headers) have all
    /// started by now.
    #[inline(always)]
    pub fn dequeue_after_fixed(&mut self, now: SimTime, rate: Rate) -> Option<Desc> {
        if self.commit_top | self.commit_headers {
            self.advance(now, rate);
        }
        self.dequeue(now)
    }

    /// Counts a mark made at dequeue.
    pub fn count_mark(&mut self) {
        self.stats.marks += 1;
    }

    /// Closes the occupancy integral at the end of the run.
    pub fn finish(&mut self, now: SimTime) {
        self.account(now);
    }

    /// Ids of the packets held in the queue (for conservation checks at the end of a
    /// run); a committed queue holds none, its waiting packets are already in flight.
    pub fn queued_ids(&self) -> impl Iterator<Item = u32> + '_ {
        let (trim, pfabric) = match self.aside.as_deref() {
            Some(Aside::Trim(t)) => (Some(t), None),
            Some(Aside::Pfabric(q)) => (None, Some(q)),
            None => (None, None),
        };
        self.fifo[0]
            .iter()
            .chain(self.fifo[1].iter())
            .chain(self.more.iter().flatten())
            .map(|d| d.pkt)
            .chain(trim.into_iter().flat_map(|t| t.ids()))
            .chain(pfabric.into_iter().flat_map(|q| q.ids()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(id: u32, wire: u16, class: u8) -> Desc {
        Desc {
            pkt: id,
            wire,
            class,
            ..Desc::default()
        }
    }

    fn cfg() -> QueueConfig {
        QueueConfig {
            limit_packets: 3,
            ecn_k_packets: 2,
            ..QueueConfig::default()
        }
    }

    #[test]
    fn drop_tail_in_packets() {
        let mut q = OutQueue::new(cfg());
        for i in 0..3 {
            assert_eq!(q.enqueue(0, d(i, 1500, 0), false).arriving.1, Fate::Queued);
        }
        assert_eq!(q.enqueue(0, d(9, 1500, 0), false).arriving.1, Fate::Dropped);
        assert_eq!(q.stats.drops, 1);
        assert_eq!(q.dequeue(10).map(|x| x.pkt), Some(0));
    }

    #[test]
    fn drop_tail_in_bytes() {
        let c = QueueConfig {
            limit_packets: u64::MAX,
            limit_bytes: 3000,
            ..QueueConfig::default()
        };
        let mut q = OutQueue::new(c);
        assert_eq!(q.enqueue(0, d(1, 1500, 0), false).arriving.1, Fate::Queued);
        assert_eq!(q.enqueue(0, d(2, 1500, 0), false).arriving.1, Fate::Queued);
        assert_eq!(q.enqueue(0, d(3, 64, 0), false).arriving.1, Fate::Dropped);
    }

    #[test]
    fn marks_ect_at_threshold_on_enqueue() {
        let mut q = OutQueue::new(cfg());
        assert!(!q.enqueue(0, d(0, 1500, 0), true).marked());
        assert!(!q.enqueue(0, d(1, 1500, 0), true).marked());
        assert!(q.enqueue(0, d(2, 1500, 0), true).marked());
        assert_eq!(q.stats.marks, 1);
    }

    /// RED-style marking at dequeue looks at the queue a packet leaves behind, not at
    /// the one an arrival finds: with Kmax below two packets, the same arrivals are
    /// marked as they join one queue and as they leave the other.
    #[test]
    fn red_marking_at_dequeue_sees_the_queue_left_behind() {
        let red = EcnRedConfig {
            kmin: 1500,
            kmax: 2999,
            pmax: 0.5,
        };
        let marked = |mark_at: MarkAt| {
            let mut q = OutQueue::new(QueueConfig {
                mark_at,
                ..QueueConfig::default()
            });
            q.start_ecn_red(red, Rng::new(1, 2, 3));
            let mut on_enqueue = vec![];
            for i in 0..4 {
                let a = q.enqueue(0, d(i, 1500, 0), true);
                assert_eq!(a.arriving.1, Fate::Queued, "packet {i} dropped");
                on_enqueue.push(a.marked());
            }
            let on_dequeue: Vec<bool> = (0..4)
                .map(|_| {
                    q.dequeue(0).expect("a packet waits");
                    q.mark_departure()
                })
                .collect();
            (on_enqueue, on_dequeue, q.stats.marks)
        };
        // Arrivals find 0, 1,500, 3,000 and 4,500 bytes; departures leave 4,500, 3,000,
        // 1,500 and 0 behind them.
        assert_eq!(
            marked(MarkAt::Enqueue),
            (vec![false, false, true, true], vec![false; 4], 2)
        );
        assert_eq!(
            marked(MarkAt::Dequeue),
            (vec![false; 4], vec![true, true, false, false], 2)
        );
    }

    #[test]
    fn non_ect_is_never_marked() {
        let mut q = OutQueue::new(cfg());
        q.enqueue(0, d(0, 1500, 0), false);
        q.enqueue(0, d(1, 1500, 0), false);
        assert!(!q.enqueue(0, d(2, 1500, 0), false).marked());
    }

    #[test]
    fn strict_priority_serves_class_zero_first() {
        let mut q = OutQueue::new(QueueConfig {
            priority: true,
            ..QueueConfig::default()
        });
        q.enqueue(0, d(10, 1500, 1), false);
        q.enqueue(0, d(11, 1500, 1), false);
        q.enqueue(0, d(20, 1500, 0), false);
        assert_eq!(q.dequeue(1).map(|x| x.pkt), Some(20));
        assert_eq!(q.dequeue(2).map(|x| x.pkt), Some(10));
        assert_eq!(q.dequeue(3).map(|x| x.pkt), Some(11));
        assert!(q.dequeue(4).is_none());
    }

    #[test]
    fn eight_levels_serve_the_lowest_level_first_and_fifo_within_one() {
        let mut q = OutQueue::new(QueueConfig {
            priority_levels: 8,
            ..QueueConfig::default()
        });
        // (id, level): arrivals in an order that no level-blind FIFO would serve as
        // expected; level 9 is beyond the last level and waits in level 7.
        for (id, level) in [(1, 7), (2, 3), (3, 9), (4, 0), (5, 3), (6, 5), (7, 0)] {
            q.enqueue(0, d(id, 1500, level), false);
        }
        assert_eq!(q.queued_ids().count(), 7);
        let order: Vec<u32> = std::iter::from_fn(|| q.dequeue(1).map(|x| x.pkt)).collect();
        assert_eq!(order, vec![4, 7, 2, 5, 6, 1, 3]);
        assert!(q.is_empty());
    }

    #[test]
    fn pinned_and_int_bits_do_not_change_the_level() {
        use crate::net::packet::{INT, PINNED};
        let mut q = OutQueue::new(QueueConfig {
            priority_levels: 4,
            ..QueueConfig::default()
        });
        q.enqueue(0, d(1, 1500, 2 | PINNED), false);
        q.enqueue(0, d(2, 1500, 1 | INT), false);
        assert_eq!(q.dequeue(1).map(|x| x.pkt), Some(2));
        assert_eq!(q.dequeue(1).map(|x| x.pkt), Some(1));
    }

    #[test]
    fn two_levels_are_the_priority_flag() {
        let two = QueueConfig {
            priority_levels: 2,
            ..QueueConfig::default()
        };
        let flag = QueueConfig {
            priority: true,
            ..QueueConfig::default()
        };
        assert_eq!((two.levels(), flag.levels()), (2, 2));
        assert_eq!(QueueConfig::default().levels(), 1);
        let (mut a, mut b) = (OutQueue::new(two), OutQueue::new(flag));
        for (id, class) in [(1, 1), (2, 5), (3, 0), (4, 1)] {
            a.enqueue(0, d(id, 1500, class), false);
            b.enqueue(0, d(id, 1500, class), false);
        }
        for _ in 0..4 {
            assert_eq!(a.dequeue(1), b.dequeue(1));
        }
        assert_ne!(OutQueue::new(two).take_fast_paths(true), Fixes::Every);
    }

    #[test]
    fn paused_class_one_holds_every_level_above_zero() {
        let mut q = OutQueue::new(QueueConfig {
            priority_levels: 4,
            ..QueueConfig::default()
        });
        q.enqueue(0, d(1, 1500, 3), false);
        q.enqueue(0, d(2, 1500, 2), false);
        assert!(!q.has_unpaused(0b10));
        assert!(q.dequeue_unpaused(1, 0b10).is_none());
        assert!(q.holds_class(1) && !q.holds_class(0));
        q.enqueue(0, d(3, 1500, 0), false);
        assert_eq!(q.dequeue_unpaused(1, 0b10).map(|x| x.pkt), Some(3));
        assert_eq!(q.dequeue_unpaused(1, 0b01).map(|x| x.pkt), Some(2));
    }

    /// A committed queue sees the same occupancy, drops and marks as one that holds its
    /// packets until a FIFO server takes them, with a departure due at an arrival's time
    /// taken after the arrival; and its packets start at the times that server gives.
    #[test]
    fn committed_queue_matches_a_holding_queue() {
        let cfg = QueueConfig {
            limit_packets: 8,
            limit_bytes: 9_000,
            ecn_k_packets: 3,
            histogram: true,
            ..QueueConfig::default()
        };
        // 8 ps per byte.
        let rate = Rate::from_gbps(1000.0);
        let ser = |wire: u16| rate.serialization(wire as u32);
        let mut rng = Rng::new(7, 1, 0);
        let (mut held, mut committed) = (OutQueue::new(cfg), OutQueue::new(cfg));
        assert_eq!(committed.take_fast_paths(true), Fixes::Every);
        // The holding queue's server: busy until `held_busy`, its next departure then.
        let (mut held_busy, mut committed_busy, mut now) = (0u64, 0u64, 0u64);
        for i in 0..20_000u32 {
            // Arrivals often land exactly on a departure, as on equal-rate links.
            now += match rng.below(3) {
                0 => 0,
                1 => ser(1500),
                _ => rng.below(20_000),
            };
            let d0 = d(i, [64, 1000, 1500][rng.below(3) as usize], 0);
            let ect = rng.below(2) == 0;

            while held_busy < now && !held.is_empty() {
                let t = held_busy;
                let x = held.dequeue(t).expect("not empty");
                held_busy = t + ser(x.wire);
            }
            let held_start = if held_busy <= now && held.is_empty() {
                held.pass_through();
                held_busy = now + ser(d0.wire);
                Some((now, d0.ecn))
            } else {
                match held.enqueue(now, d0, ect).arriving.1 {
                    Fate::Dropped => None,
                    _ => Some((u64::MAX, d0.ecn)),
                }
            };

            committed.advance(now, rate);
            let mut d1 = d0;
            let committed_start = if committed_busy <= now {
                committed.pass_through();
                Some(now)
            } else if let (x, Fate::Queued) =
                committed.commit(now, d1, ect, committed_busy).arriving
            {
                d1 = x;
                Some(committed_busy)
            } else {
                None
            };
            if let Some(start) = committed_start {
                committed_busy = start + ser(d1.wire);
            }
            assert_eq!(
                held_start.is_some(),
                committed_start.is_some(),
                "packet {i}"
            );
            assert_eq!(held.packets(), committed.packets(), "packet {i}");
            assert_eq!(held.bytes(), committed.bytes(), "packet {i}");
        }
        // The holding server's last departure is the committed link's free time.
        while !held.is_empty() {
            let t = held_busy;
            let x = held.dequeue(t).expect("not empty");
            held_busy = t + ser(x.wire);
        }
        assert_eq!(held_busy, committed_busy);
        committed.advance(held_busy, rate);
        held.finish(held_busy);
        committed.finish(held_busy);
        let (a, b) = (&held.stats, &committed.stats);
        assert!(a.drops > 100 && a.marks > 100, "{a:?}");
        assert_eq!(
            (a.enqueued, a.drops, a.marks, a.max_packets, a.max_bytes),
            (b.enqueued, b.drops, b.marks, b.max_packets, b.max_bytes)
        );
        assert_eq!(
            (a.area_packets, a.area_bytes),
            (b.area_packets, b.area_bytes)
        );
        assert_eq!(a.histogram, b.histogram);
    }

    /// A strict-priority queue that fixes its level-0 departures (as they join, and those
    /// waiting as a packet leaves), served by a port that takes the other packets at
    /// `TxDone` (as `sim::forward` does), starts every packet
    /// when a queue that holds all its packets until the link takes them would, and
    /// sees the same occupancy and counters.
    #[test]
    fn fixed_top_level_matches_a_holding_priority_queue() {
        let cfg = QueueConfig {
            limit_packets: 12,
            priority_levels: 4,
            histogram: true,
            ..QueueConfig::default()
        };
        let rate = Rate::from_gbps(1000.0);
        let ser = |wire: u16| rate.serialization(wire as u32);
        let mut rng = Rng::new(7, 2, 0);
        let (mut held, mut fixed) = (OutQueue::new(cfg), OutQueue::new(cfg));
        assert_eq!(fixed.take_fast_paths(true), Fixes::TopLevel);
        let n = 20_000usize;
        let (mut held_start, mut fixed_start) = (vec![None; n], vec![None; n]);
        // The holding queue's link is busy until `held_busy`; the other port's link
        // until `busy`, with a `TxDone` due then if `pending`. Departures due at an
        // arrival's time come after it.
        let (mut held_busy, mut busy, mut pending, mut now) = (0u64, 0u64, false, 0u64);
        let mut fixed_level_zero = 0;
        // Level-0 packets whose departures were fixed as another packet left.
        let mut certain = 0;
        for i in 0..n {
            now += match rng.below(3) {
                0 => 0,
                1 => ser(1500),
                _ => rng.below(16_000),
            };
            let x = d(
                i as u32,
                [64, 1000, 1500][rng.below(3) as usize],
                rng.below(4) as u8,
            );

            while held_busy < now && !held.is_empty() {
                let y = held.dequeue(held_busy).expect("not empty");
                held_start[y.pkt as usize] = Some(held_busy);
                held_busy += ser(y.wire);
            }
            if held_busy <= now && held.is_empty() {
                held.pass_through();
                held_start[i] = Some(now);
                held_busy = now + ser(x.wire);
            } else {
                held.enqueue(now, x, false);
            }

            while pending && busy < now {
                let y = fixed.dequeue_after_fixed(busy, rate).expect("waiting");
                fixed_start[y.pkt as usize] = Some(busy);
                busy += ser(y.wire);
                while let Some(z) = fixed.fix_certain_next(busy) {
                    fixed_start[z.pkt as usize] = Some(busy);
                    busy += ser(z.wire);
                    certain += 1;
                }
                pending = fixed.holds_unfixed();
            }
            fixed.advance(now, rate);
            if !pending && busy <= now && fixed.is_empty() {
                fixed.pass_through();
                fixed_start[i] = Some(now);
                busy = now + ser(x.wire);
            } else if fixed.fixes(&x, pending) {
                if let Fate::Queued = fixed.commit(now, x, false, busy).arriving.1 {
                    fixed_start[i] = Some(busy);
                    busy += ser(x.wire);
                    fixed_level_zero += 1;
                }
            } else if let Fate::Queued = fixed.enqueue(now, x, false).arriving.1 {
                pending = true;
            }
            assert_eq!(held.packets(), fixed.packets(), "packet {i}");
            assert_eq!(held.bytes(), fixed.bytes(), "packet {i}");
        }
        while !held.is_empty() {
            let y = held.dequeue(held_busy).expect("not empty");
            held_start[y.pkt as usize] = Some(held_busy);
            held_busy += ser(y.wire);
        }
        while pending {
            let y = fixed.dequeue_after_fixed(busy, rate).expect("waiting");
            fixed_start[y.pkt as usize] = Some(busy);
            busy += ser(y.wire);
            while let Some(z) = fixed.fix_certain_next(busy) {
                fixed_start[z.pkt as usize] = Some(busy);
                busy += ser(z.wire);
                certain += 1;
            }
            pending = fixed.holds_unfixed();
        }
        fixed.advance(busy, rate);
        assert!(
            certain > 100,
            "level-0 packets fixed as another left: {certain}"
        );
        assert_eq!(held_busy, busy);
        assert_eq!(held_start, fixed_start);
        held.finish(busy);
        fixed.finish(busy);
        let (a, b) = (&held.stats, &fixed.stats);
        assert!(
            a.drops > 100 && fixed_level_zero > 100,
            "{a:?} {fixed_level_zero}"
        );
        assert_eq!(
            (a.enqueued, a.drops, a.max_packets, a.max_bytes),
            (b.enqueued, b.drops, b.max_packets, b.max_bytes)
        );
        assert_eq!(
            (a.area_packets, a.area_bytes),
            (b.area_packets, b.area_bytes)
        );
        assert_eq!(a.histogram, b.histogram);
    }

    #[test]
    fn not_started_counts_what_waits_at_the_end() {
        // 1000 bytes take 100 ps: the packets start at 100 and 200, the link is free at 300.
        let rate = Rate::from_gbps(80_000.0);
        let mut q = OutQueue::new(cfg());
        assert_eq!(q.take_fast_paths(true), Fixes::Every);
        let x = d(0, 1000, 0);
        assert_eq!(q.commit(0, x, false, 100).arriving.1, Fate::Queued);
        assert_eq!(q.commit(0, x, false, 200).arriving.1, Fate::Queued);
        q.advance(150, rate);
        assert_eq!(q.not_started(300), (1, 1000, 100));
        // At 200 the second packet still counts as waiting; just after, it has started.
        q.advance(200, rate);
        assert_eq!(q.not_started(300), (1, 1000, 100));
        q.advance(201, rate);
        assert_eq!(q.not_started(300), (0, 0, 0));
        assert_eq!(q.queued_ids().count(), 0);
    }

    #[test]
    fn only_a_plain_fifo_commits_departures() {
        let plain = OutQueue::new(cfg());
        let dequeue_marking = QueueConfig {
            mark_at: MarkAt::Dequeue,
            ..cfg()
        };
        let priority = QueueConfig {
            priority: true,
            ..cfg()
        };
        let levels = QueueConfig {
            priority_levels: 8,
            ..cfg()
        };
        let pfabric = QueueConfig {
            pfabric: true,
            ..cfg()
        };
        // Until the decision is taken, a queue takes no shortcut.
        assert!(!plain.is_committed());
        assert!(!plain.takes_idle_shortcut());
        let decided = |c: QueueConfig, start: &dyn Fn(&mut OutQueue)| {
            let mut q = OutQueue::new(c);
            start(&mut q);
            let fixes = q.take_fast_paths(true);
            (fixes, q.takes_idle_shortcut())
        };
        let none = |_: &mut OutQueue| {};
        let red = |q: &mut OutQueue| {
            let red_cfg = RedConfig {
                min_th: 5.0,
                max_th: 15.0,
                max_p: 0.1,
                weight: 0.002,
                gentle: true,
                ecn: false,
            };
            q.start_red(red_cfg, 1_200_000, Rng::new(1, 2, 3));
        };
        let ecn_red = |q: &mut OutQueue| {
            let c = EcnRedConfig {
                kmin: 1500,
                kmax: 3000,
                pmax: 0.5,
            };
            q.start_ecn_red(c, Rng::new(1, 2, 3));
        };
        let trim = |q: &mut OutQueue| {
            q.start_trim(crate::net::trim::TrimConfig::default(), Rng::new(1, 2, 3));
        };
        assert_eq!(decided(cfg(), &none), (Fixes::Every, true));
        assert_eq!(decided(cfg(), &ecn_red), (Fixes::Every, true));
        assert_eq!(decided(dequeue_marking, &none), (Fixes::Nothing, true));
        assert_eq!(decided(dequeue_marking, &ecn_red), (Fixes::Nothing, true));
        assert_eq!(decided(priority, &none), (Fixes::TopLevel, true));
        assert_eq!(decided(levels, &none), (Fixes::TopLevel, true));
        assert_eq!(decided(levels, &red), (Fixes::Nothing, false));
        assert_eq!(decided(cfg(), &red), (Fixes::Nothing, false));
        assert_eq!(decided(cfg(), &trim), (Fixes::Headers, true));
        assert_eq!(decided(pfabric, &none), (Fixes::Nothing, true));
        // A port that fixes nothing keeps the queue's idle shortcut.
        let mut held = OutQueue::new(cfg());
        assert_eq!(held.take_fast_paths(false), Fixes::Nothing);
        assert!(!held.is_committed() && held.takes_idle_shortcut());
    }

    #[test]
    fn time_weighted_mean_occupancy() {
        let mut q = OutQueue::new(QueueConfig {
            histogram: true,
            ..cfg()
        });
        q.enqueue(0, d(0, 1000, 0), false); // 1 packet for 10 ps
        q.enqueue(10, d(1, 1000, 0), false); // 2 packets for 10 ps
        q.dequeue(20);
        q.dequeue(30);
        q.finish(40);
        assert_eq!(q.stats.area_packets, 10 + 20 + 10);
        assert_eq!(q.stats.histogram, vec![10, 20, 10]);
    }
}
