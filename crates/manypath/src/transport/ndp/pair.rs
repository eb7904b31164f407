//! NDP's two endpoints behind `transport::pair::Pair`, and what only NDP does: the
//! receiver's pulls, the sender's spraying.

use super::{NdpReceiver, NdpSender};
use crate::engine::Rng;
use crate::metrics::RecoveryCounters;
use crate::time::SimTime;
use crate::transport::pair::{to_endpoint, Pair, ServerCounters};
use crate::transport::tcp::{Segment, SenderStats};

/// NDP's sender and receiver (the receiver's PULLs paced by its host's pacer).
pub struct NdpPair {
    pub client: NdpSender,
    pub server: NdpReceiver,
}

impl NdpPair {
    /// The receiver: the PULLs it asked for since last called.
    pub fn pull_requests(&mut self) -> u32 {
        self.server.take_pull_requests()
    }

    /// The receiver: the pacer's turn (`on_ack`: as its ACK or NACK is made, which then
    /// carries the PULL); whether it pulled.
    pub fn pull(&mut self, on_ack: bool) -> bool {
        self.server.pull(on_ack)
    }

    /// The sender sprays over `n` paths (the connection's routes by subflow index).
    pub fn set_paths(&mut self, n: usize, rng: Rng) {
        self.client.set_paths(n, rng)
    }
}

impl Pair for NdpPair {
    to_endpoint!(stream);

    #[inline]
    fn data_acked(&self) -> u64 {
        self.client.bytes_acked()
    }

    fn data_received(&self) -> u64 {
        self.server.bytes_received()
    }

    #[inline]
    fn finish(&self) -> Option<SimTime> {
        self.client.finish()
    }

    to_endpoint!(segments);

    #[inline]
    fn poll_transmit(&mut self, now: SimTime, ep: usize) -> Option<(usize, Segment)> {
        if ep == 0 {
            self.client.poll_transmit(now)
        } else {
            self.server.poll_transmit(now).map(|s| (0, s))
        }
    }

    to_endpoint!(timers);

    to_endpoint!(swap);

    /// The sender's counters in TCP's terms (NACK-started resends are not fast
    /// retransmits: NDP has no duplicate ACKs).
    fn stats(&self) -> SenderStats {
        let s = self.client.stats();
        SenderStats {
            bytes_sent: s.bytes_sent,
            bytes_retx: s.bytes_retx,
            bytes_acked: s.bytes_acked,
            timeouts: s.timeouts,
            finish: self.client.finish(),
            packets_sent: s.packets_sent,
            packets_retx: s.packets_retx,
            ..SenderStats::default()
        }
    }

    fn recovery_counters(&self) -> RecoveryCounters {
        let s = self.client.stats();
        RecoveryCounters {
            packets_sent: s.packets_sent,
            packets_retx: s.packets_retx,
            pulls: s.pulls,
            nacks: s.nacks,
            trimmed: self.server.trimmed,
            ..RecoveryCounters::default()
        }
    }

    /// The trimmed headers are the receiver's count.
    fn server_counters(&self) -> ServerCounters {
        ServerCounters {
            ir_recovered: 0,
            trimmed: self.server.trimmed,
        }
    }
}
