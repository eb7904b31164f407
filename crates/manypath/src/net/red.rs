//! Random Early Detection (Floyd and Jacobson, 1993), with the "gentle" variant and ECN
//! marking (RFC 3168) as options.
//!
//! RED drops (or marks) an arriving packet with a probability that grows with the
//! exponentially averaged queue length, so each flow's share of the drops follows its
//! share of the arrivals. A drop-tail queue instead drops whichever packet arrives when
//! it is full, which in a deterministic simulation is usually the one a window increase
//! added: RED is the usual remedy for such phase effects.
//!
//! The state machine is sans-IO: the queue reports each arrival and when it empties.

use crate::engine::rng::Rng;
use crate::time::SimTime;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedConfig {
    /// Below this average queue (packets) nothing is dropped early.
    pub min_th: f64,
    /// At this average the drop probability reaches `max_p`.
    pub max_th: f64,
    pub max_p: f64,
    /// Weight w_q of a new sample in the average.
    pub weight: f64,
    /// Between `max_th` and 2·`max_th` the probability rises linearly from `max_p` to 1
    /// instead of jumping to 1.
    pub gentle: bool,
    /// Mark ECT packets CE instead of dropping them.
    pub ecn: bool,
}

/// What RED decides for an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedVerdict {
    Admit,
    /// Drop it, or mark it if it is ECT and marking is on.
    Early,
}

#[derive(Clone, Debug)]
pub struct Red {
    pub cfg: RedConfig,
    /// The average queue in packets.
    pub avg: f64,
    /// Packets since the last early drop (−1: the average was below `min_th`).
    count: i64,
    /// When the queue last became empty (`None` while it holds packets).
    idle_since: Option<SimTime>,
    /// Transmission time of a typical packet: the idle decay counts this many "virtual"
    /// empty-queue samples per unit of idle time.
    packet_time: SimTime,
    rng: Rng,
}

impl Red {
    pub fn new(cfg: RedConfig, packet_time: SimTime, rng: Rng) -> Red {
        Red {
            cfg,
            avg: 0.0,
            count: -1,
            idle_since: Some(0),
            packet_time: packet_time.max(1),
            rng,
        }
    }

    /// A packet arrives at a queue holding `queued` packets.
    pub fn on_arrival(&mut self, now: SimTime, queued: u64) -> RedVerdict {
        let w = self.cfg.weight;
        match self.idle_since {
            Some(since) if queued == 0 => {
                let m = now.saturating_sub(since) as f64 / self.packet_time as f64;
                self.avg *= (1.0 - w).powf(m);
            }
            _ => self.avg = (1.0 - w) * self.avg + w * queued as f64,
        }
        self.idle_since = None;
        let (min, max, max_p) = (self.cfg.min_th, self.cfg.max_th, self.cfg.max_p);
        let pb = if self.avg < min {
            self.count = -1;
            return RedVerdict::Admit;
        } else if self.avg < max {
            max_p * (self.avg - min) / (max - min)
        } else if self.cfg.gentle && self.avg < 2.0 * max {
            max_p + (1.0 - max_p) * (self.avg - max) / max
        } else {
            self.count = 0;
            return RedVerdict::Early;
        };
        self.count += 1;
        // Spreads the drops evenly: the probability grows with the packets since the
        // last one (Floyd and Jacobson's p_a).
        let denom = 1.0 - self.count as f64 * pb;
        let pa = if denom <= 0.0 { 1.0 } else { pb / denom };
        if self.rng.uniform() < pa {
            self.count = 0;
            RedVerdict::Early
        } else {
            RedVerdict::Admit
        }
    }

    /// The queue has just become empty.
    pub fn on_empty(&mut self, now: SimTime) {
        self.idle_since = Some(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn red(gentle: bool) -> Red {
        let cfg = RedConfig {
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            weight: 0.002,
            gentle,
            ecn: false,
        };
        Red::new(cfg, 1_000_000, Rng::new(1, 99, 0))
    }

    /// Fraction of early verdicts over many arrivals with the average held near `avg`.
    fn early_fraction(r: &mut Red, avg: f64) -> f64 {
        let n = 200_000;
        let mut early = 0;
        for _ in 0..n {
            r.avg = avg;
            if r.on_arrival(0, avg.round() as u64) == RedVerdict::Early {
                early += 1;
            }
        }
        early as f64 / n as f64
    }

    #[test]
    fn average_follows_the_queue_with_weight_w() {
        let mut r = red(true);
        r.on_arrival(0, 0);
        for _ in 0..1000 {
            r.on_arrival(0, 10);
        }
        // 1 − (1 − 0.002)^1000 of the way from 0 to 10.
        let expect = 10.0 * (1.0 - 0.998f64.powi(1000));
        assert!((r.avg - expect).abs() < 1e-9, "{} vs {expect}", r.avg);
    }

    #[test]
    fn idle_time_decays_the_average() {
        let mut r = red(true);
        r.avg = 10.0;
        r.on_empty(0);
        // 500 packet times idle: avg · 0.998^500.
        r.on_arrival(500 * 1_000_000, 0);
        assert!((r.avg - 10.0 * 0.998f64.powf(500.0)).abs() < 1e-9);
    }

    /// Long-run early-drop rate for a fixed pb: with the count correction the gap X
    /// between drops has P(X > n) = (1 − (n+1)·pb) / (1 − pb) for n ≥ 1 (Floyd and
    /// Jacobson §7: nearly uniform on 1..1/pb).
    fn expected_rate(pb: f64) -> f64 {
        let mut mean_gap = 1.0;
        let mut n = 1.0;
        while 1.0 - (n + 1.0) * pb > 0.0 {
            mean_gap += (1.0 - (n + 1.0) * pb) / (1.0 - pb);
            n += 1.0;
        }
        1.0 / mean_gap
    }

    #[test]
    fn drop_rate_follows_the_linear_profile() {
        let mut r = red(false);
        assert_eq!(early_fraction(&mut r, 4.0), 0.0);
        for (avg, pb) in [(10.0, 0.05), (14.0, 0.09)] {
            let f = early_fraction(&mut r, avg);
            let expect = expected_rate(pb);
            assert!(
                (f - expect).abs() < 0.05 * expect,
                "avg {avg}: {f} vs {expect}"
            );
        }
        assert_eq!(early_fraction(&mut r, 16.0), 1.0);
    }

    #[test]
    fn gentle_rises_to_one_at_twice_max_th() {
        let mut r = red(true);
        // avg 17: pb = 0.1 + 0.9 · 2/15 = 0.22, where plain RED drops everything.
        let f = early_fraction(&mut r, 17.0);
        let expect = expected_rate(0.22);
        assert!((f - expect).abs() < 0.05 * expect, "{f} vs {expect}");
        assert_eq!(early_fraction(&mut r, 31.0), 1.0);
    }
}
