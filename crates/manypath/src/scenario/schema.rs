//! The scenario file format: one schema, defined here with serde (unknown fields are
//! rejected) and exported as JSON Schema. Every field is documented; the doc comments
//! become the schema's descriptions.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

fn default_seed() -> u64 {
    1
}
fn yes() -> bool {
    true
}
fn default_transport() -> String {
    "tcp".into()
}
fn default_class() -> String {
    "default".into()
}
fn one() -> u32 {
    1
}

/// A simulation scenario.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// A short name, used in reports.
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Seed of every random stream in the run.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Simulated time after which the run stops, in milliseconds.
    pub duration_ms: f64,
    /// Stop as soon as every finite flow has finished (when there are no long-lived flows).
    #[serde(default = "yes")]
    pub stop_when_done: bool,
    /// Long-lived flows' goodput is measured from this time on, in milliseconds.
    #[serde(default)]
    pub warmup_ms: f64,
    pub topology: TopologySpec,
    #[serde(default)]
    pub network: NetworkSpec,
    /// TCP settings shared by every transport (each transport may override them).
    #[serde(default)]
    pub tcp: TcpSpec,
    /// Named transports. Built in: `tcp` (NewReno, no ECN), `dctcp` (DCTCP with ECN),
    /// and 4-subflow multipath `mptcp` (LIA), `olia`, `dcm`, `xmp`, `amp` (the last three
    /// with ECN), `mmptcp` (scatter, then 4 LIA subflows). An entry with a built-in name
    /// replaces it.
    #[serde(default)]
    pub transports: BTreeMap<String, TransportSpec>,
    /// Traffic entries; each generates flows.
    pub traffic: Vec<TrafficSpec>,
    /// Link faults (random loss), applied per link direction.
    #[serde(default)]
    pub faults: Vec<FaultSpec>,
    #[serde(default)]
    pub output: OutputSpec,
    /// Which simulator runs the scenario: `packet` (default) or `flow`, the steady-state
    /// flow-level model for long-lived traffic on large fabrics.
    #[serde(default)]
    pub level: LevelSpec,
    /// Settings of the flow-level model (used with `level = "flow"`).
    #[serde(default)]
    pub flow_model: FlowModelSpec,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum LevelSpec {
    /// The discrete-event packet-level simulator.
    #[default]
    Packet,
    /// The iterative flow-level model: steady-state rates of long-lived flows.
    Flow,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum FlowModelKindSpec {
    /// Per-link loss from the offered load, per-subflow rates from the TCP response
    /// function (MPTCP: LIA's equilibrium split), iterated to a fixed point.
    #[default]
    TcpResponse,
    /// Max-min fair rates by progressive filling (multipath connections fill over their
    /// unsaturated subflows).
    MaxMin,
}

/// The flow-level model, e.g. `[flow_model]` with `model = "max-min"`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowModelSpec {
    #[serde(default)]
    pub model: FlowModelKindSpec,
    /// Most iterations of the fixed point before it gives up (default 20000).
    pub max_iterations: Option<u32>,
    /// Converged when every loaded link carries its capacity within this relative
    /// tolerance and no other link is overloaded (default 0.001).
    pub tolerance: Option<f64>,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    /// Bernoulli loss: each packet crossing the link is dropped with `probability`.
    Loss,
}

/// A fault on links: every link of `tier` (both directions), or the one direction from
/// node `from` to node `to` (node names as in the queue table, e.g. `host0`, `edge0.1`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FaultSpec {
    pub kind: FaultKind,
    pub tier: Option<String>,
    pub from: Option<String>,
    pub to: Option<String>,
    /// Drop probability in [0, 1].
    pub probability: f64,
}

/// The topology, e.g. `[topology.fat_tree]` with `k = 8`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum TopologySpec {
    /// N senders and one receiver (host 0) on one switch. Tier: `host`.
    Star { senders: u32 },
    /// `pairs` hosts on each side of a bottleneck link. Tiers: `host`, `bottleneck`.
    Dumbbell { pairs: u32 },
    /// Leaves each joined to every spine. Tiers: `host`, `fabric`.
    LeafSpine {
        leaves: u32,
        spines: u32,
        hosts_per_leaf: u32,
    },
    /// The k-ary fat tree (k even). Tiers: `host`, `edge_agg`, `agg_core`.
    FatTree {
        k: u32,
        /// Hosts per edge switch = k/2 × oversubscription.
        #[serde(default = "one")]
        oversubscription: u32,
    },
    /// VL2: ToRs dual-homed to aggregation switch pairs, aggregation switches joined to
    /// every intermediate switch. Tiers: `host`, `tor_agg`, `agg_int`.
    Vl2 {
        /// Aggregation switches (even); aggregation/2 · intermediate ToRs.
        aggregation: u32,
        /// Intermediate (core) switches.
        intermediate: u32,
        /// Hosts per ToR (default 20).
        #[serde(default = "twenty")]
        hosts_per_tor: u32,
    },
    /// BCube(n, k): n^(k+1) hosts with k+1 interfaces each, n-port switches at k+1
    /// levels; hosts relay traffic. Flow level only. Tiers: `level0` … `level<k>`.
    Bcube { n: u32, k: u32 },
}

fn twenty() -> u32 {
    20
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum LoadBalancingSpec {
    /// Per-flow: hash of the 5-tuple with a per-switch salt.
    #[default]
    Ecmp,
    /// Per-packet: a random equal-cost next hop for every packet.
    Spray,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NetworkSpec {
    #[serde(default)]
    pub load_balancing: LoadBalancingSpec,
    /// Default rate and delay of every link.
    #[serde(default)]
    pub link: LinkSpec,
    /// Default queue of every switch port (100 packets, drop-tail, no ECN if unset).
    #[serde(default)]
    pub queue: QueueSpec,
    /// Queue of each host's NIC (1000 packets if unset). Transports wait for room in it, as
    /// with Linux's TCP small queues, so a host never drops its own packets.
    #[serde(default)]
    pub host_queue: QueueSpec,
    /// Per-tier overrides, by tier name.
    #[serde(default)]
    pub tiers: BTreeMap<String, TierSpec>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// Gbit/s (default 10).
    #[serde(default = "ten")]
    pub rate_gbps: f64,
    /// One-way propagation delay in microseconds (default 1).
    #[serde(default = "one_f")]
    pub delay_us: f64,
}
fn ten() -> f64 {
    10.0
}
fn one_f() -> f64 {
    1.0
}
impl Default for LinkSpec {
    fn default() -> Self {
        LinkSpec {
            rate_gbps: 10.0,
            delay_us: 1.0,
        }
    }
}

/// Overrides for the links of one tier.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TierSpec {
    pub rate_gbps: Option<f64>,
    pub delay_us: Option<f64>,
    /// Replaces the default switch queue on this tier's ports.
    pub queue: Option<QueueSpec>,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum MarkAtSpec {
    /// Mark an arriving ECT packet when the queue already holds ≥ K.
    #[default]
    Enqueue,
    /// Mark a departing ECT packet when the queue behind it holds ≥ K.
    Dequeue,
}

/// An output queue. Give a limit in packets or bytes (or both); ECN marking is on when a
/// threshold is given.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueueSpec {
    pub limit_packets: Option<u64>,
    pub limit_bytes: Option<u64>,
    /// ECN step-marking threshold K in packets.
    pub ecn_k_packets: Option<u64>,
    /// ECN step-marking threshold K in bytes.
    pub ecn_k_bytes: Option<u64>,
    #[serde(default)]
    pub ecn_mark: MarkAtSpec,
    /// Two strict-priority classes (a flow's `priority`: 0 high, 1 low).
    #[serde(default)]
    pub priority: bool,
}

/// TCP settings; unset fields keep their defaults.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TcpSpec {
    /// Maximum segment payload in bytes (default 1460).
    pub mss: Option<u32>,
    /// Header bytes per segment on the wire (default 40).
    pub header_bytes: Option<u32>,
    /// Initial congestion window in segments (default 10).
    pub init_cwnd_packets: Option<u32>,
    /// Initial slow-start threshold in bytes (default: none).
    pub init_ssthresh_bytes: Option<u64>,
    /// Minimum retransmission timeout in microseconds (default 200000).
    pub rto_min_us: Option<f64>,
    /// Maximum retransmission timeout in microseconds (default 60 s).
    pub rto_max_us: Option<f64>,
    /// Timeout before the first RTT sample, in microseconds (default 1 s, RFC 6298).
    pub rto_initial_us: Option<f64>,
    /// Duplicate ACKs that trigger fast retransmit (default 3).
    pub dupack_threshold: Option<u32>,
    /// Acknowledge every second segment (default false: every segment).
    pub delayed_ack: Option<bool>,
    /// Delayed-ACK timeout in microseconds (default 1000).
    pub delayed_ack_timeout_us: Option<f64>,
    /// Receive buffer, the largest advertised window, in bytes (default 4 MiB).
    pub rcv_wnd_bytes: Option<u32>,
    /// Floor of ECN-driven window cuts, in segments (default 2).
    pub cwnd_min_packets: Option<u32>,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CcSpec {
    /// NewReno; with `ecn = true`, halves once per window on ECN echoes. With several
    /// subflows: uncoupled MPTCP.
    Reno,
    /// DCTCP: cwnd·(1−α/2) once per window. With several subflows: uncoupled.
    Dctcp,
    /// MPTCP's linked increase (RFC 6356).
    Lia,
    /// Opportunistic linked increase (Khalili et al.).
    Olia,
    /// LIA increase with DCTCP's per-subflow ECN response.
    Dcm,
    /// XMP: δ-increase, cut by 1/β on ECN.
    Xmp,
    /// AMP: RTT-agnostic increase, cut by 1/β, subflow suppression/release.
    Amp,
    /// MMPTCP: one subflow scattering each packet on a random path, then LIA subflows
    /// after `mmptcp_switch_bytes`.
    Mmptcp,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SchedulerSpec {
    /// Round robin over the subflows whose window has room.
    #[default]
    RoundRobin,
    /// The subflow with the lowest smoothed RTT first.
    LowestRtt,
}

/// A named transport: a congestion controller and its settings.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TransportSpec {
    pub cc: CcSpec,
    /// Send ECN-capable packets (default: true for DCTCP, false for Reno).
    pub ecn: Option<bool>,
    /// DCTCP's EWMA weight g (default 1/16).
    pub dctcp_g: Option<f64>,
    /// DCTCP's initial α (default 1, as in Linux).
    pub dctcp_alpha_init: Option<f64>,
    /// Subflows per connection (default 1 for reno/dctcp, 4 for the multipath controllers).
    pub subflows: Option<u32>,
    /// XMP's and AMP's ECN cut factor β (default 4).
    pub beta: Option<f64>,
    /// AMP: rounds with every subflow at cwnd_min before suppression (default 2).
    pub amp_gamma: Option<u32>,
    /// AMP: rounds without marks before release (default 8).
    pub amp_tau: Option<u32>,
    /// MMPTCP: data volume after which it switches from packet scatter to its MPTCP
    /// subflows, in bytes (default 100000).
    pub mmptcp_switch_bytes: Option<u64>,
    /// Delay of the extra subflows after the first handshake, in µs (default 0).
    pub subflow_gap_us: Option<f64>,
    #[serde(default)]
    pub scheduler: SchedulerSpec,
    /// Overrides of the shared `[tcp]` settings for this transport.
    #[serde(default)]
    pub tcp: TcpSpec,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PatternSpec {
    Permutation,
    RandomPairs,
    Incast,
    AllToAll,
    Pair,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ArrivalSpec {
    /// Poisson arrivals at `load` (or `rate_per_s`).
    Poisson,
}

/// Flow sizes, e.g. `{ fixed = 131072 }`, `{ cdf = "websearch" }` or `"long_lived"`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum SizeSpec {
    /// Every flow has this many bytes.
    Fixed(u64),
    /// Uniform in [min, max] bytes.
    Uniform { min: u64, max: u64 },
    /// Pareto with this mean (bytes) and shape (> 1).
    Pareto { mean: f64, shape: f64 },
    /// An empirical CDF: a built-in name (`websearch`, `datamining`) or a file path,
    /// relative to the scenario file.
    Cdf(String),
    /// Flows that send until the end of the run.
    LongLived,
}

/// One traffic entry. Which fields apply depends on `pattern`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrafficSpec {
    pub pattern: PatternSpec,
    /// Name of the transport (default `tcp`).
    #[serde(default = "default_transport")]
    pub transport: String,
    /// A label for the results, e.g. `short` or `background`.
    #[serde(default = "default_class")]
    pub class: String,
    /// Strict-priority class: 0 (high, default) or 1 (low).
    #[serde(default)]
    pub priority: u8,
    pub size: SizeSpec,
    /// When the entry starts, in microseconds.
    #[serde(default)]
    pub start_us: f64,
    /// The hosts this entry uses (default: all).
    pub hosts: Option<Vec<u32>>,
    /// The hosts [first, last) this entry uses, as an alternative to `hosts`.
    pub host_range: Option<[u32; 2]>,
    /// `random_pairs`: number of flows; with Poisson arrivals, a cap on their number.
    pub flows: Option<u32>,
    pub arrival: Option<ArrivalSpec>,
    /// Poisson arrivals: offered load per sending host, a fraction of its link rate.
    pub load: Option<f64>,
    /// Poisson arrivals: total flows per second (instead of `load`).
    pub rate_per_s: Option<f64>,
    /// Poisson arrivals stop at this time, in microseconds (default: the end of the run).
    pub until_us: Option<f64>,
    /// `incast`: the receiving host (default: the first host of the entry).
    pub receiver: Option<u32>,
    /// `incast`: number of senders (default: all other hosts of the entry), taken in order.
    pub senders: Option<u32>,
    /// Delay between the starts of successive flows of the entry, in microseconds.
    #[serde(default)]
    pub stagger_us: f64,
    /// `incast`/`pair`: number of repetitions (jobs), `interval_us` apart.
    #[serde(default = "one")]
    pub repeat: u32,
    pub interval_us: Option<f64>,
    /// `pair`: source host.
    pub src: Option<u32>,
    /// `pair`: destination host.
    pub dst: Option<u32>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutputSpec {
    /// Keep a time-weighted histogram of every switch queue (for percentiles).
    #[serde(default)]
    pub queue_histogram: bool,
}

/// The scenario JSON Schema, pretty-printed.
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(Scenario);
    serde_json::to_string_pretty(&schema).expect("schema serialises")
}
