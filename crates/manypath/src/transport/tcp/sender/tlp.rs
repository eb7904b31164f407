//! Tail loss probe, on when `LossRecovery::tlp` is: while data is outstanding outside
//! recovery, a probe timer runs 2·SRTT from the last send or ACK; when it fires, one
//! segment goes out (new data if the receive window allows, else the highest segment
//! again), so that the ACK it draws starts fast recovery instead of waiting for the RTO.
//! One probe at a time: the next waits for an ACK that covers what was sent up to it.

use super::{SenderState, TcpSender, NO_TIMER};
use crate::time::SimTime;
use crate::transport::tcp::linux;
use crate::transport::tcp::Segment;

/// The probe timer and what it has done.
#[derive(Clone, Copy, Debug)]
pub(super) struct Tlp {
    /// When the probe is due (`NO_TIMER`: not armed).
    deadline: SimTime,
    /// The timer has fired: the next `poll_transmit` sends the probe.
    probe_due: bool,
    /// A probe was sent and no ACK has covered it yet: no other probe goes until one
    /// does (RFC 8985 §7.4, Linux's `tlp_high_seq`), or until an RTO.
    outstanding: bool,
    /// The highest sequence sent when the probe went (`snd_max`): an ACK at or above it
    /// answers the probe.
    high: u64,
}

impl Tlp {
    pub(super) fn new() -> Tlp {
        Tlp {
            deadline: NO_TIMER,
            probe_due: false,
            outstanding: false,
            high: 0,
        }
    }

    /// When the probe is due (`NO_TIMER`: not armed).
    pub(super) fn deadline(&self) -> SimTime {
        self.deadline
    }

    /// Arms the timer at `now` + PTO, PTO = 2·SRTT (at least 1.5·SRTT plus `delack`, the
    /// delayed-ACK timeout, when the ACK of a lone segment may be held back), unless a
    /// probe is unanswered or the RTO (`rto_deadline`) would come first.
    pub(super) fn arm(
        &mut self,
        now: SimTime,
        srtt: SimTime,
        delack: Option<SimTime>,
        rto_deadline: SimTime,
    ) {
        self.deadline = NO_TIMER;
        if self.outstanding {
            return;
        }
        let mut pto = 2 * srtt;
        if let Some(delack) = delack {
            pto = pto.max(srtt * 3 / 2 + delack);
        }
        let at = now + pto;
        if rto_deadline == NO_TIMER || at < rto_deadline {
            self.deadline = at;
        }
    }

    /// Arms the timer at `at`, or at the RTO (`rto_deadline`) if that comes first,
    /// unless a probe is unanswered.
    pub(super) fn arm_at(&mut self, at: SimTime, rto_deadline: SimTime) {
        self.deadline = NO_TIMER;
        if self.outstanding {
            return;
        }
        self.deadline = if rto_deadline == NO_TIMER {
            at
        } else {
            at.min(rto_deadline)
        };
    }

    pub(super) fn disarm(&mut self) {
        self.deadline = NO_TIMER;
    }

    /// The timer has run out by `now`; it is disarmed.
    pub(super) fn expired(&mut self, now: SimTime) -> bool {
        if self.deadline != NO_TIMER && now >= self.deadline {
            self.deadline = NO_TIMER;
            return true;
        }
        false
    }

    /// The probe is to go out (and counts as unanswered until an ACK covers `high`, the
    /// highest sequence sent by then).
    pub(super) fn fire(&mut self, high: u64) {
        self.probe_due = true;
        self.outstanding = true;
        self.high = high;
    }

    /// Whether a probe is due; it is no longer.
    pub(super) fn take_probe(&mut self) -> bool {
        std::mem::replace(&mut self.probe_due, false)
    }

    /// An ACK of everything below `ack` arrived: it answers the probe if it covers what
    /// was sent up to it. A duplicate ACK (the probe resent a segment the receiver
    /// held, or a hole below it remains) does not: another probe would draw the same
    /// ACK and push the RTO back each time, so the RTO repairs the hole.
    pub(super) fn on_ack(&mut self, ack: u64) {
        if ack >= self.high {
            self.outstanding = false;
        }
    }

    /// An RTO: no probe pending, armed or unanswered.
    pub(super) fn reset(&mut self) {
        *self = Tlp::new();
    }
}

/// Where a probe that resends starts: the last segment below `top` (the highest data
/// byte sent, exclusive), or the FIN at `size` when only the FIN is outstanding.
fn resend_seq(snd_una: u64, top: u64, size: u64, mss: u64) -> u64 {
    if snd_una >= top {
        size
    } else {
        ((top - 1) / mss * mss).max(snd_una)
    }
}

/// The probe as the sender runs it.
impl TcpSender {
    /// Schedules a probe 2·SRTT from now while data is outstanding outside recovery
    /// (and no probe is unanswered), unless the RTO would come first.
    pub(super) fn arm_tlp(&mut self, now: SimTime) {
        if self.in_recovery
            || self.after_rto
            || self.snd_una >= self.snd_max
            || self.state != SenderState::Established
        {
            self.x.tlp.disarm();
            return;
        }
        if self.linux {
            self.arm_linux_tlp(now);
            return;
        }
        let Some(srtt) = self.rtt.srtt() else {
            self.x.tlp.disarm();
            return;
        };
        // A lone segment's ACK may be delayed.
        let lone = self.x.cfg.delayed_ack && self.snd_max - self.snd_una <= self.mss as u64;
        let delack = lone.then_some(self.x.cfg.delack_timeout);
        self.x.tlp.arm(now, srtt, delack, self.rto_deadline);
    }

    /// Linux's probe timeout: 2·srtt, plus rto_min when one segment is outstanding (its
    /// ACK may be delayed) or 2 jiffies otherwise, in jiffies; when the RTO would come
    /// first, the probe takes its place (it fires at the RTO's time).
    fn arm_linux_tlp(&mut self, now: SimTime) {
        let Some(srtt) = self.x.linux.srtt() else {
            self.x.tlp.disarm();
            return;
        };
        let lone = self.snd_max - self.snd_una <= self.mss as u64;
        let extra = if lone {
            self.linux_rto_min()
        } else {
            linux::PTO_MIN_EXTRA_JIFFIES * self.x.jiffy
        };
        let at = linux::tick_deadline(now, 2 * srtt + extra, self.x.jiffy);
        self.x.tlp.arm_at(at, self.rto_deadline);
    }

    /// The probe's timer: the probe goes out at the next `poll_transmit`.
    pub(super) fn tlp_timer(&mut self, now: SimTime) {
        if self.x.tlp.expired(now)
            && self.state == SenderState::Established
            && self.snd_una < self.snd_max
            && !self.in_recovery
        {
            self.x.tlp.fire(self.snd_max);
            // The RTO runs from the probe.
            self.arm_timer(now);
        }
    }

    /// The probe: a new segment if the receive window allows one, else the
    /// highest-sequence segment again.
    pub(super) fn send_probe(&mut self, now: SimTime) -> Option<Segment> {
        if self.snd_una >= self.snd_max {
            return None;
        }
        self.x.stats.tlp_probes += 1;
        if self.snd_nxt == self.snd_max
            && self.snd_max < self.data_end()
            && self.rwnd_has_room(self.snd_max)
        {
            return Some(self.emit_next(now));
        }
        let top = self.snd_max.min(self.size);
        let seq = resend_seq(self.snd_una, top, self.size, self.mss as u64);
        Some(self.emit(now, seq))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::PS_PER_US;
    use crate::transport::tcp::{LossRecovery, TcpConfig};
    use crate::transport::testing::{self, first_sends};

    /// The one-way delay of the bench's links.
    const D: SimTime = 10 * PS_PER_US;

    #[test]
    fn the_timer_waits_two_srtt_and_yields_to_an_earlier_rto_or_an_unanswered_probe() {
        let mut t = Tlp::new();
        t.arm(100, 10, None, 1000);
        assert_eq!(t.deadline(), 120);
        t.arm(100, 10, Some(30), 1000);
        assert_eq!(t.deadline(), 145, "1.5·SRTT plus the delayed-ACK timeout");
        t.arm(100, 10, None, 110);
        assert_eq!(t.deadline(), NO_TIMER, "the RTO comes first");
        t.arm(100, 10, None, 1000);
        assert!(!t.expired(119) && t.expired(120));
        t.fire(5000);
        assert!(t.take_probe() && !t.take_probe());
        t.arm(200, 10, None, 1000);
        assert_eq!(t.deadline(), NO_TIMER, "a probe is unanswered");
        t.on_ack(4000);
        t.arm(200, 10, None, 1000);
        assert_eq!(
            t.deadline(),
            NO_TIMER,
            "an ACK below the probe does not answer it"
        );
        t.on_ack(5000);
        t.arm(200, 10, None, 1000);
        assert_eq!(t.deadline(), 220);
    }

    #[test]
    fn a_resent_probe_is_the_last_segment() {
        assert_eq!(resend_seq(0, 10_000, 10_000, 1000), 9000);
        assert_eq!(resend_seq(8000, 9500, 10_000, 1000), 9000);
        assert_eq!(resend_seq(9200, 9500, 10_000, 1000), 9200);
        assert_eq!(resend_seq(10_000, 10_000, 10_000, 1000), 10_000, "the FIN");
    }

    /// The last two of ten segments are lost (the FIN rides on the last, which leaves
    /// when the first ACK opens the window). The probe 2·SRTT after the last ACK resends
    /// segment 9; its SACK makes segment 8 lost (early retransmit, k = 1), and fast
    /// recovery repairs it before the RTO.
    #[test]
    fn tail_loss_probe_turns_a_tail_loss_into_fast_recovery() {
        let rec = LossRecovery {
            tlp: true,
            early_retransmit: true,
            sack: true,
            fin_with_data: true,
            ..LossRecovery::default()
        };
        let c = TcpConfig {
            recovery: rec,
            ..testing::cfg()
        };
        let mut p = testing::tcp(c, 10_000, D);
        p.up.lose(first_sends(&[8000, 9000]));
        p.run_until(4 * D);
        assert_eq!(p.client.snd_una, 8000);
        let srtt = p.client.rtt.srtt().unwrap();
        let pto = p.client.timer_deadline().unwrap();
        assert_eq!(pto, 4 * D + 2 * srtt);
        assert!(pto < p.client.rto_deadline);
        let finish = p.finish();
        assert_eq!(p.up.times_of(9000), vec![4 * D, pto], "the probe");
        assert_eq!(p.up.times_of(8000), vec![2 * D, pto + 2 * D], "the repair");
        assert_eq!(finish, pto + 4 * D);
        let st = p.client.stats();
        assert_eq!((st.tlp_probes, st.fast_retx, st.timeouts), (1, 1, 0));
    }

    /// A hole with too few SACKed segments above it for fast retransmit, and the last
    /// segment already held by the receiver: the probe resends that segment and draws a
    /// duplicate ACK. That does not answer the probe, so no second probe goes (each
    /// would push the RTO back): the RTO repairs the hole.
    #[test]
    fn a_probe_answered_by_a_duplicate_ack_is_not_repeated() {
        let rec = LossRecovery {
            tlp: true,
            sack: true,
            fin_with_data: true,
            ..LossRecovery::default()
        };
        let c = TcpConfig {
            recovery: rec,
            init_cwnd: 10,
            ..testing::cfg()
        };
        let mut p = testing::tcp(c, 10_000, D);
        // Segments 6 and 8 are lost: only 7 and 9 are SACKed above 6 (DupThresh 3).
        p.up.lose(first_sends(&[6000, 8000]));
        p.finish();
        let st = p.client.stats();
        assert_eq!((st.tlp_probes, st.timeouts), (1, 1), "{st:?}");
        assert!(st.finish.is_some());
    }
}
