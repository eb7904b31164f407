//! What a run will need before it runs: the counts that drive its memory (hosts,
//! switches, ports, connections, flows) and an estimate of its peak memory at packet
//! level, from the sizes of the structures it allocates. Calibrated against the peak
//! resident memory of `manypath-sim` on the benchmark scenarios (see `docs/scenarios.md`).

use super::{Conn, Flow};
use crate::metrics::{FlowRecord, QueueRecord};
use crate::net::fabric::FabricPort;
use crate::net::network::Port;
use crate::net::pfc::CLASSES;
use crate::net::shared_buffer::QueueCounters;
use crate::net::topology::NodeRole;
use crate::scenario::Plan;
use crate::workload::generate::Arrival;
use std::mem::size_of;

/// The counts and the estimated peak memory of a plan's run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Estimate {
    pub hosts: u64,
    pub switches: u64,
    /// Output ports (two per link).
    pub ports: u64,
    /// Connections (a flow of its own, each copy, and persistent connections).
    pub connections: u64,
    /// Subflows of all connections (1 per TCP connection).
    pub subflows: u64,
    pub flows: u64,
    /// Simulator replicas the run holds (one per partition over several threads), at
    /// most: `"auto"` counted as on an idle machine.
    pub replicas: u64,
    /// Estimated peak memory of a packet-level run, in bytes.
    pub peak_bytes: u64,
}

/// Bytes of a subflow's sender and receiver beyond their inline parts: boxed settings
/// and counters, reassembly and mapping buffers (measured, not a struct size).
const SUBFLOW_HEAP: u64 = 1500;
/// The process before it allocates anything for the run (code, libraries, allocator).
const BASE: u64 = 3 << 20;
/// Packets a running single-path connection keeps alive (measured on fat trees with
/// DCTCP and web-search traffic: 45–60).
const PACKETS_PER_CONN: u64 = 60;
/// Bytes per packet alive at the peak: the packet and its descriptors, and the event
/// queue's buckets, which keep the capacity of their fullest moment (measured: about
/// 800 bytes per packet of the peak on the benchmark fat trees).
const BYTES_PER_PACKET: u64 = 800;

/// The lossless fabric's state (`net::fabric`), when the plan has a shared buffer or PFC
/// (0 otherwise): per port its record (PFC counters, and a ring of the ingress port of
/// each waiting packet: 4 bytes per packet alive at the peak); per switch with a buffer,
/// each queue's occupancy, class and counters; with PFC, each ingress queue's accounting
/// (reserve and shared use, headroom use, paused) and each ingress port's headroom and
/// overflow count.
///
/// Returns the state's bytes and its bytes per packet alive.
fn fabric_bytes(plan: &Plan) -> (u64, u64) {
    let topo = &plan.topology;
    let buffered: Vec<bool> = topo
        .switch_tiers()
        .iter()
        .map(|t| t.is_some_and(|t| plan.switch_buffers[t as usize].is_some()))
        .collect();
    if !buffered.contains(&true) && plan.pfc.is_none() {
        return (0, 0);
    }
    let mut degree = vec![0u64; topo.roles.len()];
    for &(a, b, _) in &topo.links {
        degree[a as usize] += 1;
        degree[b as usize] += 1;
    }
    let ports = 2 * topo.links.len() as u64;
    let per_queue = (8 + 1 + size_of::<QueueCounters>()) as u64;
    let pfc_per_queue = if plan.pfc.is_some() { 8 + 8 + 1 } else { 0 };
    let pfc_per_port = if plan.pfc.is_some() { 8 + 8 } else { 0 };
    let switches: u64 = degree
        .iter()
        .zip(&buffered)
        .filter(|(_, &b)| b)
        .map(|(&d, _)| d * (CLASSES as u64 * (per_queue + pfc_per_queue) + pfc_per_port))
        .sum();
    (ports * size_of::<FabricPort>() as u64 + switches, 4)
}

/// The counts and the estimated peak memory of `plan`'s packet-level run.
pub fn estimate(plan: &Plan) -> Estimate {
    let topo = &plan.topology;
    let hosts = topo.n_hosts as u64;
    let switches = topo
        .roles
        .iter()
        .filter(|r| match r {
            NodeRole::Switch => true,
            NodeRole::Host => false,
        })
        .count() as u64;
    let ports = 2 * topo.links.len() as u64;
    // Switches with hosts: the routing table has one entry per (switch, edge switch).
    let mut edge = vec![false; topo.roles.len()];
    for &(a, b, _) in &topo.links {
        if a < topo.n_hosts {
            edge[b as usize] = true;
        }
        if b < topo.n_hosts {
            edge[a as usize] = true;
        }
    }
    let edges = edge.iter().filter(|&&e| e).count() as u64;
    let (flows, persistent, flow_entry, _) = plan.workload_entries();
    let (mut connections, mut subflows) = (0u64, 0u64);
    // Per traffic entry, the packets its connections keep alive when all are running:
    // a window's worth per connection and a few per further subflow.
    let mut alive = vec![0u64; plan.traffic.len()];
    let mut add = |transport: u16, entry: usize| {
        let t = &plan.transports[transport as usize];
        connections += t.replicas as u64;
        subflows += t.replicas as u64 * t.subflows as u64;
        alive[entry] += t.replicas as u64 * (PACKETS_PER_CONN + 6 * (t.subflows as u64 - 1));
    };
    for (f, &e) in flows
        .iter()
        .zip(&flow_entry)
        .filter(|(f, _)| f.conn.is_none())
    {
        add(f.transport, e as usize);
    }
    for p in &persistent {
        let t = &plan.transports[p.transport as usize];
        connections += t.replicas as u64;
        subflows += t.replicas as u64 * t.subflows as u64;
    }
    // Open-loop arrivals: only the flows running at once count, about as many as the
    // senders the offered load keeps busy (twice that: heavy tails keep flows open).
    let host_bps = plan.tier_params[0].rate.bits_per_sec() as f64;
    let mut packets = 0u64;
    for (g, &a) in plan.traffic.iter().zip(&alive) {
        packets += match (g.arrival, g.size.mean()) {
            (Arrival::Poisson { rate_per_s }, Some(mean)) => {
                let busy = (2.0 * rate_per_s * mean * 8.0 / host_bps).ceil() as u64;
                a.min(busy.max(1) * PACKETS_PER_CONN)
            }
            (Arrival::Poisson { .. }, None) | (Arrival::AtStart, _) => a,
        };
    }
    let n_flows = flows.len() as u64;
    let host_slots = plan.host_queue.limit_packets.min(256);
    let switch_slots = plan
        .tier_params
        .iter()
        .map(|t| t.queue.limit_packets.min(256))
        .max()
        .unwrap_or(0);
    // No more packets than the queues hold.
    let packets = packets.min(hosts * host_slots + (ports - hosts) * switch_slots);
    let name = 32u64;
    let per_port = size_of::<Port>() as u64 + size_of::<QueueRecord>() as u64 + 2 * name;
    // Every replica of a parallel run holds the whole fabric, its connections and flows;
    // the packets alive are spread over them.
    let replicas = crate::scenario::parallel::replicas_at_most(plan) as u64;
    let (fabric, fabric_per_packet) = fabric_bytes(plan);
    let state = hosts * host_slots * 16
        + (ports - hosts) * switch_slots * 2
        + ports * per_port
        + (hosts + switches) * name
        + switches * edges * 4
        + connections * (size_of::<Conn>() as u64)
        + subflows * SUBFLOW_HEAP
        + n_flows * (size_of::<Flow>() + size_of::<FlowRecord>() + 64) as u64
        + fabric;
    let peak = BASE + replicas * state + packets * (BYTES_PER_PACKET + fabric_per_packet);
    Estimate {
        hosts,
        switches,
        ports,
        connections,
        subflows,
        flows: n_flows,
        replicas,
        peak_bytes: peak,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// The estimate of a permutation of long-lived flows on a k = 4 fat tree, with
    /// `extra` scenario text.
    fn fat_tree_with(extra: &str) -> Estimate {
        let base = r#"
            duration_ms = 1
            [topology.fat_tree]
            k = 4
            [[traffic]]
            pattern = "permutation"
            size = "long_lived"
        "#;
        let plan = Plan::from_toml(&(base.to_string() + extra), Path::new(".")).unwrap();
        estimate(&plan)
    }

    /// The fabric's state counts in the estimate: a shared buffer adds its per-queue
    /// state and each port's record, PFC its ingress accounting on top, and a tier
    /// without a buffer takes its switches' part away.
    #[test]
    fn the_fabric_state_counts() {
        let peak = |extra: &str| fat_tree_with(extra).peak_bytes;
        let plain = peak("");
        let buffer = peak("[network.buffer]\nbytes = 1000000\n");
        let pfc = peak("[network.buffer]\nbytes = 1000000\n[network.pfc]\n");
        let no_core =
            peak("[network.buffer]\nbytes = 1000000\n[network.tiers.agg_core]\nbuffer = false\n");
        // 96 ports with their records; 20 switches of 4 ports, 2 classes each.
        let records = 96 * size_of::<FabricPort>() as u64;
        let queues = 80 * 2 * (9 + size_of::<QueueCounters>() as u64);
        assert!(buffer - plain >= records + queues, "{plain} {buffer}");
        assert_eq!(pfc - buffer, 80 * (2 * 17 + 16));
        // The 4 cores' 16 queues' state is gone; the ports' records stay.
        assert_eq!(
            buffer - no_core,
            16 * 2 * (9 + size_of::<QueueCounters>() as u64)
        );
    }

    /// A run over several threads holds one replica of the fabric's state per
    /// partition, but its packets only once.
    #[test]
    fn each_replica_holds_the_state_once() {
        let one = fat_tree_with("");
        let two = fat_tree_with("[parallel]\nthreads = 2\n");
        let four = fat_tree_with("[parallel]\nthreads = 4\n");
        assert_eq!((one.replicas, two.replicas, four.replicas), (1, 2, 4));
        let state = two.peak_bytes - one.peak_bytes;
        assert_eq!(four.peak_bytes - two.peak_bytes, 2 * state);
        // 16 connections' packets (60 each, 800 bytes) are not in a replica's state.
        assert!(
            state + BASE + 16 * 60 * 800 <= one.peak_bytes,
            "{state} {one:?}"
        );
        assert!(state > 0);
    }
}
