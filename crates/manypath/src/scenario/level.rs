//! Which simulator runs a plan (`Level`), the flow-level model's settings, and what the
//! chosen level cannot represent: each such field is an error at validation, so a
//! scenario never runs with part of it silently ignored. The flow level (`flow/`) reads
//! these types; it is not imported here, so the dependency goes one way.

use super::checker::Checker;
use super::schema::{
    FlowModelKindSpec, FlowModelSpec, LevelSpec, LoadBalancingSpec, Pattern, Scenario, SizeSpec,
    TierBufferSpec,
};
use super::topology::source_routes;
use super::transports::TransportPlan;
use crate::net::topology::TopologyKind;

/// Which simulator runs a plan.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Level {
    #[default]
    Packet,
    Flow,
}

impl Level {
    pub(super) fn of(spec: LevelSpec) -> Level {
        match spec {
            LevelSpec::Packet => Level::Packet,
            LevelSpec::Flow => Level::Flow,
        }
    }

    /// The name scenarios give it (`level = "..."`).
    pub fn name(self) -> &'static str {
        match self {
            Level::Packet => "packet",
            Level::Flow => "flow",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowModelKind {
    TcpResponse,
    MaxMin,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlowModelConfig {
    pub kind: FlowModelKind,
    pub max_iterations: u32,
    pub tolerance: f64,
}

pub use super::schema::{DEFAULT_MAX_ITERATIONS, DEFAULT_TOLERANCE};

/// The `[flow_model]` section, checked.
pub(super) fn model_config(s: &FlowModelSpec, c: &mut Checker) -> FlowModelConfig {
    let max_iterations = s.max_iterations.unwrap_or(DEFAULT_MAX_ITERATIONS);
    if max_iterations == 0 {
        c.err(
            "flow_model.max_iterations",
            "must be at least 1, got 0".into(),
        );
    }
    let tolerance = s.tolerance.unwrap_or(DEFAULT_TOLERANCE);
    if !(tolerance.is_finite() && tolerance > 0.0 && tolerance < 1.0) {
        c.err(
            "flow_model.tolerance",
            format!("must be in (0, 1), got {tolerance}"),
        );
    }
    FlowModelConfig {
        kind: match s.model {
            FlowModelKindSpec::TcpResponse => FlowModelKind::TcpResponse,
            FlowModelKindSpec::MaxMin => FlowModelKind::MaxMin,
        },
        max_iterations: max_iterations.max(1),
        tolerance,
    }
}

/// What `level` cannot run of scenario `s` on a topology of kind `kind`.
pub(super) fn check_level(
    s: &Scenario,
    level: Level,
    kind: &TopologyKind,
    transports: &[TransportPlan],
    c: &mut Checker,
) {
    match level {
        Level::Packet => check_packet_level(s, kind, transports, c),
        Level::Flow => check_flow_level(s, transports, c),
    }
}

/// The packet level runs everything but MMPTCP's scatter on a source-routed topology.
fn check_packet_level(
    s: &Scenario,
    kind: &TopologyKind,
    transports: &[TransportPlan],
    c: &mut Checker,
) {
    if source_routes(kind).is_none() {
        return;
    }
    // BCube's hosts relay along source routes; MMPTCP's scatter needs ECMP.
    for (i, t) in s.traffic.iter().enumerate() {
        let scatter = transports
            .iter()
            .find(|p| p.name == t.transport)
            .is_some_and(|p| p.cc.scatter_bytes().is_some());
        if scatter {
            c.err(
                &format!("traffic[{i}].transport"),
                "MMPTCP scatters packets over ECMP paths; BCube's hosts forward along source routes"
                    .into(),
            );
        }
    }
}

/// The flow level computes the steady state of long-lived flows that all run at once,
/// per-flow ECMP, without queues' dynamics, faults or packet timing.
fn check_flow_level(s: &Scenario, transports: &[TransportPlan], c: &mut Checker) {
    let mut err = |path: &str, msg: &str| c.err(path, msg.to_string());
    if !s.faults.is_empty() {
        err(
            "faults",
            "link faults are not modelled at the flow level (level = \"flow\")",
        );
    }
    let switch_queues = std::iter::once(("network.queue".to_string(), &s.network.queue)).chain(
        s.network.tiers.iter().filter_map(|(t, o)| {
            o.queue
                .as_ref()
                .map(|q| (format!("network.tiers.{t}.queue"), q))
        }),
    );
    for (path, q) in switch_queues {
        if q.rwndq.is_some() {
            err(
                &format!("{path}.rwndq"),
                "RWNDQ is a packet-level switch feature; it is not modelled at the flow level (level = \"flow\")",
            );
        }
        if q.red.is_some() {
            err(
                &format!("{path}.red"),
                "RED is a packet-level queue discipline; it is not modelled at the flow level (level = \"flow\")",
            );
        }
        if q.ecn_red.is_some() {
            err(
                &format!("{path}.ecn_red"),
                "ECN marking acts on queues, which the flow level (level = \"flow\") does not model",
            );
        }
        if q.trim.is_some() {
            err(
                &format!("{path}.trim"),
                "trimming acts on queues, which the flow level (level = \"flow\") does not model",
            );
        }
        if q.pfabric {
            err(
                &format!("{path}.pfabric"),
                "pFabric's queue acts on packets, which the flow level (level = \"flow\") does not model",
            );
        }
    }
    let tier_buffers = s.network.tiers.iter().filter_map(|(t, o)| match o.buffer {
        Some(TierBufferSpec::Buffer(_)) => Some(format!("network.tiers.{t}.buffer")),
        Some(TierBufferSpec::Off(_)) | None => None,
    });
    let buffers = s
        .network
        .buffer
        .as_ref()
        .map(|_| "network.buffer".to_string())
        .into_iter()
        .chain(tier_buffers);
    for path in buffers {
        err(
            &path,
            "switch buffers are packet-level; the flow level (level = \"flow\") has no queues",
        );
    }
    if s.network.pfc.is_some() {
        err(
            "network.pfc",
            "PFC pauses links packet by packet; it is not modelled at the flow level (level = \"flow\")",
        );
    }
    if s.output.flow_sample_us.is_some() || s.output.queue_sample_us.is_some() {
        err(
            "output",
            "time series (flow_sample_us, queue_sample_us) are recorded at the packet level only",
        );
    }
    match s.network.load_balancing {
        LoadBalancingSpec::Ecmp => {}
        LoadBalancingSpec::Spray => err(
            "network.load_balancing",
            "the flow level models per-flow ECMP only, got spray",
        ),
    }
    if s.network.host_jitter_us != 0.0 {
        err(
            "network.host_jitter_us",
            "send jitter acts on packet timing, which the flow level (level = \"flow\") does not model",
        );
    }
    for (i, t) in s.traffic.iter().enumerate() {
        let path = format!("traffic[{i}]");
        match t.size {
            Some(SizeSpec::LongLived) => {}
            Some(
                SizeSpec::Fixed(_)
                | SizeSpec::Uniform { .. }
                | SizeSpec::Pareto { .. }
                | SizeSpec::Cdf(_)
                | SizeSpec::CdfStep(_),
            ) => err(
                &format!("{path}.size"),
                "the flow level models long-lived flows only (size = \"long_lived\")",
            ),
            // A matrix's or a GOAL schedule's flows have sizes and triggers.
            None => err(
                &format!("{path}.pattern"),
                "the flow level models long-lived flows only: a connection matrix's or a GOAL schedule's flows have sizes",
            ),
        }
        if t.arrival.is_some() {
            err(
                &format!("{path}.arrival"),
                "flow arrivals are not modelled at the flow level: its flows all run at once",
            );
        }
        if t.repeat > 1 {
            err(
                &format!("{path}.repeat"),
                "repetitions are not modelled at the flow level: its flows all run at once",
            );
        }
        if t.start_us != 0.0 || t.stagger_us != 0.0 {
            let field = if t.start_us != 0.0 {
                "start_us"
            } else {
                "stagger_us"
            };
            err(
                &format!("{path}.{field}"),
                "the flow level computes the steady state of flows that all run at once; start times do not apply",
            );
        }
        if t.priority != 0 {
            err(
                &format!("{path}.priority"),
                "strict priority is not modelled at the flow level",
            );
        }
        if t.pattern == Pattern::Requests {
            err(
                &format!("{path}.pattern"),
                "requests on persistent connections are modelled at the packet level only",
            );
        }
        if t.connection_pool {
            err(
                &format!("{path}.connection_pool"),
                "connection pools are modelled at the packet level only",
            );
        }
        if let Some(tp) = transports.iter().find(|p| p.name == t.transport) {
            if tp.lia_beta.is_some() {
                err(
                    &format!("{path}.transport"),
                    "LIA's ECN cut (beta) is modelled at the packet level only",
                );
            }
            if tp.fuso.is_some() || tp.replicas > 1 {
                err(
                    &format!("{path}.transport"),
                    "FUSO and replicated flows are loss-recovery schemes, modelled at the packet level only",
                );
            }
            if tp.roce.is_some() {
                err(
                    &format!("{path}.transport"),
                    &format!(
                        "transport {:?} is a RoCE transport (cc = {}): queue pairs, pacing and their rate controllers are modelled at the packet level only",
                        t.transport,
                        tp.cc.info().name
                    ),
                );
            } else if !tp.cc.info().flow_level {
                err(
                    &format!("{path}.transport"),
                    &format!(
                        "transport {:?} uses cc {}; the flow level models loss-based TCP (reno, single path or uncoupled subflows) and MPTCP's linked increases (lia)",
                        t.transport,
                        tp.cc.info().name
                    ),
                );
            }
        }
    }
}

/// The flow level places connections by ECMP only: entries that pin paths are errors.
pub(super) fn check_unpinned(entry_paths: &[Vec<u32>], c: &mut Checker) {
    for (i, p) in entry_paths.iter().enumerate() {
        if !p.is_empty() {
            c.err(
                &format!("traffic[{i}].paths"),
                "the flow-level model does not pin paths; use level = \"packet\"".into(),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::plan::tests::{errors, GOOD};
    use super::super::Plan;
    use super::*;
    use std::path::Path;

    fn at_flow_level(text: &str) -> String {
        text.replace("duration_ms = 10", "duration_ms = 10\nlevel = \"flow\"")
            .replace("dctcp", "tcp")
    }

    #[test]
    fn the_level_and_model_come_from_the_scenario() {
        let p = Plan::from_toml(GOOD, Path::new(".")).unwrap();
        assert_eq!(p.level, Level::Packet);
        let p = Plan::from_toml(&at_flow_level(GOOD), Path::new(".")).unwrap();
        assert_eq!(p.level, Level::Flow);
        assert_eq!(p.flow_model.kind, FlowModelKind::TcpResponse);
        assert_eq!(p.flow_model.max_iterations, DEFAULT_MAX_ITERATIONS);
        let e = errors(&(at_flow_level(GOOD) + "[flow_model]\ntolerance = 2\n"));
        assert!(
            e.contains("flow_model.tolerance: must be in (0, 1), got 2"),
            "{e}"
        );
    }

    #[test]
    fn the_flow_level_rejects_what_it_cannot_model() {
        let e = errors(&at_flow_level(GOOD).replace("\"long_lived\"", "{ fixed = 1000 }"));
        assert!(
            e.contains("traffic[0].size: the flow level models long-lived flows only"),
            "{e}"
        );
        let e = errors(&GOOD.replace("duration_ms = 10", "duration_ms = 10\nlevel = \"flow\""));
        assert!(
            e.contains("traffic[0].transport: transport \"dctcp\" uses cc dctcp"),
            "{e}"
        );
        let e = errors(&(at_flow_level(GOOD) + "paths = [1]\n"));
        assert!(
            e.contains("traffic[0].paths: the flow-level model does not pin paths"),
            "{e}"
        );
    }

    #[test]
    fn the_packet_level_rejects_mmptcp_on_bcube() {
        let bcube = "duration_ms = 1\n[topology.bcube]\nn = 2\nk = 1\n[[traffic]]\n\
                     pattern = \"permutation\"\nsize = \"long_lived\"\ntransport = \"mmptcp\"\n";
        let e = errors(bcube);
        assert!(
            e.contains("traffic[0].transport: MMPTCP scatters packets over ECMP paths"),
            "{e}"
        );
    }
}
