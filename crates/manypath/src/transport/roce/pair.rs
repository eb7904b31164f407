//! A RoCE queue pair's two endpoints behind `transport::pair::Pair`, and what only RoCE
//! does: HPCC's INT records, its time-series sample.

use super::{RoceReceiver, RoceSender};
use crate::metrics::RecoveryCounters;
use crate::net::int::IntStack;
use crate::time::SimTime;
use crate::transport::pair::{to_endpoint, Pair, ServerCounters};
use crate::transport::tcp::{Segment, SenderStats};

/// A RoCE queue pair: its requester and responder.
pub struct RocePair {
    pub client: RoceSender,
    pub server: RoceReceiver,
}

impl RocePair {
    /// A packet for endpoint `ep` with the INT records it carries (HPCC's data to the
    /// responder, the echo on an ACK to the requester).
    pub fn on_segment_int(&mut self, now: SimTime, ep: usize, seg: &Segment, int: &IntStack) {
        if ep == 0 {
            self.client.on_segment_int(now, seg, int.hops())
        } else {
            self.server.on_segment_int(now, seg, int)
        }
    }

    /// The INT records the responder's next ACK echoes.
    pub fn int_echo(&self) -> &IntStack {
        self.server.echo()
    }

    /// The time-series sample: bytes acknowledged and the window in bytes (0 without
    /// one).
    pub fn sample(&self) -> (u64, f64) {
        (
            self.client.bytes_acked(),
            self.client.window().map_or(0.0, |w| w as f64),
        )
    }

    /// Header bytes per packet.
    pub fn header(&self) -> u32 {
        self.client.config().header
    }
}

impl Pair for RocePair {
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
            self.client.poll_transmit(now).map(|s| (0, s))
        } else {
            self.server.poll_transmit(now).map(|s| (0, s))
        }
    }

    to_endpoint!(timers);

    to_endpoint!(swap);

    /// The requester's counters in TCP's terms: NAK-started recoveries count as fast
    /// retransmits (a recovery on the receiver's word, before any timeout).
    fn stats(&self) -> SenderStats {
        let s = self.client.stats();
        SenderStats {
            bytes_sent: s.bytes_sent,
            bytes_retx: s.bytes_retx,
            bytes_acked: s.bytes_acked,
            timeouts: s.timeouts,
            fast_retx: s.recoveries,
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
            naks: s.naks,
            cnps: s.cnps,
            ..RecoveryCounters::default()
        }
    }

    fn server_counters(&self) -> ServerCounters {
        ServerCounters::default()
    }
}
