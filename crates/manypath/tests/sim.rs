//! End-to-end checks of whole runs: conservation, determinism, completion.

use manypath::run_toml;
use std::path::Path;

const INCAST: &str = r#"
    duration_ms = 1000
    [topology.star]
    senders = 8
    [network.link]
    rate_gbps = 10
    delay_us = 5
    [network.queue]
    limit_packets = 50
    [tcp]
    rto_min_us = 10000
    [[traffic]]
    pattern = "incast"
    senders = 8
    size = { fixed = 100000 }
"#;

const FATTREE: &str = r#"
    duration_ms = 5
    stop_when_done = false
    [topology.fat_tree]
    k = 4
    [network.queue]
    limit_packets = 100
    ecn_k_packets = 20
    [[traffic]]
    pattern = "random_pairs"
    transport = "dctcp"
    size = { cdf = "websearch" }
    arrival = "poisson"
    load = 0.3
    [[traffic]]
    pattern = "permutation"
    transport = "tcp"
    size = "long_lived"
    [[faults]]
    kind = "loss"
    tier = "agg_core"
    probability = 0.001
"#;

#[test]
fn every_packet_is_accounted_for() {
    for text in [INCAST, FATTREE] {
        let r = run_toml(text, Path::new("."), None).unwrap();
        let c = &r.counters;
        assert!(c.packets_created > 0);
        assert!(c.conserved(), "{c:?}");
    }
}

#[test]
fn hosts_never_drop_their_own_packets() {
    // Long-lived Reno flows share sending NICs with web-search flows: the NIC is their
    // bottleneck, and backpressure (not drops) must hold them at the NIC's limit.
    let r = run_toml(FATTREE, Path::new("."), None).unwrap();
    for q in r.queues.iter().filter(|q| q.is_host) {
        assert_eq!(q.drops, 0, "{} dropped its own packets", q.node);
        assert!(q.max_packets <= 1000);
    }
    assert!(
        r.queues.iter().any(|q| q.is_host && q.max_packets >= 900),
        "some NIC was the bottleneck"
    );
}

#[test]
fn same_seed_same_results_other_seed_other_results() {
    let a = run_toml(FATTREE, Path::new("."), Some(3)).unwrap();
    let b = run_toml(FATTREE, Path::new("."), Some(3)).unwrap();
    let c = run_toml(FATTREE, Path::new("."), Some(4)).unwrap();
    assert_eq!(a.flows, b.flows);
    // Debug output, since NaN percentiles (no histogram) never compare equal.
    assert_eq!(format!("{:?}", a.queues), format!("{:?}", b.queues));
    assert_eq!(a.counters.events, b.counters.events);
    assert_ne!(a.flows, c.flows);
}

#[test]
fn incast_flows_all_finish_and_bytes_add_up() {
    let r = run_toml(INCAST, Path::new("."), None).unwrap();
    assert_eq!(r.flows.len(), 8);
    for f in &r.flows {
        assert!(f.finish.is_some(), "flow {} unfinished", f.id);
        assert_eq!(f.bytes_acked, 100_000);
        assert!(f.bytes_sent >= 100_000);
        assert!(f.bytes_sent - f.bytes_retx >= 100_000);
    }
    // The receiver's port carried at least every payload byte once, plus headers.
    let to_receiver = r
        .queues
        .iter()
        .find(|q| !q.is_host && q.peer == "host0")
        .unwrap();
    assert!(to_receiver.tx_bytes >= 8 * 100_000);
}

/// A leaf-spine with four spines: a 2-subflow LIA flow pinned to paths 1 and 3 and a
/// TCP flow pinned to path 2, so spine 0 must stay idle.
const PINNED: &str = r#"
    duration_ms = 3
    stop_when_done = false
    [topology.leaf_spine]
    leaves = 2
    spines = 4
    hosts_per_leaf = 2
    [network.queue]
    limit_packets = 100
    [transports.mp]
    cc = "lia"
    subflows = 2
    [[traffic]]
    pattern = "pair"
    src = 0
    dst = 2
    transport = "mp"
    size = "long_lived"
    paths = [1, 3]
    [[traffic]]
    pattern = "pair"
    src = 1
    dst = 3
    size = "long_lived"
    paths = [2]
"#;

#[test]
fn pinned_subflows_follow_their_paths() {
    let r = run_toml(PINNED, Path::new("."), None).unwrap();
    assert!(r.counters.conserved(), "{:?}", r.counters);
    let tx = |node: &str, peer: &str| {
        r.queues
            .iter()
            .find(|q| q.node == node && q.peer == peer)
            .unwrap()
            .tx_bytes
    };
    // Data one way, ACKs back on the same spine.
    for (a, b) in [("leaf0", "spine0"), ("spine0", "leaf1")] {
        assert_eq!(tx(a, b), 0, "{a} -> {b} carries nothing");
        assert_eq!(tx(b, a), 0, "{b} -> {a} carries nothing");
    }
    for s in ["spine1", "spine2", "spine3"] {
        assert!(tx("leaf0", s) > 1_000_000, "data goes by {s}");
        assert!(tx(s, "leaf1") > 1_000_000, "data goes by {s}");
        assert!(tx("leaf1", s) > 10_000, "ACKs come back by {s}");
    }
    // Each data path carries its subflow's bytes: at least those acknowledged, at most
    // those handed to the NIC, with headers.
    let sub = r.subflows.iter().filter(|s| s.flow == 0);
    for (s, spine) in sub.zip(["spine1", "spine3"]) {
        let bytes = tx(spine, "leaf1");
        assert!(
            bytes >= s.bytes_acked && (bytes as f64) < s.bytes_sent as f64 * 1.05,
            "subflow {}: {} bytes acked, {} sent, {bytes} on {spine}",
            s.subflow,
            s.bytes_acked,
            s.bytes_sent,
        );
    }
}

#[test]
fn stopped_flows_send_nothing_after_their_stop() {
    let sent = |text: &str| run_toml(text, Path::new("."), None).unwrap().flows[1].bytes_sent;
    let stopped = PINNED.replace("paths = [2]", "paths = [2]\n    stop_us = 1000");
    let r = run_toml(&stopped, Path::new("."), None).unwrap();
    assert!(r.counters.conserved(), "{:?}", r.counters);
    assert!(r.flows[1].finish.is_none());
    let after = r.flows[1].bytes_sent;
    // What the flow had handed to its NIC by 0.99 ms and by 1 ms, without a stop.
    let by = |ms: &str| sent(&PINNED.replace("duration_ms = 3", &format!("duration_ms = {ms}")));
    let (early, at) = (by("0.99"), by("1"));
    assert!(early < at && at < sent(PINNED) / 2);
    assert!(after > early && after <= at, "{early} < {after} <= {at}");
}

/// BCube(4, 1): host 0 = (0, 0) sends to host 5 = (1, 1) on path 1 of the path set:
/// out of its level-1 interface to host 4 = (1, 0), which relays it to host 5 at level 0.
const BCUBE: &str = r#"
    duration_ms = 10
    stop_when_done = false
    [topology.bcube]
    n = 4
    k = 1
    [[traffic]]
    pattern = "pair"
    src = 0
    dst = 5
    size = "long_lived"
    paths = [1]
"#;

#[test]
fn bcube_hosts_relay_along_pinned_paths() {
    let r = run_toml(BCUBE, Path::new("."), None).unwrap();
    assert!(r.counters.conserved(), "{:?}", r.counters);
    assert_eq!(r.counters.route_drops, 0);
    let tx = |node: &str, tier: &str| {
        r.queues
            .iter()
            .find(|q| q.node == node && q.tier == tier)
            .unwrap()
            .tx_bytes
    };
    assert_eq!(
        tx("host0", "level0"),
        0,
        "path 1 leaves by the level-1 interface"
    );
    assert!(tx("host0", "level1") > 1_000_000);
    assert!(tx("host4", "level0") > 1_000_000, "host 4 relays the data");
    assert!(tx("host5", "level0") > 10_000, "ACKs go back the same way");
    assert_eq!(tx("host5", "level1"), 0);
    assert!(r.flows[0].goodput_bps > 8e9, "{}", r.flows[0].goodput_bps);
}

#[test]
fn bcube_rejects_what_it_cannot_route() {
    let e = run_toml(
        &BCUBE.replace("paths = [1]", "paths = [2]"),
        Path::new("."),
        None,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("traffic[0].paths[0]: path index 2 is out of range"),
        "{e}"
    );
    let mmptcp = BCUBE.replace("paths = [1]", "transport = \"mmptcp\"");
    let e = run_toml(&mmptcp, Path::new("."), None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("traffic[0].transport: MMPTCP"), "{e}");
}

#[test]
fn closed_loop_jobs_start_when_the_job_before_has_ended() {
    // Distributed reads on a small fat tree: 2 loops of 5 jobs, each a 2 KB request to
    // each of 3 servers answered with 20 KB; 30 µs think time between jobs.
    let text = r#"
        duration_ms = 200
        [topology.fat_tree]
        k = 4
        [network.link]
        delay_us = 2
        [[traffic]]
        pattern = "jobs"
        transport = "dctcp"
        size = { fixed = 20000 }
        repeat = 5
        interval_us = 30
        jobs = { parallel = 2, fanout = 3, request_bytes = 2048 }
    "#;
    let r = run_toml(text, Path::new("."), None).unwrap();
    assert_eq!(r.flows.len(), 2 * 5 * 3 * 2);
    let flows_of = |job: i64| r.flows.iter().filter(move |f| f.job == job);
    for slot in 0..2i64 {
        for k in 0..5i64 {
            let job = slot * 5 + k;
            let start = flows_of(job).map(|f| f.start).min().unwrap();
            for f in flows_of(job) {
                assert!(f.finish.is_some(), "job {job} flow {} unfinished", f.id);
                let answer = f.size == Some(20_000);
                if answer {
                    // It started when its request finished, told across the fabric
                    // in one smallest link delay (2 µs): the finish is seen at the
                    // request's sender, the answer leaves its receiver.
                    let req = &r.flows[f.id as usize - 1];
                    assert_eq!(req.size, Some(2048));
                    assert_eq!(Some(f.start), req.finish.map(|t| t + 2_000_000));
                } else {
                    assert_eq!(f.start, start, "requests start with the job");
                }
            }
            if k > 0 {
                let end = flows_of(job - 1).map(|f| f.finish.unwrap()).max().unwrap();
                assert_eq!(
                    start,
                    end + 30_000_000,
                    "job {job} starts 30 µs after the last"
                );
            }
        }
    }
    assert!(r.counters.conserved());
}

/// One long-lived TCP flow alone on a 10 Gbps dumbbell: its host's interface is its
/// bottleneck and stays backlogged.
fn lone_flow(jitter_us: f64) -> String {
    format!(
        r#"
    duration_ms = 20
    warmup_ms = 5
    [topology.dumbbell]
    pairs = 1
    [network]
    host_jitter_us = {jitter_us}
    [network.link]
    rate_gbps = 10
    delay_us = 5
    [[traffic]]
    pattern = "pair"
    src = 0
    dst = 1
    size = "long_lived"
"#
    )
}

#[test]
fn send_jitter_idles_a_backlogged_interface_by_half_the_width_per_packet() {
    // A 1500-byte packet takes S = 1.2 µs at 10 Gbps; with jitter w the interface sends
    // one every S + w/2 on average, i.e. at S/(S + w/2) of its line rate.
    let line = 10e9 * 1460.0 / 1500.0;
    for (w, share) in [(0.0, 1.0), (1.2, 2.0 / 3.0), (2.4, 0.5)] {
        let r = run_toml(&lone_flow(w), Path::new("."), None).unwrap();
        assert!(r.counters.conserved());
        let goodput = r.flows[0].goodput_bps;
        assert!(
            (goodput / (line * share) - 1.0).abs() < 0.02,
            "jitter {w} µs: goodput {goodput:.4e}, expected {:.4e}",
            line * share
        );
        let nic = r.queues.iter().find(|q| q.node == "host0").unwrap();
        assert!(nic.max_packets > 500, "the interface is backlogged");
        // The hold is idle time: the wire is busy only while serialising.
        assert!(
            (nic.utilization / share - 1.0).abs() < 0.03,
            "{}",
            nic.utilization
        );
    }
}
