//! A Homa message behind `transport::pair::Pair`: its record only. Its protocol state
//! lives in its hosts' agents (`sim/homa.rs`), which the simulator drives in place of the
//! endpoint calls, so those do nothing here.

use super::HomaMessage;
use crate::metrics::RecoveryCounters;
use crate::time::SimTime;
use crate::transport::pair::{Pair, ServerCounters};
use crate::transport::tcp::{Segment, SenderStats};

impl Pair for HomaMessage {
    /// The message goes to its sender's agent (`Sim::homa_start`).
    fn open(&mut self) {}

    /// The checker keeps Homa off persistent connections.
    fn make_idle(&mut self) {}

    fn offer(&mut self, _bytes: u64) {}

    fn data_acked(&self) -> u64 {
        self.delivered()
    }

    fn data_received(&self) -> u64 {
        self.delivered()
    }

    fn finish(&self) -> Option<SimTime> {
        self.finish
    }

    fn on_segment(&mut self, _now: SimTime, _ep: usize, _sub: usize, _seg: &Segment) {}

    fn poll_transmit(&mut self, _now: SimTime, _ep: usize) -> Option<(usize, Segment)> {
        None
    }

    fn on_timer(&mut self, _now: SimTime, _ep: usize) {}

    fn timer_deadline(&self, _ep: usize) -> Option<SimTime> {
        None
    }

    fn swap_server(&mut self, other: &mut HomaMessage) {
        self.swap_receiver(other)
    }

    /// The counters in TCP's terms: its sender's timeouts (first packet sent again after
    /// a silence) as timeouts, RESENDs as fast retransmits (a recovery on the receiver's
    /// word).
    fn stats(&self) -> SenderStats {
        let s = self.stats;
        SenderStats {
            bytes_sent: s.bytes_sent,
            bytes_retx: s.bytes_retx,
            bytes_acked: self.delivered(),
            timeouts: s.timeouts,
            fast_retx: s.resends,
            finish: self.finish,
            packets_sent: s.packets_sent,
            packets_retx: s.packets_retx,
            ..SenderStats::default()
        }
    }

    fn recovery_counters(&self) -> RecoveryCounters {
        RecoveryCounters {
            packets_sent: self.stats.packets_sent,
            packets_retx: self.stats.packets_retx,
            grants: self.stats.grants,
            resends: self.stats.resends,
            ..RecoveryCounters::default()
        }
    }

    fn server_counters(&self) -> ServerCounters {
        ServerCounters::default()
    }
}
