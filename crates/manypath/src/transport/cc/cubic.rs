//! CUBIC (RFC 9438, as Linux's `tcp_cubic` runs it): after a congestion event the window
//! follows W(t) = C·(t − K)³ + W_max, a cubic in the time since the event that is flat
//! around the window where the loss happened; β = 0.7, C = 0.4 segments/s³, fast
//! convergence and the Reno-friendly region on. Slow start is standard (no HyStart).
//!
//! As in Linux: t includes the smallest RTT measured (the window is aimed one RTT
//! ahead); the window moves towards the target by one segment per `cnt` ACKed segments,
//! with `cnt` ≥ 2 (at most +50% per RTT) and ≤ 20 while no W_max is known; a timeout
//! forgets W_max. An ECN echo is a congestion event (once per window).

use super::{AckEvent, CongestionControl, OncePerWindow, Window};
use crate::time::SimTime;

/// Multiplicative decrease factor.
pub const BETA: f64 = 0.7;
/// Cubic scaling constant, in segments per second³.
pub const C: f64 = 0.4;

#[derive(Clone, Debug, Default)]
pub struct Cubic {
    /// Window (segments) before the last reduction, after fast convergence.
    w_max: f64,
    /// W_max of the event before, for fast convergence.
    w_last_max: f64,
    /// Start of the current congestion-avoidance epoch (`None`: starts at the next ACK).
    epoch: Option<SimTime>,
    /// Seconds from the epoch's start until the cubic reaches its origin.
    k: f64,
    /// The cubic's plateau, in segments.
    origin: f64,
    /// Reno-friendly estimate of the window, in segments.
    w_est: f64,
    ecn: OncePerWindow,
}

impl Cubic {
    /// A congestion event: remember W_max, set ssthresh, start a new epoch.
    fn reduce(&mut self, w: &mut Window, mss: f64) {
        let cwnd = w.cwnd / mss;
        // Fast convergence: a flow whose window keeps shrinking releases bandwidth.
        self.w_max = if cwnd < self.w_last_max {
            cwnd * (1.0 + BETA) / 2.0
        } else {
            cwnd
        };
        self.w_last_max = cwnd;
        self.epoch = None;
        w.ssthresh = (w.cwnd * BETA).max(2.0 * mss);
    }
}

impl CongestionControl for Cubic {
    fn on_ack(&mut self, w: &mut Window, ev: &AckEvent) {
        if ev.in_recovery {
            return;
        }
        if self.ecn.fire(ev.ece, ev.snd_una, ev.snd_nxt) {
            self.reduce(w, ev.mss);
            w.ssthresh = w.ssthresh.max(ev.cwnd_min);
            w.cwnd = w.ssthresh;
            return;
        }
        if ev.acked == 0 || !ev.cwnd_limited {
            return;
        }
        let mss = ev.mss;
        if w.cwnd < w.ssthresh {
            w.cwnd += (ev.acked as f64).min(mss);
            return;
        }
        let cwnd = w.cwnd / mss;
        let epoch = match self.epoch {
            Some(e) => e,
            None => {
                self.epoch = Some(ev.now);
                self.w_est = cwnd;
                if cwnd < self.w_max {
                    self.k = ((self.w_max - cwnd) / C).cbrt();
                    self.origin = self.w_max;
                } else {
                    self.k = 0.0;
                    self.origin = cwnd;
                }
                ev.now
            }
        };
        let t = (ev.now - epoch + ev.min_rtt) as f64 / 1e12;
        let target = self.origin + C * (t - self.k).powi(3);
        let mut cnt = if target > cwnd {
            cwnd / (target - cwnd)
        } else {
            100.0 * cwnd
        };
        if self.w_max == 0.0 {
            cnt = cnt.min(20.0);
        }
        // Reno-friendly region: grow at least as fast as Reno with the same β would.
        let acked = ev.acked as f64 / mss;
        self.w_est += 3.0 * (1.0 - BETA) / (1.0 + BETA) * acked / cwnd;
        if self.w_est > cwnd {
            cnt = cnt.min(cwnd / (self.w_est - cwnd));
        }
        let cnt = cnt.max(2.0);
        w.cwnd += mss * acked / cnt;
    }

    fn on_fast_retransmit(&mut self, w: &mut Window, _flight: u64, mss: f64) {
        self.reduce(w, mss);
    }

    fn on_timeout(&mut self, w: &mut Window, _flight: u64, mss: f64) {
        self.reduce(w, mss);
        // Linux resets CUBIC on entering loss: the next epoch starts from scratch.
        self.w_max = 0.0;
        self.w_last_max = 0.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::cc::test_ack;

    const MS: SimTime = 1_000_000_000;

    fn ack_at(now: SimTime, acked: u64) -> AckEvent {
        AckEvent {
            now,
            min_rtt: 100_000_000, // 100 µs
            ..test_ack(acked, false, 0, 0)
        }
    }

    /// Feeds one window of ACKs per `rtt` for `rounds` rounds; returns cwnd (segments)
    /// after each round.
    fn run(c: &mut Cubic, w: &mut Window, start: SimTime, rtt: SimTime, rounds: u32) -> Vec<f64> {
        let mut out = Vec::new();
        for r in 0..rounds {
            let now = start + r as SimTime * rtt;
            let n = (w.cwnd / 1000.0) as u32;
            for _ in 0..n {
                c.on_ack(w, &ack_at(now, 1000));
            }
            out.push(w.cwnd / 1000.0);
        }
        out
    }

    #[test]
    fn loss_cuts_to_beta_and_remembers_w_max() {
        let mut c = Cubic::default();
        let mut w = Window {
            cwnd: 100_000.0,
            ssthresh: 1e9,
        };
        c.on_fast_retransmit(&mut w, 100_000, 1000.0);
        assert_eq!(w.ssthresh, 70_000.0);
        assert_eq!(c.w_max, 100.0);
        // A second loss below the previous W_max: fast convergence.
        w.cwnd = 80_000.0;
        c.on_fast_retransmit(&mut w, 80_000, 1000.0);
        assert_eq!(c.w_max, 80.0 * 1.7 / 2.0);
    }

    #[test]
    fn window_is_concave_then_plateaus_at_w_max_after_k() {
        // A large window at a long RTT, where the cubic (not the Reno-friendly
        // estimate) drives growth.
        let mut c = Cubic::default();
        let mut w = Window {
            cwnd: 1_000_000.0,
            ssthresh: 1e9,
        };
        c.on_fast_retransmit(&mut w, 1_000_000, 1000.0);
        w.cwnd = w.ssthresh;
        // K = cbrt(1000 · 0.3 / 0.4) ≈ 9.09 s, about 91 rounds of 100 ms.
        let trace = run(&mut c, &mut w, MS, 100 * MS, 150);
        assert!((9.0..9.2).contains(&c.k), "K = {}", c.k);
        let k_rounds = (c.k * 10.0) as usize;
        // Fast growth first, slow near W_max (concave), then faster again (convex).
        let early = trace[10] - trace[0];
        let plateau = trace[k_rounds + 5] - trace[k_rounds - 5];
        let late = trace[149] - trace[139];
        assert!(early > 5.0 * plateau, "early {early} plateau {plateau}");
        assert!(late > 5.0 * plateau, "late {late} plateau {plateau}");
        assert!(
            (trace[k_rounds] - 1000.0).abs() < 10.0,
            "at K the window is back at W_max: {}",
            trace[k_rounds]
        );
    }

    #[test]
    fn reno_friendly_region_dominates_at_short_rtts() {
        // With a tiny W_max and short RTTs, the cubic is nearly flat: the Reno-friendly
        // estimate drives growth at about 3(1−β)/(1+β) ≈ 0.53 segments per RTT.
        let mut c = Cubic::default();
        let mut w = Window {
            cwnd: 20_000.0,
            ssthresh: 1e9,
        };
        c.on_fast_retransmit(&mut w, 20_000, 1000.0);
        w.cwnd = w.ssthresh;
        let trace = run(&mut c, &mut w, MS, MS / 10, 100);
        let per_rtt = (trace[99] - trace[49]) / 50.0;
        assert!((0.4..0.7).contains(&per_rtt), "{per_rtt} segments per RTT");
    }

    #[test]
    fn timeout_forgets_w_max_and_ecn_cuts_once_per_window() {
        let mut c = Cubic::default();
        let mut w = Window {
            cwnd: 50_000.0,
            ssthresh: 1e9,
        };
        c.on_timeout(&mut w, 50_000, 1000.0);
        assert_eq!(c.w_max, 0.0);
        assert_eq!(w.ssthresh, 35_000.0);
        let mut w = Window {
            cwnd: 50_000.0,
            ssthresh: 1e9,
        };
        let mut c = Cubic::default();
        c.on_ack(&mut w, &test_ack(1000, true, 1000, 60_000));
        assert_eq!(w.cwnd, 35_000.0);
        c.on_ack(&mut w, &test_ack(1000, true, 2000, 60_000));
        assert!(w.cwnd >= 35_000.0, "no second cut in the same window");
    }
}
