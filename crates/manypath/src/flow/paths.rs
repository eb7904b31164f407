//! Where each subflow goes: a path as a slice of link (port) indices.
//!
//! On switched fabrics (fat tree, VL2, leaf-spine, ...) subflow k of connection i takes
//! the path the packet-level simulator's ECMP would give its 5-tuple: the same hash
//! (`net::hash`), the same per-switch salts, hence one random equal-cost path per
//! subflow, collisions included. BCube's hosts choose among the k+1 edge-disjoint paths
//! of BCube's path set (one leaving on each interface); a connection's subflows take
//! them in a random order (`net::bcube`), so with up to k+1 subflows every subflow
//! leaves on its own interface.

use crate::net::bcube::{bcube_connection, BCubeEnds};
use crate::net::hash::{ack_hash, data_hash};
use crate::net::network::{LinkParams, Network};
use crate::scenario::Plan;
use crate::workload::FlowSpec;
use std::ops::Range;

/// Subflows and their paths in compressed rows.
#[derive(Clone, Debug, Default)]
pub struct Paths {
    /// Connection c owns subflows `conn_start[c]..conn_start[c + 1]`.
    pub conn_start: Vec<u32>,
    /// Subflow s crosses links `links[path_start[s]..path_start[s + 1]]`.
    pub path_start: Vec<u32>,
    pub links: Vec<u32>,
    /// The connection of each subflow.
    pub conn_of: Vec<u32>,
    /// Subflow s's ACKs cross links `ack_links[ack_start[s]..ack_start[s + 1]]`.
    pub ack_start: Vec<u32>,
    pub ack_links: Vec<u32>,
    /// Per connection, the ACK load on the reverse path per unit of data rate (one ACK of
    /// header bytes per full segment).
    pub ack_share: Vec<f64>,
}

impl Paths {
    /// An empty set, to be filled with `push_connection`.
    pub fn new() -> Paths {
        Paths {
            conn_start: vec![0],
            path_start: vec![0],
            links: Vec::new(),
            conn_of: Vec::new(),
            ack_start: vec![0],
            ack_links: Vec::new(),
            ack_share: Vec::new(),
        }
    }

    /// Adds a connection whose subflows take the given paths, without ACK load.
    pub fn push_connection(&mut self, paths: &[Vec<u32>]) {
        self.push_with_acks(paths, &vec![Vec::new(); paths.len()], 0.0);
    }

    /// Adds a connection whose subflows take `paths` and send their ACKs, `ack_share`
    /// of the data rate, along `acks`.
    pub fn push_with_acks(&mut self, paths: &[Vec<u32>], acks: &[Vec<u32>], ack_share: f64) {
        let c = self.conn_start.len() as u32 - 1;
        for (p, a) in paths.iter().zip(acks) {
            self.links.extend_from_slice(p);
            self.path_start.push(self.links.len() as u32);
            self.ack_links.extend_from_slice(a);
            self.ack_start.push(self.ack_links.len() as u32);
            self.conn_of.push(c);
        }
        self.conn_start.push(self.conn_of.len() as u32);
        self.ack_share.push(ack_share);
    }

    #[inline]
    pub fn acks(&self, s: usize) -> &[u32] {
        &self.ack_links[self.ack_start[s] as usize..self.ack_start[s + 1] as usize]
    }

    pub fn n_connections(&self) -> usize {
        self.conn_start.len() - 1
    }

    pub fn n_subflows(&self) -> usize {
        self.conn_of.len()
    }

    #[inline]
    pub fn subflows_of(&self, c: usize) -> Range<usize> {
        self.conn_start[c] as usize..self.conn_start[c + 1] as usize
    }

    #[inline]
    pub fn path(&self, s: usize) -> &[u32] {
        &self.links[self.path_start[s] as usize..self.path_start[s + 1] as usize]
    }

    /// Places every connection's subflows (see the module comment).
    pub fn build(plan: &Plan, net: &mut Network, flows: &[FlowSpec], subflows: &[u32]) -> Paths {
        let mut out = Paths::new();
        let mut scratch: Vec<Vec<u32>> = Vec::new();
        let mut acks: Vec<Vec<u32>> = Vec::new();
        for (i, f) in flows.iter().enumerate() {
            let n = subflows[i] as usize;
            scratch.resize(n, Vec::new());
            acks.resize(n, Vec::new());
            match plan.topology.kind.bcube() {
                Some((ports, k)) => {
                    let at = BCubeEnds {
                        n: ports,
                        k,
                        src: f.src,
                        dst: f.dst,
                    };
                    bcube_connection(net, plan.seed, i, at, &[], &mut scratch[..n]);
                    // ACKs retrace the path: the same hosts relay them.
                    for (p, a) in scratch.iter().zip(acks.iter_mut()) {
                        a.clear();
                        a.extend(p.iter().rev().map(|&l| reverse_port(net, l)));
                    }
                }
                None => {
                    for (s, p) in scratch.iter_mut().enumerate() {
                        p.clear();
                        let hash = data_hash(i, s as u16, f.src, f.dst);
                        let reached = net.ecmp_path(f.src, f.dst, hash, p);
                        debug_assert!(reached, "no route from {} to {}", f.src, f.dst);
                    }
                    for (s, a) in acks.iter_mut().enumerate() {
                        a.clear();
                        let hash = ack_hash(i, s as u16, f.src, f.dst);
                        net.ecmp_path(f.dst, f.src, hash, a);
                    }
                }
            }
            let tcp = &plan.transports[f.transport as usize].tcp;
            let ack_share = tcp.header as f64 / (tcp.mss + tcp.header) as f64;
            out.push_with_acks(&scratch[..n], &acks[..n], ack_share);
        }
        out
    }

    /// Each subflow's round-trip time in seconds: propagation both ways and a full
    /// segment's serialisation at every hop, plus the time to drain a half-full queue at
    /// the path's slowest queue (past the source's own NIC), the standing queue a
    /// loss-driven TCP keeps at its bottleneck.
    pub fn rtts(&self, net: &Network, tiers: &[LinkParams], packet_bits: &[f64]) -> Vec<f64> {
        (0..self.n_subflows())
            .map(|s| {
                let bits = packet_bits[self.conn_of[s] as usize];
                let mut base = 0.0;
                let mut queueing: f64 = 0.0;
                for (h, &l) in self.path(s).iter().enumerate() {
                    let port = &net.ports[l as usize];
                    let rate = port.rate.bits_per_sec() as f64;
                    base += 2.0 * port.delay as f64 / 1e12 + bits / rate;
                    if h > 0 {
                        let q = tiers[port.tier as usize].queue;
                        let limit_bits =
                            (q.limit_packets as f64 * bits).min(q.limit_bytes as f64 * 8.0);
                        queueing = queueing.max(0.5 * limit_bits / rate);
                    }
                }
                base + queueing
            })
            .collect()
    }
}

/// The port of the other direction of `port`'s link.
fn reverse_port(net: &Network, port: u32) -> u32 {
    let p = &net.ports[port as usize];
    net.ports_of(p.peer)
        .find(|&q| net.ports[q as usize].peer == p.owner)
        .expect("links are bidirectional")
}
