//! The retransmission timer (RFC 6298: minimum, maximum, exponential back-off; or the
//! Linux preset's estimator and jiffies), the deadline of every timer the sender runs,
//! what a timeout does (the controller's `on_timeout`, cwnd one MSS, go-back-N), and
//! pFabric's one-byte probes after repeated timeouts.

use super::{earliest, SenderState, TcpSender, NO_SEQ, NO_TIMER};
use crate::net::packet::flags;
use crate::time::SimTime;
use crate::transport::cc::CongestionControl;
use crate::transport::tcp::{linux, Segment};

impl TcpSender {
    /// When the next timer (RTO, loss probe, TCP-IR coding) expires, if any is armed.
    pub fn timer_deadline(&self) -> Option<SimTime> {
        let mut d = self.rto_deadline;
        if self.rec.tlp {
            d = earliest(d, self.x.tlp.deadline());
        }
        if self.rec.tcp_ir {
            d = earliest(d, self.x.ir.deadline());
        }
        if self.pacing {
            d = earliest(d, self.x.pacer.deadline());
        }
        (d != NO_TIMER).then_some(d)
    }

    /// Handles the timers (RTO, loss probe, TCP-IR blocks); harmless if called early.
    pub fn on_timer(&mut self, now: SimTime) {
        if self.pacing {
            self.x.pacer.on_timer(now);
        }
        if self.rec.tcp_ir {
            self.ir_timer(now);
        }
        if self.rec.tlp {
            self.tlp_timer(now);
        }
        if self.rto_deadline == NO_TIMER || now < self.rto_deadline {
            return;
        }
        self.rto_timer(now);
    }

    /// The retransmission timer has expired.
    fn rto_timer(&mut self, now: SimTime) {
        match self.state {
            SenderState::SynSent => self.syn_timeout(now),
            SenderState::Established => {
                if self.snd_una >= self.snd_max {
                    self.rto_deadline = NO_TIMER;
                    return;
                }
                self.x.stats.timeouts += 1;
                let mss = self.fmss();
                let flight = self.snd_nxt - self.snd_una;
                self.cc.on_timeout(&mut self.win, flight, mss);
                self.win.cwnd = mss;
                self.in_recovery = false;
                self.dupacks = 0;
                self.recover = self.snd_max;
                self.retx_seq = NO_SEQ;
                self.snd_nxt = self.snd_una;
                // RFC 6675 §5.1: forget what was retransmitted; resend every unSACKed byte.
                self.after_rto = true;
                self.x.sack.new_episode(self.snd_una);
                self.x.lt_allowance = 0;
                self.x.tlp.reset();
                self.backoff += 1;
                if self.probing() {
                    self.retx_seq = self.snd_una;
                }
                self.arm_timer(now);
            }
            _ => self.rto_deadline = NO_TIMER,
        }
    }

    #[inline]
    pub(super) fn arm_timer(&mut self, now: SimTime) {
        if self.linux {
            return self.arm_timer_linux(now);
        }
        self.rto_deadline = now + self.rtt.rto(self.backoff);
    }

    /// `arm_timer` under the Linux preset: out of line, so that the default path keeps
    /// to its flag test (inline, the branch made every call save registers).
    #[inline(never)]
    fn arm_timer_linux(&mut self, now: SimTime) {
        self.rto_deadline = linux::tick_deadline(now, self.rto(self.backoff), self.x.jiffy);
    }

    /// The Linux preset's RTT sample of an ACK of `ack` (out of line: off, it costs the
    /// ACK path a flag test only).
    #[inline(never)]
    pub(super) fn linux_sample(&mut self, rtt: SimTime, ack: u64) {
        let rto_min = self.linux_rto_min();
        self.x.linux.sample(rtt, ack, self.snd_nxt, rto_min);
    }

    /// rto_min as the Linux preset uses it: in whole jiffies, as Linux holds it.
    pub(super) fn linux_rto_min(&self) -> SimTime {
        linux::rto_min_in_jiffies(self.x.cfg.rto_min, self.x.jiffy)
    }

    /// The timeout after `backoff` consecutive expirations (before rounding to jiffies).
    pub(super) fn rto(&self, backoff: u32) -> SimTime {
        if !self.linux {
            return self.rtt.rto(backoff);
        }
        let c = &self.x.cfg;
        let base = self.x.linux.rto().unwrap_or(c.rto_initial).min(c.rto_max);
        base.saturating_mul(1u64 << backoff.min(30)).min(c.rto_max)
    }

    /// pFabric's probe mode: `probe_after_timeouts` timeouts in a row, no ACK since. (It
    /// needs SACK: the probe goes out as SACK's retransmission, `emit_sack_retx`.)
    pub(super) fn probing(&self) -> bool {
        let k = self.x.cfg.probe_after_timeouts;
        k > 0 && self.backoff >= k
    }

    /// A probe: one byte at `seq`, the first unacknowledged. It occupies the window
    /// after a timeout (one byte of a one-segment window), so nothing else goes before
    /// an ACK, or the next timeout's probe.
    #[cold]
    #[inline(never)]
    pub(super) fn emit_probe(&mut self, now: SimTime, seq: u64) -> Segment {
        self.last_send = now;
        self.bytes_sent += 1;
        self.packets_sent += 1;
        self.x.stats.bytes_retx += 1;
        self.x.stats.packets_retx += 1;
        self.x.stats.packets_at_last_retx = self.packets_sent;
        let mut f = flags::ACK;
        let fin = self.fin_rides(seq, 1);
        if fin {
            f |= flags::FIN;
        }
        self.snd_nxt = self.snd_nxt.max(seq + 1 + fin as u64);
        Segment {
            seq,
            len: 1,
            flags: f,
            ecn: self.ecn,
            ts: now,
            rwnd: self.rcv_wnd,
            ..Segment::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::*;
    use super::*;
    use crate::transport::cc::Reno;
    use crate::transport::protocol::Cc;
    use crate::transport::tcp::{LossRecovery, TcpConfig};
    use crate::transport::testing::{self, first_sends};

    #[test]
    fn timeout_backs_off_and_goes_back() {
        let mut s = established(100_000);
        drain(&mut s, 100);
        let d1 = s.timer_deadline().unwrap();
        s.on_timer(d1);
        assert_eq!(s.stats().timeouts, 1);
        assert_eq!(s.win.cwnd, 1000.0);
        let r = drain(&mut s, d1);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].seq, 0);
        let d2 = s.timer_deadline().unwrap();
        assert_eq!(d2 - d1, 2 * (d1 - 100), "exponential back-off");
    }

    /// pFabric's probe mode: from the second timeout in a row, a timeout resends one
    /// byte of the first unacknowledged segment, and nothing else goes; the ACK of it
    /// ends the mode and a full segment follows.
    #[test]
    fn repeated_timeouts_send_one_byte_probes_until_an_ack() {
        let cfg = TcpConfig {
            probe_after_timeouts: 2,
            recovery: LossRecovery {
                sack: true,
                ..LossRecovery::default()
            },
            ..cfg()
        };
        let mut s = TcpSender::new(cfg, Cc::Reno(Reno::default()), 100_000);
        s.open();
        s.poll_transmit(0).unwrap();
        s.on_segment(
            100,
            &Segment {
                flags: flags::SYN | flags::ACK,
                rwnd: 1 << 20,
                ..Segment::default()
            },
        );
        assert_eq!(drain(&mut s, 100).len(), 2);
        // The first timeout resends a whole segment.
        let d = s.timer_deadline().unwrap();
        s.on_timer(d);
        let r = drain(&mut s, d);
        assert_eq!((r.len(), r[0].seq, r[0].len), (1, 0, 1000));
        // The second and third each send one byte of it, and only that.
        for _ in 0..2 {
            let d = s.timer_deadline().unwrap();
            s.on_timer(d);
            let r = drain(&mut s, d);
            assert_eq!(r.len(), 1, "{r:?}");
            assert_eq!((r[0].seq, r[0].len), (0, 1));
        }
        // The probe's ACK ends the mode: the window (one segment) sends a full one.
        let now = s.timer_deadline().unwrap() - 1;
        s.on_segment(now, &ack(1, now - 10));
        let r = drain(&mut s, now);
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!((r[0].seq, r[0].len), (1, 1000));
        // Without the setting every timeout resends the segment.
        let mut s = established(100_000);
        drain(&mut s, 100);
        for _ in 0..3 {
            let d = s.timer_deadline().unwrap();
            s.on_timer(d);
            assert_eq!(drain(&mut s, d)[0].len, 1000);
        }
    }

    /// The last segment is lost, then its retransmission: no dupacks, so the RTO
    /// (200 ms from the last ACK) repairs it, the second one twice as late.
    #[test]
    fn a_tail_loss_waits_for_the_rto_which_doubles() {
        let mut p = testing::tcp(testing::cfg(), 5000, D);
        p.up.lose(first_sends(&[4000, 4000]));
        let finish = p.finish();
        let rto = testing::cfg().rto_min;
        assert_eq!(
            p.up.times_of(4000),
            vec![2 * D, 4 * D + rto, 4 * D + 3 * rto]
        );
        assert_eq!(p.client.stats().timeouts, 2);
        assert_eq!(finish, 4 * D + 3 * rto + 2 * D);
    }
}
