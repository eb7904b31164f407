//! LIA, the linked increase of RFC 6356 (MPTCP's default), also DCM's increase (AMP
//! document eq. 1): w_i += min(a·acked·MSS / w_total, acked·MSS / w_i) with
//! a = w_total · max_r(w_r / rtt_r²) / (Σ_r w_r / rtt_r)².

use super::SubflowView;

/// The aggressiveness factor a of RFC 6356, and the total window.
fn alpha_and_total(subs: &[SubflowView]) -> (f64, f64) {
    let mut total = 0.0;
    let mut best = 0.0f64;
    let mut sum = 0.0;
    for s in subs.iter().filter(|s| s.active) {
        total += s.cwnd;
        best = best.max(s.w_rtt2);
        sum += s.w_rtt;
    }
    if sum <= 0.0 {
        return (1.0, total);
    }
    (total * best / (sum * sum), total)
}

/// The aggressiveness factor a of RFC 6356.
pub fn alpha(subs: &[SubflowView]) -> f64 {
    alpha_and_total(subs).0
}

pub fn increase(i: usize, subs: &[SubflowView], mss: f64) -> f64 {
    let (alpha, total) = alpha_and_total(subs);
    let total = total.max(subs[i].cwnd);
    (alpha * mss / total).min(mss / subs[i].cwnd)
}

#[cfg(test)]
mod tests {
    use super::super::tests::views;
    use super::*;

    #[test]
    fn alpha_matches_rfc6356_examples() {
        // n equal paths: a = 1/n, so the connection grows by MSS/n per RTT in total and,
        // with each subflow halving on its own losses, takes what one TCP would.
        let subs = views(&[(10_000.0, 1e-4), (10_000.0, 1e-4)]);
        assert!((alpha(&subs) - 0.5).abs() < 1e-12);
        let total: f64 = (0..2).map(|i| increase(i, &subs, 1000.0) * 10_000.0).sum();
        assert!((total - 500.0).abs() < 1e-9);
        // One subflow: plain TCP.
        let subs = views(&[(10_000.0, 1e-4)]);
        assert!((alpha(&subs) - 1.0).abs() < 1e-12);
        assert!((increase(0, &subs, 1000.0) - 0.1).abs() < 1e-12);
        // The per-subflow cap: never more than TCP on that subflow (MSS / w_i).
        let subs = views(&[(1_000.0, 1e-4), (100_000.0, 1e-6)]);
        assert!(increase(0, &subs, 1000.0) <= 1.0 + 1e-12);
    }
}
