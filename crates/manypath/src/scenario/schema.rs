//! The scenario file format: one schema, defined here with serde (unknown fields are
//! rejected) and exported as JSON Schema. Every field is documented; the doc comments
//! become the schema's descriptions.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub use crate::net::topology::TopologyKind;
pub use crate::transport::protocol::CcSpec;
pub use crate::workload::Pattern;

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
    /// Start of the measurement window (the warm-up's end), in milliseconds (default 0).
    /// Flows that start before it are simulated but marked `measured = false` (FCT
    /// statistics leave them out), and long-lived flows' goodput counts from it.
    pub measure_from_ms: Option<f64>,
    /// The older name of `measure_from_ms`, with the same meaning.
    pub warmup_ms: Option<f64>,
    pub topology: TopologySpec,
    #[serde(default)]
    pub network: NetworkSpec,
    /// TCP settings shared by every transport (each transport may override them).
    #[serde(default)]
    pub tcp: TcpSpec,
    /// Named transports. Built in: `tcp` (NewReno, no ECN), `cubic` (CUBIC, no ECN),
    /// `dctcp` (DCTCP with ECN),
    /// and 4-subflow multipath `mptcp` (LIA), `olia`, `dcm`, `xmp`, `amp` (the last three
    /// with ECN), `mmptcp` (scatter, then 4 LIA subflows). An entry with a built-in name
    /// replaces it.
    #[serde(default)]
    pub transports: BTreeMap<String, TransportSpec>,
    /// Traffic entries; each generates flows.
    pub traffic: Vec<TrafficSpec>,
    /// Link faults: random, bursty and black-hole loss per link direction, links going
    /// down and up, and randomly placed lossy links.
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
    /// How many threads run the simulation and how the fabric is split between them.
    /// Results are the same for every thread count: this table changes how fast a run
    /// goes, never what it computes (nor a sweep's run identity).
    #[serde(default)]
    pub parallel: ParallelSpec,
}

/// `[parallel]`: the threads of one run and the partitions of the fabric they share.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ParallelSpec {
    /// Threads of the run: a whole number ≥ 1, or `"auto"` (default): 1 thread for
    /// fabrics of fewer than 512 hosts, all of the machine's cores for larger ones (small
    /// fabrics have too few events per synchronisation window to pay for it). With
    /// `partitions`, at most their number. `manypath run --threads` replaces it.
    #[serde(default)]
    pub threads: ThreadsSpec,
    /// The fabric's partitions (default: chosen automatically), each a list of node
    /// names as the queue table and `output.pcap` name them (`host3`, `edge0.1`, ...).
    /// Every switch is listed exactly once; a host not listed goes with the switch its
    /// first NIC connects to, and may be listed to place it elsewhere.
    pub partitions: Option<Vec<Vec<String>>>,
}

/// `parallel.threads` as written: `"auto"`, a whole number, or anything else, which the
/// checker refuses naming the field (so a float or a wrong type is reported with the
/// other problems, in words, not as a parse error).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(untagged)]
pub enum ThreadsSpec {
    Auto(AutoSpec),
    Count(i64),
    Other(toml::Value),
}

impl Default for ThreadsSpec {
    fn default() -> Self {
        ThreadsSpec::Auto(AutoSpec::Auto)
    }
}

/// The one word `parallel.threads` takes.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum AutoSpec {
    Auto,
}

impl JsonSchema for ThreadsSpec {
    fn schema_name() -> String {
        "ThreadsSpec".into()
    }
    fn json_schema(_: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
        serde_json::from_value(serde_json::json!({
            "anyOf": [
                { "type": "integer", "minimum": 1 },
                { "type": "string", "enum": ["auto"] }
            ]
        }))
        .expect("a valid schema")
    }
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
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowModelSpec {
    #[serde(default)]
    pub model: FlowModelKindSpec,
    /// Most iterations of the fixed point before it gives up (default 20000).
    #[serde(default = "default_max_iterations")]
    pub max_iterations: Option<u32>,
    /// Converged when every loaded link carries its capacity within this relative
    /// tolerance and no other link is overloaded (default 0.001).
    #[serde(default = "default_tolerance")]
    pub tolerance: Option<f64>,
}

/// The flow-level model's defaults, written in the schema (the progress line reads the
/// iteration limit there).
pub const DEFAULT_MAX_ITERATIONS: u32 = 20_000;
pub const DEFAULT_TOLERANCE: f64 = 1e-3;

fn default_max_iterations() -> Option<u32> {
    Some(DEFAULT_MAX_ITERATIONS)
}
fn default_tolerance() -> Option<f64> {
    Some(DEFAULT_TOLERANCE)
}

impl Default for FlowModelSpec {
    fn default() -> Self {
        FlowModelSpec {
            model: FlowModelKindSpec::default(),
            max_iterations: default_max_iterations(),
            tolerance: default_tolerance(),
        }
    }
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    /// Bernoulli loss: each packet crossing the link is dropped with `probability`.
    Loss,
    /// Gilbert–Elliott loss with long-run `loss_rate` and mean `burst_length` (packets).
    BurstyLoss,
    /// Drops every packet, or only the flows whose hash falls in `hash_fraction` of the
    /// hash space.
    Blackhole,
    /// The link between `from` and `to` (both directions) goes down at `down_us` and back
    /// up at `up_us`; routing follows after `detection_delay_us`.
    LinkDown,
    /// Makes `fraction` of all links lossy, placed by tier with `tier_weights`, each with
    /// a loss rate drawn from `loss_rates`.
    RandomLossyLinks,
}

/// A fault on links: every link of `tier` (both directions), or the one direction from
/// node `from` to node `to` (node names as in the queue table, e.g. `host0`, `edge0.1`).
/// Which other fields apply depends on `kind`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FaultSpec {
    pub kind: FaultKind,
    pub tier: Option<String>,
    pub from: Option<String>,
    pub to: Option<String>,
    /// Which of several parallel links between `from` and `to` (0-based; default: all).
    pub parallel: Option<u32>,
    /// `loss`: drop probability in [0, 1].
    pub probability: Option<f64>,
    /// `bursty_loss`: long-run fraction of packets lost, in (0, bad_loss).
    pub loss_rate: Option<f64>,
    /// `bursty_loss`, `random_lossy_links`: mean number of consecutive packets lost
    /// (≥ 1). For `random_lossy_links` it makes every lossy link bursty.
    pub burst_length: Option<f64>,
    /// Loss probability in the Gilbert–Elliott bad state, in (0, 1] (default 1).
    pub bad_loss: Option<f64>,
    /// `blackhole`: share of the flow-hash space dropped, in (0, 1] (default 1: every
    /// packet).
    pub hash_fraction: Option<f64>,
    /// `link_down`: when the link goes down, in µs.
    pub down_us: Option<f64>,
    /// `link_down`: when it comes back up, in µs (default: never).
    pub up_us: Option<f64>,
    /// `link_down`: delay before routing stops (and, after the repair, resumes) using
    /// the link, in µs (default 0).
    pub detection_delay_us: Option<f64>,
    /// `random_lossy_links`: share of all links made lossy, in [0, 1].
    pub fraction: Option<f64>,
    /// `random_lossy_links`: relative weight of each tier in the placement (default:
    /// 22% host links and 24%, 25%, 29% for the tiers above, the topmost tier taking the
    /// weight of the levels the topology lacks).
    pub tier_weights: Option<BTreeMap<String, f64>>,
    /// `random_lossy_links`: distribution of each lossy link's loss rate (default: a
    /// bounded Pareto on [0.01, 0.6] with mean 0.04).
    pub loss_rates: Option<RateDistSpec>,
}

/// A distribution of loss rates, e.g. `{ bounded_pareto = { min = 0.01, max = 0.6,
/// mean = 0.04 } }`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum RateDistSpec {
    /// Every lossy link has this rate.
    Fixed(f64),
    /// Uniform in [min, max].
    Uniform { min: f64, max: f64 },
    /// A power law on [min, max] whose shape is solved from `mean`.
    BoundedPareto { min: f64, max: f64, mean: f64 },
    /// One of these values, each equally likely.
    Values(Vec<f64>),
}

/// The topology as a scenario gives it: a generator's kind and size, or a custom
/// topology as written (`TopologyKind` resolves it).
pub type TopologySpec = TopologyKind<CustomTopologySpec>;

/// `[topology.custom]`: nodes and links inline, or `file`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CustomTopologySpec {
    /// A file holding the topology, relative to the scenario file: `.toml` or `.json`
    /// with this table's `tiers`, `nodes` and `links`; `.graphml` (GraphML); or a
    /// networkx node-link `.json` (one with a `directed` or `multigraph` key). Graph
    /// files give nodes a `kind` (`host` or `switch`) and optionally a `tier`, edges
    /// optionally `tier`, `rate_gbps`, `delay_us`; other attributes are ignored. Not
    /// together with `nodes` or `links`.
    pub file: Option<String>,
    /// The tier names, from the hosts up (default: `host`, then the links' and nodes'
    /// tiers in the order they first appear). Tier 0 is the hosts' links.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tiers: Vec<String>,
    /// The nodes: hosts (numbered 0, 1, … in this order, as traffic names them) and
    /// switches.
    #[serde(default)]
    pub nodes: Vec<CustomNodeSpec>,
    /// The links, each a pair of queues and wires, one per direction.
    #[serde(default)]
    pub links: Vec<CustomLinkSpec>,
}

/// A node of a custom topology.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CustomNodeSpec {
    /// Unique name; links and the queue table use it.
    pub name: String,
    pub kind: NodeKindSpec,
    /// A switch's tier, whose switch-wide settings (`network.tiers.NAME.buffer`) it
    /// takes. Default: the lowest tier among its links (that towards the hosts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<String>,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum NodeKindSpec {
    /// An end host; its first link is its first NIC. A host with several links has
    /// several NICs and picks one per flow hash.
    Host,
    /// A switch, routing by shortest-path ECMP.
    Switch,
}

/// A link of a custom topology between nodes `a` and `b`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CustomLinkSpec {
    pub a: String,
    pub b: String,
    /// The link's tier. Default: `host` (tier 0) if an end is a host, else the lower of
    /// its switches' tiers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<String>,
    /// Parallel links between `a` and `b` (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    /// Rate in Gbit/s of this link (default: its tier's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_gbps: Option<f64>,
    /// Propagation delay in µs of this link (default: its tier's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_us: Option<f64>,
    /// The queue of `a`'s port onto this link (default: its tier's, or the host NIC's):
    /// limits, ECN thresholds and priorities; RED, RWNDQ, RED-style marking and
    /// trimming are set per tier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_a: Option<QueueSpec>,
    /// The queue of `b`'s port onto this link, as `queue_a`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_b: Option<QueueSpec>,
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
    /// Send jitter in microseconds (default 0: off). Before it serialises each packet
    /// (data, ACKs, relayed packets; every transport), a host's interface stays idle for
    /// an independent uniform random time in [0, host_jitter_us), like ns-2's TCP
    /// `overhead_`; this breaks the phase effects of a deterministic model at drop-tail
    /// queues. The interface stays FIFO. The idle time costs a backlogged interface a
    /// share of its rate: with serialisation time S it sends at S/(S + host_jitter_us/2)
    /// of its line rate (2/3 for a jitter of one packet time).
    #[serde(default)]
    pub host_jitter_us: f64,
    /// Per-tier overrides, by tier name.
    #[serde(default)]
    pub tiers: BTreeMap<String, TierSpec>,
    /// One shared packet buffer per switch over all its output queues, with per-queue
    /// admission by dynamic threshold (absent: each port keeps its own queue limit).
    pub buffer: Option<BufferSpec>,
    /// Priority flow control (IEEE 802.1Qbb) on every switch port and host NIC (absent:
    /// off). Needs `network.buffer`.
    pub pfc: Option<PfcSpec>,
}

/// A switch's shared buffer: a queue of class c may hold at most α_c times the buffer
/// still free (Choudhury and Hahne's dynamic threshold); the queues' own limits still
/// apply on top.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BufferSpec {
    /// Bytes per switch (required, > 0).
    pub bytes: u64,
    /// α for every class, or a list [α0, α1] per priority class; each > 0 (default 1).
    pub alpha: Option<AlphaSpec>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum AlphaSpec {
    One(f64),
    PerClass(Vec<f64>),
}

/// PFC's ingress accounting per (ingress port, class): a reserve, a share of the buffer
/// up to the XOFF threshold, and headroom for what arrives after PAUSE is sent.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PfcSpec {
    /// Static XOFF threshold on an ingress queue's shared use, in bytes.
    pub xoff_bytes: Option<u64>,
    /// Dynamic XOFF threshold: α times the free shared buffer (default 1/8, the HPCC
    /// authors' simulator's; give this or `xoff_bytes`).
    pub alpha: Option<f64>,
    /// XON once the shared use is this far below the threshold (default 3072 bytes).
    pub resume_offset_bytes: Option<u64>,
    /// Headroom per ingress port (default: 2·rate·delay + 2 MTU + one PAUSE frame, from
    /// the port's link).
    pub headroom_bytes: Option<u64>,
    /// Bytes reserved per (ingress port, class) (default 4096).
    pub reserve_bytes: Option<u64>,
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
    /// PFC on this tier's links (both ends; default: on when `network.pfc` is set).
    pub pfc: Option<bool>,
    /// The shared buffer of this tier's switches, in place of `network.buffer`: a table
    /// `{ bytes, alpha }` as `network.buffer` takes, or `false` for none (their ports keep
    /// their own queue limits; PFC on their links needs a buffer). A switch's tier is the
    /// lowest tier among its links, that of its links towards the hosts: in a fat tree the
    /// edge switches are `host`'s, the aggregation switches `edge_agg`'s and the cores
    /// `agg_core`'s; in a leaf-spine the leaves are `host`'s and the spines `fabric`'s.
    pub buffer: Option<TierBufferSpec>,
}

/// A switch tier's own shared buffer, or none.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum TierBufferSpec {
    /// `false`: no shared buffer on this tier's switches (`true` is refused: give a table).
    Off(bool),
    Buffer(BufferSpec),
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum MarkAtSpec {
    /// Mark an arriving ECT packet on the queue it finds (≥ K, or `ecn_red`'s curve).
    #[default]
    Enqueue,
    /// Mark a departing ECT packet on the queue behind it (≥ K, or `ecn_red`'s curve), as
    /// the HPCC authors' simulator does: the mark reaches the sender a queue's delay
    /// sooner.
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
    /// Strict priority over this many levels (2–32; level 0 first), as Homa's switches
    /// (8): a packet waits in the level of its priority, capped at the last. Unset: as
    /// `priority` says. Not together with `priority`.
    pub priority_levels: Option<u8>,
    /// RWNDQ on these switch ports: flow counting and receive-window rewriting of the
    /// ACKs that come in through them (not on host NICs).
    pub rwndq: Option<RwndqSpec>,
    /// Random Early Detection in front of the drop-tail limit.
    pub red: Option<RedSpec>,
    /// RED-style ECN marking on the instantaneous queue (as DCQCN's switches): an ECT
    /// packet joining a queue of K bytes is marked with probability 0 for K ≤ kmin,
    /// pmax·(K − kmin)/(kmax − kmin) up to kmax, 1 above.
    pub ecn_red: Option<EcnRedSpec>,
    /// NDP's packet trimming on these switch ports (`trim = {}` for the paper's
    /// defaults): a data queue and a high-priority header queue; an NDP data packet that
    /// finds the data queue at its threshold is cut to its 64-byte header. Not on host
    /// NICs; not with `priority`, `red`, `ecn_red` or ECN thresholds on the same queue.
    pub trim: Option<TrimSpec>,
    /// pFabric's queue (Alizadeh et al., SIGCOMM 2013): the next packet is the earliest
    /// of the flow whose packet carries the lowest priority number (its remaining bytes,
    /// stamped by `cc = "pfabric"` senders; ACKs 0), and an arrival at a full queue drops
    /// the least urgent packet instead. On switch ports and host NICs; for traffic of
    /// pFabric transports only; not with priorities, RED, ECN marking, RWNDQ or `trim`.
    #[serde(default)]
    pub pfabric: bool,
}

/// NDP's trimming queue (Handley et al., SIGCOMM 2017). Above the threshold, the
/// arriving NDP data packet or, half the time, the one at the tail of the data queue is
/// trimmed; the link serves `header_weight` headers per data packet while both queues
/// wait. Packets of other transports use the data queue with its drop-tail limit.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrimSpec {
    /// Data packets the data queue holds before NDP data is trimmed (default 8, the
    /// paper's); at most the queue's `limit_packets`.
    pub threshold_packets: Option<u64>,
    /// The header queue's limit in packets (default 2250: htsim's header queue of twice
    /// the data queue's bytes, eight 9000-byte packets, in 64-byte headers). It carries
    /// trimmed headers and NDP's ACK, NACK and PULL packets; at least 1.
    pub header_queue_packets: Option<u64>,
    /// Headers served per data packet while both queues wait (default 10).
    pub header_weight: Option<u32>,
    /// A trimmed header that finds the header queue full goes back to its sender (which
    /// resends it at once) instead of being dropped (default false).
    pub return_to_sender: Option<bool>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EcnRedSpec {
    pub kmin_bytes: u64,
    pub kmax_bytes: u64,
    /// In (0, 1].
    pub pmax: f64,
}

/// Random Early Detection (Floyd and Jacobson): an arriving packet is dropped (or, with
/// `ecn`, an ECT packet marked) with a probability that grows linearly from 0 at an
/// average queue of `min_packets` to `max_p` at `max_packets` (and on to 1 at twice
/// `max_packets` when `gentle`). The average is an exponentially weighted moving average
/// of the queue in packets at each arrival, decayed over idle periods.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RedSpec {
    /// Average queue (packets) below which nothing is dropped early.
    pub min_packets: f64,
    /// Average queue (packets) at which the drop probability reaches `max_p`.
    pub max_packets: f64,
    /// Drop probability at `max_packets` (default 0.1).
    pub max_p: Option<f64>,
    /// Weight of a new sample in the average (default 0.002).
    pub weight: Option<f64>,
    /// Rise from `max_p` to 1 between `max_packets` and twice that (default true).
    pub gentle: Option<bool>,
    /// Mark ECT packets instead of dropping them (default false).
    #[serde(default)]
    pub ecn: bool,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RwndqPreset {
    /// The Linux kernel module: T = 1 ms, M = 8, target 25% of the queue limit.
    #[default]
    Kernel,
    /// The ns-2 study: T = 50 µs, M = 10, target 20% of the queue limit.
    Ns2,
}

/// RWNDQ's parameters; unset ones come from the preset.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RwndqSpec {
    #[serde(default)]
    pub preset: RwndqPreset,
    /// Period T of the window-update timer, in microseconds.
    pub interval_us: Option<f64>,
    /// Timer ticks M per update of the port's window.
    pub updates: Option<u32>,
    /// Target queue as a fraction of the queue limit (bytes; a limit in packets counts
    /// full-sized segments).
    pub target_fraction: Option<f64>,
    /// Target queue in bytes (instead of `target_fraction`).
    pub target_bytes: Option<u64>,
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
    /// SACK (RFC 2018) and SACK-based loss recovery (RFC 6675) (default false).
    pub sack: Option<bool>,
    /// Limited transmit (RFC 3042): one new segment on each of the first two duplicate
    /// ACKs (default false).
    pub limited_transmit: Option<bool>,
    /// Early retransmit (RFC 5827): with fewer than 4 segments outstanding and no new
    /// data to send, fast retransmit after (segments outstanding − 1) duplicate ACKs
    /// (default false).
    pub early_retransmit: Option<bool>,
    /// Tail loss probe: when no ACK has come for 2·SRTT outside recovery, send one new
    /// segment or resend the last one; no other probe until an ACK covers what was sent
    /// up to it (default false).
    pub tlp: Option<bool>,
    /// RACK's detection of lost retransmissions (RFC 8985 §6.2, on in Linux since 4.18):
    /// in SACK recovery, a retransmission is lost once a segment sent after it has been
    /// delivered, and goes again without waiting for the RTO. Needs `sack` (default
    /// false).
    pub lost_retransmit: Option<bool>,
    /// TCP Instant Recovery: an XOR-coded packet per block of new segments (closed after
    /// RTT/2 or 16 segments), sent RTT/4 after the block closes; the receiver rebuilds one
    /// lost segment per block. Single-path TCP only (default false).
    pub tcp_ir: Option<bool>,
    /// Proactive: every data segment sent twice. Needs `sack` (so the copies' ACKs are
    /// not duplicate ACKs); single-path TCP only (default false).
    pub proactive: Option<bool>,
    /// Slow start after idle (RFC 5681 §4.1): a sender idle for longer than its RTO
    /// restarts from at most the initial window (default false).
    pub idle_restart: Option<bool>,
    /// Set FIN on the last data segment instead of sending it alone, as a sender does
    /// when the application closes before its last segment leaves (default false).
    pub fin_with_data: Option<bool>,
    /// Pace the sender at its controller's rate: after each segment, wait its length
    /// over the rate before the next (default: true for `swift` and `bbr`, which set a
    /// rate; false for the others, which set none).
    pub pacing: Option<bool>,
    /// How the hosts' timers work: `"exact"` (the default: RFC 6298's RTO, loss probes
    /// at 2·SRTT, timers at any instant) or `"linux"` (Linux's RTO estimator, timers in
    /// jiffies, Linux's loss-probe timeout, delayed ACKs at 40 ms with quick-ACK mode at
    /// the start).
    pub timers: Option<TimersSpec>,
    /// The Linux preset's timer frequency, ticks per second (default 1000).
    pub hz: Option<u32>,
}

/// The hosts' timer presets (`tcp.timers`).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TimersSpec {
    Exact,
    Linux,
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

/// A RoCE transport's loss recovery.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum RetransmitSpec {
    /// The receiver NAKs the first packet out of order; the sender goes back to it.
    GoBackN,
    /// IRN-style: the receiver keeps data out of order and SACKs it; the sender resends
    /// only what is missing.
    Selective,
    /// Nothing is sent again (a lossless fabric assumed).
    None,
}

/// Which published setting a RoCE controller's unset constants take.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum PresetSpec {
    /// The controller's paper.
    Paper,
    /// The HPCC authors' public simulator (the setting of the HPCC paper's comparisons).
    HpccArtifact,
}

/// DCQCN's rate-increase rule (`transport::rate::dcqcn::IncreaseRule`).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum DcqcnIncreaseSpec {
    Paper,
    Timer,
}

/// When a DCQCN cut lowers the target rate (`transport::rate::dcqcn::TargetClamp`).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum DcqcnClampSpec {
    EveryCut,
    AfterTimerIncrease,
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
    /// XMP's and AMP's ECN cut factor β (default 4); with `lia`, a cut by 1/β on an ECN
    /// echo instead of halving (the AMP document's "MPTCP with β").
    pub beta: Option<f64>,
    /// AMP: rounds with every subflow at cwnd_min before suppression (default 2).
    pub amp_gamma: Option<u32>,
    /// AMP: rounds without marks before release (default 8).
    pub amp_tau: Option<u32>,
    /// MMPTCP: data volume after which it switches from packet scatter to its MPTCP
    /// subflows, in bytes (default 100000).
    pub mmptcp_switch_bytes: Option<u64>,
    /// Swift: the base target delay in µs, for a path of no hops (default 25). With the
    /// hop scaling of the shortest path it must exceed that path's base RTT.
    pub swift_base_target_us: Option<f64>,
    /// Swift: target added per hop of the connection's path, in µs (default 1).
    pub swift_hop_scale_us: Option<f64>,
    /// Swift: flow scaling's range, the most it adds to the target, in µs (default 125).
    pub swift_fs_range_us: Option<f64>,
    /// Swift: the window (packets) at and below which flow scaling adds its whole range
    /// (default 0.1).
    pub swift_fs_min_cwnd: Option<f64>,
    /// Swift: the window (packets) at and above which flow scaling adds nothing
    /// (default 100).
    pub swift_fs_max_cwnd: Option<f64>,
    /// Swift: additive increase, packets per RTT (default 1).
    pub swift_ai: Option<f64>,
    /// Swift: multiplicative decrease β (default 0.8).
    pub swift_beta: Option<f64>,
    /// Swift: the largest decrease at once, a fraction of the window (default 0.5).
    pub swift_max_mdf: Option<f64>,
    /// Swift: the smallest window in packets (default 0.001).
    pub swift_min_cwnd: Option<f64>,
    /// Swift: the largest window in packets (default 10000).
    pub swift_max_cwnd: Option<f64>,
    /// Swift: consecutive timeouts that drop the window to its minimum (default 5).
    pub swift_retx_reset: Option<u32>,
    /// Swift: the receiving host's processing time per data packet, in microseconds
    /// (default 0: none). The host serves its NIC Rx queue one packet per this time and
    /// acknowledges a packet when it is done; the endpoint delay (Rx queuing plus
    /// processing) is echoed in the ACK, and with a positive value Swift runs its
    /// endpoint window on it. Must be below `swift_endpoint_target_us`.
    pub swift_host_delay_us: Option<f64>,
    /// Swift: the endpoint window's target endpoint delay, in microseconds (default 25;
    /// no hop or flow scaling). Only with `swift_host_delay_us` above 0.
    pub swift_endpoint_target_us: Option<f64>,
    /// Swift: the endpoint window's additive increase, packets per RTT (default 1).
    pub swift_endpoint_ai: Option<f64>,
    /// Swift: the endpoint window's decrease scale β (default 0.8; bounded by
    /// `swift_max_mdf`).
    pub swift_endpoint_beta: Option<f64>,
    /// Homa: unscheduled bytes per message, and the bytes each grant allows beyond
    /// what has arrived (RTTbytes; default: one base RTT of the network at the host's
    /// line rate).
    pub homa_rtt_bytes: Option<u64>,
    /// Homa: messages a receiver grants to at once (the degree of overcommitment;
    /// default: the number of scheduled priority levels).
    pub homa_overcommit: Option<u32>,
    /// Homa: switch priority levels it uses, 1–32 (default 8, as the Homa paper's
    /// switches); the switches' queues must have at least as many (`priority_levels`).
    pub homa_priority_levels: Option<u8>,
    /// Homa: how many of its levels are for unscheduled packets (default: from the
    /// share of unscheduled bytes in the workload's sizes).
    pub homa_unscheduled_levels: Option<u8>,
    /// Homa: silence after which a receiver asks for missing data again and a sender
    /// repeats its first packet, in µs (default 1000).
    pub homa_resend_timeout_us: Option<f64>,
    /// pFabric: consecutive timeouts after which the sender probes with 1-byte packets
    /// until an ACK comes (default 5, the pFabric ns-2 setting as the Homa authors ran
    /// it; 0: never).
    pub pfabric_probe_timeouts: Option<u32>,
    /// Delay of the extra subflows after the first handshake, in µs (default 0).
    pub subflow_gap_us: Option<f64>,
    /// FUSO's proactive multipath loss recovery on this (multipath) transport.
    pub fuso: Option<bool>,
    /// FUSO's weight α of a subflow's overall loss rate in its loss cost (default 0.5).
    pub fuso_alpha: Option<f64>,
    /// FUSO's weight β of a subflow's most recent loss rate (default 0.5).
    pub fuso_beta: Option<f64>,
    /// Copies of every flow, each on a connection of its own (RepFlow: 2); the first
    /// copy to finish completes the flow (default 1).
    pub replicas: Option<u32>,
    // RoCE transports (cc = "roce", "dcqcn", "timely", "hpcc"): the queue pairs'
    // settings, then each controller's constants (docs/scenarios.md lists the defaults'
    // sources).
    /// Loss recovery: `go-back-n` (default), `selective` (IRN-style) or `none` (a
    /// lossless fabric assumed).
    pub retransmit: Option<RetransmitSpec>,
    /// The receiver acknowledges every N in-order data packets, and the last packet of
    /// each message at once (default 1, the HPCC authors' simulator's L2_ACK_INTERVAL).
    pub ack_every: Option<u32>,
    /// Cap bytes in flight: HPCC's window, or `window_bytes` for the others (default
    /// true for hpcc, false for the others).
    pub window: Option<bool>,
    /// The fixed window of `window = true` for dcqcn, timely and roce, bytes (default one
    /// line-rate BDP of the base RTT). For ndp: the first window, sent at line rate before
    /// any PULL (default one line-rate BDP of the base RTT, in whole packets).
    pub window_bytes: Option<u64>,
    /// Payload bytes per packet (default 1000, the HPCC authors' simulator's; for ndp
    /// 8936, 9000-byte packets with NDP's 64-byte header, as the paper's jumbo frames).
    pub payload_bytes: Option<u32>,
    /// Retransmission timeout, µs (default 320, IRN's RTO_high; for ndp 5000, htsim's
    /// minimum RTO, the backstop for packets neither ACKed nor NACKed and lost PULLs).
    pub rto_us: Option<f64>,
    /// RoCE: resend on a retransmission timeout (default true). `false`: recovery by NAK
    /// only, as the HPCC authors' simulator's NICs, which have no timer; a lost tail is
    /// then never resent, so PFC must be on every tier and no fault may lose packets.
    pub retransmit_timeout: Option<bool>,
    /// The receiver's least spacing of CNPs per flow, µs (default 50, DCQCN's N).
    pub cnp_interval_us: Option<f64>,
    /// The base RTT for HPCC's T and the BDP window (NDP's first window), µs (default: the
    /// network's longest host-to-host base RTT, as the HPCC authors' simulator uses one
    /// value for all).
    pub base_rtt_us: Option<f64>,
    /// HPCC's data carries INT (default true for hpcc; true on another transport is an
    /// error, false on hpcc too: HPCC reads nothing else).
    pub int: Option<bool>,
    /// DCQCN's unset constants: `paper` (default, Zhu et al. 2015) or `hpcc-artifact`
    /// (the HPCC authors' simulator: α timer 1 µs, increase timer 300 µs, F = 1, R_AI and
    /// R_HAI 2·10⁻⁴ and 2·10⁻³ of the line rate, minimum rate 1 Gb/s, no byte counter,
    /// the `timer` increase rule and `after-timer-increase` target clamp).
    pub dcqcn_preset: Option<PresetSpec>,
    /// DCQCN's α gain g (paper: 1/256).
    pub dcqcn_g: Option<f64>,
    /// DCQCN's α before the first CNP (1).
    pub dcqcn_alpha_init: Option<f64>,
    /// DCQCN's α decay period K, µs (paper: 55).
    pub dcqcn_alpha_timer_us: Option<f64>,
    /// DCQCN's rate-increase timer T, µs (paper: 55).
    pub dcqcn_increase_timer_us: Option<f64>,
    /// DCQCN's byte counter B, bytes (paper: 10 MB).
    pub dcqcn_byte_counter_bytes: Option<u64>,
    /// DCQCN's fast-recovery stages F (paper: 5).
    pub dcqcn_fast_recovery_stages: Option<u32>,
    /// DCQCN's additive increase R_AI, Mb/s (paper: 40).
    pub dcqcn_rai_mbps: Option<f64>,
    /// DCQCN's hyper increase R_HAI, Mb/s (400, 10 × R_AI).
    pub dcqcn_rhai_mbps: Option<f64>,
    /// DCQCN's least time between rate cuts, µs (4, the NIC default).
    pub dcqcn_rate_decrease_interval_us: Option<f64>,
    /// DCQCN's lowest rate, Mb/s (10).
    pub dcqcn_min_rate_mbps: Option<f64>,
    /// How DCQCN's increase events pick their phase: `paper` (byte counter and timer
    /// stages) or `timer` (Mellanox's, the `hpcc-artifact` preset's: the timer alone, no
    /// byte counter; F fast-recovery events, one additive, then hyper increases).
    pub dcqcn_increase: Option<DcqcnIncreaseSpec>,
    /// When a DCQCN cut lowers the target rate: `every-cut` (the paper) or
    /// `after-timer-increase` (Mellanox's `clamp_tgt_rate` off, the `hpcc-artifact`
    /// preset's: only if the timer raised the rate since the previous cut).
    pub dcqcn_clamp_target: Option<DcqcnClampSpec>,
    /// TIMELY's EWMA weight α (paper: 0.875).
    pub timely_alpha: Option<f64>,
    /// TIMELY's decrease factor β (paper: 0.8).
    pub timely_beta: Option<f64>,
    /// TIMELY's additive step δ, Mb/s (default line rate / 1000: the paper's 10 Mb/s at
    /// 10 Gb/s, scaled as the HPCC authors' simulator scales it).
    pub timely_delta_mbps: Option<f64>,
    /// TIMELY's T_low, µs (paper: 50).
    pub timely_t_low_us: Option<f64>,
    /// TIMELY's T_high, µs (paper: 500).
    pub timely_t_high_us: Option<f64>,
    /// TIMELY's minimum RTT normalising the gradient, µs (paper: 20).
    pub timely_min_rtt_us: Option<f64>,
    /// TIMELY's N: consecutive non-positive gradients before hyperactive increase N·δ
    /// (paper: 5).
    pub timely_hai_threshold: Option<u32>,
    /// TIMELY's lowest rate, Mb/s (10).
    pub timely_min_rate_mbps: Option<f64>,
    /// TIMELY takes one RTT sample per round trip (default true, as the HPCC authors'
    /// simulator; false: every ACK's).
    pub timely_once_per_rtt: Option<bool>,
    /// HPCC's unset constants: `paper` (default, Li et al. 2019) or `hpcc-artifact` (the
    /// HPCC authors' simulator: maxStage 0, W_AI from a 4·10⁻⁴·line-rate step over T,
    /// minimum rate 1 Gb/s).
    pub hpcc_preset: Option<PresetSpec>,
    /// HPCC's target utilisation η (paper: 0.95).
    pub hpcc_eta: Option<f64>,
    /// HPCC's maxStage (paper: 5).
    pub hpcc_max_stage: Option<u32>,
    /// HPCC's additive increase W_AI, bytes (paper: 80).
    pub hpcc_wai_bytes: Option<f64>,
    /// HPCC's lowest rate, Mb/s (10).
    pub hpcc_min_rate_mbps: Option<f64>,
    #[serde(default)]
    pub scheduler: SchedulerSpec,
    /// Overrides of the shared `[tcp]` settings for this transport.
    #[serde(default)]
    pub tcp: TcpSpec,
}

/// The jobs of `pattern = "jobs"`: `parallel` closed loops of `repeat` jobs each. A job
/// picks a random client and `fanout` distinct random servers among the entry's hosts;
/// the client sends each server a request of `request_bytes` (a flow), each server answers
/// with a flow of the entry's `size` when its request flow has finished, and the job ends
/// when every answer has arrived. The loop's next job starts `interval_us` (default 0)
/// later. Every flow of a job carries its number in the `job` column.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JobsSpec {
    /// Jobs running at once, each in its own closed loop (default 1).
    pub parallel: Option<u32>,
    /// Servers per job.
    pub fanout: u32,
    /// Bytes of the request the client sends each server first (default 0: no request
    /// flows; the answers start with the job).
    pub request_bytes: Option<u64>,
    /// Class label of the request flows (default `request`).
    pub request_class: Option<String>,
}

/// Flows of at least `at_bytes` (and long-lived ones) use another transport and class,
/// e.g. multipath for the long flows of a workload whose short flows run DCTCP.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SizeSplitSpec {
    /// The size, in bytes, from which flows take `transport`.
    pub at_bytes: u64,
    /// Transport of those flows.
    pub transport: String,
    /// Their class label (default `long`).
    pub class: Option<String>,
}

/// The client/server request workload of `pattern = "requests"`: Poisson requests
/// (`load` per client, or `rate_per_s` in total) from random clients to random servers;
/// each response is a flow from the server to the client on one of the pair's
/// persistent connections, opened at the start of the run.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RequestsSpec {
    /// The hosts that send requests (and receive the responses).
    pub clients: Vec<u32>,
    /// The hosts that answer them.
    pub servers: Vec<u32>,
    /// Persistent connections per client–server pair and request kind (default 5).
    pub connections: Option<u32>,
    /// Which of the pair's connections a response takes: `round_robin` (default: each
    /// in turn, busy or not) or `idle` (the first with nothing left to deliver, or else
    /// a new connection, which stays open for the pair's later responses).
    pub pick: Option<ConnPickSpec>,
    /// Draw sizes below this many bytes only (the size distribution conditioned on it).
    pub sizes_below_bytes: Option<u64>,
    /// Requests of at least this many bytes are background requests, carried on their
    /// own connections with `background_transport` (default: none).
    pub background_above_bytes: Option<u64>,
    /// Transport of the background connections (default `tcp`).
    pub background_transport: Option<String>,
    /// Class label of background requests (default `background`).
    pub background_class: Option<String>,
    /// Partition–aggregate requests: each request goes at once to this many server
    /// applications, spread over `servers` in turn, each with its own `connections`;
    /// the responses of one request are one job (default: one random server).
    pub fanout: Option<u32>,
}

/// How a response picks one of its client–server pair's persistent connections.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ConnPickSpec {
    /// The pair's connections in turn, whether or not the last one is done.
    RoundRobin,
    /// The first connection with nothing left to deliver; none: a new one.
    Idle,
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
    /// The same, sampled as a step function: each listed size carries the CDF's step at
    /// it, and no size between two listed ones is drawn (as Homa's simulator samples its
    /// workloads; the mean is the "step mean" of the shipped files' headers).
    CdfStep(String),
    /// Flows that send until the end of the run.
    LongLived,
}

/// One traffic entry. Which fields apply depends on `pattern`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrafficSpec {
    pub pattern: Pattern,
    /// Name of the transport (default `tcp`).
    #[serde(default = "default_transport")]
    pub transport: String,
    /// A label for the results, e.g. `short` or `background`.
    #[serde(default = "default_class")]
    pub class: String,
    /// Strict-priority class: 0 (high, default) or 1 (low).
    #[serde(default)]
    pub priority: u8,
    /// The flows' sizes (every pattern but `matrix` and `goal`, whose files give them).
    pub size: Option<SizeSpec>,
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
    /// The entry's arrivals stop at this time, in milliseconds, so the network can drain
    /// before the end: no Poisson arrival, repetition or staggered start from then on
    /// (default: the end of the run). Open-loop arrivals only (not `closed_loop` or
    /// `jobs`).
    pub arrivals_until_ms: Option<f64>,
    /// `incast`: the receiving host (default: the first host of the entry).
    pub receiver: Option<u32>,
    /// `incast`: number of senders (default: all other hosts of the entry), taken in order.
    pub senders: Option<u32>,
    /// Delay between the starts of successive flows of the entry, in microseconds.
    #[serde(default)]
    pub stagger_us: f64,
    /// `incast`/`pair`/`each_to_random`: number of repetitions, `interval_us` apart;
    /// `jobs`: jobs per loop.
    #[serde(default = "one")]
    pub repeat: u32,
    /// Time between repetitions in microseconds: start to start, or with `closed_loop`
    /// the think time from a flow's finish to the same sender's next flow (default 0).
    pub interval_us: Option<f64>,
    /// `incast`/`pair`/`each_to_random`: each sender sends its next repetition when its
    /// previous flow has finished (like a client issuing requests one after another).
    #[serde(default)]
    pub closed_loop: bool,
    /// `pair`: source host.
    pub src: Option<u32>,
    /// `pair`: destination host.
    pub dst: Option<u32>,
    /// `requests`: clients, servers and connections.
    pub requests: Option<RequestsSpec>,
    /// The entry's flows reuse connections (packet level): a flow takes the first of
    /// its (source, destination) pair's open connections with nothing left to deliver,
    /// or else opens one that stays open for the pair's later flows, as the Homa
    /// authors' ns-2 traffic generator does. Default false: every flow opens a
    /// connection of its own.
    #[serde(default)]
    pub connection_pool: bool,
    /// Pin the entry's connections to equal-cost paths (packet level): subflow j of a
    /// connection takes path `paths[j % len]`, both ways. Path indices count the
    /// equal-cost paths between the two hosts: at each switch with several next hops,
    /// in the order the topology joins them, the index modulo their number picks one
    /// and the quotient goes on to the next choice point (leaf-spine: path i goes by
    /// spine i; FUSO testbed: by parallel link i; fat tree: i mod k/2 picks the
    /// aggregation switch, i div k/2 the core). A pair with fewer paths takes the index
    /// modulo its number of paths.
    pub paths: Option<Vec<u32>>,
    /// Long-lived flows of this entry stop sending at this time, in microseconds (they
    /// stay unfinished; packets in flight are still delivered).
    pub stop_us: Option<f64>,
    /// `jobs`: the jobs' shape.
    pub jobs: Option<JobsSpec>,
    /// Flows of at least `at_bytes` take another transport and class.
    pub size_split: Option<SizeSplitSpec>,
    /// `matrix`: the connection-matrix file (htsim's format), relative to the scenario;
    /// `goal`: the GOAL schedule (LogGOPSim's text format).
    pub file: Option<String>,
    /// `matrix`: the time from a trigger's firing to the start of the flows it starts
    /// (compute time), in microseconds (default 0: a flow starts one synchronisation
    /// step, the fabric's smallest link delay, after its trigger fires).
    pub trigger_delay_us: Option<f64>,
    /// `collective`: the operation: `allreduce`, `allgather`, `reduce_scatter`,
    /// `alltoall` or `broadcast`.
    pub collective: Option<String>,
    /// `collective`: how it is carried out: `ring`, `recursive_doubling`,
    /// `halving_doubling`, `butterfly`, `double_binary_tree`, `bruck`, `pairwise`,
    /// `hierarchical` or `direct` (each collective has some of them).
    pub algorithm: Option<String>,
    /// `collective`: the number of ranks, one per host, taken from the entry's hosts by
    /// `placement` (default: every host of the entry, in order).
    pub ranks: Option<u32>,
    /// `collective` and `goal`: which of the entry's hosts the ranks take: `contiguous`
    /// (the first, default; for `goal`, with `hosts = [...]`, rank r on `hosts[r]`),
    /// `strided` (evenly spread: rank r on the (r·⌊H/R⌋)-th of H hosts) or `random`
    /// (drawn with the seed).
    pub placement: Option<String>,
    /// `collective`: how many times the collective runs, one after the other (training
    /// steps; default 1).
    pub iterations: Option<u32>,
    /// `collective`: the compute time between iterations, in microseconds: iteration
    /// i + 1 starts this long after every rank has iteration i's result (default 0).
    pub gap_us: Option<f64>,
    /// `collective`: pieces each tree (double binary tree) or the chain (ring
    /// broadcast) pipelines the buffer in (default 1).
    pub chunks: Option<u32>,
    /// `collective`, algorithm `hierarchical`: ranks per group (consecutive ranks).
    pub group_size: Option<u32>,
    /// `collective`: `pair` (default): the transfers between two ranks are messages on
    /// one persistent connection, opened by the first of them (NCCL's and MPI's channels
    /// between peers; TCP and its variants); `transfer`: each transfer opens a
    /// connection of its own, as each line of a connection matrix does (the default for
    /// NDP, RoCE and Homa, and for transports with copies).
    pub connections: Option<String>,
    /// `goal`: sends of at least this many bytes also wait for their receive to be
    /// posted (LogGOPSim's rendezvous protocol above its threshold S); default none:
    /// every message leaves when its send's dependencies are done (eager, as ATLAHS's
    /// htsim back end sends).
    pub rendezvous_bytes: Option<u64>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutputSpec {
    /// Keep a time-weighted histogram of every switch queue (for percentiles).
    #[serde(default)]
    pub queue_histogram: bool,
    /// Record every running flow's subflows (bytes acknowledged, cwnd, smoothed RTT)
    /// at this period, in microseconds: the `flow_samples` table.
    pub flow_sample_us: Option<f64>,
    /// Record the switch queues' occupancy at this period, in microseconds: the
    /// `queue_samples` table.
    pub queue_sample_us: Option<f64>,
    /// Sample only the switch ports of these tiers (default: all switch ports).
    pub queue_sample_tiers: Option<Vec<String>>,
    /// Packet capture (packet level): the packets that leave the selected ports, written
    /// as one pcapng file (`capture.pcapng` in the run's directory) with one interface
    /// per captured port, nanosecond timestamps of simulated time (see `docs/traces.md`).
    pub pcap: Option<PcapSpec>,
    /// Event trace (packet level): every enqueue, dequeue, drop, ECN mark, trim and PFC
    /// pause at the selected ports, as the `trace` table (`trace.parquet`).
    pub trace: Option<TraceSpec>,
}

/// One port: the output queue of `node` on its link to `peer` (packets going from
/// `node` to `peer`). The other direction of the link is `{ node = peer, peer = node }`.
/// Parallel links between the two nodes are all selected.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PortSelector {
    /// The port's node, by its name in the queue table (`host3`, `edge0`, ...).
    pub node: String,
    /// The node at the other end of the port's link.
    pub peer: String,
}

/// `[output.pcap]`: what to capture. Ports and hosts add capture points; flows,
/// classes and the time window filter the packets of every point.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PcapSpec {
    /// Ports to capture (one interface each).
    #[serde(default)]
    pub ports: Vec<PortSelector>,
    /// Hosts (by number) to capture: each of their interfaces in both directions (what
    /// the host sends and what its switch sends it).
    #[serde(default)]
    pub hosts: Vec<u32>,
    /// Keep only these flows' packets (flow ids of the flows table).
    pub flows: Option<Vec<u32>>,
    /// Keep only the packets of flows of these traffic classes.
    pub classes: Option<Vec<String>>,
    /// Keep only packets that start onto the wire at or after this time, in microseconds.
    pub from_us: Option<f64>,
    /// Keep only packets that start onto the wire before this time, in microseconds.
    pub until_us: Option<f64>,
    /// The most packets written (all points together, drops included); later ones are
    /// counted in `capture_missed`. Default 100,000.
    pub max_packets: Option<i64>,
    /// Also capture the packets each selected port drops (queue and link-fault drops),
    /// on an interface of their own per port (`NODE->PEER drops`). Default true.
    pub drops: Option<bool>,
}

/// `[output.trace]`: the ports whose queue events are traced.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TraceSpec {
    /// Ports to trace.
    #[serde(default)]
    pub ports: Vec<PortSelector>,
    /// Hosts (by number) whose interfaces are traced, both directions.
    #[serde(default)]
    pub hosts: Vec<u32>,
    /// Keep only events at or after this time, in microseconds.
    pub from_us: Option<f64>,
    /// Keep only events before this time, in microseconds.
    pub until_us: Option<f64>,
    /// The most events kept; later ones are counted in `trace_missed`. Default 1,000,000.
    pub max_events: Option<i64>,
}

/// The scenario JSON Schema, pretty-printed.
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(Scenario);
    serde_json::to_string_pretty(&schema).expect("schema serialises")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The names of the variants of the schema's enum `definition` (`PatternSpec`,
    /// `TopologySpec`): a string enum's values, or the keys of an externally tagged
    /// enum's one-key tables.
    pub(crate) fn variant_names(definition: &str) -> Vec<String> {
        let schema = serde_json::to_value(schemars::schema_for!(Scenario)).unwrap();
        let def = &schema["definitions"][definition];
        assert!(def.is_object(), "the schema has no definition {definition}");
        let strings = |v: &serde_json::Value| -> Vec<String> {
            let values = v.as_array().cloned().unwrap_or_default();
            values
                .iter()
                .map(|n| n.as_str().unwrap().to_string())
                .collect()
        };
        if def["enum"].is_array() {
            return strings(&def["enum"]);
        }
        let variants = def["oneOf"].as_array().expect("an enum or oneOf schema");
        variants
            .iter()
            .flat_map(|v| match v["enum"].is_array() {
                true => strings(&v["enum"]),
                false => strings(&v["required"]),
            })
            .collect()
    }

    /// `docs/scenario.schema.json` is the schema this build generates (`manypath
    /// schema`; regenerate it with `make schema`).
    #[test]
    fn the_shipped_json_schema_is_current() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../docs/scenario.schema.json"
        );
        let shipped: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let generated: serde_json::Value = serde_json::from_str(&json_schema()).unwrap();
        assert!(
            shipped == generated,
            "docs/scenario.schema.json is out of date: regenerate it with `make schema`"
        );
    }

    /// The fields a missing-field error lists are the schema's required ones.
    #[test]
    fn the_required_fields_are_the_schemas() {
        let generated: serde_json::Value = serde_json::from_str(&json_schema()).unwrap();
        let required: Vec<&str> = generated["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(required, super::super::plan::REQUIRED_FIELDS);
    }
}
