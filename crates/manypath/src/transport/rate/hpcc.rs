//! HPCC (Li, Miao, Liu, Zhuang, Feng, Tang, Cao, Zhang, Kim, Alizadeh, Yu, "HPCC: High
//! Precision Congestion Control", SIGCOMM 2019): window and rate from the in-band
//! telemetry (INT) every switch port stamps on a data packet and the receiver echoes in
//! its ACK; the paper's Algorithm 1.
//!
//! On each ACK, for each hop j, against that hop's record on the previous ACK:
//!
//! ```text
//! txRate_j = (tx_bytes − tx_bytes') / (ts − ts')
//! U_j = min(qlen, qlen') / (B_j·T) + txRate_j / B_j
//! ```
//!
//! U is the largest U_j, with τ the ts − ts' of that hop (at most T); the estimate is
//! U ← (1 − τ/T)·U + (τ/T)·U_j (an EWMA over the base RTT T). Then
//!
//! ```text
//! if U ≥ η or incStage ≥ maxStage:  W = W_c / (U/η) + W_AI   (incStage ← 0)
//! else:                             W = W_c + W_AI           (incStage += 1)
//! ```
//!
//! and the bracketed updates, with W_c ← W, happen only on the first ACK of a new RTT:
//! an ACK acknowledging beyond `last_update_seq`, which then becomes the sender's next
//! sequence number. The window caps bytes in flight; the rate is W/T. W stays within
//! [min_rate·T, W_max].
//!
//! The ACK's records are copied into a fixed array of [`MAX_INT_HOPS`] (no allocation);
//! hops beyond it are ignored. When the number of hops changes (a new path), the ACK
//! only becomes the reference.

use super::{AckInfo, IntHop, RateControl};
use crate::time::{SimTime, PS_PER_S};

pub use crate::net::int::MAX_INT_HOPS;

/// HPCC's defaults: the paper's (Li et al., SIGCOMM 2019, §5.1's settings for 100 Gb/s),
/// since `hpcc` names the paper's protocol. The HPCC authors' simulator runs
/// `MI_THRESH 0` (no additive stages: every per-RTT update is multiplicative) and an
/// additive step given as a rate, 10·bw/25 Mb/s; that setting is
/// [`HpccConfig::hpcc_artifact`].
pub mod defaults {
    /// η = 0.95 (paper; the artifact's `U_TARGET`, `--utgt 95`).
    pub const ETA: f64 = 0.95;
    /// maxStage = 5 (paper; the artifact's `MiThresh` attribute default too).
    pub const MAX_STAGE: u32 = 5;
    /// W_AI = 80 bytes (paper, at 100 Gb/s).
    pub const W_AI_BYTES: f64 = 80.0;
    /// The lowest rate: 10 Mb/s (chosen here; the paper gives none).
    pub const MIN_RATE_BPS: f64 = 10e6;
    /// The artifact's additive step as a fraction of the line rate: 10·bw/25 Mb/s.
    pub const ARTIFACT_AI_PER_LINE: f64 = 4e-4;
    /// The artifact's `MIN_RATE 1000Mb/s`.
    pub const ARTIFACT_MIN_RATE_BPS: f64 = 1e9;
}

/// HPCC's constants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HpccConfig {
    /// The NIC's line rate, bits/s: the highest rate.
    pub line_rate_bps: f64,
    /// The base RTT T (the network's propagation RTT, set by the operator; the artifact
    /// uses one value for all flows, the largest base RTT of the topology).
    pub base_rtt: SimTime,
    /// Target utilisation η ([`defaults::ETA`]).
    pub eta: f64,
    /// Additive increase stages before a multiplicative update, maxStage
    /// ([`defaults::MAX_STAGE`]).
    pub max_stage: u32,
    /// Additive increase W_AI, bytes ([`defaults::W_AI_BYTES`]).
    pub w_ai_bytes: f64,
    /// The initial window, bytes. Default line rate × T (the paper's W_init).
    pub init_window_bytes: f64,
    /// The largest window, bytes. Default line rate × T (chosen here: more than one
    /// line-rate BDP cannot raise the rate, which is capped at line rate).
    pub max_window_bytes: f64,
    /// The lowest rate, bits/s; the window never falls below min_rate × T
    /// ([`defaults::MIN_RATE_BPS`]).
    pub min_rate_bps: f64,
}

impl HpccConfig {
    /// The paper's defaults for a NIC of the given line rate on a network of base RTT T.
    pub fn new(line_rate_bps: f64, base_rtt: SimTime) -> HpccConfig {
        let bdp = line_rate_bps / 8.0 * base_rtt as f64 / PS_PER_S as f64;
        HpccConfig {
            line_rate_bps,
            base_rtt,
            eta: defaults::ETA,
            max_stage: defaults::MAX_STAGE,
            w_ai_bytes: defaults::W_AI_BYTES,
            init_window_bytes: bdp,
            max_window_bytes: bdp,
            min_rate_bps: defaults::MIN_RATE_BPS,
        }
    }

    /// The HPCC authors' simulator's setting (`run.py --cc hp`): maxStage 0, W_AI the
    /// bytes its additive rate step carries in one T, minimum rate 1 Gb/s.
    pub fn hpcc_artifact(line_rate_bps: f64, base_rtt: SimTime) -> HpccConfig {
        let t = base_rtt as f64 / PS_PER_S as f64;
        HpccConfig {
            max_stage: 0,
            w_ai_bytes: defaults::ARTIFACT_AI_PER_LINE * line_rate_bps / 8.0 * t,
            min_rate_bps: defaults::ARTIFACT_MIN_RATE_BPS.min(line_rate_bps),
            ..HpccConfig::new(line_rate_bps, base_rtt)
        }
    }

    fn rtt_secs(&self) -> f64 {
        self.base_rtt as f64 / PS_PER_S as f64
    }
}

/// One flow's HPCC sender state.
#[derive(Clone, Debug)]
pub struct Hpcc {
    /// The window W, bytes.
    w: f64,
    /// The reference window W_c, bytes.
    wc: f64,
    /// The utilisation estimate U.
    u: f64,
    inc_stage: u32,
    last_update_seq: u64,
    /// The previous ACK's INT records (the first `n_prev`).
    prev: [IntHop; MAX_INT_HOPS],
    n_prev: usize,
    /// Read on every send and ACK, so kept rather than recomputed: the base RTT in
    /// seconds, the window's floor (the lowest rate's), and what W gives, the rate
    /// W/T capped at the line rate and W in whole bytes (`set_window` keeps them).
    rtt_secs: f64,
    floor: f64,
    rate_bps: f64,
    w_bytes: u64,
    cfg: HpccConfig,
}

impl Hpcc {
    pub fn new(cfg: HpccConfig) -> Hpcc {
        let w = cfg
            .init_window_bytes
            .clamp(Hpcc::floor(&cfg), cfg.max_window_bytes);
        let mut h = Hpcc {
            w,
            wc: w,
            u: 0.0,
            inc_stage: 0,
            last_update_seq: 0,
            prev: [IntHop::default(); MAX_INT_HOPS],
            n_prev: 0,
            rtt_secs: cfg.rtt_secs(),
            floor: Hpcc::floor(&cfg),
            rate_bps: 0.0,
            w_bytes: 0,
            cfg,
        };
        h.set_window(w);
        h
    }

    /// W becomes `w` bytes, with the rate and whole bytes it gives.
    fn set_window(&mut self, w: f64) {
        self.w = w;
        self.rate_bps = (w * 8.0 / self.rtt_secs).min(self.cfg.line_rate_bps);
        self.w_bytes = w as u64;
    }

    fn floor(cfg: &HpccConfig) -> f64 {
        cfg.min_rate_bps / 8.0 * cfg.rtt_secs()
    }

    pub fn config(&self) -> &HpccConfig {
        &self.cfg
    }

    /// The window W, bytes.
    pub fn window(&self) -> f64 {
        self.w
    }

    /// The reference window W_c, bytes.
    pub fn reference_window(&self) -> f64 {
        self.wc
    }

    /// The utilisation estimate U.
    pub fn utilization(&self) -> f64 {
        self.u
    }

    pub fn inc_stage(&self) -> u32 {
        self.inc_stage
    }

    /// MeasureInflight: folds the ACK's records into U; false if they give no sample.
    fn measure(&mut self, int: &[IntHop]) -> bool {
        let n = int.len().min(MAX_INT_HOPS);
        let int = &int[..n];
        let same_path = n > 0 && n == self.n_prev;
        let mut sample: Option<(f64, SimTime)> = None;
        if same_path {
            let t = self.rtt_secs;
            for (now, prev) in int.iter().zip(&self.prev) {
                let dts = now.ts.saturating_sub(prev.ts);
                if dts == 0 || now.rate_bps == 0 {
                    continue;
                }
                let b = now.rate_bps as f64;
                let dtx = now.tx_bytes.saturating_sub(prev.tx_bytes) as f64;
                let tx_rate = dtx * 8.0 / (dts as f64 / PS_PER_S as f64);
                let qlen = now.qlen_bytes.min(prev.qlen_bytes) as f64;
                let u = qlen * 8.0 / (b * t) + tx_rate / b;
                if sample.is_none_or(|(best, _)| u > best) {
                    sample = Some((u, dts));
                }
            }
        }
        self.prev[..n].copy_from_slice(int);
        self.n_prev = n;
        let Some((u, tau)) = sample else {
            return false;
        };
        let f = tau.min(self.cfg.base_rtt) as f64 / self.cfg.base_rtt as f64;
        self.u = (1.0 - f) * self.u + f * u;
        true
    }

    /// ComputeWind.
    fn compute_window(&mut self, update_wc: bool) {
        let c = &self.cfg;
        let multiplicative = self.u >= c.eta || self.inc_stage >= c.max_stage;
        let w = if multiplicative {
            self.wc / (self.u / c.eta) + c.w_ai_bytes
        } else {
            self.wc + c.w_ai_bytes
        };
        let (floor, max) = (self.floor, c.max_window_bytes);
        self.set_window(w.clamp(floor, max));
        if update_wc {
            if multiplicative {
                self.inc_stage = 0;
            } else {
                self.inc_stage += 1;
            }
            self.wc = self.w;
        }
    }
}

impl RateControl for Hpcc {
    /// W/T, at most the line rate.
    fn rate_bps(&self) -> f64 {
        self.rate_bps
    }

    fn window_bytes(&self) -> Option<u64> {
        Some(self.w_bytes)
    }

    fn on_ack(&mut self, ack: &AckInfo) {
        if !self.measure(ack.int) {
            return;
        }
        if ack.ack_seq > self.last_update_seq {
            self.compute_window(true);
            self.last_update_seq = ack.snd_nxt;
        } else {
            self.compute_window(false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::PS_PER_US;

    const TEST_RTT: SimTime = 10 * PS_PER_US;
    const LINE: u64 = 100_000_000_000;
    /// Bytes a 100 Gb/s link carries in one base RTT (10 µs).
    const BT: u64 = 125_000;

    fn hpcc(init_window: f64) -> Hpcc {
        let mut cfg = HpccConfig::new(LINE as f64, TEST_RTT);
        cfg.init_window_bytes = init_window;
        Hpcc::new(cfg)
    }

    fn hop(qlen_bytes: u64, tx_bytes: u64, ts: SimTime) -> IntHop {
        IntHop {
            qlen_bytes,
            tx_bytes,
            ts,
            rate_bps: LINE,
        }
    }

    fn ack(h: &mut Hpcc, ack_seq: u64, snd_nxt: u64, int: &[IntHop]) {
        h.on_ack(&AckInfo {
            ack_seq,
            snd_nxt,
            int,
            ..AckInfo::plain(int[0].ts, 1000)
        });
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn defaults_start_at_one_bdp_and_line_rate() {
        let h = Hpcc::new(HpccConfig::new(LINE as f64, TEST_RTT));
        assert!(close(h.window(), BT as f64));
        assert!(close(h.rate_bps(), LINE as f64));
        assert_eq!(h.window_bytes(), Some(BT));
    }

    #[test]
    fn the_first_ack_is_only_the_reference() {
        let mut h = hpcc(50_000.0);
        ack(&mut h, 1000, 60_000, &[hop(0, 0, 0)]);
        assert_eq!(h.window(), 50_000.0);
        assert_eq!(h.utilization(), 0.0);
    }

    #[test]
    fn below_eta_the_window_grows_additively_and_wc_once_per_rtt() {
        let mut h = hpcc(50_000.0);
        ack(&mut h, 1000, 60_000, &[hop(0, 0, 0)]);
        // One RTT later the link sent 0.475·B·T: U = 0.5η exactly (τ = T).
        let tx = 475 * BT / 1000;
        ack(&mut h, 2000, 60_000, &[hop(0, tx, TEST_RTT)]);
        assert!(close(h.utilization(), 0.475));
        assert!(close(h.window(), 50_080.0));
        assert_eq!(h.reference_window(), h.window());
        assert_eq!(h.inc_stage(), 1);
        // Later ACKs of the same RTT (ack_seq ≤ 60 000) do not move W_c.
        ack(&mut h, 3000, 61_000, &[hop(0, 2 * tx, 2 * TEST_RTT)]);
        assert!(close(h.window(), 50_160.0));
        assert!(close(h.reference_window(), 50_080.0));
        assert_eq!(h.inc_stage(), 1);
        // The first ACK beyond it starts a new RTT.
        ack(&mut h, 60_001, 120_000, &[hop(0, 3 * tx, 3 * TEST_RTT)]);
        assert!(close(h.window(), 50_160.0));
        assert!(close(h.reference_window(), 50_160.0));
        assert_eq!(h.inc_stage(), 2);
        assert!(close(h.rate_bps(), 50_160.0 * 8.0 / 10e-6));
    }

    #[test]
    fn above_eta_the_window_scales_by_eta_over_u() {
        let mut h = hpcc(100_000.0);
        ack(&mut h, 1000, 60_000, &[hop(25_000, 0, 0)]);
        // Line rate out and a standing queue of 0.2·B·T: U = 1.2.
        ack(&mut h, 2000, 60_000, &[hop(25_000, BT, TEST_RTT)]);
        assert!(close(h.utilization(), 1.2), "{}", h.utilization());
        assert!(close(h.window(), 100_000.0 * 0.95 / 1.2 + 80.0));
        assert_eq!(h.inc_stage(), 0);
    }

    #[test]
    fn the_most_utilised_hop_is_what_counts() {
        let mut h = hpcc(100_000.0);
        let first = [hop(0, 0, 0), hop(25_000, 0, 0), hop(0, 0, 0)];
        ack(&mut h, 1000, 60_000, &first);
        let second = [
            hop(0, 3 * BT / 10, TEST_RTT),
            hop(25_000, BT, TEST_RTT),
            hop(0, BT / 2, TEST_RTT),
        ];
        ack(&mut h, 2000, 60_000, &second);
        assert!(close(h.utilization(), 1.2));
        assert!(close(h.window(), 100_000.0 * 0.95 / 1.2 + 80.0));
    }

    #[test]
    fn after_max_stage_additive_steps_the_update_is_multiplicative() {
        let mut h = hpcc(50_000.0);
        let tx = BT / 2; // U = 0.5 each RTT
        ack(&mut h, 1, 0, &[hop(0, 0, 0)]);
        for k in 1..=5u64 {
            ack(&mut h, k * 1000, k * 1000, &[hop(0, k * tx, k * TEST_RTT)]);
        }
        assert_eq!(h.inc_stage(), 5);
        let wc = h.reference_window();
        assert!(close(wc, 50_000.0 + 5.0 * 80.0));
        ack(&mut h, 6000, 6000, &[hop(0, 6 * tx, 6 * TEST_RTT)]);
        assert!(close(h.window(), wc / (0.5 / 0.95) + 80.0));
        assert_eq!(h.inc_stage(), 0);
    }

    #[test]
    fn u_is_an_ewma_over_the_base_rtt() {
        let mut h = hpcc(50_000.0);
        ack(&mut h, 1, 0, &[hop(0, 0, 0)]);
        ack(&mut h, 2, 0, &[hop(0, BT / 2, TEST_RTT)]);
        assert!(close(h.utilization(), 0.5));
        // A quarter RTT at line rate: U ← 0.75·0.5 + 0.25·1.
        ack(
            &mut h,
            3,
            0,
            &[hop(0, BT / 2 + BT / 4, TEST_RTT + TEST_RTT / 4)],
        );
        assert!(close(h.utilization(), 0.625), "{}", h.utilization());
        // The queue term takes the smaller of two consecutive queue lengths.
        let t = TEST_RTT + TEST_RTT / 4;
        ack(&mut h, 4, 0, &[hop(BT, BT / 2 + BT / 4, t + TEST_RTT)]);
        assert!(close(h.utilization(), 0.0));
    }

    #[test]
    fn a_changed_path_only_resets_the_reference() {
        let mut h = hpcc(50_000.0);
        ack(&mut h, 1, 0, &[hop(0, 0, 0)]);
        ack(&mut h, 2, 0, &[hop(0, BT, TEST_RTT), hop(0, BT, TEST_RTT)]);
        assert_eq!(h.window(), 50_000.0);
        assert_eq!(h.utilization(), 0.0);
    }
}
