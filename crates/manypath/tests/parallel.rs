//! Runs over several threads give the tables of a one-thread run, bit for bit.

use manypath::sim::parallel::run_parallel;
use manypath::sim::run_plan;
use manypath::{Plan, Results};
use std::path::Path;

fn plan(text: &str) -> Plan {
    Plan::from_toml(text, Path::new(".")).expect("a valid scenario")
}

/// The tables and counters, without the wall-clock time.
fn tables(mut r: Results) -> Results {
    r.counters.wall_secs = 0.0;
    r
}

/// Checks two tables are the same, bit for bit (by their printed values, which round
/// trip floats exactly and take NaN, a queue without a histogram, as equal to itself).
fn same<T: std::fmt::Debug>(one: &[T], many: &[T], what: &str) {
    assert_eq!(one.len(), many.len(), "{what}: row counts");
    for (a, b) in one.iter().zip(many) {
        let (a, b) = (format!("{a:?}"), format!("{b:?}"));
        assert!(a == b, "{what}:\n one thread: {a}\n threads:    {b}");
    }
}

/// Runs `text` on one thread, then on 2, 4 and 16 threads (16 partitions on the
/// machine's cores, however few), and checks every table is the same; returns the
/// one-thread results.
fn same_on_any_threads(text: &str) -> Results {
    same_on_any_split(text, &[])
}

/// `same_on_any_threads`, and also over the partitions `splits` give (per node, its
/// partition, for `parts` partitions on `threads` threads).
fn same_on_any_split(text: &str, splits: &[(usize, usize, Vec<u32>)]) -> Results {
    let one = tables(run_plan(plan(text)));
    let automatic = [(1, 1), (2, 2), (4, 4), (2, 5), (16, 16)]
        .into_iter()
        .map(|(threads, parts)| (threads, parts, None));
    let given = splits
        .iter()
        .map(|(threads, parts, owner)| (*threads, *parts, Some(owner.clone())));
    for (threads, parts, owner) in automatic.chain(given) {
        let split = if owner.is_some() {
            "given"
        } else {
            "automatic"
        };
        let many = tables(run_parallel(
            plan(text),
            threads,
            parts,
            owner,
            u64::MAX,
            |_, _| true,
        ));
        let what = format!("{threads} threads, {parts} partitions ({split})");
        same(
            &[&one.counters],
            &[&many.counters],
            &format!("{what}: counters"),
        );
        same(&one.flows, &many.flows, &format!("{what}: flows"));
        same(&one.subflows, &many.subflows, &format!("{what}: subflows"));
        same(&one.queues, &many.queues, &format!("{what}: queues"));
        same(
            &one.flow_samples,
            &many.flow_samples,
            &format!("{what}: flow series"),
        );
        same(
            &one.queue_samples,
            &many.queue_samples,
            &format!("{what}: queue series"),
        );
    }
    one
}

#[test]
fn a_dctcp_fat_tree_is_the_same_on_any_threads() {
    let r = same_on_any_threads(
        r#"
        duration_ms = 3
        stop_when_done = false
        [topology.fat_tree]
        k = 4
        [network.queue]
        limit_packets = 100
        ecn_k_packets = 20
        [output]
        flow_sample_us = 100
        queue_sample_us = 50
        [[traffic]]
        pattern = "random_pairs"
        transport = "dctcp"
        size = { cdf = "websearch" }
        arrival = "poisson"
        load = 0.4
        [[traffic]]
        pattern = "permutation"
        transport = "dctcp"
        size = "long_lived"
        "#,
    );
    // The run has something to compare: many flows, drops, marks and samples.
    assert!(r.flows.len() >= 20, "{}", r.flows.len());
    assert!(r.counters.flows_completed >= 5);
    assert!(r.queues.iter().map(|q| q.ecn_marks).sum::<u64>() > 0);
    assert!(!r.flow_samples.is_empty() && !r.queue_samples.is_empty());
}

#[test]
fn amp_with_faults_and_a_link_going_down_is_the_same_on_any_threads() {
    let r = same_on_any_threads(
        r#"
        duration_ms = 4
        stop_when_done = false
        [topology.fat_tree]
        k = 4
        [network.queue]
        limit_packets = 60
        ecn_k_packets = 15
        [[traffic]]
        pattern = "permutation"
        transport = "amp"
        size = "long_lived"
        [[traffic]]
        pattern = "random_pairs"
        transport = "mmptcp"
        size = { fixed = 200000 }
        flows = 6
        [[faults]]
        kind = "loss"
        tier = "agg_core"
        probability = 0.002
        [[faults]]
        kind = "link_down"
        from = "agg0.0"
        to = "core0"
        down_us = 1000
        up_us = 2500
        detection_delay_us = 100
        "#,
    );
    assert!(r.counters.fault_drops > 0);
    assert!(!r.subflows.is_empty());
}

#[test]
fn closed_loop_jobs_are_the_same_on_any_threads() {
    let r = same_on_any_threads(
        r#"
        duration_ms = 50
        [topology.fat_tree]
        k = 4
        [[traffic]]
        pattern = "jobs"
        transport = "dctcp"
        size = { fixed = 20000 }
        repeat = 5
        interval_us = 0.5
        jobs = { parallel = 3, fanout = 5, request_bytes = 2048 }
        "#,
    );
    assert_eq!(r.counters.flows_completed, r.flows.len() as u64);
    assert_eq!(r.flows.len(), 3 * 5 * 5 * 2);
}

#[test]
fn rwndq_incast_is_the_same_on_any_threads() {
    let r = same_on_any_threads(
        r#"
        duration_ms = 30
        [topology.fat_tree]
        k = 4
        [network.queue]
        limit_packets = 100
        rwndq = {}
        [[traffic]]
        pattern = "incast"
        transport = "tcp"
        receiver = 0
        senders = 12
        size = { fixed = 300000 }
        "#,
    );
    assert!(r.queues.iter().any(|q| q.rwndq_rewrites > 0));
    assert_eq!(r.counters.flows_completed, 12);
}

/// Nodes `0..n` dealt round-robin over `parts` partitions: every host in another
/// partition than its edge switch and than half its peers, so every message's packets,
/// GRANTs and completion cross partitions.
fn dealt(n: usize, parts: usize) -> Vec<u32> {
    (0..n).map(|i| (i % parts) as u32).collect()
}

#[test]
fn homa_with_losses_is_the_same_on_any_threads() {
    // A k = 4 fat tree has 16 hosts and 20 switches.
    let nodes = 36;
    let r = same_on_any_split(
        r#"
        duration_ms = 3
        stop_when_done = false
        [topology.fat_tree]
        k = 4
        [network.queue]
        limit_packets = 60
        priority_levels = 8
        [transports.homa]
        cc = "homa"
        homa_resend_timeout_us = 100
        [[traffic]]
        pattern = "random_pairs"
        transport = "homa"
        size = { cdf_step = "../../workloads/homa_w4_fb_hadoop.cdf" }
        arrival = "poisson"
        load = 0.7
        [[faults]]
        kind = "loss"
        tier = "agg_core"
        probability = 0.01
        "#,
        &[(2, 2, dealt(nodes, 2)), (3, 3, dealt(nodes, 3))],
    );
    // Something to compare: completed messages, grants, RESENDs and drops.
    assert!(
        r.counters.flows_completed >= 50,
        "{}",
        r.counters.flows_completed
    );
    assert!(r.flows.iter().map(|f| f.recovery.grants).sum::<u32>() > 0);
    assert!(r.flows.iter().map(|f| f.recovery.resends).sum::<u32>() > 0);
    assert!(r.counters.fault_drops > 0);
}

#[test]
fn homa_closed_loop_jobs_are_the_same_on_any_threads() {
    let r = same_on_any_split(
        r#"
        duration_ms = 50
        [topology.fat_tree]
        k = 4
        [network.queue]
        priority_levels = 8
        [transports.homa]
        cc = "homa"
        [[traffic]]
        pattern = "jobs"
        transport = "homa"
        size = { fixed = 20000 }
        repeat = 4
        interval_us = 0.5
        jobs = { parallel = 3, fanout = 5, request_bytes = 2048 }
        "#,
        &[(2, 2, dealt(36, 2))],
    );
    assert_eq!(r.counters.flows_completed, r.flows.len() as u64);
    assert_eq!(r.flows.len(), 3 * 4 * 5 * 2);
}

#[test]
fn persistent_connections_are_the_same_on_any_threads() {
    // Requests on persistent connections whose servers count what the messages' records
    // report: NDP's trimmed headers (8-packet trimming queues, an incast of requests'
    // responses) and TCP-IR's rebuilt segments (losses on the fabric's core links).
    let r = same_on_any_split(
        r#"
        duration_ms = 4
        stop_when_done = false
        [topology.fat_tree]
        k = 4
        [network.queue]
        limit_packets = 100
        trim = {}
        [network.host_queue]
        priority = true
        [tcp]
        sack = true
        tcp_ir = true
        [transports.ndp]
        cc = "ndp"
        [[traffic]]
        pattern = "requests"
        transport = "ndp"
        rate_per_s = 40000
        requests = { clients = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], servers = [12, 13], connections = 2 }
        size = { fixed = 60000 }
        [[traffic]]
        pattern = "requests"
        transport = "tcp"
        rate_per_s = 20000
        requests = { clients = [14, 15], servers = [0, 5, 9], connections = 2 }
        size = { fixed = 40000 }
        [[faults]]
        kind = "loss"
        tier = "agg_core"
        probability = 0.01
        "#,
        &[(2, 2, dealt(36, 2)), (3, 3, dealt(36, 3))],
    );
    assert!(
        r.counters.flows_completed >= 50,
        "{}",
        r.counters.flows_completed
    );
    let sum = |f: fn(&manypath::metrics::FlowRecord) -> u32| r.flows.iter().map(f).sum::<u32>();
    assert!(sum(|f| f.recovery.trimmed) > 0);
    assert!(sum(|f| f.recovery.ir_recovered) > 0);
}
