//! BCube's parallel path set: the k+1 edge-disjoint paths between two hosts of
//! BCube(n, k), one leaving on each interface, and the paths a connection's subflows
//! take among them. Both levels place BCube connections with `bcube_connection`: the
//! packet level pins its subflows' routes on them, the flow level loads them.

use super::network::Network;
use crate::engine::rng::stream;
use crate::engine::Rng;

/// A connection's ends in BCube(n, k).
#[derive(Clone, Copy, Debug)]
pub struct BCubeEnds {
    pub n: u32,
    pub k: u32,
    pub src: u32,
    pub dst: u32,
}

/// The paths of connection `i`'s subflows (one per slot of `out`, each cleared first),
/// as both levels place them: subflow s takes path `pinned[s % len]` of BCube's path set
/// if `pinned` names any, else the paths in a random order drawn per connection (so
/// with up to k+1 subflows each leaves on its own interface).
pub fn bcube_connection(
    net: &Network,
    seed: u64,
    i: usize,
    at: BCubeEnds,
    pinned: &[u32],
    out: &mut [Vec<u32>],
) {
    let mut rng = Rng::new(seed, stream::HOST, (1 << 40) | i as u64);
    let mut order: Vec<u32> = (0..=at.k).collect();
    rng.shuffle(&mut order);
    for (s, p) in out.iter_mut().enumerate() {
        p.clear();
        let j = if pinned.is_empty() {
            order[s % order.len()]
        } else {
            pinned[s % pinned.len()]
        };
        bcube_path(net, at.n, at.k, at.src, at.dst, j, &mut rng, p);
    }
}

/// Base-`n` digit `l` of host address `h`.
fn digit(n: u32, h: u32, l: u32) -> u32 {
    h / n.pow(l) % n
}

fn with_digit(n: u32, h: u32, l: u32, d: u32) -> u32 {
    let w = n.pow(l);
    h - digit(n, h, l) * w + d * w
}

/// Appends the two links of a hop from host `a` to host `b` through their level-`l`
/// switch: `a`'s level-`l` interface, then the switch's port towards `b`.
fn bcube_hop(net: &Network, l: u32, a: u32, b: u32, out: &mut Vec<u32>) {
    // Host a's ports are its interfaces in level order (see the topology builder).
    let up = net.ports_of(a).start + l;
    out.push(up);
    let sw = net.ports[up as usize].peer;
    let down = net
        .ports_of(sw)
        .find(|&p| net.ports[p as usize].peer == b)
        .expect("hosts differing in digit l share their level-l switch");
    out.push(down);
}

/// Path `j` of BCube's parallel path set from `src` to `dst`: it corrects the address
/// digits from level j downwards (cyclically). When `src` and `dst` agree in digit j, it
/// first steps to a neighbour differing there (a random one) and corrects digit j last,
/// which keeps the k+1 paths edge-disjoint.
#[allow(clippy::too_many_arguments)]
pub fn bcube_path(
    net: &Network,
    n: u32,
    k: u32,
    src: u32,
    dst: u32,
    j: u32,
    rng: &mut Rng,
    out: &mut Vec<u32>,
) {
    let levels = k + 1;
    let order = (0..levels).map(|i| (j + levels - i) % levels);
    let mut at = src;
    let detour = digit(n, src, j) == digit(n, dst, j);
    if detour {
        let other = (digit(n, src, j) + 1 + rng.below(n as u64 - 1) as u32) % n;
        let next = with_digit(n, at, j, other);
        bcube_hop(net, j, at, next, out);
        at = next;
    }
    for l in order
        .filter(|&l| !(detour && l == j))
        .chain(detour.then_some(j))
    {
        let want = digit(n, dst, l);
        if digit(n, at, l) != want {
            let next = with_digit(n, at, l, want);
            bcube_hop(net, l, at, next, out);
            at = next;
        }
    }
    debug_assert_eq!(at, dst);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::topology::TopologyKind;
    use std::collections::HashSet;

    fn network(kind: TopologyKind) -> Network {
        Network::uniform_for_tests(kind, 1.0)
    }

    #[test]
    fn bcube_path_set_is_edge_disjoint_and_leaves_on_every_interface() {
        let (n, k) = (4, 2);
        let net = network(TopologyKind::BCube { n, k });
        let mut rng = Rng::new(1, 0, 0);
        for (src, dst) in [(0, 63), (5, 6), (17, 49), (0, 1)] {
            let mut used = HashSet::new();
            let mut first = HashSet::new();
            for j in 0..=k {
                let mut p = Vec::new();
                bcube_path(&net, n, k, src, dst, j, &mut rng, &mut p);
                assert_eq!(net.ports[p[0] as usize].owner, src);
                assert_eq!(net.ports[*p.last().unwrap() as usize].peer, dst);
                for w in p.windows(2) {
                    assert_eq!(
                        net.ports[w[0] as usize].peer,
                        net.ports[w[1] as usize].owner
                    );
                }
                first.insert(p[0]);
                for l in p {
                    assert!(used.insert(l), "link {l} used by two paths {src}->{dst}");
                }
            }
            assert_eq!(first.len(), k as usize + 1, "one path per interface");
        }
    }

    #[test]
    fn bcube_shortest_path_corrects_each_differing_digit_once() {
        let net = network(TopologyKind::BCube { n: 4, k: 1 });
        let mut rng = Rng::new(1, 0, 0);
        let mut p = Vec::new();
        // 1 = (0,1) and 14 = (3,2) differ in both digits: two relayed hops.
        bcube_path(&net, 4, 1, 1, 14, 1, &mut rng, &mut p);
        assert_eq!(p.len(), 4);
        p.clear();
        // 1 and 2 differ in digit 0 only; path 1 detours through level 1 (three hops).
        bcube_path(&net, 4, 1, 1, 2, 1, &mut rng, &mut p);
        assert_eq!(p.len(), 6);
    }
}
