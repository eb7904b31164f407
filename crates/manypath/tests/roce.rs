//! Whole runs of the RoCE transports: DCQCN's fair share, HPCC's empty queue, go-back-N
//! over a lossy link. No PFC: ample buffers keep the fabric lossless where it must be.

use manypath::metrics::Results;
use manypath::run_toml;
use std::path::Path;

fn run(text: &str) -> Results {
    let r = run_toml(text, Path::new("."), None).unwrap();
    assert!(r.counters.conserved(), "{:?}", r.counters);
    r
}

fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let q: f64 = x.iter().map(|v| v * v).sum();
    s * s / (x.len() as f64 * q)
}

/// The switch port into the star's receiver: the bottleneck of an incast.
fn bottleneck(r: &Results) -> &manypath::metrics::QueueRecord {
    r.queues
        .iter()
        .filter(|q| !q.is_host)
        .max_by_key(|q| q.tx_bytes)
        .unwrap()
}

/// N long-lived flows into one host over 40 Gb/s links, the k-th starting at k·`gap_us`,
/// with the step ECN threshold (RED-style marking is the fabric's, not yet on this
/// branch).
fn incast(n: u32, gap_us: u32, transport: &str, extra: &str) -> String {
    incast_for(n, gap_us, 100, 50, 1, transport, extra)
}

fn incast_for(
    n: u32,
    gap_us: u32,
    duration_ms: u32,
    measure_ms: u32,
    delay_us: u32,
    transport: &str,
    extra: &str,
) -> String {
    let mut text = format!(
        r#"
        duration_ms = {duration_ms}
        measure_from_ms = {measure_ms}
        stop_when_done = false
        [topology.star]
        senders = {n}
        [network.link]
        rate_gbps = 40
        delay_us = {delay_us}
        [network.queue]
        limit_bytes = 20000000
        ecn_k_bytes = 100000
        [output]
        queue_histogram = true
        [transports.{transport}]
        {extra}
        "#
    );
    for k in 0..n {
        text += &format!(
            "[[traffic]]\npattern = \"pair\"\nsrc = {k}\ndst = {n}\nstart_us = {}\ntransport = \"{transport}\"\nsize = \"long_lived\"\n",
            k * gap_us
        );
    }
    text
}

/// The payload rate of a 40 Gb/s link carrying 1000-byte payloads with RoCE headers.
const GOODPUT_40G: f64 = 40e9 * 1000.0 / 1062.0;

#[test]
fn dcqcn_flows_converge_to_a_fair_share_at_full_utilisation() {
    let r = run(&incast(4, 3000, "dcqcn", "cc = \"dcqcn\""));
    let g: Vec<f64> = r.flows.iter().map(|f| f.goodput_bps).collect();
    let q = bottleneck(&r);
    let total: f64 = g.iter().sum();
    eprintln!(
        "dcqcn goodputs {g:?} jain {} util {} cnps {:?} drops {}",
        jain(&g),
        q.utilization,
        r.flows.iter().map(|f| f.recovery.cnps).collect::<Vec<_>>(),
        q.drops
    );
    assert!(jain(&g) >= 0.95, "Jain {} over {g:?}", jain(&g));
    assert!(total >= 0.9 * GOODPUT_40G, "{total}");
    assert!(r.flows.iter().all(|f| f.recovery.cnps > 0));
    // The rates, not the buffer, hold the queue: near the marking threshold (94
    // packets), far from the 20 MB limit.
    assert!(q.p95_packets < 400.0, "p95 {} packets", q.p95_packets);
    assert_eq!(q.drops, 0);
}

#[test]
fn hpcc_keeps_the_bottleneck_queue_near_zero_at_high_utilisation() {
    // Flows join every 2 ms; each new one is absorbed within about a round trip (21 µs
    // here: a BDP of about 95 packets, so that a packet or two of queue is a small part
    // of U), so the time-weighted queue stays near empty.
    let r = run(&incast_for(4, 2000, 20, 8, 5, "hpcc", "cc = \"hpcc\""));
    // Measured with a provisional stamping (the queue a packet found at its switch
    // port): p95 2 packets, goodput 0.91 of the link's payload rate.
    let g: Vec<f64> = r.flows.iter().map(|f| f.goodput_bps).collect();
    let q = bottleneck(&r);
    let total: f64 = g.iter().sum();
    eprintln!(
        "hpcc goodputs {g:?} total {total} p95 {} p99 {} max {} jain {}",
        q.p95_packets,
        q.p99_packets,
        q.max_packets,
        jain(&g)
    );
    assert!(q.p95_packets <= 3.0, "p95 {} packets", q.p95_packets);
    assert!(total >= 0.9 * GOODPUT_40G, "{total}");
    assert_eq!(q.drops, 0);
}

fn lossy(retransmit: &str) -> String {
    format!(
        r#"
        duration_ms = 200
        [topology.fat_tree]
        k = 4
        [network.link]
        rate_gbps = 10
        delay_us = 2
        [network.queue]
        limit_bytes = 10000000
        [transports.qp]
        cc = "roce"
        retransmit = "{retransmit}"
        [[traffic]]
        pattern = "permutation"
        transport = "qp"
        size = {{ fixed = 300000 }}
        [[faults]]
        kind = "loss"
        tier = "agg_core"
        probability = 0.01
        "#
    )
}

#[test]
fn go_back_n_and_selective_complete_every_flow_over_a_lossy_link() {
    let mut retx = Vec::new();
    for scheme in ["go-back-n", "selective"] {
        let r = run(&lossy(scheme));
        assert!(r.counters.fault_drops > 0);
        assert_eq!(r.counters.flows_completed, r.flows.len() as u64, "{scheme}");
        assert!(r.flows.iter().all(|f| f.bytes_acked == 300_000));
        let naks: u32 = r.flows.iter().map(|f| f.recovery.naks).sum();
        let sent: u64 = r.flows.iter().map(|f| f.recovery.packets_retx).sum();
        eprintln!(
            "{scheme}: drops {} naks {naks} retx {sent} timeouts {}",
            r.counters.fault_drops,
            r.flows.iter().map(|f| f.timeouts).sum::<u32>()
        );
        assert!(naks > 0 && sent > 0, "{scheme}");
        retx.push((sent, r.counters.fault_drops));
    }
    // Go-back-N resends the whole flight behind each loss; selective about one packet
    // per loss, plus the flight behind each of its few timeouts (a lost resend or a
    // lost last packet), which both schemes resend whole.
    let ((gbn, gbn_drops), (sel, sel_drops)) = (retx[0], retx[1]);
    assert!(gbn > 5 * gbn_drops, "{gbn} for {gbn_drops} losses");
    assert!(
        sel * gbn_drops * 4 < gbn * sel_drops,
        "selective {sel} for {sel_drops} losses, go-back-N {gbn} for {gbn_drops}"
    );
}

/// Four long-lived line-rate queue pairs of one host, each to its own receiver, and a
/// 10 KB message from the same host starting at 1 ms.
fn busy_host(host_queue_packets: u32) -> String {
    let mut text = format!(
        r#"
        duration_ms = 2
        stop_when_done = false
        [topology.star]
        senders = 4
        [network.link]
        rate_gbps = 40
        delay_us = 1
        [network.queue]
        limit_bytes = 20000000
        [network.host_queue]
        limit_packets = {host_queue_packets}
        [transports.qp]
        cc = "roce"
        "#
    );
    for k in 1..=4 {
        text += &format!(
            "[[traffic]]\npattern = \"pair\"\nsrc = 0\ndst = {k}\ntransport = \"qp\"\nsize = \"long_lived\"\n"
        );
    }
    text + "[[traffic]]\npattern = \"pair\"\nsrc = 0\ndst = 1\nstart_us = 1000\ntransport = \"qp\"\nsize = { fixed = 10000 }\n"
}

#[test]
fn a_small_host_queue_makes_the_nic_serve_queue_pairs_in_turn() {
    let short_fct_us = |q: u32| -> f64 {
        let r = run(&busy_host(q));
        let f = r.flows.iter().find(|f| f.size == Some(10_000)).unwrap();
        // The four long queue pairs share the NIC evenly either way (a FIFO of their
        // interleaved paced packets).
        let g: Vec<f64> = r
            .flows
            .iter()
            .filter(|f| f.size.is_none())
            .map(|f| f.goodput_bps)
            .collect();
        assert!(jain(&g) > 0.99, "{g:?}");
        f.fct().unwrap() as f64 / 1e6
    };
    let deep = short_fct_us(1000);
    let shallow = short_fct_us(4);
    eprintln!("a 10 KB message's FCT behind four line-rate QPs: host queue 1000: {deep} µs, 4: {shallow} µs");
    // Behind a full 1000-packet NIC queue the message waits 1000 packets' time (about
    // 212 µs at 40 Gb/s); with 4 it is served in turn with the parked queue pairs: its
    // 10 packets among 5 queue pairs, about 11 µs, plus the round trip.
    let slot_us = 1062.0 * 8.0 / 40e3;
    assert!(deep > 900.0 * slot_us, "{deep}");
    assert!(shallow < 80.0 * slot_us, "{shallow}");
}

#[test]
fn persistent_queue_pairs_carry_request_after_request_at_their_ideal_fct() {
    // Requests far apart on one queue pair: each finds it idle, leaves at once (no
    // handshake) and is acknowledged one round trip after its last packet, as the
    // ideal FCT has it.
    let r = run(r#"
        duration_ms = 20
        [topology.star]
        senders = 2
        [network.link]
        rate_gbps = 10
        delay_us = 2
        [network.queue]
        limit_packets = 1000
        [transports.qp]
        cc = "roce"
        [[traffic]]
        pattern = "requests"
        rate_per_s = 2000
        requests = { clients = [0], servers = [1], connections = 1 }
        transport = "qp"
        size = { fixed = 5000 }
        "#);
    let done: Vec<_> = r.flows.iter().filter(|f| f.finish.is_some()).collect();
    assert!(done.len() > 10, "{}", done.len());
    for f in done {
        let (fct, ideal) = (f.fct().unwrap(), f.ideal_fct.unwrap());
        assert!(fct.abs_diff(ideal) <= ideal / 100, "{fct} vs {ideal}");
        assert_eq!(f.bytes_acked, 5000);
    }
}
