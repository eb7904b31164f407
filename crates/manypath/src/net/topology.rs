//! Topology builders. A topology is a graph of hosts and switches whose links belong to
//! named tiers; the scenario gives each tier its rate, delay and queue.
//!
//! Hosts always come first, so host `i` is node `i`.

use super::custom::{CustomTopology, LinkOverride};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The topology, e.g. `[topology.fat_tree]` with `k = 8`.
//
// One enum for the scenario and the simulator: a scenario names a kind and its size
// (`TopologySpec` is this enum with the custom topology as the scenario gives it); the
// simulator builds the same kind with the custom topology resolved (`CustomTopology`,
// the default `C`). The doc comments are the JSON schema's descriptions; notes for the
// builder are plain comments.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
#[schemars(rename = "TopologySpec")]
pub enum TopologyKind<C = Box<CustomTopology>> {
    /// N senders and one receiver (host 0) on one switch. Tier: `host`.
    // Host 0 is the receiver, hosts 1..=senders the senders.
    Star { senders: u32 },
    /// `pairs` hosts on each side of a bottleneck link. Tiers: `host`, `bottleneck`.
    // Two switches: hosts 0..pairs on the left, pairs..2·pairs on the right.
    Dumbbell { pairs: u32 },
    /// Leaves each joined to every spine. Tiers: `host`, `fabric`.
    LeafSpine {
        leaves: u32,
        spines: u32,
        hosts_per_leaf: u32,
    },
    /// The k-ary fat tree (k even). Tiers: `host`, `edge_agg`, `agg_core`.
    // k pods of k/2 edge and k/2 aggregation switches, (k/2)² cores.
    FatTree {
        k: u32,
        /// Hosts per edge switch = k/2 × oversubscription.
        #[serde(default = "one")]
        oversubscription: u32,
    },
    /// Two racks whose top-of-rack switches are joined by parallel links (the FUSO
    /// testbed: 3 hosts per rack, 3 paths). Tiers: `host`, `path`.
    // The ToR switches are `tor0` and `tor1`; hosts 0..hosts_per_rack are in rack 0.
    FusoTestbed {
        #[serde(default = "three")]
        hosts_per_rack: u32,
        #[serde(default = "three")]
        paths: u32,
    },
    /// A three-tier Clos: pods of ToR and aggregation switches (each ToR joined to every
    /// aggregation switch of its pod) under spines split into one plane per aggregation
    /// switch (the FUSO simulation fabric: 4 pods of 2 + 2, 4 spines, 8 hosts per ToR).
    /// Tiers: `host`, `tor_agg`, `agg_spine`.
    // Aggregation switch a of every pod is joined to the `spines / aggs_per_pod` spines
    // of plane a (in the FUSO fabric, aggregation and spine switches have 4 fabric
    // ports, a ToR 2).
    FusoFabric {
        #[serde(default = "four")]
        pods: u32,
        #[serde(default = "four")]
        spines: u32,
        #[serde(default = "two")]
        aggs_per_pod: u32,
        #[serde(default = "two")]
        tors_per_pod: u32,
        #[serde(default = "eight")]
        hosts_per_tor: u32,
    },
    /// VL2: ToRs dual-homed to aggregation switch pairs, aggregation switches joined to
    /// every intermediate switch. Tiers: `host`, `tor_agg`, `agg_int`.
    // Each aggregation pair serves `intermediate` ToRs, so an aggregation switch has as
    // many ToR ports as intermediate ones.
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
    /// levels; hosts relay traffic along source routes. Tiers: `level0` … `level<k>`.
    // At level l, n^k switches join the hosts whose addresses differ only in base-n
    // digit l; switches connect only hosts.
    #[serde(rename = "bcube")]
    BCube { n: u32, k: u32 },
    /// A topology given as data: its nodes and links inline, or a `file` holding them
    /// (this format as TOML or JSON, GraphML, or a networkx node-link JSON). Hosts are
    /// numbered in the order they are listed; tiers are the links' (`[network.tiers.NAME]`
    /// sets them); routing is shortest-path ECMP as on the built-in fabrics.
    // Resolved (`net::custom`): its hosts, switches and links as listed, hosts first.
    Custom(C),
}

/// Every topology kind by the name a scenario gives it (`[topology.NAME]`), in the
/// order of `TopologyKind`'s variants: the topology table, checked against the JSON
/// schema.
pub const TOPOLOGY_NAMES: [&str; 9] = [
    "star",
    "dumbbell",
    "leaf_spine",
    "fat_tree",
    "fuso_testbed",
    "fuso_fabric",
    "vl2",
    "bcube",
    "custom",
];

fn one() -> u32 {
    1
}
fn two() -> u32 {
    2
}
fn three() -> u32 {
    3
}
fn four() -> u32 {
    4
}
fn eight() -> u32 {
    8
}
fn twenty() -> u32 {
    20
}

/// BCube's tier names; the level is the tier index.
pub const BCUBE_LEVELS: [&str; 8] = [
    "level0", "level1", "level2", "level3", "level4", "level5", "level6", "level7",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeRole {
    Host,
    Switch,
}

#[derive(Clone, Debug)]
pub struct Topology {
    pub kind: TopologyKind,
    pub roles: Vec<NodeRole>,
    /// Undirected links: (node a, node b, tier index into `tiers`).
    pub links: Vec<(u32, u32, u8)>,
    pub n_hosts: u32,
    pub tiers: Vec<&'static str>,
    /// A readable name per node, for the queue table.
    pub names: Vec<String>,
    /// Per link, what it sets for itself (rate, delay, queues); empty when every link
    /// takes its tier's settings (the generators').
    pub overrides: Vec<LinkOverride>,
    /// Per node, a switch tier the topology names; empty when the links decide.
    pub node_tiers: Vec<Option<u8>>,
}

impl Topology {
    /// Each node's switch tier (`None` for hosts): the lowest tier among its links, that
    /// of its links towards the hosts. The switches of a tier share its settings that are
    /// a switch's, not a port's (`network.tiers.NAME.buffer`).
    pub fn switch_tiers(&self) -> Vec<Option<u8>> {
        let mut tier = vec![None; self.roles.len()];
        for (n, &t) in self.node_tiers.iter().enumerate() {
            tier[n] = t;
        }
        for &(a, b, t) in &self.links {
            for n in [a, b] {
                if self.roles[n as usize] == NodeRole::Switch {
                    let s: &mut Option<u8> = &mut tier[n as usize];
                    *s = Some(s.map_or(t, |s| s.min(t)));
                }
            }
        }
        tier
    }
}

impl fmt::Display for TopologyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TopologyKind::Star { senders } => write!(f, "star with {senders} senders"),
            TopologyKind::Dumbbell { pairs } => write!(f, "dumbbell with {pairs} pairs"),
            TopologyKind::LeafSpine {
                leaves,
                spines,
                hosts_per_leaf,
            } => {
                write!(
                    f,
                    "leaf-spine {leaves}x{spines}, {hosts_per_leaf} hosts per leaf"
                )
            }
            TopologyKind::FatTree {
                k,
                oversubscription,
            } => {
                write!(f, "k={k} fat tree, {oversubscription}:1 oversubscription")
            }
            TopologyKind::FusoTestbed {
                hosts_per_rack,
                paths,
            } => write!(
                f,
                "two racks of {hosts_per_rack} hosts joined by {paths} parallel links"
            ),
            TopologyKind::FusoFabric {
                pods,
                spines,
                aggs_per_pod,
                tors_per_pod,
                hosts_per_tor,
            } => write!(
                f,
                "{pods} pods of {tors_per_pod} ToR + {aggs_per_pod} aggregation switches, \
                 {spines} spines, {hosts_per_tor} hosts per ToR"
            ),
            TopologyKind::Vl2 {
                aggregation,
                intermediate,
                hosts_per_tor,
            } => write!(
                f,
                "VL2 with {aggregation} aggregation and {intermediate} intermediate switches, {hosts_per_tor} hosts per ToR"
            ),
            TopologyKind::BCube { n, k } => write!(f, "BCube({n}, {k})"),
            TopologyKind::Custom(c) => write!(
                f,
                "custom topology ({}): {} hosts, {} switches, {} links",
                c.source,
                c.n_hosts,
                c.nodes.len() as u32 - c.n_hosts,
                c.links.len()
            ),
        }
    }
}

impl<C> TopologyKind<C> {
    /// The kind's name in a scenario (`[topology.NAME]`), its row of `TOPOLOGY_NAMES`.
    pub fn name(&self) -> &'static str {
        let row = match self {
            TopologyKind::Star { .. } => 0,
            TopologyKind::Dumbbell { .. } => 1,
            TopologyKind::LeafSpine { .. } => 2,
            TopologyKind::FatTree { .. } => 3,
            TopologyKind::FusoTestbed { .. } => 4,
            TopologyKind::FusoFabric { .. } => 5,
            TopologyKind::Vl2 { .. } => 6,
            TopologyKind::BCube { .. } => 7,
            TopologyKind::Custom(_) => 8,
        };
        TOPOLOGY_NAMES[row]
    }

    /// BCube's (n, k) if the hosts relay along BCube's path set (`net::bcube`: every
    /// connection is pinned to its paths); `None` for the switched fabrics, whose
    /// switches route by ECMP.
    pub fn bcube(&self) -> Option<(u32, u32)> {
        match *self {
            TopologyKind::BCube { n, k } => Some((n, k)),
            TopologyKind::Star { .. }
            | TopologyKind::Dumbbell { .. }
            | TopologyKind::LeafSpine { .. }
            | TopologyKind::FatTree { .. }
            | TopologyKind::FusoTestbed { .. }
            | TopologyKind::FusoFabric { .. }
            | TopologyKind::Vl2 { .. }
            | TopologyKind::Custom(_) => None,
        }
    }

    /// The same kind with its custom topology replaced by `resolve`'s (`None` if it
    /// gives none); a generator's kind and size carry over as they are. This is where a
    /// scenario's kind becomes the simulator's.
    pub fn resolve_custom<D>(
        &self,
        resolve: impl FnOnce(&C) -> Option<D>,
    ) -> Option<TopologyKind<D>> {
        Some(match *self {
            TopologyKind::Star { senders } => TopologyKind::Star { senders },
            TopologyKind::Dumbbell { pairs } => TopologyKind::Dumbbell { pairs },
            TopologyKind::LeafSpine {
                leaves,
                spines,
                hosts_per_leaf,
            } => TopologyKind::LeafSpine {
                leaves,
                spines,
                hosts_per_leaf,
            },
            TopologyKind::FatTree {
                k,
                oversubscription,
            } => TopologyKind::FatTree {
                k,
                oversubscription,
            },
            TopologyKind::FusoTestbed {
                hosts_per_rack,
                paths,
            } => TopologyKind::FusoTestbed {
                hosts_per_rack,
                paths,
            },
            TopologyKind::FusoFabric {
                pods,
                spines,
                aggs_per_pod,
                tors_per_pod,
                hosts_per_tor,
            } => TopologyKind::FusoFabric {
                pods,
                spines,
                aggs_per_pod,
                tors_per_pod,
                hosts_per_tor,
            },
            TopologyKind::Vl2 {
                aggregation,
                intermediate,
                hosts_per_tor,
            } => TopologyKind::Vl2 {
                aggregation,
                intermediate,
                hosts_per_tor,
            },
            TopologyKind::BCube { n, k } => TopologyKind::BCube { n, k },
            TopologyKind::Custom(ref c) => TopologyKind::Custom(resolve(c)?),
        })
    }
}

impl TopologyKind {
    pub fn tiers(&self) -> Vec<&'static str> {
        match self {
            TopologyKind::Star { .. } => vec!["host"],
            TopologyKind::Dumbbell { .. } => vec!["host", "bottleneck"],
            TopologyKind::LeafSpine { .. } => vec!["host", "fabric"],
            TopologyKind::FatTree { .. } => vec!["host", "edge_agg", "agg_core"],
            TopologyKind::FusoTestbed { .. } => vec!["host", "path"],
            TopologyKind::FusoFabric { .. } => vec!["host", "tor_agg", "agg_spine"],
            TopologyKind::Vl2 { .. } => vec!["host", "tor_agg", "agg_int"],
            TopologyKind::BCube { k, .. } => BCUBE_LEVELS[..=*k as usize].to_vec(),
            TopologyKind::Custom(c) => c.tiers.clone(),
        }
    }

    pub fn n_hosts(&self) -> u32 {
        match *self {
            TopologyKind::Star { senders } => senders + 1,
            TopologyKind::Dumbbell { pairs } => 2 * pairs,
            TopologyKind::LeafSpine {
                leaves,
                hosts_per_leaf,
                ..
            } => leaves * hosts_per_leaf,
            TopologyKind::FatTree {
                k,
                oversubscription,
            } => k * (k / 2) * (k / 2) * oversubscription,
            TopologyKind::FusoTestbed { hosts_per_rack, .. } => 2 * hosts_per_rack,
            TopologyKind::FusoFabric {
                pods,
                tors_per_pod,
                hosts_per_tor,
                ..
            } => pods * tors_per_pod * hosts_per_tor,
            TopologyKind::Vl2 {
                aggregation,
                intermediate,
                hosts_per_tor,
            } => aggregation / 2 * intermediate * hosts_per_tor,
            TopologyKind::BCube { n, k } => n.pow(k + 1),
            TopologyKind::Custom(ref c) => c.n_hosts,
        }
    }

    pub fn build(&self) -> Topology {
        let mut t = Builder::new(self.n_hosts());
        let mut overrides = Vec::new();
        let mut node_tiers = Vec::new();
        match *self {
            TopologyKind::Star { senders } => {
                let sw = t.switch("switch".into());
                for h in 0..=senders {
                    t.link(h, sw, 0);
                }
            }
            TopologyKind::Dumbbell { pairs } => {
                let l = t.switch("left".into());
                let r = t.switch("right".into());
                for h in 0..pairs {
                    t.link(h, l, 0);
                    t.link(pairs + h, r, 0);
                }
                t.link(l, r, 1);
            }
            TopologyKind::LeafSpine {
                leaves,
                spines,
                hosts_per_leaf,
            } => {
                let leaf0 = t.next_id();
                for i in 0..leaves {
                    t.switch(format!("leaf{i}"));
                }
                let spine0 = t.next_id();
                for i in 0..spines {
                    t.switch(format!("spine{i}"));
                }
                for h in 0..leaves * hosts_per_leaf {
                    t.link(h, leaf0 + h / hosts_per_leaf, 0);
                }
                for l in 0..leaves {
                    for s in 0..spines {
                        t.link(leaf0 + l, spine0 + s, 1);
                    }
                }
            }
            TopologyKind::FatTree {
                k,
                oversubscription,
            } => {
                let half = k / 2;
                t.clos(
                    Clos {
                        pods: k,
                        lower_per_pod: half,
                        upper_per_pod: half,
                        top: half * half,
                        hosts_per_lower: half * oversubscription,
                    },
                    ["edge", "agg", "core"],
                );
            }
            TopologyKind::FusoTestbed {
                hosts_per_rack,
                paths,
            } => {
                let tor0 = t.switch("tor0".into());
                let tor1 = t.switch("tor1".into());
                for h in 0..2 * hosts_per_rack {
                    t.link(h, if h < hosts_per_rack { tor0 } else { tor1 }, 0);
                }
                for _ in 0..paths {
                    t.link(tor0, tor1, 1);
                }
            }
            TopologyKind::FusoFabric {
                pods,
                spines,
                aggs_per_pod,
                tors_per_pod,
                hosts_per_tor,
            } => t.clos(
                Clos {
                    pods,
                    lower_per_pod: tors_per_pod,
                    upper_per_pod: aggs_per_pod,
                    top: spines,
                    hosts_per_lower: hosts_per_tor,
                },
                ["tor", "agg", "spine"],
            ),
            TopologyKind::Vl2 {
                aggregation,
                intermediate,
                hosts_per_tor,
            } => {
                let tors = aggregation / 2 * intermediate;
                let tor0 = t.next_id();
                for i in 0..tors {
                    t.switch(format!("tor{i}"));
                }
                let agg0 = t.next_id();
                for i in 0..aggregation {
                    t.switch(format!("agg{i}"));
                }
                let int0 = t.next_id();
                for i in 0..intermediate {
                    t.switch(format!("int{i}"));
                }
                for h in 0..t.n_hosts {
                    t.link(h, tor0 + h / hosts_per_tor, 0);
                }
                for tor in 0..tors {
                    let pair = tor / intermediate;
                    t.link(tor0 + tor, agg0 + 2 * pair, 1);
                    t.link(tor0 + tor, agg0 + 2 * pair + 1, 1);
                }
                for a in 0..aggregation {
                    for i in 0..intermediate {
                        t.link(agg0 + a, int0 + i, 2);
                    }
                }
            }
            TopologyKind::BCube { n, k } => {
                let per_level = n.pow(k);
                let sw0 = t.next_id();
                for l in 0..=k {
                    for s in 0..per_level {
                        t.switch(format!("bcube{l}.{s}"));
                    }
                }
                // Links level by level, so host h's port l is its level-l interface.
                for l in 0..=k {
                    for h in 0..t.n_hosts {
                        t.link(h, sw0 + l * per_level + bcube_switch(n, l, h), l as u8);
                    }
                }
            }
            TopologyKind::Custom(ref c) => {
                for (i, node) in c.nodes.iter().enumerate() {
                    if node.host {
                        t.names[i] = node.name.clone();
                    } else {
                        t.switch(node.name.clone());
                    }
                }
                for l in &c.links {
                    t.link(l.a, l.b, l.tier);
                }
                if c.links.iter().any(|l| !l.own.is_empty()) {
                    overrides = c.links.iter().map(|l| l.own).collect();
                }
                if c.nodes.iter().any(|n| n.tier.is_some()) {
                    node_tiers = c.nodes.iter().map(|n| n.tier).collect();
                }
            }
        }
        Topology {
            kind: self.clone(),
            roles: t.roles,
            links: t.links,
            n_hosts: t.n_hosts,
            tiers: self.tiers(),
            names: t.names,
            overrides,
            node_tiers,
        }
    }
}

/// The index, within its level, of the level-`l` switch of BCube host `h`: the host's
/// address with base-`n` digit `l` removed.
pub fn bcube_switch(n: u32, l: u32, h: u32) -> u32 {
    let low = n.pow(l);
    h / (low * n) * low + h % low
}

struct Builder {
    roles: Vec<NodeRole>,
    names: Vec<String>,
    links: Vec<(u32, u32, u8)>,
    n_hosts: u32,
}

impl Builder {
    fn new(n_hosts: u32) -> Builder {
        Builder {
            roles: vec![NodeRole::Host; n_hosts as usize],
            names: (0..n_hosts).map(|h| format!("host{h}")).collect(),
            links: Vec::new(),
            n_hosts,
        }
    }
    fn next_id(&self) -> u32 {
        self.roles.len() as u32
    }
    fn switch(&mut self, name: String) -> u32 {
        self.roles.push(NodeRole::Switch);
        self.names.push(name);
        self.roles.len() as u32 - 1
    }
    fn link(&mut self, a: u32, b: u32, tier: u8) {
        self.links.push((a, b, tier));
    }

    /// A three-tier Clos over the hosts (tiers 0, 1, 2): pods of lower and upper
    /// switches, every lower switch joined to every upper switch of its pod, and the top
    /// switches split into one plane per upper index, upper switch a of every pod joined
    /// to each switch of plane a. Switches are named `<lower>{pod}.{i}`,
    /// `<upper>{pod}.{i}`, `<top>{i}` and numbered in that order.
    fn clos(&mut self, c: Clos, names: [&str; 3]) {
        let lower0 = self.next_id();
        for p in 0..c.pods {
            for i in 0..c.lower_per_pod {
                self.switch(format!("{}{p}.{i}", names[0]));
            }
        }
        let upper0 = self.next_id();
        for p in 0..c.pods {
            for a in 0..c.upper_per_pod {
                self.switch(format!("{}{p}.{a}", names[1]));
            }
        }
        let top0 = self.next_id();
        for s in 0..c.top {
            self.switch(format!("{}{s}", names[2]));
        }
        for h in 0..self.n_hosts {
            self.link(h, lower0 + h / c.hosts_per_lower, 0);
        }
        let per_plane = c.top / c.upper_per_pod;
        for p in 0..c.pods {
            for i in 0..c.lower_per_pod {
                for a in 0..c.upper_per_pod {
                    self.link(
                        lower0 + p * c.lower_per_pod + i,
                        upper0 + p * c.upper_per_pod + a,
                        1,
                    );
                }
            }
            for a in 0..c.upper_per_pod {
                for s in 0..per_plane {
                    self.link(
                        upper0 + p * c.upper_per_pod + a,
                        top0 + a * per_plane + s,
                        2,
                    );
                }
            }
        }
    }
}

/// The sizes of a three-tier Clos (`Builder::clos`).
struct Clos {
    pods: u32,
    lower_per_pod: u32,
    upper_per_pod: u32,
    top: u32,
    hosts_per_lower: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fat_tree_sizes() {
        let t = TopologyKind::FatTree {
            k: 4,
            oversubscription: 1,
        }
        .build();
        assert_eq!(t.n_hosts, 16);
        assert_eq!(t.roles.len(), 16 + 8 + 8 + 4);
        assert_eq!(t.links.len(), 16 + 16 + 16);
        let t = TopologyKind::FatTree {
            k: 8,
            oversubscription: 4,
        }
        .build();
        assert_eq!(t.n_hosts, 512);
    }

    #[test]
    fn fuso_topologies() {
        let t = TopologyKind::FusoTestbed {
            hosts_per_rack: 3,
            paths: 3,
        }
        .build();
        assert_eq!(t.n_hosts, 6);
        assert_eq!(t.links.iter().filter(|l| l.2 == 1).count(), 3);
        let t = TopologyKind::FusoFabric {
            pods: 4,
            spines: 4,
            aggs_per_pod: 2,
            tors_per_pod: 2,
            hosts_per_tor: 8,
        }
        .build();
        assert_eq!(t.n_hosts, 64);
        assert_eq!(t.roles.len(), 64 + 20, "20 switches");
        // Aggregation and spine switches have 4 fabric ports; a ToR has 2 (2 × 40 Gbps
        // up for 8 × 10 Gbps down: no oversubscription).
        let mut fabric_ports = vec![0; t.roles.len()];
        for &(a, b, tier) in &t.links {
            if tier > 0 {
                fabric_ports[a as usize] += 1;
                fabric_ports[b as usize] += 1;
            }
        }
        assert!(fabric_ports[64..72].iter().all(|&n| n == 2));
        assert!(fabric_ports[72..].iter().all(|&n| n == 4));
    }

    #[test]
    fn vl2_is_dual_homed_with_full_bisection_ports() {
        let t = TopologyKind::Vl2 {
            aggregation: 4,
            intermediate: 3,
            hosts_per_tor: 20,
        }
        .build();
        // 2 aggregation pairs × 3 ToRs each, 20 hosts per ToR.
        assert_eq!(t.n_hosts, 120);
        assert_eq!(t.roles.len(), 120 + 6 + 4 + 3);
        let degree = |node: u32, tier: u8| {
            t.links
                .iter()
                .filter(|l| l.2 == tier && (l.0 == node || l.1 == node))
                .count()
        };
        for tor in 120..126 {
            assert_eq!(degree(tor, 1), 2, "each ToR has two aggregation uplinks");
        }
        for agg in 126..130 {
            assert_eq!(degree(agg, 1), 3, "as many ToR ports as intermediate ones");
            assert_eq!(degree(agg, 2), 3);
        }
    }

    #[test]
    fn bcube_hosts_have_one_link_per_level() {
        let t = TopologyKind::BCube { n: 4, k: 1 }.build();
        assert_eq!(t.n_hosts, 16);
        assert_eq!(t.roles.len(), 16 + 8);
        assert_eq!(t.links.len(), 32);
        assert_eq!(t.tiers, vec!["level0", "level1"]);
        // Level 0 joins hosts differing in the last digit, level 1 in the first.
        assert_eq!(bcube_switch(4, 0, 5), bcube_switch(4, 0, 7));
        assert_ne!(bcube_switch(4, 0, 5), bcube_switch(4, 0, 9));
        assert_eq!(bcube_switch(4, 1, 5), bcube_switch(4, 1, 13));
        for h in 0..16 {
            let levels: Vec<u8> = t.links.iter().filter(|l| l.0 == h).map(|l| l.2).collect();
            assert_eq!(levels, vec![0, 1]);
        }
    }

    /// A switch's tier is that of its links towards the hosts: each level of a fat tree
    /// is a tier of its own; both switches of a dumbbell are `host`'s.
    #[test]
    fn switch_tiers_are_the_tiers_towards_the_hosts() {
        let count = |t: &Topology, tier: u8| {
            t.switch_tiers()
                .iter()
                .filter(|&&s| s == Some(tier))
                .count()
        };
        let t = TopologyKind::FatTree {
            k: 4,
            oversubscription: 1,
        }
        .build();
        assert!(t.switch_tiers()[..16].iter().all(|s| s.is_none()), "hosts");
        assert_eq!((count(&t, 0), count(&t, 1), count(&t, 2)), (8, 8, 4));
        let t = TopologyKind::Dumbbell { pairs: 2 }.build();
        assert_eq!((count(&t, 0), count(&t, 1)), (2, 0));
    }

    #[test]
    fn star_and_dumbbell() {
        let t = TopologyKind::Star { senders: 5 }.build();
        assert_eq!(t.n_hosts, 6);
        assert_eq!(t.links.len(), 6);
        let t = TopologyKind::Dumbbell { pairs: 3 }.build();
        assert_eq!(t.links.iter().filter(|l| l.2 == 1).count(), 1);
    }
}
