//! Output queues: drop-tail in packets or bytes, ECN step marking on the instantaneous
//! queue at a threshold K (at enqueue, or at dequeue), RED (`net::red`) as an option, and
//! strict priority between two classes. One struct with plain settings rather than a boxed discipline: the checks are
//! a few compares on the per-packet path.
//!
//! Occupancy counts the packets waiting, not the one being serialised.

use super::packet::Desc;
use super::red::{Red, RedConfig, RedVerdict};
use crate::engine::rng::Rng;
use crate::time::SimTime;
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
    /// Keep a time-weighted histogram of occupancy in packets.
    pub histogram: bool,
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
            histogram: false,
        }
    }
}

impl QueueConfig {
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

pub enum Admit {
    Dropped,
    Queued { mark: bool },
}

pub struct OutQueue {
    pub cfg: QueueConfig,
    fifo: [VecDeque<Desc>; 2],
    packets: u64,
    bytes: u64,
    pub stats: QueueStats,
    red: Option<Box<Red>>,
}

impl OutQueue {
    pub fn new(cfg: QueueConfig) -> OutQueue {
        let cap = cfg.limit_packets.min(256) as usize;
        OutQueue {
            cfg,
            fifo: [VecDeque::with_capacity(cap), VecDeque::new()],
            packets: 0,
            bytes: 0,
            stats: QueueStats::default(),
            red: None,
        }
    }

    /// Puts RED in front of the drop-tail limit; `packet_time` is the transmission time
    /// of a full-sized packet on the port's link.
    pub fn start_red(&mut self, cfg: RedConfig, packet_time: SimTime, rng: Rng) {
        self.red = Some(Box::new(Red::new(cfg, packet_time, rng)));
    }

    /// RED runs on this queue, so every arrival must pass through `enqueue`.
    #[inline]
    pub fn has_red(&self) -> bool {
        self.red.is_some()
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

    /// Would a packet leaving now (with the queue as it is after its removal) be marked?
    #[inline]
    pub fn marks_on_dequeue(&self) -> bool {
        self.cfg.mark_at == MarkAt::Dequeue && self.above_k()
    }

    /// Admits (marking it CE if the queue is at K and it is ECT) or drops a packet.
    #[inline]
    pub fn enqueue(&mut self, now: SimTime, mut d: Desc, ect: bool) -> Admit {
        let (wire, class) = (d.wire as u32, d.priority());
        let mut red_mark = false;
        if let Some(red) = self.red.as_deref_mut() {
            if red.on_arrival(now, self.packets) == RedVerdict::Early {
                if ect && red.cfg.ecn {
                    red_mark = true;
                } else {
                    self.stats.drops += 1;
                    self.stats.early_drops += 1;
                    return Admit::Dropped;
                }
            }
        }
        if self.packets + 1 > self.cfg.limit_packets
            || self.bytes + wire as u64 > self.cfg.limit_bytes
        {
            self.stats.drops += 1;
            return Admit::Dropped;
        }
        let mark = ect && (red_mark || self.marks_on_enqueue());
        if mark {
            self.stats.marks += 1;
            d.ecn = super::packet::Ecn::Ce;
        }
        self.account(now);
        let c = if self.cfg.priority {
            class.min(1) as usize
        } else {
            0
        };
        self.fifo[c].push_back(d);
        self.packets += 1;
        self.bytes += wire as u64;
        self.stats.enqueued += 1;
        self.stats.max_packets = self.stats.max_packets.max(self.packets);
        self.stats.max_bytes = self.stats.max_bytes.max(self.bytes);
        Admit::Queued { mark }
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
    #[inline]
    pub fn dequeue(&mut self, now: SimTime) -> Option<Desc> {
        let c = if !self.fifo[0].is_empty() { 0 } else { 1 };
        let d = self.fifo[c].pop_front()?;
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

    /// Counts a mark made at dequeue.
    pub fn count_mark(&mut self) {
        self.stats.marks += 1;
    }

    /// Closes the occupancy integral at the end of the run.
    pub fn finish(&mut self, now: SimTime) {
        self.account(now);
    }

    /// Ids of the packets still queued (for conservation checks at the end of a run).
    pub fn queued_ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.fifo[0]
            .iter()
            .chain(self.fifo[1].iter())
            .map(|d| d.pkt)
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
            assert!(matches!(
                q.enqueue(0, d(i, 1500, 0), false),
                Admit::Queued { .. }
            ));
        }
        assert!(matches!(q.enqueue(0, d(9, 1500, 0), false), Admit::Dropped));
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
        assert!(matches!(
            q.enqueue(0, d(1, 1500, 0), false),
            Admit::Queued { .. }
        ));
        assert!(matches!(
            q.enqueue(0, d(2, 1500, 0), false),
            Admit::Queued { .. }
        ));
        assert!(matches!(q.enqueue(0, d(3, 64, 0), false), Admit::Dropped));
    }

    #[test]
    fn marks_ect_at_threshold_on_enqueue() {
        let mut q = OutQueue::new(cfg());
        assert!(matches!(
            q.enqueue(0, d(0, 1500, 0), true),
            Admit::Queued { mark: false }
        ));
        assert!(matches!(
            q.enqueue(0, d(1, 1500, 0), true),
            Admit::Queued { mark: false }
        ));
        assert!(matches!(
            q.enqueue(0, d(2, 1500, 0), true),
            Admit::Queued { mark: true }
        ));
        assert_eq!(q.stats.marks, 1);
    }

    #[test]
    fn non_ect_is_never_marked() {
        let mut q = OutQueue::new(cfg());
        q.enqueue(0, d(0, 1500, 0), false);
        q.enqueue(0, d(1, 1500, 0), false);
        assert!(matches!(
            q.enqueue(0, d(2, 1500, 0), false),
            Admit::Queued { mark: false }
        ));
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
