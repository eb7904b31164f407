//! NDP's settings: the trimming queues of switch tiers (`queue.trim`) and the fields of
//! a `[transports.NAME]` entry with cc = "ndp", each checked and naming its field, and
//! what NDP cannot run with (pinned paths and BCube, whose source routes its per-packet
//! spraying would ignore; a lossless fabric's shared buffer and PFC, which a trimming
//! queue does not take part in).

use super::checker::Checker;
use super::schema::{QueueSpec, Scenario, TransportSpec};
use super::TransportPlan;
use crate::net::network::LinkParams;
use crate::net::trim::{
    TrimConfig, DEFAULT_HEADER_QUEUE_PACKETS, DEFAULT_HEADER_WEIGHT, DEFAULT_THRESHOLD_PACKETS,
};
use crate::time::SimTime;
use crate::transport::ndp::{NdpConfig, DEFAULT_PAYLOAD, DEFAULT_RTO, HEADER_BYTES};

/// An NDP transport's settings as the scenario gives them; the first window is resolved
/// per connection against its NIC's line rate and the network's base RTT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NdpSettings {
    pub payload: u32,
    pub window_bytes: Option<u64>,
    pub rto: SimTime,
    /// The base RTT of the first window's BDP (`None`: the network's).
    pub base_rtt: Option<SimTime>,
}

impl NdpSettings {
    pub fn config(&self, line_bps: f64, net_rtt: SimTime) -> NdpConfig {
        NdpConfig::new(
            self.payload,
            self.rto,
            self.window_bytes,
            line_bps,
            self.base_rtt.unwrap_or(net_rtt),
        )
    }

    /// A full data packet on the wire.
    pub fn packet_bytes(&self) -> u32 {
        self.payload + HEADER_BYTES
    }
}

/// The NDP fields of entry `t` (at `path`), checked.
pub(super) fn ndp_settings(t: &TransportSpec, path: &str, c: &mut Checker) -> NdpSettings {
    let at = |f: &str| format!("{path}.{f}");
    let payload = t.payload_bytes.unwrap_or(DEFAULT_PAYLOAD);
    let max = 9000 - HEADER_BYTES;
    if !(1..=max).contains(&payload) {
        c.err(
            &at("payload_bytes"),
            format!("must be between 1 and {max} (a 9000-byte jumbo frame with NDP's 64-byte header), got {payload}"),
        );
    }
    if t.window_bytes == Some(0) {
        c.err(&at("window_bytes"), "must be at least 1, got 0".into());
    }
    NdpSettings {
        payload: payload.clamp(1, max),
        window_bytes: t.window_bytes,
        rto: t
            .rto_us
            .map_or(DEFAULT_RTO, |x| c.time(&at("rto_us"), Some(x), 1, true)),
        base_rtt: t
            .base_rtt_us
            .map(|x| c.time(&at("base_rtt_us"), Some(x), 1, true)),
    }
}

/// Trimming on the switch ports of each tier (whose queue the tier's own `queue` table
/// or `network.queue` gives), set in `tier_params`; on host NICs an error.
pub(super) fn trim_features(
    s: &Scenario,
    tiers: &[&'static str],
    tier_params: &mut [LinkParams],
    c: &mut Checker,
) {
    if s.network.host_queue.trim.is_some() {
        c.err(
            "network.host_queue.trim",
            "trimming runs on switch ports, which have a header queue; a host NIC has none \
             (set it on `network.queue` or a tier's queue)"
                .into(),
        );
    }
    // Tiers without a queue of their own share `network.queue`: its problems are
    // reported once, for the first of them.
    let mut checked: Vec<String> = Vec::new();
    for (t, params) in tiers.iter().zip(tier_params.iter_mut()) {
        let (spec, path) = match s.network.tiers.get(*t).and_then(|o| o.queue.as_ref()) {
            Some(q) => (q, format!("network.tiers.{t}.queue")),
            None => (&s.network.queue, "network.queue".to_string()),
        };
        if spec.trim.is_some() {
            let mut again = Checker::default();
            let report = if checked.contains(&path) {
                &mut again
            } else {
                checked.push(path.clone());
                &mut *c
            };
            params.trim = Some(trim_config(spec, &path, params.queue.limit_packets, report));
        }
    }
    let lossless = super::fabric::lossless_field(s);
    if let Some(field) = lossless.filter(|_| tier_params.iter().any(|p| p.trim.is_some())) {
        c.err(
            &field,
            "a trimming queue (queue.trim) has its own data and header queues and does not \
             take part in a shared buffer or PFC: turn one of them off"
                .into(),
        );
    }
}

fn trim_config(q: &QueueSpec, path: &str, limit_packets: u64, c: &mut Checker) -> TrimConfig {
    let t = q.trim.as_ref().expect("trim set");
    let at = |f: &str| format!("{path}.trim.{f}");
    let threshold = t.threshold_packets.unwrap_or(DEFAULT_THRESHOLD_PACKETS);
    c.at_least(&at("threshold_packets"), threshold, 1);
    if threshold > limit_packets {
        c.err(
            &at("threshold_packets"),
            format!("must be at most the queue's limit_packets ({limit_packets}), got {threshold}"),
        );
    }
    let headers = t
        .header_queue_packets
        .unwrap_or(DEFAULT_HEADER_QUEUE_PACKETS);
    if headers == 0 {
        c.err(
            &at("header_queue_packets"),
            "trimming needs a header queue for the trimmed headers: must be at least 1, got 0"
                .into(),
        );
    }
    let weight = t.header_weight.unwrap_or(DEFAULT_HEADER_WEIGHT);
    c.at_least(&at("header_weight"), weight as u64, 1);
    for (field, set) in [
        ("priority", q.priority),
        ("red", q.red.is_some()),
        ("ecn_red", q.ecn_red.is_some()),
        ("ecn_k_packets", q.ecn_k_packets.is_some()),
        ("ecn_k_bytes", q.ecn_k_bytes.is_some()),
        ("rwndq", q.rwndq.is_some()),
    ] {
        if set {
            c.err(
                &format!("{path}.{field}"),
                "a trimming queue serves its header and data queues by weighted round robin \
                 and neither marks nor drops early: remove this or `trim`"
                    .into(),
            );
        }
    }
    TrimConfig {
        threshold_packets: threshold.max(1),
        header_queue_packets: headers.max(1),
        header_weight: weight.max(1),
        return_to_sender: t.return_to_sender.unwrap_or(false),
    }
}

/// NDP sprays every packet on its own path: traffic entries that pin paths, and BCube
/// (every connection on source routes), cannot carry it. It needs every switch port to
/// trim: a full drop-tail queue drops its packets whole, which only its retransmission
/// timeout recovers (a permutation then ran at 7.3 times the ideal completion time, with
/// thousands of timeouts).
pub(super) fn check_paths(
    s: &Scenario,
    tiers: &[&'static str],
    tier_params: &[LinkParams],
    transports: &[TransportPlan],
    c: &mut Checker,
) {
    let bcube = s.topology.bcube().is_some();
    let mut untrimmed_named = false;
    for (i, t) in s.traffic.iter().enumerate() {
        let ndp = transports
            .iter()
            .find(|p| p.name == t.transport)
            .is_some_and(|p| p.ndp.is_some());
        if !ndp {
            continue;
        }
        if !untrimmed_named {
            untrimmed_named = true;
            let mut paths: Vec<String> = Vec::new();
            for (tier, params) in tiers.iter().zip(tier_params) {
                if params.trim.is_some() {
                    continue;
                }
                let path = match s.network.tiers.get(*tier).and_then(|o| o.queue.as_ref()) {
                    Some(_) => format!("network.tiers.{tier}.queue.trim"),
                    None => "network.queue.trim".to_string(),
                };
                if !paths.contains(&path) {
                    paths.push(path);
                }
            }
            for path in paths {
                c.err(
                    &path,
                    format!(
                        "traffic[{i}] runs NDP (transport {:?}), which needs switch queues \
                         that trim: a full queue without trimming drops its packets whole, \
                         and only the retransmission timeout recovers them; add `trim = {{}}`",
                        t.transport
                    ),
                );
            }
        }
        if t.paths.is_some() {
            c.err(
                &format!("traffic[{i}].paths"),
                "NDP sprays every packet on its own path: it cannot follow pinned paths".into(),
            );
        } else if bcube {
            c.err(
                &format!("traffic[{i}].transport"),
                "NDP sprays every packet over the switches' equal-cost paths; BCube's hosts \
                 relay on source routes: use a switched topology"
                    .into(),
            );
        }
    }
}
