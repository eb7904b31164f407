//! Runs over several threads give the tables of a one-thread run, bit for bit.

use manypath::capture::trace::TraceKind;
use manypath::capture::Observed;
use manypath::sim::parallel::{run_parallel, run_parallel_observing};
use manypath::sim::{run_plan, run_plan_observing};
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

/// Checks every table of `many` is `one`'s.
fn same_tables(one: &Results, many: &Results, what: &str) {
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

/// Runs `text` on one thread, then on 2, 4 and 16 threads (16 partitions on the
/// machine's cores, however few), and checks every table is the same; returns the
/// one-thread results.
fn same_on_any_threads(text: &str) -> Results {
    same_on_any_threads_and_splits(text, &[])
}

/// The runs over threads every table is checked on: 1, 2, 4 and 16 threads with the
/// automatic split (16 partitions on the machine's cores, however few), and each of
/// `splits` (per node, its partition; see `split`) on 1, 2 and 4 threads (at most one
/// per partition). Each as (threads, partitions, the split, its name).
fn configurations(splits: &[Vec<u32>]) -> Vec<(usize, usize, Option<Vec<u32>>, String)> {
    let automatic = [(1, 1), (2, 2), (4, 4), (2, 5), (16, 16)]
        .map(|(t, p)| (t, p, None, format!("{t} threads, {p} partitions")));
    let given = splits.iter().enumerate().flat_map(|(k, owner)| {
        let parts = *owner.iter().max().expect("nodes") as usize + 1;
        [1, 2, 4]
            .into_iter()
            .filter(move |&t| t <= parts)
            .map(move |t| {
                let what = format!("{t} threads, split {k} ({parts} partitions)");
                (t, parts, Some(owner.clone()), what)
            })
    });
    automatic.into_iter().chain(given).collect()
}

/// `same_on_any_threads`, and also on each of `splits` (`configurations`).
fn same_on_any_threads_and_splits(text: &str, splits: &[Vec<u32>]) -> Results {
    let one = tables(run_plan(plan(text)));
    for (threads, parts, owner, what) in configurations(splits) {
        let many = tables(run_parallel(
            plan(text),
            threads,
            parts,
            owner,
            u64::MAX,
            |_, _| true,
        ));
        same_tables(&one, &many, &what);
    }
    one
}

/// A split of `text`'s fabric: per node, the partition `part` gives its name.
fn split(text: &str, part: impl Fn(&str) -> u32) -> Vec<u32> {
    plan(text).topology.names.iter().map(|n| part(n)).collect()
}

/// The number in a node's name (`host12` → 12).
fn number(name: &str) -> u32 {
    name.trim_start_matches(|c: char| c.is_ascii_alphabetic())
        .parse()
        .expect("a numbered node")
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

/// A lossless leaf-spine (three leaves, one spine) with RED-style marking: four
/// long-lived flows into a host of leaf 2 (one from leaf 0, three from leaf 1), and a
/// victim from leaf 0 to leaf 1 that shares only leaf 0's uplink with them, all of
/// `transport` (DCQCN or HPCC) over RoCE. The leaf-spine links are 3 µs long, three
/// synchronisation steps (the 1 µs host links'): frames crossing them are due several
/// windows ahead.
fn lossless_incast(transport: &str) -> String {
    format!(
        r#"
        duration_ms = 3
        stop_when_done = false
        [topology.leaf_spine]
        leaves = 3
        spines = 1
        hosts_per_leaf = 4
        [network.link]
        rate_gbps = 10
        delay_us = 1
        [network.tiers.fabric]
        delay_us = 3
        [network.queue]
        limit_bytes = 400000
        priority = true
        [network.queue.ecn_red]
        kmin_bytes = 40000
        kmax_bytes = 160000
        pmax = 0.2
        [network.buffer]
        bytes = 400000
        alpha = 8.0
        [network.pfc]
        alpha = 0.125
        reserve_bytes = 4096
        resume_offset_bytes = 3072
        [transports.rdma]
        cc = "{transport}"
        retransmit = "go-back-n"
        ack_every = 1
        window = false
        payload_bytes = 1000
        [output]
        flow_sample_us = 100
        queue_sample_us = 50
        [[traffic]]
        pattern = "incast"
        transport = "rdma"
        priority = 1
        hosts = [8, 0, 5, 6, 7]
        size = "long_lived"
        [[traffic]]
        pattern = "pair"
        transport = "rdma"
        priority = 1
        src = 1
        dst = 4
        size = "long_lived"
        "#
    )
}

/// Splits that cut the pause paths: every switch alone and the hosts dealt round the
/// partitions (most hosts away from their leaf, so their NICs are paused from another
/// partition); and the leaves with their hosts, the spine alone.
fn lossless_splits(text: &str) -> Vec<Vec<u32>> {
    vec![
        split(text, |n| match n {
            "spine0" => 0,
            "leaf0" => 1,
            "leaf1" => 2,
            "leaf2" => 3,
            host => number(host) % 4,
        }),
        split(text, |n| match n {
            "spine0" => 0,
            "leaf0" | "leaf1" | "leaf2" => number(n) + 1,
            host => number(host) / 4 + 1,
        }),
    ]
}

#[test]
fn dcqcn_over_pfc_is_the_same_on_any_threads_and_splits() {
    let text = lossless_incast("dcqcn");
    let r = same_on_any_threads_and_splits(&text, &lossless_splits(&text));
    let c = &r.counters;
    // Pauses happen (and spread back to leaf 0's uplink, which the victim shares), with
    // nothing lost; and DCQCN reacts to marks.
    assert!(c.pfc_pauses > 10 && c.pfc_resumes > 10, "{c:?}");
    assert_eq!((c.packets_dropped, c.headroom_drops), (0, 0), "{c:?}");
    let up = r
        .queues
        .iter()
        .find(|q| q.node == "leaf0" && q.peer == "spine0")
        .expect("leaf 0's uplink");
    assert!(up.pfc_paused_time[1] > 0, "{up:?}");
    assert!(r
        .queues
        .iter()
        .any(|q| q.is_host && q.pfc_pauses_received[1] > 0));
    assert!(r.queues.iter().map(|q| q.ecn_marks).sum::<u64>() > 0);
    assert!(r.queue_samples.iter().any(|s| s.buffer_bytes > 0));
    assert!(!r.flow_samples.is_empty());
}

#[test]
fn hpcc_over_pfc_is_the_same_on_any_threads_and_splits() {
    let text = lossless_incast("hpcc");
    let r = same_on_any_threads_and_splits(&text, &lossless_splits(&text));
    assert!(r.counters.pfc_pauses > 0, "{:?}", r.counters);
}

#[test]
fn shared_buffers_with_dynamic_thresholds_are_the_same_on_any_threads() {
    // Lossy: TCP incasts into two hosts through switches whose 150 kB buffers share
    // out by the dynamic threshold (α = 1), with background pairs.
    let r = same_on_any_threads(
        r#"
        duration_ms = 4
        stop_when_done = false
        [topology.fat_tree]
        k = 4
        [network.queue]
        limit_packets = 1000
        [network.buffer]
        bytes = 150000
        alpha = 1.0
        [output]
        queue_sample_us = 50
        [[traffic]]
        pattern = "incast"
        transport = "tcp"
        hosts = [0, 4, 5, 8, 9, 12, 13]
        size = "long_lived"
        [[traffic]]
        pattern = "incast"
        transport = "dctcp"
        hosts = [15, 1, 2, 6, 10]
        size = { fixed = 200000 }
        [[traffic]]
        pattern = "random_pairs"
        transport = "tcp"
        size = { fixed = 50000 }
        flows = 10
        "#,
    );
    let threshold: u64 = r.queues.iter().map(|q| q.buffer_drops_threshold).sum();
    assert!(threshold > 0, "the dynamic threshold drops");
    assert!(r.queues.iter().any(|q| q.buffer_peak_bytes > 50_000));
    assert!(r.queue_samples.iter().any(|s| s.buffer_bytes > 0));
}

/// The shipped deadlock (two failed links make routing bounce traffic, closing a cycle
/// of paused ports leaf0 → spine0 → leaf1 → spine1 → leaf0) stops at the same check,
/// with the same message, on any threads: with the cycle's four switches in four
/// partitions, so no partition sees the cycle alone.
#[test]
fn a_pfc_deadlock_stops_the_same_on_any_threads_and_splits() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/pfc-deadlock-link-failures.toml"
    ))
    .expect("the shipped scenario");
    let splits = [
        // Each leaf with its hosts, spine 0 with leaf 2, spine 1 with leaf 3.
        split(&text, |n| match n {
            "spine0" => 2,
            "spine1" => 3,
            leaf if leaf.starts_with("leaf") => number(leaf),
            host => number(host) / 4,
        }),
        // The cycle's switches apart, the hosts dealt round.
        split(&text, |n| match n {
            "leaf0" | "leaf2" => 0,
            "spine0" => 1,
            "leaf1" | "leaf3" => 2,
            "spine1" => 3,
            host => number(host) % 4,
        }),
    ];
    let r = same_on_any_threads_and_splits(&text, &splits);
    let c = &r.counters;
    assert_eq!(c.deadlocks, 1, "{c:?}");
    assert!(c.partial && c.sim_time < 10_000_000_000, "{c:?}");
    for port in [
        "leaf0→spine0",
        "spine0→leaf1",
        "leaf1→spine1",
        "spine1→leaf0",
    ] {
        assert!(c.deadlock_message.contains(port), "{}", c.deadlock_message);
    }
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
    let r = same_on_any_threads_and_splits(
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
        &[dealt(nodes, 2), dealt(nodes, 3)],
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
fn pfabric_with_drops_is_the_same_on_any_threads() {
    // 13-packet pFabric queues at 70% load: the queues drop the least urgent packets and
    // the senders recover by timeouts, with every host's packets crossing partitions.
    let nodes = 36;
    let r = same_on_any_threads_and_splits(
        r#"
        duration_ms = 2
        stop_when_done = false
        [topology.fat_tree]
        k = 4
        [network.queue]
        limit_bytes = 19499
        pfabric = true
        [network.host_queue]
        pfabric = true
        [transports.pf]
        cc = "pfabric"
        [[traffic]]
        pattern = "random_pairs"
        transport = "pf"
        size = { cdf_step = "../../workloads/homa_w4_fb_hadoop.cdf" }
        arrival = "poisson"
        load = 0.7
        "#,
        &[dealt(nodes, 2), dealt(nodes, 3)],
    );
    assert!(
        r.counters.flows_completed >= 50,
        "{}",
        r.counters.flows_completed
    );
    assert!(r.counters.packets_dropped > 0, "{:?}", r.counters);
    assert!(r.flows.iter().map(|f| f.timeouts).sum::<u32>() > 0);
}

#[test]
fn ndp_on_trimming_queues_is_the_same_on_any_threads() {
    // A permutation of NDP flows on small trimming queues (they trim, fill their header
    // queues and return headers to their senders), sampled: links between partitions
    // defer no `TxDone` and so fix fewer headers, and the tables and the event count
    // are the same.
    let nodes = 36;
    let r = same_on_any_threads_and_splits(
        r#"
        duration_ms = 2
        [topology.fat_tree]
        k = 4
        [network.link]
        rate_gbps = 10
        delay_us = 1
        [network.queue]
        limit_packets = 3
        trim = { threshold_packets = 2, header_queue_packets = 3, header_weight = 1, return_to_sender = true }
        [network.host_queue]
        priority = true
        [transports.ndp]
        cc = "ndp"
        window_bytes = 135000
        [output]
        queue_sample_us = 36
        [[traffic]]
        pattern = "permutation"
        transport = "ndp"
        size = "long_lived"
        "#,
        &[dealt(nodes, 2), dealt(nodes, 3)],
    );
    let trimmed: u64 = r.queues.iter().map(|q| q.trimmed).sum();
    assert!(
        trimmed > 0 && r.counters.packet_hops > 20_000,
        "{trimmed} trimmed"
    );
}

#[test]
fn homa_closed_loop_jobs_are_the_same_on_any_threads() {
    let r = same_on_any_threads_and_splits(
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
        &[dealt(36, 2)],
    );
    assert_eq!(r.counters.flows_completed, r.flows.len() as u64);
    assert_eq!(r.flows.len(), 3 * 4 * 5 * 2);
}

#[test]
fn persistent_connections_are_the_same_on_any_threads() {
    // Requests on persistent connections whose servers count what the messages' records
    // report: NDP's trimmed headers (8-packet trimming queues, an incast of requests'
    // responses) and TCP-IR's rebuilt segments (losses on the fabric's core links).
    let r = same_on_any_threads_and_splits(
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
        &[dealt(36, 2), dealt(36, 3)],
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

#[test]
fn pooled_connections_are_the_same_on_any_threads() {
    // Responses that take an idle connection of their pair's pool, or open one: the pick
    // is the sender's, whichever partition runs the receiver.
    let r = same_on_any_threads_and_splits(
        r#"
        duration_ms = 4
        stop_when_done = false
        [topology.fat_tree]
        k = 4
        [[traffic]]
        pattern = "requests"
        transport = "dctcp"
        rate_per_s = 60000
        requests = { clients = [0, 1, 2, 3, 4, 5, 6, 7], servers = [12, 13], connections = 1, pick = "idle" }
        size = { fixed = 30000 }
        "#,
        &[dealt(36, 2), dealt(36, 3)],
    );
    assert!(
        r.counters.flows_completed >= 150,
        "{}",
        r.counters.flows_completed
    );
}

/// Runs `text` (a scenario with `[output.pcap]` and `[output.trace]`) on one thread,
/// then in every configuration of `splits` (`configurations`), and checks the capture
/// file and the trace are the one-thread run's, byte for byte and event for event, with
/// the same counts of what the caps left out; returns the one-thread run's.
fn same_observed_on_any_threads_and_splits(text: &str, splits: &[Vec<u32>]) -> Observed {
    let (_, one) = run_plan_observing(plan(text), u64::MAX, |_, _| true);
    let one = one.expect("a capture and a trace");
    let (pcap, trace) = (
        one.pcap.as_ref().expect("a capture"),
        one.trace.as_ref().expect("a trace"),
    );
    for (threads, parts, owner, what) in configurations(splits) {
        let (_, many) =
            run_parallel_observing(plan(text), threads, parts, owner, u64::MAX, |_, _| true);
        let many = many.expect("a capture and a trace");
        let many_pcap = many.pcap.as_ref().expect("a capture");
        if let Some(at) = pcap.iter().zip(many_pcap).position(|(a, b)| a != b) {
            panic!("{what}: the capture differs from byte {at} on");
        }
        assert_eq!(pcap.len(), many_pcap.len(), "{what}: the capture's length");
        let counts = |o: &Observed| (o.capture_packets, o.capture_missed, o.trace_missed);
        assert_eq!(
            counts(&one),
            counts(&many),
            "{what}: packets, packets and events left out"
        );
        let many_trace = many.trace.as_ref().expect("a trace");
        assert_eq!(trace.len(), many_trace.len(), "{what}: trace events");
        if let Some(at) = trace.iter().zip(many_trace).position(|(a, b)| a != b) {
            panic!(
                "{what}: trace event {at}: {:?} on one thread, {:?} here",
                trace[at], many_trace[at]
            );
        }
    }
    one
}

/// A k = 4 fat tree under DCTCP with short queues (drops and marks), the ports of one
/// edge, one aggregation and one core switch captured (with their drops) and traced,
/// with `pcap` and `trace` added to their tables (caps).
fn observed_fat_tree(pcap: &str, trace: &str) -> String {
    format!(
        r#"
        duration_ms = 2
        stop_when_done = false
        [topology.fat_tree]
        k = 4
        [network.queue]
        limit_packets = 12
        ecn_k_packets = 6
        [[traffic]]
        pattern = "random_pairs"
        transport = "dctcp"
        size = {{ cdf = "websearch" }}
        arrival = "poisson"
        load = 0.6
        [[traffic]]
        pattern = "permutation"
        transport = "dctcp"
        size = "long_lived"
        [output.pcap]
        hosts = [0, 9]
        ports = [{{ node = "edge0.0", peer = "agg0.0" }}, {{ node = "agg0.0", peer = "core0" }},
                 {{ node = "core0", peer = "agg2.0" }}, {{ node = "agg2.0", peer = "edge2.0" }},
                 {{ node = "edge2.0", peer = "host8" }}, {{ node = "agg1.1", peer = "edge1.1" }}]
        drops = true
        {pcap}
        [output.trace]
        hosts = [3]
        ports = [{{ node = "edge0.0", peer = "agg0.1" }}, {{ node = "core0", peer = "agg2.0" }},
                 {{ node = "agg2.0", peer = "edge2.0" }}, {{ node = "edge2.0", peer = "host8" }},
                 {{ node = "edge3.1", peer = "host15" }}, {{ node = "agg1.1", peer = "edge1.1" }}]
        {trace}
        "#
    )
}

/// How many of a trace's events are of `kind`.
fn count(o: &Observed, kind: TraceKind) -> usize {
    o.trace
        .as_ref()
        .map_or(0, |t| t.iter().filter(|e| e.kind == kind).count())
}

#[test]
fn capture_and_trace_are_the_same_on_any_threads_and_splits() {
    // A k = 4 fat tree has 16 hosts and 20 switches: dealt round-robin, hosts are away
    // from their edge switch, and the captured ports' packets cross partitions.
    let text = observed_fat_tree("", "");
    let o = same_observed_on_any_threads_and_splits(&text, &[dealt(36, 3)]);
    // Something to compare: many packets, drops (on their interfaces, and traced) and
    // marks, nothing left out.
    assert!(o.capture_packets > 2_000, "{}", o.capture_packets);
    assert_eq!((o.capture_missed, o.trace_missed), (0, 0));
    assert!(count(&o, TraceKind::Drop) > 10 && count(&o, TraceKind::Mark) > 10);
}

#[test]
fn capped_capture_and_trace_keep_the_same_records_on_any_threads() {
    // The caps fall inside the run: the records kept are the first the one-thread run
    // makes, which are not the earliest in time (a packet's start is recorded as it
    // joins a queue), so the merge keeps the first in event order, not in time.
    let text = observed_fat_tree("max_packets = 700", "max_events = 1500");
    let o = same_observed_on_any_threads_and_splits(&text, &[dealt(36, 2)]);
    assert_eq!(o.capture_packets, 700);
    assert!(o.capture_missed > 1_000 && o.trace_missed > 1_000, "{o:?}");
}

#[test]
fn traced_trims_red_and_pauses_are_the_same_on_any_threads() {
    // NDP's trimming queues (trims, dropped and returned headers) and RED queues
    // (each packet through the queue, its start an event of its own instant)...
    let ndp = r#"
        duration_ms = 1
        stop_when_done = false
        [topology.fat_tree]
        k = 4
        [network.queue]
        limit_packets = 8
        trim = {}
        [transports.ndp]
        cc = "ndp"
        [[traffic]]
        pattern = "incast"
        transport = "ndp"
        receiver = 0
        senders = 12
        size = "long_lived"
        [output.pcap]
        hosts = [0]
        ports = [{ node = "edge0.0", peer = "host0" }, { node = "agg0.0", peer = "edge0.0" }]
        drops = true
        [output.trace]
        hosts = [0, 5]
        ports = [{ node = "edge0.0", peer = "host0" }, { node = "agg0.0", peer = "edge0.0" },
                 { node = "agg0.1", peer = "edge0.0" }]
        "#;
    let o = same_observed_on_any_threads_and_splits(ndp, &[dealt(36, 3)]);
    assert!(count(&o, TraceKind::Trim) > 10, "{o:?}");
    let red = observed_fat_tree("", "").replace(
        "ecn_k_packets = 6\n",
        "red = { min_packets = 3, max_packets = 9 }\n",
    );
    let o = same_observed_on_any_threads_and_splits(&red, &[dealt(36, 3)]);
    assert!(count(&o, TraceKind::Drop) > 10);
    // ... and PFC pauses, on splits that cut the pause paths.
    let lossless = lossless_incast("dcqcn")
        + r#"
        [output.pcap]
        hosts = [0, 8]
        [output.trace]
        hosts = [0, 5, 8]
        ports = [{ node = "leaf0", peer = "spine0" }, { node = "spine0", peer = "leaf2" }]
        "#;
    let o = same_observed_on_any_threads_and_splits(&lossless, &lossless_splits(&lossless));
    assert!(count(&o, TraceKind::Pause) > 10, "{o:?}");
}
