//! Parsing and validating a scenario into a `Plan`: every value checked, every default
//! filled in, every name resolved. Problems are collected, not just the first, and each
//! names the dotted path of its field and what was expected.

use super::faults::{fault_plan, FaultPlan};
use super::schema::*;
use crate::engine::{rng::stream, Rng};
use crate::flow::{FlowModelConfig, Level};
use crate::net::network::{LinkParams, LoadBalancing, Network};
use crate::net::queue::{MarkAt, QueueConfig};
use crate::net::red::RedConfig;
use crate::net::rwndq::RwndqConfig;
use crate::net::topology::{Topology, TopologyKind};
use crate::time::{from_ms, from_us, Rate, SimTime};
use crate::transport::mptcp::{FusoConfig, Scheduler};
pub use crate::transport::protocol::CcKind;
use crate::transport::tcp::TcpConfig;
use crate::workload::generate::{Arrival, JobsGen, Pattern, RequestsGen, SizeSplit, TrafficGen};
use crate::workload::{ConnSpec, EmpiricalCdf, FlowSpec, SizeDist};
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

#[derive(Clone, Debug)]
pub struct TransportPlan {
    pub name: String,
    pub tcp: TcpConfig,
    pub cc: CcKind,
    /// 1: plain TCP (for Reno and DCTCP); more: a multipath connection.
    pub subflows: u32,
    pub scheduler: Scheduler,
    /// Delay of the extra subflows after the first handshake.
    pub subflow_gap: SimTime,
    /// FUSO's proactive multipath loss recovery (multipath connections only).
    pub fuso: Option<FusoConfig>,
    /// Copies of every flow, each on its own connection; the first to finish counts.
    pub replicas: u32,
    /// LIA only: cut a subflow's window by 1/β on an ECN echo instead of halving it
    /// (the AMP document's "MPTCP with β", §4.1).
    pub lia_beta: Option<f64>,
}

impl TransportPlan {
    fn single(name: &str, tcp: TcpConfig, cc: CcKind) -> TransportPlan {
        TransportPlan {
            name: name.into(),
            tcp,
            cc,
            subflows: 1,
            scheduler: Scheduler::RoundRobin,
            subflow_gap: 0,
            fuso: None,
            replicas: 1,
            lia_beta: None,
        }
    }

    /// Whether a connection of this transport is multipath (even with one subflow).
    pub fn is_multipath(&self) -> bool {
        self.subflows > 1 || self.cc.info().coupled || self.fuso.is_some()
    }

    fn multipath(name: &str, tcp: TcpConfig, cc: CcKind) -> TransportPlan {
        TransportPlan {
            subflows: DEFAULT_SUBFLOWS,
            ..TransportPlan::single(name, tcp, cc)
        }
    }
}

/// Subflows of the built-in multipath transports (the AMP document's default).
pub const DEFAULT_SUBFLOWS: u32 = 4;
/// XMP's and AMP's cut factor β, AMP's γ and τ (the AMP document's recommendations).
pub const DEFAULT_BETA: f64 = 4.0;
pub const DEFAULT_GAMMA: u32 = 2;
pub const DEFAULT_TAU: u32 = 8;
/// MMPTCP switches from packet scatter to MPTCP subflows after this much data.
pub const DEFAULT_SWITCH_BYTES: u64 = 100_000;

/// A validated, fully resolved scenario.
#[derive(Clone, Debug)]
pub struct Plan {
    pub name: String,
    pub seed: u64,
    pub duration: SimTime,
    pub stop_when_done: bool,
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
}

impl Plan {
    /// Parses TOML text; `base_dir` resolves relative CDF paths.
    pub fn from_toml(text: &str, base_dir: &Path) -> Result<Plan, ScenarioError> {
        let de = toml::Deserializer::new(text);
        let scenario: Scenario = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner();
            let msg = inner.message().to_string();
            let at = inner
                .span()
                .map(|s| {
                    let line = text[..s.start.min(text.len())].matches('\n').count() + 1;
                    format!(" (line {line})")
                })
                .unwrap_or_default();
            let path = if path == "." { String::new() } else { path };
            ScenarioError {
                problems: vec![(path, format!("{msg}{at}"))],
            }
        })?;
        Plan::from_scenario(&scenario, base_dir)
    }

    pub fn from_scenario(s: &Scenario, base_dir: &Path) -> Result<Plan, ScenarioError> {
        let mut c = Checker::default();
        c.positive("duration_ms", s.duration_ms);
        c.time_us("duration_ms", s.duration_ms * 1e3);
        c.non_negative("warmup_ms", s.warmup_ms);
        if s.warmup_ms.is_finite()
            && s.duration_ms.is_finite()
            && s.warmup_ms >= s.duration_ms
            && s.warmup_ms > 0.0
        {
            c.err(
                "warmup_ms",
                format!(
                    "must be less than duration_ms ({}), got {}",
                    s.duration_ms, s.warmup_ms
                ),
            );
        }
        let kind = topology_kind(&s.topology, &mut c);
        let tiers: Vec<&'static str> = kind.as_ref().map(|k| k.tiers()).unwrap_or_default();
        let link_default = &s.network.link;
        c.rate_gbps("network.link.rate_gbps", link_default.rate_gbps);
        c.non_negative("network.link.delay_us", link_default.delay_us);
        c.time_us("network.link.delay_us", link_default.delay_us);
        let switch_queue = queue_config(
            &s.network.queue,
            "network.queue",
            100,
            s.output.queue_histogram,
            &mut c,
        );
        let host_queue = queue_config(
            &s.network.host_queue,
            "network.host_queue",
            1000,
            false,
            &mut c,
        );
        c.non_negative("network.host_jitter_us", s.network.host_jitter_us);
        c.time_us("network.host_jitter_us", s.network.host_jitter_us);
        let host_jitter = match s.network.host_jitter_us {
            x if x.is_finite() && (0.0..=MAX_TIME_US).contains(&x) => from_us(x),
            _ => 0,
        };
        for name in s.network.tiers.keys() {
            if kind.is_some() && !tiers.contains(&name.as_str()) {
                c.err(
                    &format!("network.tiers.{name}"),
                    format!(
                        "not a tier of this topology (its tiers: {})",
                        tiers.join(", ")
                    ),
                );
            }
        }
        let mut tier_params = Vec::new();
        for t in &tiers {
            let o = s.network.tiers.get(*t).cloned().unwrap_or_default();
            let path = format!("network.tiers.{t}");
            let rate = o.rate_gbps.unwrap_or(link_default.rate_gbps);
            let delay = o.delay_us.unwrap_or(link_default.delay_us);
            if o.rate_gbps.is_some() {
                c.rate_gbps(&format!("{path}.rate_gbps"), rate);
            }
            if o.delay_us.is_some() {
                c.non_negative(&format!("{path}.delay_us"), delay);
                c.time_us(&format!("{path}.delay_us"), delay);
            }
            let queue = match &o.queue {
                Some(q) => queue_config(
                    q,
                    &format!("{path}.queue"),
                    100,
                    s.output.queue_histogram,
                    &mut c,
                ),
                None => switch_queue,
            };
            let rate = if rate.is_finite() && (1e-6..=1e5).contains(&rate) {
                Rate::from_gbps(rate)
            } else {
                Rate::from_gbps(1.0)
            };
            let delay = if delay.is_finite() && (0.0..=MAX_TIME_US).contains(&delay) {
                from_us(delay)
            } else {
                0
            };
            tier_params.push(LinkParams {
                rate,
                delay,
                queue,
                rwndq: None,
                red: None,
            });
        }

        let base_tcp = tcp_config(TcpConfig::default(), &s.tcp, "tcp", &mut c);
        if s.network.host_queue.rwndq.is_some() {
            c.err(
                "network.host_queue.rwndq",
                "RWNDQ runs on switch ports, not on host NICs; set it on `network.queue` or \
                 a tier's queue"
                    .into(),
            );
        }
        if s.network.host_queue.red.is_some() {
            c.err(
                "network.host_queue.red",
                "RED runs on switch ports; a host never drops its own packets (its NIC \
                 holds the sender back instead); set it on `network.queue` or a tier's queue"
                    .into(),
            );
        }
        for (t, params) in tiers.iter().zip(tier_params.iter_mut()) {
            let (spec, path) = match s.network.tiers.get(*t).and_then(|o| o.queue.as_ref()) {
                Some(q) => (q, format!("network.tiers.{t}.queue")),
                None => (&s.network.queue, "network.queue".to_string()),
            };
            if let Some(r) = &spec.rwndq {
                let path = format!("{path}.rwndq");
                params.rwndq = Some(rwndq_config(r, &path, &params.queue, &base_tcp, &mut c));
            }
            if let Some(r) = &spec.red {
                let path = format!("{path}.red");
                params.red = Some(red_config(r, &path, params.queue.limit_packets, &mut c));
            }
        }
        let ecn_tcp = TcpConfig {
            ecn: true,
            ..base_tcp
        };
        let mut transports = vec![
            TransportPlan::single("tcp", base_tcp, CcKind::Reno),
            TransportPlan::single("cubic", base_tcp, CcKind::Cubic),
            TransportPlan::single(
                "dctcp",
                ecn_tcp,
                CcKind::Dctcp {
                    g: 1.0 / 16.0,
                    alpha_init: 1.0,
                },
            ),
            TransportPlan::multipath("mptcp", base_tcp, CcKind::Lia),
            TransportPlan::multipath("olia", base_tcp, CcKind::Olia),
            TransportPlan::multipath("dcm", ecn_tcp, CcKind::Dcm { g: 1.0 / 16.0 }),
            TransportPlan::multipath("xmp", ecn_tcp, CcKind::Xmp { beta: DEFAULT_BETA }),
            TransportPlan::multipath(
                "mmptcp",
                base_tcp,
                CcKind::Mmptcp {
                    switch_bytes: DEFAULT_SWITCH_BYTES,
                },
            ),
            TransportPlan::multipath(
                "amp",
                ecn_tcp,
                CcKind::Amp {
                    beta: DEFAULT_BETA,
                    gamma: DEFAULT_GAMMA,
                    tau: DEFAULT_TAU,
                },
            ),
            TransportPlan {
                fuso: Some(FusoConfig::default()),
                ..TransportPlan::multipath("fuso", base_tcp, CcKind::Lia)
            },
            TransportPlan {
                replicas: 2,
                ..TransportPlan::single("repflow", base_tcp, CcKind::Reno)
            },
        ];
        for (name, t) in &s.transports {
            let path = format!("transports.{name}");
            let mut tcp = tcp_config(base_tcp, &t.tcp, &format!("{path}.tcp"), &mut c);
            let cc = transport_cc(t, &path, &mut c);
            tcp.ecn = t.ecn.unwrap_or(cc.info().ecn);
            if cc == CcKind::Lia && t.beta.is_some() && !tcp.ecn {
                c.err(
                    &format!("{path}.beta"),
                    "LIA cuts by 1/beta on ECN echoes: it needs ecn = true".into(),
                );
            }
            let default_subflows = if cc.info().coupled {
                DEFAULT_SUBFLOWS
            } else {
                1
            };
            let subflows = t.subflows.unwrap_or(default_subflows);
            if !(1..=64).contains(&subflows) {
                c.err(
                    &format!("{path}.subflows"),
                    format!("must be between 1 and 64, got {subflows}"),
                );
            }
            let plan = TransportPlan {
                name: name.clone(),
                tcp,
                cc,
                subflows: subflows.clamp(1, 64),
                scheduler: match t.scheduler {
                    SchedulerSpec::RoundRobin => Scheduler::RoundRobin,
                    SchedulerSpec::LowestRtt => Scheduler::LowestRtt,
                },
                subflow_gap: us_field(
                    &mut c,
                    &format!("{path}.subflow_gap_us"),
                    t.subflow_gap_us,
                    0,
                    false,
                ),
                fuso: fuso_config(t, &path, &cc, &mut c),
                replicas: t.replicas.unwrap_or(1),
                lia_beta: t.beta.filter(|_| cc == CcKind::Lia),
            };
            if !(1..=4).contains(&plan.replicas) {
                c.err(
                    &format!("{path}.replicas"),
                    format!("must be between 1 and 4, got {}", plan.replicas),
                );
            }
            match transports.iter_mut().find(|p| &p.name == name) {
                Some(p) => *p = plan,
                None => transports.push(plan),
            }
        }

        let n_hosts = kind.as_ref().map(|k| k.n_hosts()).unwrap_or(0);
        let duration = if s.duration_ms.is_finite()
            && s.duration_ms > 0.0
            && s.duration_ms * 1e3 <= MAX_TIME_US
        {
            from_ms(s.duration_ms)
        } else {
            0
        };
        let mut classes: Vec<String> = Vec::new();
        let mut traffic = Vec::new();
        let (mut entry_paths, mut entry_stop) = (Vec::new(), Vec::new());
        if s.traffic.is_empty() {
            c.err("traffic", "at least one traffic entry is needed".into());
        }
        // Every topology's tier 0 is the host tier, so it gives each host's NIC rate.
        let host_rate_bps = |_h: u32| -> f64 {
            tier_params
                .first()
                .map(|p| p.rate.bits_per_sec() as f64)
                .unwrap_or(1e10)
        };
        for (i, t) in s.traffic.iter().enumerate() {
            let path = format!("traffic[{i}]");
            let transport = match transports.iter().position(|p| p.name == t.transport) {
                Some(p) => {
                    let prefix = if s.transports.contains_key(&t.transport) {
                        format!("transports.{}.tcp", t.transport)
                    } else {
                        "tcp".to_string()
                    };
                    check_single_path_options(&transports[p], &prefix, &mut c);
                    p as u16
                }
                None => {
                    let names: Vec<&str> = transports.iter().map(|p| p.name.as_str()).collect();
                    c.err(
                        &format!("{path}.transport"),
                        format!(
                            "unknown transport {:?} (known: {})",
                            t.transport,
                            names.join(", ")
                        ),
                    );
                    0
                }
            };
            let class = match classes.iter().position(|n| n == &t.class) {
                Some(p) => p as u16,
                None => {
                    classes.push(t.class.clone());
                    classes.len() as u16 - 1
                }
            };
            if kind.is_none() {
                continue;
            }
            let requests = t
                .requests
                .as_ref()
                .map(|r| requests_gen(r, &path, n_hosts, &transports, &mut classes, &mut c));
            let (paths, stop) = entry_routing(t, &path, &transports[transport as usize], &mut c);
            let jobs = t
                .jobs
                .as_ref()
                .map(|j| jobs_gen(j, &path, &mut classes, &mut c));
            let split = t
                .size_split
                .as_ref()
                .map(|x| size_split(x, &path, &transports, &mut classes, &mut c));
            if let Some(mut g) = traffic_gen(
                t,
                &path,
                n_hosts,
                duration,
                base_dir,
                transport,
                class,
                &host_rate_bps,
                requests.as_ref(),
                &mut c,
            ) {
                g.requests = requests;
                g.jobs = jobs;
                g.split = split;
                traffic.push(g);
                entry_paths.push(paths);
                entry_stop.push(stop);
            }
        }
        let topology = kind.as_ref().map(|k| k.build());
        let faults = match &topology {
            Some(topo) => fault_plan(&s.faults, topo, &mut c),
            None => FaultPlan::default(),
        };
        let sample_period = |c: &mut Checker, field: &str, v: Option<f64>| {
            v.map(|us| us_field(c, &format!("output.{field}"), Some(us), 1, true).max(1))
        };
        let flow_sample = sample_period(&mut c, "flow_sample_us", s.output.flow_sample_us);
        let queue_sample = sample_period(&mut c, "queue_sample_us", s.output.queue_sample_us);
        let mut queue_sample_tiers = Vec::new();
        for (i, name) in s.output.queue_sample_tiers.iter().flatten().enumerate() {
            match tiers.iter().position(|t| t == name) {
                Some(t) => queue_sample_tiers.push(t as u8),
                None if kind.is_some() => c.err(
                    &format!("output.queue_sample_tiers[{i}]"),
                    format!(
                        "not a tier of this topology (its tiers: {}), got {name:?}",
                        tiers.join(", ")
                    ),
                ),
                None => {}
            }
        }
        let flow_model = crate::flow::model_config(&s.flow_model, &mut c.problems);
        let level = match s.level {
            LevelSpec::Packet => Level::Packet,
            LevelSpec::Flow => Level::Flow,
        };
        if let Some(k) = &kind {
            c.problems
                .extend(crate::flow::level_problems(s, level, k, &transports));
        }
        if let Some(topo) = &topology {
            if c.problems.is_empty() && entry_paths.iter().any(|p| !p.is_empty()) {
                check_path_indices(s, level, topo, &tier_params, &entry_paths, &mut c);
            }
        }
        if !c.problems.is_empty() {
            return Err(ScenarioError {
                problems: c.problems,
            });
        }
        let topology = topology.expect("validated");
        Ok(Plan {
            name: s.name.clone(),
            seed: s.seed,
            duration,
            stop_when_done: s.stop_when_done,
            warmup: from_ms(s.warmup_ms),
            topology,
            tier_params,
            host_queue,
            host_jitter,
            load_balancing: match s.network.load_balancing {
                LoadBalancingSpec::Ecmp => LoadBalancing::Ecmp,
                LoadBalancingSpec::Spray => LoadBalancing::Spray,
            },
            transports,
            classes,
            traffic,
            entry_paths,
            entry_stop,
            queue_histogram: s.output.queue_histogram,
            flow_sample,
            queue_sample,
            queue_sample_tiers,
            faults,
            level,
            flow_model,
        })
    }

    /// Draws the run's flows from the traffic entries, in entry order.
    pub fn flows(&self) -> Vec<FlowSpec> {
        self.workload().0
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

/// The longest time a scenario may name, in µs: 10^6 s, so sums of times stay far
/// below the 2^64 ps (≈ 213 days) the clock holds.
pub(super) const MAX_TIME_US: f64 = 1e12;

/// The most flows one traffic entry may generate (they are all drawn before the run).
const MAX_FLOWS: f64 = 1e7;

/// A traffic entry's `paths` and `stop_us`, checked as far as they can be without the
/// network (`check_path_indices` does the rest).
fn entry_routing(
    t: &TrafficSpec,
    path: &str,
    transport: &TransportPlan,
    c: &mut Checker,
) -> (Vec<u32>, SimTime) {
    let paths = t.paths.clone().unwrap_or_default();
    if t.paths.is_some() {
        let field = format!("{path}.paths");
        if paths.is_empty() {
            c.err(&field, "must name at least one path index, got []".into());
        } else if paths.len() > transport.subflows as usize {
            c.err(
                &field,
                format!(
                    "names {} paths for transport {:?}, which has {} subflow(s)",
                    paths.len(),
                    transport.name,
                    transport.subflows
                ),
            );
        }
        if transport.cc.scatter_bytes().is_some() {
            c.err(
                &field,
                "MMPTCP scatters packets over random paths; it cannot be pinned".into(),
            );
        }
    }
    let mut stop = SimTime::MAX;
    if let Some(us) = t.stop_us {
        let field = format!("{path}.stop_us");
        stop = us_field(c, &field, Some(us), SimTime::MAX, true);
        if !matches!(t.size, SizeSpec::LongLived) || t.pattern == PatternSpec::Requests {
            c.err(
                &field,
                "applies only to long-lived flows (size = \"long_lived\") of their own".into(),
            );
        } else if us <= t.start_us {
            c.err(
                &field,
                format!("must be after start_us ({}), got {us}", t.start_us),
            );
        }
    }
    (paths, stop)
}

/// Checks the traffic entries' path indices against the network's equal-cost paths.
fn check_path_indices(
    s: &Scenario,
    level: Level,
    topo: &Topology,
    tier_params: &[LinkParams],
    entry_paths: &[Vec<u32>],
    c: &mut Checker,
) {
    if level == Level::Flow {
        for (i, p) in entry_paths.iter().enumerate() {
            if !p.is_empty() {
                c.err(
                    &format!("traffic[{i}].paths"),
                    "the flow-level model does not pin paths; use level = \"packet\"".into(),
                );
            }
        }
        return;
    }
    let most = if let TopologyKind::BCube { k, .. } = topo.kind {
        // BCube's parallel path set: one path per interface.
        k + 1
    } else {
        // The topologies here are symmetric: host 0's largest number of equal-cost paths
        // to another host is every pair's largest.
        let net = Network::build(
            topo,
            tier_params,
            QueueConfig::default(),
            LoadBalancing::Ecmp,
            s.seed,
        );
        (1..topo.n_hosts)
            .map(|h| net.ecmp_paths(0, h))
            .max()
            .unwrap_or(1)
    };
    for (i, p) in entry_paths.iter().enumerate() {
        for (j, &index) in p.iter().enumerate() {
            if index >= most {
                c.err(
                    &format!("traffic[{i}].paths[{j}]"),
                    format!(
                        "path index {index} is out of range: this topology has at most \
                         {most} equal-cost path(s) between two hosts (indices 0..{})",
                        most - 1
                    ),
                );
            }
        }
    }
}

/// FUSO's settings of a `[transports.NAME]` entry, checked; `None` when FUSO is off.
fn fuso_config(t: &TransportSpec, path: &str, cc: &CcKind, c: &mut Checker) -> Option<FusoConfig> {
    let on = t.fuso.unwrap_or(false);
    if !on {
        for (field, v) in [("fuso_alpha", t.fuso_alpha), ("fuso_beta", t.fuso_beta)] {
            if v.is_some() {
                c.err(
                    &format!("{path}.{field}"),
                    "applies only with fuso = true".into(),
                );
            }
        }
        return None;
    }
    if cc.scatter_bytes().is_some() {
        c.err(
            &format!("{path}.fuso"),
            "FUSO does not combine with MMPTCP's packet scatter; use another controller".into(),
        );
    }
    let mut cfg = FusoConfig::default();
    for (field, v, slot) in [
        ("fuso_alpha", t.fuso_alpha, &mut cfg.alpha),
        ("fuso_beta", t.fuso_beta, &mut cfg.beta),
    ] {
        if let Some(x) = v {
            if !(x.is_finite() && x >= 0.0) {
                c.err(
                    &format!("{path}.{field}"),
                    format!("must be a non-negative number, got {x}"),
                );
            }
            *slot = x;
        }
    }
    Some(cfg)
}

/// The controller of a `[transports.NAME]` entry, with its parameters checked.
fn transport_cc(t: &TransportSpec, path: &str, c: &mut Checker) -> CcKind {
    let g = t.dctcp_g.unwrap_or(1.0 / 16.0);
    if !(g > 0.0 && g <= 1.0) {
        c.err(
            &format!("{path}.dctcp_g"),
            format!("must be in (0, 1], got {g}"),
        );
    }
    let alpha_init = t.dctcp_alpha_init.unwrap_or(1.0);
    if !(0.0..=1.0).contains(&alpha_init) {
        c.err(
            &format!("{path}.dctcp_alpha_init"),
            format!("must be in [0, 1], got {alpha_init}"),
        );
    }
    let beta = t.beta.unwrap_or(DEFAULT_BETA);
    if !(beta.is_finite() && beta > 1.0) {
        c.err(
            &format!("{path}.beta"),
            format!("must be greater than 1, got {beta}"),
        );
    }
    // A parameter set on a transport whose controller does not take it.
    let params = t.cc.info().params;
    for (field, set) in [
        ("dctcp_g", t.dctcp_g.is_some()),
        ("dctcp_alpha_init", t.dctcp_alpha_init.is_some()),
        ("beta", t.beta.is_some()),
        ("amp_gamma", t.amp_gamma.is_some()),
        ("amp_tau", t.amp_tau.is_some()),
        ("mmptcp_switch_bytes", t.mmptcp_switch_bytes.is_some()),
    ] {
        if set && !params.contains(&field) {
            c.err(
                &format!("{path}.{field}"),
                format!(
                    "applies only to cc = {}",
                    CcSpec::taking(field).join(" or ")
                ),
            );
        }
    }
    let switch_bytes = t.mmptcp_switch_bytes.unwrap_or(DEFAULT_SWITCH_BYTES);
    c.at_least(&format!("{path}.mmptcp_switch_bytes"), switch_bytes, 1);
    let gamma = t.amp_gamma.unwrap_or(DEFAULT_GAMMA);
    let tau = t.amp_tau.unwrap_or(DEFAULT_TAU);
    c.at_least(&format!("{path}.amp_gamma"), gamma as u64, 1);
    c.at_least(&format!("{path}.amp_tau"), tau as u64, 1);
    match t.cc {
        CcSpec::Reno => CcKind::Reno,
        CcSpec::Cubic => CcKind::Cubic,
        CcSpec::Dctcp => CcKind::Dctcp { g, alpha_init },
        CcSpec::Lia => CcKind::Lia,
        CcSpec::Olia => CcKind::Olia,
        CcSpec::Dcm => CcKind::Dcm { g },
        CcSpec::Xmp => CcKind::Xmp { beta },
        CcSpec::Amp => CcKind::Amp { beta, gamma, tau },
        CcSpec::Mmptcp => CcKind::Mmptcp { switch_bytes },
    }
}

#[derive(Default)]
pub(super) struct Checker {
    pub(super) problems: Vec<(String, String)>,
}

impl Checker {
    pub(super) fn err(&mut self, path: &str, msg: String) {
        self.problems.push((path.to_string(), msg));
    }
    pub(super) fn positive(&mut self, path: &str, v: f64) {
        if !(v.is_finite() && v > 0.0) {
            self.err(path, format!("must be a positive number, got {v}"));
        }
    }
    /// A rate in Gbit/s the simulator can represent: 1 kbit/s to 100 Tbit/s.
    pub(super) fn rate_gbps(&mut self, path: &str, v: f64) {
        if !(v.is_finite() && (1e-6..=1e5).contains(&v)) {
            self.err(
                path,
                format!("must be a rate between 0.000001 and 100000 Gbps, got {v}"),
            );
        }
    }
    /// A time the picosecond clock can hold with room to add to it: at most 10^6 s.
    pub(super) fn time_us(&mut self, path: &str, v: f64) {
        if v.is_finite() && v > MAX_TIME_US {
            self.err(
                path,
                format!("must be at most {MAX_TIME_US:e} µs (about 11 days), got {v}"),
            );
        }
    }
    pub(super) fn non_negative(&mut self, path: &str, v: f64) {
        if !(v.is_finite() && v >= 0.0) {
            self.err(path, format!("must be zero or positive, got {v}"));
        }
    }
    pub(super) fn at_least(&mut self, path: &str, v: u64, min: u64) {
        if v < min {
            self.err(path, format!("must be at least {min}, got {v}"));
        }
    }
    pub(super) fn at_most(&mut self, path: &str, v: u64, max: u64) {
        if v > max {
            self.err(path, format!("must be at most {max}, got {v}"));
        }
    }
}

/// The largest VL2 or BCube a scenario may describe.
const MAX_HOSTS: u64 = 1 << 22;

fn topology_kind(t: &TopologySpec, c: &mut Checker) -> Option<TopologyKind> {
    let before = c.problems.len();
    let kind = match *t {
        TopologySpec::Star { senders } => {
            c.at_least("topology.star.senders", senders as u64, 1);
            TopologyKind::Star { senders }
        }
        TopologySpec::Dumbbell { pairs } => {
            c.at_least("topology.dumbbell.pairs", pairs as u64, 1);
            TopologyKind::Dumbbell { pairs }
        }
        TopologySpec::LeafSpine {
            leaves,
            spines,
            hosts_per_leaf,
        } => {
            c.at_least("topology.leaf_spine.leaves", leaves as u64, 1);
            c.at_least("topology.leaf_spine.spines", spines as u64, 1);
            c.at_least(
                "topology.leaf_spine.hosts_per_leaf",
                hosts_per_leaf as u64,
                1,
            );
            TopologyKind::LeafSpine {
                leaves,
                spines,
                hosts_per_leaf,
            }
        }
        TopologySpec::FatTree {
            k,
            oversubscription,
        } => {
            if k < 2 || k % 2 != 0 {
                c.err(
                    "topology.fat_tree.k",
                    format!("must be an even number ≥ 2, got {k}"),
                );
            }
            if k > 128 {
                c.err(
                    "topology.fat_tree.k",
                    format!("must be at most 128, got {k}"),
                );
            }
            c.at_least(
                "topology.fat_tree.oversubscription",
                oversubscription as u64,
                1,
            );
            TopologyKind::FatTree {
                k,
                oversubscription,
            }
        }
        TopologySpec::FusoTestbed {
            hosts_per_rack,
            paths,
        } => {
            let f = "topology.fuso_testbed";
            c.at_least(&format!("{f}.hosts_per_rack"), hosts_per_rack as u64, 1);
            c.at_least(&format!("{f}.paths"), paths as u64, 1);
            c.at_most(
                &format!("{f}.hosts_per_rack"),
                hosts_per_rack as u64,
                1 << 20,
            );
            c.at_most(&format!("{f}.paths"), paths as u64, 1024);
            TopologyKind::FusoTestbed {
                hosts_per_rack,
                paths,
            }
        }
        TopologySpec::FusoFabric {
            pods,
            spines,
            aggs_per_pod,
            tors_per_pod,
            hosts_per_tor,
        } => {
            let f = "topology.fuso_fabric";
            for (field, v) in [
                ("pods", pods),
                ("spines", spines),
                ("aggs_per_pod", aggs_per_pod),
                ("tors_per_pod", tors_per_pod),
                ("hosts_per_tor", hosts_per_tor),
            ] {
                c.at_least(&format!("{f}.{field}"), v as u64, 1);
                c.at_most(&format!("{f}.{field}"), v as u64, 1024);
            }
            if aggs_per_pod > 0 && spines % aggs_per_pod != 0 {
                c.err(
                    &format!("{f}.spines"),
                    format!(
                        "must be a multiple of aggs_per_pod ({aggs_per_pod}): one plane of spines per aggregation switch, got {spines}"
                    ),
                );
            }
            TopologyKind::FusoFabric {
                pods,
                spines,
                aggs_per_pod,
                tors_per_pod,
                hosts_per_tor,
            }
        }
        TopologySpec::Vl2 {
            aggregation,
            intermediate,
            hosts_per_tor,
        } => {
            let path = "topology.vl2";
            if aggregation < 2 || aggregation % 2 != 0 || aggregation > 4096 {
                c.err(
                    &format!("{path}.aggregation"),
                    format!("must be an even number between 2 and 4096, got {aggregation}"),
                );
            }
            for (field, v) in [
                ("intermediate", intermediate),
                ("hosts_per_tor", hosts_per_tor),
            ] {
                if !(1..=4096).contains(&v) {
                    c.err(
                        &format!("{path}.{field}"),
                        format!("must be between 1 and 4096, got {v}"),
                    );
                }
            }
            let hosts = aggregation as u64 / 2 * intermediate as u64 * hosts_per_tor as u64;
            if c.problems.len() == before && hosts > MAX_HOSTS {
                c.err(
                    path,
                    format!("has {hosts} hosts; at most {MAX_HOSTS} are supported"),
                );
            }
            TopologyKind::Vl2 {
                aggregation,
                intermediate,
                hosts_per_tor,
            }
        }
        TopologySpec::Bcube { n, k } => {
            if !(2..=1024).contains(&n) {
                c.err(
                    "topology.bcube.n",
                    format!("must be between 2 and 1024 switch ports, got {n}"),
                );
            }
            if k > 7 {
                c.err(
                    "topology.bcube.k",
                    format!("must be between 0 and 7, got {k}"),
                );
            }
            let hosts = (n as u64).checked_pow(k + 1).unwrap_or(u64::MAX);
            if c.problems.len() == before && hosts > MAX_HOSTS {
                c.err(
                    "topology.bcube",
                    format!("has n^(k+1) = {hosts} hosts; at most {MAX_HOSTS} are supported"),
                );
            }
            TopologyKind::BCube { n, k }
        }
    };
    if c.problems.len() == before && kind.n_hosts() < 2 {
        c.err("topology", "needs at least two hosts".into());
    }
    (c.problems.len() == before).then_some(kind)
}

fn queue_config(
    q: &QueueSpec,
    path: &str,
    default_limit: u64,
    histogram: bool,
    c: &mut Checker,
) -> QueueConfig {
    for (field, v) in [
        ("limit_packets", q.limit_packets),
        ("limit_bytes", q.limit_bytes),
        ("ecn_k_bytes", q.ecn_k_bytes),
    ] {
        if v == Some(0) {
            c.err(
                &format!("{path}.{field}"),
                "must be at least 1, got 0".into(),
            );
        }
    }
    let (limit_packets, limit_bytes) = match (q.limit_packets, q.limit_bytes) {
        (None, None) => (default_limit, u64::MAX),
        (p, b) => (p.unwrap_or(u64::MAX), b.unwrap_or(u64::MAX)),
    };
    QueueConfig {
        limit_packets,
        limit_bytes,
        ecn_k_packets: q.ecn_k_packets.unwrap_or(u64::MAX),
        ecn_k_bytes: q.ecn_k_bytes.unwrap_or(u64::MAX),
        mark_at: match q.ecn_mark {
            MarkAtSpec::Enqueue => MarkAt::Enqueue,
            MarkAtSpec::Dequeue => MarkAt::Dequeue,
        },
        priority: q.priority,
        histogram,
    }
}

fn red_config(r: &RedSpec, path: &str, limit_packets: u64, c: &mut Checker) -> RedConfig {
    let cfg = RedConfig {
        min_th: r.min_packets,
        max_th: r.max_packets,
        max_p: r.max_p.unwrap_or(0.1),
        weight: r.weight.unwrap_or(0.002),
        gentle: r.gentle.unwrap_or(true),
        ecn: r.ecn,
    };
    if !(cfg.min_th.is_finite() && cfg.min_th >= 0.0) {
        c.err(
            &format!("{path}.min_packets"),
            format!("must be a number ≥ 0, got {}", cfg.min_th),
        );
    } else if !(cfg.max_th.is_finite() && cfg.max_th > cfg.min_th) {
        c.err(
            &format!("{path}.max_packets"),
            format!(
                "must be greater than min_packets ({}), got {}",
                cfg.min_th, cfg.max_th
            ),
        );
    } else if limit_packets != u64::MAX && cfg.min_th >= limit_packets as f64 {
        c.err(
            &format!("{path}.min_packets"),
            format!(
                "must be below the queue's limit of {limit_packets} packets, got {}",
                cfg.min_th
            ),
        );
    }
    for (field, v) in [("max_p", cfg.max_p), ("weight", cfg.weight)] {
        if !(v.is_finite() && v > 0.0 && v <= 1.0) {
            c.err(
                &format!("{path}.{field}"),
                format!("must be in (0, 1], got {v}"),
            );
        }
    }
    cfg
}

/// RWNDQ's parameters for ports with queue `q`: the preset's, with the user's overrides.
fn rwndq_config(
    r: &RwndqSpec,
    path: &str,
    q: &QueueConfig,
    tcp: &TcpConfig,
    c: &mut Checker,
) -> RwndqConfig {
    let (interval_us, updates, fraction) = match r.preset {
        RwndqPreset::Kernel => (1000.0, 8, 0.25),
        RwndqPreset::Ns2 => (50.0, 10, 0.20),
    };
    let interval = us_field(
        c,
        &format!("{path}.interval_us"),
        r.interval_us,
        from_us(interval_us),
        true,
    );
    let updates = r.updates.unwrap_or(updates);
    c.at_least(&format!("{path}.updates"), updates as u64, 1);
    let fraction = r.target_fraction.unwrap_or(fraction);
    if !(fraction.is_finite() && fraction > 0.0 && fraction <= 1.0) {
        c.err(
            &format!("{path}.target_fraction"),
            format!("must be in (0, 1], got {fraction}"),
        );
    }
    if r.target_fraction.is_some() && r.target_bytes.is_some() {
        c.err(
            &format!("{path}.target_bytes"),
            "give either target_bytes or target_fraction, not both".into(),
        );
    }
    let segment = (tcp.mss + tcp.header) as u64;
    let limit = q.limit_bytes.min(q.limit_packets.saturating_mul(segment));
    let target_bytes = match r.target_bytes {
        Some(b) => {
            c.at_least(&format!("{path}.target_bytes"), b, 1);
            b
        }
        None => ((limit as f64 * fraction.clamp(0.0, 1.0)) as u64).max(1),
    };
    RwndqConfig {
        interval,
        updates: updates.max(1),
        target_bytes,
        mss: tcp.mss,
    }
}

fn us_field(
    c: &mut Checker,
    path: &str,
    v: Option<f64>,
    default: SimTime,
    positive: bool,
) -> SimTime {
    match v {
        None => default,
        Some(x) => {
            if positive {
                c.positive(path, x);
            } else {
                c.non_negative(path, x);
            }
            c.time_us(path, x);
            if x.is_finite() && (0.0..=MAX_TIME_US).contains(&x) {
                from_us(x)
            } else {
                default
            }
        }
    }
}

fn tcp_config(base: TcpConfig, t: &TcpSpec, path: &str, c: &mut Checker) -> TcpConfig {
    let mut cfg = base;
    if let Some(m) = t.mss {
        c.at_least(&format!("{path}.mss"), m as u64, 1);
        cfg.mss = m.max(1);
    }
    if let Some(h) = t.header_bytes {
        cfg.header = h;
    }
    if let Some(w) = t.init_cwnd_packets {
        c.at_least(&format!("{path}.init_cwnd_packets"), w as u64, 1);
        cfg.init_cwnd = w.max(1);
    }
    if let Some(s) = t.init_ssthresh_bytes {
        c.at_least(&format!("{path}.init_ssthresh_bytes"), s, 1);
        cfg.init_ssthresh = s as f64;
    }
    cfg.rto_min = us_field(
        c,
        &format!("{path}.rto_min_us"),
        t.rto_min_us,
        cfg.rto_min,
        true,
    );
    cfg.rto_max = us_field(
        c,
        &format!("{path}.rto_max_us"),
        t.rto_max_us,
        cfg.rto_max,
        true,
    );
    cfg.rto_initial = us_field(
        c,
        &format!("{path}.rto_initial_us"),
        t.rto_initial_us,
        cfg.rto_initial,
        true,
    );
    if cfg.rto_min > cfg.rto_max {
        c.err(
            &format!("{path}.rto_min_us"),
            "must not exceed rto_max_us".into(),
        );
    }
    if let Some(d) = t.dupack_threshold {
        c.at_least(&format!("{path}.dupack_threshold"), d as u64, 1);
        cfg.dupack_threshold = d.max(1);
    }
    if let Some(d) = t.delayed_ack {
        cfg.delayed_ack = d;
    }
    cfg.delack_timeout = us_field(
        c,
        &format!("{path}.delayed_ack_timeout_us"),
        t.delayed_ack_timeout_us,
        cfg.delack_timeout,
        true,
    );
    if let Some(w) = t.rcv_wnd_bytes {
        c.at_least(&format!("{path}.rcv_wnd_bytes"), w as u64, 1);
        cfg.rcv_wnd = w.max(1);
    }
    if let Some(m) = t.cwnd_min_packets {
        c.at_least(&format!("{path}.cwnd_min_packets"), m as u64, 1);
        cfg.cwnd_min = m.max(1);
    }
    let r = &mut cfg.recovery;
    for (value, set) in [
        (t.sack, &mut r.sack),
        (t.limited_transmit, &mut r.limited_transmit),
        (t.early_retransmit, &mut r.early_retransmit),
        (t.tlp, &mut r.tlp),
        (t.tcp_ir, &mut r.tcp_ir),
        (t.proactive, &mut r.proactive),
        (t.idle_restart, &mut r.idle_restart),
        (t.fin_with_data, &mut r.fin_with_data),
    ] {
        if let Some(v) = value {
            *set = v;
        }
    }
    if cfg.recovery.proactive && !cfg.recovery.sack {
        c.err(
            &format!("{path}.proactive"),
            "needs sack = true (without SACK the ACKs of the copies are duplicate ACKs)".into(),
        );
    }
    cfg
}

/// Loss-recovery options that work on single-path TCP only: TCP-IR's receiver rebuilds
/// subflow bytes the data level could not map, and Proactive's copies would be counted
/// per subflow. Checked for the transports that traffic uses.
fn check_single_path_options(p: &TransportPlan, field_prefix: &str, c: &mut Checker) {
    if p.subflows == 1 && !p.cc.info().coupled {
        return;
    }
    for (field, on) in [
        ("tcp_ir", p.tcp.recovery.tcp_ir),
        ("proactive", p.tcp.recovery.proactive),
    ] {
        if on {
            c.err(
                &format!("{field_prefix}.{field}"),
                format!("only single-path TCP (transport {:?} is multipath)", p.name),
            );
        }
    }
}

fn size_dist(s: &SizeSpec, path: &str, base_dir: &Path, c: &mut Checker) -> Option<SizeDist> {
    match s {
        SizeSpec::Fixed(b) => {
            c.at_least(path, *b, 1);
            Some(SizeDist::Fixed(*b))
        }
        SizeSpec::Uniform { min, max } => {
            c.at_least(&format!("{path}.min"), *min, 1);
            if max < min {
                c.err(
                    &format!("{path}.max"),
                    format!("must be at least min ({min}), got {max}"),
                );
            }
            Some(SizeDist::Uniform {
                min: *min,
                max: (*max).max(*min),
            })
        }
        SizeSpec::Pareto { mean, shape } => {
            c.positive(&format!("{path}.mean"), *mean);
            if !(shape.is_finite() && *shape > 1.0) {
                c.err(
                    &format!("{path}.shape"),
                    format!("must be greater than 1 (for a finite mean), got {shape}"),
                );
            }
            Some(SizeDist::Pareto {
                mean: *mean,
                shape: *shape,
            })
        }
        SizeSpec::Cdf(name) => {
            if let Some(cdf) = EmpiricalCdf::builtin(name) {
                return Some(SizeDist::Cdf(cdf));
            }
            let file = base_dir.join(name);
            match std::fs::read_to_string(&file) {
                Err(e) => {
                    c.err(path, format!("{name:?} is neither a built-in distribution (websearch, datamining) nor a readable file: {} ({e})", file.display()));
                    None
                }
                Ok(text) => match EmpiricalCdf::parse(&text) {
                    Ok(cdf) => Some(SizeDist::Cdf(cdf)),
                    Err(e) => {
                        c.err(path, format!("{}: {e}", file.display()));
                        None
                    }
                },
            }
        }
        SizeSpec::LongLived => Some(SizeDist::LongLived),
    }
}

#[allow(clippy::too_many_arguments)]
fn traffic_gen(
    t: &TrafficSpec,
    path: &str,
    n_hosts: u32,
    duration: SimTime,
    base_dir: &Path,
    transport: u16,
    class: u16,
    host_rate_bps: &dyn Fn(u32) -> f64,
    requests: Option<&RequestsGen>,
    c: &mut Checker,
) -> Option<TrafficGen> {
    let before = c.problems.len();
    let check_host = |c: &mut Checker, field: &str, h: u32| {
        if h >= n_hosts {
            c.err(
                &format!("{path}.{field}"),
                format!("host {h} does not exist (hosts are 0..{})", n_hosts - 1),
            );
        }
    };
    let hosts: Vec<u32> = match (&t.hosts, t.host_range) {
        (Some(_), Some(_)) => {
            c.err(
                &format!("{path}.hosts"),
                "give either hosts or host_range, not both".into(),
            );
            vec![]
        }
        (Some(h), None) => {
            for &x in h {
                check_host(c, "hosts", x);
            }
            h.clone()
        }
        (None, Some([a, b])) => {
            if a >= b || b > n_hosts {
                c.err(
                    &format!("{path}.host_range"),
                    format!("must be [first, last) with first < last ≤ {n_hosts}, got [{a}, {b}]"),
                );
            }
            (a..b.min(n_hosts)).collect()
        }
        (None, None) => (0..n_hosts).collect(),
    };
    if t.priority > 1 {
        c.err(
            &format!("{path}.priority"),
            format!("must be 0 or 1, got {}", t.priority),
        );
    }
    c.non_negative(&format!("{path}.start_us"), t.start_us);
    c.time_us(&format!("{path}.start_us"), t.start_us);
    c.non_negative(&format!("{path}.stagger_us"), t.stagger_us);
    c.time_us(&format!("{path}.stagger_us"), t.stagger_us);
    let size = size_dist(&t.size, &format!("{path}.size"), base_dir, c);
    let pattern = match t.pattern {
        PatternSpec::Permutation => Pattern::Permutation,
        PatternSpec::RandomPairs => Pattern::RandomPairs,
        PatternSpec::Incast => Pattern::Incast,
        PatternSpec::AllToAll => Pattern::AllToAll,
        PatternSpec::Pair => Pattern::Pair,
        PatternSpec::Requests => Pattern::Requests,
        PatternSpec::EachToRandom => Pattern::EachToRandom,
        PatternSpec::Jobs => Pattern::Jobs,
    };
    match (pattern == Pattern::Jobs, &t.jobs) {
        (true, None) => c.err(
            &format!("{path}.jobs"),
            "pattern \"jobs\" needs a jobs table (fanout)".into(),
        ),
        (false, Some(_)) => c.err(
            &format!("{path}.jobs"),
            "applies only to pattern \"jobs\"".into(),
        ),
        (true, Some(j)) => {
            if j.fanout as usize >= hosts.len() {
                c.err(
                    &format!("{path}.jobs.fanout"),
                    format!(
                        "a job needs a client and fanout other hosts; the entry has {} hosts, got fanout {}",
                        hosts.len(),
                        j.fanout
                    ),
                );
            }
            if t.arrival.is_some() {
                c.err(
                    &format!("{path}.arrival"),
                    "jobs run in closed loops; Poisson arrivals do not apply".into(),
                );
            }
        }
        (false, None) => {}
    }
    match (pattern == Pattern::Requests, requests.is_some()) {
        (true, false) => c.err(
            &format!("{path}.requests"),
            "pattern \"requests\" needs a requests table (clients, servers)".into(),
        ),
        (false, true) => c.err(
            &format!("{path}.requests"),
            "applies only to pattern \"requests\"".into(),
        ),
        _ => {}
    }
    if pattern == Pattern::Requests && t.size_split.is_some() {
        c.err(
            &format!("{path}.size_split"),
            "does not apply to pattern \"requests\" (use requests.background_above_bytes)".into(),
        );
    }
    if pattern == Pattern::Requests
        && (t.hosts.is_some() || t.host_range.is_some())
        && c.problems.len() == before
    {
        c.err(
            &format!("{path}.hosts"),
            "pattern \"requests\" takes its hosts from requests.clients and requests.servers"
                .into(),
        );
    }
    if !matches!(pattern, Pattern::Pair | Pattern::Requests)
        && hosts.len() < 2
        && c.problems.len() == before
    {
        c.err(
            &format!("{path}.hosts"),
            format!("the pattern needs at least two hosts, got {}", hosts.len()),
        );
    }
    let (mut src, mut dst) = (0, 0);
    if pattern == Pattern::Pair {
        match (t.src, t.dst) {
            (Some(s), Some(d)) => {
                check_host(c, "src", s);
                check_host(c, "dst", d);
                if s == d {
                    c.err(
                        &format!("{path}.dst"),
                        format!("must differ from src ({s})"),
                    );
                }
                src = s;
                dst = d;
            }
            _ => c.err(path, "pattern \"pair\" needs src and dst".into()),
        }
    } else {
        for (field, v) in [("src", t.src), ("dst", t.dst)] {
            if v.is_some() {
                c.err(
                    &format!("{path}.{field}"),
                    "applies only to pattern \"pair\"".into(),
                );
            }
        }
    }
    let mut receiver = 0;
    let mut senders = Vec::new();
    if pattern == Pattern::Incast {
        receiver = t
            .receiver
            .unwrap_or_else(|| hosts.first().copied().unwrap_or(0));
        check_host(c, "receiver", receiver);
        let others: Vec<u32> = hosts.iter().copied().filter(|&h| h != receiver).collect();
        let n = t.senders.unwrap_or(others.len() as u32);
        if n == 0 || n as usize > others.len() {
            c.err(
                &format!("{path}.senders"),
                format!(
                    "must be between 1 and {} (the entry's other hosts), got {n}",
                    others.len()
                ),
            );
        }
        senders = others.into_iter().take(n as usize).collect();
    } else {
        if t.receiver.is_some() {
            c.err(
                &format!("{path}.receiver"),
                "applies only to pattern \"incast\"".into(),
            );
        }
        if t.senders.is_some() {
            c.err(
                &format!("{path}.senders"),
                "applies only to pattern \"incast\"".into(),
            );
        }
    }
    let interval = match t.interval_us {
        Some(x) => {
            c.positive(&format!("{path}.interval_us"), x);
            c.time_us(&format!("{path}.interval_us"), x);
            from_us(x.clamp(0.0, MAX_TIME_US))
        }
        None => {
            if t.repeat > 1 && !t.closed_loop && pattern != Pattern::Jobs {
                c.err(
                    &format!("{path}.interval_us"),
                    "is needed when repeat > 1 (or set closed_loop = true)".into(),
                );
            }
            0
        }
    };
    if t.closed_loop
        && !matches!(
            pattern,
            Pattern::Incast | Pattern::Pair | Pattern::EachToRandom | Pattern::Jobs
        )
    {
        c.err(
            &format!("{path}.closed_loop"),
            "applies only to patterns \"incast\", \"pair\", \"each_to_random\" and \"jobs\"".into(),
        );
    }
    if t.closed_loop && t.arrival.is_some() {
        c.err(
            &format!("{path}.closed_loop"),
            "cannot be combined with Poisson arrivals".into(),
        );
    }
    c.at_least(&format!("{path}.repeat"), t.repeat as u64, 1);
    let until = match t.until_us {
        Some(x) => {
            c.positive(&format!("{path}.until_us"), x);
            c.time_us(&format!("{path}.until_us"), x);
            from_us(x.clamp(0.0, MAX_TIME_US))
        }
        None => duration,
    };
    // Requests always arrive as a Poisson process.
    let arrival_spec = match pattern {
        Pattern::Requests => Some(ArrivalSpec::Poisson),
        _ => t.arrival,
    };
    let arrival = match arrival_spec {
        None => {
            for (field, v) in [
                ("load", t.load),
                ("rate_per_s", t.rate_per_s),
                ("until_us", t.until_us),
            ] {
                if v.is_some() {
                    c.err(
                        &format!("{path}.{field}"),
                        "applies only with arrival = \"poisson\"".into(),
                    );
                }
            }
            if pattern == Pattern::RandomPairs && t.flows.is_none() {
                c.err(
                    &format!("{path}.flows"),
                    "pattern \"random_pairs\" needs flows (a count) or arrival = \"poisson\""
                        .into(),
                );
            }
            Arrival::AtStart
        }
        Some(ArrivalSpec::Poisson) => {
            if pattern == Pattern::AllToAll {
                c.err(
                    &format!("{path}.arrival"),
                    "Poisson arrivals do not apply to all_to_all".into(),
                );
            }
            let senders_n = match pattern {
                Pattern::Incast => senders.len() as f64,
                Pattern::Pair => 1.0,
                // Load is offered to each client's link; with a fanout, the rate counts
                // requests (jobs) of `fanout` responses each.
                Pattern::Requests => requests.map_or(1.0, |r| {
                    r.clients.len() as f64 / r.fanout.unwrap_or(1) as f64
                }),
                _ => hosts.len() as f64,
            };
            let sizes_below = requests.and_then(|r| r.sizes_below);
            if let (Some(b), Some(sz)) = (sizes_below, size.as_ref()) {
                if sz.mean_below(b).is_none() {
                    // Drawing would never (or hardly ever) produce a size below the bound.
                    c.err(
                        &format!("{path}.requests.sizes_below_bytes"),
                        format!("the size distribution has (almost) no sizes below {b}"),
                    );
                }
            }
            let rate = match (t.load, t.rate_per_s) {
                (Some(load), None) => {
                    c.positive(&format!("{path}.load"), load);
                    let mean = match sizes_below {
                        Some(b) => size.as_ref().and_then(|s| s.mean_below(b)),
                        None => size.as_ref().and_then(|s| s.mean()),
                    };
                    match mean {
                        Some(mean) => {
                            let first = hosts.first().copied().unwrap_or(0);
                            load * host_rate_bps(first) * senders_n / (8.0 * mean)
                        }
                        None => {
                            c.err(
                                &format!("{path}.size"),
                                "Poisson arrivals need a finite flow size, not long_lived".into(),
                            );
                            1.0
                        }
                    }
                }
                (None, Some(r)) => {
                    c.positive(&format!("{path}.rate_per_s"), r);
                    r
                }
                _ => {
                    c.err(
                        &format!("{path}.load"),
                        "Poisson arrivals need exactly one of load or rate_per_s".into(),
                    );
                    1.0
                }
            };
            Arrival::Poisson { rate_per_s: rate }
        }
    };
    let expected_flows = match (arrival, pattern) {
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
            path,
            format!(
                "would generate about {expected_flows:.3e} flows; at most {MAX_FLOWS:e} per entry"
            ),
        );
    }
    if c.problems.len() != before {
        return None;
    }
    Some(TrafficGen {
        pattern,
        hosts,
        size: size?,
        transport,
        class,
        priority: t.priority,
        start: from_us(t.start_us),
        arrival,
        until,
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
    })
}

/// The index of class `name`, added to `classes` if new.
fn class_index(classes: &mut Vec<String>, name: &str) -> u16 {
    match classes.iter().position(|n| n == name) {
        Some(p) => p as u16,
        None => {
            classes.push(name.to_string());
            classes.len() as u16 - 1
        }
    }
}

/// The `jobs` table of a traffic entry, checked (the host count in `traffic_gen`).
fn jobs_gen(j: &JobsSpec, path: &str, classes: &mut Vec<String>, c: &mut Checker) -> JobsGen {
    let parallel = j.parallel.unwrap_or(1);
    c.at_least(&format!("{path}.jobs.parallel"), parallel as u64, 1);
    c.at_least(&format!("{path}.jobs.fanout"), j.fanout as u64, 1);
    if j.request_bytes.unwrap_or(0) == 0 && j.request_class.is_some() {
        c.err(
            &format!("{path}.jobs.request_class"),
            "applies only with request_bytes > 0".into(),
        );
    }
    JobsGen {
        parallel: parallel.max(1),
        fanout: j.fanout.max(1),
        request_bytes: j.request_bytes.unwrap_or(0),
        request_class: class_index(classes, j.request_class.as_deref().unwrap_or("request")),
    }
}

/// The `size_split` of a traffic entry: its transport and class resolved.
fn size_split(
    x: &SizeSplitSpec,
    path: &str,
    transports: &[TransportPlan],
    classes: &mut Vec<String>,
    c: &mut Checker,
) -> SizeSplit {
    c.at_least(&format!("{path}.size_split.at_bytes"), x.at_bytes, 1);
    let transport = match transports.iter().position(|p| p.name == x.transport) {
        Some(p) => p as u16,
        None => {
            c.err(
                &format!("{path}.size_split.transport"),
                format!("unknown transport {:?}", x.transport),
            );
            0
        }
    };
    SizeSplit {
        at: x.at_bytes,
        transport,
        class: class_index(classes, x.class.as_deref().unwrap_or("long")),
    }
}

/// The `requests` table of a traffic entry: hosts checked, the background transport and
/// class resolved.
fn requests_gen(
    r: &RequestsSpec,
    path: &str,
    n_hosts: u32,
    transports: &[TransportPlan],
    classes: &mut Vec<String>,
    c: &mut Checker,
) -> RequestsGen {
    for (field, hosts) in [("clients", &r.clients), ("servers", &r.servers)] {
        if hosts.is_empty() {
            c.err(
                &format!("{path}.requests.{field}"),
                "needs at least one host".into(),
            );
        }
        for &h in hosts {
            if h >= n_hosts {
                c.err(
                    &format!("{path}.requests.{field}"),
                    format!(
                        "host {h} does not exist (hosts are 0..{})",
                        n_hosts.max(1) - 1
                    ),
                );
            }
        }
    }
    if r.servers.len() == 1 && r.clients == r.servers {
        c.err(
            &format!("{path}.requests.servers"),
            "needs a server other than the one client".into(),
        );
    }
    let connections = r.connections.unwrap_or(5);
    c.at_least(
        &format!("{path}.requests.connections"),
        connections as u64,
        1,
    );
    if let Some(b) = r.sizes_below_bytes {
        c.at_least(&format!("{path}.requests.sizes_below_bytes"), b, 2);
    }
    let name = r.background_transport.as_deref().unwrap_or("tcp");
    let background_transport = match transports.iter().position(|p| p.name == name) {
        Some(p) => p as u16,
        None => {
            c.err(
                &format!("{path}.requests.background_transport"),
                format!("unknown transport {name:?}"),
            );
            0
        }
    };
    if r.background_above_bytes.is_none()
        && (r.background_transport.is_some() || r.background_class.is_some())
    {
        c.err(
            &format!("{path}.requests.background_above_bytes"),
            "is needed for background_transport and background_class".into(),
        );
    }
    let class_name = r.background_class.as_deref().unwrap_or("background");
    let background_class = match classes.iter().position(|n| n == class_name) {
        Some(p) => p as u16,
        None => {
            classes.push(class_name.to_string());
            classes.len() as u16 - 1
        }
    };
    if let Some(n) = r.fanout {
        c.at_least(&format!("{path}.requests.fanout"), n as u64, 1);
        if r.background_above_bytes.is_some() {
            c.err(
                &format!("{path}.requests.fanout"),
                "partition–aggregate requests have no background kind; drop background_above_bytes"
                    .into(),
            );
        }
        if r.servers.iter().any(|s| r.clients.contains(s)) {
            c.err(
                &format!("{path}.requests.servers"),
                "with fanout, clients and servers must be different hosts".into(),
            );
        }
    }
    RequestsGen {
        fanout: r.fanout.map(|n| n.max(1)),
        clients: r.clients.clone(),
        servers: r.servers.clone(),
        connections: connections.max(1),
        sizes_below: r.sizes_below_bytes.map(|b| b.max(2)),
        background_above: r.background_above_bytes,
        background_transport,
        background_class,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
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

    fn errors(text: &str) -> String {
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
    fn loss_recovery_options_parse_and_combinations_are_checked() {
        let text = format!("{GOOD}\n[tcp]\nsack = true\ntlp = true\nearly_retransmit = true\n");
        let p = Plan::from_toml(&text, Path::new(".")).unwrap();
        let r = p.transports[p.flows()[0].transport as usize].tcp.recovery;
        assert!(r.sack && r.tlp && r.early_retransmit && !r.tcp_ir && !r.proactive);
        let e = errors(&format!("{GOOD}\n[tcp]\nproactive = true\n"));
        assert!(e.contains("tcp.proactive: needs sack = true"), "{e}");
        let mp = GOOD.replace("transport = \"dctcp\"", "transport = \"mp\"");
        let e = errors(&format!(
            "{mp}\n[transports.mp]\ncc = \"lia\"\ntcp = {{ sack = true, proactive = true }}\n"
        ));
        assert!(
            e.contains("transports.mp.tcp.proactive: only single-path TCP"),
            "{e}"
        );
    }

    #[test]
    fn odd_k_names_the_field() {
        let e = errors(&GOOD.replace("k = 4", "k = 7"));
        assert!(
            e.contains("topology.fat_tree.k: must be an even number"),
            "{e}"
        );
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
    fn negative_rate_unknown_transport_and_missing_host() {
        let text = GOOD.replace("transport = \"dctcp\"", "transport = \"quic\"")
            + "[network.link]\nrate_gbps = -1\n"
            + "[[traffic]]\npattern = \"pair\"\nsrc = 0\ndst = 99\nsize = { fixed = 10 }\n";
        let e = errors(&text);
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
    fn unrepresentable_rates_and_times_are_rejected() {
        let e =
            errors(&(GOOD.to_string() + "[network.link]\nrate_gbps = 1e-12\ndelay_us = 1e14\n"));
        assert!(
            e.contains("network.link.rate_gbps: must be a rate between"),
            "{e}"
        );
        assert!(e.contains("network.link.delay_us: must be at most"), "{e}");
    }

    #[test]
    fn missing_cdf_file() {
        let e = errors(&GOOD.replace("\"long_lived\"", "{ cdf = \"nope.cdf\" }"));
        assert!(
            e.contains("traffic[0].size") && e.contains("nope.cdf"),
            "{e}"
        );
    }

    #[test]
    fn pinned_paths_are_checked() {
        // A k = 4 fat tree has at most 4 paths between two hosts.
        let ok = GOOD.to_string() + "paths = [3]\n";
        let plan = Plan::from_toml(&ok, Path::new(".")).unwrap();
        assert_eq!(plan.entry_paths, vec![vec![3]]);
        let e = errors(&(GOOD.to_string() + "paths = [0, 1]\n"));
        assert!(
            e.contains("traffic[0].paths: names 2 paths for transport \"dctcp\""),
            "{e}"
        );
        let e = errors(&(GOOD.to_string() + "paths = [4]\n"));
        assert!(
            e.contains("traffic[0].paths[0]: path index 4 is out of range")
                && e.contains("at most 4 equal-cost path(s)"),
            "{e}"
        );
        let e = errors(&(GOOD.to_string() + "paths = []\n"));
        assert!(
            e.contains("traffic[0].paths: must name at least one"),
            "{e}"
        );
        let flow = GOOD
            .replace("duration_ms = 10", "duration_ms = 10\nlevel = \"flow\"")
            .replace("dctcp", "tcp")
            + "paths = [1]\n";
        let e = errors(&flow);
        assert!(
            e.contains("traffic[0].paths: the flow-level model does not pin paths"),
            "{e}"
        );
        let mmptcp = GOOD.replace("transport = \"dctcp\"", "transport = \"mp\"")
            + "paths = [1]\n[transports.mp]\ncc = \"mmptcp\"\n";
        let e = errors(&mmptcp);
        assert!(e.contains("traffic[0].paths: MMPTCP"), "{e}");
        let star = "duration_ms = 1\n[topology.star]\nsenders = 2\n[[traffic]]\n\
                    pattern = \"incast\"\nsize = \"long_lived\"\npaths = [1]\n";
        let e = errors(star);
        assert!(
            e.contains("traffic[0].paths[0]: path index 1 is out of range")
                && e.contains("at most 1 equal-cost"),
            "{e}"
        );
    }

    #[test]
    fn stop_times_are_checked() {
        let plan =
            Plan::from_toml(&(GOOD.to_string() + "stop_us = 500\n"), Path::new(".")).unwrap();
        assert_eq!(plan.entry_stop, vec![from_us(500.0)]);
        let e = errors(&(GOOD.to_string() + "start_us = 10\nstop_us = 5\n"));
        assert!(
            e.contains("traffic[0].stop_us: must be after start_us"),
            "{e}"
        );
        let e = errors(&(GOOD.replace("\"long_lived\"", "{ fixed = 1000 }") + "stop_us = 500\n"));
        assert!(
            e.contains("traffic[0].stop_us: applies only to long-lived flows"),
            "{e}"
        );
    }

    #[test]
    fn lia_takes_a_beta_cut_with_ecn_only() {
        let lia = |extra: &str| {
            GOOD.replace("transport = \"dctcp\"", "transport = \"mp\"")
                + &format!("[transports.mp]\ncc = \"lia\"\nbeta = 4\n{extra}")
        };
        let plan = Plan::from_toml(&lia("ecn = true\n"), Path::new(".")).unwrap();
        let mp = plan.transports.iter().find(|t| t.name == "mp").unwrap();
        assert_eq!(mp.lia_beta, Some(4.0));
        let e = errors(&lia(""));
        assert!(e.contains("transports.mp.beta: LIA cuts by 1/beta"), "{e}");
        let e = errors(
            &GOOD
                .replace("transport = \"dctcp\"", "transport = \"mp\"")
                .replace("k = 4", "k = 4\n[transports.mp]\ncc = \"olia\"\nbeta = 4"),
        );
        assert!(
            e.contains("transports.mp.beta: applies only to cc = "),
            "{e}"
        );
    }
}
