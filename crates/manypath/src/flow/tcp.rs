//! The iterative TCP model: per-link loss rates from the offered load, per-subflow rates
//! from the TCP response function, iterated to a fixed point.
//!
//! A subflow on a path with loss rate q and round-trip time R sends at
//! B/R · sqrt(3/(2q)) (B: bits per packet), the response function of TCP's congestion
//! avoidance. A coupled (LIA) connection is at LIA's equilibrium: each subflow's window
//! is inversely proportional to its path's loss rate (its increase is the same on every
//! subflow, its decrease proportional to the window), and the total rate equals what a
//! TCP would get on the connection's best path (LIA's goal). So x_s ∝ 1/(q_s R_s), scaled
//! to max_s B/R_s · sqrt(3/(2q_s)): traffic moves to the least congested subflows.
//!
//! A link's loss rate p settles where the traffic it carries, y·(1 − p), equals its
//! capacity C, or at zero when its offered load y stays below C. Each iteration computes
//! the rates from the current losses and moves every loss multiplicatively,
//! p ← p · (y(1 − p)/C)^η: a single bottleneck shared by TCP flows (y ∝ p^-1/2) closes
//! its error by 1 − η/2 per step. Raising a loss uses η = 1/2, which keeps series
//! bottlenecks and LIA's steeper response (y ∝ p^-3/2 at worst) from overshooting;
//! lowering it uses η = 4, so that links left with spare capacity shed their loss in a
//! few steps instead of drifting for thousands (the allocation is the same either way;
//! only the number of iterations changes).

use super::paths::Paths;
use super::Solution;

/// Loss rates live in [P_MIN, P_MAX]; below P_NEGLIGIBLE a link's loss is too small to
/// limit a TCP at data-center bandwidth-delay products, whatever its subflows' paths.
const P_MIN: f64 = 1e-12;
const P_MAX: f64 = 0.5;
const P_NEGLIGIBLE: f64 = 1e-8;
const P_START: f64 = 1e-4;
/// Exponents of the loss update when a link is overloaded and when it is not.
const ETA_UP: f64 = 0.5;
const ETA_DOWN: f64 = 4.0;
/// 3/2 under the square root of the response function.
const RESPONSE: f64 = 1.5;

/// The inputs of the model: links, subflows and their paths.
pub struct Problem<'a> {
    /// Capacity of each link, bits/s.
    pub capacity: &'a [f64],
    pub paths: &'a Paths,
    /// Round-trip time of each subflow, seconds.
    pub rtt: &'a [f64],
    /// Wire bits per packet of each connection.
    pub packet_bits: &'a [f64],
    /// Whether each connection's subflows are coupled (LIA); otherwise independent TCPs.
    pub coupled: &'a [bool],
}

/// Iterates to the fixed point; stops when the largest violation is below `tolerance`
/// or after `max_iterations`.
pub fn solve(pb: &Problem, max_iterations: u32, tolerance: f64) -> Solution {
    solve_with_progress(pb, max_iterations, tolerance, u32::MAX, |_| true).0
}

/// `solve`, calling `progress(iterations)` every `every` iterations; a `false` from it
/// stops the iteration there (returned as true: stopped).
pub fn solve_with_progress(
    pb: &Problem,
    max_iterations: u32,
    tolerance: f64,
    every: u32,
    mut progress: impl FnMut(u32) -> bool,
) -> (Solution, bool) {
    let mut stopped = false;
    let nl = pb.capacity.len();
    let ns = pb.paths.n_subflows();
    let mut p = vec![P_START; nl];
    let mut load = vec![0.0; nl];
    let mut q = vec![0.0; ns];
    let mut rate = vec![0.0; ns];
    let mut least_q = vec![0.0; nl];
    let mut iterations = 0;
    let mut residual = f64::INFINITY;
    while iterations < max_iterations {
        rates(pb, &p, &mut q, &mut rate, &mut load);
        residual = violation(pb, &p, &q, &load, tolerance, &mut least_q);
        if residual < tolerance {
            break;
        }
        iterations += 1;
        if iterations % every.max(1) == 0 && !progress(iterations) {
            stopped = true;
            break;
        }
        for l in 0..nl {
            if load[l] > 0.0 {
                let ratio = load[l] * (1.0 - p[l]) / pb.capacity[l];
                let eta = if ratio < 1.0 { ETA_DOWN } else { ETA_UP };
                p[l] = (p[l] * ratio.powf(eta)).clamp(P_MIN, P_MAX);
            }
        }
    }
    if residual >= tolerance {
        // The losses moved after the last rates; make them consistent again.
        rates(pb, &p, &mut q, &mut rate, &mut load);
        residual = violation(pb, &p, &q, &load, tolerance, &mut least_q);
    }
    let delivered = rate.iter().zip(&q).map(|(x, q)| x * (1.0 - q)).collect();
    for (l, p) in p.iter_mut().enumerate() {
        if load[l] == 0.0 {
            *p = 0.0;
        }
    }
    let sol = Solution {
        rate,
        delivered,
        loss: p,
        load,
        iterations,
        converged: residual < tolerance,
        residual,
    };
    (sol, stopped)
}

/// Rates of every subflow for the link losses `p`; fills the path losses `q` and the
/// links' offered loads.
fn rates(pb: &Problem, p: &[f64], q: &mut [f64], rate: &mut [f64], load: &mut [f64]) {
    let paths = pb.paths;
    load.iter_mut().for_each(|y| *y = 0.0);
    for (s, qs) in q.iter_mut().enumerate() {
        let keep: f64 = paths.path(s).iter().map(|&l| 1.0 - p[l as usize]).product();
        *qs = (1.0 - keep).max(P_MIN);
    }
    for c in 0..paths.n_connections() {
        let subs = paths.subflows_of(c);
        let bits = pb.packet_bits[c];
        let tcp = |s: usize| bits / pb.rtt[s] * (RESPONSE / q[s]).sqrt();
        if pb.coupled[c] {
            let mut best: f64 = 0.0;
            let mut weights = 0.0;
            for s in subs.clone() {
                best = best.max(tcp(s));
                weights += 1.0 / (q[s] * pb.rtt[s]);
            }
            for s in subs {
                rate[s] = best / (q[s] * pb.rtt[s]) / weights;
            }
        } else {
            for s in subs {
                rate[s] = tcp(s);
            }
        }
    }
    // A link is offered what survives the links before it on each path, so the traffic
    // it carries, load·(1 − p), is exactly what it passes on.
    for (s, &x) in rate.iter().enumerate() {
        let mut arriving = x;
        for &l in paths.path(s) {
            load[l as usize] += arriving;
            arriving *= 1.0 - p[l as usize];
        }
        // ACKs: one per segment that got through, on the reverse path.
        let ack = arriving * paths.ack_share[paths.conn_of[s] as usize];
        for &l in paths.acks(s) {
            load[l as usize] += ack;
        }
    }
}

/// The largest relative violation of the fixed point: a link carrying more than its
/// capacity, or a link with spare capacity whose loss still matters. A loss matters when
/// it exceeds P_NEGLIGIBLE and `tolerance` times the path loss of some subflow crossing
/// the link (dropping a smaller one would change no rate by more than the tolerance).
/// `least_q` is scratch space, one entry per link.
fn violation(
    pb: &Problem,
    p: &[f64],
    q: &[f64],
    load: &[f64],
    tolerance: f64,
    least_q: &mut [f64],
) -> f64 {
    least_q.iter_mut().for_each(|x| *x = f64::INFINITY);
    for (s, &qs) in q.iter().enumerate() {
        for &l in pb.paths.path(s) {
            let m = &mut least_q[l as usize];
            *m = m.min(qs);
        }
    }
    let mut worst: f64 = 0.0;
    for l in 0..pb.capacity.len() {
        if load[l] == 0.0 {
            continue;
        }
        let ratio = load[l] * (1.0 - p[l]) / pb.capacity[l];
        let v = if ratio > 1.0 {
            ratio - 1.0
        } else if p[l] > P_NEGLIGIBLE && p[l] > tolerance * least_q[l] {
            1.0 - ratio
        } else {
            0.0
        };
        worst = worst.max(v);
    }
    worst
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem<'a>(
        capacity: &'a [f64],
        paths: &'a Paths,
        rtt: &'a [f64],
        bits: &'a [f64],
        coupled: &'a [bool],
    ) -> Problem<'a> {
        Problem {
            capacity,
            paths,
            rtt,
            packet_bits: bits,
            coupled,
        }
    }

    #[test]
    fn tcp_flows_share_a_bottleneck_in_proportion_to_one_over_rtt() {
        // Links: 0, 1 access (10 G), 2 shared (1 G).
        let mut paths = Paths::new();
        paths.push_connection(&[vec![0, 2]]);
        paths.push_connection(&[vec![1, 2]]);
        let cap = [10e9, 10e9, 1e9];
        let rtt = [100e-6, 200e-6];
        let sol = solve(
            &problem(&cap, &paths, &rtt, &[12000.0; 2], &[false; 2]),
            10_000,
            1e-6,
        );
        assert!(sol.converged, "residual {}", sol.residual);
        let (a, b) = (sol.delivered[0], sol.delivered[1]);
        assert!(((a + b) / 1e9 - 1.0).abs() < 1e-5, "{a} + {b}");
        assert!((a / b - 2.0).abs() < 1e-4, "{a} / {b}");
        assert!(sol.loss[0] < 1e-9 && sol.loss[2] > 1e-6);
    }

    #[test]
    fn lia_moves_traffic_towards_the_uncongested_path() {
        // Connection 0 (LIA) has two paths: via link 0 (shared with a TCP flow) and via
        // link 1 (its own); link 2 is its 1 G access link, link 3 the TCP's. At LIA's
        // equilibrium both 1 G limits meet the response function with equal loss, which
        // gives the TCP u with 2u³ − u² + u − 1 = 0: u ≈ 0.738 G, and the LIA subflows
        // 0.262 G (shared path) and 0.738 G (private path).
        let mut paths = Paths::new();
        paths.push_connection(&[vec![2, 0], vec![2, 1]]);
        paths.push_connection(&[vec![3, 0]]);
        let cap = [1e9, 1e9, 1e9, 1e9];
        let rtt = [100e-6; 3];
        let sol = solve(
            &problem(&cap, &paths, &rtt, &[12000.0; 2], &[true, false]),
            20_000,
            1e-6,
        );
        assert!(sol.converged, "residual {}", sol.residual);
        let d = &sol.delivered;
        assert!((d[0] + d[1] - 1e9).abs() < 0.01e9, "{d:?}");
        assert!((d[2] / 1e9 - 0.738).abs() < 0.01, "{d:?}");
        assert!((d[1] / d[0] - 0.738 / 0.262).abs() < 0.1, "{d:?}");
    }

    #[test]
    fn uncoupled_subflows_take_twice_the_share_lia_takes() {
        // Two subflows of one connection and one TCP, all through one 1 G link.
        let mut paths = Paths::new();
        paths.push_connection(&[vec![0], vec![0]]);
        paths.push_connection(&[vec![0]]);
        let cap = [1e9];
        let rtt = [100e-6; 3];
        for (coupled, expect) in [(false, 2.0 / 3.0), (true, 0.5)] {
            let sol = solve(
                &problem(&cap, &paths, &rtt, &[12000.0; 2], &[coupled, false]),
                10_000,
                1e-7,
            );
            assert!(sol.converged);
            let mp = sol.delivered[0] + sol.delivered[1];
            let total = mp + sol.delivered[2];
            assert!(
                (mp / total - expect).abs() < 1e-3,
                "{coupled}: {mp} of {total}"
            );
        }
    }

    #[test]
    fn a_permutation_ring_converges_to_full_rate() {
        // Eight flows, each on its own two links plus one link shared with its
        // neighbour: every shared link carries two flows, so each flow gets half of a
        // shared link (less the losses, about 10^-3 at this RTT).
        let mut paths = Paths::new();
        for i in 0..8u32 {
            paths.push_connection(&[vec![i, 8 + i, 16 + i, 16 + (i + 1) % 8]]);
        }
        let cap = vec![1e9; 24];
        let rtt = vec![500e-6; 8];
        let sol = solve(
            &problem(&cap, &paths, &rtt, &[12000.0; 8], &[false; 8]),
            10_000,
            1e-6,
        );
        assert!(sol.converged && sol.iterations > 1);
        for d in &sol.delivered {
            assert!((d / 0.5e9 - 1.0).abs() < 2e-3, "{d}");
        }
    }
}
