//! A scenario's topology and links: the topology's kind and size, each tier's rate,
//! delay and queue (`LinkParams`), the host NICs, and the equal-cost paths traffic may
//! be pinned to.

use super::checker::{Checker, MAX_TIME_US};
use super::custom::custom_topology;
use super::queues::queue_config;
use super::schema::{Scenario, TopologySpec};
use crate::net::network::{LinkParams, LoadBalancing, Network};
use crate::net::queue::QueueConfig;
use crate::net::topology::{Topology, TopologyKind};
use crate::time::{from_us, Rate, SimTime};
use std::path::Path;

/// The largest VL2 or BCube a scenario may describe.
const MAX_HOSTS: u64 = 1 << 22;

/// The topology's kind and size, checked; `None` if anything is wrong with it. A custom
/// topology's file is read relative to `base_dir`; `histogram`: its own queues keep one.
pub(super) fn topology_kind(
    t: &TopologySpec,
    base_dir: &Path,
    histogram: bool,
    c: &mut Checker,
) -> Option<TopologyKind> {
    let before = c.problems.len();
    match *t {
        TopologySpec::Star { senders } => {
            c.at_least("topology.star.senders", senders as u64, 1);
        }
        TopologySpec::Dumbbell { pairs } => {
            c.at_least("topology.dumbbell.pairs", pairs as u64, 1);
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
        }
        TopologySpec::BCube { n, k } => {
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
        }
        // Checked as it is resolved, below.
        TopologySpec::Custom(_) => {}
    }
    let kind =
        t.resolve_custom(|spec| custom_topology(spec, base_dir, histogram, c).map(Box::new))?;
    if c.problems.len() == before && kind.n_hosts() < 2 {
        c.err("topology", "needs at least two hosts".into());
    }
    (c.problems.len() == before).then_some(kind)
}

/// The links of every tier and the hosts' NICs.
pub(super) struct Links {
    pub(super) tier_params: Vec<LinkParams>,
    pub(super) host_queue: QueueConfig,
    /// Width of the uniform send jitter at the hosts' interfaces (0: off).
    pub(super) host_jitter: SimTime,
}

impl Links {
    /// The hosts' NIC rate: every topology's tier 0 is the host tier.
    pub(super) fn host_rate_bps(&self) -> f64 {
        self.tier_params
            .first()
            .map(|p| p.rate.bits_per_sec() as f64)
            .unwrap_or(1e10)
    }
}

/// The `[network]` section for a topology with tiers `tiers`: the default link and
/// queues, the hosts' NICs and each tier's overrides. `known` is false when the
/// topology is wrong (`tiers` is then empty, and tier names are not reported). RED and
/// RWNDQ come later (`queues::switch_features`: RWNDQ needs the TCP settings).
pub(super) fn links(s: &Scenario, tiers: &[&'static str], known: bool, c: &mut Checker) -> Links {
    let link_default = &s.network.link;
    c.rate_gbps("network.link.rate_gbps", link_default.rate_gbps);
    c.non_negative("network.link.delay_us", link_default.delay_us);
    c.time_us("network.link.delay_us", link_default.delay_us);
    let switch_queue = queue_config(
        &s.network.queue,
        "network.queue",
        100,
        s.output.queue_histogram,
        c,
    );
    let host_queue = queue_config(&s.network.host_queue, "network.host_queue", 1000, false, c);
    let host_jitter = c.time(
        "network.host_jitter_us",
        Some(s.network.host_jitter_us),
        0,
        false,
    );
    for name in s.network.tiers.keys() {
        if known && !tiers.contains(&name.as_str()) {
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
    for t in tiers {
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
                c,
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
            ecn_red: None,
            pfc: false,
            trim: None,
        });
    }
    Links {
        tier_params,
        host_queue,
        host_jitter,
    }
}

/// The paths between two hosts of a source-routed topology: BCube's parallel path set,
/// one path per interface. `None`: the topology's switches route by ECMP.
pub(super) fn source_routes(kind: &TopologyKind) -> Option<u32> {
    kind.bcube().map(|(_, k)| k + 1)
}

/// Checks the traffic entries' path indices (packet level) against the network's
/// equal-cost paths.
pub(super) fn check_path_indices(
    seed: u64,
    topo: &Topology,
    tier_params: &[LinkParams],
    entry_paths: &[Vec<u32>],
    c: &mut Checker,
) {
    let most = match source_routes(&topo.kind) {
        Some(paths) => paths,
        None => {
            // The topologies here are symmetric: host 0's largest number of equal-cost
            // paths to another host is every pair's largest.
            let net = Network::build(
                topo,
                tier_params,
                QueueConfig::default(),
                LoadBalancing::Ecmp,
                seed,
            );
            (1..topo.n_hosts)
                .map(|h| net.ecmp_paths(0, h))
                .max()
                .unwrap_or(1)
        }
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

#[cfg(test)]
mod tests {
    use super::super::plan::tests::{errors, GOOD};
    use super::super::schema::tests::variant_names;
    use super::super::schema::TopologySpec;
    use super::super::Plan;
    use crate::net::topology::TOPOLOGY_NAMES;
    use std::path::Path;

    /// Every topology kind of the JSON schema has its row in the topology table
    /// (`TOPOLOGY_NAMES`), under the name scenarios give it, and the table has no other.
    #[test]
    fn the_topology_table_has_a_row_for_every_kind_of_the_schema() {
        let mut in_schema = variant_names("TopologySpec");
        let mut in_table: Vec<String> = TOPOLOGY_NAMES.iter().map(|n| n.to_string()).collect();
        in_schema.sort();
        in_table.sort();
        assert_eq!(
            in_schema, in_table,
            "the JSON schema's topologies (left) and the topology table, TOPOLOGY_NAMES (right)"
        );
        // Each kind as a scenario writes it reads back as the kind of that name.
        for name in TOPOLOGY_NAMES {
            let fields = match name {
                "star" => "senders = 2",
                "dumbbell" => "pairs = 1",
                "leaf_spine" => "leaves = 2\nspines = 1\nhosts_per_leaf = 1",
                "fat_tree" => "k = 4",
                "fuso_testbed" | "fuso_fabric" => "",
                "vl2" => "aggregation = 2\nintermediate = 1",
                "bcube" => "n = 2\nk = 1",
                "custom" => "file = \"fabric.toml\"",
                other => panic!("no example of topology {other:?}: add one here"),
            };
            let spec: TopologySpec = toml::from_str(&format!("[{name}]\n{fields}\n")).unwrap();
            assert_eq!(spec.name(), name);
        }
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
    fn tiers_override_the_default_link() {
        let text = GOOD.to_string() + "[network.tiers.agg_core]\nrate_gbps = 40\n";
        let p = Plan::from_toml(&text, Path::new(".")).unwrap();
        let gbps: Vec<u64> = p
            .tier_params
            .iter()
            .map(|t| t.rate.bits_per_sec() / 1_000_000_000)
            .collect();
        assert_eq!(gbps, [10, 10, 40]);
        let e = errors(&(GOOD.to_string() + "[network.tiers.spine]\nrate_gbps = 40\n"));
        assert!(
            e.contains("network.tiers.spine: not a tier of this topology (its tiers: host, edge_agg, agg_core)"),
            "{e}"
        );
    }

    #[test]
    fn pinned_paths_are_counted_per_topology() {
        // A k = 4 fat tree has at most 4 paths between two hosts.
        let ok = GOOD.to_string() + "paths = [3]\n";
        let plan = Plan::from_toml(&ok, Path::new(".")).unwrap();
        assert_eq!(plan.entry_paths, vec![vec![3]]);
        let e = errors(&(GOOD.to_string() + "paths = [4]\n"));
        assert!(
            e.contains("traffic[0].paths[0]: path index 4 is out of range")
                && e.contains("at most 4 equal-cost path(s)"),
            "{e}"
        );
        let star = "duration_ms = 1\n[topology.star]\nsenders = 2\n[[traffic]]\n\
                    pattern = \"incast\"\nsize = \"long_lived\"\npaths = [1]\n";
        let e = errors(star);
        assert!(
            e.contains("traffic[0].paths[0]: path index 1 is out of range")
                && e.contains("at most 1 equal-cost"),
            "{e}"
        );
        // BCube(2, 1): one path per interface.
        let bcube = "duration_ms = 1\n[topology.bcube]\nn = 2\nk = 1\n[[traffic]]\n\
                     pattern = \"permutation\"\nsize = \"long_lived\"\ntransport = \"mptcp\"\n\
                     paths = [2]\n";
        let e = errors(bcube);
        assert!(e.contains("at most 2 equal-cost path(s)"), "{e}");
    }
}
