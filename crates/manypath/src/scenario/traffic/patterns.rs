//! A traffic entry's generator (`TrafficGen`): its hosts and timing, the fields of its
//! pattern (one function per pattern that has fields of its own, which also rejects
//! them on entries of other patterns), its repetitions and its arrivals, checked.

use super::collective::{collective_fields, CollectiveSetting};
use super::placement::Placement;
use super::sizes::size_dist;
use crate::scenario::checker::{show, Checker, MAX_TIME_US};
use crate::scenario::schema::{ArrivalSpec, TrafficSpec};
use crate::time::{from_us, SimTime};
use crate::workload::generate::{Arrival, GoalGen, MatrixGen, Pattern, RequestsGen, TrafficGen};
use crate::workload::SizeDist;
use std::path::Path;
use std::sync::Arc;

/// The most flows one traffic entry may generate (they are all drawn before the run).
const MAX_FLOWS: f64 = 1e7;

/// The highest `load` accepted: overload experiments go a little past 1; a larger value
/// is most likely a percentage.
const MAX_LOAD: f64 = 2.0;

/// What a pattern is, for the checks that depend on it.
#[derive(Clone, Copy, Debug)]
struct PatternInfo {
    /// The name scenarios give it.
    name: &'static str,
    /// Draws its flows' ends from the entry's hosts, so it needs two of them (a pair
    /// names its two hosts, requests take theirs from the requests table).
    from_hosts: bool,
    /// Its senders may run closed loops (`closed_loop`).
    closed_loop: bool,
}

/// Every pattern, in the order error messages list them.
const PATTERNS: [Pattern; 11] = [
    Pattern::Permutation,
    Pattern::RandomPairs,
    Pattern::Incast,
    Pattern::AllToAll,
    Pattern::Pair,
    Pattern::Requests,
    Pattern::EachToRandom,
    Pattern::Jobs,
    Pattern::Matrix,
    Pattern::Collective,
    Pattern::Goal,
];

fn info(p: Pattern) -> PatternInfo {
    let info = |name, from_hosts, closed_loop| PatternInfo {
        name,
        from_hosts,
        closed_loop,
    };
    match p {
        Pattern::Permutation => info("permutation", true, false),
        Pattern::RandomPairs => info("random_pairs", true, false),
        Pattern::Incast => info("incast", true, true),
        Pattern::AllToAll => info("all_to_all", true, false),
        Pattern::Pair => info("pair", false, true),
        Pattern::Requests => info("requests", false, false),
        Pattern::EachToRandom => info("each_to_random", true, true),
        Pattern::Jobs => info("jobs", true, true),
        Pattern::Matrix => info("matrix", false, false),
        // Its ranks are checked on their own (`collective`).
        Pattern::Collective => info("collective", false, false),
        Pattern::Goal => info("goal", false, false),
    }
}

/// What every traffic entry is checked against.
pub(super) struct Setting<'a> {
    pub(super) n_hosts: u32,
    /// The run's length: Poisson arrivals end there unless told otherwise.
    pub(super) duration: SimTime,
    /// Resolves relative CDF paths.
    pub(super) base_dir: &'a Path,
    /// The hosts' NIC rate, which loads are fractions of.
    pub(super) host_rate_bps: f64,
    /// The run's triggers before this entry's (a matrix numbers its own from there).
    pub(super) trigger_base: u32,
    /// The run's seed and the entry's index (a collective's random placement).
    pub(super) seed: u64,
    pub(super) entry: usize,
    /// The collective jobs, and their iterations, of the entries before this one.
    pub(super) collective_jobs: u32,
    pub(super) collectives: u32,
    /// The entry's transport: its name, whether it carries messages on persistent
    /// connections (`collective`), its copies of each flow.
    pub(super) transport: &'a str,
    pub(super) persistent: bool,
    pub(super) replicas: u32,
}

/// A traffic entry under check.
struct Entry<'a> {
    t: &'a TrafficSpec,
    /// The path of its fields, `traffic[i]`.
    path: &'a str,
    n_hosts: u32,
    pattern: Pattern,
}

/// The generator of traffic entry `t` (at `path`), of transport and class indices
/// `transport` and `class`, with its requests table `requests` (already checked); `None`
/// if anything is wrong with the entry.
pub(super) fn traffic_gen(
    t: &TrafficSpec,
    path: &str,
    at: &Setting,
    transport: u16,
    class: u16,
    requests: Option<&RequestsGen>,
    c: &mut Checker,
) -> Option<TrafficGen> {
    let before = c.problems.len();
    let e = Entry {
        t,
        path,
        n_hosts: at.n_hosts,
        pattern: t.pattern,
    };
    let hosts = e.hosts(c);
    e.check_start(c);
    let size = e.size(at.base_dir, c);
    let setting = CollectiveSetting {
        hosts: &hosts,
        seed: at.seed,
        entry: at.entry,
        trigger_base: at.trigger_base,
        job: at.collective_jobs,
        first: at.collectives,
        persistent: at.persistent,
        replicas: at.replicas,
        transport: at.transport,
    };
    let matrix = e
        .matrix_fields(at, c)
        .or_else(|| collective_fields(t, path, &setting, c));
    let goal = e.goal_fields(at, &hosts, c);
    e.jobs_fields(&hosts, c);
    e.requests_fields(requests.is_some(), before, c);
    if info(e.pattern).from_hosts && hosts.len() < 2 && c.problems.len() == before {
        c.err(
            &e.field("hosts"),
            format!("the pattern needs at least two hosts, got {}", hosts.len()),
        );
    }
    let (src, dst) = e.pair_fields(c);
    let (receiver, senders) = e.incast_fields(&hosts, c);
    let interval = e.repetitions(c);
    let until = match t.until_us {
        Some(x) => {
            c.positive(&e.field("until_us"), x);
            c.time_us(&e.field("until_us"), x);
            from_us(x.clamp(0.0, MAX_TIME_US))
        }
        None => at.duration,
    };
    let arrivals_until = e.arrivals_until(at.duration, c);
    let until = arrivals_until.map_or(until, |a| a.min(until));
    let arrival = match e.arrival_spec() {
        None => e.at_start(c),
        Some(ArrivalSpec::Poisson) => e.poisson(
            &hosts,
            &senders,
            size.as_ref(),
            requests,
            at.host_rate_bps,
            c,
        ),
    };
    e.check_flow_count(arrival, &hosts, &senders, until, requests, c);
    if c.problems.len() != before {
        return None;
    }
    Some(TrafficGen {
        pattern: e.pattern,
        hosts,
        size: size?,
        transport,
        class,
        priority: t.priority,
        start: from_us(t.start_us),
        arrival,
        until,
        arrivals_until,
        flows: t.flows,
        receiver,
        senders,
        stagger: from_us(t.stagger_us),
        repeat: t.repeat,
        interval,
        closed_loop: t.closed_loop,
        src,
        dst,
        requests: None,
        jobs: None,
        split: None,
        connection_pool: t.connection_pool,
        matrix: matrix.map(Arc::new),
        goal: goal.map(Arc::new),
    })
}

impl Entry<'_> {
    fn field(&self, name: &str) -> String {
        format!("{}.{name}", self.path)
    }

    fn check_host(&self, c: &mut Checker, field: &str, h: u32) {
        if h >= self.n_hosts {
            c.err(
                &self.field(field),
                format!(
                    "host {h} does not exist (hosts are 0..{})",
                    self.n_hosts - 1
                ),
            );
        }
    }

    /// The hosts the entry draws from: `hosts`, `host_range`, or all.
    fn hosts(&self, c: &mut Checker) -> Vec<u32> {
        let n_hosts = self.n_hosts;
        match (&self.t.hosts, self.t.host_range) {
            (Some(_), Some(_)) => {
                c.err(
                    &self.field("hosts"),
                    "give either hosts or host_range, not both".into(),
                );
                vec![]
            }
            (Some(h), None) => {
                for &x in h {
                    self.check_host(c, "hosts", x);
                }
                h.clone()
            }
            (None, Some([a, b])) => {
                if a >= b || b > n_hosts {
                    c.err(
                        &self.field("host_range"),
                        format!(
                            "must be [first, last) with first < last ≤ {n_hosts}, got [{a}, {b}]"
                        ),
                    );
                }
                (a..b.min(n_hosts)).collect()
            }
            (None, None) => (0..n_hosts).collect(),
        }
    }

    /// `size`: every pattern's but a matrix's or a GOAL schedule's, whose file gives
    /// each flow's size.
    fn size(&self, base_dir: &Path, c: &mut Checker) -> Option<SizeDist> {
        let from_file = matches!(self.pattern, Pattern::Matrix | Pattern::Goal);
        match (&self.t.size, from_file) {
            (Some(s), false) => size_dist(s, &self.field("size"), base_dir, c),
            (None, false) => {
                c.err(
                    &self.field("size"),
                    "missing (a required field of every pattern but \"matrix\" and \"goal\": a flow-size distribution, e.g. { fixed = 131072 })".into(),
                );
                None
            }
            (Some(_), true) => {
                let what = if self.pattern == Pattern::Goal {
                    "message"
                } else {
                    "connection"
                };
                c.err(
                    &self.field("size"),
                    format!(
                        "does not apply to pattern \"{}\": its file gives each {what}'s size",
                        info(self.pattern).name
                    ),
                );
                None
            }
            // Not drawn: the file's sizes.
            (None, true) => Some(SizeDist::Fixed(1)),
        }
    }

    /// Pattern `matrix`: its `file`, read and checked, and `trigger_delay_us`; the
    /// fields that do not apply to it (its file names the hosts, sizes and starts).
    fn matrix_fields(&self, at: &Setting, c: &mut Checker) -> Option<MatrixGen> {
        let t = self.t;
        if self.pattern != Pattern::Matrix {
            if t.file.is_some() && self.pattern != Pattern::Goal {
                c.err(
                    &self.field("file"),
                    "applies only to pattern \"matrix\" or \"goal\"".into(),
                );
            }
            if t.trigger_delay_us.is_some() {
                c.err(
                    &self.field("trigger_delay_us"),
                    "applies only to pattern \"matrix\"".into(),
                );
            }
            return None;
        }
        c.not_given(
            self.path,
            &[
                ("hosts", t.hosts.is_some()),
                ("host_range", t.host_range.is_some()),
                ("arrival", t.arrival.is_some()),
                ("size_split", t.size_split.is_some()),
                ("closed_loop", t.closed_loop),
                ("repeat", t.repeat != 1),
                ("stagger_us", t.stagger_us != 0.0),
            ],
            "does not apply to pattern \"matrix\": its file gives the flows",
        );
        let delay = match t.trigger_delay_us {
            Some(x) => {
                c.non_negative(&self.field("trigger_delay_us"), x);
                c.time_us(&self.field("trigger_delay_us"), x);
                from_us(x.clamp(0.0, MAX_TIME_US))
            }
            None => 0,
        };
        let Some(file) = &t.file else {
            c.err(
                &self.field("file"),
                "pattern \"matrix\" needs a file (a connection matrix, relative to the scenario)"
                    .into(),
            );
            return None;
        };
        let m = super::matrix::read(file, at.base_dir, self.n_hosts, at.trigger_base, delay);
        match m {
            Ok(m) => Some(m),
            Err(e) => {
                c.err(&self.field("file"), e);
                None
            }
        }
    }

    /// Pattern `goal`: its `file`, read, matched and checked, with `placement` and
    /// `rendezvous_bytes`; the fields that do not apply to it (its file gives the
    /// messages and what starts them). `hosts` are the entry's, where the ranks run.
    fn goal_fields(&self, at: &Setting, hosts: &[u32], c: &mut Checker) -> Option<GoalGen> {
        let t = self.t;
        if self.pattern != Pattern::Goal {
            // (`placement` is a collective's too: `collective_fields` checks it.)
            if t.rendezvous_bytes.is_some() {
                c.err(
                    &self.field("rendezvous_bytes"),
                    "applies only to pattern \"goal\"".into(),
                );
            }
            return None;
        }
        c.not_given(
            self.path,
            &[
                ("arrival", t.arrival.is_some()),
                ("size_split", t.size_split.is_some()),
                ("closed_loop", t.closed_loop),
                ("repeat", t.repeat != 1),
                ("stagger_us", t.stagger_us != 0.0),
            ],
            "does not apply to pattern \"goal\": its file gives the messages",
        );
        if t.rendezvous_bytes == Some(0) {
            c.err(
                &self.field("rendezvous_bytes"),
                "must be at least 1 byte (leave it out for none)".into(),
            );
        }
        let Some(file) = &t.file else {
            c.err(
                &self.field("file"),
                "pattern \"goal\" needs a file (a GOAL schedule, relative to the scenario)".into(),
            );
            return None;
        };
        let placement = Placement::of(
            t.placement.as_deref(),
            at.seed,
            at.entry,
            &self.field("placement"),
            c,
        )?;
        let entry = super::goal::Entry {
            hosts,
            placement,
            rendezvous_bytes: t.rendezvous_bytes,
            trigger_base: at.trigger_base,
        };
        match super::goal::read(file, at.base_dir, &entry) {
            Ok(m) => Some(m),
            Err(e) => {
                c.err(&self.field("file"), e);
                None
            }
        }
    }

    /// Priority, start time and stagger.
    fn check_start(&self, c: &mut Checker) {
        let t = self.t;
        if t.priority > 1 {
            c.err(
                &self.field("priority"),
                format!("must be 0 or 1, got {}", t.priority),
            );
        }
        c.non_negative(&self.field("start_us"), t.start_us);
        c.time_us(&self.field("start_us"), t.start_us);
        c.non_negative(&self.field("stagger_us"), t.stagger_us);
        c.time_us(&self.field("stagger_us"), t.stagger_us);
    }

    /// Pattern `jobs`: its `jobs` table (the rest of it in `requests::jobs_gen`).
    fn jobs_fields(&self, hosts: &[u32], c: &mut Checker) {
        match (self.pattern == Pattern::Jobs, &self.t.jobs) {
            (true, None) => c.err(
                &self.field("jobs"),
                "pattern \"jobs\" needs a jobs table (fanout)".into(),
            ),
            (false, Some(_)) => c.err(
                &self.field("jobs"),
                "applies only to pattern \"jobs\"".into(),
            ),
            (true, Some(j)) => {
                if j.fanout as usize >= hosts.len() {
                    c.err(
                        &self.field("jobs.fanout"),
                        format!(
                            "a job needs a client and fanout other hosts; the entry has {} hosts, got fanout {}",
                            hosts.len(),
                            j.fanout
                        ),
                    );
                }
                if self.t.arrival.is_some() {
                    c.err(
                        &self.field("arrival"),
                        "jobs run in closed loops; Poisson arrivals do not apply".into(),
                    );
                }
            }
            (false, None) => {}
        }
    }

    /// Pattern `requests`: its `requests` table (checked in `requests::requests_gen`),
    /// which gives its hosts and sizes. `before` counts the problems before the entry.
    fn requests_fields(&self, has_table: bool, before: usize, c: &mut Checker) {
        let t = self.t;
        let requests = self.pattern == Pattern::Requests;
        match (requests, has_table) {
            (true, false) => c.err(
                &self.field("requests"),
                "pattern \"requests\" needs a requests table (clients, servers)".into(),
            ),
            (false, true) => c.err(
                &self.field("requests"),
                "applies only to pattern \"requests\"".into(),
            ),
            (true, true) | (false, false) => {}
        }
        if requests && t.size_split.is_some() {
            c.err(
                &self.field("size_split"),
                "does not apply to pattern \"requests\" (use requests.background_above_bytes)"
                    .into(),
            );
        }
        if requests && (t.hosts.is_some() || t.host_range.is_some()) && c.problems.len() == before {
            c.err(
                &self.field("hosts"),
                "pattern \"requests\" takes its hosts from requests.clients and requests.servers"
                    .into(),
            );
        }
    }

    /// Pattern `pair`: `src` and `dst` (0, 0 for the other patterns).
    fn pair_fields(&self, c: &mut Checker) -> (u32, u32) {
        let t = self.t;
        if self.pattern != Pattern::Pair {
            for (field, v) in [("src", t.src), ("dst", t.dst)] {
                if v.is_some() {
                    c.err(
                        &self.field(field),
                        "applies only to pattern \"pair\"".into(),
                    );
                }
            }
            return (0, 0);
        }
        match (t.src, t.dst) {
            (Some(s), Some(d)) => {
                self.check_host(c, "src", s);
                self.check_host(c, "dst", d);
                if s == d {
                    c.err(&self.field("dst"), format!("must differ from src ({s})"));
                }
                (s, d)
            }
            _ => {
                c.err(self.path, "pattern \"pair\" needs src and dst".into());
                (0, 0)
            }
        }
    }

    /// Pattern `incast`: its `receiver` (default: the entry's first host) and its
    /// `senders`, the first of the entry's other hosts (0 and none for the other
    /// patterns).
    fn incast_fields(&self, hosts: &[u32], c: &mut Checker) -> (u32, Vec<u32>) {
        let t = self.t;
        if self.pattern != Pattern::Incast {
            if t.receiver.is_some() {
                c.err(
                    &self.field("receiver"),
                    "applies only to pattern \"incast\"".into(),
                );
            }
            if t.senders.is_some() {
                c.err(
                    &self.field("senders"),
                    "applies only to pattern \"incast\"".into(),
                );
            }
            return (0, Vec::new());
        }
        let receiver = t
            .receiver
            .unwrap_or_else(|| hosts.first().copied().unwrap_or(0));
        self.check_host(c, "receiver", receiver);
        let others: Vec<u32> = hosts.iter().copied().filter(|&h| h != receiver).collect();
        let n = t.senders.unwrap_or(others.len() as u32);
        if n == 0 || n as usize > others.len() {
            c.err(
                &self.field("senders"),
                format!(
                    "must be between 1 and {} (the entry's other hosts), got {n}",
                    others.len()
                ),
            );
        }
        (receiver, others.into_iter().take(n as usize).collect())
    }

    /// `repeat`, `interval_us` and `closed_loop`: the interval between repetitions.
    fn repetitions(&self, c: &mut Checker) -> SimTime {
        let t = self.t;
        let interval = match t.interval_us {
            Some(x) => {
                c.positive(&self.field("interval_us"), x);
                c.time_us(&self.field("interval_us"), x);
                from_us(x.clamp(0.0, MAX_TIME_US))
            }
            None => {
                if t.repeat > 1 && !t.closed_loop && self.pattern != Pattern::Jobs {
                    c.err(
                        &self.field("interval_us"),
                        "is needed when repeat > 1 (or set closed_loop = true)".into(),
                    );
                }
                0
            }
        };
        if t.closed_loop && !info(self.pattern).closed_loop {
            c.err(
                &self.field("closed_loop"),
                format!("applies only to patterns {}", closed_loop_patterns()),
            );
        }
        if t.closed_loop && t.arrival.is_some() {
            c.err(
                &self.field("closed_loop"),
                "cannot be combined with Poisson arrivals".into(),
            );
        }
        c.at_least(&self.field("repeat"), t.repeat as u64, 1);
        interval
    }

    /// How the entry's flows arrive: all at once (with stagger and repetitions) unless
    /// `arrival` says otherwise; requests always arrive as a Poisson process.
    fn arrival_spec(&self) -> Option<ArrivalSpec> {
        match self.pattern {
            Pattern::Requests => Some(ArrivalSpec::Poisson),
            // The file, or the algorithm, gives the starts.
            Pattern::Matrix | Pattern::Collective | Pattern::Goal => None,
            Pattern::Permutation
            | Pattern::RandomPairs
            | Pattern::Incast
            | Pattern::AllToAll
            | Pattern::Pair
            | Pattern::EachToRandom
            | Pattern::Jobs => self.t.arrival,
        }
    }

    /// `arrivals_until_ms`: when the entry's open-loop arrivals stop, after its start
    /// and no later than the run's end (`duration`).
    fn arrivals_until(&self, duration: SimTime, c: &mut Checker) -> Option<SimTime> {
        let t = self.t;
        let ms = t.arrivals_until_ms?;
        let field = self.field("arrivals_until_ms");
        let before = c.problems.len();
        c.positive(&field, ms);
        let duration_ms = duration as f64 / 1e9;
        if t.until_us.is_some() {
            c.err(
                &field,
                "give either arrivals_until_ms or until_us, not both".into(),
            );
        }
        if t.closed_loop || self.pattern == Pattern::Jobs {
            c.err(
                &field,
                "applies only to open-loop arrivals (closed loops end after repeat)".into(),
            );
        }
        if ms.is_finite() && ms > duration_ms {
            c.err(
                &field,
                format!("must be at most duration_ms ({duration_ms}), got {ms}"),
            );
        } else if ms > 0.0 && ms * 1e3 <= t.start_us {
            c.err(
                &field,
                format!(
                    "must be after the entry's start (start_us = {}, i.e. {} ms), got {ms}",
                    t.start_us,
                    t.start_us / 1e3
                ),
            );
        }
        (c.problems.len() == before).then(|| crate::time::from_ms(ms))
    }

    fn at_start(&self, c: &mut Checker) -> Arrival {
        let t = self.t;
        for (field, v) in [
            ("load", t.load),
            ("rate_per_s", t.rate_per_s),
            ("until_us", t.until_us),
        ] {
            if v.is_some() {
                c.err(
                    &self.field(field),
                    "applies only with arrival = \"poisson\"".into(),
                );
            }
        }
        if self.pattern == Pattern::RandomPairs && t.flows.is_none() {
            c.err(
                &self.field("flows"),
                "pattern \"random_pairs\" needs flows (a count) or arrival = \"poisson\"".into(),
            );
        }
        Arrival::AtStart
    }

    /// Poisson arrivals at `load` per sending host, or `rate_per_s` in total.
    fn poisson(
        &self,
        hosts: &[u32],
        senders: &[u32],
        size: Option<&SizeDist>,
        requests: Option<&RequestsGen>,
        host_rate_bps: f64,
        c: &mut Checker,
    ) -> Arrival {
        let t = self.t;
        if self.pattern == Pattern::AllToAll {
            c.err(
                &self.field("arrival"),
                "Poisson arrivals do not apply to all_to_all".into(),
            );
        }
        let senders_n = match self.pattern {
            Pattern::Incast => senders.len() as f64,
            Pattern::Pair => 1.0,
            // Load is offered to each client's link; with a fanout, the rate counts
            // requests (jobs) of `fanout` responses each.
            Pattern::Requests => requests.map_or(1.0, |r| {
                r.clients.len() as f64 / r.fanout.unwrap_or(1) as f64
            }),
            Pattern::Permutation
            | Pattern::RandomPairs
            | Pattern::AllToAll
            | Pattern::EachToRandom
            | Pattern::Jobs
            | Pattern::Matrix
            | Pattern::Collective
            | Pattern::Goal => hosts.len() as f64,
        };
        let sizes_below = requests.and_then(|r| r.sizes_below);
        if let (Some(b), Some(sz)) = (sizes_below, size) {
            if sz.mean_below(b).is_none() {
                // Drawing would never (or hardly ever) produce a size below the bound.
                c.err(
                    &self.field("requests.sizes_below_bytes"),
                    format!("the size distribution has (almost) no sizes below {b}"),
                );
            }
        }
        let rate = match (t.load, t.rate_per_s) {
            (Some(load), None) => {
                // A refused load gives no rate (nor a flow count to refuse).
                let load = if self.check_load(load, c) { load } else { 0.0 };
                let mean = match sizes_below {
                    Some(b) => size.and_then(|s| s.mean_below(b)),
                    None => size.and_then(|s| s.mean()),
                };
                // A size that could not be read, or no size below `sizes_below_bytes`,
                // is reported already.
                let reported = size.is_none() || sizes_below.is_some();
                match mean {
                    Some(_) if load == 0.0 => 1.0,
                    Some(mean) => load * host_rate_bps * senders_n / (8.0 * mean),
                    None if reported => 1.0,
                    None => {
                        c.err(
                            &self.field("size"),
                            "Poisson arrivals need a finite flow size, not long_lived".into(),
                        );
                        1.0
                    }
                }
            }
            (None, Some(r)) => {
                c.positive(&self.field("rate_per_s"), r);
                r
            }
            _ => {
                c.err(
                    &self.field("load"),
                    "Poisson arrivals need exactly one of load or rate_per_s".into(),
                );
                1.0
            }
        };
        Arrival::Poisson { rate_per_s: rate }
    }

    /// `load`, a fraction of each sender's link rate: above 1 the senders offer more
    /// than their links carry (an overload experiment, warned about); above
    /// `MAX_LOAD` it is taken for a percentage and refused. False if refused.
    fn check_load(&self, load: f64, c: &mut Checker) -> bool {
        let field = self.field("load");
        if !(load.is_finite() && load > 0.0) {
            c.positive(&field, load);
            return false;
        }
        if load > MAX_LOAD {
            let hint = if load <= 100.0 {
                format!("; did you mean {}?", show(load / 100.0))
            } else {
                String::new()
            };
            c.err(
                &field,
                format!(
                    "must be a fraction of the link rate in (0, {MAX_LOAD}] (1: line rate), got {}{hint}",
                    show(load)
                ),
            );
            return false;
        }
        if load > 1.0 {
            c.warn(
                &field,
                format!(
                    "{} offers more than the senders' links carry: queues grow until the end and flows go unfinished",
                    show(load)
                ),
            );
        }
        true
    }

    /// The flows are all drawn before the run: at most `MAX_FLOWS` per entry.
    fn check_flow_count(
        &self,
        arrival: Arrival,
        hosts: &[u32],
        senders: &[u32],
        until: SimTime,
        requests: Option<&RequestsGen>,
        c: &mut Checker,
    ) {
        let t = self.t;
        let expected_flows = match (arrival, self.pattern) {
            (Arrival::Poisson { rate_per_s }, _) => {
                let fanout = requests.and_then(|r| r.fanout).unwrap_or(1) as f64;
                let drawn =
                    rate_per_s * fanout * until.saturating_sub(from_us(t.start_us.max(0.0))) as f64
                        / 1e12;
                drawn.min(t.flows.map_or(f64::INFINITY, |n| n as f64))
            }
            (_, Pattern::Permutation) => hosts.len() as f64,
            (_, Pattern::RandomPairs) => t.flows.unwrap_or(1) as f64,
            (_, Pattern::AllToAll) => (hosts.len() as f64) * (hosts.len() as f64 - 1.0),
            (_, Pattern::Incast) => senders.len() as f64 * t.repeat as f64,
            (_, Pattern::Pair) => t.repeat as f64,
            (_, Pattern::Requests) => 0.0,
            // The file's connections, counted as they are read (`matrix`).
            (_, Pattern::Matrix | Pattern::Goal) => 0.0,
            // Bounded on its own (`collective`).
            (_, Pattern::Collective) => 0.0,
            (_, Pattern::EachToRandom) => hosts.len() as f64 * t.repeat as f64,
            (_, Pattern::Jobs) => t.jobs.as_ref().map_or(0.0, |j| {
                let per_server = if j.request_bytes.unwrap_or(0) > 0 {
                    2.0
                } else {
                    1.0
                };
                j.parallel.unwrap_or(1) as f64 * t.repeat as f64 * j.fanout as f64 * per_server
            }),
        };
        if expected_flows > MAX_FLOWS {
            c.err(
                self.path,
                format!(
                    "would generate about {expected_flows:.3e} flows; at most {MAX_FLOWS:e} per entry"
                ),
            );
        }
    }
}

/// The patterns that take `closed_loop`, as `"a", "b" and "c"`.
fn closed_loop_patterns() -> String {
    let names: Vec<String> = PATTERNS
        .iter()
        .map(|&p| info(p))
        .filter(|i| i.closed_loop)
        .map(|i| format!("{:?}", i.name))
        .collect();
    match names.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::plan::tests::{errors, GOOD};
    use crate::scenario::schema::tests::variant_names;

    /// Every pattern of the JSON schema has its row in the pattern table, under the
    /// name scenarios give it, and the table has no other.
    #[test]
    fn the_pattern_table_has_a_row_for_every_pattern_of_the_schema() {
        let mut in_schema = variant_names("PatternSpec");
        let mut in_table: Vec<String> = PATTERNS.iter().map(|&p| info(p).name.into()).collect();
        in_schema.sort();
        in_table.sort();
        assert_eq!(
            in_schema, in_table,
            "the JSON schema's patterns (left) and the pattern table, PATTERNS (right)"
        );
        for p in PATTERNS {
            let text = serde_json::to_string(&p).unwrap();
            assert_eq!(text, format!("\"{}\"", info(p).name));
        }
        assert_eq!(
            closed_loop_patterns(),
            "\"incast\", \"pair\", \"each_to_random\" and \"jobs\""
        );
    }

    #[test]
    fn missing_host_and_pattern_fields() {
        let text = GOOD.to_string()
            + "[[traffic]]\npattern = \"pair\"\nsrc = 0\ndst = 99\nsize = { fixed = 10 }\n"
            + "[[traffic]]\npattern = \"permutation\"\nsize = { fixed = 10 }\nreceiver = 1\n\
               closed_loop = true\n"
            + "[[traffic]]\npattern = \"pair\"\nsize = { fixed = 10 }\nhosts = [1]\n";
        let e = errors(&text);
        assert!(e.contains("traffic[1].dst: host 99 does not exist"), "{e}");
        assert!(
            e.contains("traffic[2].receiver: applies only to pattern \"incast\""),
            "{e}"
        );
        assert!(
            e.contains(
                "traffic[2].closed_loop: applies only to patterns \"incast\", \"pair\", \
                 \"each_to_random\" and \"jobs\""
            ),
            "{e}"
        );
        assert!(
            e.contains("traffic[3]: pattern \"pair\" needs src and dst"),
            "{e}"
        );
        let one_host = GOOD.to_string() + "hosts = [3]\n";
        let e = errors(&one_host);
        assert!(
            e.contains("traffic[0].hosts: the pattern needs at least two hosts, got 1"),
            "{e}"
        );
    }

    #[test]
    fn poisson_arrivals_take_a_rate_from_the_load() {
        let text = GOOD.replace("\"long_lived\"", "{ fixed = 125000 }")
            + "arrival = \"poisson\"\nload = 0.5\n";
        let p = crate::scenario::Plan::from_toml(&text, std::path::Path::new(".")).unwrap();
        // 0.5 of 10 Gbit/s per host, 16 hosts, 1 Mbit flows.
        assert_eq!(
            p.traffic[0].arrival,
            Arrival::Poisson {
                rate_per_s: 0.5 * 1e10 * 16.0 / (8.0 * 125000.0)
            }
        );
        let e = errors(&(GOOD.to_string() + "arrival = \"poisson\"\nload = 0.5\n"));
        assert!(
            e.contains("traffic[0].size: Poisson arrivals need a finite flow size"),
            "{e}"
        );
        let many = GOOD.replace("\"long_lived\"", "{ fixed = 1 }")
            + "arrival = \"poisson\"\nrate_per_s = 1e12\n";
        let e = errors(&many);
        assert!(e.contains("traffic[0]: would generate about"), "{e}");
    }
}
