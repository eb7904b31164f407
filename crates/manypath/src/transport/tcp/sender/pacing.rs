//! Pacing, on when `TcpConfig::pacing` is: after each data segment the sender waits
//! `len / rate` before the next, at the rate its controller sets (`pacing_rate`; 0 lets
//! segments out as the window allows). While the gate holds, `poll_transmit` yields
//! nothing and `timer_deadline` includes the next-send time, so the simulator's timer
//! wakes the sender then. A sender with pacing off tests one flag.

use super::TcpSender;
use crate::time::SimTime;
use crate::transport::cc::CongestionControl;

/// The next-send gate.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Pacer {
    /// No segment may leave before this time.
    next_send: SimTime,
    /// A poll found the gate shut: the timer is to wake the sender at `next_send`.
    waiting: bool,
}

impl Pacer {
    /// Whether the gate holds at `now` (the wait is then armed).
    #[inline]
    pub(super) fn hold(&mut self, now: SimTime) -> bool {
        self.waiting = now < self.next_send;
        self.waiting
    }

    /// When the gate opens, if a poll is waiting for it (`NO_TIMER` = 0: none).
    pub(super) fn deadline(&self) -> SimTime {
        if self.waiting {
            self.next_send
        } else {
            0
        }
    }

    pub(super) fn on_timer(&mut self, now: SimTime) {
        if now >= self.next_send {
            self.waiting = false;
        }
    }

    /// When the gate shuts after a segment of `len` payload bytes sent at `now` at
    /// `rate` bytes per ps.
    pub(super) fn sent(&mut self, now: SimTime, len: u64, rate: f64) {
        if rate > 0.0 {
            self.next_send = now + (len as f64 / rate).round() as SimTime;
        }
    }
}

impl TcpSender {
    /// Data segment `[seq, seq + len)` leaves at `now`: the gate shuts for `len / rate`,
    /// and the segment's record for delivery-rate samples is taken.
    pub(super) fn paced(&mut self, now: SimTime, seq: u64, len: u64) {
        let rate = self.cc.pacing_rate();
        self.x.pacer.sent(now, len, rate);
        let idle = self.snd_una >= self.snd_max;
        self.x.rate.on_send(now, seq, seq + len, idle);
    }
}

#[cfg(test)]
mod tests {
    use crate::time::{SimTime, PS_PER_US};
    use crate::transport::cc::swift::{Swift, SwiftParams};
    use crate::transport::protocol::Cc;
    use crate::transport::tcp::{TcpConfig, TcpReceiver, TcpSender};
    use crate::transport::testing::{self, Pair};

    const D: SimTime = 10 * PS_PER_US;

    /// Swift below one packet of window (its target far below the bench's RTT keeps it
    /// there) over the bench: with pacing, one segment per RTT/cwnd, the gate's
    /// deadline waking the sender; without, one per ACK, every RTT.
    #[test]
    fn the_gate_spaces_segments_at_the_controllers_rate() {
        for pacing in [true, false] {
            let p = SwiftParams {
                base_target: PS_PER_US,
                hop_scale: 0,
                fs_range: 0,
                ..SwiftParams::default()
            };
            let cfg = TcpConfig {
                pacing,
                init_cwnd: 1,
                ..testing::cfg()
            };
            let client = TcpSender::new(cfg, Cc::Swift(Box::new(Swift::new(p, 0.25))), 20_000);
            let mut pair = Pair::new(client, TcpReceiver::new(cfg), D);
            pair.client.open();
            pair.run_until(400 * D);
            let times: Vec<SimTime> = pair.up.data().map(|s| s.at).collect();
            let gaps: Vec<SimTime> = times.windows(2).map(|w| w[1] - w[0]).collect();
            let Cc::Swift(s) = &pair.client.cc else {
                unreachable!()
            };
            assert!(s.cwnd() < 1.0);
            // The first segment leaves before any RTT is known: the second follows at
            // its ACK.
            assert_eq!(gaps[0], 2 * D);
            if pacing {
                // One RTT (2·D) over a window of at most 1/4 packet: 8·D at least.
                assert!(
                    gaps.len() >= 3 && gaps[1..].iter().all(|&g| g >= 8 * D),
                    "{gaps:?}"
                );
            } else {
                assert!(gaps.iter().all(|&g| g == 2 * D), "{gaps:?}");
            }
        }
    }
}
