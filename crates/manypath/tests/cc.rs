//! The delay-based controllers over a real bottleneck: where they hold its queue.

use manypath::run_toml;
use std::path::Path;

/// `senders` long-lived flows of transport `sw` (defined by `transport`) into one
/// receiver of a star at 10 Gbps with 1 µs links.
fn incast(senders: u32, transport: &str) -> String {
    format!(
        r#"
    duration_ms = 30
    warmup_ms = 10
    [topology.star]
    senders = {senders}
    [network.link]
    rate_gbps = 10
    delay_us = 1
    [network.queue]
    limit_packets = 2000
    [output]
    queue_histogram = true
    [transports.sw]
    {transport}
    [[traffic]]
    pattern = "incast"
    senders = {senders}
    transport = "sw"
    size = "long_lived"
"#
    )
}

/// Swift's target over the star (2 hops one way) for a window of `cwnd` packets, with
/// the defaults (25 µs base, 1 µs per hop, flow scaling of 125 µs over 0.1..100 packets).
fn swift_target_us(cwnd: f64) -> f64 {
    let alpha = 125.0 / (1.0 / 0.1f64.sqrt() - 1.0 / 100f64.sqrt());
    let fs = (alpha / cwnd.sqrt() - alpha / 100f64.sqrt()).clamp(0.0, 125.0);
    25.0 + 2.0 * 1.0 + fs
}

/// N Swift flows into one bottleneck hold its queue where the RTT meets the target:
/// queueing delay = target − base RTT, the target's flow scaling evaluated at the
/// window each flow then has (its share of the bandwidth-delay product at the target).
#[test]
fn swift_holds_the_queue_at_its_target_delay() {
    // Base RTT over the star: two 1 µs links each way, a 1500-byte segment out
    // (1.2 µs per link) and a 40-byte ACK back (0.032 µs per link).
    let base_rtt = 2.0 * (1.0 + 1.2) + 2.0 * (1.0 + 0.032);
    for n in [4u32, 16] {
        let r = run_toml(&incast(n, r#"cc = "swift""#), Path::new("."), None).unwrap();
        let q = r
            .queues
            .iter()
            .max_by(|a, b| a.utilization.total_cmp(&b.utilization))
            .unwrap();
        // The fixed point: each flow's window is its share of the bottleneck's
        // bandwidth-delay product at the target, w = C·target/(N·1500 B) packets
        // (C = 1250 bytes per µs).
        let mut target = 40.0;
        for _ in 0..50 {
            let w = 1250.0 * target / 1500.0 / n as f64;
            target = swift_target_us(w);
        }
        let expect = target - base_rtt;
        let delay = q.p50_packets * 1.2;
        eprintln!(
            "N={n}: util {:.3} p50 {:.1} mean {:.1} max {} pkts: delay {delay:.1} µs, expected {expect:.1}",
            q.utilization, q.p50_packets, q.mean_packets, q.max_packets
        );
        assert!(q.utilization >= 0.9, "utilization {}", q.utilization);
        assert_eq!(q.drops, 0);
        assert!(
            (delay / expect - 1.0).abs() < 0.25,
            "delay {delay} vs {expect}"
        );
    }
}
