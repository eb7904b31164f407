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
    incast_for(n, gap_us, 100, 50, transport, extra)
}

fn incast_for(
    n: u32,
    gap_us: u32,
    duration_ms: u32,
    measure_ms: u32,
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
        delay_us = 1
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
    assert_eq!(q.drops, 0);
}
