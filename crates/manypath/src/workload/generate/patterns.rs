//! Each pattern's flows: who sends to whom, at the start (with repetitions and stagger)
//! or as Poisson arrivals. The requests pattern is drawn in `requests.rs`, jobs in
//! `jobs.rs`.

use super::{Arrival, ConnSpec, FlowSpec, TrafficGen};
use crate::engine::Rng;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// The pattern of a traffic entry: the name a scenario gives it (`pattern = "incast"`)
// and what the generator draws, one enum for both. Its doc comments are the JSON
// schema's descriptions (`PatternSpec`), so notes for the generator are plain comments.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "PatternSpec")]
pub enum Pattern {
    // Every host sends to one other, each host receiving from exactly one.
    Permutation,
    // Uniformly random source and destination (distinct).
    RandomPairs,
    // Several senders to one receiver, optionally repeated as numbered jobs.
    Incast,
    // Every ordered pair of distinct hosts.
    AllToAll,
    // One explicit source and destination.
    Pair,
    /// Clients request data from servers over persistent connections (see `requests`).
    // The flows go from a server to a client, each on one of the pair's connections
    // (`RequestsGen`).
    Requests,
    /// Every host sends to a random other host of the entry, drawn anew for each flow;
    /// with `repeat` and `closed_loop`, each host's flows follow one another back to back.
    EachToRandom,
    /// Closed-loop partition–aggregate jobs, e.g. distributed reads (see `jobs`).
    // See `JobsGen`.
    Jobs,
    /// The connections of a connection-matrix file in htsim's format (`file`): flows
    /// that start at a time or when a trigger fires (another flow's send-done or
    /// receive-done).
    // See `MatrixGen`.
    Matrix,
    /// A collective operation (all-reduce, all-gather, reduce-scatter, all-to-all,
    /// broadcast) by a chosen algorithm over ranks placed on hosts: its steps are flows
    /// that start when the data they need has arrived.
    // Generated as a `MatrixGen` (`collective`).
    Collective,
    /// The operations of a GOAL schedule (`file`, LogGOPSim's and ATLAHS's format): its
    /// ranks' sends and receives, matched, as flows between the ranks' hosts, started as
    /// their dependencies and computations allow.
    // See `GoalGen`.
    Goal,
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
    /// `generate` for the patterns whose flows have connections of their own.
    pub(super) fn generate_flows(
        &self,
        rng: &mut Rng,
        next_job: &mut i64,
        out: &mut Vec<FlowSpec>,
        conns: &mut Vec<ConnSpec>,
    ) {
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
                    let t0 = self.repetition_start(r);
                    for (i, &src) in self.senders.iter().enumerate() {
                        let f =
                            self.flow(src, self.receiver, self.staggered(t0, i as u64), job, rng);
                        out.push(self.chain(f, r, out.len(), self.senders.len()));
                    }
                }
            }
            (Pattern::Pair, Arrival::AtStart) => {
                for r in 0..self.repeat {
                    let start = self.repetition_start(r);
                    let f = self.flow(self.src, self.dst, start, -1, rng);
                    out.push(self.chain(f, r, out.len(), 1));
                }
            }
            (Pattern::EachToRandom, Arrival::AtStart) => {
                for r in 0..self.repeat {
                    let t0 = self.repetition_start(r);
                    for (i, &src) in self.hosts.iter().enumerate() {
                        let dst = self.random_other(src, rng);
                        let f = self.flow(src, dst, self.staggered(t0, i as u64), -1, rng);
                        out.push(self.chain(f, r, out.len(), self.hosts.len()));
                    }
                }
            }
            (Pattern::Jobs, Arrival::AtStart) => {
                if let Some(j) = self.jobs {
                    self.generate_jobs(&j, rng, next_job, out);
                }
            }
            // Handled by `generate_requests`.
            (Pattern::Requests, Arrival::AtStart) => {}
            // Validation gives a matrix no Poisson arrivals: its file has the starts.
            (Pattern::Matrix | Pattern::Collective, _) => {
                if let Some(m) = &self.matrix {
                    m.generate(self, out, conns);
                }
            }
            // Likewise: the schedule gives the flows and what starts them.
            (Pattern::Goal, _) => {
                if let Some(m) = &self.goal {
                    m.generate(self, out);
                }
            }
            (pattern, Arrival::Poisson { rate_per_s }) => {
                let perm = if pattern == Pattern::Permutation {
                    derangement(&self.hosts, rng)
                } else {
                    Vec::new()
                };
                let mut clock = self.poisson_clock(rate_per_s);
                let mut n = 0;
                while let Some(start) = clock.next(rng, n) {
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
                        // Validation gives all_to_all and jobs no Poisson arrivals, and
                        // requests are generated apart (`generate_requests`).
                        Pattern::RandomPairs
                        | Pattern::EachToRandom
                        | Pattern::AllToAll
                        | Pattern::Jobs
                        | Pattern::Requests
                        | Pattern::Matrix
                        | Pattern::Collective
                        | Pattern::Goal => {
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
    use super::super::tests::gen;
    use super::*;
    use crate::engine::Rng;

    #[test]
    fn permutation_has_no_fixed_point_and_each_host_receives_once() {
        for seed in 0..50 {
            let mut out = Vec::new();
            gen(Pattern::Permutation).generate(
                &mut Rng::new(seed, 0, 0),
                &mut 0,
                &mut out,
                &mut Vec::new(),
            );
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
        g.generate(&mut Rng::new(1, 0, 0), &mut job, &mut out, &mut Vec::new());
        assert_eq!(out.len(), 21);
        assert_eq!(job, 8);
        assert_eq!(out[7].job, 6);
        assert_eq!(out[7].start, 1000);
        assert_eq!(out[8].start, 1010);
        assert!(out.iter().all(|f| f.dst == 0));
    }

    #[test]
    fn each_to_random_redraws_destinations_and_chains_each_host() {
        let g = TrafficGen {
            repeat: 20,
            closed_loop: true,
            ..gen(Pattern::EachToRandom)
        };
        let mut out = Vec::new();
        g.generate(&mut Rng::new(5, 0, 0), &mut 0, &mut out, &mut Vec::new());
        assert_eq!(out.len(), 8 * 20);
        for (i, f) in out.iter().enumerate() {
            assert_ne!(f.src, f.dst);
            assert_eq!(f.src, (i % 8) as u32);
            assert_eq!(f.after, (i >= 8).then(|| (i - 8) as u32));
        }
        let host0: std::collections::BTreeSet<u32> =
            out.iter().filter(|f| f.src == 0).map(|f| f.dst).collect();
        assert!(host0.len() >= 5, "destinations are redrawn: {host0:?}");
    }

    #[test]
    fn all_to_all_covers_every_ordered_pair() {
        let mut out = Vec::new();
        gen(Pattern::AllToAll).generate(&mut Rng::new(2, 0, 0), &mut 0, &mut out, &mut Vec::new());
        assert_eq!(out.len(), 56);
    }
}
