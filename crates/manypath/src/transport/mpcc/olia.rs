//! OLIA (Khalili, Gast, Popovic, Le Boudec, CoNEXT 2012): per ACK on path r (windows in
//! segments) w_r += (w_r/rtt_r²) / (Σ_p w_p/rtt_p)² + α_r / w_r. The second term moves
//! window from the paths with the largest windows (M) to the best paths (B, largest
//! ℓ_r/rtt_r², ℓ_r the bytes carried between losses) that do not have the largest window:
//! α_r = 1/(n·|B∖M|) on B∖M, −1/(n·|M|) on M when B∖M is not empty, 0 otherwise.

use super::SubflowView;

pub fn alpha(i: usize, subs: &[SubflowView]) -> f64 {
    let active = || subs.iter().filter(|p| p.active);
    let n = active().count() as f64;
    let quality = |p: &SubflowView| p.ell / (p.rtt * p.rtt);
    let w_max = active().map(|p| p.cwnd).fold(0.0, f64::max);
    let q_max = active().map(quality).fold(0.0, f64::max);
    let in_m = |p: &SubflowView| p.cwnd >= w_max;
    let in_b = |p: &SubflowView| quality(p) >= q_max;
    let b_not_m = active().filter(|p| in_b(p) && !in_m(p)).count() as f64;
    let m = active().filter(|p| in_m(p)).count() as f64;
    let me = &subs[i];
    if b_not_m == 0.0 {
        0.0
    } else if in_b(me) && !in_m(me) {
        1.0 / (n * b_not_m)
    } else if in_m(me) {
        -1.0 / (n * m)
    } else {
        0.0
    }
}

/// Window increase of subflow `i` per acknowledged byte, in bytes.
pub fn increase(i: usize, subs: &[SubflowView], mss: f64) -> f64 {
    let s = &subs[i];
    let sum: f64 = subs.iter().filter(|p| p.active).map(|p| p.w_rtt).sum();
    if sum <= 0.0 {
        return mss / s.cwnd;
    }
    mss * s.w_rtt2 / (sum * sum) + alpha(i, subs) * mss / s.cwnd
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(cwnd: f64, ell: f64) -> SubflowView {
        SubflowView::new(cwnd, 1e-4, true, ell)
    }

    #[test]
    fn moves_window_from_the_largest_to_the_best_path() {
        // Path 1 carries more bytes between losses but has the smaller window.
        let subs = [view(20_000.0, 1e5), view(10_000.0, 1e6)];
        assert!(alpha(0, &subs) < 0.0);
        assert!(alpha(1, &subs) > 0.0);
        assert!(
            (alpha(0, &subs) + alpha(1, &subs)).abs() < 1e-12,
            "α sums to zero"
        );
        // When the best path already has the largest window, no shifting.
        let subs = [view(20_000.0, 1e6), view(10_000.0, 1e5)];
        assert_eq!(alpha(0, &subs), 0.0);
        assert_eq!(alpha(1, &subs), 0.0);
    }
}
