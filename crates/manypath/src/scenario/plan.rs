//! Parsing and validating a scenario into a `Plan`: every value checked, every default
//! filled in, every name resolved. Problems are collected, not just the first, and each
//! names the dotted path of its field and what was expected. `from_scenario` runs the
//! steps in order: the run's length, the topology and its links (`topology`, `queues`),
//! the transports (`transports`), the traffic (`traffic`), the faults (`faults`), the
//! output series, the threads and partitions (`parallel`), and the level's checks
//! (`level`).

use super::capture::{self, CapturePlan, Selection};
use super::checker::{Checker, MAX_TIME_US};
use super::fabric::{fabric, BufferPlan, PfcPlan};
use super::faults::{fault_plan, FaultPlan};
use super::homa;
use super::level::{check_level, check_unpinned, model_config, FlowModelConfig, Level};
use super::locate::{self, Segment};
use super::ndp;
use super::parallel::{parallel_plan, ParallelPlan};
use super::pfabric;
use super::queues::switch_features;
use super::roce;
use super::schema::{LoadBalancingSpec, Scenario};
use super::topology::{check_path_indices, links, topology_kind, Links};
use super::traffic::traffic;
use super::transports::{check_swift_targets, tcp_config, transports, TransportPlan};
use crate::engine::{rng::stream, Rng};
use crate::net::network::{LinkParams, LoadBalancing};
use crate::net::queue::QueueConfig;
use crate::net::topology::Topology;
use crate::time::{from_ms, SimTime};
use crate::transport::tcp::TcpConfig;
use crate::workload::generate::{CollectiveRun, TrafficGen};
use crate::workload::{ConnSpec, FlowSpec, Trigger, TriggerLink};
use std::fmt;
use std::path::Path;

/// Everything wrong with a scenario: `(field path, message)` pairs.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioError {
    pub problems: Vec<(String, String)>,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (path, msg)) in self.problems.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            if path.is_empty() {
                write!(f, "{msg}")?;
            } else {
                write!(f, "{path}: {msg}")?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for ScenarioError {}

/// A validated, fully resolved scenario.
#[derive(Clone, Debug)]
pub struct Plan {
    pub name: String,
    pub seed: u64,
    pub duration: SimTime,
    pub stop_when_done: bool,
    /// The measurement window's start (`measure_from_ms`, or `warmup_ms`).
    pub warmup: SimTime,
    pub topology: Topology,
    pub tier_params: Vec<LinkParams>,
    pub host_queue: QueueConfig,
    /// Width of the uniform send jitter at the hosts' interfaces (0: off).
    pub host_jitter: SimTime,
    pub load_balancing: LoadBalancing,
    pub transports: Vec<TransportPlan>,
    pub classes: Vec<String>,
    pub traffic: Vec<TrafficGen>,
    /// Per traffic entry: the path indices its connections are pinned to (empty: ECMP)
    /// and when its long-lived flows stop sending (`SimTime::MAX`: never).
    pub entry_paths: Vec<Vec<u32>>,
    pub entry_stop: Vec<SimTime>,
    pub queue_histogram: bool,
    /// Period of the flow and queue time series (`None`: not recorded).
    pub flow_sample: Option<SimTime>,
    pub queue_sample: Option<SimTime>,
    /// Tiers whose switch ports the queue series covers (empty: all).
    pub queue_sample_tiers: Vec<u8>,
    /// Link faults and link down/up schedules (`scenario::faults`).
    pub faults: FaultPlan,
    /// The simulator that runs the plan, and the flow-level model's settings.
    pub level: Level,
    pub flow_model: FlowModelConfig,
    /// What is valid but likely not meant, as `(field path, message)`.
    pub warnings: Vec<(String, String)>,
    /// Per tier, the shared buffer of each of its switches (`Topology::switch_tiers`;
    /// `network.buffer` or the tier's own `buffer`; `None`: per-port limits only).
    pub switch_buffers: Vec<Option<BufferPlan>>,
    /// PFC (`network.pfc`; `None`: off).
    pub pfc: Option<PfcPlan>,
    /// Packet capture (`output.pcap`; `None`: off).
    pub pcap: Option<CapturePlan>,
    /// Ports whose queue events are traced (`output.trace`; `None`: off).
    pub trace: Option<Selection>,
    /// Threads and partitions of the run (`[parallel]`); never changes its results.
    pub parallel: ParallelPlan,
}

impl Plan {
    /// Parses TOML text; `base_dir` resolves relative CDF paths.
    pub fn from_toml(text: &str, base_dir: &Path) -> Result<Plan, ScenarioError> {
        Plan::from_scenario(&parse(text)?, base_dir)
    }

    pub fn from_scenario(s: &Scenario, base_dir: &Path) -> Result<Plan, ScenarioError> {
        let mut c = Checker::default();
        let (duration, warmup) = run_length(s, &mut c);
        let kind = topology_kind(&s.topology, base_dir, s.output.queue_histogram, &mut c);
        let tiers: Vec<&'static str> = kind.as_ref().map(|k| k.tiers()).unwrap_or_default();
        let mut links = links(s, &tiers, kind.is_some(), &mut c);
        let base_tcp = tcp_config(TcpConfig::default(), &s.tcp, "tcp", &mut c);
        switch_features(s, &tiers, &mut links.tier_params, &base_tcp, &mut c);
        ndp::trim_features(s, &tiers, &mut links.tier_params, &mut c);
        let transports = transports(&s.transports, base_tcp, &mut c);
        let mtu = transports
            .iter()
            .map(|t| t.max_wire_bytes())
            .max()
            .unwrap_or(1500);
        let topology = kind.as_ref().map(|k| k.build());
        let fabric = fabric(
            s,
            &tiers,
            topology.as_ref(),
            &mut links.tier_params,
            mtu,
            &mut c,
        );
        if let Some(host) = links.tier_params.first() {
            check_swift_targets(&transports, host, &mut c);
        }
        let traffic = traffic(
            s,
            kind.as_ref().map(|k| k.n_hosts()),
            duration,
            links.host_rate_bps(),
            base_dir,
            &transports,
            &mut c,
        );
        roce::check_rwndq(s, &links.tier_params, &transports, &mut c);
        roce::check_lossless(s, &transports, &mut c);
        ndp::check_paths(s, &tiers, &links.tier_params, &transports, &mut c);
        let pfabric_queues =
            links.host_queue.pfabric || links.tier_params.iter().any(|p| p.queue.pfabric);
        pfabric::check(s, pfabric_queues, &transports, &mut c);
        homa::check(s, &tiers, &links.tier_params, &transports, &mut c);
        let faults = match &topology {
            Some(topo) => fault_plan(&s.faults, topo, &mut c),
            None => FaultPlan::default(),
        };
        let series = output_series(s, &tiers, kind.is_some(), &mut c);
        let (pcap, trace) = capture::output_capture(
            s,
            topology.as_ref(),
            &traffic.classes,
            duration,
            links.host_rate_bps(),
            &mut c,
        );
        let parallel = parallel_plan(&s.parallel, topology.as_ref(), &mut c);
        let flow_model = model_config(&s.flow_model, &mut c);
        let level = Level::of(s.level);
        if let Some(k) = &kind {
            check_level(s, level, k, &transports, &mut c);
        }
        if let Some(topo) = &topology {
            super::custom::check_custom(s, topo, level, &transports, &mut c);
        }
        if let Some(topo) = &topology {
            // The path indices need the network: checked once all else is valid.
            if c.problems.is_empty() {
                check_pinned_paths(s.seed, level, topo, &links, &traffic.entry_paths, &mut c);
            }
        }
        if !c.problems.is_empty() {
            return Err(ScenarioError {
                problems: c.problems,
            });
        }
        let topology = topology.expect("validated");
        let plan = Plan {
            name: s.name.clone(),
            seed: s.seed,
            duration,
            stop_when_done: s.stop_when_done,
            warmup,
            topology,
            tier_params: links.tier_params,
            host_queue: links.host_queue,
            host_jitter: links.host_jitter,
            load_balancing: match s.network.load_balancing {
                LoadBalancingSpec::Ecmp => LoadBalancing::Ecmp,
                LoadBalancingSpec::Spray => LoadBalancing::Spray,
            },
            transports,
            classes: traffic.classes,
            traffic: traffic.gens,
            entry_paths: traffic.entry_paths,
            entry_stop: traffic.entry_stop,
            queue_histogram: s.output.queue_histogram,
            flow_sample: series.flow_sample,
            queue_sample: series.queue_sample,
            queue_sample_tiers: series.queue_sample_tiers,
            faults,
            level,
            flow_model,
            switch_buffers: fabric.switch_buffers,
            pfc: fabric.pfc,
            pcap,
            trace,
            parallel,
            warnings: c.warnings,
        };
        if plan.pcap.as_ref().is_some_and(|p| p.flows.is_some()) {
            let mut c = Checker::default();
            capture::check_flow_ids(plan.pcap.as_ref(), plan.flows().len(), &mut c);
            if !c.problems.is_empty() {
                return Err(ScenarioError {
                    problems: c.problems,
                });
            }
        }
        Ok(plan)
    }

    /// Draws the run's flows from the traffic entries, in entry order.
    pub fn flows(&self) -> Vec<FlowSpec> {
        self.workload().0
    }

    /// The run's triggers, which the flows' `deps` number: each matrix or GOAL entry's,
    /// in entry order.
    pub fn triggers(&self) -> Vec<Trigger> {
        self.traffic
            .iter()
            .flat_map(|g| {
                let matrix = g.matrix.iter().flat_map(|m| m.triggers.iter().copied());
                matrix.chain(g.goal.iter().flat_map(|m| m.triggers.iter().copied()))
            })
            .collect()
    }

    /// The links between the run's triggers (a GOAL schedule's), numbered as `triggers`.
    pub fn trigger_links(&self) -> Vec<TriggerLink> {
        self.traffic
            .iter()
            .filter_map(|g| g.goal.as_ref())
            .flat_map(|m| m.links())
            .collect()
    }

    /// The activations made before the run, `(time, trigger)` (a GOAL schedule's
    /// operations with nothing to wait for, at their entry's start).
    pub fn trigger_starts(&self) -> Vec<(SimTime, u32)> {
        self.traffic
            .iter()
            .filter_map(|g| g.goal.as_ref().map(|m| (g.start, m)))
            .flat_map(|(at, m)| m.starts().map(move |t| (at, t)))
            .collect()
    }

    /// The run's collectives (`pattern = "collective"`), which the flows'
    /// `deps.collective` number: each job's iterations, in entry order.
    pub fn collectives(&self) -> Vec<CollectiveRun> {
        self.traffic
            .iter()
            .filter_map(|g| g.matrix.as_ref()?.collective.as_ref())
            .flat_map(|j| {
                (0..j.iterations).map(move |iteration| CollectiveRun {
                    job: j.job,
                    iteration,
                    collective: j.collective,
                    algorithm: j.algorithm,
                    hosts: j.hosts.clone(),
                    bytes: j.bytes,
                })
            })
            .collect()
    }

    /// Traffic entry `entry`'s flows (a collective's or a connection matrix's) as
    /// htsim's connection-matrix text; with no `entry`, the one entry that has such
    /// flows. The error names the field.
    pub fn matrix_text(&self, entry: Option<usize>) -> Result<String, (String, String)> {
        let with: Vec<usize> = (0..self.traffic.len())
            .filter(|&i| self.traffic[i].matrix.is_some())
            .collect();
        let i = match (entry, with.as_slice()) {
            (Some(i), _) => i,
            (None, [i]) => *i,
            (None, _) => {
                return Err((
                    "traffic".into(),
                    format!(
                        "{} entries are collectives or connection matrices ({}): name one",
                        with.len(),
                        with.iter()
                            .map(|i| format!("traffic[{i}]"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ))
            }
        };
        let field = format!("traffic[{i}]");
        let g = self.traffic.get(i).ok_or_else(|| {
            (
                field.clone(),
                format!("the scenario has {} traffic entries", self.traffic.len()),
            )
        })?;
        let m = g.matrix.as_ref().ok_or_else(|| {
            (
                format!("{field}.pattern"),
                "only a collective's or a connection matrix's flows can be written as a \
                 connection matrix"
                    .into(),
            )
        })?;
        super::traffic::write_matrix(m, self.topology.n_hosts, g.start).map_err(|e| (field, e))
    }

    /// The run's flows and the persistent connections that carry some of them.
    pub fn workload(&self) -> (Vec<FlowSpec>, Vec<ConnSpec>) {
        let (flows, conns, _, _) = self.workload_entries();
        (flows, conns)
    }

    /// `workload`, with the traffic entry of each flow and of each persistent connection.
    pub fn workload_entries(&self) -> (Vec<FlowSpec>, Vec<ConnSpec>, Vec<u32>, Vec<u32>) {
        let mut out = Vec::new();
        let mut conns = Vec::new();
        let (mut flow_entry, mut conn_entry) = (Vec::new(), Vec::new());
        let mut job = 0;
        for (i, g) in self.traffic.iter().enumerate() {
            let mut rng = Rng::new(self.seed, stream::TRAFFIC, i as u64);
            g.generate(&mut rng, &mut job, &mut out, &mut conns);
            flow_entry.resize(out.len(), i as u32);
            conn_entry.resize(conns.len(), i as u32);
        }
        (out, conns, flow_entry, conn_entry)
    }
}

/// Parses TOML text into the schema's `Scenario`: type errors name the dotted path of
/// their field, with a hint for the usual mistakes (`parse_hint`); a required field that
/// is missing is named itself (`missing_fields`).
pub fn parse(text: &str) -> Result<Scenario, ScenarioError> {
    let de = toml::Deserializer::new(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let at: Vec<Segment> = e
            .path()
            .iter()
            .filter_map(|s| match s {
                serde_path_to_error::Segment::Seq { index } => Some(Segment::Index(*index)),
                serde_path_to_error::Segment::Map { key } => Some(Segment::Key(key.clone())),
                serde_path_to_error::Segment::Enum { variant } => {
                    Some(Segment::Key(variant.clone()))
                }
                serde_path_to_error::Segment::Unknown => None,
            })
            .collect();
        let path = e.path().to_string();
        let inner = e.into_inner();
        let msg = inner.message().to_string();
        if let Some(problems) = missing_fields(text, &at, &msg) {
            return ScenarioError { problems };
        }
        let at = inner
            .span()
            .map(|s| {
                let line = text[..s.start.min(text.len())].matches('\n').count() + 1;
                format!(" (line {line})")
            })
            .unwrap_or_default();
        let path = if path == "." { String::new() } else { path };
        let (path, hint) = parse_hint(&path, &msg, text, inner.span().map(|s| s.start));
        ScenarioError {
            problems: vec![(path, format!("{msg}{at}{hint}"))],
        }
    })
}

/// The fields every scenario must give (the others have defaults): the schema's
/// `required`, checked against it by a test.
pub const REQUIRED_FIELDS: [&str; 3] = ["duration_ms", "topology", "traffic"];

/// serde's "missing field `x`" as problems naming the field itself: its path is the
/// table that lacks it (the error's own path may be the last field read before the
/// table ended, `seed` for a scenario without `duration_ms`). At the top level, every
/// required field that is missing; below it, the one serde found, with the line of its
/// table. None for another message.
fn missing_fields(text: &str, at: &[Segment], msg: &str) -> Option<Vec<(String, String)>> {
    let field = msg
        .strip_prefix("missing field `")?
        .strip_suffix('`')?
        .to_string();
    let doc = text.parse::<toml::Table>().ok()?;
    // The deepest table along the error's path that lacks the field.
    let lacks = |depth: usize| -> bool {
        let mut node = toml::Value::Table(doc.clone());
        for seg in &at[..depth] {
            let next = match (&node, seg) {
                (toml::Value::Table(t), Segment::Key(k)) => t.get(k).cloned(),
                (toml::Value::Array(a), Segment::Index(i)) => a.get(*i).cloned(),
                _ => None,
            };
            match next {
                Some(n) => node = n,
                None => return false,
            }
        }
        matches!(&node, toml::Value::Table(t) if !t.contains_key(&field))
    };
    let depth = (0..=at.len()).rev().find(|&d| lacks(d)).unwrap_or(at.len());
    let table = &at[..depth];
    if table.is_empty() {
        let mut fields: Vec<&str> = REQUIRED_FIELDS
            .into_iter()
            .filter(|f| !doc.contains_key(*f))
            .collect();
        if !fields.contains(&field.as_str()) {
            fields.push(&field);
        }
        return Some(
            fields
                .into_iter()
                .map(|f| (f.to_string(), "missing (a required field)".to_string()))
                .collect(),
        );
    }
    let mut path = table.to_vec();
    path.push(Segment::Key(field));
    let line = locate::line_of(text, table)
        .map(|l| format!(" of the table at line {l}"))
        .unwrap_or_default();
    Some(vec![(
        locate::dotted(&path),
        format!("missing (a required field{line})"),
    )])
}

/// `duration_ms` and `measure_from_ms` (or its older name `warmup_ms`), checked: the
/// run's length (0 if it is wrong) and the measurement window's start.
fn run_length(s: &Scenario, c: &mut Checker) -> (SimTime, SimTime) {
    c.positive("duration_ms", s.duration_ms);
    c.time_ms("duration_ms", s.duration_ms);
    let (field, from) = match (s.measure_from_ms, s.warmup_ms) {
        (Some(_), Some(_)) => {
            c.err(
                "measure_from_ms",
                "give either measure_from_ms or warmup_ms (its older name), not both".into(),
            );
            ("measure_from_ms", 0.0)
        }
        (Some(m), None) => ("measure_from_ms", m),
        (None, Some(w)) => ("warmup_ms", w),
        (None, None) => ("measure_from_ms", 0.0),
    };
    c.non_negative(field, from);
    if from.is_finite() && s.duration_ms.is_finite() && from >= s.duration_ms && from > 0.0 {
        c.err(
            field,
            format!(
                "must be less than duration_ms ({}), got {from}",
                s.duration_ms
            ),
        );
    }
    let duration =
        if s.duration_ms.is_finite() && s.duration_ms > 0.0 && s.duration_ms * 1e3 <= MAX_TIME_US {
            from_ms(s.duration_ms)
        } else {
            0
        };
    let from = if from.is_finite() && from > 0.0 && from < s.duration_ms {
        from_ms(from)
    } else {
        0
    };
    (duration, from)
}

/// A parse error's field and a hint for the usual mistakes: a single table where an
/// array of tables is wanted, not exactly one topology, and (when the TOML reader
/// itself stopped, with no field path) the key on the offending line, so a number too
/// large for TOML's 64-bit integers names its field. `at`: the error's offset in `text`.
fn parse_hint(path: &str, msg: &str, text: &str, at: Option<usize>) -> (String, String) {
    let hint = if msg.starts_with("invalid type: map, expected a sequence")
        && ["traffic", "faults"].contains(&path)
    {
        format!("; {path} is an array of tables: write [[{path}]]")
    } else if path == "topology" && msg.starts_with("wanted exactly 1 element") {
        let tables: Vec<String> = crate::net::topology::TOPOLOGY_NAMES
            .iter()
            .map(|t| format!("[topology.{t}]"))
            .collect();
        format!("; give exactly one of {}", tables.join(", "))
    } else {
        String::new()
    };
    if !path.is_empty() {
        return (path.to_string(), hint);
    }
    // The TOML reader's own errors carry no path: take the key of the line.
    let Some(at) = at.filter(|&a| a <= text.len()) else {
        return (String::new(), hint);
    };
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = text[line_start..].lines().next().unwrap_or("");
    let Some((key, _)) = line.split_once('=') else {
        return (String::new(), hint);
    };
    let key = key.trim();
    let before = &text[..line_start];
    let table = before
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('['))
        .map(|l| {
            let name = l.trim_matches(|c| c == '[' || c == ']').trim();
            if l.starts_with("[[") {
                // The n-th entry of an array of tables.
                let n = before.lines().filter(|x| x.trim() == l).count();
                format!("{name}[{}]", n - 1)
            } else {
                name.to_string()
            }
        });
    let path = match table {
        Some(t) => format!("{t}.{key}"),
        None => key.to_string(),
    };
    let hint = if msg.starts_with("number too large") {
        format!("{hint} (TOML integers are at most {})", i64::MAX)
    } else {
        hint
    };
    (path, hint)
}

/// The traffic entries' pinned paths: indices within the topology's paths at the
/// packet level, none at the flow level.
fn check_pinned_paths(
    seed: u64,
    level: Level,
    topo: &Topology,
    links: &Links,
    entry_paths: &[Vec<u32>],
    c: &mut Checker,
) {
    if entry_paths.iter().all(|p| p.is_empty()) {
        return;
    }
    match level {
        Level::Packet => check_path_indices(seed, topo, &links.tier_params, entry_paths, c),
        Level::Flow => check_unpinned(entry_paths, c),
    }
}

/// The time series the `[output]` section asks for.
struct Series {
    flow_sample: Option<SimTime>,
    queue_sample: Option<SimTime>,
    queue_sample_tiers: Vec<u8>,
}

/// The `[output]` section's time series on a topology with tiers `tiers`. `known` is
/// false when the topology is wrong (`tiers` is then empty, and tier names are not
/// reported).
fn output_series(s: &Scenario, tiers: &[&str], known: bool, c: &mut Checker) -> Series {
    let mut sample_period = |field: &str, v: Option<f64>| {
        v.map(|us| c.time(&format!("output.{field}"), Some(us), 1, true).max(1))
    };
    let flow_sample = sample_period("flow_sample_us", s.output.flow_sample_us);
    let queue_sample = sample_period("queue_sample_us", s.output.queue_sample_us);
    let mut queue_sample_tiers = Vec::new();
    for (i, name) in s.output.queue_sample_tiers.iter().flatten().enumerate() {
        match tiers.iter().position(|t| t == name) {
            Some(t) => queue_sample_tiers.push(t as u8),
            None if known => c.err(
                &format!("output.queue_sample_tiers[{i}]"),
                format!(
                    "not a tier of this topology (its tiers: {}), got {name:?}",
                    tiers.join(", ")
                ),
            ),
            None => {}
        }
    }
    Series {
        flow_sample,
        queue_sample,
        queue_sample_tiers,
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A scenario that validates, for the tests to break one field at a time.
    pub(in crate::scenario) const GOOD: &str = r#"
        duration_ms = 10
        [topology.fat_tree]
        k = 4
        [network.queue]
        limit_packets = 100
        ecn_k_packets = 20
        [[traffic]]
        pattern = "permutation"
        transport = "dctcp"
        size = "long_lived"
    "#;

    /// Every problem of scenario `text`, one per line.
    pub(in crate::scenario) fn errors(text: &str) -> String {
        Plan::from_toml(text, Path::new("."))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn good_scenario_resolves() {
        let p = Plan::from_toml(GOOD, Path::new(".")).unwrap();
        assert_eq!(p.topology.n_hosts, 16);
        assert_eq!(p.tier_params[1].queue.ecn_k_packets, 20);
        assert_eq!(p.flows().len(), 16);
    }

    #[test]
    fn wrong_type_names_the_field() {
        let e = errors(&GOOD.replace("k = 4", "k = \"four\""));
        assert!(e.starts_with("topology.fat_tree.k"), "{e}");
    }

    #[test]
    fn unknown_field_is_rejected() {
        let e = errors(&GOOD.replace("limit_packets = 100", "limit_packet = 100"));
        assert!(
            e.contains("network.queue") && e.contains("unknown field"),
            "{e}"
        );
    }

    #[test]
    fn run_length_and_warmup_are_checked() {
        let e = errors(&GOOD.replace("duration_ms = 10", "duration_ms = 10\nwarmup_ms = 20"));
        assert_eq!(e, "warmup_ms: must be less than duration_ms (10), got 20");
        let e = errors(&GOOD.replace("duration_ms = 10", "duration_ms = -1"));
        assert!(
            e.contains("duration_ms: must be a positive number, got -1"),
            "{e}"
        );
    }

    #[test]
    fn every_problem_is_reported_in_order() {
        let text = GOOD.replace("transport = \"dctcp\"", "transport = \"quic\"")
            + "[network.link]\nrate_gbps = -1\n"
            + "[[traffic]]\npattern = \"pair\"\nsrc = 0\ndst = 99\nsize = { fixed = 10 }\n";
        let e = errors(&text);
        let paths: Vec<&str> = e.lines().map(|l| l.split(':').next().unwrap()).collect();
        assert_eq!(
            paths,
            [
                "network.link.rate_gbps",
                "traffic[0].transport",
                "traffic[1].dst"
            ],
            "{e}"
        );
        assert!(
            e.contains("network.link.rate_gbps: must be a rate between"),
            "{e}"
        );
        assert!(
            e.contains("traffic[0].transport: unknown transport \"quic\""),
            "{e}"
        );
        assert!(e.contains("traffic[1].dst: host 99 does not exist"), "{e}");
    }

    #[test]
    fn output_series_are_checked() {
        let text = GOOD.to_string()
            + "[output]\nqueue_sample_us = 0.5\nqueue_sample_tiers = [\"agg_core\", \"spine\"]\n";
        let e = errors(&text);
        assert!(
            e.contains("output.queue_sample_tiers[1]: not a tier of this topology"),
            "{e}"
        );
        let text = GOOD.to_string()
            + "[output]\nqueue_sample_us = 5\nqueue_sample_tiers = [\"agg_core\"]\n";
        let p = Plan::from_toml(&text, Path::new(".")).unwrap();
        assert_eq!(
            (p.queue_sample, p.queue_sample_tiers),
            (Some(5_000_000), vec![2])
        );
    }
}
