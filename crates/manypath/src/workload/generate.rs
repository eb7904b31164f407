//! Traffic patterns: who sends to whom, when, and how much.

use super::SizeDist;
use crate::engine::Rng;
use crate::time::{SimTime, PS_PER_S};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// Every host sends to one other, each host receiving from exactly one.
    Permutation,
    /// Uniformly random source and destination (distinct).
    RandomPairs,
    /// Several senders to one receiver, optionally repeated as numbered jobs.
    Incast,
    /// Every ordered pair of distinct hosts.
    AllToAll,
    /// One explicit source and destination.
    Pair,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Arrival {
    /// All flows start at the pattern's start (plus any stagger).
    AtStart,
    /// Poisson arrivals, `rate_per_s` flows per second in total, until `until`.
    Poisson { rate_per_s: f64 },
}

/// One validated traffic entry of a scenario.
#[derive(Clone, Debug)]
pub struct TrafficGen {
    pub pattern: Pattern,
    /// Hosts the pattern draws sources and destinations from.
    pub hosts: Vec<u32>,
    pub size: SizeDist,
    pub transport: u16,
    pub class: u16,
    pub priority: u8,
    pub start: SimTime,
    pub arrival: Arrival,
    pub until: SimTime,
    /// Number of flows for `random_pairs` started at once, or a cap on Poisson arrivals.
    pub flows: Option<u32>,
    pub receiver: u32,
    pub senders: Vec<u32>,
    pub stagger: SimTime,
    pub repeat: u32,
    /// Between repetitions: the time from one start to the next, or, closed loop, the
    /// think time from a flow's finish to its successor's start.
    pub interval: SimTime,
    /// Each sender's next repetition waits for its previous flow to finish.
    pub closed_loop: bool,
    pub src: u32,
    pub dst: u32,
}

/// A flow to start.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlowSpec {
    pub src: u32,
    pub dst: u32,
    /// Bytes, or `None` for a long-lived flow.
    pub size: Option<u64>,
    pub start: SimTime,
    pub transport: u16,
    pub class: u16,
    pub priority: u8,
    /// Job number for incast repetitions, -1 otherwise.
    pub job: i64,
    /// Closed loop: the flow (index in the run's flow list) whose finish starts this
    /// one; `start` then holds the think time after that finish.
    pub after: Option<u32>,
}

/// A random permutation of `hosts` without fixed points (every host sends elsewhere).
pub fn derangement(hosts: &[u32], rng: &mut Rng) -> Vec<u32> {
    let n = hosts.len();
    let mut perm: Vec<usize> = (0..n).collect();
    if n < 2 {
        return hosts.to_vec();
    }
    rng.shuffle(&mut perm);
    // Break fixed points by swapping with a neighbour: keeps it a permutation.
    for i in 0..n {
        if perm[i] == i {
            let j = (i + 1) % n;
            perm.swap(i, j);
        }
    }
    perm.into_iter().map(|i| hosts[i]).collect()
}

impl TrafficGen {
    fn flow(&self, src: u32, dst: u32, start: SimTime, job: i64, rng: &mut Rng) -> FlowSpec {
        FlowSpec {
            src,
            dst,
            size: self.size.sample(rng),
            start,
            transport: self.transport,
            class: self.class,
            priority: self.priority,
            job,
            after: None,
        }
    }

    /// A repetition `r` > 0 of a closed loop follows the same sender's flow of the
    /// repetition before, `per_rep` entries back in the flow list.
    fn chain(&self, mut f: FlowSpec, r: u32, index: usize, per_rep: usize) -> FlowSpec {
        if self.closed_loop && r > 0 {
            f.after = Some((index - per_rep) as u32);
            f.start = self.interval;
        }
        f
    }

    /// Start of the `i`-th flow of a batch beginning at `t0`.
    fn staggered(&self, t0: SimTime, i: u64) -> SimTime {
        t0.saturating_add(i.saturating_mul(self.stagger))
    }

    fn random_other(&self, src: u32, rng: &mut Rng) -> u32 {
        loop {
            let d = self.hosts[rng.below(self.hosts.len() as u64) as usize];
            if d != src {
                return d;
            }
        }
    }

    /// Appends this entry's flows to `out`. `next_job` numbers incast jobs across entries.
    pub fn generate(&self, rng: &mut Rng, next_job: &mut i64, out: &mut Vec<FlowSpec>) {
        match (self.pattern, self.arrival) {
            (Pattern::Permutation, Arrival::AtStart) => {
                let perm = derangement(&self.hosts, rng);
                for (i, &src) in self.hosts.iter().enumerate() {
                    let f = self.flow(src, perm[i], self.staggered(self.start, i as u64), -1, rng);
                    out.push(f);
                }
            }
            (Pattern::RandomPairs, Arrival::AtStart) => {
                for i in 0..self.flows.unwrap_or(1) {
                    let src = self.hosts[rng.below(self.hosts.len() as u64) as usize];
                    let dst = self.random_other(src, rng);
                    out.push(self.flow(src, dst, self.staggered(self.start, i as u64), -1, rng));
                }
            }
            (Pattern::AllToAll, Arrival::AtStart) => {
                let mut i = 0;
                for &src in &self.hosts {
                    for &dst in &self.hosts {
                        if src != dst {
                            out.push(self.flow(
                                src,
                                dst,
                                self.staggered(self.start, i as u64),
                                -1,
                                rng,
                            ));
                            i += 1;
                        }
                    }
                }
            }
            (Pattern::Incast, Arrival::AtStart) => {
                for r in 0..self.repeat {
                    let job = *next_job;
                    *next_job += 1;
                    let t0 = if self.closed_loop {
                        self.start
                    } else {
                        self.start
                            .saturating_add((r as u64).saturating_mul(self.interval))
                    };
                    for (i, &src) in self.senders.iter().enumerate() {
                        let f =
                            self.flow(src, self.receiver, self.staggered(t0, i as u64), job, rng);
                        out.push(self.chain(f, r, out.len(), self.senders.len()));
                    }
                }
            }
            (Pattern::Pair, Arrival::AtStart) => {
                for r in 0..self.repeat {
                    let start = if self.closed_loop {
                        self.start
                    } else {
                        self.start
                            .saturating_add((r as u64).saturating_mul(self.interval))
                    };
                    let f = self.flow(self.src, self.dst, start, -1, rng);
                    out.push(self.chain(f, r, out.len(), 1));
                }
            }
            (pattern, Arrival::Poisson { rate_per_s }) => {
                let perm = if pattern == Pattern::Permutation {
                    derangement(&self.hosts, rng)
                } else {
                    Vec::new()
                };
                let mean_gap = PS_PER_S as f64 / rate_per_s;
                let mut t = self.start as f64;
                let cap = self.flows.unwrap_or(u32::MAX);
                let mut n = 0;
                loop {
                    t += rng.exponential(mean_gap);
                    if t >= self.until as f64 || n >= cap {
                        break;
                    }
                    let start = t as SimTime;
                    let (src, dst) = match pattern {
                        Pattern::Permutation => {
                            let i = rng.below(self.hosts.len() as u64) as usize;
                            (self.hosts[i], perm[i])
                        }
                        Pattern::Incast => (
                            self.senders[rng.below(self.senders.len() as u64) as usize],
                            self.receiver,
                        ),
                        Pattern::Pair => (self.src, self.dst),
                        _ => {
                            let src = self.hosts[rng.below(self.hosts.len() as u64) as usize];
                            (src, self.random_other(src, rng))
                        }
                    };
                    out.push(self.flow(src, dst, start, -1, rng));
                    n += 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gen(pattern: Pattern) -> TrafficGen {
        TrafficGen {
            pattern,
            hosts: (0..8).collect(),
            size: SizeDist::Fixed(1000),
            transport: 0,
            class: 0,
            priority: 0,
            start: 0,
            arrival: Arrival::AtStart,
            until: PS_PER_S,
            flows: None,
            receiver: 0,
            senders: (1..8).collect(),
            stagger: 0,
            repeat: 1,
            interval: 0,
            closed_loop: false,
            src: 0,
            dst: 1,
        }
    }

    #[test]
    fn closed_loop_chains_each_senders_repetitions() {
        let g = TrafficGen {
            repeat: 3,
            closed_loop: true,
            senders: vec![1, 2],
            ..gen(Pattern::Incast)
        };
        let mut out = vec![gen(Pattern::Pair).flow(0, 1, 0, -1, &mut Rng::new(1, 0, 0))];
        g.generate(&mut Rng::new(1, 0, 0), &mut 0, &mut out);
        let after: Vec<_> = out.iter().map(|f| f.after).collect();
        // Indices are global: the entry's flows start at 1.
        assert_eq!(
            after,
            [None, None, None, Some(1), Some(2), Some(3), Some(4)]
        );
        assert!(out[1..].iter().all(|f| f.src == 1 || f.src == 2));
        assert_eq!(out[3].src, out[1].src);
    }

    #[test]
    fn permutation_has_no_fixed_point_and_each_host_receives_once() {
        for seed in 0..50 {
            let mut out = Vec::new();
            gen(Pattern::Permutation).generate(&mut Rng::new(seed, 0, 0), &mut 0, &mut out);
            let mut dsts: Vec<u32> = out.iter().map(|f| f.dst).collect();
            assert!(out.iter().all(|f| f.src != f.dst));
            dsts.sort();
            assert_eq!(dsts, (0..8).collect::<Vec<_>>());
        }
    }

    #[test]
    fn incast_repeats_as_jobs_with_stagger() {
        let mut g = gen(Pattern::Incast);
        g.repeat = 3;
        g.interval = 1000;
        g.stagger = 10;
        let mut out = Vec::new();
        let mut job = 5;
        g.generate(&mut Rng::new(1, 0, 0), &mut job, &mut out);
        assert_eq!(out.len(), 21);
        assert_eq!(job, 8);
        assert_eq!(out[7].job, 6);
        assert_eq!(out[7].start, 1000);
        assert_eq!(out[8].start, 1010);
        assert!(out.iter().all(|f| f.dst == 0));
    }

    #[test]
    fn poisson_rate_is_respected() {
        let mut g = gen(Pattern::RandomPairs);
        g.arrival = Arrival::Poisson {
            rate_per_s: 10_000.0,
        };
        let mut out = Vec::new();
        g.generate(&mut Rng::new(2, 0, 0), &mut 0, &mut out);
        assert!((out.len() as f64 - 10_000.0).abs() < 400.0, "{}", out.len());
        assert!(out.windows(2).all(|w| w[0].start <= w[1].start));
    }

    #[test]
    fn all_to_all_covers_every_ordered_pair() {
        let mut out = Vec::new();
        gen(Pattern::AllToAll).generate(&mut Rng::new(2, 0, 0), &mut 0, &mut out);
        assert_eq!(out.len(), 56);
    }
}
