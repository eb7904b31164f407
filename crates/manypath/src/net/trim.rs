//! NDP's trimming switch queue (Handley et al., SIGCOMM 2017, §3.1), as a sans-IO state
//! machine: a data queue and a high-priority header queue. A data packet of an NDP flow
//! that arrives when the data queue already holds `threshold` packets is not dropped but
//! cut to its header, and the header joins the header queue, which also carries NDP's
//! control packets (ACK, NACK, PULL). To break up phase effects, half the time the
//! packet trimmed is the one at the tail of the data queue instead of the arrival, which
//! then takes its place (htsim's `CompositeQueue` draws this with probability 0.5). The
//! link serves the two queues by weighted round robin, `header_weight` headers per data
//! packet while both wait, so a flood of headers cannot starve data (the paper's
//! argument against congestion collapse). A header that finds the header queue full is
//! dropped or, with `return_to_sender`, sent back to its source (a trimmed data header
//! only, once).
//!
//! Packets of other transports use the data queue with its drop-tail limit and are never
//! trimmed. Which packets are NDP's is the `NDP` bit of their class; a header is a
//! packet of `header_wire` bytes on the wire.
//!
//! A control header that arrives while no header waits has a certain departure: it goes
//! at the link's next turn, whatever arrives meanwhile, as long as the round robin
//! cannot turn to data before it (`fixes`). Its queue then fixes it at once instead of
//! holding it for a `TxDone` (`OutQueue::commit_header`): most of NDP's headers (ACKs,
//! NACKs, PULLs) meet links busy with data. Such a header still counts in the header
//! queue until it starts, and takes its turn of the round robin's run: at once if data
//! waits (`fix`), or when data comes to wait behind it (`arrive`'s `fixed`).

pub use super::admission::{Admission, Fate};
use super::packet::{Desc, NDP};
use crate::engine::rng::Rng;
use std::collections::VecDeque;

/// The trimming threshold: eight packets of data queue (the paper's switches, §3.1).
pub const DEFAULT_THRESHOLD_PACKETS: u64 = 8;
/// Headers served per data packet while both queues wait. The NDP paper serves the
/// header queue by weighted round robin with the data queue; its public simulator leaves
/// the weights at a strict preference for headers. 10 headers per data packet keeps
/// data moving under a header flood (in bytes, a 64-byte header is 1/140 of a 9000-byte
/// packet, so headers still get almost all the link they want).
pub const DEFAULT_HEADER_WEIGHT: u32 = 10;
/// The header queue's limit in packets: htsim's `CompositeQueue` lets headers fill twice
/// the data queue's bytes; with eight 9000-byte packets that is 144,000 bytes of
/// 64-byte headers, 2250 headers.
pub const DEFAULT_HEADER_QUEUE_PACKETS: u64 = 2250;
/// NDP's header on the wire (the paper's 64-byte trimmed packets).
pub const HEADER_WIRE: u16 = 64;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrimConfig {
    /// Data packets the data queue holds before NDP data is trimmed.
    pub threshold_packets: u64,
    /// Headers the header queue holds; one more is dropped (or returned).
    pub header_queue_packets: u64,
    /// Headers served per data packet while both queues wait.
    pub header_weight: u32,
    /// A trimmed header that finds the header queue full goes back to its sender.
    pub return_to_sender: bool,
}

impl Default for TrimConfig {
    fn default() -> Self {
        TrimConfig {
            threshold_packets: DEFAULT_THRESHOLD_PACKETS,
            header_queue_packets: DEFAULT_HEADER_QUEUE_PACKETS,
            header_weight: DEFAULT_HEADER_WEIGHT,
            return_to_sender: false,
        }
    }
}

/// Counters of one trimming queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TrimStats {
    /// Data packets cut to their header.
    pub trimmed: u64,
    /// Headers (trimmed or control) dropped at a full header queue.
    pub header_drops: u64,
    /// Trimmed headers sent back to their source.
    pub returned: u64,
    /// Control headers whose departures were fixed as they arrived (`fixes`): how the
    /// run was taken, not what happened in it, so no column of the queue table.
    pub fixed: u64,
}

/// A trimming queue: the data and header FIFOs, the round robin's state and the port's
/// random stream (for the choice between the arrival and the tail).
pub struct TrimQueue {
    pub cfg: TrimConfig,
    data: VecDeque<Desc>,
    headers: VecDeque<Desc>,
    /// Headers served since the last data packet while data waited.
    run: u32,
    rng: Rng,
    pub stats: TrimStats,
}

/// An NDP packet that still carries its payload.
#[inline]
fn is_ndp_data(d: &Desc) -> bool {
    d.class & NDP != 0 && d.wire > HEADER_WIRE
}

impl TrimQueue {
    pub fn new(cfg: TrimConfig, rng: Rng) -> TrimQueue {
        TrimQueue {
            cfg,
            data: VecDeque::with_capacity(cfg.threshold_packets as usize + 1),
            headers: VecDeque::new(),
            run: 0,
            rng,
            stats: TrimStats::default(),
        }
    }

    pub fn data_len(&self) -> usize {
        self.data.len()
    }

    pub fn header_len(&self) -> usize {
        self.headers.len()
    }

    /// Puts a header in the header queue if it has room (`fixed`: headers fixed ahead of
    /// it that have not started); else drops or returns it.
    fn queue_header(&mut self, d: Desc, trimmed: bool, fixed: u64) -> (Desc, Fate) {
        if self.headers.len() as u64 + fixed < self.cfg.header_queue_packets {
            self.headers.push_back(d);
            (d, Fate::Header)
        } else if trimmed && self.cfg.return_to_sender {
            self.stats.returned += 1;
            (d, Fate::Returned)
        } else {
            self.stats.header_drops += 1;
            (d, Fate::Dropped)
        }
    }

    fn trim(&mut self, mut d: Desc, fixed: u64) -> (Desc, Fate) {
        d.wire = HEADER_WIRE;
        self.stats.trimmed += 1;
        self.queue_header(d, true, fixed)
    }

    /// Whether control header `d`, arriving while no header waits, has a certain
    /// departure behind the `fixed` headers whose departures are fixed and that have not
    /// started: it has room in the header queue, and the round robin serves it before
    /// any data, at the next turn of the link (each header it serves while data waits
    /// adds one to `run`; at `header_weight` data goes next). With data waiting, `run`
    /// already counts the fixed headers; without, if data came to wait now, the round
    /// robin would still serve all of them and `d` first.
    #[inline]
    pub fn fixes(&self, d: &Desc, fixed: u64) -> bool {
        let turns = if self.data.is_empty() { fixed } else { 0 };
        d.class & NDP != 0
            && d.wire <= HEADER_WIRE
            && self.headers.is_empty()
            && fixed < self.cfg.header_queue_packets
            && self.run as u64 + turns < self.cfg.header_weight as u64
    }

    /// A header `fixes` allowed has its departure fixed: served while data waits, it
    /// takes its turn of the run.
    pub fn fix(&mut self) {
        self.stats.fixed += 1;
        if !self.data.is_empty() {
            self.run += 1;
        }
    }

    /// Joins `d` to the data queue; if it was empty, `d` waits while the `fixed`
    /// headers are served, each a turn of the round robin's run.
    fn queue_data(&mut self, d: Desc, fixed: u64) -> (Desc, Fate) {
        if self.data.is_empty() {
            self.run += fixed as u32;
        }
        self.data.push_back(d);
        (d, Fate::Queued)
    }

    /// An arrival. `room` says whether the data queue's own drop-tail limit (packets and
    /// bytes, checked by the caller) admits a non-NDP packet. `fixed`: the headers whose
    /// departures were fixed (`fixes`) that have not started (at the arrival's instant,
    /// one that starts now has not: the arrival comes first); they are in the header
    /// queue for its limit and for the round robin.
    pub fn arrive(&mut self, d: Desc, room: bool, fixed: u64) -> Admission {
        let arriving = if d.class & NDP != 0 && d.wire <= HEADER_WIRE {
            self.queue_header(d, false, fixed)
        } else if !is_ndp_data(&d) {
            if room {
                self.queue_data(d, fixed)
            } else {
                (d, Fate::Dropped)
            }
        } else if (self.data.len() as u64) < self.cfg.threshold_packets {
            self.queue_data(d, fixed)
        } else if self.data.back().is_some_and(is_ndp_data) && self.rng.below(2) == 0 {
            // Trim the tail instead, and queue the arrival in its place.
            let tail = self.data.pop_back().expect("checked");
            let evicted = self.trim(tail, fixed);
            self.data.push_back(d);
            return Admission::evicting(d, evicted, tail.wire);
        } else {
            self.trim(d, fixed)
        };
        Admission::of(arriving.0, arriving.1)
    }

    /// The next packet onto the wire: weighted round robin, `header_weight` headers per
    /// data packet while both queues wait.
    pub fn dequeue(&mut self) -> Option<Desc> {
        let data_turn = self.headers.is_empty()
            || (!self.data.is_empty() && self.run >= self.cfg.header_weight);
        if data_turn {
            self.run = 0;
            self.data.pop_front()
        } else {
            if !self.data.is_empty() {
                self.run += 1;
            }
            self.headers.pop_front()
        }
    }

    /// Every packet held (for conservation checks).
    pub fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.data.iter().chain(self.headers.iter()).map(|d| d.pkt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(id: u32) -> Desc {
        Desc {
            pkt: id,
            wire: 9000,
            class: NDP,
            ..Desc::default()
        }
    }

    fn control(id: u32) -> Desc {
        Desc {
            pkt: id,
            wire: HEADER_WIRE,
            class: NDP,
            ..Desc::default()
        }
    }

    fn tcp(id: u32) -> Desc {
        Desc {
            pkt: id,
            wire: 1500,
            ..Desc::default()
        }
    }

    fn queue(cfg: TrimConfig) -> TrimQueue {
        TrimQueue::new(cfg, Rng::new(1, 7, 0))
    }

    #[test]
    fn below_the_threshold_data_queues_whole() {
        let mut q = queue(TrimConfig::default());
        for i in 0..8 {
            let a = q.arrive(data(i), true, 0);
            assert_eq!(a.arriving, (data(i), Fate::Queued));
            assert_eq!(a.evicted, None);
        }
        assert_eq!((q.data_len(), q.header_len(), q.stats.trimmed), (8, 0, 0));
    }

    /// At the threshold every NDP arrival trims one packet, the arrival or the tail,
    /// each about half the time; the data queue never grows past the threshold.
    #[test]
    fn at_the_threshold_the_arrival_or_the_tail_is_trimmed() {
        let mut q = queue(TrimConfig::default());
        for i in 0..8 {
            q.arrive(data(i), true, 0);
        }
        let (mut tails, n) = (0, 2000);
        for i in 8..8 + n {
            let a = q.arrive(data(i), true, 0);
            match a.evicted {
                Some((d, Fate::Header)) => {
                    tails += 1;
                    assert_eq!(d.wire, HEADER_WIRE);
                    assert_eq!(a.arriving, (data(i), Fate::Queued));
                }
                None => {
                    assert_eq!(a.arriving.1, Fate::Header);
                    assert_eq!(a.arriving.0.wire, HEADER_WIRE);
                }
                Some(other) => panic!("{other:?}"),
            }
            assert_eq!(q.data_len(), 8);
        }
        assert_eq!(q.stats.trimmed, n as u64);
        assert!((800..1200).contains(&tails), "tails trimmed: {tails}");
    }

    /// Headers are dropped only once the header queue holds its limit.
    #[test]
    fn headers_drop_only_at_the_header_queue_limit() {
        let cfg = TrimConfig {
            header_queue_packets: 5,
            ..TrimConfig::default()
        };
        let mut q = queue(cfg);
        for i in 0..5 {
            assert_eq!(q.arrive(control(i), true, 0).arriving.1, Fate::Header);
        }
        assert_eq!(q.stats.header_drops, 0);
        assert_eq!(q.arrive(control(5), true, 0).arriving.1, Fate::Dropped);
        assert_eq!(q.stats.header_drops, 1);
        // One served, one more fits.
        q.dequeue();
        assert_eq!(q.arrive(control(6), true, 0).arriving.1, Fate::Header);
    }

    #[test]
    fn a_full_header_queue_returns_trimmed_headers_to_their_sender() {
        let cfg = TrimConfig {
            threshold_packets: 1,
            header_queue_packets: 1,
            return_to_sender: true,
            ..TrimConfig::default()
        };
        let mut q = queue(cfg);
        q.arrive(data(0), true, 0);
        q.arrive(control(1), true, 0);
        // Whichever is trimmed finds the header queue full and goes back.
        let a = q.arrive(data(2), true, 0);
        let trimmed = a.evicted.unwrap_or(a.arriving);
        assert_eq!(trimmed.1, Fate::Returned);
        assert_eq!(trimmed.0.wire, HEADER_WIRE);
        assert_eq!(q.stats.returned, 1);
        // A control packet is dropped, never returned.
        assert_eq!(q.arrive(control(3), true, 0).arriving.1, Fate::Dropped);
        assert_eq!(q.stats.header_drops, 1);
    }

    #[test]
    fn other_transports_are_never_trimmed() {
        let mut q = queue(TrimConfig {
            threshold_packets: 2,
            ..TrimConfig::default()
        });
        for i in 0..4 {
            assert_eq!(q.arrive(tcp(i), true, 0).arriving, (tcp(i), Fate::Queued));
        }
        assert_eq!(q.arrive(tcp(9), false, 0).arriving.1, Fate::Dropped);
        // NDP data behind non-NDP data at the threshold: the tail is not NDP's, so the
        // arrival is trimmed.
        let a = q.arrive(data(10), true, 0);
        assert_eq!((a.arriving.1, a.evicted), (Fate::Header, None));
        assert_eq!(q.stats.trimmed, 1);
    }

    /// A control header is fixed only with no header waiting, room in the header queue
    /// and the round robin's turn certain; never data.
    #[test]
    fn a_control_header_is_fixed_only_when_its_turn_is_certain() {
        let mut q = queue(TrimConfig {
            header_weight: 2,
            header_queue_packets: 3,
            ..TrimConfig::default()
        });
        assert!(q.fixes(&control(1), 0));
        assert!(!q.fixes(&data(2), 0));
        assert!(!q.fixes(&tcp(3), 0));
        // With nothing waiting, no more than `header_weight` at a time: data coming
        // now would wait while each of them took a turn of the run.
        assert!(q.fixes(&control(1), 1));
        assert!(!q.fixes(&control(1), 2));
        // The header queue's limit counts the fixed headers.
        let mut small = queue(TrimConfig {
            header_queue_packets: 2,
            ..TrimConfig::default()
        });
        assert!(!small.fixes(&control(1), 2));
        assert_eq!(small.arrive(control(1), true, 2).arriving.1, Fate::Dropped);
        // A header waiting: the next one joins behind it.
        q.arrive(control(4), true, 0);
        assert!(!q.fixes(&control(5), 0));
    }

    /// Fixed headers take their turns of the round robin as held ones would: the order
    /// is the one of a queue that holds every header (in the comments).
    #[test]
    fn fixed_headers_take_their_turns_of_the_round_robin() {
        let cfg = TrimConfig {
            header_weight: 2,
            ..TrimConfig::default()
        };
        // Two headers fixed while nothing waits, then data joins before they start,
        // then a header: held, 7 and 8 would go (run 1, 2), then the data, then 9.
        let mut q = queue(cfg);
        for fixed in 0..2 {
            assert!(q.fixes(&control(7 + fixed as u32), fixed));
            q.fix();
        }
        q.arrive(data(1), true, 2);
        assert!(!q.fixes(&control(9), 2));
        q.arrive(control(9), true, 2);
        let order: Vec<u32> = std::iter::from_fn(|| q.dequeue()).map(|d| d.pkt).collect();
        assert_eq!(order, [1, 9]);
        // Data waiting, then two headers fixed ahead of it and a third held: held, 5
        // and 6 would go, then the data, then 7.
        let mut q = queue(cfg);
        q.arrive(data(1), true, 0);
        for fixed in 0..2 {
            assert!(q.fixes(&control(5 + fixed as u32), fixed));
            q.fix();
        }
        assert!(!q.fixes(&control(7), 2));
        q.arrive(control(7), true, 2);
        let order: Vec<u32> = std::iter::from_fn(|| q.dequeue()).map(|d| d.pkt).collect();
        assert_eq!(order, [1, 7]);
        assert_eq!(q.stats.fixed, 2);
    }

    /// While both queues wait, the link serves `header_weight` headers per data packet.
    #[test]
    fn weighted_round_robin_between_headers_and_data() {
        let mut q = queue(TrimConfig {
            header_weight: 3,
            threshold_packets: 100,
            ..TrimConfig::default()
        });
        for i in 0..4 {
            q.arrive(data(i), true, 0);
        }
        for i in 100..110 {
            q.arrive(control(i), true, 0);
        }
        let order: Vec<bool> = std::iter::from_fn(|| q.dequeue())
            .map(|d| d.wire > HEADER_WIRE)
            .collect();
        let expect = [
            false, false, false, true, false, false, false, true, false, false, false, true, false,
            true,
        ];
        assert_eq!(order, expect);
    }
}
