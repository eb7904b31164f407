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
    let one = tables(run_plan(plan(text)));
    for (threads, parts) in [(1, 1), (2, 2), (4, 4), (2, 5), (16, 16)] {
        let many = tables(run_parallel(
            plan(text),
            threads,
            parts,
            None,
            u64::MAX,
            |_, _| true,
        ));
        let what = format!("{threads} threads, {parts} partitions");
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
