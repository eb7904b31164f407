//! A topology given as data (`[topology.custom]`): its nodes and links as the scenario
//! or a file lists them, resolved to indices, hosts first. It builds the same
//! `Topology` the generators do, with a link's own rate, delay and queues where it sets
//! them, so routing, faults, tiers and the flow level treat it as any other.

use super::queue::QueueConfig;
use crate::time::{Rate, SimTime};
use std::collections::HashSet;
use std::sync::Mutex;

/// A resolved custom topology. Nodes are in simulator order: hosts first, in the order
/// they were listed, then switches in theirs.
#[derive(Clone, Debug, PartialEq)]
pub struct CustomTopology {
    /// Where it came from (`inline` or the file), for its description.
    pub source: String,
    pub tiers: Vec<&'static str>,
    pub nodes: Vec<CustomNode>,
    /// Links in the order listed, parallel links one after another.
    pub links: Vec<CustomLink>,
    pub n_hosts: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub struct CustomNode {
    pub name: String,
    pub host: bool,
    /// A switch's tier when the topology names it (else its links decide).
    pub tier: Option<u8>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CustomLink {
    pub a: u32,
    pub b: u32,
    pub tier: u8,
    pub own: LinkOverride,
}

/// What one link sets for itself instead of taking its tier's.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LinkOverride {
    pub rate: Option<Rate>,
    pub delay: Option<SimTime>,
    /// The queue of the port at end a, then at end b.
    pub queue: [Option<QueueConfig>; 2],
}

impl LinkOverride {
    pub fn is_empty(&self) -> bool {
        *self == LinkOverride::default()
    }
}

/// The `'static` name of a tier read from data. Tier names live for the whole process
/// (`Topology::tiers` and the queue table hold `&'static str`); each distinct name is
/// stored once however many scenarios use it.
pub fn tier_name(name: &str) -> &'static str {
    static NAMES: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    let set = names.get_or_insert_with(HashSet::new);
    if let Some(&n) = set.get(name) {
        return n;
    }
    let n: &'static str = Box::leak(name.to_string().into_boxed_str());
    set.insert(n);
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::network::{LinkParams, LoadBalancing, Network};
    use crate::net::topology::TopologyKind;

    /// Two leaf-spine planes (two leaves of two hosts, two spines), four hosts with one
    /// NIC in each plane.
    fn two_planes() -> Network {
        let mut nodes: Vec<CustomNode> = (0..4)
            .map(|h| CustomNode {
                name: format!("h{h}"),
                host: true,
                tier: None,
            })
            .collect();
        let mut links = Vec::new();
        for plane in 0..2u32 {
            // Switches of this plane: leaves 4 + 4·plane, +1; spine +2, +3.
            let first = 4 + 4 * plane;
            for i in 0..4 {
                nodes.push(CustomNode {
                    name: format!("p{plane}s{i}"),
                    host: false,
                    tier: None,
                });
            }
            for h in 0..4 {
                links.push(CustomLink {
                    a: h,
                    b: first + h / 2,
                    tier: 0,
                    own: LinkOverride::default(),
                });
            }
            for leaf in 0..2 {
                for spine in 2..4 {
                    links.push(CustomLink {
                        a: first + leaf,
                        b: first + spine,
                        tier: 1,
                        own: LinkOverride::default(),
                    });
                }
            }
        }
        // Host links listed plane by plane: each host's plane-0 NIC is its first port.
        let c = CustomTopology {
            source: "test".into(),
            tiers: vec!["host", "fabric"],
            nodes,
            links,
            n_hosts: 4,
        };
        let topo = TopologyKind::Custom(Box::new(c)).build();
        let p = LinkParams::plain_for_tests(10.0);
        Network::build(
            &topo,
            &[p, p],
            QueueConfig::default(),
            LoadBalancing::Ecmp,
            1,
        )
    }

    /// A host with a NIC in each plane sends on both (by flow hash), and every path stays
    /// in the plane it starts in and ends at the destination, over four hops.
    #[test]
    fn hosts_with_two_nics_use_both_planes() {
        let mut net = two_planes();
        assert!(net.multi_nic);
        let mut planes = [0; 2];
        for hash in 0..200u32 {
            let mut path = Vec::new();
            assert!(net.ecmp_path(0, 3, hash.wrapping_mul(2_654_435_761), &mut path));
            assert_eq!(path.len(), 4, "NIC, leaf, spine, leaf");
            let plane =
                |port: u32| net.names[net.ports[port as usize].peer as usize].starts_with("p1");
            let first = plane(path[0]);
            assert!(
                path[..3].iter().all(|&p| plane(p) == first),
                "stays in its plane"
            );
            assert_eq!(net.ports[path[3] as usize].peer, 3);
            planes[first as usize] += 1;
        }
        assert!(planes[0] > 50 && planes[1] > 50, "{planes:?}");
    }

    #[test]
    fn a_links_own_settings_reach_its_ports() {
        let mut c = TopologyKind::FatTree {
            k: 4,
            oversubscription: 1,
        }
        .build();
        c.overrides = vec![LinkOverride::default(); c.links.len()];
        c.overrides[0] = LinkOverride {
            rate: Some(Rate::from_gbps(40.0)),
            delay: Some(5_000_000),
            queue: [
                None,
                Some(QueueConfig {
                    limit_packets: 7,
                    ..QueueConfig::default()
                }),
            ],
        };
        let p = LinkParams::plain_for_tests(10.0);
        let net = Network::build(
            &c,
            &[p, p, p],
            QueueConfig::default(),
            LoadBalancing::Ecmp,
            1,
        );
        let nic = &net.ports[net.host_nic[0] as usize];
        assert_eq!(nic.rate, Rate::from_gbps(40.0));
        assert_eq!(nic.delay, 5_000_000);
        let back = &net.ports[nic.reverse as usize];
        assert_eq!((back.rate, back.delay), (nic.rate, nic.delay));
        assert_eq!(back.queue.cfg.limit_packets, 7);
        assert_eq!(
            net.ports[net.host_nic[1] as usize].rate,
            Rate::from_gbps(10.0)
        );
    }

    #[test]
    fn tier_names_are_stored_once() {
        let a = tier_name("spine_core");
        let b = tier_name(&String::from("spine_core"));
        assert!(std::ptr::eq(a, b));
        assert_eq!(a, "spine_core");
    }
}
