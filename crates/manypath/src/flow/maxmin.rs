//! Max–min fair rates by progressive filling, the reference allocation.
//!
//! Every connection that can still grow raises its total rate at the same pace, split
//! equally over its subflows whose paths have no saturated link; when a link fills, the
//! subflows crossing it (with their data or their ACKs) stop. For single-path flows this is the max–min fair allocation;
//! a multipath connection keeps growing on its remaining paths after one saturates (a
//! greedy multipath max–min, not the optimum over all splits).

use super::paths::Paths;
use super::Solution;

/// A link counts as full when less than this fraction of its capacity is left.
const FULL: f64 = 1e-9;

pub fn solve(capacity: &[f64], paths: &Paths) -> Solution {
    let nl = capacity.len();
    let ns = paths.n_subflows();
    let mut left = capacity.to_vec();
    let mut full = vec![false; nl];
    let mut active = vec![true; ns];
    let mut rate = vec![0.0; ns];
    let mut growing: Vec<u32> = (0..paths.n_connections())
        .map(|c| paths.subflows_of(c).len() as u32)
        .collect();
    let mut slope = vec![0.0; nl];
    let mut steps = 0;
    loop {
        slope.iter_mut().for_each(|x| *x = 0.0);
        for s in (0..ns).filter(|&s| active[s]) {
            let c = paths.conn_of[s] as usize;
            let w = 1.0 / growing[c] as f64;
            for &l in paths.path(s) {
                slope[l as usize] += w;
            }
            for &l in paths.acks(s) {
                slope[l as usize] += w * paths.ack_share[c];
            }
        }
        let step = (0..nl)
            .filter(|&l| slope[l] > 0.0)
            .map(|l| left[l] / slope[l])
            .fold(f64::INFINITY, f64::min);
        if !step.is_finite() {
            break;
        }
        steps += 1;
        for s in (0..ns).filter(|&s| active[s]) {
            rate[s] += step / growing[paths.conn_of[s] as usize] as f64;
        }
        for l in 0..nl {
            left[l] -= step * slope[l];
            if slope[l] > 0.0 && left[l] <= FULL * capacity[l] {
                full[l] = true;
            }
        }
        for s in 0..ns {
            let blocked = |links: &[u32]| links.iter().any(|&l| full[l as usize]);
            if active[s] && (blocked(paths.path(s)) || blocked(paths.acks(s))) {
                active[s] = false;
                growing[paths.conn_of[s] as usize] -= 1;
            }
        }
    }
    let mut load = vec![0.0; nl];
    for (s, &x) in rate.iter().enumerate() {
        for &l in paths.path(s) {
            load[l as usize] += x;
        }
        for &l in paths.acks(s) {
            load[l as usize] += x * paths.ack_share[paths.conn_of[s] as usize];
        }
    }
    Solution {
        delivered: rate.clone(),
        rate,
        loss: vec![0.0; nl],
        load,
        iterations: steps,
        converged: true,
        residual: 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn textbook_example() {
        // Links 0 (cap 1) and 1 (cap 2). Flow A crosses both, B only link 0, C and D only
        // link 1. Link 0 fills first at 1/2 each for A and B; C and D then share what A
        // leaves of link 1: (2 − 1/2)/2 = 3/4 each.
        let mut paths = Paths::new();
        paths.push_connection(&[vec![0, 1]]);
        paths.push_connection(&[vec![0]]);
        paths.push_connection(&[vec![1]]);
        paths.push_connection(&[vec![1]]);
        let sol = solve(&[1.0, 2.0], &paths);
        let expect = [0.5, 0.5, 0.75, 0.75];
        for (r, e) in sol.rate.iter().zip(expect) {
            assert!((r - e).abs() < 1e-12, "{:?}", sol.rate);
        }
        assert_eq!(sol.iterations, 2);
    }

    #[test]
    fn multipath_connection_grows_on_its_free_path() {
        // Connection 0 has subflows on link 0 (shared with a single-path flow) and link 1
        // (its own); all links have capacity 1. Connection 0 splits its growth over two
        // subflows, so link 0 fills at level 1/(1/2 + 1) = 2/3: flow 1 has 2/3,
        // connection 0 has 1/3 on each subflow. Its link-1 subflow then grows alone to 1.
        let mut paths = Paths::new();
        paths.push_connection(&[vec![0], vec![1]]);
        paths.push_connection(&[vec![0]]);
        let sol = solve(&[1.0, 1.0], &paths);
        let r = &sol.rate;
        assert!((r[0] - 1.0 / 3.0).abs() < 1e-12, "{r:?}");
        assert!((r[1] - 1.0).abs() < 1e-12, "{r:?}");
        assert!((r[2] - 2.0 / 3.0).abs() < 1e-12, "{r:?}");
        assert!(sol.load.iter().all(|&y| (y - 1.0).abs() < 1e-12));
    }
}
