//! Lossless fabrics end to end: shared switch buffers, PFC (no loss under incast, pauses
//! spreading upstream, head-of-line blocking of a victim flow) and RED-style marking.

use manypath::metrics::{QueueRecord, Results};
use manypath::run_toml;
use std::path::Path;

/// Two leaves under one spine, four hosts each, 10 Gb/s and 1 µs links. Hosts 0-2
/// (leaf 0) and 5-6 (leaf 1) send 300 kB each to host 7 (leaf 1); a victim flow from host
/// 3 (leaf 0) to host 4 (leaf 1) shares only the leaf 0 → spine → leaf 1 links with the
/// incast, not its bottleneck (leaf 1 → host 7).
fn incast(pfc: bool) -> String {
    incast_with(pfc, "[7, 0, 1, 2, 5, 6]", 300_000, 10)
}

/// `incast` with the incast's hosts (receiver first), flow size and the leaf-spine
/// links' rate.
fn incast_with(pfc: bool, hosts: &str, size: u64, fabric_gbps: u32) -> String {
    let pfc = if pfc { "[network.pfc]\n" } else { "" };
    format!(
        r#"
        duration_ms = 200
        [topology.leaf_spine]
        leaves = 2
        spines = 1
        hosts_per_leaf = 4
        [network.link]
        rate_gbps = 10
        delay_us = 1
        [network.tiers.fabric]
        rate_gbps = {fabric_gbps}
        [network.queue]
        limit_packets = 10000
        [network.buffer]
        bytes = 400000
        alpha = 1.0
        {pfc}
        [tcp]
        rto_min_us = 1000
        [[traffic]]
        pattern = "incast"
        transport = "tcp"
        hosts = {hosts}
        size = {{ fixed = {size} }}
        [[traffic]]
        pattern = "pair"
        transport = "tcp"
        src = 3
        dst = 4
        size = {{ fixed = 1000000 }}
        "#
    )
}

fn port<'a>(r: &'a Results, node: &str, peer: &str) -> &'a QueueRecord {
    r.queues
        .iter()
        .find(|q| q.node == node && q.peer == peer)
        .unwrap_or_else(|| panic!("no port {node} → {peer}"))
}

fn paused_s(q: &QueueRecord) -> f64 {
    (q.pfc_paused_time[0] + q.pfc_paused_time[1]) as f64 / 1e12
}

fn run(text: &str) -> Results {
    run_toml(text, Path::new("."), None).unwrap()
}

#[test]
fn pfc_makes_incast_lossless_and_pauses_spread_upstream() {
    let lossy = run(&incast(false));
    let lossless = run(&incast(true));
    for r in [&lossy, &lossless] {
        assert!(r.counters.conserved(), "{:?}", r.counters);
        assert_eq!(r.counters.flows_completed, 6, "every flow finishes");
    }
    // Without PFC the shared buffer's threshold drops packets; with it nothing is lost.
    assert!(lossy.counters.packets_dropped > 50, "{:?}", lossy.counters);
    assert_eq!(
        lossless.counters.packets_dropped, 0,
        "{:?}",
        lossless.counters
    );
    assert_eq!(lossless.counters.headroom_drops, 0);
    assert!(lossless.queues.iter().all(|q| q.headroom_drops == 0));
    assert_eq!(lossy.counters.pfc_pauses, 0);
    assert!(lossless.counters.pfc_pauses > 0);
    assert!(lossless
        .flows
        .iter()
        .all(|f| f.bytes_retx == 0 && f.timeouts == 0));
    // The last hop's switch (leaf1) pauses its senders: its own hosts' NICs and the
    // spine's port towards it.
    for host in ["host5", "host6"] {
        let nic = port(&lossless, host, "leaf1");
        assert!(
            nic.pfc_pauses_received[0] > 0 && paused_s(nic) > 0.0,
            "{nic:?}"
        );
    }
    let spine_down = port(&lossless, "spine0", "leaf1");
    assert!(paused_s(spine_down) > 0.0, "{spine_down:?}");
    // The pause spreads: the spine's ingress from leaf 0 fills, so leaf 0's uplink is
    // paused, and leaf 0 in turn pauses its senders.
    let leaf0_up = port(&lossless, "leaf0", "spine0");
    assert!(paused_s(leaf0_up) > 0.0, "{leaf0_up:?}");
    assert!(port(&lossless, "spine0", "leaf0").pfc_pauses_sent[0] > 0);
    let nic0 = port(&lossless, "host0", "leaf0");
    assert!(paused_s(nic0) > 0.0, "{nic0:?}");
    // Pause time is exact: never more than the run, and the frames sent on a link are
    // the frames received at its other end.
    for q in &lossless.queues {
        assert!(paused_s(q) <= lossless.counters.sim_time as f64 / 1e12);
    }
    let sent: u64 = lossless.queues.iter().map(|q| q.pfc_pauses_sent[0]).sum();
    let received: u64 = lossless
        .queues
        .iter()
        .map(|q| q.pfc_pauses_received[0])
        .sum();
    assert_eq!(sent, received);
    assert_eq!(sent, lossless.counters.pfc_pauses);
}

#[test]
fn pfc_blocks_a_victim_that_shares_only_an_upstream_link() {
    let fct = |r: &Results| {
        let f = r.flows.iter().find(|f| f.src == 3).expect("the victim");
        f.fct().expect("finished") as f64 / 1e6
    };
    // Hosts 0-2 (leaf 0) send 1 MB each to host 7 (leaf 1): host 7's 10 Gb/s link holds
    // them to 10 Gb/s together, so without PFC the victim (host 3 to host 4) has the
    // rest of the 40 Gb/s leaf 0 → spine → leaf 1 links it shares with them, more than
    // its own NIC's 10 Gb/s. With PFC leaf 1 pauses the spine's port towards it for the
    // incast, and the victim's packets wait in the same queue behind the incast's.
    let scenario = |pfc| incast_with(pfc, "[7, 0, 1, 2]", 1_000_000, 40);
    let (lossy, lossless) = (fct(&run(&scenario(false))), fct(&run(&scenario(true))));
    println!("victim FCT: {lossy:.0} µs without PFC, {lossless:.0} µs with");
    assert!(
        lossless > 1.3 * lossy,
        "victim FCT {lossless:.0} µs with PFC vs {lossy:.0} µs without"
    );
}

#[test]
fn shared_buffer_dynamic_threshold_steady_states() {
    // One switch (a leaf): three senders per receiver keep each receiver's port
    // backlogged. With α = 1 and N busy queues the buffer holds at most N·B/(1 + N),
    // each queue B/(1 + N), and backlogged queues reach that within about an MTU each.
    let bytes: u64 = 600_000;
    for receivers in [1u32, 2] {
        let mut traffic = String::new();
        for r in 0..receivers {
            let dst = 7 - r;
            for k in 0..3 {
                let src = 3 * r + k;
                traffic += &format!(
                    "[[traffic]]\npattern = \"pair\"\ntransport = \"tcp\"\nsrc = {src}\n\
                     dst = {dst}\nsize = \"long_lived\"\n"
                );
            }
        }
        let text = format!(
            r#"
            duration_ms = 30
            [topology.leaf_spine]
            leaves = 1
            spines = 1
            hosts_per_leaf = 8
            [network.queue]
            limit_packets = 100000
            [network.buffer]
            bytes = {bytes}
            alpha = 1.0
            {traffic}
            "#
        );
        let r = run(&text);
        let n = receivers as f64;
        let total = n * bytes as f64 / (1.0 + n);
        let each = bytes as f64 / (1.0 + n);
        let leaf = r.queues.iter().find(|q| q.node == "leaf0").expect("leaf");
        let peak = leaf.buffer_peak_bytes as f64;
        assert!(
            peak <= total + 1500.0 && peak >= total - n * 1500.0,
            "N = {receivers}: peak {peak} vs {total}"
        );
        for k in 0..receivers {
            let q = port(&r, "leaf0", &format!("host{}", 7 - k));
            // Alone (before the other queue fills) a queue may reach B/2; in steady
            // state it shares: its drops come from the threshold, not a full buffer.
            assert!(q.max_bytes as f64 <= bytes as f64 / 2.0 + 1500.0, "{q:?}");
            assert!(q.max_bytes as f64 >= each - 1500.0, "{q:?}");
            assert!(
                q.buffer_drops_threshold > 0 && q.buffer_drops_full == 0,
                "{q:?}"
            );
        }
    }
}

#[test]
fn fabric_runs_are_deterministic() {
    let a = run(&incast(true));
    let b = run(&incast(true));
    // Debug text, as NaN columns (p50 without a histogram) never compare equal.
    assert_eq!(format!("{:?}", a.queues), format!("{:?}", b.queues));
    assert_eq!(format!("{:?}", a.flows), format!("{:?}", b.flows));
    assert_eq!(a.counters.pfc_pauses, b.counters.pfc_pauses);
}

#[test]
fn red_style_marking_marks_between_its_thresholds() {
    // DCTCP through one bottleneck with marking from 20 to 80 kB (pmax 0.2): marks
    // happen, and the queue settles between the thresholds rather than at the limit.
    let text = r#"
        duration_ms = 20
        stop_when_done = false
        [topology.star]
        senders = 4
        [network.queue]
        limit_packets = 200
        ecn_red = { kmin_bytes = 20000, kmax_bytes = 80000, pmax = 0.2 }
        [[traffic]]
        pattern = "incast"
        transport = "dctcp"
        size = "long_lived"
    "#;
    let r = run(text);
    let bottleneck = r
        .queues
        .iter()
        .filter(|q| !q.is_host)
        .max_by_key(|q| q.ecn_marks)
        .expect("a switch port");
    assert!(bottleneck.ecn_marks > 100, "{bottleneck:?}");
    assert!(
        bottleneck.mean_bytes > 10_000.0 && bottleneck.mean_bytes < 90_000.0,
        "{bottleneck:?}"
    );
    assert_eq!(bottleneck.drops, 0, "{bottleneck:?}");
    let again = run(text);
    assert_eq!(format!("{:?}", again.queues), format!("{:?}", r.queues));
}

/// Long-lived all-to-all TCP over a leaf-spine with PFC's dynamic threshold: the shared
/// pool fills from many ingress queues at once, so the threshold falls under queues that
/// are already above it, and their next frame goes to headroom before PAUSE is sent.
/// `headroom` is the `network.pfc` line that sets it (empty: the default).
fn long_lived_pfc(headroom: &str) -> String {
    format!(
        r#"
        duration_ms = 4
        stop_when_done = false
        [topology.leaf_spine]
        leaves = 4
        spines = 2
        hosts_per_leaf = 4
        [network.link]
        rate_gbps = 10
        delay_us = 1
        [network.queue]
        limit_packets = 100000
        [network.buffer]
        bytes = 1000000
        [network.pfc]
        {headroom}
        [[traffic]]
        pattern = "all_to_all"
        transport = "tcp"
        hosts = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]
        size = "long_lived"
        "#
    )
}

/// The default headroom (2·rate·delay + 3 MTU + a PAUSE frame: 7,064 bytes on these
/// 10 Gb/s, 1 µs links with 1,500-byte frames) loses nothing under long-lived
/// congestion; one MTU less (the bound without the triggering frame) overflows.
#[test]
fn default_headroom_has_no_overflow_under_long_lived_congestion() {
    let default = run(&long_lived_pfc(""));
    let c = &default.counters;
    assert!(c.pfc_pauses > 100, "congested enough to pause: {c:?}");
    assert_eq!(c.headroom_drops, 0, "{c:?}");
    assert_eq!(c.packets_dropped, 0, "{c:?}");
    let short = run(&long_lived_pfc("headroom_bytes = 5564"));

    assert!(short.counters.headroom_drops > 0, "{:?}", short.counters);
}
