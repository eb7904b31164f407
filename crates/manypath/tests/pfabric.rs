//! Whole runs of pFabric: its switch queues serve the flow with the fewest bytes left
//! first (a short flow passes a long one at a shared link), drop the least urgent
//! packets when full, and its senders recover every loss by timeouts alone.

use manypath::metrics::Results;
use manypath::run_toml;
use std::path::Path;

fn run(text: &str) -> Results {
    let r = run_toml(text, Path::new("."), None).unwrap();
    assert!(r.counters.conserved(), "{:?}", r.counters);
    r
}

/// The pFabric ns-2 buffer as the Homa authors ran it: 13 packets of 1,500 bytes, where
/// an arrival that would reach the limit overflows.
const BUFFER: &str = "limit_bytes = 19499";

/// Senders 0.. of a star send `sizes[i]` bytes each to the last host, starting at
/// `starts_us[i]`, over 10 Gb/s links of 1 µs; every queue pFabric's or FIFO.
fn star(sizes: &[u64], starts_us: &[u64], pfabric: bool) -> String {
    let n = sizes.len();
    let mut text = format!(
        r#"
        duration_ms = 50
        [topology.star]
        senders = {n}
        [network.link]
        rate_gbps = 10
        delay_us = 1
        [network.queue]
        {BUFFER}
        pfabric = {pfabric}
        [network.host_queue]
        pfabric = {pfabric}
        [transports.pf]
        cc = "pfabric"
        "#
    );
    for (i, (size, start)) in sizes.iter().zip(starts_us).enumerate() {
        text += &format!(
            r#"
            [[traffic]]
            pattern = "pair"
            src = {i}
            dst = {n}
            size = {{ fixed = {size} }}
            start_us = {start}
            transport = "pf"
            "#
        );
    }
    text
}

/// Flow completion times in µs, in the order of the traffic entries.
fn fcts_us(r: &Results) -> Vec<f64> {
    let mut flows: Vec<_> = r.flows.iter().collect();
    flows.sort_by_key(|f| f.src);
    flows
        .iter()
        .map(|f| (f.finish.expect("finished") - f.start) as f64 / 1e6)
        .collect()
}

/// A 100 KB flow that starts while a 2 MB flow fills the receiver's link: at pFabric
/// queues it has priority (fewer bytes left) and finishes within 10% of its time alone
/// on the path (`ideal_fct`); at a FIFO (of 100 packets, so that both keep sending) it
/// shares the link and takes about twice as long. The long flow finishes after it.
#[test]
fn a_short_flow_passes_a_long_one_at_pfabric_queues() {
    let sizes = [2_000_000, 100_000];
    let starts = [0, 300];
    let r = run(&star(&sizes, &starts, true));
    let pf = fcts_us(&r);
    let fifo_text = star(&sizes, &starts, false).replace(BUFFER, "limit_packets = 100");
    let fifo = fcts_us(&run(&fifo_text));
    let short = r.flows.iter().find(|f| f.src == 1).unwrap();
    let ideal = short.ideal_fct.unwrap() as f64 / 1e6;
    eprintln!("pFabric queues: {pf:?} µs; FIFO: {fifo:?} µs; the short flow alone {ideal} µs");
    assert!(
        pf[1] < 1.1 * ideal,
        "short flow at pFabric queues: {} µs",
        pf[1]
    );
    assert!(
        fifo[1] > 1.6 * pf[1],
        "FIFO {} µs against pFabric {} µs",
        fifo[1],
        pf[1]
    );
    assert!(pf[0] + starts[0] as f64 > pf[1] + starts[1] as f64);
}

/// Eight flows of 20–160 KB start at once into one receiver: its 13-packet buffer drops
/// the least urgent packets, every flow recovers by timeouts alone (no fast retransmit),
/// and they finish in the order of their sizes, each about when shortest-remaining-
/// first would finish it: the smallest within twice its time alone (sharing the link
/// eight ways, it would take about five times as long).
#[test]
fn an_incast_finishes_in_size_order_with_losses_recovered() {
    let sizes: Vec<u64> = (1..=8).rev().map(|k| k * 20_000).collect();
    let r = run(&star(&sizes, &[0; 8], true));
    let fct = fcts_us(&r);
    eprintln!("FCTs {fct:?} µs, drops {}", r.counters.packets_dropped);
    assert!(r.counters.packets_dropped > 0, "the buffer overflowed");
    let timeouts: u32 = r.flows.iter().map(|f| f.timeouts).sum();
    assert!(timeouts > 0);
    assert!(r.flows.iter().all(|f| f.fast_retx == 0));
    // Largest first in the entries: finish times rise from the last entry to the first.
    let mut order: Vec<usize> = (0..8).collect();
    order.sort_by(|&a, &b| fct[a].total_cmp(&fct[b]));
    assert_eq!(order, vec![7, 6, 5, 4, 3, 2, 1, 0], "{fct:?}");
    let smallest = r.flows.iter().find(|f| f.src == 7).unwrap();
    let alone = smallest.ideal_fct.unwrap() as f64 / 1e6;
    assert!(
        fct[7] < 2.0 * alone,
        "smallest {} µs, alone {alone} µs",
        fct[7]
    );
    // 720 KB at 10 Gb/s is 576 µs of payload: the buffer's drops cost little.
    assert!(fct[0] < 800.0, "last flow {} µs", fct[0]);
}

fn error_of(text: &str) -> String {
    format!("{:?}", run_toml(text, Path::new("."), None).unwrap_err())
}

#[test]
fn pfabric_settings_that_cannot_work_name_their_fields() {
    // Another transport's traffic on pFabric queues.
    let t = star(&[1000], &[0], true).replace("transport = \"pf\"", "transport = \"dctcp\"");
    let e = error_of(&t);
    assert!(
        e.contains("traffic[0].transport") && e.contains("pfabric"),
        "{e}"
    );
    // A pFabric queue with priorities or ECN marking.
    let t = star(&[1000], &[0], true).replace(BUFFER, &format!("{BUFFER}\necn_k_packets = 5"));
    let e = error_of(&t);
    assert!(e.contains("network.queue.ecn_k_packets"), "{e}");
    let t = star(&[1000], &[0], true).replace(BUFFER, &format!("{BUFFER}\npriority = true"));
    assert!(error_of(&t).contains("network.queue.priority"));
    // A pFabric queue in a lossless fabric.
    let e = error_of(&(star(&[1000], &[0], true) + "\n[network.pfc]\n"));
    assert!(e.contains("network.pfc") && e.contains("pFabric"), "{e}");
    // pFabric's parameter on another controller.
    let t = star(&[1000], &[0], false).replace(
        "cc = \"pfabric\"",
        "cc = \"reno\"\n        pfabric_probe_timeouts = 3",
    );
    let e = error_of(&t);
    assert!(
        e.contains("transports.pf.pfabric_probe_timeouts") && e.contains("pfabric"),
        "{e}"
    );
}
