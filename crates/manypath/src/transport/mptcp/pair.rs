//! A multipath connection's two endpoints behind `transport::pair::Pair`.

use super::sender::MptcpCounters;
use super::{MptcpReceiver, MptcpSender};
use crate::metrics::RecoveryCounters;
use crate::time::SimTime;
use crate::transport::pair::{to_endpoint, Pair, ServerCounters};
use crate::transport::tcp::{Segment, SenderStats, TcpSender};

/// A multipath client and server with their subflows.
pub struct MptcpPair {
    pub client: MptcpSender,
    pub server: MptcpReceiver,
}

impl Pair for MptcpPair {
    to_endpoint!(stream);

    #[inline]
    fn data_acked(&self) -> u64 {
        self.client.data_una
    }

    fn data_received(&self) -> u64 {
        self.server.bytes_received()
    }

    #[inline]
    fn finish(&self) -> Option<SimTime> {
        self.client.finish
    }

    #[inline]
    fn on_segment(&mut self, now: SimTime, ep: usize, sub: usize, seg: &Segment) {
        if ep == 0 {
            self.client.on_segment(now, sub, seg)
        } else {
            self.server.on_segment(now, sub, seg)
        }
    }

    #[inline]
    fn poll_transmit(&mut self, now: SimTime, ep: usize) -> Option<(usize, Segment)> {
        if ep == 0 {
            self.client.poll_transmit(now)
        } else {
            self.server.poll_transmit(now)
        }
    }

    to_endpoint!(timers);

    to_endpoint!(swap);

    fn stats(&self) -> SenderStats {
        self.client.stats()
    }

    /// Multipath flows keep their recovery counters per subflow (`subflow_stats`).
    fn recovery_counters(&self) -> RecoveryCounters {
        RecoveryCounters::default()
    }

    fn server_counters(&self) -> ServerCounters {
        ServerCounters::default()
    }

    fn subflows(&self) -> usize {
        self.client.subs.len()
    }

    fn subflow_stats(&self) -> Vec<SenderStats> {
        self.client.subs.iter().map(|s| s.stats()).collect()
    }

    fn senders(&self) -> &[TcpSender] {
        &self.client.subs
    }

    fn mptcp_counters(&self) -> MptcpCounters {
        self.client.counters
    }

    fn ssr_episodes(&self) -> (u32, u32) {
        self.client.coupling.ssr_episodes()
    }
}
