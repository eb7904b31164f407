//! FUSO's proactive multipath loss recovery (the FUSO document, §3 and Algorithm 1):
//! when the connection has no new data to send and its total window has room, copy the
//! oldest un-ACKed, unprotected packet of the worst subflow onto the best subflow, where
//! it is new data under that subflow's congestion control.
//!
//! This module holds the bookkeeping and the choice of subflows; the multipath sender
//! (`sender.rs`) asks it what to copy and sends the copy.
//!
//! Loss cost of a subflow: C = α·lossrate + β·lossrate_last, where lossrate is the ratio of
//! retransmitted to transmitted packets and lossrate_last is one over the number of
//! packets sent since (and including) the last retransmission; C = 0 before the first
//! retransmission and ∞ before the first packet. Recovery copies count as new packets.

use crate::time::SimTime;
use std::collections::VecDeque;

/// The document's weights (α = β = 0.5, §5.1).
pub const DEFAULT_ALPHA: f64 = 0.5;
pub const DEFAULT_BETA: f64 = 0.5;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FusoConfig {
    pub alpha: f64,
    pub beta: f64,
}

impl Default for FusoConfig {
    fn default() -> Self {
        FusoConfig {
            alpha: DEFAULT_ALPHA,
            beta: DEFAULT_BETA,
        }
    }
}

/// What FUSO tracks of one subflow.
#[derive(Clone, Debug, Default)]
pub struct SubflowLoss {
    /// Data packets sent, retransmissions and recovery copies included.
    pub sent: u64,
    pub retx: u64,
    /// Packets sent since (and including) the last retransmission; 0 before the first.
    pub since_retx: u64,
    /// Subflow sequence numbers below this were considered for protection already
    /// (packets are protected in ascending order, each at most once).
    pub protected_to: u64,
    /// Subflow sequence ranges that are recovery copies themselves: they are never
    /// protected again.
    pub copies: VecDeque<(u64, u64)>,
}

impl SubflowLoss {
    pub fn on_sent(&mut self, retransmission: bool) {
        self.sent += 1;
        if retransmission {
            self.retx += 1;
            self.since_retx = 1;
        } else if self.since_retx > 0 {
            self.since_retx += 1;
        }
    }

    /// C = α·lossrate + β·lossrate_last (∞ before the first packet).
    pub fn cost(&self, cfg: &FusoConfig) -> f64 {
        if self.sent == 0 {
            return f64::INFINITY;
        }
        let last = if self.since_retx > 0 {
            1.0 / self.since_retx as f64
        } else {
            0.0
        };
        cfg.alpha * self.retx as f64 / self.sent as f64 + cfg.beta * last
    }

    /// Drops the recovery ranges wholly below `snd_una`.
    pub fn forget_below(&mut self, snd_una: u64) {
        while self.copies.front().is_some_and(|&(_, e)| e <= snd_una) {
            self.copies.pop_front();
        }
    }

    /// The end of the recovery range containing `seq`, if it lies in one.
    pub fn copy_end(&self, seq: u64) -> Option<u64> {
        let i = self.copies.partition_point(|&(_, e)| e <= seq);
        self.copies
            .get(i)
            .filter(|&&(s, _)| s <= seq)
            .map(|&(_, e)| e)
    }
}

/// A subflow as FUSO's choice sees it.
#[derive(Clone, Copy, Debug)]
pub struct Candidate {
    pub cost: f64,
    /// Smoothed RTT (`SimTime::MAX` before the first sample).
    pub srtt: SimTime,
    /// Worst: the subflow has an un-ACKed packet not yet protected. Best: its window has
    /// room for one more segment.
    pub eligible: bool,
}

/// The worst subflow: the highest cost among the eligible; when every cost is zero (or
/// among equal costs), the largest RTT, "to optimize the overall FCT".
pub fn worst(c: &[Candidate]) -> Option<usize> {
    let mut pick: Option<usize> = None;
    for (i, x) in c.iter().enumerate().filter(|(_, x)| x.eligible) {
        pick = match pick {
            None => Some(i),
            Some(p) => {
                let y = &c[p];
                if x.cost > y.cost || (x.cost == y.cost && rtt_of(x) > rtt_of(y)) {
                    Some(i)
                } else {
                    Some(p)
                }
            }
        };
    }
    pick
}

/// The best subflow: the lowest cost among the eligible, ties to the smallest RTT;
/// never-used subflows (cost ∞) come last, and among only those the first is taken.
pub fn best(c: &[Candidate]) -> Option<usize> {
    let mut pick: Option<usize> = None;
    for (i, x) in c.iter().enumerate().filter(|(_, x)| x.eligible) {
        pick = match pick {
            None => Some(i),
            Some(p) => {
                let y = &c[p];
                if x.cost < y.cost || (x.cost == y.cost && x.srtt < y.srtt) {
                    Some(i)
                } else {
                    Some(p)
                }
            }
        };
    }
    pick
}

/// RTT for the worst choice: a subflow without a sample yet counts as the shortest.
fn rtt_of(c: &Candidate) -> SimTime {
    if c.srtt == SimTime::MAX {
        0
    } else {
        c.srtt
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(cost: f64, srtt: SimTime, eligible: bool) -> Candidate {
        Candidate {
            cost,
            srtt,
            eligible,
        }
    }

    #[test]
    fn cost_weighs_overall_and_recent_loss() {
        let cfg = FusoConfig::default();
        let mut s = SubflowLoss::default();
        assert_eq!(s.cost(&cfg), f64::INFINITY);
        for _ in 0..9 {
            s.on_sent(false);
        }
        assert_eq!(s.cost(&cfg), 0.0);
        s.on_sent(true);
        // 1 of 10 retransmitted, and the retransmission was the last packet sent.
        assert!((s.cost(&cfg) - (0.5 * 0.1 + 0.5 * 1.0)).abs() < 1e-12);
        for _ in 0..3 {
            s.on_sent(false);
        }
        assert!((s.cost(&cfg) - (0.5 / 13.0 + 0.5 / 4.0)).abs() < 1e-12);
    }

    #[test]
    fn worst_is_the_costliest_and_ties_go_to_the_longest_rtt() {
        let c = [
            cand(0.2, 100, true),
            cand(0.6, 50, false),
            cand(0.3, 10, true),
        ];
        assert_eq!(worst(&c), Some(2), "the ineligible subflow is skipped");
        let zero = [
            cand(0.0, 100, true),
            cand(0.0, 300, true),
            cand(0.0, 200, true),
        ];
        assert_eq!(worst(&zero), Some(1));
        assert_eq!(worst(&[cand(1.0, 1, false)]), None);
    }

    #[test]
    fn best_is_the_cheapest_unused_last_and_ties_to_the_shortest_rtt() {
        let c = [
            cand(f64::INFINITY, SimTime::MAX, true),
            cand(0.0, 300, true),
            cand(0.0, 200, true),
            cand(0.5, 10, true),
        ];
        assert_eq!(best(&c), Some(2));
        let unused = [
            cand(f64::INFINITY, SimTime::MAX, true),
            cand(f64::INFINITY, SimTime::MAX, true),
        ];
        assert_eq!(best(&unused), Some(0));
        let lossy = [cand(0.5, 10, true), cand(f64::INFINITY, SimTime::MAX, true)];
        assert_eq!(
            best(&lossy),
            Some(0),
            "a used subflow beats a never-used one"
        );
    }

    #[test]
    fn copies_are_found_and_forgotten() {
        let mut s = SubflowLoss::default();
        s.copies.push_back((1000, 2000));
        s.copies.push_back((5000, 5500));
        assert_eq!(s.copy_end(1500), Some(2000));
        assert_eq!(s.copy_end(2000), None);
        assert_eq!(s.copy_end(5000), Some(5500));
        s.forget_below(2000);
        assert_eq!(s.copies.len(), 1);
    }
}
