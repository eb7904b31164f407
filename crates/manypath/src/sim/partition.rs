//! The automatic split of a fabric into partitions for a run over several threads
//! (`sim::parallel`): which thread runs each node's events.
//!
//! The split changes only how fast a run goes, never its results (every node's events
//! run in the same order whatever the split; see `engine::queue`). What it aims for is
//! balance (each partition about the same number of ports, a port's packets being most
//! of the work) and few links between partitions (each crossing packet is copied
//! between threads): the hosts are cut into contiguous runs (topologies number the
//! hosts of a rack, and of a pod, together), and each switch, nearest the hosts first,
//! joins the partition most of its already placed neighbours are in (a fat tree's edge
//! and aggregation switches stay with their pod), the lighter one on a tie (its core
//! switches spread evenly).

use crate::net::network::Network;

/// Per node, the partition (0..`parts`) that runs it.
pub fn partition(net: &Network, parts: usize) -> Vec<u32> {
    let n = net.kinds.len();
    let hosts = net.n_hosts as usize;
    let parts = parts.max(1);
    let mut owner = vec![u32::MAX; n];
    let mut load = vec![0u64; parts];
    let ports = |node: usize| net.ports_of(node as u32).len() as u64;
    for (h, o) in owner.iter_mut().enumerate().take(hosts) {
        let p = h * parts / hosts.max(1);
        *o = p as u32;
        load[p] += ports(h);
    }
    // Switches by their distance from the nearest host (breadth first), then by id.
    let mut order = Vec::with_capacity(n - hosts);
    let mut seen = vec![false; n];
    let mut frontier: Vec<usize> = (0..hosts).collect();
    for &h in &frontier {
        seen[h] = true;
    }
    while !frontier.is_empty() {
        let mut next = Vec::new();
        for &node in &frontier {
            for p in net.ports_of(node as u32) {
                let peer = net.ports[p as usize].peer as usize;
                if !seen[peer] {
                    seen[peer] = true;
                    next.push(peer);
                }
            }
        }
        next.sort_unstable();
        order.extend(next.iter().copied());
        frontier = next;
    }
    // Switches no host reaches (a disconnected part of a custom fabric) come last.
    order.extend((hosts..n).filter(|&s| !seen[s]));
    let mut votes = vec![0u64; parts];
    for s in order {
        votes.iter_mut().for_each(|v| *v = 0);
        for p in net.ports_of(s as u32) {
            let o = owner[net.ports[p as usize].peer as usize];
            if o != u32::MAX {
                votes[o as usize] += 1;
            }
        }
        let best = (0..parts)
            .min_by_key(|&p| (std::cmp::Reverse(votes[p]), load[p], p))
            .expect("at least one partition");
        owner[s] = best as u32;
        load[best] += ports(s);
    }
    owner
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::topology::TopologyKind;

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
            let owner = partition(&net, parts);
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
        assert!(partition(&net, 1).iter().all(|&o| o == 0));
    }
}
