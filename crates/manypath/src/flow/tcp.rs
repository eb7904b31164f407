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
//! A link's loss rate p settles where the traffic it carries, c = y·(1 − p), equals its
//! capacity C, or at zero when its offered load y stays below C. Each iteration computes
//! the rates from the current losses, then takes one Newton step per link on log p:
//! log p ← log p + g · ln(c/C) / e, where e = −∂ ln c / ∂ ln p is the link's own
//! elasticity, computed exactly from its subflows (`Newton::elasticities`: a TCP subflow
//! answers ½ of the share of its path loss the link makes, a LIA subflow also moves
//! traffic to and from its connection's other subflows), holding every other link's loss
//! where it is. The gain g (at most 1) halves when the link's error changes sign: links
//! whose subflows share other bottlenecks react together, and the halving damps the
//! overshoot that makes.
//!
//! Why not a fixed exponent (p ← p · (c/C)^η, the model's earlier update): a link whose
//! subflows lose mostly elsewhere has e ≪ ½, so a fixed η closed its error by only
//! 1 − η·e per iteration, and such links set the iteration count (12,669 iterations at
//! 27,648 servers; a 1,960-server VL2 did not converge in 20,000). The Newton step scales
//! by 1/e instead. The fixed point, and the convergence test (`violation`), are the same.

use super::paths::Paths;
use super::Solution;

/// Loss rates live in [P_MIN, P_MAX]; below P_NEGLIGIBLE a link's loss is too small to
/// limit a TCP at data-center bandwidth-delay products, whatever its subflows' paths.
const P_MIN: f64 = 1e-12;
const P_MAX: f64 = 0.5;
const P_NEGLIGIBLE: f64 = 1e-8;
const P_START: f64 = 1e-4;
/// 3/2 under the square root of the response function.
const RESPONSE: f64 = 1.5;
/// A link's step gain: halved (down to GAIN_MIN) when its error changes sign, regrown by
/// GAIN_GROWTH per step otherwise, up to 1 (a full Newton step).
const GAIN_MIN: f64 = 1.0 / 64.0;
const GAIN_GROWTH: f64 = 1.5;
/// The most one step moves a loss, in ln units: up by 100×, down by 10⁴×. Far from its
/// fixed point a link's elasticity can be tiny (its loss a sliver of its paths'), and an
/// uncapped step from there would overshoot by orders of magnitude.
const MAX_UP: f64 = 4.605_170_185_988_091; // ln 100
const MAX_DOWN: f64 = 9.210_340_371_976_182; // ln 10⁴
/// Below this, a link's elasticity is taken as this (a loss far below its paths').
const ELASTICITY_MIN: f64 = 1e-9;

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
    progress: impl FnMut(u32) -> bool,
) -> (Solution, bool) {
    let mut newton = Newton::new(pb.capacity.len());
    iterate(pb, max_iterations, tolerance, every, progress, |s| {
        newton.elasticities(pb, s);
        newton.step(pb, s);
    })
}

/// The iteration's state: link losses, and the path losses, rates and link loads they give.
struct State {
    p: Vec<f64>,
    q: Vec<f64>,
    rate: Vec<f64>,
    load: Vec<f64>,
}

/// Computes rates from the losses, tests the fixed point, and lets `update` move the
/// losses, until converged, stopped by `progress` or out of iterations.
fn iterate(
    pb: &Problem,
    max_iterations: u32,
    tolerance: f64,
    every: u32,
    mut progress: impl FnMut(u32) -> bool,
    mut update: impl FnMut(&mut State),
) -> (Solution, bool) {
    let mut stopped = false;
    let nl = pb.capacity.len();
    let ns = pb.paths.n_subflows();
    let mut s = State {
        p: vec![P_START; nl],
        q: vec![0.0; ns],
        rate: vec![0.0; ns],
        load: vec![0.0; nl],
    };
    let mut least_q = vec![0.0; nl];
    let mut iterations = 0;
    let mut residual = f64::INFINITY;
    while iterations < max_iterations {
        rates(pb, &s.p, &mut s.q, &mut s.rate, &mut s.load);
        residual = violation(pb, &s.p, &s.q, &s.load, tolerance, &mut least_q);
        if residual < tolerance {
            break;
        }
        iterations += 1;
        if iterations % every.max(1) == 0 && !progress(iterations) {
            stopped = true;
            break;
        }
        update(&mut s);
    }
    if residual >= tolerance {
        // The losses moved after the last rates; make them consistent again.
        rates(pb, &s.p, &mut s.q, &mut s.rate, &mut s.load);
        residual = violation(pb, &s.p, &s.q, &s.load, tolerance, &mut least_q);
    }
    let State {
        mut p,
        q,
        rate,
        load,
    } = s;
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

/// Per-link Newton steps on log p, each with its own damping gain.
struct Newton {
    /// Each link's elasticity e = −∂ ln c / ∂ ln p (its other links' losses held).
    elasticity: Vec<f64>,
    /// Scratch per link for one coupled connection at a time: the rate its subflows bring
    /// to the link, Σ a_t w_t over them and ½ a_b of its best subflow (see `elasticities`).
    conn_rate: Vec<f64>,
    conn_shift: Vec<f64>,
    conn_best: Vec<f64>,
    /// The links the connection in hand has touched in that scratch.
    touched: Vec<u32>,
    gain: Vec<f64>,
    /// The sign of each link's last error (0 before the first).
    last_sign: Vec<i8>,
}

impl Newton {
    fn new(nl: usize) -> Newton {
        Newton {
            elasticity: vec![0.0; nl],
            conn_rate: vec![0.0; nl],
            conn_shift: vec![0.0; nl],
            conn_best: vec![0.0; nl],
            touched: Vec::new(),
            gain: vec![1.0; nl],
            last_sign: vec![0; nl],
        }
    }

    /// Every link's elasticity at the state `s`. With a_{s,l} = ∂ ln q_s / ∂ ln p_l (the
    /// share of subflow s's path loss that link l makes) and x̃ the rate s brings to l:
    /// a TCP subflow (x ∝ q^-½) adds ½ a x̃. A LIA subflow has
    /// ln x_s = ln x_b − ln q_s − ln R_s − ln W, with b the best subflow and
    /// W = Σ_t 1/(q_t R_t); so ∂ ln x_s / ∂ ln q_t = −δ_st + w_t − ½ [t = b]
    /// (w_t = 1/(q_t R_t W)), and the connection's subflows S on l add
    /// Σ_S a_s x̃_s + X̃ · (½ a_b [b ∈ S] − Σ_S a_t w_t) (X̃ = Σ_S x̃_s). The link's own
    /// drop adds p/(1 − p). ACK loads are left out: a few percent of a link's load.
    fn elasticities(&mut self, pb: &Problem, st: &State) {
        let (paths, p, q, rate) = (pb.paths, &st.p, &st.q, &st.rate);
        self.elasticity.iter_mut().for_each(|x| *x = 0.0);
        for c in 0..paths.n_connections() {
            let subs = paths.subflows_of(c);
            if !pb.coupled[c] {
                for s in subs {
                    let mut arriving = rate[s];
                    for &l in paths.path(s) {
                        let l = l as usize;
                        self.elasticity[l] += 0.5 * arriving * share_of_loss(p[l], q[s]);
                        arriving *= 1.0 - p[l];
                    }
                }
                continue;
            }
            let bits = pb.packet_bits[c];
            let (mut best, mut best_rate, mut weights) = (subs.start, 0.0, 0.0);
            for s in subs.clone() {
                let x = bits / pb.rtt[s] * (RESPONSE / q[s]).sqrt();
                if x > best_rate {
                    (best, best_rate) = (s, x);
                }
                weights += 1.0 / (q[s] * pb.rtt[s]);
            }
            for s in subs {
                let w = 1.0 / (q[s] * pb.rtt[s]) / weights;
                let mut arriving = rate[s];
                for &l in paths.path(s) {
                    let l = l as usize;
                    let a = share_of_loss(p[l], q[s]);
                    if self.conn_rate[l] == 0.0 {
                        self.touched.push(l as u32);
                    }
                    self.elasticity[l] += arriving * a;
                    self.conn_rate[l] += arriving;
                    self.conn_shift[l] += a * w;
                    if s == best {
                        self.conn_best[l] += 0.5 * a;
                    }
                    arriving *= 1.0 - p[l];
                }
            }
            for &l in &self.touched {
                let l = l as usize;
                self.elasticity[l] += self.conn_rate[l] * (self.conn_best[l] - self.conn_shift[l]);
                self.conn_rate[l] = 0.0;
                self.conn_shift[l] = 0.0;
                self.conn_best[l] = 0.0;
            }
            self.touched.clear();
        }
        for (l, e) in self.elasticity.iter_mut().enumerate() {
            if st.load[l] > 0.0 {
                *e = *e / st.load[l] + p[l] / (1.0 - p[l]);
            }
        }
    }

    /// One damped Newton step on every loaded link's loss.
    fn step(&mut self, pb: &Problem, st: &mut State) {
        for l in 0..st.p.len() {
            if st.load[l] == 0.0 {
                continue;
            }
            let err = (st.load[l] * (1.0 - st.p[l]) / pb.capacity[l]).ln();
            let sign = if err > 0.0 { 1 } else { -1 };
            self.gain[l] = if self.last_sign[l] == -sign {
                (self.gain[l] * 0.5).max(GAIN_MIN)
            } else {
                (self.gain[l] * GAIN_GROWTH).min(1.0)
            };
            self.last_sign[l] = sign;
            let e = self.elasticity[l].max(ELASTICITY_MIN);
            let step = (self.gain[l] * err / e).clamp(-MAX_DOWN, MAX_UP);
            st.p[l] = (st.p[l] * step.exp()).clamp(P_MIN, P_MAX);
        }
    }
}

/// ∂ ln q / ∂ ln p: the share of a path's loss q that one of its links (loss p) makes.
#[inline]
fn share_of_loss(p: f64, q: f64) -> f64 {
    (p * (1.0 - q) / ((1.0 - p) * q)).min(1.0)
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

    /// A random two-tier fabric: `hosts_per_leaf` hosts under each of `leaves` leaves,
    /// every leaf joined to every one of `spines` spines by one link each way, all links
    /// 1 Gbit/s (so the core is oversubscribed when hosts_per_leaf > spines). Connections
    /// form a random permutation; each has 1–4 subflows on random spines, is coupled
    /// (LIA) or not at random, and has a random round-trip time per subflow.
    struct Fabric {
        capacity: Vec<f64>,
        paths: Paths,
        rtt: Vec<f64>,
        bits: Vec<f64>,
        coupled: Vec<bool>,
    }

    fn fabric(seed: u64, leaves: u32, spines: u32, hosts_per_leaf: u32) -> Fabric {
        let mut x = seed;
        let mut draw = |n: u32| (crate::engine::rng::splitmix64(&mut x) % n as u64) as u32;
        let hosts = leaves * hosts_per_leaf;
        // Links: host up (h), host down (hosts + h), leaf→spine, spine→leaf.
        let up = |l: u32, s: u32| 2 * hosts + l * spines + s;
        let down = |s: u32, l: u32| 2 * hosts + leaves * spines + l * spines + s;
        let capacity = vec![1e9; (2 * hosts + 2 * leaves * spines) as usize];
        let mut dst: Vec<u32> = (0..hosts).collect();
        for i in (1..hosts as usize).rev() {
            dst.swap(i, draw(i as u32 + 1) as usize);
        }
        let mut paths = Paths::new();
        let (mut rtt, mut coupled) = (Vec::new(), Vec::new());
        for (src, &dst) in dst.iter().enumerate() {
            let src = src as u32;
            let (a, b) = (src / hosts_per_leaf, dst / hosts_per_leaf);
            let subflows = 1 + draw(4);
            let subs: Vec<Vec<u32>> = (0..subflows)
                .map(|_| {
                    if a == b {
                        vec![src, hosts + dst]
                    } else {
                        let s = draw(spines);
                        vec![src, up(a, s), down(s, b), hosts + dst]
                    }
                })
                .collect();
            rtt.extend((0..subflows).map(|_| (100 + draw(200)) as f64 * 1e-6));
            coupled.push(draw(4) != 0);
            paths.push_connection(&subs);
        }
        Fabric {
            capacity,
            bits: vec![12_000.0; paths.n_connections()],
            paths,
            rtt,
            coupled,
        }
    }

    impl Fabric {
        fn problem(&self) -> Problem<'_> {
            problem(
                &self.capacity,
                &self.paths,
                &self.rtt,
                &self.bits,
                &self.coupled,
            )
        }
    }

    /// The per-link multiplicative update the model used before its Newton steps:
    /// p ← p · (y(1 − p)/C)^η, η = 1/2 up and 4 down. The same fixed point, reached
    /// slowly; a reference for the Newton iteration's answers.
    fn solve_multiplicative(pb: &Problem, max_iterations: u32, tolerance: f64) -> Solution {
        iterate(
            pb,
            max_iterations,
            tolerance,
            u32::MAX,
            |_| true,
            |s| {
                for l in 0..s.p.len() {
                    if s.load[l] > 0.0 {
                        let ratio = s.load[l] * (1.0 - s.p[l]) / pb.capacity[l];
                        let eta = if ratio < 1.0 { 4.0 } else { 0.5 };
                        s.p[l] = (s.p[l] * ratio.powf(eta)).clamp(P_MIN, P_MAX);
                    }
                }
            },
        )
        .0
    }

    fn connection_goodput(paths: &Paths, sol: &Solution) -> Vec<f64> {
        (0..paths.n_connections())
            .map(|c| paths.subflows_of(c).map(|s| sol.delivered[s]).sum())
            .collect()
    }

    #[test]
    fn newton_steps_reach_the_multiplicative_fixed_point_in_far_fewer_iterations() {
        for seed in 1..=4 {
            let f = fabric(seed, 8, 2, 4);
            let pb = f.problem();
            let old = solve_multiplicative(&pb, 200_000, 1e-4);
            let new = solve(&pb, 200_000, 1e-4);
            assert!(old.converged && new.converged, "seed {seed}");
            let (a, b) = (
                connection_goodput(&f.paths, &old),
                connection_goodput(&f.paths, &new),
            );
            for (c, (x, y)) in a.iter().zip(&b).enumerate() {
                assert!(
                    (y / x - 1.0).abs() < 0.01,
                    "seed {seed} connection {c}: {x} vs {y}"
                );
            }
            assert!(
                new.iterations * 4 < old.iterations,
                "seed {seed}: {} vs {} iterations",
                new.iterations,
                old.iterations
            );
        }
    }

    #[test]
    fn the_iteration_is_deterministic() {
        let f = fabric(7, 8, 2, 4);
        let (a, b) = (
            solve(&f.problem(), 10_000, 1e-4),
            solve(&f.problem(), 10_000, 1e-4),
        );
        assert_eq!(a.iterations, b.iterations);
        assert!(a
            .rate
            .iter()
            .zip(&b.rate)
            .all(|(x, y)| x.to_bits() == y.to_bits()));
        assert!(a
            .loss
            .iter()
            .zip(&b.loss)
            .all(|(x, y)| x.to_bits() == y.to_bits()));
    }
}
