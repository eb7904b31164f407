//! A connection's two endpoints as the simulator drives them: a TCP client and server,
//! or a multipath client and server with their subflows. Both sides are sans-IO state
//! machines; this enum only routes calls to the right one and tags segments with their
//! subflow.

use crate::metrics::RecoveryCounters;
use crate::net::int::IntStack;
use crate::scenario::TransportPlan;
use crate::time::SimTime;
use crate::transport::homa::HomaMessage;
use crate::transport::mptcp::sender::MptcpCounters;
use crate::transport::mptcp::{MptcpReceiver, MptcpSender};
use crate::transport::ndp::{NdpReceiver, NdpSender};
use crate::transport::protocol::{self, CcContext};
use crate::transport::roce::{RoceReceiver, RoceSender};
use crate::transport::tcp::{Segment, SenderStats, TcpReceiver, TcpSender};

// The TCP endpoints stay inline (no box): they are the common case on the per-packet path.
#[allow(clippy::large_enum_variant)]
pub enum Endpoints {
    Tcp {
        client: TcpSender,
        server: TcpReceiver,
    },
    Mptcp {
        client: MptcpSender,
        server: MptcpReceiver,
    },
    /// A RoCE queue pair: its requester and responder.
    Roce {
        client: Box<RoceSender>,
        server: Box<RoceReceiver>,
    },
    /// NDP's sender and receiver (the receiver's PULLs paced by its host's pacer).
    Ndp {
        client: Box<NdpSender>,
        server: Box<NdpReceiver>,
    },
    /// A Homa message: its record only. Its protocol state lives in its hosts' agents
    /// (`sim/homa.rs`), which the simulator drives in place of the calls below.
    Homa(HomaMessage),
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
            return Endpoints::Roce {
                client: Box::new(RoceSender::new(cfg, cc, size)),
                server: Box::new(RoceReceiver::new(cfg)),
            };
        }
        if let Some(settings) = t.ndp {
            let cfg = settings.config(nic.line_bps, nic.base_rtt);
            return Endpoints::Ndp {
                client: Box::new(NdpSender::new(cfg, size)),
                server: Box::new(NdpReceiver::new()),
            };
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
            return Endpoints::Tcp {
                client: TcpSender::new(tcp, cc, size),
                server: TcpReceiver::new(tcp),
            };
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
        Endpoints::Mptcp {
            client,
            server: MptcpReceiver::new(tcp, n),
        }
    }

    /// Swaps the server endpoints of two copies of one connection (a run over several
    /// threads gathers each endpoint from the partition that ran it).
    pub fn swap_server(&mut self, other: &mut Endpoints) {
        match (self, other) {
            (Endpoints::Tcp { server: a, .. }, Endpoints::Tcp { server: b, .. }) => {
                std::mem::swap(a, b)
            }
            (Endpoints::Mptcp { server: a, .. }, Endpoints::Mptcp { server: b, .. }) => {
                std::mem::swap(a, b)
            }
            (Endpoints::Roce { server: a, .. }, Endpoints::Roce { server: b, .. }) => {
                std::mem::swap(a, b)
            }
            (Endpoints::Ndp { server: a, .. }, Endpoints::Ndp { server: b, .. }) => {
                std::mem::swap(a, b)
            }
            (Endpoints::Homa(a), Endpoints::Homa(b)) => a.swap_receiver(b),
            (
                Endpoints::Tcp { .. }
                | Endpoints::Mptcp { .. }
                | Endpoints::Roce { .. }
                | Endpoints::Ndp { .. }
                | Endpoints::Homa(_),
                _,
            ) => panic!("copies of one connection have the same transport"),
        }
    }

    pub fn subflows(&self) -> usize {
        match self {
            Endpoints::Tcp { .. } => 1,
            Endpoints::Mptcp { client, .. } => client.subs.len(),
            Endpoints::Roce { .. } | Endpoints::Ndp { .. } | Endpoints::Homa(_) => 1,
        }
    }

    /// A persistent connection: it opens without data and is handed messages by `offer`.
    pub fn make_idle(&mut self) {
        match self {
            Endpoints::Tcp { client, .. } => {
                client.size = u64::MAX;
                client.avail = 0;
            }
            Endpoints::Mptcp { client, .. } => client.make_idle(),
            Endpoints::Roce { client, .. } => client.make_idle(),
            Endpoints::Ndp { client, .. } => client.make_idle(),
            // The checker keeps Homa off persistent connections.
            Endpoints::Homa(_) => {}
        }
    }

    /// The application hands the client `bytes` more data to send.
    pub fn offer(&mut self, bytes: u64) {
        match self {
            Endpoints::Tcp { client, .. } => client.offer(bytes),
            Endpoints::Mptcp { client, .. } => client.offer(bytes),
            Endpoints::Roce { client, .. } => client.offer(bytes),
            Endpoints::Ndp { client, .. } => client.offer(bytes),
            Endpoints::Homa(_) => {}
        }
    }

    /// Data bytes acknowledged (at the data level for multipath).
    #[inline]
    pub fn data_acked(&self) -> u64 {
        match self {
            Endpoints::Tcp { client, .. } => client.snd_una.min(client.size),
            Endpoints::Mptcp { client, .. } => client.data_una,
            Endpoints::Roce { client, .. } => client.bytes_acked(),
            Endpoints::Ndp { client, .. } => client.bytes_acked(),
            Endpoints::Homa(m) => m.delivered(),
        }
    }

    /// The multipath sender's connection-level counters (zero for TCP).
    pub fn mptcp_counters(&self) -> MptcpCounters {
        match self {
            Endpoints::Tcp { .. }
            | Endpoints::Roce { .. }
            | Endpoints::Ndp { .. }
            | Endpoints::Homa(_) => MptcpCounters::default(),
            Endpoints::Mptcp { client, .. } => client.counters,
        }
    }

    pub fn open(&mut self) {
        match self {
            Endpoints::Tcp { client, .. } => client.open(),
            Endpoints::Mptcp { client, .. } => client.open(),
            Endpoints::Roce { client, .. } => client.open(),
            Endpoints::Ndp { client, .. } => client.open(),
            Endpoints::Homa(_) => {}
        }
    }

    /// Handles a segment for endpoint `ep` (0: client, 1: server) on subflow `sub`.
    #[inline]
    pub fn on_segment(&mut self, now: SimTime, ep: usize, sub: usize, seg: &Segment) {
        match (self, ep) {
            (Endpoints::Tcp { client, .. }, 0) => client.on_segment(now, seg),
            (Endpoints::Tcp { server, .. }, _) => server.on_segment(now, seg),
            (Endpoints::Mptcp { client, .. }, 0) => client.on_segment(now, sub, seg),
            (Endpoints::Mptcp { server, .. }, _) => server.on_segment(now, sub, seg),
            (Endpoints::Roce { client, .. }, 0) => client.on_segment(now, seg),
            (Endpoints::Roce { server, .. }, _) => server.on_segment(now, seg),
            (Endpoints::Ndp { client, .. }, 0) => client.on_segment(now, seg),
            (Endpoints::Ndp { server, .. }, _) => server.on_segment(now, seg),
            (Endpoints::Homa(_), _) => {}
        }
    }

    /// The next segment endpoint `ep` sends, with its subflow.
    #[inline]
    pub fn poll_transmit(&mut self, now: SimTime, ep: usize) -> Option<(usize, Segment)> {
        match (self, ep) {
            (Endpoints::Tcp { client, .. }, 0) => client.poll_transmit(now).map(|s| (0, s)),
            (Endpoints::Tcp { server, .. }, _) => server.poll_transmit(now).map(|s| (0, s)),
            (Endpoints::Mptcp { client, .. }, 0) => client.poll_transmit(now),
            (Endpoints::Mptcp { server, .. }, _) => server.poll_transmit(now),
            (Endpoints::Roce { client, .. }, 0) => client.poll_transmit(now).map(|s| (0, s)),
            (Endpoints::Roce { server, .. }, _) => server.poll_transmit(now).map(|s| (0, s)),
            (Endpoints::Ndp { client, .. }, 0) => client.poll_transmit(now),
            (Endpoints::Ndp { server, .. }, _) => server.poll_transmit(now).map(|s| (0, s)),
            (Endpoints::Homa(_), _) => None,
        }
    }

    pub fn on_timer(&mut self, now: SimTime, ep: usize) {
        match (self, ep) {
            (Endpoints::Tcp { client, .. }, 0) => client.on_timer(now),
            (Endpoints::Tcp { server, .. }, _) => server.on_timer(now),
            (Endpoints::Mptcp { client, .. }, 0) => client.on_timer(now),
            (Endpoints::Mptcp { server, .. }, _) => server.on_timer(now),
            (Endpoints::Roce { client, .. }, 0) => client.on_timer(now),
            (Endpoints::Roce { server, .. }, _) => server.on_timer(now),
            (Endpoints::Ndp { client, .. }, 0) => client.on_timer(now),
            (Endpoints::Ndp { server, .. }, _) => server.on_timer(now),
            (Endpoints::Homa(_), _) => {}
        }
    }

    pub fn timer_deadline(&self, ep: usize) -> Option<SimTime> {
        match (self, ep) {
            (Endpoints::Tcp { client, .. }, 0) => client.timer_deadline(),
            (Endpoints::Tcp { server, .. }, _) => server.timer_deadline(),
            (Endpoints::Mptcp { client, .. }, 0) => client.timer_deadline(),
            (Endpoints::Mptcp { server, .. }, _) => server.timer_deadline(),
            (Endpoints::Roce { client, .. }, 0) => client.timer_deadline(),
            (Endpoints::Roce { server, .. }, _) => server.timer_deadline(),
            (Endpoints::Ndp { client, .. }, 0) => client.timer_deadline(),
            (Endpoints::Ndp { server, .. }, _) => server.timer_deadline(),
            (Endpoints::Homa(_), _) => None,
        }
    }

    /// When every data byte was acknowledged (at the data level for multipath).
    #[inline]
    pub fn finish(&self) -> Option<SimTime> {
        match self {
            Endpoints::Tcp { client, .. } => client.finish(),
            Endpoints::Mptcp { client, .. } => client.finish,
            Endpoints::Roce { client, .. } => client.finish(),
            Endpoints::Ndp { client, .. } => client.finish(),
            Endpoints::Homa(m) => m.finish,
        }
    }

    /// The flow's counters (summed over subflows; bytes acknowledged at the data level).
    pub fn stats(&self) -> SenderStats {
        match self {
            Endpoints::Tcp { client, .. } => client.stats(),
            Endpoints::Mptcp { client, .. } => client.stats(),
            Endpoints::Roce { client, .. } => roce_stats(client),
            Endpoints::Ndp { client, .. } => ndp_stats(client),
            Endpoints::Homa(m) => homa_stats(m),
        }
    }

    /// Each subflow's sender, in order (the one sender of a TCP flow).
    pub fn senders(&self) -> &[TcpSender] {
        match self {
            Endpoints::Tcp { client, .. } => std::slice::from_ref(client),
            Endpoints::Mptcp { client, .. } => &client.subs,
            Endpoints::Roce { .. } | Endpoints::Ndp { .. } | Endpoints::Homa(_) => &[],
        }
    }

    /// Each subflow's own counters.
    pub fn subflow_stats(&self) -> Vec<SenderStats> {
        match self {
            Endpoints::Tcp { client, .. } => vec![client.stats()],
            Endpoints::Mptcp { client, .. } => client.subs.iter().map(|s| s.stats()).collect(),
            Endpoints::Roce { client, .. } => vec![roce_stats(client)],
            Endpoints::Ndp { client, .. } => vec![ndp_stats(client)],
            Endpoints::Homa(m) => vec![homa_stats(m)],
        }
    }

    /// What the server endpoint counts of the loss-recovery counters (the receiver's
    /// own: TCP-IR's rebuilt segments, NDP's trimmed headers); the rest are the
    /// client's.
    pub fn server_counters(&self) -> ServerCounters {
        match self {
            Endpoints::Tcp { server, .. } => ServerCounters {
                ir_recovered: server.ir_recovered,
                trimmed: 0,
            },
            Endpoints::Ndp { server, .. } => ServerCounters {
                ir_recovered: 0,
                trimmed: server.trimmed,
            },
            Endpoints::Mptcp { .. } | Endpoints::Roce { .. } | Endpoints::Homa(_) => {
                ServerCounters::default()
            }
        }
    }

    /// The loss-recovery counters of a TCP flow (zeros for multipath).
    pub fn recovery_counters(&self) -> RecoveryCounters {
        match self {
            Endpoints::Tcp { client, server } => {
                let s = &client.stats();
                RecoveryCounters {
                    packets_sent: s.packets_sent,
                    packets_retx: s.packets_retx,
                    syn_timeouts: s.syn_timeouts,
                    tlp_probes: s.tlp_probes,
                    ir_coded: s.ir_coded,
                    ir_recovered: server.ir_recovered,
                    proactive_copies: s.proactive_copies,
                    ..RecoveryCounters::default()
                }
            }
            Endpoints::Mptcp { .. } => RecoveryCounters::default(),
            Endpoints::Roce { client, .. } => {
                let s = client.stats();
                RecoveryCounters {
                    packets_sent: s.packets_sent,
                    packets_retx: s.packets_retx,
                    naks: s.naks,
                    cnps: s.cnps,
                    ..RecoveryCounters::default()
                }
            }
            Endpoints::Ndp { client, server } => {
                let s = client.stats();
                RecoveryCounters {
                    packets_sent: s.packets_sent,
                    packets_retx: s.packets_retx,
                    pulls: s.pulls,
                    nacks: s.nacks,
                    trimmed: server.trimmed,
                    ..RecoveryCounters::default()
                }
            }
            Endpoints::Homa(m) => RecoveryCounters {
                packets_sent: m.stats.packets_sent,
                packets_retx: m.stats.packets_retx,
                grants: m.stats.grants,
                resends: m.stats.resends,
                ..RecoveryCounters::default()
            },
        }
    }

    /// AMP's suppression and release episodes.
    pub fn ssr_episodes(&self) -> (u32, u32) {
        match self {
            Endpoints::Mptcp { client, .. } => client.coupling.ssr_episodes(),
            Endpoints::Tcp { .. }
            | Endpoints::Roce { .. }
            | Endpoints::Ndp { .. }
            | Endpoints::Homa(_) => (0, 0),
        }
    }

    /// A RoCE packet for endpoint `ep` with the INT records it carries (HPCC's data to
    /// the responder, the echo on an ACK to the requester).
    pub fn on_segment_int(&mut self, now: SimTime, ep: usize, seg: &Segment, int: &IntStack) {
        match (self, ep) {
            (Endpoints::Roce { client, .. }, 0) => client.on_segment_int(now, seg, int.hops()),
            (Endpoints::Roce { server, .. }, _) => server.on_segment_int(now, seg, int),
            (
                e @ (Endpoints::Tcp { .. }
                | Endpoints::Mptcp { .. }
                | Endpoints::Ndp { .. }
                | Endpoints::Homa(_)),
                ep,
            ) => e.on_segment(now, ep, 0, seg),
        }
    }

    /// A RoCE queue pair's time-series sample: bytes acknowledged and its window in
    /// bytes (0 without one).
    pub fn roce_sample(&self) -> Option<(u64, f64)> {
        match self {
            Endpoints::Roce { client, .. } => Some((
                client.bytes_acked(),
                client.window().map_or(0.0, |w| w as f64),
            )),
            Endpoints::Tcp { .. }
            | Endpoints::Mptcp { .. }
            | Endpoints::Ndp { .. }
            | Endpoints::Homa(_) => None,
        }
    }

    /// A RoCE queue pair's header bytes per packet.
    pub fn header_bytes(&self) -> Option<u32> {
        match self {
            Endpoints::Roce { client, .. } => Some(client.config().header),
            Endpoints::Ndp { client, .. } => Some(client.config().header),
            Endpoints::Tcp { .. } | Endpoints::Mptcp { .. } | Endpoints::Homa(_) => None,
        }
    }

    /// A TCP client's bytes its receiver does not hold yet (pFabric's priority of the
    /// data it sends); 0 for the other endpoints.
    #[inline(never)]
    pub fn unacked_bytes(&self) -> u64 {
        match self {
            Endpoints::Tcp { client, .. } => client.unacked_bytes(),
            Endpoints::Mptcp { .. }
            | Endpoints::Roce { .. }
            | Endpoints::Ndp { .. }
            | Endpoints::Homa(_) => 0,
        }
    }

    /// The INT records a RoCE responder's next ACK echoes.
    pub fn int_echo(&self) -> Option<&IntStack> {
        match self {
            Endpoints::Roce { server, .. } => Some(server.echo()),
            Endpoints::Tcp { .. }
            | Endpoints::Mptcp { .. }
            | Endpoints::Ndp { .. }
            | Endpoints::Homa(_) => None,
        }
    }
}

/// The loss-recovery counters a connection's server endpoint keeps (`recovery_counters`
/// takes them from there).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServerCounters {
    pub ir_recovered: u32,
    pub trimmed: u32,
}

impl ServerCounters {
    /// `self − base`.
    pub fn since(&self, base: &ServerCounters) -> ServerCounters {
        ServerCounters {
            ir_recovered: self.ir_recovered - base.ir_recovered,
            trimmed: self.trimmed - base.trimmed,
        }
    }

    /// Puts these in `r` in place of what it has.
    pub fn set_in(&self, r: &mut RecoveryCounters) {
        r.ir_recovered = self.ir_recovered;
        r.trimmed = self.trimmed;
    }
}

/// A Homa message's counters in TCP's terms: its sender's timeouts (first packet sent
/// again after a silence) as timeouts, RESENDs as fast retransmits (a recovery on the
/// receiver's word).
fn homa_stats(m: &HomaMessage) -> SenderStats {
    let s = m.stats;
    SenderStats {
        bytes_sent: s.bytes_sent,
        bytes_retx: s.bytes_retx,
        bytes_acked: m.delivered(),
        timeouts: s.timeouts,
        fast_retx: s.resends,
        finish: m.finish,
        packets_sent: s.packets_sent,
        packets_retx: s.packets_retx,
        ..SenderStats::default()
    }
}

/// A RoCE requester's counters in TCP's terms: NAK-started recoveries count as fast
/// retransmits (a recovery on the receiver's word, before any timeout).
fn roce_stats(client: &RoceSender) -> SenderStats {
    let s = client.stats();
    SenderStats {
        bytes_sent: s.bytes_sent,
        bytes_retx: s.bytes_retx,
        bytes_acked: s.bytes_acked,
        timeouts: s.timeouts,
        fast_retx: s.recoveries,
        finish: client.finish(),
        packets_sent: s.packets_sent,
        packets_retx: s.packets_retx,
        ..SenderStats::default()
    }
}

/// An NDP sender's counters in TCP's terms (NACK-started resends are not fast
/// retransmits: NDP has no duplicate ACKs).
fn ndp_stats(client: &NdpSender) -> SenderStats {
    let s = client.stats();
    SenderStats {
        bytes_sent: s.bytes_sent,
        bytes_retx: s.bytes_retx,
        bytes_acked: s.bytes_acked,
        timeouts: s.timeouts,
        finish: client.finish(),
        packets_sent: s.packets_sent,
        packets_retx: s.packets_retx,
        ..SenderStats::default()
    }
}

impl Endpoints {
    /// NDP's receiver: the PULLs it asked for since last called (0 for other transports).
    pub fn ndp_pull_requests(&mut self) -> u32 {
        match self {
            Endpoints::Ndp { server, .. } => server.take_pull_requests(),
            Endpoints::Tcp { .. }
            | Endpoints::Mptcp { .. }
            | Endpoints::Roce { .. }
            | Endpoints::Homa(_) => 0,
        }
    }

    /// NDP's sender sprays over `n` paths (the connection's routes by subflow index).
    pub fn ndp_set_paths(&mut self, n: usize, rng: crate::engine::Rng) {
        match self {
            Endpoints::Ndp { client, .. } => client.set_paths(n, rng),
            Endpoints::Tcp { .. }
            | Endpoints::Mptcp { .. }
            | Endpoints::Roce { .. }
            | Endpoints::Homa(_) => {}
        }
    }

    /// NDP's receiver: the pacer's turn (`on_ack`: as its ACK or NACK is made, which then
    /// carries the PULL); whether it pulled.
    pub fn ndp_pull(&mut self, on_ack: bool) -> bool {
        match self {
            Endpoints::Ndp { server, .. } => server.pull(on_ack),
            Endpoints::Tcp { .. }
            | Endpoints::Mptcp { .. }
            | Endpoints::Roce { .. }
            | Endpoints::Homa(_) => false,
        }
    }
}
