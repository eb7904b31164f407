//! Whole runs of NDP on trimming switches: a permutation on a k = 4 fat tree at line
//! rate, and an incast of 64 senders whose trimmed packets are all resent on NACKs and
//! PULLs, with no timeout and nothing lost.

use manypath::metrics::Results;
use manypath::run_toml;
use std::path::Path;

fn run(text: &str) -> Results {
    let r = run_toml(text, Path::new("."), None).unwrap();
    assert!(r.counters.conserved(), "{:?}", r.counters);
    r
}

/// A permutation of long-lived flows on a k = 4 fat tree (16 hosts), 10 Gb/s and 1 µs
/// links, 8-packet trimming queues (`queue`: the queue's trimming settings, or none), in
/// htsim's NDP configuration: a first window of 15 packets (its `cwnd`) and host NICs
/// that send control packets before data (its priority host queues).
fn permutation(queue: &str) -> String {
    format!(
        r#"
        duration_ms = 4
        measure_from_ms = 1
        [topology.fat_tree]
        k = 4
        [network.link]
        rate_gbps = 10
        delay_us = 1
        [network.queue]
        limit_packets = 100
        {queue}
        [network.host_queue]
        priority = true
        [transports.ndp]
        cc = "ndp"
        window_bytes = 135000
        [[traffic]]
        pattern = "permutation"
        transport = "ndp"
        size = "long_lived"
        "#
    )
}

/// NDP fills the hosts' links: the permutation's aggregate goodput is at least 90% of
/// the hosts' capacity (its payload is 8936 of 9000 bytes on the wire), and no flow is
/// left behind.
#[test]
fn a_permutation_on_a_k4_fat_tree_reaches_90_percent_of_host_capacity() {
    let r = run(&permutation("trim = {}"));
    let g = r.goodput_fraction();
    assert!(g >= 0.9, "goodput {g}");
    assert!(r.flows.iter().all(|f| f.timeouts == 0));
    // Each flow, sprayed over every path, gets most of its host's link.
    let slowest = r
        .flows
        .iter()
        .map(|f| f.goodput_bps)
        .fold(f64::MAX, f64::min);
    assert!(slowest > 0.8 * 10e9, "slowest flow {slowest} b/s");
}

/// `n` senders of a star each send `size` bytes to one receiver at once.
fn incast(n: u32, size: u64, trim: &str) -> String {
    let mut text = format!(
        r#"
        duration_ms = 200
        [topology.star]
        senders = {n}
        [network.link]
        rate_gbps = 10
        delay_us = 1
        [network.queue]
        limit_packets = 100
        trim = {trim}
        [transports.ndp]
        cc = "ndp"
        "#
    );
    for k in 0..n {
        text += &format!(
            "[[traffic]]\npattern = \"pair\"\nsrc = {k}\ndst = {n}\ntransport = \"ndp\"\nsize = {{ fixed = {size} }}\n"
        );
    }
    text
}

/// The port into the receiver.
fn bottleneck(r: &Results) -> &manypath::metrics::QueueRecord {
    r.queues
        .iter()
        .filter(|q| !q.is_host)
        .max_by_key(|q| q.tx_bytes)
        .unwrap()
}

/// 64 senders of 90 KB each: every first window beyond the 8-packet queue is trimmed,
/// the headers reach the receiver, whose NACKs and paced PULLs bring every packet
/// again: every flow completes, no timeout, nothing dropped, and the receiver's link
/// is busy throughout.
#[test]
fn an_incast_of_64_completes_with_no_timeout_and_nothing_lost() {
    let r = run(&incast(64, 90_000, "{}"));
    assert!(r.flows.iter().all(|f| f.finish.is_some()));
    assert!(r.flows.iter().all(|f| f.timeouts == 0));
    let q = bottleneck(&r);
    assert!(q.trimmed > 64, "trimmed {}", q.trimmed);
    assert_eq!((q.drops, q.header_drops), (0, 0));
    assert_eq!(r.counters.packets_dropped, 0);
    let retx: u64 = r.flows.iter().map(|f| f.recovery.packets_retx).sum();
    let nacks: u64 = r.flows.iter().map(|f| f.recovery.nacks as u64).sum();
    assert_eq!(retx, q.trimmed, "each trimmed packet is resent once");
    assert_eq!(nacks, q.trimmed);
    // The last flow finishes when the receiver's link has carried everything.
    let last = r.flows.iter().filter_map(|f| f.finish).max().unwrap() as f64 / 1e12;
    let bytes = 64.0 * 90_000.0 * 9000.0 / 8936.0;
    let ideal = bytes * 8.0 / 10e9;
    assert!(last < ideal * 1.1, "last finish {last} s, ideal {ideal} s");
}

/// With a header queue of 4, headers are dropped (only there) and the flows recover by
/// timeouts; returning them to their senders instead recovers without.
#[test]
fn a_small_header_queue_drops_headers_or_returns_them() {
    let r = run(&incast(32, 45_000, "{ header_queue_packets = 4 }"));
    let q = bottleneck(&r);
    assert!(q.header_drops > 0);
    assert_eq!(q.drops, q.header_drops);
    assert!(r.flows.iter().all(|f| f.finish.is_some()));
    assert!(r.flows.iter().any(|f| f.timeouts > 0));
    let r = run(&incast(
        32,
        45_000,
        "{ header_queue_packets = 4, return_to_sender = true }",
    ));
    let q = bottleneck(&r);
    assert!(q.returned > 0);
    assert!(r.flows.iter().all(|f| f.finish.is_some()));
}

/// One long-lived flow at line rate: data reaches the receiver a full packet's time
/// apart, so its host's pacer is idle each time an ACK asks for a PULL and the PULL rides
/// on the ACK (htsim's pull bit): the receiver's NIC sends one control packet per data
/// packet, where separate PULLs would make it two.
#[test]
fn at_line_rate_each_pull_rides_on_its_ack() {
    let text = r#"
        duration_ms = 2
        [topology.star]
        senders = 1
        [network.link]
        rate_gbps = 10
        delay_us = 1
        [network.queue]
        limit_packets = 100
        trim = {}
        [transports.ndp]
        cc = "ndp"
        [[traffic]]
        pattern = "pair"
        src = 0
        dst = 1
        transport = "ndp"
        size = "long_lived"
        "#;
    let r = run(text);
    let nic = |name: &str| {
        r.queues
            .iter()
            .find(|q| q.is_host && q.node == name)
            .unwrap()
            .tx_packets
    };
    let (data, control) = (nic("host0"), nic("host1"));
    assert!(data > 250, "{data} data packets");
    let ratio = control as f64 / data as f64;
    assert!(
        (0.98..=1.02).contains(&ratio),
        "{control} control packets for {data} data packets"
    );
    // Every data packet after the first window was pulled, nearly all by ACKs.
    let f = &r.flows[0];
    assert!(f.recovery.pulls as f64 > 0.98 * (f.recovery.packets_sent as f64 - 2.0));
    assert!(f.goodput_bps > 9.5e9, "goodput {} b/s", f.goodput_bps);
}
