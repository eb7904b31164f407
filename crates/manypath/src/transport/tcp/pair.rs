//! A TCP connection's two endpoints behind `transport::pair::Pair`.

use super::{Segment, SenderStats, TcpReceiver, TcpSender};
use crate::metrics::RecoveryCounters;
use crate::time::SimTime;
use crate::transport::pair::{to_endpoint, Pair, ServerCounters};

/// A TCP client (data sender) and server (receiver).
pub struct TcpPair {
    pub client: TcpSender,
    pub server: TcpReceiver,
}

impl Pair for TcpPair {
    fn open(&mut self) {
        self.client.open()
    }

    fn make_idle(&mut self) {
        self.client.size = u64::MAX;
        self.client.avail = 0;
    }

    fn offer(&mut self, bytes: u64) {
        self.client.offer(bytes)
    }

    #[inline]
    fn data_acked(&self) -> u64 {
        self.client.snd_una.min(self.client.size)
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
            self.client.poll_transmit(now).map(|s| (0, s))
        } else {
            self.server.poll_transmit(now).map(|s| (0, s))
        }
    }

    to_endpoint!(timers);

    to_endpoint!(swap);

    fn stats(&self) -> SenderStats {
        self.client.stats()
    }

    fn recovery_counters(&self) -> RecoveryCounters {
        let s = &self.client.stats();
        RecoveryCounters {
            packets_sent: s.packets_sent,
            packets_retx: s.packets_retx,
            syn_timeouts: s.syn_timeouts,
            tlp_probes: s.tlp_probes,
            ir_coded: s.ir_coded,
            ir_recovered: self.server.ir_recovered,
            proactive_copies: s.proactive_copies,
            ..RecoveryCounters::default()
        }
    }

    /// TCP-IR's rebuilt segments are the receiver's.
    fn server_counters(&self) -> ServerCounters {
        ServerCounters {
            ir_recovered: self.server.ir_recovered,
            trimmed: 0,
        }
    }

    fn senders(&self) -> &[TcpSender] {
        std::slice::from_ref(&self.client)
    }
}
