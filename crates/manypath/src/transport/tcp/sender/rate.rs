//! Delivery-rate sampling (draft-cheng-iccrg-delivery-rate-estimation), taken by a
//! pacing sender for its controller (BBR): each segment sent remembers the connection's
//! delivered count and times then; when it is acknowledged, the data delivered since
//! over the longer of its send and ACK intervals is a sample of the path's rate.
//! Samples come from cumulative ACKs (SACKed data counts once the cumulative ACK covers
//! it). The segments' records live in a deque that stops growing at the largest flight:
//! no allocation per packet after that.

use std::collections::VecDeque;

use super::TcpSender;
use crate::time::SimTime;
use crate::transport::cc::{CongestionControl, RateSample};

/// What a segment remembers from when it was (last) sent.
#[derive(Clone, Copy, Debug)]
struct SentRecord {
    /// The sequence number after the segment.
    end: u64,
    delivered: u64,
    delivered_time: SimTime,
    first_sent_time: SimTime,
    sent_time: SimTime,
    app_limited: bool,
}

#[derive(Clone, Debug, Default)]
pub(super) struct RateSampler {
    /// Bytes delivered (cumulatively acknowledged) so far, and when the last were.
    delivered: u64,
    delivered_time: SimTime,
    /// When the segment that starts the current send interval was sent.
    first_sent_time: SimTime,
    /// Until `delivered` passes this, samples are app-limited (0: they are not).
    app_limited_until: u64,
    sent: VecDeque<SentRecord>,
}

impl RateSampler {
    /// Segment `[seq, end)` leaves at `now`, with nothing in flight if `idle`.
    pub(super) fn on_send(&mut self, now: SimTime, seq: u64, end: u64, idle: bool) {
        if idle {
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        let rec = SentRecord {
            end,
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            sent_time: now,
            app_limited: self.app_limited_until != 0,
        };
        match self.sent.back() {
            Some(last) if last.end >= end => {
                // A retransmission: the record of the segment holding `seq` starts anew.
                let i = self.sent.partition_point(|r| r.end <= seq);
                if let Some(r) = self.sent.get_mut(i) {
                    *r = SentRecord { end: r.end, ..rec };
                }
            }
            _ => self.sent.push_back(rec),
        }
    }

    /// The sender has nothing more to send with `flight` bytes out: samples until that
    /// much more is delivered understate the path.
    pub(super) fn app_limited(&mut self, flight: u64) {
        self.app_limited_until = (self.delivered + flight).max(1);
    }

    /// The cumulative ACK moved to `una`, `newly` bytes further, at `now`: the sample.
    pub(super) fn on_ack(
        &mut self,
        now: SimTime,
        una: u64,
        newly: u64,
        min_rtt: SimTime,
    ) -> RateSample {
        self.delivered += newly;
        self.delivered_time = now;
        let mut newest: Option<SentRecord> = None;
        while let Some(r) = self.sent.front() {
            if r.end > una {
                break;
            }
            let r = self.sent.pop_front().expect("a front");
            if newest.is_none_or(|n| r.delivered >= n.delivered) {
                newest = Some(r);
            }
        }
        if self.app_limited_until != 0 && self.delivered > self.app_limited_until {
            self.app_limited_until = 0;
        }
        let mut rs = RateSample {
            delivered: self.delivered,
            ..RateSample::default()
        };
        let Some(p) = newest else { return rs };
        rs.prior_delivered = p.delivered;
        rs.app_limited = p.app_limited;
        self.first_sent_time = p.sent_time;
        let send_elapsed = p.sent_time.saturating_sub(p.first_sent_time);
        let ack_elapsed = self.delivered_time.saturating_sub(p.delivered_time);
        let interval = send_elapsed.max(ack_elapsed);
        // An interval shorter than the path's RTT would overstate the rate.
        if interval > 0 && interval >= min_rtt {
            rs.delivery_rate = (self.delivered - p.delivered) as f64 / interval as f64;
        }
        rs
    }
}

impl TcpSender {
    /// A pacing sender's delivery-rate sample of an ACK that moved `snd_una` by `newly`,
    /// passed to the controller before `on_ack` (out of line, as `linux_sample`).
    #[inline(never)]
    pub(super) fn pass_rate_sample(&mut self, now: SimTime, newly: u64) {
        let rs = self.rate_sample(now, newly);
        self.cc.on_rate_sample(&rs);
    }

    /// The rate sample of a cumulative ACK that moved `snd_una` by `newly` (already
    /// moved), with the flight after it.
    pub(super) fn rate_sample(&mut self, now: SimTime, newly: u64) -> RateSample {
        let min_rtt = self.rtt.min_rtt();
        let una = self.snd_una;
        let mut rs = self.x.rate.on_ack(now, una, newly, min_rtt);
        rs.flight = self.snd_nxt.saturating_sub(self.snd_una);
        rs
    }
}
