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

    #[cfg(test)]
    pub(super) fn next_send(&self) -> SimTime {
        self.next_send
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
