//! The automatic split of a fabric into partitions for a run over several threads
//! (`sim::parallel`): which thread runs each node's events.
//!
//! The split changes only how fast a run goes, never its results (every node's events
//! run in the same order whatever the split; see `engine::queue`). What it aims for is
//! balance of the expected work and few links between partitions (each crossing packet
//! is copied between threads).
//!
//! **Expected load.** A node's work is about proportional to the packets it handles, so
//! the split weighs each host by the bytes its flows are expected to send and receive
//! (a sized flow its size; a long-lived one its host's line rate over the rest of the
//! run) plus a small floor, so a fabric without traffic splits by ports. A switch's
//! expected load is carried up from the hosts: each node, nearest the hosts first,
//! shares its load evenly among its neighbours one hop further from the hosts (a fat
//! tree's edge switch carries its hosts' load, each aggregation switch an even share of
//! its pod's, each core switch an even share of every pod's).
//!
//! **The split.** Hosts are cut into contiguous runs of about equal expected load
//! (topologies number the hosts of a rack, and of a pod, together). Then each switch,
//! nearest the hosts first, joins the partition that sends it at least three quarters
//! of its load (a fat tree's edge and aggregation switches stay with their pod); a
//! switch fed from several partitions alike (a core switch) joins the lightest of them.

use crate::net::network::Network;
use crate::time::SimTime;
use crate::workload::generate::FlowSpec;

/// Per host, the floor of its expected load as a fraction of the mean host's: an idle
/// host still weighs a little, and a fabric without traffic splits by ports.
const IDLE_SHARE: f64 = 1.0 / 64.0;

/// The share of a switch's incoming load one partition must send it for the switch to
/// join that partition rather than the lightest of those feeding it.
const MAJORITY: f64 = 0.75;

/// Per host, the bytes its flows are expected to send and receive over a run of
/// `duration`: a sized flow's size at both ends; a long-lived flow its source's line
/// rate (all its NICs) from its start to the end of the run.
pub fn expected_host_bytes<'a>(
    net: &Network,
    flows: impl IntoIterator<Item = &'a FlowSpec>,
    duration: SimTime,
) -> Vec<f64> {
    let hosts = net.n_hosts as usize;
    let mut bytes = vec![0.0; hosts];
    for f in flows {
        let b = match f.size {
            Some(size) => size as f64,
            None => {
                let bps: u64 = net
                    .ports_of(f.src)
                    .map(|p| net.ports[p as usize].rate.bits_per_sec())
                    .sum();
                bps as f64 / 8.0 * duration.saturating_sub(f.start) as f64 / 1e12
            }
        };
        for h in [f.src, f.dst] {
            if let Some(x) = bytes.get_mut(h as usize) {
                *x += b;
            }
        }
    }
    bytes
}

/// Per node, the partition (0..`parts`) that runs it, balanced by `host_bytes` (per
/// host, its expected bytes: `expected_host_bytes`).
pub fn partition(net: &Network, host_bytes: &[f64], parts: usize) -> Vec<u32> {
    let n = net.kinds.len();
    let hosts = net.n_hosts as usize;
    let parts = parts.max(1);
    // Host weights in whole units of the floor, so equal hosts cut exactly.
    let mean = host_bytes.iter().sum::<f64>() / hosts.max(1) as f64;
    let unit = if mean > 0.0 { mean * IDLE_SHARE } else { 1.0 };
    let weight: Vec<u64> = (0..hosts)
        .map(|h| 1 + (host_bytes.get(h).copied().unwrap_or(0.0) / unit).round() as u64)
        .collect();
    // Per node, its expected load (in the same units), and its distance from the
    // nearest host.
    let mut load: Vec<f64> = (0..n)
        .map(|h| weight.get(h).map_or(0.0, |&w| w as f64))
        .collect();
    let level = levels(net);
    let mut owner = vec![u32::MAX; n];
    let mut part_load = vec![0.0f64; parts];
    let cuts = host_cuts(net, &weight, parts);
    for h in 0..hosts {
        let p = cuts.partition_point(|&c| c <= h);
        owner[h] = p as u32;
        part_load[p] += load[h];
    }
    // Switches by their distance from the nearest host, then by id; switches no host
    // reaches (a disconnected part of a custom fabric) come last.
    let mut order: Vec<usize> = (hosts..n).collect();
    order.sort_by_key(|&s| (level[s], s));
    // What each node sends each neighbour one hop further from the hosts.
    let up_share = |node: usize, load: &[f64]| {
        let up = net
            .ports_of(node as u32)
            .filter(|&p| {
                level[net.ports[p as usize].peer as usize] == level[node].saturating_add(1)
            })
            .count();
        load[node] / up.max(1) as f64
    };
    let mut fed = vec![0.0f64; parts];
    for s in order {
        fed.iter_mut().for_each(|v| *v = 0.0);
        let mut incoming = 0.0;
        for p in net.ports_of(s as u32) {
            let peer = net.ports[p as usize].peer as usize;
            if level[s] == u32::MAX || level[peer].saturating_add(1) != level[s] {
                continue;
            }
            let share = up_share(peer, &load);
            fed[owner[peer] as usize] += share;
            incoming += share;
        }
        load[s] = incoming;
        let top = (0..parts)
            .min_by(|&a, &b| fed[b].total_cmp(&fed[a]).then(a.cmp(&b)))
            .expect("at least one partition");
        let best = if incoming > 0.0 && fed[top] >= MAJORITY * incoming {
            top
        } else {
            // Fed alike from several partitions (or from none): the lightest of those
            // feeding it (of all, when none does).
            (0..parts)
                .filter(|&p| fed[p] > 0.0 || incoming == 0.0)
                .min_by(|&a, &b| part_load[a].total_cmp(&part_load[b]).then(a.cmp(&b)))
                .expect("a partition feeds it, or all are candidates")
        };
        owner[s] = best as u32;
        part_load[best] += load[s];
    }
    owner
}

/// Where the hosts are cut into `parts` contiguous runs: per cut, the first host of
/// the next run. Each cut is where the weights before it reach its share of the
/// total, moved to the nearest rack boundary (a host whose first NIC leads to another
/// switch than the previous host's) within half a run's hosts, so a rack stays whole
/// with its switch; a fabric without such boundaries (a star) is cut where the weights
/// say.
fn host_cuts(net: &Network, weight: &[u64], parts: usize) -> Vec<usize> {
    let hosts = weight.len();
    let total: u128 = weight.iter().map(|&w| w as u128).sum();
    let edge = |h: usize| net.ports[net.host_nic[h] as usize].peer;
    let boundary = |h: usize| h == 0 || h == hosts || edge(h) != edge(h - 1);
    let reach = (hosts / parts / 2).max(1);
    let mut cuts = Vec::with_capacity(parts - 1);
    let (mut h, mut before) = (0usize, 0u128);
    for k in 1..parts as u128 {
        while h < hosts && before * (parts as u128) < k * total {
            before += weight[h] as u128;
            h += 1;
        }
        let lowest = cuts.last().map_or(0, |&c| c + 1);
        let nearest = (0..=reach)
            .flat_map(|d| [h.checked_sub(d), Some(h + d)])
            .flatten()
            .find(|&j| j >= lowest && j <= hosts && boundary(j));
        cuts.push(nearest.unwrap_or(h.max(lowest)));
    }
    cuts
}

/// Per node, its distance in links from the nearest host (`u32::MAX`: no host reaches
/// it).
fn levels(net: &Network) -> Vec<u32> {
    let n = net.kinds.len();
    let mut level = vec![u32::MAX; n];
    let mut frontier: Vec<usize> = (0..net.n_hosts as usize).collect();
    for &h in &frontier {
        level[h] = 0;
    }
    let mut d = 0;
    while !frontier.is_empty() {
        d += 1;
        let mut next = Vec::new();
        for &node in &frontier {
            for p in net.ports_of(node as u32) {
                let peer = net.ports[p as usize].peer as usize;
                if level[peer] == u32::MAX {
                    level[peer] = d;
                    next.push(peer);
                }
            }
        }
        frontier = next;
    }
    level
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::topology::TopologyKind;
    use crate::workload::generate::FlowSpec;

    fn fat_tree(k: u32) -> Network {
        Network::uniform_for_tests(
            TopologyKind::FatTree {
                k,
                oversubscription: 1,
            },
            10.0,
        )
    }

    /// Ports per partition, and the links between partitions.
    fn balance(net: &Network, owner: &[u32], parts: usize) -> (Vec<u64>, usize) {
        let mut load = vec![0u64; parts];
        let mut cut = 0;
        for (i, p) in net.ports.iter().enumerate() {
            load[owner[p.owner as usize] as usize] += 1;
            if owner[p.owner as usize] != owner[p.peer as usize] {
                cut += 1;
            }
            assert_eq!(net.ports[p.reverse as usize].peer, p.owner, "port {i}");
        }
        (load, cut / 2)
    }

    #[test]
    fn a_fat_tree_splits_by_pod_with_balanced_ports() {
        let net = fat_tree(8);
        for parts in [2usize, 4, 8] {
            let owner = partition(&net, &[], parts);
            assert!(owner.iter().all(|&o| (o as usize) < parts));
            let (load, cut) = balance(&net, &owner, parts);
            let (lo, hi) = (*load.iter().min().unwrap(), *load.iter().max().unwrap());
            assert!(
                hi as f64 <= 1.1 * lo as f64,
                "{parts} parts: ports {load:?}"
            );
            // Pods stay whole: only aggregation-core links cross (k³/4 = 128 of them),
            // and of those, the ones to cores in another partition.
            assert!(cut <= 128, "{parts} parts: {cut} links cut");
            // Every host is with its edge switch.
            for h in 0..net.n_hosts as usize {
                let edge = net.ports[net.host_nic[h] as usize].peer as usize;
                assert_eq!(owner[h], owner[edge], "host {h}");
            }
        }
    }

    #[test]
    fn one_partition_owns_everything() {
        let net = fat_tree(4);
        assert!(partition(&net, &[], 1).iter().all(|&o| o == 0));
    }

    /// A flow of `size` bytes (`None`: long-lived) from `src` to `dst`, starting at `start`.
    fn flow(src: u32, dst: u32, size: Option<u64>, start: SimTime) -> FlowSpec {
        FlowSpec {
            src,
            dst,
            size,
            start,
            transport: 0,
            class: 0,
            priority: 0,
            job: -1,
            after: None,
            conn: None,
            after_job: None,
            deps: Default::default(),
        }
    }

    /// A permutation among the first `busy` hosts only (each sends and receives `bytes`).
    fn busy_first(net: &Network, busy: u32, bytes: u64) -> Vec<f64> {
        let flows: Vec<FlowSpec> = (0..busy)
            .map(|h| flow(h, (h + 1) % busy, Some(bytes), 0))
            .collect();
        expected_host_bytes(net, &flows, 1_000_000_000)
    }

    #[test]
    fn expected_bytes_count_both_ends_and_long_lived_flows_at_line_rate() {
        let net = fat_tree(4);
        // A long-lived flow starting at 0.4 ms of a 1 ms run: 0.6 ms at 10 Gbit/s.
        let flows = [flow(0, 5, Some(1000), 0), flow(1, 0, None, 400_000_000)];
        let b = expected_host_bytes(&net, &flows, 1_000_000_000);
        assert_eq!(b[5], 1000.0);
        assert!((b[1] - 750_000.0).abs() < 1e-6, "{}", b[1]);
        assert!((b[0] - 751_000.0).abs() < 1e-6, "{}", b[0]);
        assert_eq!(b[2], 0.0);
    }

    #[test]
    fn a_fat_tree_half_busy_splits_its_busy_half() {
        // k = 8: pods of 16 hosts; only pods 0-3 (hosts 0-63) carry traffic. Split by
        // host count, partition 0 would get every busy host; by expected load, each
        // gets about half of them, and the core switches, fed alike by both, split.
        let net = fat_tree(8);
        let bytes = busy_first(&net, 64, 1_000_000);
        for parts in [2usize, 4] {
            let owner = partition(&net, &bytes, parts);
            let mut busy = vec![0u32; parts];
            for o in &owner[..64] {
                busy[*o as usize] += 1;
            }
            let (lo, hi) = (*busy.iter().min().unwrap(), *busy.iter().max().unwrap());
            assert!(
                hi - lo <= 64 / parts as u32 / 4,
                "{parts} parts: busy hosts {busy:?}"
            );
            for h in 0..net.n_hosts as usize {
                let edge = net.ports[net.host_nic[h] as usize].peer as usize;
                assert_eq!(owner[h], owner[edge], "host {h}");
            }
            let cores = &owner[owner.len() - 16..];
            for p in 0..parts as u32 {
                assert!(cores.contains(&p), "{parts} parts: cores {cores:?}");
            }
        }
    }
}
