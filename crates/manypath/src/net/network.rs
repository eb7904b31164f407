//! The assembled network: nodes, ports (an output queue feeding a link), and routes.
//!
//! Routes are computed once per topology by breadth-first search from every edge switch
//! (a switch with hosts attached): at each switch, the equal-cost next hops towards each
//! edge switch form a set, stored once and referenced by index. Forwarding a packet is
//! then two array reads and, where there is a choice, one hash of the packet's
//! precomputed flow hash with the switch's salt (ECMP) or one random draw (spraying).

use super::ecn_red::EcnRedConfig;
use super::faults::{PortFault, NO_FAULT};
use super::queue::{OutQueue, QueueConfig};
use super::red::RedConfig;
use super::rwndq::{RwndqConfig, RwndqPort};
use super::topology::{NodeRole, Topology};
use super::trim::TrimConfig;
use crate::engine::rng::{mix64, stream, Rng};
use crate::time::{Rate, SimTime};
use std::collections::{HashMap, VecDeque};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    Host,
    Switch,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadBalancing {
    /// Hash of the 5-tuple with a per-switch salt: one path per flow.
    Ecmp,
    /// An independent random next hop for every packet.
    Spray,
}

/// Rate, delay and queue of one tier's links.
#[derive(Clone, Copy, Debug)]
pub struct LinkParams {
    pub rate: Rate,
    pub delay: SimTime,
    pub queue: QueueConfig,
    /// RWNDQ on the switch ports of this tier.
    pub rwndq: Option<RwndqConfig>,
    /// RED on the switch ports of this tier.
    pub red: Option<RedConfig>,
    /// RED-style ECN marking on the switch ports of this tier.
    pub ecn_red: Option<EcnRedConfig>,
    /// PFC on this tier's links (both ends).
    pub pfc: bool,
    /// NDP's trimming on the switch ports of this tier.
    pub trim: Option<TrimConfig>,
}

impl LinkParams {
    /// A link at `gbps` with a 1 µs delay, the default queue and no queue feature (for
    /// unit tests).
    #[cfg(test)]
    pub(crate) fn plain_for_tests(gbps: f64) -> LinkParams {
        LinkParams {
            rate: Rate::from_gbps(gbps),
            delay: 1_000_000,
            queue: QueueConfig::default(),
            rwndq: None,
            red: None,
            ecn_red: None,
            pfc: false,
            trim: None,
        }
    }
}

/// An output port: a queue feeding one direction of a link.
pub struct Port {
    pub owner: u32,
    pub peer: u32,
    /// The peer's port on the same link (the other direction).
    pub reverse: u32,
    /// Index of this port's RWNDQ state in `Network::rwndq` (`NO_RWNDQ`: off).
    pub rwndq: u32,
    pub tier: u8,
    pub rate: Rate,
    pub delay: SimTime,
    /// When the packet on the wire finishes serialising.
    pub busy_until: SimTime,
    /// A `TxDone` is pending for this port: an event, or a deferred one
    /// (`defers_tx_done`).
    pub txdone_pending: bool,
    /// This port's `TxDone`s at a time after the packet before them started are not
    /// events: each is taken when that packet reaches the far end of the link, or
    /// before anything reaches this port or reads its queue, whichever comes first
    /// (`Sim::settle_tx_done`). Its decision depends only on this port's own state,
    /// which nothing changes in between. On a host interface, only while no endpoint
    /// waits for room in its queue (`Sim::undefer_tx_done`).
    pub defers_tx_done: bool,
    /// Classes the peer has paused (PFC; bit c: class c). Always 0 without PFC.
    pub paused: u8,
    pub queue: OutQueue,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub busy_time: SimTime,
    /// Index of this link direction's faults in `Network::faults`, or `NO_FAULT`.
    pub fault: u32,
    /// Packets the link lost to faults (apart from queue drops).
    pub fault_drops: u64,
    /// In a run over several threads, the peer belongs to another partition: packets
    /// go to it as messages (`sim::parallel`). Always false on one thread.
    pub remote: bool,
}

pub struct Network {
    pub kinds: Vec<NodeKind>,
    pub names: Vec<String>,
    pub tiers: Vec<&'static str>,
    /// First port of each node; a node's ports are contiguous.
    pub port_start: Vec<u32>,
    pub ports: Vec<Port>,
    pub n_hosts: u32,
    /// For each host, the port its (first) NIC sends on.
    pub host_nic: Vec<u32>,
    /// Some host of a switched fabric has several NICs (a custom topology's host with
    /// several links): it picks one per flow hash (`source_port`), and routes towards
    /// it lead to whichever of its NICs is nearest.
    pub multi_nic: bool,
    // Routing.
    host_edge: Vec<u32>,
    host_down_port: Vec<u32>,
    /// Each host's column of the routing table: its edge switch's, or, for a host with
    /// several NICs, one of its own (after the edge switches').
    host_target: Vec<u32>,
    switch_index: Vec<u32>,
    n_edges: u32,
    route: Vec<u32>,
    sets: Vec<(u32, u32)>,
    set_ports: Vec<u32>,
    salt: Vec<u64>,
    lb: LoadBalancing,
    spray_rng: Vec<Rng>,
    /// The faults of the ports that have any (see `net::faults`).
    pub faults: Vec<PortFault>,
    /// Ports routing must avoid (links whose failure routing has detected).
    pub(crate) unrouted: Vec<bool>,
    pub(crate) seed: u64,
    edges: Vec<u32>,
    /// RWNDQ state of the ports that run it.
    pub rwndq: Vec<RwndqPort>,
    /// Per node: some port of this switch runs RWNDQ, so it inspects TCP headers.
    pub rwndq_node: Vec<bool>,
    /// Pinned routes (`pin`): per route, a range of `pinned_hops`, each hop a node and
    /// the port it sends the route's packets on.
    pinned: Vec<(u32, u32)>,
    pinned_hops: Vec<(u32, u32)>,
}

const NO_ROUTE: u32 = u32::MAX;
pub const NO_RWNDQ: u32 = u32::MAX;

impl Network {
    /// Builds ports and routes. `tier_params[t]` gives the links of tier `t`; the host
    /// side of a host link uses `host_queue` (the NIC queue) instead of the tier's queue.
    pub fn build(
        topo: &Topology,
        tier_params: &[LinkParams],
        host_queue: QueueConfig,
        lb: LoadBalancing,
        seed: u64,
    ) -> Network {
        let n = topo.roles.len();
        let kinds: Vec<NodeKind> = topo
            .roles
            .iter()
            .map(|r| match r {
                NodeRole::Host => NodeKind::Host,
                NodeRole::Switch => NodeKind::Switch,
            })
            .collect();
        // Group directed links by owner so a node's ports are contiguous. The link's
        // index and end pick what it sets for itself (`Topology::overrides`).
        let mut adj: Vec<Vec<(u32, u8, usize, usize)>> = vec![Vec::new(); n];
        for (i, &(a, b, t)) in topo.links.iter().enumerate() {
            adj[a as usize].push((b, t, i, 0));
            adj[b as usize].push((a, t, i, 1));
        }
        let mut ports = Vec::with_capacity(topo.links.len() * 2);
        let mut port_start = Vec::with_capacity(n + 1);
        // BCube's hosts relay others' packets: their interfaces are switch ports of
        // their level and take its queue (their own packets still wait for room in it).
        let relaying_hosts = topo.kind.bcube().is_some();
        for (node, nbrs) in adj.iter().enumerate() {
            port_start.push(ports.len() as u32);
            for &(peer, tier, link, end) in nbrs {
                let mut p = tier_params[tier as usize];
                let mut qcfg = if kinds[node] == NodeKind::Host && !relaying_hosts {
                    host_queue
                } else {
                    p.queue
                };
                if let Some(own) = topo.overrides.get(link) {
                    p.rate = own.rate.unwrap_or(p.rate);
                    p.delay = own.delay.unwrap_or(p.delay);
                    qcfg = own.queue[end].unwrap_or(qcfg);
                }
                ports.push(Port {
                    owner: node as u32,
                    peer,
                    reverse: u32::MAX,
                    rwndq: NO_RWNDQ,
                    tier,
                    rate: p.rate,
                    delay: p.delay,
                    busy_until: 0,
                    txdone_pending: false,
                    defers_tx_done: false,
                    paused: 0,
                    queue: OutQueue::new(qcfg),
                    tx_packets: 0,
                    tx_bytes: 0,
                    busy_time: 0,
                    fault: NO_FAULT,
                    fault_drops: 0,
                    remote: false,
                });
            }
        }
        port_start.push(ports.len() as u32);
        // RED's idle decay counts the empty queue in 1500-byte transmission times.
        for (i, port) in ports.iter_mut().enumerate() {
            let red = tier_params[port.tier as usize].red;
            if let (Some(cfg), NodeKind::Switch) = (red, kinds[port.owner as usize]) {
                let rng = Rng::new(seed, stream::QUEUE, i as u64);
                port.queue
                    .start_red(cfg, port.rate.serialization(1500), rng);
            }
            // RED-style marking (never with RED on the same queue) takes the same stream.
            let ecn_red = tier_params[port.tier as usize].ecn_red;
            if let (Some(cfg), NodeKind::Switch) = (ecn_red, kinds[port.owner as usize]) {
                let rng = Rng::new(seed, stream::QUEUE, i as u64);
                port.queue.start_ecn_red(cfg, rng);
            }
            // Trimming (never with RED or RED-style marking) takes the same stream.
            let trim = tier_params[port.tier as usize].trim;
            if let (Some(cfg), NodeKind::Switch) = (trim, kinds[port.owner as usize]) {
                let rng = Rng::new(seed, stream::QUEUE, i as u64);
                port.queue.start_trim(cfg, rng);
            }
        }
        // Each port's reverse: the peer's port back to its owner. Parallel links between
        // two nodes pair up in order.
        for p in 0..ports.len() {
            if ports[p].reverse != u32::MAX {
                continue;
            }
            let (a, b) = (ports[p].owner, ports[p].peer);
            let q = (port_start[b as usize]..port_start[b as usize + 1])
                .find(|&q| ports[q as usize].peer == a && ports[q as usize].reverse == u32::MAX)
                .expect("every link has two directions");
            ports[p].reverse = q;
            ports[q as usize].reverse = p as u32;
        }
        let mut rwndq = Vec::new();
        let mut rwndq_node = vec![false; n];
        for port in ports.iter_mut() {
            let owner = port.owner as usize;
            if kinds[owner] != NodeKind::Switch {
                continue;
            }
            if let Some(cfg) = tier_params[port.tier as usize].rwndq {
                port.rwndq = rwndq.len() as u32;
                rwndq.push(RwndqPort::new(cfg));
                rwndq_node[owner] = true;
            }
        }

        let n_hosts = topo.n_hosts;
        let mut host_nic = vec![0; n_hosts as usize];
        let mut host_edge = vec![NO_ROUTE; n_hosts as usize];
        let mut host_down_port = vec![NO_ROUTE; n_hosts as usize];
        for h in 0..n_hosts as usize {
            let p = port_start[h];
            host_nic[h] = p;
            let sw = ports[p as usize].peer;
            host_edge[h] = sw;
            for q in port_start[sw as usize]..port_start[sw as usize + 1] {
                if ports[q as usize].peer == h as u32 {
                    host_down_port[h] = q;
                }
            }
        }
        let mut edge_index = vec![NO_ROUTE; n];
        let mut edges = Vec::new();
        for &sw in &host_edge {
            if edge_index[sw as usize] == NO_ROUTE {
                edge_index[sw as usize] = edges.len() as u32;
                edges.push(sw);
            }
        }
        let mut host_target: Vec<u32> = host_edge.iter().map(|&e| edge_index[e as usize]).collect();
        // A host of a switched fabric with several NICs is a routing target of its own:
        // routes lead to the nearest of its NICs. (BCube's hosts relay along pinned
        // routes instead.)
        let nics = |h: usize| port_start[h + 1] - port_start[h];
        let multi_nic = !relaying_hosts && (0..n_hosts as usize).any(|h| nics(h) > 1);
        if multi_nic {
            for (h, target) in host_target.iter_mut().enumerate() {
                if nics(h) > 1 {
                    *target = edges.len() as u32;
                    edges.push(h as u32);
                }
            }
        }
        let mut switch_index = vec![NO_ROUTE; n];
        let mut n_switches = 0u32;
        for (i, k) in kinds.iter().enumerate() {
            if *k == NodeKind::Switch {
                switch_index[i] = n_switches;
                n_switches += 1;
            }
        }
        let n_edges = edges.len() as u32;
        let n_ports = ports.len();
        let salt = (0..n as u64)
            .map(|i| Rng::new(seed, stream::SWITCH, i).next_u64())
            .collect();
        let spray_rng = (0..n as u64)
            .map(|i| Rng::new(seed, stream::SWITCH, i + (1 << 32)))
            .collect();
        let mut net = Network {
            kinds,
            names: topo.names.clone(),
            tiers: topo.tiers.clone(),
            port_start,
            ports,
            n_hosts,
            host_nic,
            multi_nic,
            host_edge,
            host_down_port,
            host_target,
            switch_index,
            n_edges,
            route: Vec::new(),
            sets: Vec::new(),
            set_ports: Vec::new(),
            salt,
            lb,
            spray_rng,
            faults: Vec::new(),
            unrouted: vec![false; n_ports],
            seed,
            edges,
            rwndq,
            rwndq_node,
            pinned: Vec::new(),
            pinned_hops: Vec::new(),
        };
        net.compute_routes();
        net
    }

    /// Fills the routing tables, avoiding the `unrouted` ports: at every switch, the
    /// next hops on shortest paths towards each edge switch.
    pub(crate) fn compute_routes(&mut self) {
        let n = self.kinds.len();
        let (kinds, ports, port_start) = (&self.kinds, &self.ports, &self.port_start);
        let unrouted = &self.unrouted;
        let n_edges = self.n_edges;
        let switch_index = &self.switch_index;
        let n_switches = switch_index.iter().filter(|&&i| i != NO_ROUTE).count() as u32;
        let mut route = vec![NO_ROUTE; (n_switches * n_edges) as usize];
        let mut sets: Vec<(u32, u32)> = Vec::new();
        let mut set_ports: Vec<u32> = Vec::new();
        let mut set_ids: HashMap<Vec<u32>, u32> = HashMap::new();
        let mut dist = vec![u32::MAX; n];
        let mut frontier = VecDeque::new();
        for (ei, &edge) in self.edges.iter().enumerate() {
            dist.iter_mut().for_each(|d| *d = u32::MAX);
            dist[edge as usize] = 0;
            frontier.clear();
            frontier.push_back(edge);
            // An edge target is a switch; a host with several NICs is its own target,
            // reached over any of them.
            let target = edge as usize;
            while let Some(u) = frontier.pop_front() {
                for p in port_start[u as usize]..port_start[u as usize + 1] {
                    let v = ports[p as usize].peer;
                    if kinds[v as usize] == NodeKind::Switch
                        && dist[v as usize] == u32::MAX
                        && !unrouted[p as usize]
                    {
                        dist[v as usize] = dist[u as usize] + 1;
                        frontier.push_back(v);
                    }
                }
            }
            for s in 0..n {
                if kinds[s] != NodeKind::Switch || s as u32 == edge || dist[s] == u32::MAX {
                    continue;
                }
                let hops: Vec<u32> = (port_start[s]..port_start[s + 1])
                    .filter(|&p| {
                        let v = ports[p as usize].peer as usize;
                        (kinds[v] == NodeKind::Switch || v == target)
                            && dist[v] + 1 == dist[s]
                            && !unrouted[p as usize]
                    })
                    .collect();
                let id = *set_ids.entry(hops.clone()).or_insert_with(|| {
                    sets.push((set_ports.len() as u32, hops.len() as u32));
                    set_ports.extend_from_slice(&hops);
                    sets.len() as u32 - 1
                });
                route[(switch_index[s] * n_edges + ei as u32) as usize] = id;
            }
        }
        self.route = route;
        self.sets = sets;
        self.set_ports = set_ports;
    }

    /// Whether the link of `port`, which has faults, loses the packet now crossing it.
    #[inline]
    pub fn link_loses(&mut self, port: u32, hash: u32) -> bool {
        let f = self.ports[port as usize].fault;
        self.faults[f as usize].loses(hash)
    }

    /// The output port a switch uses for `pkt`, or `None` if the destination is
    /// unreachable from it.
    #[inline]
    pub fn next_port(&mut self, node: u32, dst: u32, hash: u32) -> Option<u32> {
        let dst = dst as usize;
        let edge = self.host_edge[dst];
        if edge == node {
            return Some(self.host_down_port[dst]);
        }
        let set = self.route
            [(self.switch_index[node as usize] * self.n_edges + self.host_target[dst]) as usize];
        if set == NO_ROUTE {
            return None;
        }
        let (start, len) = self.sets[set as usize];
        if len == 1 {
            return Some(self.set_ports[start as usize]);
        }
        let i = match self.lb {
            LoadBalancing::Ecmp => {
                let h = mix64(hash as u64 ^ self.salt[node as usize]);
                ((h as u128 * len as u128) >> 64) as u32
            }
            LoadBalancing::Spray => self.spray_rng[node as usize].below(len as u64) as u32,
        };
        Some(self.set_ports[(start + i) as usize])
    }

    /// The NIC host `src` sends a packet with flow hash `hash` on: its only one, or, for
    /// a host with several, one picked by the hash (ECMP at the host).
    #[inline]
    pub fn source_port(&self, src: u32, hash: u32) -> u32 {
        let first = self.host_nic[src as usize];
        if !self.multi_nic {
            return first;
        }
        self.pick_nic(src, hash)
    }

    #[inline(never)]
    fn pick_nic(&self, src: u32, hash: u32) -> u32 {
        let nics = self.ports_of(src);
        let n = nics.end - nics.start;
        let h = mix64(hash as u64 ^ self.salt[src as usize]);
        nics.start + ((h as u128 * n as u128) >> 64) as u32
    }

    /// A NIC of host `src` without room for a packet of `wire` bytes, if any (a host
    /// with several NICs waits until all have room, as it does not know which its
    /// endpoint's next packet takes).
    pub fn full_nic(&self, src: u32, wire: u32) -> Option<u32> {
        self.ports_of(src)
            .find(|&p| !self.ports[p as usize].queue.has_room(wire))
    }

    /// The port pinned route `route` leaves `node` by, or `None` if `node` is not on it.
    /// A route has a few hops, so a scan is as quick as anything.
    #[inline]
    pub fn pinned_port(&self, node: u32, route: u32) -> Option<u32> {
        let (start, len) = self.pinned[route as usize];
        self.pinned_hops[start as usize..(start + len) as usize]
            .iter()
            .find(|h| h.0 == node)
            .map(|h| h.1)
    }

    /// The first port of pinned route `route` (the NIC its packets leave by), if any.
    pub fn pinned_first(&self, route: u32) -> Option<u32> {
        let (start, len) = self.pinned[route as usize];
        (len > 0).then(|| self.pinned_hops[start as usize].1)
    }

    /// The ports of pinned route `route`, the source's NIC first (read when results are
    /// collected).
    pub fn pinned_ports(&self, route: u32) -> impl Iterator<Item = u32> + '_ {
        let (start, len) = self.pinned[route as usize];
        self.pinned_hops[start as usize..(start + len) as usize]
            .iter()
            .map(|h| h.1)
    }

    /// Number of host ports (hosts are nodes 0..n_hosts, so their ports come first).
    pub fn host_ports(&self) -> usize {
        self.port_start[self.n_hosts as usize] as usize
    }

    /// Stores a route given as the ports it crosses (the source's NIC first) and returns
    /// its id, which pinned packets carry. Called at connection setup, never per packet.
    pub fn pin(&mut self, ports: &[u32]) -> u32 {
        self.pinned
            .push((self.pinned_hops.len() as u32, ports.len() as u32));
        for &p in ports {
            self.pinned_hops.push((self.ports[p as usize].owner, p));
        }
        self.pinned.len() as u32 - 1
    }

    /// Appends to `out` the ports of equal-cost path `index` from host `src` to host
    /// `dst`, the source's NIC first; false if there is no path. Paths are numbered in
    /// mixed radix over the choice points met from the source: at each switch with
    /// several equal-cost next hops (in port order, i.e. in the order the topology
    /// joins them), the choice is `index` modulo their number and the rest of the index
    /// (the quotient) goes on to the next choice point; so consecutive indices leave the
    /// source's switch by different next hops. `index` is first reduced modulo the
    /// number of paths (`ecmp_paths`), so every index names a path.
    pub fn indexed_path(&mut self, src: u32, dst: u32, index: u32, out: &mut Vec<u32>) -> bool {
        let n = self.ecmp_paths(src, dst);
        if n == 0 {
            return false;
        }
        let mut rest = index % n;
        let nic = self.host_nic[src as usize];
        self.walk_path(nic, dst, out, |net, node| {
            if net.host_edge[dst as usize] == node {
                return Some(net.host_down_port[dst as usize]);
            }
            let (start, len) = net.hop_set(node, dst)?;
            let choice = rest % len;
            rest /= len;
            Some(net.set_ports[(start + choice) as usize])
        })
    }

    /// The ports of the way back along `ports` (a path from one host to another).
    pub fn reverse_path(&self, ports: &[u32], out: &mut Vec<u32>) {
        out.extend(ports.iter().rev().map(|&p| self.ports[p as usize].reverse));
    }

    /// The equal-cost next hops at switch `node` towards the edge switch of host `dst`,
    /// as (first, count) in `set_ports`; `None` without a route. Not for `dst`'s own edge
    /// switch, which forwards on `host_down_port`.
    fn hop_set(&self, node: u32, dst: u32) -> Option<(u32, u32)> {
        let set = self.route[(self.switch_index[node as usize] * self.n_edges
            + self.host_target[dst as usize]) as usize];
        (set != NO_ROUTE).then(|| self.sets[set as usize])
    }

    /// Number of equal-cost next hops at `node` towards host `dst` (1 at its edge switch).
    pub fn path_choices(&self, node: u32, dst: u32) -> u32 {
        if self.host_edge[dst as usize] == node {
            return 1;
        }
        self.hop_set(node, dst).map_or(0, |(_, len)| len)
    }

    /// Number of equal-cost paths from host `src` to host `dst`: the product of the
    /// next-hop choices along one shortest path (exact for the symmetric topologies here).
    pub fn ecmp_paths(&self, src: u32, dst: u32) -> u32 {
        let mut node = self.ports[self.host_nic[src as usize] as usize].peer;
        let mut paths = 1u32;
        for _ in 0..64 {
            if self.kinds[node as usize] != NodeKind::Switch {
                break;
            }
            let choices = self.path_choices(node, dst);
            if choices == 0 {
                return 0;
            }
            paths = paths.saturating_mul(choices);
            if self.host_edge[dst as usize] == node {
                break;
            }
            let (start, _) = self.hop_set(node, dst).expect("a route: choices > 0");
            node = self.ports[self.set_ports[start as usize] as usize].peer;
        }
        paths
    }

    /// Appends to `out` the ports a packet from host `src` to host `dst` with flow hash
    /// `hash` crosses under ECMP, the source's NIC first; false if it cannot get there.
    pub fn ecmp_path(&mut self, src: u32, dst: u32, hash: u32, out: &mut Vec<u32>) -> bool {
        let nic = self.source_port(src, hash);
        self.walk_path(nic, dst, out, |net, node| net.next_port(node, dst, hash))
    }

    /// Appends to `out` the ports from a source host's NIC `nic` to host `dst`, the port
    /// out of each switch on the way chosen by `next(self, switch)`; false if the walk
    /// cannot get there (no port, a host in the way, or more than 64 hops).
    fn walk_path(
        &mut self,
        nic: u32,
        dst: u32,
        out: &mut Vec<u32>,
        mut next: impl FnMut(&mut Network, u32) -> Option<u32>,
    ) -> bool {
        let mut port = nic;
        out.push(port);
        for _ in 0..64 {
            let node = self.ports[port as usize].peer;
            if node == dst {
                return true;
            }
            if self.kinds[node as usize] != NodeKind::Switch {
                return false;
            }
            match next(self, node) {
                Some(p) => port = p,
                None => return false,
            }
            out.push(port);
        }
        false
    }

    pub fn ports_of(&self, node: u32) -> std::ops::Range<u32> {
        self.port_start[node as usize]..self.port_start[node as usize + 1]
    }

    /// Every link at `gbps`, 1 µs, default queues, ECMP, seed 1 (for unit tests).
    #[cfg(test)]
    pub(crate) fn uniform_for_tests(kind: super::topology::TopologyKind, gbps: f64) -> Network {
        let topo = kind.build();
        let p = LinkParams::plain_for_tests(gbps);
        Network::build(
            &topo,
            &vec![p; topo.tiers.len()],
            QueueConfig::default(),
            LoadBalancing::Ecmp,
            1,
        )
    }

    /// The rate of host `h`'s NIC.
    pub fn host_rate(&self, h: u32) -> Rate {
        self.ports[self.host_nic[h as usize] as usize].rate
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::topology::TopologyKind;

    fn net(kind: TopologyKind) -> Network {
        Network::uniform_for_tests(kind, 10.0)
    }

    /// Follows ECMP from `src` to `dst` and returns the nodes visited.
    fn path(n: &mut Network, src: u32, dst: u32, hash: u32) -> Vec<u32> {
        let mut node = n.ports[n.host_nic[src as usize] as usize].peer;
        let mut seen = vec![node];
        while n.kinds[node as usize] == NodeKind::Switch {
            let p = n.next_port(node, dst, hash).unwrap();
            node = n.ports[p as usize].peer;
            seen.push(node);
            assert!(seen.len() < 10);
        }
        seen
    }

    #[test]
    fn fat_tree_paths_have_the_right_length() {
        let mut n = net(TopologyKind::FatTree {
            k: 4,
            oversubscription: 1,
        });
        assert_eq!(path(&mut n, 0, 1, 7).len(), 2); // same edge: edge, host
        assert_eq!(path(&mut n, 0, 2, 7).len(), 4); // same pod: edge, agg, edge, host
        assert_eq!(path(&mut n, 0, 15, 7).len(), 6); // other pod: via a core
        assert_eq!(*path(&mut n, 0, 15, 7).last().unwrap(), 15);
    }

    #[test]
    fn counts_equal_cost_paths() {
        let n = net(TopologyKind::FatTree {
            k: 8,
            oversubscription: 1,
        });
        assert_eq!(n.ecmp_paths(0, 1), 1, "same rack");
        assert_eq!(
            n.ecmp_paths(0, 4),
            4,
            "same pod: one per aggregation switch"
        );
        assert_eq!(n.ecmp_paths(0, 127), 16, "other pod: one per core");
    }

    #[test]
    fn fat_tree_offers_all_equal_cost_choices() {
        let n = net(TopologyKind::FatTree {
            k: 8,
            oversubscription: 1,
        });
        let edge = n.ports[n.host_nic[0] as usize].peer;
        assert_eq!(n.path_choices(edge, 127), 4);
    }

    /// The switches an indexed path visits.
    fn indexed(n: &mut Network, src: u32, dst: u32, index: u32) -> Vec<u32> {
        let mut ports = Vec::new();
        assert!(n.indexed_path(src, dst, index, &mut ports));
        assert_eq!(ports[0], n.host_nic[src as usize]);
        assert_eq!(n.ports[*ports.last().unwrap() as usize].peer, dst);
        ports.iter().map(|&p| n.ports[p as usize].peer).collect()
    }

    #[test]
    fn indexed_paths_follow_the_documented_order() {
        // Leaf-spine: path i goes by spine i.
        let mut n = net(TopologyKind::LeafSpine {
            leaves: 2,
            spines: 3,
            hosts_per_leaf: 2,
        });
        for i in 0..3 {
            let nodes = indexed(&mut n, 0, 2, i);
            assert_eq!(n.names[nodes[1] as usize], format!("spine{i}"));
        }
        assert_eq!(
            indexed(&mut n, 0, 2, 4),
            indexed(&mut n, 0, 2, 1),
            "modulo the paths"
        );
        // Fat tree k = 4 between pods: 4 paths, the aggregation switch is the low digit.
        let mut n = net(TopologyKind::FatTree {
            k: 4,
            oversubscription: 1,
        });
        let paths: Vec<Vec<u32>> = (0..4).map(|i| indexed(&mut n, 0, 15, i)).collect();
        assert_ne!(
            paths[0][1], paths[1][1],
            "0 and 1 differ at the first choice"
        );
        assert_eq!(paths[0][1], paths[2][1]);
        assert_ne!(paths[0][2], paths[2][2], "0 and 2 differ at the core");
        let cores: std::collections::BTreeSet<u32> = paths.iter().map(|p| p[2]).collect();
        assert_eq!(cores.len(), 4, "the four paths use the four cores");
        // Reversed paths end at the source.
        let mut fwd = Vec::new();
        n.indexed_path(0, 15, 3, &mut fwd);
        let mut back = Vec::new();
        n.reverse_path(&fwd, &mut back);
        assert_eq!(back[0], n.host_nic[15]);
        assert_eq!(n.ports[*back.last().unwrap() as usize].peer, 0);
    }

    #[test]
    fn pinned_routes_name_each_nodes_port() {
        let mut n = net(TopologyKind::FusoTestbed {
            hosts_per_rack: 2,
            paths: 3,
        });
        let mut ports = Vec::new();
        n.indexed_path(0, 3, 2, &mut ports);
        let r = n.pin(&ports);
        let tor0 = n.ports[ports[0] as usize].peer;
        assert_eq!(n.pinned_port(tor0, r), Some(ports[1]));
        assert_eq!(n.pinned_port(3, r), None, "the destination is not a hop");
        let r2 = n.pin(&ports[..1]);
        assert_eq!(n.pinned_port(tor0, r2), None);
        assert_eq!(
            n.pinned_port(tor0, r),
            Some(ports[1]),
            "routes are separate"
        );
    }

    #[test]
    fn ecmp_spreads_flows_over_cores() {
        let mut n = net(TopologyKind::FatTree {
            k: 4,
            oversubscription: 1,
        });
        let mut aggs = std::collections::BTreeSet::new();
        let mut cores = std::collections::BTreeSet::new();
        for h in 0..64 {
            let p = path(&mut n, 0, 15, h * 7919);
            aggs.insert(p[1]);
            cores.insert(p[2]);
        }
        assert_eq!(
            aggs.len(),
            2,
            "both aggregation switches of the pod are used"
        );
        assert_eq!(cores.len(), 4, "all four cores are used");
    }
}
