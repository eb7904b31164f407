//! A traffic entry's generator (`TrafficGen`): the flows it starts and the persistent
//! connections they ride, drawn from the entry's own random stream before the run.
//! This file holds what every pattern shares (the flow records, sizes and the size
//! split, repetitions and stagger, Poisson arrival times, connection pools); each
//! pattern's own drawing is in `patterns.rs`, the requests workload's persistent
//! connections in `requests.rs` and closed-loop jobs in `jobs.rs`.

mod collective;
mod goal;
mod jobs;
mod matrix;
mod patterns;
mod requests;

pub use collective::{
    Algorithm, Collective, CollectiveRun, CollectiveSpec, Shape, Transfer, ALGORITHMS, COLLECTIVES,
};
pub use goal::{GoalFlow, GoalGen};
pub use jobs::JobsGen;
pub use matrix::{place, CollectiveJob, CollectiveTag, MatrixConn, MatrixGen};
pub use patterns::{derangement, Pattern};
pub use requests::{ConnPick, RequestsGen};

use super::SizeDist;
use crate::engine::Rng;
use crate::time::{SimTime, PS_PER_S};
use std::collections::HashMap;
use std::sync::Arc;

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
    /// No flow of the entry starts from this time on (`arrivals_until_ms`): Poisson
    /// arrivals end there (`until` is no later), and repetitions and staggered starts
    /// at or after it are not generated.
    pub arrivals_until: Option<SimTime>,
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
    /// `Requests`: who asks and who answers, and how the requests are carried.
    pub requests: Option<RequestsGen>,
    /// `Jobs`: the shape of each job.
    pub jobs: Option<JobsGen>,
    /// Flows of at least this many bytes take another transport and class.
    pub split: Option<SizeSplit>,
    /// Each flow takes an idle connection of its (source, destination, transport) pool
    /// or opens one that joins it (`ConnPick::Idle`, as for requests).
    pub connection_pool: bool,
    /// `Matrix`: the connection matrix.
    pub matrix: Option<Arc<MatrixGen>>,
    /// `Goal`: the GOAL schedule, as flows and triggers.
    pub goal: Option<Arc<GoalGen>>,
}

/// Flows of at least `at` bytes use `transport` and are labelled `class` (a workload whose
/// large flows run another protocol than its small ones).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SizeSplit {
    pub at: u64,
    pub transport: u16,
    pub class: u16,
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
    /// The persistent connection (index in the run's connection list) that carries this
    /// flow; `None`: the flow has a connection of its own.
    pub conn: Option<u32>,
    /// Closed-loop jobs: the job whose every flow must finish before this one starts;
    /// `start` then holds the think time after that job's end.
    pub after_job: Option<i64>,
    /// The triggers this flow waits for and activates (traffic as a dependency graph).
    pub deps: Deps,
}

/// A flow's place in a dependency graph of triggers (`Trigger`): indices in the run's
/// trigger list (`Plan::triggers`), `None` where it has none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Deps {
    /// The trigger that starts this flow; `FlowSpec::start` then holds the delay from
    /// its firing to the start (compute time).
    pub wait: Option<u32>,
    /// The trigger its send-done (last byte acknowledged: its finish) activates.
    pub on_send_done: Option<u32>,
    /// The trigger its receive-done (last byte delivered to the receiver) activates.
    pub on_recv_done: Option<u32>,
    /// The flow's id in the connection-matrix file it comes from.
    pub matrix_id: Option<u32>,
    /// A collective's flow: which run of which collective, and its step.
    pub collective: Option<CollectiveStep>,
}

/// A flow's place in a collective: the collective's index in the run's list
/// (`Plan::collectives`: one per job and iteration) and the algorithm's step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CollectiveStep {
    pub instance: u32,
    pub step: u16,
}

/// What a trigger does when activated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TriggerKind {
    /// Fires on its first activation, starting every flow that waits for it; later
    /// activations do nothing.
    Oneshot,
    /// Each activation starts the next flow waiting for it, in the order of the flows.
    Multishot,
    /// Fires after `count` activations, starting every flow that waits for it.
    Barrier { count: u32 },
}

/// A trigger of the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Trigger {
    pub kind: TriggerKind,
    /// The id its traffic entry gives it (a connection matrix's trigger id), for
    /// messages.
    pub id: u32,
}

/// A trigger's firing activates another trigger `delay` later (a GOAL operation's start
/// or completion passed on to the operations that wait for it, a computation's time in
/// between). Indices in the run's trigger list (`Plan::triggers`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TriggerLink {
    pub from: u32,
    pub to: u32,
    pub delay: SimTime,
}

/// A persistent connection the run opens at `start` and keeps; flows are messages on it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ConnSpec {
    /// The data sender (the server of a request).
    pub src: u32,
    pub dst: u32,
    pub transport: u16,
    pub priority: u8,
    pub start: SimTime,
    /// With `ConnPick::Idle` or `connection_pool`: the pool (client–server pair and
    /// request kind, or source, destination and transport; numbered within the traffic
    /// entry) whose flows may take this connection.
    pub pool: Option<u32>,
    /// Not opened at `start`: opened by the flow it was drawn with if that flow finds
    /// no idle connection in its pool, else never.
    pub on_demand: bool,
}

impl ConnSpec {
    /// The connection drawn with flow `f` of pool `pool`, should the pool have none
    /// idle when `f` starts.
    fn on_demand(f: &FlowSpec, pool: u32) -> ConnSpec {
        ConnSpec {
            src: f.src,
            dst: f.dst,
            transport: f.transport,
            priority: f.priority,
            start: f.start,
            pool: Some(pool),
            on_demand: true,
        }
    }
}

/// Puts `flows` (one traffic entry's, every one with a size) on connection pools, one per
/// (source, destination, transport): each flow is drawn a connection of its own that
/// opens only if its pool has none idle when it starts (`ConnPick::Idle`).
fn pool_flows(flows: &mut [FlowSpec], conns: &mut Vec<ConnSpec>) {
    let mut pools: HashMap<(u32, u32, u16), u32> = HashMap::new();
    for f in flows {
        let next = pools.len() as u32;
        let pool = *pools.entry((f.src, f.dst, f.transport)).or_insert(next);
        conns.push(ConnSpec::on_demand(f, pool));
        f.conn = Some(conns.len() as u32 - 1);
    }
}

impl TrafficGen {
    fn flow(&self, src: u32, dst: u32, start: SimTime, job: i64, rng: &mut Rng) -> FlowSpec {
        let size = self.size.sample(rng);
        let (transport, class) = match self.split {
            Some(s) if size.is_none_or(|b| b >= s.at) => (s.transport, s.class),
            _ => (self.transport, self.class),
        };
        FlowSpec {
            src,
            dst,
            size,
            start,
            transport,
            class,
            priority: self.priority,
            job,
            after: None,
            conn: None,
            after_job: None,
            deps: Deps::default(),
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

    /// Start of repetition `r`: `interval` apart, or all at the entry's start when closed
    /// loops chain them instead.
    fn repetition_start(&self, r: u32) -> SimTime {
        if self.closed_loop {
            self.start
        } else {
            self.start
                .saturating_add((r as u64).saturating_mul(self.interval))
        }
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

    /// Appends this entry's flows to `out`, and its persistent connections to `conns`.
    /// `next_job` numbers incast jobs across entries.
    pub fn generate(
        &self,
        rng: &mut Rng,
        next_job: &mut i64,
        out: &mut Vec<FlowSpec>,
        conns: &mut Vec<ConnSpec>,
    ) {
        if let Some(r) = &self.requests {
            match r.fanout {
                Some(n) => self.generate_fanout(r, n, rng, next_job, out, conns),
                None => self.generate_requests(r, rng, out, conns),
            }
            return;
        }
        let first = out.len();
        self.generate_flows(rng, next_job, out, conns);
        if let Some(until) = self.arrivals_until {
            // Open-loop flows only (validation keeps closed loops and jobs out), so no
            // flow refers to another by index.
            let entry = out.split_off(first);
            out.extend(entry.into_iter().filter(|f| f.start < until));
        }
        if self.connection_pool {
            pool_flows(&mut out[first..], conns);
        }
    }
}

/// Poisson arrival times from an entry's start until its end or its flow cap.
struct PoissonClock {
    t: f64,
    mean_gap: f64,
    until: f64,
    cap: u32,
}

impl PoissonClock {
    /// The next arrival, if before the end and fewer than the cap of flows were drawn.
    fn next(&mut self, rng: &mut Rng, drawn: u32) -> Option<SimTime> {
        self.t += rng.exponential(self.mean_gap);
        (self.t < self.until && drawn < self.cap).then_some(self.t as SimTime)
    }
}

impl TrafficGen {
    fn poisson_clock(&self, rate_per_s: f64) -> PoissonClock {
        PoissonClock {
            t: self.start as f64,
            mean_gap: PS_PER_S as f64 / rate_per_s,
            until: self.until as f64,
            cap: self.flows.unwrap_or(u32::MAX),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An entry of `pattern` over hosts 0..8 (incast: to host 0 from the others; pair:
    /// 0 to 1), flows of 1,000 bytes, all at the start.
    pub(super) fn gen(pattern: Pattern) -> TrafficGen {
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
            arrivals_until: None,
            flows: None,
            receiver: 0,
            senders: (1..8).collect(),
            stagger: 0,
            repeat: 1,
            interval: 0,
            closed_loop: false,
            src: 0,
            dst: 1,
            requests: None,
            jobs: None,
            split: None,
            connection_pool: false,
            matrix: None,
            goal: None,
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
        g.generate(&mut Rng::new(1, 0, 0), &mut 0, &mut out, &mut Vec::new());
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
    fn poisson_rate_is_respected() {
        let mut g = gen(Pattern::RandomPairs);
        g.arrival = Arrival::Poisson {
            rate_per_s: 10_000.0,
        };
        let mut out = Vec::new();
        g.generate(&mut Rng::new(2, 0, 0), &mut 0, &mut out, &mut Vec::new());
        assert!((out.len() as f64 - 10_000.0).abs() < 400.0, "{}", out.len());
        assert!(out.windows(2).all(|w| w[0].start <= w[1].start));
    }

    #[test]
    fn size_split_moves_large_flows_to_another_transport_and_class() {
        let g = TrafficGen {
            size: SizeDist::Uniform { min: 0, max: 200 },
            flows: Some(2000),
            split: Some(SizeSplit {
                at: 100,
                transport: 4,
                class: 5,
            }),
            ..gen(Pattern::RandomPairs)
        };
        let mut out = Vec::new();
        g.generate(&mut Rng::new(6, 0, 0), &mut 0, &mut out, &mut Vec::new());
        let large = out.iter().filter(|f| f.size.unwrap() >= 100).count();
        assert!((800..1200).contains(&large), "{large}");
        for f in &out {
            let big = f.size.unwrap() >= 100;
            assert_eq!((f.transport, f.class), if big { (4, 5) } else { (0, 0) });
        }
    }
}
