//! A connection's two endpoints as the simulator drives them: one enum over the
//! transports' pairs (`transport::pair::Pair`, implemented in each protocol's folder). It
//! only routes calls to the right pair, with static dispatch (the per-packet path pays one
//! match, no virtual call), and hands out the pairs whose protocols do more (NDP's pulls,
//! HPCC's INT records).

use crate::metrics::RecoveryCounters;
use crate::scenario::TransportPlan;
use crate::time::SimTime;
use crate::transport::homa::HomaMessage;
use crate::transport::mptcp::sender::MptcpCounters;
use crate::transport::mptcp::{MptcpPair, MptcpReceiver, MptcpSender};
use crate::transport::ndp::{NdpPair, NdpReceiver, NdpSender};
use crate::transport::pair::{Pair, ServerCounters};
use crate::transport::protocol::{self, CcContext};
use crate::transport::roce::{RocePair, RoceReceiver, RoceSender};
use crate::transport::tcp::{Segment, SenderStats, TcpPair, TcpReceiver, TcpSender};

// The TCP endpoints stay inline (no box): they are the common case on the per-packet path.
#[allow(clippy::large_enum_variant)]
pub enum Endpoints {
    Tcp(TcpPair),
    Mptcp(MptcpPair),
    /// A RoCE queue pair: its requester and responder.
    Roce(Box<RocePair>),
    /// NDP's sender and receiver (the receiver's PULLs paced by its host's pacer).
    Ndp(Box<NdpPair>),
    /// A Homa message: its record only. Its protocol state lives in its hosts' agents
    /// (`sim/homa.rs`), which the simulator drives in place of the calls below.
    Homa(HomaMessage),
}

/// Calls `$call` on whichever pair `$e` holds (every kind named: a new one does not
/// compile until it is added here).
macro_rules! each {
    ($e:expr, $p:ident => $call:expr) => {
        match $e {
            Endpoints::Tcp($p) => $call,
            Endpoints::Mptcp($p) => $call,
            Endpoints::Roce($p) => $call,
            Endpoints::Ndp($p) => $call,
            Endpoints::Homa($p) => $call,
        }
    };
}

/// What a RoCE queue pair's controller needs of its host and network.
#[derive(Clone, Copy, Debug)]
pub struct NicInfo {
    /// The host NIC's line rate, bits/s.
    pub line_bps: f64,
    /// The network's base RTT (for HPCC's T and a BDP window, unless the transport sets
    /// its own).
    pub base_rtt: SimTime,
}

impl Endpoints {
    /// The endpoints of a flow of `size` bytes (`None`: long-lived) over transport `t`.
    /// `scatter_dupacks` is MMPTCP's duplicate-ACK threshold during its scatter phase;
    /// `hops` the links its path crosses one way (Swift's hop scaling).
    pub fn build(
        t: &TransportPlan,
        size: Option<u64>,
        scatter_dupacks: u32,
        nic: NicInfo,
        hops: u32,
    ) -> Endpoints {
        let size = size.unwrap_or(u64::MAX);
        if t.homa.is_some() {
            return Endpoints::Homa(HomaMessage::new(size));
        }
        if let (Some(settings), Some(rc)) = (t.roce, t.cc.roce()) {
            let cfg = settings.config(&rc, nic.line_bps, nic.base_rtt);
            let cc = rc.build(nic.line_bps, settings.base_rtt(nic.base_rtt));
            return Endpoints::Roce(Box::new(RocePair {
                client: RoceSender::new(cfg, cc, size),
                server: RoceReceiver::new(cfg),
            }));
        }
        if let Some(settings) = t.ndp {
            let cfg = settings.config(nic.line_bps, nic.base_rtt);
            return Endpoints::Ndp(Box::new(NdpPair {
                client: NdpSender::new(cfg, size),
                server: NdpReceiver::new(),
            }));
        }
        let tcp = t.tcp;
        let ctx = CcContext {
            mss: tcp.mss as f64,
            cwnd_min: tcp.cwnd_min as f64 * tcp.mss as f64,
            lia_beta: t.lia_beta,
            init_cwnd: tcp.init_cwnd,
            hops,
        };
        let (coupling, cc) = protocol::build(&t.cc, ctx);
        if !t.is_multipath() {
            return Endpoints::Tcp(TcpPair {
                client: TcpSender::new(tcp, cc, size),
                server: TcpReceiver::new(tcp),
            });
        }
        // MMPTCP's scatter subflow comes before its `subflows` MPTCP subflows.
        let scatter = t.cc.scatter_bytes();
        let n = t.subflows as usize + scatter.is_some() as usize;
        let subs = (0..n).map(|_| TcpSender::new(tcp, cc.clone(), 0)).collect();
        let mut client = MptcpSender::new(subs, size, coupling, t.scheduler, t.subflow_gap);
        if let Some(bytes) = scatter {
            client.scatter_first(bytes, scatter_dupacks);
        }
        if let Some(cfg) = t.fuso {
            client.enable_fuso(cfg);
        }
        Endpoints::Mptcp(MptcpPair {
            client,
            server: MptcpReceiver::new(tcp, n),
        })
    }

    /// Swaps the server endpoints of two copies of one connection (a run over several
    /// threads gathers each endpoint from the partition that ran it).
    pub fn swap_server(&mut self, other: &mut Endpoints) {
        match (self, other) {
            (Endpoints::Tcp(a), Endpoints::Tcp(b)) => a.swap_server(b),
            (Endpoints::Mptcp(a), Endpoints::Mptcp(b)) => a.swap_server(b),
            (Endpoints::Roce(a), Endpoints::Roce(b)) => a.swap_server(b),
            (Endpoints::Ndp(a), Endpoints::Ndp(b)) => a.swap_server(b),
            (Endpoints::Homa(a), Endpoints::Homa(b)) => a.swap_server(b),
            (
                Endpoints::Tcp(_)
                | Endpoints::Mptcp(_)
                | Endpoints::Roce(_)
                | Endpoints::Ndp(_)
                | Endpoints::Homa(_),
                _,
            ) => panic!("copies of one connection have the same transport"),
        }
    }

    /// The RoCE queue pair, if the connection is one.
    #[inline]
    pub fn as_roce(&self) -> Option<&RocePair> {
        match self {
            Endpoints::Roce(p) => Some(p),
            Endpoints::Tcp(_) | Endpoints::Mptcp(_) | Endpoints::Ndp(_) | Endpoints::Homa(_) => {
                None
            }
        }
    }

    #[inline]
    pub fn as_roce_mut(&mut self) -> Option<&mut RocePair> {
        match self {
            Endpoints::Roce(p) => Some(p),
            Endpoints::Tcp(_) | Endpoints::Mptcp(_) | Endpoints::Ndp(_) | Endpoints::Homa(_) => {
                None
            }
        }
    }

    /// NDP's pair, if the connection is NDP.
    #[inline]
    pub fn as_ndp_mut(&mut self) -> Option<&mut NdpPair> {
        match self {
            Endpoints::Ndp(p) => Some(p),
            Endpoints::Tcp(_) | Endpoints::Mptcp(_) | Endpoints::Roce(_) | Endpoints::Homa(_) => {
                None
            }
        }
    }

    /// A TCP client's bytes its receiver does not hold yet (pFabric's priority of the
    /// data it sends); 0 for the other endpoints.
    #[inline(never)]
    pub fn unacked_bytes(&self) -> u64 {
        match self {
            Endpoints::Tcp(p) => p.client.unacked_bytes(),
            Endpoints::Mptcp(_) | Endpoints::Roce(_) | Endpoints::Ndp(_) | Endpoints::Homa(_) => 0,
        }
    }

    pub fn subflows(&self) -> usize {
        each!(self, p => p.subflows())
    }

    pub fn make_idle(&mut self) {
        each!(self, p => p.make_idle())
    }

    pub fn offer(&mut self, bytes: u64) {
        each!(self, p => p.offer(bytes))
    }

    #[inline]
    pub fn data_acked(&self) -> u64 {
        each!(self, p => p.data_acked())
    }

    pub fn data_received(&self) -> u64 {
        each!(self, p => p.data_received())
    }

    pub fn mptcp_counters(&self) -> MptcpCounters {
        each!(self, p => p.mptcp_counters())
    }

    pub fn open(&mut self) {
        each!(self, p => p.open())
    }

    #[inline]
    pub fn on_segment(&mut self, now: SimTime, ep: usize, sub: usize, seg: &Segment) {
        each!(self, p => p.on_segment(now, ep, sub, seg))
    }

    #[inline]
    pub fn poll_transmit(&mut self, now: SimTime, ep: usize) -> Option<(usize, Segment)> {
        each!(self, p => p.poll_transmit(now, ep))
    }

    pub fn on_timer(&mut self, now: SimTime, ep: usize) {
        each!(self, p => p.on_timer(now, ep))
    }

    #[inline]
    pub fn timer_deadline(&self, ep: usize) -> Option<SimTime> {
        each!(self, p => p.timer_deadline(ep))
    }

    #[inline]
    pub fn finish(&self) -> Option<SimTime> {
        each!(self, p => p.finish())
    }

    pub fn stats(&self) -> SenderStats {
        each!(self, p => p.stats())
    }

    pub fn senders(&self) -> &[TcpSender] {
        each!(self, p => p.senders())
    }

    pub fn subflow_stats(&self) -> Vec<SenderStats> {
        each!(self, p => p.subflow_stats())
    }

    pub fn server_counters(&self) -> ServerCounters {
        each!(self, p => p.server_counters())
    }

    pub fn recovery_counters(&self) -> RecoveryCounters {
        each!(self, p => p.recovery_counters())
    }

    pub fn ssr_episodes(&self) -> (u32, u32) {
        each!(self, p => p.ssr_episodes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Plan;
    use crate::time::PS_PER_US;
    use std::path::Path;

    const DELAY: SimTime = 10 * PS_PER_US;
    const SIZE: u64 = 50_000;

    /// Every transport of a scenario, as `Sim` builds its endpoints.
    fn transports() -> Vec<TransportPlan> {
        let text = r#"
            duration_ms = 1
            [topology.star]
            senders = 1
            [transports.reno]
            cc = "reno"
            [transports.dctcp]
            cc = "dctcp"
            [transports.lia]
            cc = "lia"
            subflows = 2
            [transports.dcqcn]
            cc = "dcqcn"
            [transports.timely]
            cc = "timely"
            [transports.hpcc]
            cc = "hpcc"
            [transports.ndp]
            cc = "ndp"
            [[traffic]]
            pattern = "pair"
            src = 1
            dst = 0
            size = { fixed = 1000 }
        "#;
        Plan::from_toml(text, Path::new("."))
            .expect("the scenario is valid")
            .transports
    }

    /// Drives a connection's endpoints over a lossless loopback of one-way `DELAY` until
    /// every byte is acknowledged, and returns when. NDP's receiver is granted each PULL
    /// as it asks (no other flow shares its host's pacer).
    fn carry(ep: &mut Endpoints) -> SimTime {
        let mut now = 0;
        // (arrival, to endpoint, subflow, segment), in the order sent.
        let mut flight: Vec<(SimTime, usize, usize, Segment)> = Vec::new();
        ep.open();
        for _ in 0..100_000 {
            for from in [0, 1] {
                while let Some((sub, seg)) = ep.poll_transmit(now, from) {
                    flight.push((now + DELAY, 1 - from, sub, seg));
                }
            }
            if let Some(at) = ep.finish() {
                return at;
            }
            let arrival = (0..flight.len()).min_by_key(|&i| (flight[i].0, i));
            let timer = (0..2)
                .filter_map(|e| ep.timer_deadline(e).map(|t| (t, e)))
                .min();
            let next = match (arrival, timer) {
                (Some(i), Some((at, _))) if flight[i].0 > at => None,
                (Some(i), _) => Some(i),
                (None, _) => None,
            };
            match (next, timer) {
                (Some(i), _) => {
                    let (at, to, sub, seg) = flight.remove(i);
                    now = at;
                    ep.on_segment(now, to, sub, &seg);
                    if let Some(ndp) = ep.as_ndp_mut() {
                        for _ in 0..ndp.pull_requests() {
                            ndp.pull(false);
                        }
                    }
                }
                (None, Some((at, e))) => {
                    now = at;
                    ep.on_timer(now, e);
                }
                (None, None) => panic!("nothing to send, in flight or timed at {now} ps"),
            }
        }
        panic!("no finish after 100,000 steps")
    }

    #[test]
    fn every_transport_carries_a_flow_over_a_lossless_loopback() {
        let nic = NicInfo {
            line_bps: 10e9,
            base_rtt: 2 * DELAY,
        };
        // Which of the pairs the transports built: TCP, multipath, RoCE, NDP.
        let mut kinds = [0; 4];
        for t in transports() {
            let mut ep = Endpoints::build(&t, Some(SIZE), 3, nic, 2);
            let finish = carry(&mut ep);
            let name = t.name.as_str();
            kinds[match ep {
                Endpoints::Tcp(_) => 0,
                Endpoints::Mptcp(_) => 1,
                Endpoints::Roce(_) => 2,
                Endpoints::Ndp(_) => 3,
                Endpoints::Homa(_) => panic!("{name}: no Homa transport in the scenario"),
            }] += 1;
            // One round trip at least; a timeout (a millisecond and more) would be a bug.
            assert!(
                (2 * DELAY..PS_PER_US * 1000).contains(&finish),
                "{name}: finished at {finish} ps"
            );
            assert_eq!(ep.data_acked(), SIZE, "{name}");
            assert_eq!(ep.data_received(), SIZE, "{name}");
            let stats = ep.stats();
            assert_eq!(stats.bytes_acked, SIZE, "{name}");
            assert_eq!(stats.finish, Some(finish), "{name}");
            assert_eq!((stats.bytes_retx, stats.timeouts), (0, 0), "{name}");
            let recovery = ep.recovery_counters();
            assert_eq!(recovery.packets_retx, 0, "{name}");
            assert_eq!(ep.server_counters(), ServerCounters::default(), "{name}");
            let subflows = ep.subflows();
            // MMPTCP's scatter subflow comes before its MPTCP subflows.
            let want = if t.is_multipath() {
                t.subflows as usize + t.cc.scatter_bytes().is_some() as usize
            } else {
                1
            };
            assert_eq!(subflows, want, "{name}");
            assert_eq!(ep.subflow_stats().len(), subflows, "{name}");
            let tcp = matches!(ep, Endpoints::Tcp(_) | Endpoints::Mptcp(_));
            assert_eq!(ep.senders().len(), if tcp { subflows } else { 0 }, "{name}");
            // Single-path flows count their packets in the recovery counters; every
            // full packet of the flow was sent.
            if !t.is_multipath() {
                let payload = match (t.roce, t.ndp) {
                    (Some(r), _) => r.payload,
                    (None, Some(n)) => n.payload,
                    (None, None) => t.tcp.mss,
                } as u64;
                let packets = SIZE.div_ceil(payload);
                assert!(recovery.packets_sent >= packets, "{name}: {recovery:?}");
                assert_eq!(recovery.packets_sent, stats.packets_sent, "{name}");
            }
        }
        // The built-in transports and the scenario's (with HPCC among the RoCE ones).
        assert_eq!(kinds, [5, 8, 3, 1]);
    }

    #[test]
    fn a_homa_message_is_its_record_only() {
        let mut m = Endpoints::Homa(HomaMessage::new(SIZE));
        m.open();
        assert_eq!(m.poll_transmit(0, 0), None);
        assert_eq!(m.timer_deadline(0), None);
        assert_eq!((m.data_acked(), m.finish()), (0, None));
    }
}
