//! Flow hashes: each connection's 5-tuple (hosts, ports, TCP), hashed once at setup per
//! subflow and direction. ECMP mixes the hash with each switch's salt and hash black
//! holes with their port's; the packet level stamps it on every packet of the subflow,
//! and the flow level walks the same ECMP paths with it, so both levels place a
//! scenario's flows alike, collisions included.

use crate::engine::rng::mix64;

fn tuple_hash(src: u32, dst: u32, sport: u16, dport: u16) -> u32 {
    let a = ((src as u64) << 32) | dst as u64;
    let b = ((sport as u64) << 16) | dport as u64 | (6u64 << 32);
    (mix64(a ^ mix64(b)) >> 32) as u32
}

/// Server port of every connection.
const DATA_PORT: u16 = 5001;

/// Source port of subflow 0 of connection `i`; subflow k uses this plus k.
fn source_port(i: usize) -> u16 {
    1024 + ((i * 64) % 64_000) as u16
}

/// The ECMP hash of the data direction (from `src` to `dst`) of subflow `sub` of
/// connection `i`. Distinct source ports per connection and subflow give ECMP distinct
/// 5-tuples (it may still place two subflows on one path, as it would).
pub fn data_hash(i: usize, sub: u16, src: u32, dst: u32) -> u32 {
    tuple_hash(src, dst, source_port(i) + sub, DATA_PORT)
}

/// The ECMP hash of the ACK direction (from `dst` back to `src`) of that subflow.
pub fn ack_hash(i: usize, sub: u16, src: u32, dst: u32) -> u32 {
    tuple_hash(dst, src, DATA_PORT, source_port(i) + sub)
}
