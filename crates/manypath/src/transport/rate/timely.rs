//! TIMELY (Mittal, Lam, Dukkipati, Blem, Wassel, Ghobadi, Vahdat, Wang, Wetherall, Zats,
//! "TIMELY: RTT-based Congestion Control for the Datacenter", SIGCOMM 2015): rate control
//! from the gradient of the RTT, the paper's Algorithm 1.
//!
//! Each RTT sample (one per completion event; here, each ACK that carries one) does:
//!
//! ```text
//! new_rtt_diff = new_rtt − prev_rtt;  prev_rtt = new_rtt
//! rtt_diff = (1 − α)·rtt_diff + α·new_rtt_diff
//! gradient = rtt_diff / min_rtt
//! if new_rtt < T_low:  rate += δ
//! elif new_rtt > T_high: rate *= 1 − β(1 − T_high/new_rtt)
//! elif gradient ≤ 0:   rate += N·δ   (N = 5 after 5 consecutive gradients ≤ 0, else 1)
//! else:                rate *= 1 − β·gradient
//! ```
//!
//! `min_rtt` is the configured propagation RTT, as in the paper (a constant, not a
//! running minimum). The first sample only sets `prev_rtt`. The count of consecutive
//! non-positive gradients runs over every sample, whichever branch applies, and resets
//! on a positive one. The rate stays within [min_rate, line rate].

use super::{AckInfo, RateControl};
use crate::time::SimTime;

/// TIMELY's defaults, from the paper (Mittal et al., SIGCOMM 2015, §6's settings for its
/// 10 Gb/s testbed); the HPCC authors' simulator (`rdma-hw.cc`) has the same α, β,
/// T_low, T_high and minimum RTT.
pub mod defaults {
    use crate::time::{SimTime, PS_PER_US};
    /// α = 0.875 (paper; artifact).
    pub const EWMA_ALPHA: f64 = 0.875;
    /// β = 0.8 (paper; artifact).
    pub const BETA: f64 = 0.8;
    /// T_low = 50 µs (paper; artifact).
    pub const T_LOW: SimTime = 50 * PS_PER_US;
    /// T_high = 500 µs (paper; artifact).
    pub const T_HIGH: SimTime = 500 * PS_PER_US;
    /// Minimum RTT normalising the gradient: 20 µs (paper; artifact).
    pub const MIN_RTT: SimTime = 20 * PS_PER_US;
    /// δ per line rate: the paper's δ = 10 Mb/s is for its 10 Gb/s NICs; the artifact
    /// scales it with the NIC rate (`ai = 10·bw/10` Mb/s), and so do we: line/1000.
    pub const DELTA_PER_LINE: f64 = 1e-3;
    /// N = 5 (paper; the artifact's hyperactive step is also 5·δ after 5 increases).
    pub const HAI_THRESHOLD: u32 = 5;
    /// The lowest rate: 10 Mb/s (chosen here; the paper gives none).
    pub const MIN_RATE_BPS: f64 = 10e6;
}

/// TIMELY's constants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimelyConfig {
    /// The NIC's line rate, bits/s: the highest rate.
    pub line_rate_bps: f64,
    /// The starting rate, bits/s. Default the line rate (chosen here, as the artifact:
    /// a RoCE flow starts at line rate).
    pub init_rate_bps: f64,
    /// The lowest rate, bits/s ([`defaults::MIN_RATE_BPS`]).
    pub min_rate_bps: f64,
    /// EWMA weight α of the newest RTT difference ([`defaults::EWMA_ALPHA`]).
    pub ewma_alpha: f64,
    /// Multiplicative decrease factor β ([`defaults::BETA`]).
    pub beta: f64,
    /// Additive increase step δ, bits/s (line rate × [`defaults::DELTA_PER_LINE`]).
    pub delta_bps: f64,
    /// Below this RTT the rate always increases ([`defaults::T_LOW`]).
    pub t_low: SimTime,
    /// Above this RTT the rate always decreases ([`defaults::T_HIGH`]).
    pub t_high: SimTime,
    /// The propagation RTT normalising the gradient ([`defaults::MIN_RTT`]).
    pub min_rtt: SimTime,
    /// Consecutive non-positive gradients after which the increase is `hai_threshold`·δ;
    /// also that factor ([`defaults::HAI_THRESHOLD`]).
    pub hai_threshold: u32,
    /// Take one RTT sample per round trip (the first ACK beyond the sequence number sent
    /// when the last sample was taken), as the artifact does; the paper takes one per
    /// completion event of 16–64 KB, about a round trip's worth at 10 Gb/s. Off: every
    /// ACK's sample counts. Default on.
    pub once_per_rtt: bool,
}

impl TimelyConfig {
    /// The defaults above for a NIC of the given line rate.
    pub fn new(line_rate_bps: f64) -> TimelyConfig {
        TimelyConfig {
            line_rate_bps,
            init_rate_bps: line_rate_bps,
            min_rate_bps: defaults::MIN_RATE_BPS,
            ewma_alpha: defaults::EWMA_ALPHA,
            beta: defaults::BETA,
            delta_bps: defaults::DELTA_PER_LINE * line_rate_bps,
            t_low: defaults::T_LOW,
            t_high: defaults::T_HIGH,
            min_rtt: defaults::MIN_RTT,
            hai_threshold: defaults::HAI_THRESHOLD,
            once_per_rtt: true,
        }
    }
}

/// One flow's TIMELY rate controller.
#[derive(Clone, Debug)]
pub struct Timely {
    rate: f64,
    prev_rtt: Option<SimTime>,
    /// The smoothed RTT difference, picoseconds.
    rtt_diff: f64,
    /// Consecutive samples with a non-positive gradient.
    neg_count: u32,
    /// With `once_per_rtt`: the next sample is the first ACK beyond this sequence number.
    last_update_seq: u64,
    cfg: TimelyConfig,
}

impl Timely {
    pub fn new(cfg: TimelyConfig) -> Timely {
        Timely {
            rate: cfg.init_rate_bps.clamp(cfg.min_rate_bps, cfg.line_rate_bps),
            prev_rtt: None,
            rtt_diff: 0.0,
            neg_count: 0,
            last_update_seq: 0,
            cfg,
        }
    }

    pub fn config(&self) -> &TimelyConfig {
        &self.cfg
    }

    /// The normalised RTT gradient after the last sample.
    pub fn gradient(&self) -> f64 {
        self.rtt_diff / self.cfg.min_rtt as f64
    }

    /// One RTT sample (a completion event).
    pub fn on_rtt(&mut self, rtt: SimTime) {
        let Some(prev) = self.prev_rtt.replace(rtt) else {
            return;
        };
        let c = &self.cfg;
        let new_diff = rtt as f64 - prev as f64;
        self.rtt_diff = (1.0 - c.ewma_alpha) * self.rtt_diff + c.ewma_alpha * new_diff;
        let gradient = self.rtt_diff / c.min_rtt as f64;
        if gradient <= 0.0 {
            self.neg_count = self.neg_count.saturating_add(1);
        } else {
            self.neg_count = 0;
        }
        let rate = if rtt < c.t_low {
            self.rate + c.delta_bps
        } else if rtt > c.t_high {
            self.rate * (1.0 - c.beta * (1.0 - c.t_high as f64 / rtt as f64))
        } else if gradient <= 0.0 {
            let n = if self.neg_count >= c.hai_threshold {
                c.hai_threshold as f64
            } else {
                1.0
            };
            self.rate + n * c.delta_bps
        } else {
            self.rate * (1.0 - c.beta * gradient)
        };
        self.rate = rate.clamp(c.min_rate_bps, c.line_rate_bps);
    }
}

impl RateControl for Timely {
    fn rate_bps(&self) -> f64 {
        self.rate
    }

    fn on_ack(&mut self, ack: &AckInfo) {
        let Some(rtt) = ack.rtt else {
            return;
        };
        if self.cfg.once_per_rtt {
            if ack.ack_seq <= self.last_update_seq && self.prev_rtt.is_some() {
                return;
            }
            self.last_update_seq = ack.snd_nxt;
        }
        self.on_rtt(rtt);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::PS_PER_US;

    const US: SimTime = PS_PER_US;

    fn timely(init_gbps: f64) -> Timely {
        let mut cfg = TimelyConfig::new(10e9);
        cfg.init_rate_bps = init_gbps * 1e9;
        Timely::new(cfg)
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-6 * b.abs().max(1.0)
    }

    #[test]
    fn the_first_sample_only_sets_the_reference() {
        let mut t = timely(5.0);
        t.on_ack(&AckInfo {
            rtt: Some(100 * US),
            ..AckInfo::plain(0, 1000)
        });
        assert_eq!(t.rate_bps(), 5e9);
        // An ACK without a sample changes nothing.
        t.on_ack(&AckInfo::plain(1, 1000));
        assert_eq!(t.rate_bps(), 5e9);
    }

    #[test]
    fn with_once_per_rtt_only_the_first_ack_beyond_the_last_sample_counts() {
        let mut t = timely(5.0);
        let ack = |t: &mut Timely, ack_seq: u64, snd_nxt: u64, rtt_us: u64| {
            t.on_ack(&AckInfo {
                ack_seq,
                snd_nxt,
                rtt: Some(rtt_us * US),
                ..AckInfo::plain(0, 1000)
            })
        };
        ack(&mut t, 1000, 50_000, 100); // the reference; the next round ends at 50 000
        ack(&mut t, 2000, 51_000, 200); // same round: ignored
        assert_eq!(t.rate_bps(), 5e9);
        ack(&mut t, 50_000, 90_000, 100); // not beyond 50 000: ignored
        assert_eq!(t.rate_bps(), 5e9);
        ack(&mut t, 51_000, 90_000, 110); // the next round's sample: +10 µs
        let g = 0.875 * 10.0 / 20.0;
        assert!(close(t.gradient(), g));
        assert!(close(t.rate_bps(), 5e9 * (1.0 - 0.8 * g)));
        // Without it every sample counts.
        let mut cfg = TimelyConfig::new(10e9);
        cfg.init_rate_bps = 5e9;
        cfg.once_per_rtt = false;
        let mut t = Timely::new(cfg);
        ack(&mut t, 1000, 50_000, 100);
        ack(&mut t, 2000, 51_000, 110);
        assert!(t.rate_bps() < 5e9);
    }

    #[test]
    fn a_positive_gradient_decreases_the_rate_by_beta_times_the_gradient() {
        let mut t = timely(5.0);
        t.on_rtt(100 * US);
        t.on_rtt(110 * US);
        // rtt_diff = α·10 µs, gradient = α·10/20.
        let g = 0.875 * 10.0 / 20.0;
        assert!(close(t.gradient(), g), "{}", t.gradient());
        assert!(
            close(t.rate_bps(), 5e9 * (1.0 - 0.8 * g)),
            "{}",
            t.rate_bps()
        );
        // The EWMA carries the past difference: a flat sample still decreases.
        let r = t.rate_bps();
        t.on_rtt(110 * US);
        let g2 = (1.0 - 0.875) * 0.875 * 10.0 / 20.0;
        assert!(close(t.gradient(), g2));
        assert!(close(t.rate_bps(), r * (1.0 - 0.8 * g2)));
    }

    #[test]
    fn a_negative_gradient_increases_the_rate_additively() {
        let mut t = timely(5.0);
        t.on_rtt(110 * US);
        t.on_rtt(100 * US);
        assert!(t.gradient() < 0.0);
        assert!(close(t.rate_bps(), 5e9 + 10e6));
        // A zero gradient counts as non-positive too.
        let mut t = timely(5.0);
        t.on_rtt(100 * US);
        t.on_rtt(100 * US);
        assert!(close(t.rate_bps(), 5e9 + 10e6));
    }

    #[test]
    fn hyperactive_increase_after_n_non_positive_gradients() {
        let mut t = timely(5.0);
        t.on_rtt(200 * US);
        let mut r = t.rate_bps();
        for k in 1..=7u64 {
            t.on_rtt((200 - 10 * k) * US);
            let step = if k >= 5 { 5.0 * 10e6 } else { 10e6 };
            assert!(close(t.rate_bps(), r + step), "sample {k}");
            r = t.rate_bps();
        }
        // A positive gradient resets the count: the next negative one adds δ only.
        t.on_rtt(140 * US);
        assert!(t.gradient() > 0.0);
        assert!(t.rate_bps() < r);
        r = t.rate_bps();
        t.on_rtt(100 * US);
        assert!(t.gradient() < 0.0);
        assert!(close(t.rate_bps(), r + 10e6));
    }

    #[test]
    fn below_t_low_the_rate_increases_even_on_a_rising_rtt() {
        let mut t = timely(5.0);
        t.on_rtt(20 * US);
        t.on_rtt(45 * US);
        assert!(t.gradient() > 0.0);
        assert!(close(t.rate_bps(), 5e9 + 10e6));
    }

    #[test]
    fn above_t_high_the_rate_decreases_by_beta_times_the_excess_fraction() {
        let mut t = timely(5.0);
        t.on_rtt(700 * US);
        t.on_rtt(600 * US); // falling, yet above T_high
        assert!(t.gradient() < 0.0);
        let expect = 5e9 * (1.0 - 0.8 * (1.0 - 500.0 / 600.0));
        assert!(close(t.rate_bps(), expect), "{}", t.rate_bps());
    }

    #[test]
    fn the_rate_stays_within_its_bounds() {
        let mut t = timely(9.999);
        for _ in 0..10 {
            t.on_rtt(30 * US);
        }
        assert_eq!(t.rate_bps(), 10e9);
        t.on_rtt(100 * US);
        t.on_rtt(400 * US); // gradient > 1/β: 1 − β·gradient < 0
        assert_eq!(t.rate_bps(), t.config().min_rate_bps);
    }
}
