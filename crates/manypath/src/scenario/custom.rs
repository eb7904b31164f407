//! `[topology.custom]`: a topology given as data, inline or from a file (this format in
//! TOML or JSON, GraphML, networkx node-link JSON), checked and resolved to a
//! `CustomTopology`; and the other way, any topology written out in this format
//! (`export`), so a generator's fabric can be edited as a file.

use super::checker::{Checker, MAX_TIME_US};
use super::graph_files::{graphml, is_node_link, node_link};
use super::queues::queue_config;
use super::schema::{
    CustomLinkSpec, CustomNodeSpec, CustomTopologySpec, MarkAtSpec, NodeKindSpec, QueueSpec,
};
use crate::net::custom::{tier_name, CustomLink, CustomNode, CustomTopology, LinkOverride};
use crate::net::queue::{MarkAt, QueueConfig};
use crate::net::topology::{NodeRole, Topology};
use crate::time::{from_us, Rate};
use std::collections::HashMap;
use std::path::Path;

/// The most tiers a custom topology may have (tier indices are bytes).
const MAX_TIERS: usize = 64;
/// The most parallel links one entry may stand for.
const MAX_PARALLEL: u32 = 1024;
/// The largest custom topology, in nodes.
const MAX_NODES: usize = 1 << 22;

/// Where a problem is: `topology.custom.nodes[3].name` inline, or the file and the
/// element in it.
struct At<'a> {
    file: Option<&'a str>,
}

impl At<'_> {
    fn path(&self, elem: &str) -> String {
        match self.file {
            None => format!("topology.custom.{elem}"),
            Some(f) => format!("topology.custom.file ({f}): {elem}"),
        }
    }
}

/// The custom topology of `spec`, read from its file (relative to `base_dir`) if it
/// names one, and checked; `None` if anything is wrong with it.
pub(super) fn custom_topology(
    spec: &CustomTopologySpec,
    base_dir: &Path,
    histogram: bool,
    c: &mut Checker,
) -> Option<CustomTopology> {
    let before = c.problems.len();
    let read;
    let (spec, at, source) = match &spec.file {
        Some(file) => {
            if !spec.nodes.is_empty() || !spec.links.is_empty() || !spec.tiers.is_empty() {
                c.err(
                    "topology.custom.file",
                    "give the topology either in a file or inline (`tiers`, `nodes`, \
                     `links`), not both"
                        .into(),
                );
                return None;
            }
            read = read_file(file, base_dir, c)?;
            (&read, At { file: Some(file) }, file.clone())
        }
        None => (spec, At { file: None }, "inline".to_string()),
    };
    let topo = resolve(spec, &at, source, histogram, c);
    (c.problems.len() == before).then_some(topo).flatten()
}

/// A topology file: this format (`.toml`, `.json`), GraphML (`.graphml`, `.xml`) or a
/// networkx node-link graph (`.json` with `directed` or `multigraph`).
fn read_file(file: &str, base_dir: &Path, c: &mut Checker) -> Option<CustomTopologySpec> {
    let path = base_dir.join(file);
    let field = "topology.custom.file";
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            c.err(
                field,
                format!("cannot read the topology file {}: {e}", path.display()),
            );
            return None;
        }
    };
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    let at = |elem: String| format!("{field} ({file}): {elem}");
    let spec = match ext.as_str() {
        "graphml" | "xml" => graphml(&text).map_err(|(p, m)| (at(p), m)),
        "json" => match serde_json::from_str::<serde_json::Value>(&text) {
            Err(e) => Err((
                at(format!("line {}", e.line())),
                format!("not valid JSON: {e}"),
            )),
            Ok(v) if is_node_link(&v) => node_link(&v).map_err(|(p, m)| (at(p), m)),
            Ok(_) => {
                let mut de = serde_json::Deserializer::from_str(&text);
                serde_path_to_error::deserialize::<_, CustomTopologySpec>(&mut de)
                    .map_err(|e| (at(e.path().to_string()), e.inner().to_string()))
            }
        },
        "toml" => {
            let de = toml::Deserializer::new(&text);
            serde_path_to_error::deserialize::<_, CustomTopologySpec>(de).map_err(|e| {
                let msg = e.inner().message().to_string();
                let path = e.path().to_string();
                let line = e
                    .inner()
                    .span()
                    .map(|s| format!(" (line {})", text[..s.start].matches('\n').count() + 1))
                    .unwrap_or_default();
                (at(path), format!("{msg}{line}"))
            })
        }
        _ => Err((
            field.to_string(),
            format!(
                "{file}: expected a .toml, .json or .graphml file (this format, a networkx \
                 node-link graph, or GraphML)"
            ),
        )),
    };
    match spec {
        Ok(s) if s.file.is_some() => {
            c.err(
                &at("file".into()),
                "a topology file cannot name another file".into(),
            );
            None
        }
        Ok(s) => Some(s),
        Err((p, m)) => {
            c.err(&p, m);
            None
        }
    }
}

/// Checks names, tiers, links and connectivity, and resolves the topology: hosts first.
fn resolve(
    spec: &CustomTopologySpec,
    at: &At,
    source: String,
    histogram: bool,
    c: &mut Checker,
) -> Option<CustomTopology> {
    let before = c.problems.len();
    if spec.nodes.len() > MAX_NODES {
        c.err(
            &at.path("nodes"),
            format!(
                "has {} nodes; at most {MAX_NODES} are supported",
                spec.nodes.len()
            ),
        );
        return None;
    }
    // Names.
    let mut index: HashMap<&str, usize> = HashMap::new();
    for (i, n) in spec.nodes.iter().enumerate() {
        if n.name.trim().is_empty() {
            c.err(
                &at.path(&format!("nodes[{i}].name")),
                "must not be empty".into(),
            );
        } else if let Some(&j) = index.get(n.name.as_str()) {
            c.err(
                &at.path(&format!("nodes[{i}].name")),
                format!("duplicate node name {:?} (nodes[{j}] has it)", n.name),
            );
        } else {
            index.insert(&n.name, i);
        }
    }
    // Tiers: as listed, or `host` then first appearance.
    let mut tiers: Vec<String> = spec.tiers.clone();
    let listed = !tiers.is_empty();
    if !listed {
        tiers.push("host".into());
        let named = spec
            .nodes
            .iter()
            .filter_map(|n| n.tier.as_ref())
            .chain(spec.links.iter().filter_map(|l| l.tier.as_ref()));
        for t in named {
            if !tiers.contains(t) {
                tiers.push(t.clone());
            }
        }
    }
    for (i, t) in tiers.iter().enumerate() {
        if t.trim().is_empty() || tiers[..i].contains(t) {
            c.err(
                &at.path(&format!("tiers[{i}]")),
                format!("tier names must be unique and not empty, got {t:?}"),
            );
        }
    }
    if tiers.len() > MAX_TIERS {
        c.err(
            &at.path("tiers"),
            format!(
                "has {} tiers; at most {MAX_TIERS} are supported",
                tiers.len()
            ),
        );
        return None;
    }
    let tier_of = |name: &str, path: String, c: &mut Checker| -> Option<u8> {
        let t = tiers.iter().position(|t| t == name);
        if t.is_none() {
            c.err(
                &path,
                format!("unknown tier {name:?} (the tiers: {})", tiers.join(", ")),
            );
        }
        t.map(|t| t as u8)
    };
    // Nodes' tiers.
    let mut node_tier = vec![None; spec.nodes.len()];
    for (i, n) in spec.nodes.iter().enumerate() {
        let Some(t) = &n.tier else { continue };
        let path = at.path(&format!("nodes[{i}].tier"));
        match n.kind {
            NodeKindSpec::Host => c.err(
                &path,
                format!(
                    "host {:?} has no tier of its own (its links are tier 0, {:?})",
                    n.name, tiers[0]
                ),
            ),
            NodeKindSpec::Switch => node_tier[i] = tier_of(t, path, c),
        }
    }
    // Links.
    let is_host = |i: usize| spec.nodes[i].kind == NodeKindSpec::Host;
    let mut links: Vec<(usize, usize, u8, u32, LinkOverride)> = Vec::new();
    for (i, l) in spec.links.iter().enumerate() {
        let p = |f: &str| at.path(&format!("links[{i}].{f}"));
        let end = |name: &str, f: &str, c: &mut Checker| {
            let n = index.get(name).copied();
            if n.is_none() {
                c.err(
                    &p(f),
                    format!("unknown node {name:?}: expected the name of a node in `nodes`"),
                );
            }
            n
        };
        let (a, b) = (end(&l.a, "a", c), end(&l.b, "b", c));
        let (Some(a), Some(b)) = (a, b) else { continue };
        let here = at.path(&format!("links[{i}]"));
        if a == b {
            c.err(&here, format!("joins node {:?} to itself", l.a));
            continue;
        }
        if is_host(a) && is_host(b) {
            c.err(
                &here,
                format!(
                    "joins two hosts ({:?}, {:?}): hosts connect through switches",
                    l.a, l.b
                ),
            );
            continue;
        }
        let host_link = is_host(a) || is_host(b);
        let tier = match &l.tier {
            Some(t) => {
                let t = tier_of(t, p("tier"), c);
                if host_link && t.is_some_and(|t| t != 0) {
                    c.err(
                        &p("tier"),
                        format!(
                            "a host's link is in tier 0 ({:?}), the hosts' tier, got {:?}",
                            tiers[0],
                            l.tier.as_deref().unwrap_or("")
                        ),
                    );
                }
                t
            }
            None if host_link => Some(0),
            None => match (node_tier[a], node_tier[b]) {
                (Some(x), Some(y)) => Some(x.min(y)),
                (Some(x), None) | (None, Some(x)) => Some(x),
                (None, None) => {
                    c.err(
                        &p("tier"),
                        format!(
                            "needed: neither switch ({:?}, {:?}) names its tier",
                            l.a, l.b
                        ),
                    );
                    None
                }
            },
        };
        let count = l.count.unwrap_or(1);
        c.at_least(&p("count"), count as u64, 1);
        c.at_most(&p("count"), count as u64, MAX_PARALLEL as u64);
        let own = link_override(l, &p, histogram, c);
        if let Some(tier) = tier {
            links.push((a, b, tier, count, own));
        }
    }
    if c.problems.len() != before {
        return None;
    }
    check_connected(spec, &links, at, c);
    if c.problems.len() != before {
        return None;
    }
    // Simulator order: hosts first, then switches, each in the order listed.
    let mut order: Vec<usize> = (0..spec.nodes.len()).filter(|&i| is_host(i)).collect();
    let n_hosts = order.len() as u32;
    order.extend((0..spec.nodes.len()).filter(|&i| !is_host(i)));
    let mut new_index = vec![0u32; spec.nodes.len()];
    for (new, &old) in order.iter().enumerate() {
        new_index[old] = new as u32;
    }
    let nodes = order
        .iter()
        .map(|&i| CustomNode {
            name: spec.nodes[i].name.clone(),
            host: is_host(i),
            tier: node_tier[i],
        })
        .collect();
    let mut out_links = Vec::new();
    for &(a, b, tier, count, own) in &links {
        for _ in 0..count {
            out_links.push(CustomLink {
                a: new_index[a],
                b: new_index[b],
                tier,
                own,
            });
        }
    }
    Some(CustomTopology {
        source,
        tiers: tiers.iter().map(|t| tier_name(t)).collect(),
        nodes,
        links: out_links,
        n_hosts,
    })
}

/// What link `l` sets for itself, checked.
fn link_override(
    l: &CustomLinkSpec,
    p: &dyn Fn(&str) -> String,
    histogram: bool,
    c: &mut Checker,
) -> LinkOverride {
    let mut own = LinkOverride::default();
    if let Some(r) = l.rate_gbps {
        c.rate_gbps(&p("rate_gbps"), r);
        if r.is_finite() && (1e-6..=1e5).contains(&r) {
            own.rate = Some(Rate::from_gbps(r));
        }
    }
    if let Some(d) = l.delay_us {
        c.non_negative(&p("delay_us"), d);
        c.time_us(&p("delay_us"), d);
        if d.is_finite() && (0.0..=MAX_TIME_US).contains(&d) {
            own.delay = Some(from_us(d));
        }
    }
    for (end, q) in [(0, &l.queue_a), (1, &l.queue_b)] {
        let Some(q) = q else { continue };
        let field = p(["queue_a", "queue_b"][end]);
        for (name, set) in [
            ("rwndq", q.rwndq.is_some()),
            ("red", q.red.is_some()),
            ("ecn_red", q.ecn_red.is_some()),
            ("trim", q.trim.is_some()),
            ("pfabric", q.pfabric),
        ] {
            if set {
                c.err(
                    &format!("{field}.{name}"),
                    "is set per tier (`network.tiers.NAME.queue`), not per link".into(),
                );
            }
        }
        own.queue[end] = Some(queue_config(q, &field, 100, histogram, c));
    }
    own
}

/// Every node has a link, and every host reaches every other through switches (hosts
/// do not relay).
fn check_connected(
    spec: &CustomTopologySpec,
    links: &[(usize, usize, u8, u32, LinkOverride)],
    at: &At,
    c: &mut Checker,
) {
    let n = spec.nodes.len();
    let mut degree = vec![0u32; n];
    // Components of the switches over switch–switch links (union–find).
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    let is_host = |i: usize| spec.nodes[i].kind == NodeKindSpec::Host;
    for &(a, b, ..) in links {
        degree[a] += 1;
        degree[b] += 1;
        if !is_host(a) && !is_host(b) {
            let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
            parent[ra] = rb;
        }
    }
    for (i, node) in spec.nodes.iter().enumerate() {
        if degree[i] == 0 {
            let what = if is_host(i) { "host" } else { "switch" };
            c.err(
                &at.path(&format!("nodes[{i}]")),
                format!("{what} {:?} has no link", node.name),
            );
        }
    }
    let hosts: Vec<usize> = (0..n).filter(|&i| is_host(i)).collect();
    if hosts.len() < 2 || !c.problems.is_empty() {
        return;
    }
    // Each host's switch components; two hosts reach each other when they share one.
    let mut reach: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(a, b, ..) in links {
        for (h, s) in [(a, b), (b, a)] {
            if is_host(h) {
                let r = root(&mut parent, s);
                if !reach[h].contains(&r) {
                    reach[h].push(r);
                }
            }
        }
    }
    let mut groups: Vec<(Vec<usize>, usize)> = Vec::new();
    for &h in &hosts {
        reach[h].sort_unstable();
        if !groups.iter().any(|(g, _)| *g == reach[h]) {
            groups.push((reach[h].clone(), h));
        }
    }
    for (i, (g, h)) in groups.iter().enumerate() {
        for (g2, h2) in &groups[..i] {
            if !g.iter().any(|r| g2.contains(r)) {
                c.err(
                    &at.path(&format!("nodes[{h}]")),
                    format!(
                        "host {:?} cannot reach host {:?}: the topology is disconnected \
                         (hosts do not relay; every pair of hosts needs a path through \
                         switches)",
                        spec.nodes[*h].name, spec.nodes[*h2].name
                    ),
                );
                return;
            }
        }
    }
}

/// Any topology in the custom format: its tiers, nodes (hosts first, in the simulator's
/// order) and links (in the order that numbers the ports), so `[topology.custom]` with
/// it builds the same network, port for port. BCube is refused: its hosts relay along
/// source routes, which the format does not describe.
pub fn export(topo: &Topology) -> Result<CustomTopologySpec, String> {
    if topo.kind.bcube().is_some() {
        return Err(
            "BCube's hosts relay along BCube's source routes, which a custom topology \
             does not describe; it cannot be exported"
                .into(),
        );
    }
    let nodes = topo
        .roles
        .iter()
        .enumerate()
        .map(|(i, r)| CustomNodeSpec {
            name: topo.names[i].clone(),
            kind: match r {
                NodeRole::Host => NodeKindSpec::Host,
                NodeRole::Switch => NodeKindSpec::Switch,
            },
            tier: topo
                .node_tiers
                .get(i)
                .copied()
                .flatten()
                .map(|t| topo.tiers[t as usize].to_string()),
        })
        .collect();
    let links = topo
        .links
        .iter()
        .enumerate()
        .map(|(i, &(a, b, t))| {
            let own = topo.overrides.get(i).copied().unwrap_or_default();
            CustomLinkSpec {
                a: topo.names[a as usize].clone(),
                b: topo.names[b as usize].clone(),
                tier: Some(topo.tiers[t as usize].to_string()),
                count: None,
                rate_gbps: own.rate.map(|r| r.bits_per_sec() as f64 / 1e9),
                delay_us: own.delay.map(|d| d as f64 / 1e6),
                queue_a: own.queue[0].map(queue_spec),
                queue_b: own.queue[1].map(queue_spec),
            }
        })
        .collect();
    Ok(CustomTopologySpec {
        file: None,
        tiers: topo.tiers.iter().map(|t| t.to_string()).collect(),
        nodes,
        links,
    })
}

/// A link's own queue as the scenario writes it (`queue_a`, `queue_b`), so reading it
/// back gives the same `QueueConfig`. Every field of both is named: a new queue setting
/// does not compile until the export decides how to write it.
fn queue_spec(q: QueueConfig) -> QueueSpec {
    let QueueConfig {
        limit_packets,
        limit_bytes,
        ecn_k_packets,
        ecn_k_bytes,
        mark_at,
        priority,
        priority_levels,
        // Not a link's setting: `output.queue_histogram` gives every queue one when the
        // file is read back (`custom_topology`'s `histogram`).
        histogram: _,
        pfabric,
    } = q;
    // `u64::MAX` stands for a limit or threshold not given.
    let given = |v: u64| (v != u64::MAX).then_some(v);
    QueueSpec {
        limit_packets: given(limit_packets),
        limit_bytes: given(limit_bytes),
        ecn_k_packets: given(ecn_k_packets),
        ecn_k_bytes: given(ecn_k_bytes),
        ecn_mark: match mark_at {
            MarkAt::Enqueue => MarkAtSpec::Enqueue,
            MarkAt::Dequeue => MarkAtSpec::Dequeue,
        },
        priority,
        priority_levels: (priority_levels > 0).then_some(priority_levels),
        // RWNDQ, RED, RED-style marking and trimming are set per tier
        // (`network.tiers.NAME.queue`, which the scenario keeps), never per link
        // (`link_override` refuses them), so a link's own queue has none of them.
        rwndq: None,
        red: None,
        ecn_red: None,
        trim: None,
        // Also per tier only (`link_override` refuses it per link), so false here; were
        // a link's queue to have it, the file says so rather than losing it.
        pfabric,
    }
}

/// What a custom topology's features cannot run with: hosts with several NICs under the
/// transports whose per-host state sits at one NIC (NDP's pull pacer, Homa's agents), and
/// per-link queues at the flow level, which models queues per tier.
pub(super) fn check_custom(
    s: &super::schema::Scenario,
    topo: &Topology,
    level: super::Level,
    transports: &[super::TransportPlan],
    c: &mut Checker,
) {
    if !matches!(topo.kind, crate::net::TopologyKind::Custom(_)) {
        return;
    }
    let mut nics = vec![0u32; topo.n_hosts as usize];
    for &(a, b, _) in &topo.links {
        for n in [a, b] {
            if n < topo.n_hosts {
                nics[n as usize] += 1;
            }
        }
    }
    if let Some(h) = nics.iter().position(|&n| n > 1) {
        for (i, t) in s.traffic.iter().enumerate() {
            let Some(p) = transports.iter().find(|p| p.name == t.transport) else {
                continue;
            };
            if p.ndp.is_some() || p.homa.is_some() {
                c.err(
                    &format!("traffic[{i}].transport"),
                    format!(
                        "{:?} keeps its per-host state at one NIC; host {:?} of this \
                         topology has {} (NDP and Homa need hosts with one link)",
                        t.transport, topo.names[h], nics[h]
                    ),
                );
            }
        }
    }
    let own_queues = topo
        .overrides
        .iter()
        .any(|o| o.queue.iter().any(|q| q.is_some()));
    if level == super::Level::Flow && own_queues {
        c.err(
            "topology.custom",
            "per-link queues (`queue_a`, `queue_b`) are not modelled at the flow level \
             (level = \"flow\"), which takes queues per tier"
                .into(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::plan::{parse, Plan};
    use crate::scenario::schema::TopologySpec;

    /// Two hosts on a switch, each link with queues of its own at both ends that set
    /// every queue setting a link may set.
    const OWN_QUEUES: &str = r#"
        duration_ms = 1
        [output]
        queue_histogram = true
        [topology.custom]
        nodes = [
            { name = "h0", kind = "host" },
            { name = "h1", kind = "host" },
            { name = "s", kind = "switch" },
        ]
        [[topology.custom.links]]
        a = "h0"
        b = "s"
        rate_gbps = 25
        delay_us = 0.5
        queue_a = { limit_bytes = 90000, ecn_k_bytes = 30000, ecn_mark = "dequeue" }
        queue_b = { limit_packets = 40, priority_levels = 4 }
        [[topology.custom.links]]
        a = "s"
        b = "h1"
        count = 2
        queue_a = { limit_packets = 60, limit_bytes = 80000, ecn_k_packets = 12, priority = true }
        queue_b = { ecn_k_packets = 7 }
        [[traffic]]
        pattern = "pair"
        src = 0
        dst = 1
        size = { fixed = 10000 }
    "#;

    /// A custom topology with per-link rates, delays and queues, exported and read back,
    /// gives the same topology: every link with the same settings of its own.
    #[test]
    fn export_keeps_every_setting_of_a_links_own_queues() {
        let dir = Path::new(".");
        let scenario = parse(OWN_QUEUES).unwrap();
        let plan = Plan::from_scenario(&scenario, dir).unwrap();
        let exported = toml::to_string(&export(&plan.topology).unwrap()).unwrap();
        let mut again = scenario.clone();
        again.topology = TopologySpec::Custom(toml::from_str(&exported).unwrap());
        let replan = Plan::from_scenario(&again, dir).unwrap();
        let queues = |p: &Plan| {
            p.topology
                .overrides
                .iter()
                .map(|o| o.queue)
                .collect::<Vec<_>>()
        };
        assert!(queues(&plan)
            .iter()
            .flatten()
            .all(|q| q.is_some_and(|q| q.histogram)));
        assert_eq!(queues(&plan)[0][0].unwrap().mark_at, MarkAt::Dequeue);
        assert_eq!(queues(&plan)[0][1].unwrap().priority_levels, 4);
        assert_eq!(plan.topology.overrides, replan.topology.overrides);
        assert_eq!(plan.topology.links, replan.topology.links);
        assert_eq!(plan.topology.names, replan.topology.names);
    }
}
