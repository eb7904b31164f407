//! Swift's host delay (`swift_host_delay_us`): the receiving host processes data packets
//! one at a time, each taking the connection's host delay, in arrival order (its NIC Rx
//! queue). A data packet is read by its endpoint, and acknowledged, when its processing
//! ends; the time from its arrival at the NIC to then — Rx queuing plus processing, what
//! Swift calls the endpoint delay (Kumar et al., §3.2, measured between the receiver's
//! NIC timestamps) — goes back in the ACK, so the sender can tell host congestion from
//! fabric congestion. A host slower than its link builds a queue here, not in a switch.
//!
//! Runs only when some connection has a host delay (`Sim::host_rx_free` is empty
//! otherwise): then a packet of such a connection waits in a `HostRx` event. Its arrival
//! time rides in its data-ack slot meanwhile (single-path connections do not use it).

use super::events::EventKind;
use super::Sim;
use crate::net::packet::{Desc, TO_SERVER};
use crate::time::SimTime;

/// A connection's host delay (Swift's): its receiving host's processing time per data
/// packet, and the endpoint delay of the latest data packet processed, which its ACKs
/// echo.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct HostDelay {
    /// Processing time per data packet (0: none).
    pub per_packet: SimTime,
    /// The endpoint delay of the latest data packet processed.
    pub echo: SimTime,
}

impl Sim {
    /// Holds data packet `d` for its receiving host's processing when its connection
    /// has a host delay (true), else leaves it to be processed now (false).
    #[inline(never)]
    pub(super) fn hold_for_host(&mut self, d: Desc) -> bool {
        let p = self.pkts.get(d.pkt);
        let delay = self.conns[p.conn as usize].host_rx.per_packet;
        if delay == 0 || p.dir != TO_SERVER || p.payload == 0 {
            return false;
        }
        let host = d.dst as usize;
        let done = self.now.max(self.hosts.host_rx_free[host]) + delay;
        self.hosts.host_rx_free[host] = done;
        self.pkts.get_mut(d.pkt).data_ack = self.now;
        self.events.schedule_with(done, EventKind::HostRx, d.dst, d);
        true
    }

    /// The receiving host has processed data packet `d`: its connection records the
    /// endpoint delay for its ACKs, and the endpoint reads the packet.
    pub(super) fn host_rx_done(&mut self, d: Desc) {
        let p = self.pkts.get_mut(d.pkt);
        let arrived = std::mem::take(&mut p.data_ack);
        let conn = p.conn as usize;
        self.conns[conn].host_rx.echo = self.now - arrived;
        self.process(d);
    }
}

#[cfg(test)]
mod tests {
    use crate::connection::Endpoints;
    use crate::metrics::Results;
    use crate::scenario::Plan;
    use crate::sim::Sim;
    use crate::time::PS_PER_US;
    use crate::transport::protocol::Cc;
    use std::path::Path;

    /// Two hosts through one switch at 10 Gb/s, 1 µs links; one long-lived Swift flow
    /// from host 1 to host 0 for 20 ms. `extra`: lines of its `[transports.sw]` entry.
    fn sim(extra: &str) -> Sim {
        let text = format!(
            r#"
            duration_ms = 20
            stop_when_done = false
            [topology.star]
            senders = 1
            [network.link]
            rate_gbps = 10
            delay_us = 1
            [network.queue]
            limit_packets = 100000
            [transports.sw]
            cc = "swift"
            {extra}
            [[traffic]]
            pattern = "pair"
            transport = "sw"
            src = 1
            dst = 0
            size = "long_lived"
            "#
        );
        Sim::new(Plan::from_toml(&text, Path::new(".")).unwrap())
    }

    /// The flow's Swift windows at the end: (effective, fabric, endpoint), in packets.
    fn windows(s: &Sim) -> (f64, f64, Option<f64>) {
        match &s.conns[0].ep {
            Endpoints::Tcp(p) => match &p.client.cc {
                Cc::Swift(w) => (w.cwnd(), w.fabric_cwnd(), w.endpoint_cwnd()),
                other => panic!("not Swift: {other:?}"),
            },
            _ => panic!("not a TCP connection"),
        }
    }

    fn run(extra: &str) -> (Results, (f64, f64, Option<f64>), u64) {
        let mut s = sim(extra);
        s.run();
        let w = windows(&s);
        let rx_delay = s.conns[0].host_rx.echo;
        (s.results(0.0), w, rx_delay)
    }

    /// A host that takes 2 µs per 1,500-byte packet (about 5.8 Gb/s of payload, below
    /// the 10 Gb/s link) is the bottleneck. Swift's fabric window sees no fabric
    /// queue and grows; the endpoint window holds the host's Rx queue near its 25 µs
    /// target and is the window. With an endpoint target far above what the window can
    /// queue, the endpoint window never cuts and the Rx queue grows with the fabric
    /// window. Without a host delay there is no endpoint window at all.
    #[test]
    fn a_slow_receiving_host_makes_the_endpoint_window_bind() {
        let (plain, (w, f, e), _) = run("");
        assert_eq!(e, None);
        assert_eq!(w, f);
        assert!(
            plain.flows[0].goodput_bps > 9.0e9,
            "{}",
            plain.flows[0].goodput_bps
        );

        let (held, (w, f, e), rx_delay) = run("swift_host_delay_us = 2.0");
        let e = e.expect("an endpoint window");
        assert!(f > 2.0 * e, "fabric {f} vs endpoint {e}");
        assert_eq!(w, e, "the endpoint window binds");
        // Throughput is the host's: 1460 bytes per 2 µs = 5.84 Gb/s at most.
        let g = held.flows[0].goodput_bps;
        assert!(g > 0.9 * 5.84e9 && g <= 5.84e9, "{g}");
        // The endpoint delay of the last packet is near the target, not the window's.
        assert!(
            rx_delay > 2 * PS_PER_US && rx_delay < 60 * PS_PER_US,
            "{rx_delay}"
        );
        assert!(held.counters.conserved(), "{:?}", held.counters);

        let (loose, (_, f, e), loose_delay) =
            run("swift_host_delay_us = 2.0\nswift_endpoint_target_us = 100000");
        assert_eq!(
            e.map(|e| e >= f),
            Some(true),
            "the endpoint window never cuts"
        );
        assert!(
            loose_delay > 5 * rx_delay,
            "the Rx queue grows: {loose_delay} vs {rx_delay}"
        );
        let g = loose.flows[0].goodput_bps;
        assert!(g > 0.9 * 5.84e9 && g <= 5.84e9, "{g}");
    }
}
