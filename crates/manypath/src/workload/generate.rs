//! Traffic patterns: who sends to whom, when, and how much.

use super::SizeDist;
use crate::engine::Rng;
use crate::time::{SimTime, PS_PER_S};
use std::collections::HashMap;

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
    /// Clients requesting data from servers over persistent connections: the flows go
    /// from a server to a client, each on one of the pair's long-lived connections.
    Requests,
    /// Every host sends to a random other host, drawn anew for each flow (and each
    /// repetition).
    EachToRandom,
    /// Closed-loop partition–aggregate jobs (distributed reads): see `JobsGen`.
    Jobs,
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
}

/// Flows of at least `at` bytes use `transport` and are labelled `class` (a workload whose
/// large flows run another protocol than its small ones).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SizeSplit {
    pub at: u64,
    pub transport: u16,
    pub class: u16,
}

/// Closed-loop partition–aggregate jobs, as a client reading a striped file does: each of
/// `parallel` job slots runs `repeat` jobs one after another. A job picks a random client
/// and `fanout` distinct random servers among the entry's hosts; the client sends each
/// server a request of `request_bytes` (a flow of its own), and each server answers with
/// a flow of the entry's size when its request flow has finished (every byte
/// acknowledged). The job ends when
/// every answer has arrived; the slot's next job starts `interval` later. All flows of a
/// job carry its number, so its completion time is its last finish minus its first start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobsGen {
    pub parallel: u32,
    pub fanout: u32,
    /// 0: no request flows; the answers start at the job's start.
    pub request_bytes: u64,
    pub request_class: u16,
}

/// The client/server request workload (the FUSO document's benchmark application):
/// every client keeps `connections` persistent connections to every server for its
/// latency-sensitive requests, and as many for its background requests (those of at
/// least `background_above` bytes, on their own transport); requests of each kind go
/// round robin over the pair's connections of that kind, or (`ConnPick::Idle`) to one
/// with nothing left to deliver.
#[derive(Clone, Debug, PartialEq)]
pub struct RequestsGen {
    pub clients: Vec<u32>,
    pub servers: Vec<u32>,
    pub connections: u32,
    pub pick: ConnPick,
    /// Sizes are drawn below this bound (the distribution conditioned on it).
    pub sizes_below: Option<u64>,
    /// Requests of at least this many bytes are background requests.
    pub background_above: Option<u64>,
    pub background_transport: u16,
    pub background_class: u16,
    /// Partition–aggregate: each request goes to this many server applications at once
    /// (application i on `servers[i % servers.len()]`, each with its own connections),
    /// and the responses form one job. `None`: each request goes to one random server.
    pub fanout: Option<u32>,
}

/// How a response picks one of its client–server pair's persistent connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnPick {
    /// The pair's connections in turn, fixed when the workload is drawn: a response may
    /// wait behind the one before it on its connection.
    RoundRobin,
    /// When the response starts: the first of the pair's open connections with nothing
    /// left to deliver or, when none is, a new one that then stays open with the others
    /// (as the Homa authors' ns-2 traffic generator keeps its connections:
    /// `docs/references.md`). Each response is drawn with a connection of its own
    /// (`ConnSpec::on_demand`) for the case that none is idle.
    Idle,
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
        self.generate_flows(rng, next_job, out);
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

    /// `generate` for the patterns whose flows have connections of their own.
    fn generate_flows(&self, rng: &mut Rng, next_job: &mut i64, out: &mut Vec<FlowSpec>) {
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
                        | Pattern::Requests => {
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

    /// A size for the requests pattern: the entry's distribution, conditioned on
    /// `sizes_below` when set.
    fn request_size(&self, r: &RequestsGen, rng: &mut Rng) -> u64 {
        loop {
            let s = self.size.sample(rng).unwrap_or(u64::MAX);
            if r.sizes_below.is_none_or(|b| s < b) {
                return s;
            }
        }
    }

    fn generate_requests(
        &self,
        r: &RequestsGen,
        rng: &mut Rng,
        out: &mut Vec<FlowSpec>,
        conns: &mut Vec<ConnSpec>,
    ) {
        let kinds = if r.background_above.is_some() { 2 } else { 1 };
        let per_pair = kinds * r.connections as usize;
        // The first connection of each (client, server) pair; none for a host and itself.
        let mut first = vec![u32::MAX; r.clients.len() * r.servers.len()];
        for (ci, &client) in r.clients.iter().enumerate() {
            for (si, &server) in r.servers.iter().enumerate() {
                if server == client {
                    continue;
                }
                first[ci * r.servers.len() + si] = conns.len() as u32;
                for kind in 0..kinds {
                    let transport = if kind == 0 {
                        self.transport
                    } else {
                        r.background_transport
                    };
                    let pool = (r.pick == ConnPick::Idle)
                        .then_some(((ci * r.servers.len() + si) * kinds + kind) as u32);
                    for _ in 0..r.connections {
                        conns.push(ConnSpec {
                            src: server,
                            dst: client,
                            transport,
                            priority: self.priority,
                            start: 0,
                            pool,
                            on_demand: false,
                        });
                    }
                }
            }
        }
        let Arrival::Poisson { rate_per_s } = self.arrival else {
            return;
        };
        let mut next_slot = vec![0u32; first.len() * kinds];
        let mut clock = self.poisson_clock(rate_per_s);
        let mut n = 0;
        while let Some(start) = clock.next(rng, n) {
            let ci = rng.below(r.clients.len() as u64) as usize;
            let si = loop {
                let si = rng.below(r.servers.len() as u64) as usize;
                if r.servers[si] != r.clients[ci] {
                    break si;
                }
            };
            let pair = ci * r.servers.len() + si;
            let size = self.request_size(r, rng);
            let background = r.background_above.is_some_and(|b| size >= b);
            let kind = background as usize;
            let mut flow = FlowSpec {
                src: r.servers[si],
                dst: r.clients[ci],
                size: Some(size),
                start,
                // (The kind's transport, as its connections were made.)
                transport: if background {
                    r.background_transport
                } else {
                    self.transport
                },
                class: if background {
                    r.background_class
                } else {
                    self.class
                },
                priority: self.priority,
                job: -1,
                after: None,
                conn: None,
                after_job: None,
            };
            let conn = match r.pick {
                ConnPick::RoundRobin => {
                    let slot = &mut next_slot[pair * kinds + kind];
                    let conn =
                        first[pair] as usize + kind * r.connections as usize + *slot as usize;
                    *slot = (*slot + 1) % r.connections;
                    debug_assert!(conn < first[pair] as usize + per_pair);
                    conn
                }
                ConnPick::Idle => {
                    // The response's own connection, should its pool have none idle.
                    conns.push(ConnSpec::on_demand(&flow, (pair * kinds + kind) as u32));
                    conns.len() - 1
                }
            };
            debug_assert_eq!(conns[conn].transport, flow.transport);
            flow.conn = Some(conn as u32);
            out.push(flow);
            n += 1;
        }
    }
}

impl TrafficGen {
    /// Requests from random clients, each to `fanout` server applications at once; the
    /// responses of one request form a job.
    fn generate_fanout(
        &self,
        r: &RequestsGen,
        fanout: u32,
        rng: &mut Rng,
        next_job: &mut i64,
        out: &mut Vec<FlowSpec>,
        conns: &mut Vec<ConnSpec>,
    ) {
        let apps = fanout as usize;
        let per_app = r.connections as usize;
        // Connections of (client c, application a) start at first[c * apps + a].
        let mut first = Vec::with_capacity(r.clients.len() * apps);
        for &client in &r.clients {
            for a in 0..apps {
                first.push(conns.len() as u32);
                let server = r.servers[a % r.servers.len()];
                for _ in 0..per_app {
                    conns.push(ConnSpec {
                        src: server,
                        dst: client,
                        transport: self.transport,
                        priority: self.priority,
                        start: 0,
                        pool: None,
                        on_demand: false,
                    });
                }
            }
        }
        let Arrival::Poisson { rate_per_s } = self.arrival else {
            return;
        };
        let mut next_slot = vec![0u32; first.len()];
        let mut clock = self.poisson_clock(rate_per_s);
        let mut n = 0;
        while let Some(start) = clock.next(rng, n) {
            let ci = rng.below(r.clients.len() as u64) as usize;
            let job = *next_job;
            *next_job += 1;
            for a in 0..apps {
                let k = ci * apps + a;
                let conn = first[k] + next_slot[k];
                next_slot[k] = (next_slot[k] + 1) % r.connections;
                out.push(FlowSpec {
                    src: conns[conn as usize].src,
                    dst: r.clients[ci],
                    size: Some(self.request_size(r, rng)),
                    start,
                    transport: self.transport,
                    class: self.class,
                    priority: self.priority,
                    job,
                    after: None,
                    conn: Some(conn),
                    after_job: None,
                });
                n += 1;
            }
        }
    }
}

impl TrafficGen {
    /// `parallel` closed loops of `repeat` jobs each (see `JobsGen`). Jobs are numbered
    /// slot by slot; the first job of every slot starts at the entry's start (plus the
    /// stagger times the slot's index), each later one `interval` after its predecessor's
    /// end.
    fn generate_jobs(
        &self,
        j: &JobsGen,
        rng: &mut Rng,
        next_job: &mut i64,
        out: &mut Vec<FlowSpec>,
    ) {
        let mut pool = self.hosts.clone();
        for slot in 0..j.parallel {
            let mut prev: Option<i64> = None;
            for _ in 0..self.repeat {
                let job = *next_job;
                *next_job += 1;
                // A partial Fisher–Yates shuffle: the client, then `fanout` servers.
                let n = pool.len();
                for k in 0..=(j.fanout as usize).min(n - 1) {
                    let pick = k + rng.below((n - k) as u64) as usize;
                    pool.swap(k, pick);
                }
                let client = pool[0];
                let (start, after_job) = match prev {
                    None => (self.staggered(self.start, slot as u64), None),
                    Some(p) => (self.interval, Some(p)),
                };
                for &server in &pool[1..=j.fanout as usize] {
                    if j.request_bytes == 0 {
                        let mut answer = self.flow(server, client, start, job, rng);
                        answer.after_job = after_job;
                        out.push(answer);
                        continue;
                    }
                    out.push(FlowSpec {
                        src: client,
                        dst: server,
                        size: Some(j.request_bytes),
                        start,
                        transport: self.transport,
                        class: j.request_class,
                        priority: self.priority,
                        job,
                        after: None,
                        conn: None,
                        after_job,
                    });
                    // The answer follows its request's delivery at once.
                    let mut answer = self.flow(server, client, 0, job, rng);
                    answer.after = Some(out.len() as u32 - 1);
                    out.push(answer);
                }
                prev = Some(job);
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
    fn requests_go_round_robin_over_each_pairs_persistent_connections() {
        let g = TrafficGen {
            arrival: Arrival::Poisson {
                rate_per_s: 20_000.0,
            },
            size: SizeDist::Uniform {
                min: 1000,
                max: 200_000,
            },
            transport: 3,
            class: 1,
            requests: Some(RequestsGen {
                clients: vec![3, 4, 5],
                servers: vec![0, 1, 2, 3],
                connections: 5,
                pick: ConnPick::RoundRobin,
                sizes_below: Some(150_000),
                background_above: Some(100_000),
                background_transport: 0,
                background_class: 2,
                fanout: None,
            }),
            ..gen(Pattern::Requests)
        };
        let mut out = Vec::new();
        let mut conns = Vec::new();
        g.generate(&mut Rng::new(4, 0, 0), &mut 0, &mut out, &mut conns);
        // 3 clients × 4 servers, less client 3 with itself, × 2 kinds × 5.
        assert_eq!(conns.len(), 11 * 10);
        assert!(out.len() > 15_000, "{}", out.len());
        for f in &out {
            let c = conns[f.conn.unwrap() as usize];
            assert_eq!(
                (c.src, c.dst),
                (f.src, f.dst),
                "a flow rides its pair's connection"
            );
            assert!(f.src != f.dst && f.size.unwrap() < 150_000);
            let bg = f.size.unwrap() >= 100_000;
            assert_eq!(c.transport, if bg { 0 } else { 3 });
            assert_eq!(f.class, if bg { 2 } else { 1 });
        }
        // Round robin: a pair's first five latency-sensitive requests use its five
        // connections in turn.
        let pair: Vec<u32> = out
            .iter()
            .filter(|f| (f.src, f.dst) == (0, 4) && f.size.unwrap() < 100_000)
            .take(6)
            .map(|f| f.conn.unwrap())
            .collect();
        assert_eq!(pair[1] - pair[0], 1);
        assert_eq!(pair[5], pair[0]);
    }

    #[test]
    fn idle_pick_draws_a_connection_beside_each_response_in_its_pairs_pool() {
        let r = RequestsGen {
            clients: vec![0, 1],
            servers: vec![1, 2],
            connections: 2,
            pick: ConnPick::Idle,
            sizes_below: None,
            background_above: None,
            background_transport: 0,
            background_class: 0,
            fanout: None,
        };
        let g = TrafficGen {
            arrival: Arrival::Poisson {
                rate_per_s: 1_000.0,
            },
            requests: Some(r),
            ..gen(Pattern::Requests)
        };
        let mut out = Vec::new();
        let mut conns = Vec::new();
        g.generate(&mut Rng::new(4, 0, 0), &mut 0, &mut out, &mut conns);
        // 3 pairs (client 1 to server 1 is none) of 2 connections opened at the start,
        // then one on demand per response.
        assert!(out.len() > 100, "{}", out.len());
        assert_eq!(conns.len(), 3 * 2 + out.len());
        assert!(conns[..6].iter().all(|c| !c.on_demand && c.start == 0));
        let pools: Vec<u32> = conns[..6].iter().map(|c| c.pool.unwrap()).collect();
        // Numbered by (client, server) index, the pair of a host and itself included.
        assert_eq!(pools, [0, 0, 1, 1, 3, 3]);
        for f in &out {
            let c = conns[f.conn.unwrap() as usize];
            assert!(c.on_demand && c.start == f.start);
            assert_eq!((c.src, c.dst), (f.src, f.dst));
            // Its pool is its pair's: the one of the connections opened at the start.
            let first = conns[..6]
                .iter()
                .position(|o| (o.src, o.dst) == (f.src, f.dst))
                .unwrap();
            assert_eq!(c.pool, conns[first].pool);
        }
    }

    #[test]
    fn fanout_requests_are_jobs_over_every_application() {
        let g = TrafficGen {
            arrival: Arrival::Poisson { rate_per_s: 100.0 },
            requests: Some(RequestsGen {
                clients: vec![0],
                servers: vec![1, 2, 3, 4, 5],
                connections: 1,
                pick: ConnPick::RoundRobin,
                sizes_below: None,
                background_above: None,
                background_transport: 0,
                background_class: 0,
                fanout: Some(12),
            }),
            ..gen(Pattern::Requests)
        };
        let (mut out, mut conns) = (Vec::new(), Vec::new());
        let mut job = 3;
        g.generate(&mut Rng::new(4, 0, 0), &mut job, &mut out, &mut conns);
        assert_eq!(conns.len(), 12, "one connection per application");
        assert_eq!(out.len() % 12, 0);
        assert!(job > 50, "{job}");
        let first: Vec<_> = out.iter().take(12).collect();
        assert!(first
            .iter()
            .all(|f| f.job == 3 && f.start == first[0].start && f.dst == 0));
        // Applications are spread over the servers in turn: 12 over 5 hosts.
        let on_host1 = first.iter().filter(|f| f.src == 1).count();
        assert_eq!(on_host1, 3);
    }

    #[test]
    fn jobs_pick_distinct_servers_and_chain_requests_answers_and_jobs() {
        let g = TrafficGen {
            repeat: 3,
            interval: 7,
            stagger: 5,
            hosts: (0..12).collect(),
            jobs: Some(JobsGen {
                parallel: 2,
                fanout: 4,
                request_bytes: 2048,
                request_class: 9,
            }),
            ..gen(Pattern::Jobs)
        };
        let mut out = Vec::new();
        let mut job = 10;
        g.generate(&mut Rng::new(3, 0, 0), &mut job, &mut out, &mut Vec::new());
        assert_eq!(job, 16, "2 slots × 3 jobs");
        assert_eq!(out.len(), 6 * 4 * 2);
        for (k, chunk) in out.chunks(8).enumerate() {
            let job = 10 + k as i64;
            assert!(chunk.iter().all(|f| f.job == job));
            let (requests, answers): (Vec<&FlowSpec>, Vec<&FlowSpec>) =
                chunk.iter().partition(|f| f.class == 9);
            assert_eq!((requests.len(), answers.len()), (4, 4));
            let client = requests[0].src;
            let mut servers: Vec<u32> = requests.iter().map(|f| f.dst).collect();
            servers.sort();
            servers.dedup();
            assert_eq!(servers.len(), 4, "distinct servers");
            assert!(!servers.contains(&client));
            for (i, r) in requests.iter().enumerate() {
                assert_eq!((r.src, r.size, r.after), (client, Some(2048), None));
                // Each answer follows its own request, from that server to the client.
                let a = chunk[2 * i + 1];
                assert_eq!(a.after, Some((8 * k + 2 * i) as u32));
                assert_eq!(
                    (a.src, a.dst, a.size, a.start),
                    (r.dst, client, Some(1000), 0)
                );
                match k % 3 {
                    // A slot's first job starts at once (slot 1 staggered), the others
                    // wait for the slot's job before, `interval` after its end.
                    0 => assert_eq!((r.after_job, r.start), (None, 5 * (k / 3) as u64)),
                    _ => assert_eq!((r.after_job, r.start), (Some(job - 1), 7)),
                }
            }
        }
        // Without requests, the answers themselves wait for the job before.
        let g = TrafficGen {
            jobs: Some(JobsGen {
                request_bytes: 0,
                ..g.jobs.unwrap()
            }),
            ..g
        };
        let mut out = Vec::new();
        g.generate(&mut Rng::new(3, 0, 0), &mut 0, &mut out, &mut Vec::new());
        assert_eq!(out.len(), 6 * 4);
        assert!(out[4..8]
            .iter()
            .all(|f| f.after_job == Some(0) && f.after.is_none()));
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

    #[test]
    fn all_to_all_covers_every_ordered_pair() {
        let mut out = Vec::new();
        gen(Pattern::AllToAll).generate(&mut Rng::new(2, 0, 0), &mut 0, &mut out, &mut Vec::new());
        assert_eq!(out.len(), 56);
    }
}
