//! A connection's two endpoints as the simulator drives them: a TCP client and server,
//! or a multipath client and server with their subflows. Both sides are sans-IO state
//! machines; this enum only routes calls to the right one and tags segments with their
//! subflow.

use crate::metrics::RecoveryCounters;
use crate::scenario::TransportPlan;
use crate::time::SimTime;
use crate::transport::mptcp::sender::MptcpCounters;
use crate::transport::mptcp::{MptcpReceiver, MptcpSender};
use crate::transport::protocol::{self, CcContext};
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
}

impl Endpoints {
    /// The endpoints of a flow of `size` bytes (`None`: long-lived) over transport `t`.
    /// `scatter_dupacks` is MMPTCP's duplicate-ACK threshold during its scatter phase;
    /// `hops` the links its path crosses one way (Swift's hop scaling).
    pub fn build(
        t: &TransportPlan,
        size: Option<u64>,
        scatter_dupacks: u32,
        hops: u32,
    ) -> Endpoints {
        let size = size.unwrap_or(u64::MAX);
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

    pub fn subflows(&self) -> usize {
        match self {
            Endpoints::Tcp { .. } => 1,
            Endpoints::Mptcp { client, .. } => client.subs.len(),
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
        }
    }

    /// The application hands the client `bytes` more data to send.
    pub fn offer(&mut self, bytes: u64) {
        match self {
            Endpoints::Tcp { client, .. } => client.offer(bytes),
            Endpoints::Mptcp { client, .. } => client.offer(bytes),
        }
    }

    /// Data bytes acknowledged (at the data level for multipath).
    #[inline]
    pub fn data_acked(&self) -> u64 {
        match self {
            Endpoints::Tcp { client, .. } => client.snd_una.min(client.size),
            Endpoints::Mptcp { client, .. } => client.data_una,
        }
    }

    /// The multipath sender's connection-level counters (zero for TCP).
    pub fn mptcp_counters(&self) -> MptcpCounters {
        match self {
            Endpoints::Tcp { .. } => MptcpCounters::default(),
            Endpoints::Mptcp { client, .. } => client.counters,
        }
    }

    pub fn open(&mut self) {
        match self {
            Endpoints::Tcp { client, .. } => client.open(),
            Endpoints::Mptcp { client, .. } => client.open(),
        }
    }

    /// Handles a segment for endpoint `ep` (0: client, 1: server) on subflow `sub`.
    pub fn on_segment(&mut self, now: SimTime, ep: usize, sub: usize, seg: &Segment) {
        match (self, ep) {
            (Endpoints::Tcp { client, .. }, 0) => client.on_segment(now, seg),
            (Endpoints::Tcp { server, .. }, _) => server.on_segment(now, seg),
            (Endpoints::Mptcp { client, .. }, 0) => client.on_segment(now, sub, seg),
            (Endpoints::Mptcp { server, .. }, _) => server.on_segment(now, sub, seg),
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
        }
    }

    pub fn on_timer(&mut self, now: SimTime, ep: usize) {
        match (self, ep) {
            (Endpoints::Tcp { client, .. }, 0) => client.on_timer(now),
            (Endpoints::Tcp { server, .. }, _) => server.on_timer(now),
            (Endpoints::Mptcp { client, .. }, 0) => client.on_timer(now),
            (Endpoints::Mptcp { server, .. }, _) => server.on_timer(now),
        }
    }

    pub fn timer_deadline(&self, ep: usize) -> Option<SimTime> {
        match (self, ep) {
            (Endpoints::Tcp { client, .. }, 0) => client.timer_deadline(),
            (Endpoints::Tcp { server, .. }, _) => server.timer_deadline(),
            (Endpoints::Mptcp { client, .. }, 0) => client.timer_deadline(),
            (Endpoints::Mptcp { server, .. }, _) => server.timer_deadline(),
        }
    }

    /// When every data byte was acknowledged (at the data level for multipath).
    #[inline]
    pub fn finish(&self) -> Option<SimTime> {
        match self {
            Endpoints::Tcp { client, .. } => client.finish(),
            Endpoints::Mptcp { client, .. } => client.finish,
        }
    }

    /// The flow's counters (summed over subflows; bytes acknowledged at the data level).
    pub fn stats(&self) -> SenderStats {
        match self {
            Endpoints::Tcp { client, .. } => client.stats(),
            Endpoints::Mptcp { client, .. } => client.stats(),
        }
    }

    /// Each subflow's sender, in order (the one sender of a TCP flow).
    pub fn senders(&self) -> &[TcpSender] {
        match self {
            Endpoints::Tcp { client, .. } => std::slice::from_ref(client),
            Endpoints::Mptcp { client, .. } => &client.subs,
        }
    }

    /// Each subflow's own counters.
    pub fn subflow_stats(&self) -> Vec<SenderStats> {
        match self {
            Endpoints::Tcp { client, .. } => vec![client.stats()],
            Endpoints::Mptcp { client, .. } => client.subs.iter().map(|s| s.stats()).collect(),
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
                }
            }
            Endpoints::Mptcp { .. } => RecoveryCounters::default(),
        }
    }

    /// AMP's suppression and release episodes.
    pub fn ssr_episodes(&self) -> (u32, u32) {
        match self {
            Endpoints::Mptcp { client, .. } => client.coupling.ssr_episodes(),
            Endpoints::Tcp { .. } => (0, 0),
        }
    }
}
