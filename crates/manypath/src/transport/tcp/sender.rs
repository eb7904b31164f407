//! The client side of a TCP connection: handshake, sending the flow's bytes, loss
//! recovery and the retransmission timer.
//!
//! Sequence space: data bytes are [0, size); the FIN takes sequence number `size`.
//! The flow is complete when every data byte is acknowledged (that instant is its finish
//! time); the connection closes when the FIN is acknowledged.

use super::{RttEstimator, Segment, TcpConfig};
use crate::net::packet::flags;
use crate::time::SimTime;
use crate::transport::cc::{AckEvent, Cc, CongestionControl, Window};
use std::collections::VecDeque;

/// Per-connection counters reported in the flows table.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SenderStats {
    /// Payload bytes put on the wire, retransmissions included.
    pub bytes_sent: u64,
    pub bytes_retx: u64,
    pub bytes_acked: u64,
    pub timeouts: u32,
    pub fast_retx: u32,
    pub finish: Option<SimTime>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SenderState {
    Idle,
    SynSent,
    Established,
    Closed,
}

#[derive(Clone, Debug)]
pub struct TcpSender {
    pub cfg: TcpConfig,
    pub cc: Cc,
    pub state: SenderState,
    /// Data bytes to send (`u64::MAX`: long-lived, or a multipath subflow still open).
    pub size: u64,
    /// Bytes of the stream handed to the sender so far: all of it for a single-path
    /// flow; a multipath subflow is given its data chunk by chunk by its connection.
    pub avail: u64,
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub snd_max: u64,
    pub win: Window,
    pub rtt: RttEstimator,
    dupacks: u32,
    in_recovery: bool,
    recover: u64,
    peer_rwnd: u64,
    /// Sequence to retransmit at once (fast retransmit or a NewReno partial ACK).
    retx_seq: Option<u64>,
    syn_pending: bool,
    ack_fin_pending: bool,
    rto_deadline: SimTime,
    backoff: u32,
    /// Multipath: the ends of the chunks handed over by `offer_chunk`, above `snd_una`.
    /// Each chunk has its own data sequence mapping, so no segment may span two.
    chunk_ends: VecDeque<u64>,
    pub stats: SenderStats,
}

const NO_TIMER: SimTime = 0;

impl TcpSender {
    pub fn new(cfg: TcpConfig, cc: Cc, size: u64) -> TcpSender {
        let mss = cfg.mss as f64;
        TcpSender {
            cfg,
            cc,
            state: SenderState::Idle,
            size,
            avail: size,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            win: Window {
                cwnd: cfg.init_cwnd as f64 * mss,
                ssthresh: cfg.init_ssthresh,
            },
            rtt: RttEstimator::new(cfg.rto_initial, cfg.rto_min, cfg.rto_max),
            dupacks: 0,
            in_recovery: false,
            recover: 0,
            peer_rwnd: cfg.rcv_wnd as u64,
            retx_seq: None,
            syn_pending: false,
            ack_fin_pending: false,
            rto_deadline: NO_TIMER,
            backoff: 0,
            chunk_ends: VecDeque::new(),
            stats: SenderStats::default(),
        }
    }

    /// Opens the connection: the next `poll_transmit` returns the SYN.
    pub fn open(&mut self) {
        self.state = SenderState::SynSent;
        self.syn_pending = true;
    }

    pub fn is_closed(&self) -> bool {
        self.state == SenderState::Closed
    }

    /// Hands the sender `bytes` more of its stream (multipath subflows).
    pub fn offer(&mut self, bytes: u64) {
        self.avail += bytes;
    }

    /// Hands the sender a chunk of `bytes` that segments must not merge with the chunks
    /// before or after it (a multipath subflow's data mappings).
    pub fn offer_chunk(&mut self, bytes: u64) {
        self.avail += bytes;
        self.chunk_ends.push_back(self.avail);
    }

    /// Where the segment starting at data byte `seq` must end: the stream's available
    /// end, the end of its chunk, or one MSS on.
    fn segment_end(&self, seq: u64) -> u64 {
        let mut end = self.size.min(self.avail).min(seq + self.cfg.mss as u64);
        if !self.chunk_ends.is_empty() {
            let i = self.chunk_ends.partition_point(|&e| e <= seq);
            if let Some(&e) = self.chunk_ends.get(i) {
                end = end.min(e);
            }
        }
        end
    }

    /// Ends the stream after the bytes offered so far: the FIN follows them.
    pub fn close(&mut self) {
        self.size = self.avail;
    }

    pub fn is_established(&self) -> bool {
        self.state == SenderState::Established
    }

    /// Everything offered has been sent at least once.
    pub fn all_sent(&self) -> bool {
        self.snd_max >= self.avail.min(self.size)
    }

    /// The window would let one more full segment out now.
    pub fn has_window_room(&self) -> bool {
        let window = self.win.cwnd.min(self.peer_rwnd as f64);
        let flight = self.flight();
        flight == 0 || (flight + self.cfg.mss as u64) as f64 <= window
    }

    /// Bytes sent and not yet acknowledged.
    pub fn in_flight(&self) -> u64 {
        self.flight()
    }

    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    /// When the retransmission timer expires, if armed.
    pub fn timer_deadline(&self) -> Option<SimTime> {
        (self.rto_deadline != NO_TIMER).then_some(self.rto_deadline)
    }

    fn mss(&self) -> f64 {
        self.cfg.mss as f64
    }

    fn flight(&self) -> u64 {
        self.snd_nxt - self.snd_una
    }

    fn arm_timer(&mut self, now: SimTime) {
        self.rto_deadline = now + self.rtt.rto(self.backoff);
    }

    fn data_segment(&mut self, now: SimTime, seq: u64) -> Segment {
        if seq >= self.size {
            // The FIN.
            return Segment {
                seq: self.size,
                flags: flags::FIN | flags::ACK,
                ts: now,
                rwnd: self.cfg.rcv_wnd,
                ..Segment::default()
            };
        }
        let len = (self.segment_end(seq) - seq) as u32;
        self.stats.bytes_sent += len as u64;
        if seq < self.snd_max {
            self.stats.bytes_retx += len as u64;
        }
        Segment {
            seq,
            len,
            flags: flags::ACK,
            ecn: self.cfg.ecn,
            ts: now,
            rwnd: self.cfg.rcv_wnd,
            ..Segment::default()
        }
    }

    /// Sequence length a segment starting at `seq` occupies (payload, or 1 for the FIN).
    fn seg_span(&self, seq: u64) -> u64 {
        if seq >= self.size {
            1
        } else {
            self.segment_end(seq) - seq
        }
    }

    /// The next segment to send now, if any. Call until it returns `None`.
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<Segment> {
        match self.state {
            SenderState::SynSent if self.syn_pending => {
                self.syn_pending = false;
                if self.rto_deadline == NO_TIMER {
                    self.arm_timer(now);
                }
                Some(Segment {
                    flags: flags::SYN,
                    ts: now,
                    ecn: false,
                    rwnd: self.cfg.rcv_wnd,
                    ..Segment::default()
                })
            }
            SenderState::Established => {
                if let Some(seq) = self.retx_seq.take() {
                    // An ACK may have covered it since it was scheduled.
                    if seq >= self.snd_una && seq < self.snd_max {
                        let seg = self.data_segment(now, seq);
                        if self.rto_deadline == NO_TIMER {
                            self.arm_timer(now);
                        }
                        return Some(seg);
                    }
                }
                let data_end = self.size.min(self.avail);
                let fin_due = self.size != u64::MAX && self.snd_nxt == self.size;
                if self.snd_nxt < data_end || fin_due {
                    let span = self.seg_span(self.snd_nxt);
                    let window = self.win.cwnd.min(self.peer_rwnd as f64);
                    let flight = self.flight();
                    let is_fin = self.snd_nxt >= self.size;
                    if is_fin || flight == 0 || (flight + span) as f64 <= window {
                        let seq = self.snd_nxt;
                        let seg = self.data_segment(now, seq);
                        self.snd_nxt += span;
                        self.snd_max = self.snd_max.max(self.snd_nxt);
                        if self.rto_deadline == NO_TIMER {
                            self.arm_timer(now);
                        }
                        return Some(seg);
                    }
                }
                if self.ack_fin_pending {
                    self.ack_fin_pending = false;
                    if self.snd_una > self.size {
                        self.state = SenderState::Closed;
                    }
                    return Some(Segment {
                        seq: self.snd_nxt,
                        ack: 1,
                        flags: flags::ACK,
                        ts: now,
                        rwnd: self.cfg.rcv_wnd,
                        ..Segment::default()
                    });
                }
                None
            }
            _ => None,
        }
    }

    /// Handles a segment from the server.
    pub fn on_segment(&mut self, now: SimTime, seg: &Segment) {
        match self.state {
            SenderState::SynSent => {
                if seg.has(flags::SYN) && seg.has(flags::ACK) {
                    self.state = SenderState::Established;
                    self.rtt.sample(now.saturating_sub(seg.ts_echo));
                    self.peer_rwnd = seg.rwnd as u64;
                    self.backoff = 0;
                    self.rto_deadline = NO_TIMER;
                }
                return;
            }
            SenderState::Established => {}
            _ => return,
        }
        if seg.has(flags::SYN) {
            // A retransmitted SYN-ACK: our handshake ACK is implied by the data we send.
            return;
        }
        if seg.has(flags::FIN) {
            self.ack_fin_pending = true;
        }
        self.peer_rwnd = seg.rwnd as u64;
        let mss = self.mss();
        let cwnd_min = self.cfg.cwnd_min as f64 * mss;
        // Was the window what limited sending? In slow start, Linux counts a window at
        // least half used; in congestion avoidance, one with no room for a segment.
        let flight = self.flight() as f64;
        let cwnd_limited = if self.win.cwnd < self.win.ssthresh {
            2.0 * flight >= self.win.cwnd
        } else {
            flight + mss >= self.win.cwnd
        };
        if seg.ack > self.snd_una {
            let newly = seg.ack - self.snd_una;
            let data_acked = seg.ack.min(self.size) - self.snd_una.min(self.size);
            self.rtt.sample(now.saturating_sub(seg.ts_echo));
            self.snd_una = seg.ack;
            while self.chunk_ends.front().is_some_and(|&e| e <= self.snd_una) {
                self.chunk_ends.pop_front();
            }
            if self.snd_nxt < self.snd_una {
                self.snd_nxt = self.snd_una;
            }
            self.backoff = 0;
            self.stats.bytes_acked += data_acked;
            // The ACK that ends recovery sets cwnd = ssthresh and does not also grow it.
            let was_recovering = self.in_recovery;
            if self.in_recovery {
                if seg.ack >= self.recover {
                    self.in_recovery = false;
                    self.win.cwnd = self.win.ssthresh.max(mss);
                } else {
                    // NewReno partial ACK (RFC 6582): retransmit the next hole, deflate.
                    self.retx_seq = Some(self.snd_una);
                    self.win.cwnd = (self.win.cwnd - newly as f64 + mss).max(mss);
                }
            }
            let ev = AckEvent {
                acked: data_acked,
                ece: seg.ecn,
                snd_una: self.snd_una,
                snd_nxt: self.snd_nxt,
                in_recovery: was_recovering,
                mss,
                cwnd_min,
                cwnd_limited,
                now,
                min_rtt: self.rtt.min_rtt(),
            };
            self.cc.on_ack(&mut self.win, &ev);
            self.dupacks = 0;
            if self.snd_una >= self.size && self.stats.finish.is_none() {
                self.stats.finish = Some(now);
            }
            if self.snd_una >= self.snd_max {
                self.rto_deadline = NO_TIMER;
            } else {
                self.arm_timer(now);
            }
            if self.snd_una > self.size && !self.ack_fin_pending {
                self.state = SenderState::Closed;
                self.rto_deadline = NO_TIMER;
            }
        } else if seg.ack == self.snd_una
            && seg.len == 0
            && !seg.has(flags::FIN)
            && self.snd_max > self.snd_una
        {
            self.dupacks += 1;
            let ev = AckEvent {
                acked: 0,
                ece: seg.ecn,
                snd_una: self.snd_una,
                snd_nxt: self.snd_nxt,
                in_recovery: self.in_recovery,
                mss,
                cwnd_min,
                cwnd_limited,
                now,
                min_rtt: self.rtt.min_rtt(),
            };
            self.cc.on_ack(&mut self.win, &ev);
            if !self.in_recovery
                && self.dupacks == self.cfg.dupack_threshold
                && self.snd_una >= self.recover
            {
                self.stats.fast_retx += 1;
                let flight = self.flight();
                self.cc.on_fast_retransmit(&mut self.win, flight, mss);
                self.win.cwnd = self.win.ssthresh + 3.0 * mss;
                self.recover = self.snd_max;
                self.in_recovery = true;
                self.retx_seq = Some(self.snd_una);
            } else if self.in_recovery {
                self.win.cwnd += mss;
            }
        }
    }

    /// Handles the retransmission timer; harmless if called early.
    pub fn on_timer(&mut self, now: SimTime) {
        if self.rto_deadline == NO_TIMER || now < self.rto_deadline {
            return;
        }
        match self.state {
            SenderState::SynSent => {
                self.stats.timeouts += 1;
                self.backoff += 1;
                self.syn_pending = true;
                self.arm_timer(now);
            }
            SenderState::Established => {
                if self.snd_una >= self.snd_max {
                    self.rto_deadline = NO_TIMER;
                    return;
                }
                self.stats.timeouts += 1;
                let mss = self.mss();
                let flight = self.flight();
                self.cc.on_timeout(&mut self.win, flight, mss);
                self.win.cwnd = mss;
                self.in_recovery = false;
                self.dupacks = 0;
                self.recover = self.snd_max;
                self.retx_seq = None;
                self.snd_nxt = self.snd_una;
                self.backoff += 1;
                self.arm_timer(now);
            }
            _ => self.rto_deadline = NO_TIMER,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::cc::Reno;

    fn cfg() -> TcpConfig {
        TcpConfig {
            mss: 1000,
            init_cwnd: 2,
            rto_min: 1000,
            rto_initial: 10_000,
            ..TcpConfig::default()
        }
    }

    fn established(size: u64) -> TcpSender {
        let mut s = TcpSender::new(cfg(), Cc::Reno(Reno::default()), size);
        s.open();
        let syn = s.poll_transmit(0).unwrap();
        assert!(syn.is_syn());
        assert!(s.poll_transmit(0).is_none());
        s.on_segment(
            100,
            &Segment {
                flags: flags::SYN | flags::ACK,
                ts_echo: 0,
                rwnd: 1 << 20,
                ..Segment::default()
            },
        );
        s
    }

    fn ack(n: u64, ts: SimTime) -> Segment {
        Segment {
            ack: n,
            flags: flags::ACK,
            rwnd: 1 << 20,
            ts_echo: ts,
            ..Segment::default()
        }
    }

    fn drain(s: &mut TcpSender, now: SimTime) -> Vec<Segment> {
        std::iter::from_fn(|| s.poll_transmit(now)).collect()
    }

    #[test]
    fn sends_initial_window_then_grows() {
        let mut s = established(10_000);
        let segs = drain(&mut s, 100);
        assert_eq!(
            segs.iter().map(|s| s.seq).collect::<Vec<_>>(),
            vec![0, 1000]
        );
        s.on_segment(200, &ack(1000, 100));
        // Slow start: cwnd 3 MSS, 1 in flight → two more.
        assert_eq!(drain(&mut s, 200).len(), 2);
    }

    #[test]
    fn completes_and_sends_fin() {
        let mut s = established(1500);
        let segs = drain(&mut s, 100);
        assert_eq!(segs.len(), 3, "two data segments and the FIN");
        assert_eq!(segs[1].len, 500);
        assert!(segs[2].has(flags::FIN));
        s.on_segment(300, &ack(1500, 100));
        assert_eq!(s.stats.finish, Some(300));
        assert!(!s.is_closed());
        s.on_segment(310, &ack(1501, 100));
        assert!(s.is_closed());
    }

    #[test]
    fn triple_dupack_fast_retransmit_and_newreno() {
        let mut s = established(100_000);
        s.win.cwnd = 10_000.0;
        let segs = drain(&mut s, 100);
        assert_eq!(segs.len(), 10);
        // Segment 0 lost: dupacks for 0.
        for _ in 0..3 {
            s.on_segment(200, &ack(0, 100));
        }
        assert_eq!(s.stats.fast_retx, 1);
        let r = drain(&mut s, 200);
        assert_eq!(r[0].seq, 0, "retransmits the hole first");
        assert_eq!(s.stats.bytes_retx, 1000);
        assert_eq!(s.win.ssthresh, 5000.0);
        // Partial ACK up to 3000: retransmit 3000 at once.
        s.on_segment(300, &ack(3000, 200));
        let r = drain(&mut s, 300);
        assert_eq!(r[0].seq, 3000);
        // Full ACK: exit recovery with cwnd = ssthresh.
        s.on_segment(400, &ack(10_000, 300));
        assert_eq!(s.win.cwnd, 5000.0);
    }

    #[test]
    fn timeout_backs_off_and_goes_back() {
        let mut s = established(100_000);
        drain(&mut s, 100);
        let d1 = s.timer_deadline().unwrap();
        s.on_timer(d1);
        assert_eq!(s.stats.timeouts, 1);
        assert_eq!(s.win.cwnd, 1000.0);
        let r = drain(&mut s, d1);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].seq, 0);
        let d2 = s.timer_deadline().unwrap();
        assert_eq!(d2 - d1, 2 * (d1 - 100), "exponential back-off");
    }

    #[test]
    fn window_does_not_grow_when_not_the_limit() {
        let mut s = established(1_000_000);
        s.win.cwnd = 10_000.0;
        s.win.ssthresh = 5_000.0;
        // The receiver allows only 2 segments: the sender is rwnd-limited, not cwnd-limited.
        s.on_segment(
            150,
            &Segment {
                ack: 0,
                rwnd: 2000,
                flags: flags::ACK,
                ..Segment::default()
            },
        );
        drain(&mut s, 150);
        for i in 1..=20u64 {
            s.on_segment(
                200 + i,
                &Segment {
                    ack: i * 1000,
                    rwnd: 2000,
                    flags: flags::ACK,
                    ts_echo: 100,
                    ..Segment::default()
                },
            );
            drain(&mut s, 200 + i);
        }
        assert_eq!(s.win.cwnd, 10_000.0);
    }

    #[test]
    fn receive_window_limits_the_sender() {
        let mut s = established(100_000);
        s.win.cwnd = 50_000.0;
        s.on_segment(
            150,
            &Segment {
                ack: 0,
                rwnd: 3000,
                flags: flags::ACK,
                ..Segment::default()
            },
        );
        assert_eq!(drain(&mut s, 150).len(), 3);
    }

    #[test]
    fn syn_is_retransmitted() {
        let mut s = TcpSender::new(cfg(), Cc::Reno(Reno::default()), 1000);
        s.open();
        s.poll_transmit(0).unwrap();
        let d = s.timer_deadline().unwrap();
        assert_eq!(d, 10_000);
        s.on_timer(d);
        assert!(s.poll_transmit(d).unwrap().is_syn());
    }
}
