//! `[output.pcap]` and `[output.trace]`: which ports are captured or traced, the
//! packet filters and the caps, checked against the topology's nodes and links.

use super::checker::{show, Checker};
use super::level::Level;
use super::schema::{PcapSpec, PortSelector, Scenario, TraceSpec};
use crate::net::topology::{NodeRole, Topology};
use crate::time::SimTime;
use std::collections::HashMap;

/// The packets a capture keeps when the scenario sets no cap.
pub const DEFAULT_MAX_PACKETS: u64 = 100_000;

/// The events a trace keeps when the scenario sets no cap.
pub const DEFAULT_MAX_EVENTS: u64 = 1_000_000;

/// Packets assumed per second and captured port for the uncapped-capture warning: a
/// link of the hosts' rate full of 1,500-byte frames.
const WARN_FRAME_BITS: f64 = 1500.0 * 8.0;

/// A port as the plan names it: the node that sends and the node at the other end, as
/// topology node numbers. Parallel links between them are all meant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortRef {
    pub node: u32,
    pub peer: u32,
}

/// The ports selected and the window, for a capture or a trace.
#[derive(Clone, Debug, PartialEq)]
pub struct Selection {
    /// Ports in the order given (hosts' ports after them), without repeats.
    pub ports: Vec<PortRef>,
    pub from: SimTime,
    pub until: SimTime,
    /// The most packets (capture) or events (trace) kept.
    pub cap: u64,
}

/// A resolved `[output.pcap]`.
#[derive(Clone, Debug, PartialEq)]
pub struct CapturePlan {
    pub select: Selection,
    /// Only these flows' packets (`None`: all flows).
    pub flows: Option<Vec<u32>>,
    /// Only the packets of flows of these classes (indices into `Plan::classes`).
    pub classes: Option<Vec<u16>>,
    /// Drops at the selected ports are captured on interfaces of their own.
    pub drops: bool,
}

/// `output.pcap` and `output.trace`, checked. `classes` are the traffic's class names;
/// `host_bps` the hosts' line rate (for the uncapped-capture warning).
pub(super) fn output_capture(
    s: &Scenario,
    topo: Option<&Topology>,
    classes: &[String],
    duration: SimTime,
    host_bps: f64,
    c: &mut Checker,
) -> (Option<CapturePlan>, Option<Selection>) {
    let packet_only = |name: &str, c: &mut Checker| {
        if Level::of(s.level) == Level::Flow {
            c.err(
                &format!("output.{name}"),
                "applies only to level = \"packet\" (the flow level has no packets)".into(),
            );
        }
    };
    let pcap = s.output.pcap.as_ref().map(|p| {
        packet_only("pcap", c);
        capture_plan(p, topo, classes, duration, host_bps, c)
    });
    let trace = s.output.trace.as_ref().map(|t| {
        packet_only("trace", c);
        trace_plan(t, topo, c)
    });
    (pcap, trace)
}

fn capture_plan(
    p: &PcapSpec,
    topo: Option<&Topology>,
    classes: &[String],
    duration: SimTime,
    host_bps: f64,
    c: &mut Checker,
) -> CapturePlan {
    let path = "output.pcap";
    let select = selection(
        path,
        (&p.ports, &p.hosts),
        (p.from_us, p.until_us),
        (p.max_packets, "max_packets", DEFAULT_MAX_PACKETS),
        topo,
        c,
    );
    let class_ids = p.classes.as_ref().map(|names| {
        let mut ids = Vec::new();
        for (i, name) in names.iter().enumerate() {
            match classes.iter().position(|k| k == name) {
                Some(k) => ids.push(k as u16),
                None => c.err(
                    &format!("{path}.classes[{i}]"),
                    format!(
                        "not a class of this scenario's traffic (its classes: {}), got {name:?}",
                        classes.join(", ")
                    ),
                ),
            }
        }
        ids
    });
    if p.max_packets.is_none() && !select.ports.is_empty() {
        let window = select.until.min(duration).saturating_sub(select.from);
        let secs = window as f64 * 1e-12;
        let likely = select.ports.len() as f64 * host_bps * secs / WARN_FRAME_BITS;
        if likely > DEFAULT_MAX_PACKETS as f64 {
            c.warn(
                &format!("{path}.max_packets"),
                format!(
                    "not set: the capture keeps the first {DEFAULT_MAX_PACKETS} packets, and its {} \
                     port(s) may carry up to about {} packets over this run; set max_packets \
                     (or a window with from_us/until_us) to say how many to keep",
                    select.ports.len(),
                    show(likely.round())
                ),
            );
        }
    }
    CapturePlan {
        select,
        flows: p.flows.clone(),
        classes: class_ids,
        drops: p.drops.unwrap_or(true),
    }
}

fn trace_plan(t: &TraceSpec, topo: Option<&Topology>, c: &mut Checker) -> Selection {
    selection(
        "output.trace",
        (&t.ports, &t.hosts),
        (t.from_us, t.until_us),
        (t.max_events, "max_events", DEFAULT_MAX_EVENTS),
        topo,
        c,
    )
}

/// The ports, window and cap of a capture or trace at `path`.
fn selection(
    path: &str,
    (ports, hosts): (&[PortSelector], &[u32]),
    (from_us, until_us): (Option<f64>, Option<f64>),
    (cap, cap_name, cap_default): (Option<i64>, &str, u64),
    topo: Option<&Topology>,
    c: &mut Checker,
) -> Selection {
    let mut refs = Vec::new();
    if ports.is_empty() && hosts.is_empty() {
        c.err(
            &format!("{path}.ports"),
            "select at least one port (ports) or host (hosts)".into(),
        );
    }
    if let Some(topo) = topo {
        let names = NodeNames::new(topo);
        for (i, sel) in ports.iter().enumerate() {
            if let Some(r) = resolve_port(&format!("{path}.ports[{i}]"), sel, &names, c) {
                if !refs.contains(&r) {
                    refs.push(r);
                }
            }
        }
        for (i, &h) in hosts.iter().enumerate() {
            if h >= topo.n_hosts {
                c.err(
                    &format!("{path}.hosts[{i}]"),
                    format!(
                        "no such host: this topology has hosts 0 to {}, got {h}",
                        topo.n_hosts.saturating_sub(1)
                    ),
                );
                continue;
            }
            for &(a, b, _) in &topo.links {
                for (node, peer) in [(a, b), (b, a)] {
                    let r = PortRef { node, peer };
                    if (a == h || b == h) && !refs.contains(&r) {
                        refs.push(r);
                    }
                }
            }
        }
    }
    let from = c.time(&format!("{path}.from_us"), from_us, 0, false);
    let until = c.time(&format!("{path}.until_us"), until_us, SimTime::MAX, true);
    if until <= from {
        c.err(
            &format!("{path}.until_us"),
            format!(
                "must be after from_us ({}), got {}",
                show(from_us.unwrap_or(0.0)),
                show(until_us.unwrap_or(0.0))
            ),
        );
    }
    let cap = match cap {
        None => cap_default,
        Some(n) if n >= 1 => n as u64,
        Some(n) => {
            c.err(
                &format!("{path}.{cap_name}"),
                format!("must be a positive whole number, got {n}"),
            );
            cap_default
        }
    };
    Selection {
        ports: refs,
        from,
        until,
        cap,
    }
}

/// The nodes of a topology by name (as the queue table names them). Every field that
/// names nodes (`output.pcap`, `output.trace`, `parallel.partitions`) resolves them here,
/// with one error wording; built once per field, as a partitioning may name every node
/// of a large fabric.
pub(super) struct NodeNames<'t> {
    topo: &'t Topology,
    ids: HashMap<&'t str, u32>,
}

impl<'t> NodeNames<'t> {
    pub(super) fn new(topo: &'t Topology) -> Self {
        let ids = topo
            .names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), i as u32))
            .collect();
        NodeNames { topo, ids }
    }

    /// The node named `name`, or an error at `path` with an example of each role's names.
    pub(super) fn resolve(&self, path: &str, name: &str, c: &mut Checker) -> Option<u32> {
        if let Some(&i) = self.ids.get(name) {
            return Some(i);
        }
        let topo = self.topo;
        let example = |role: NodeRole| {
            topo.roles
                .iter()
                .position(|&r| r == role)
                .map_or(String::new(), |i| topo.names[i].clone())
        };
        c.err(
            path,
            format!(
                "no node of this topology has that name (hosts are named like {:?}, switches like {:?}), got {name:?}",
                example(NodeRole::Host),
                example(NodeRole::Switch),
            ),
        );
        None
    }
}

/// The port `sel` names, if its nodes exist and are linked.
fn resolve_port(
    path: &str,
    sel: &PortSelector,
    names: &NodeNames,
    c: &mut Checker,
) -> Option<PortRef> {
    let topo = names.topo;
    let node = names.resolve(&format!("{path}.node"), &sel.node, c)?;
    let peer = names.resolve(&format!("{path}.peer"), &sel.peer, c)?;
    let linked = topo
        .links
        .iter()
        .any(|&(a, b, _)| (a, b) == (node, peer) || (b, a) == (node, peer));
    if !linked {
        let neighbours: Vec<&str> = topo
            .links
            .iter()
            .filter_map(|&(a, b, _)| {
                (a == node)
                    .then_some(b)
                    .or((b == node).then_some(a))
                    .map(|n| topo.names[n as usize].as_str())
            })
            .collect();
        c.err(
            &format!("{path}.peer"),
            format!(
                "{:?} has no link to {:?} (its links go to {}), so there is no such port",
                sel.node,
                sel.peer,
                neighbours.join(", ")
            ),
        );
        return None;
    }
    Some(PortRef { node, peer })
}

/// Checks `output.pcap.flows` against the flows the workload draws (`n_flows`).
pub(super) fn check_flow_ids(plan: Option<&CapturePlan>, n_flows: usize, c: &mut Checker) {
    let Some(ids) = plan.and_then(|p| p.flows.as_ref()) else {
        return;
    };
    for (i, &f) in ids.iter().enumerate() {
        if f as usize >= n_flows {
            c.err(
                &format!("output.pcap.flows[{i}]"),
                format!(
                    "no such flow: this run's flows are numbered 0 to {}, got {f}",
                    n_flows.saturating_sub(1)
                ),
            );
        }
    }
}
