//! XMP (Cao et al., CoNEXT 2013; AMP document §2.2): once per window of data, subflow s
//! grows by δ_s = (rtt_s / rtt_min) · (w_s/rtt_s) / Σ_r(w_r/rtt_r) segments (eq. 3); on the
//! first marked ACK of a window, w_s ← w_s(1 − 1/β), β = 4; losses halve. Per byte
//! acknowledged that is δ_s·MSS / w_s.

use super::{Coupled, EcnResponse, SubflowView};

pub fn increase(i: usize, subs: &[SubflowView], mss: f64) -> f64 {
    let s = &subs[i];
    let rtt_min = subs
        .iter()
        .filter(|p| p.active)
        .map(|p| p.rtt)
        .fold(f64::INFINITY, f64::min);
    let sum: f64 = subs.iter().filter(|p| p.active).map(|p| p.w_rtt).sum();
    if sum <= 0.0 || !rtt_min.is_finite() {
        return mss / s.cwnd;
    }
    let delta = (s.rtt / rtt_min) * s.w_rtt / sum;
    delta * mss / s.cwnd
}

pub fn subflow_cc(beta: f64, loss_floor: f64) -> Coupled {
    Coupled::new(EcnResponse::Beta { beta }, loss_floor)
}

#[cfg(test)]
mod tests {
    use super::super::tests::views;
    use super::*;

    #[test]
    fn equal_rtts_share_one_segment_per_round() {
        let subs = views(&[(10_000.0, 1e-4), (30_000.0, 1e-4)]);
        let per_round: f64 = (0..2)
            .map(|i| increase(i, &subs, 1000.0) * subs[i].cwnd)
            .sum();
        assert!((per_round - 1000.0).abs() < 1e-9);
    }
}
