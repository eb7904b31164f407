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

#[test]
fn closed_loop_jobs_start_when_the_job_before_has_ended() {
    // Distributed reads on a small fat tree: 2 loops of 5 jobs, each a 2 KB request to
    // each of 3 servers answered with 20 KB; 30 µs think time between jobs.
    let text = r#"
        duration_ms = 200
        [topology.fat_tree]
        k = 4
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
                    // It started when its request finished.
                    let req = &r.flows[f.id as usize - 1];
                    assert_eq!(req.size, Some(2048));
                    assert_eq!(Some(f.start), req.finish);
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
