//! Sending: `poll_transmit` picks the next segment (the SYN; then, in order, a
//! Proactive copy, a TCP-IR coded packet, a loss probe, a scheduled retransmission,
//! SACK recovery's next segment or new data within the window, and the ACK of the
//! peer's FIN), and `emit` builds it and does the bookkeeping of sending it. Also
//! limited transmit (RFC 3042), the restart after idle (RFC 5681 §4.1) and the FIN,
//! alone or on the last data segment.

use super::{SenderState, TcpSender, NEVER, NO_SEQ, NO_TIMER};
use crate::net::packet::flags;
use crate::time::SimTime;
use crate::transport::tcp::Segment;

impl TcpSender {
    /// The next segment to send now, if any. Call until it returns `None`.
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<Segment> {
        match self.state {
            SenderState::SynSent if self.syn_pending => Some(self.syn(now)),
            SenderState::Established => {
                if self.pacing && self.x.pacer.hold(now) {
                    return None;
                }
                if self.rec.proactive {
                    if let Some(copy) = self.x.proactive.take() {
                        return Some(copy);
                    }
                }
                if self.rec.tcp_ir {
                    if let Some(seg) = self.ir_coded_due(now) {
                        return Some(seg);
                    }
                }
                if self.rec.tlp && self.x.tlp.take_probe() {
                    if let Some(seg) = self.send_probe(now) {
                        return Some(seg);
                    }
                }
                let seq = std::mem::replace(&mut self.retx_seq, NO_SEQ);
                if seq != NO_SEQ {
                    // An ACK may have covered it since it was scheduled.
                    if seq >= self.snd_una && seq < self.snd_max {
                        if self.rec.sack {
                            return Some(self.emit_sack_retx(now, seq));
                        }
                        return Some(self.emit(now, seq));
                    }
                }
                let next = if self.rec.sack && self.in_recovery {
                    self.sack_recovery_next(now)
                } else {
                    self.send_next(now)
                };
                if next.is_some() {
                    return next;
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
                        rwnd: self.rcv_wnd,
                        ..Segment::default()
                    });
                }
                None
            }
            _ => None,
        }
    }

    /// The segment at `snd_nxt` (new data, the FIN, or an RTO's go-back-N) if the
    /// window allows it, or limited transmit does.
    fn send_next(&mut self, now: SimTime) -> Option<Segment> {
        if self.rec.sack && self.snd_nxt < self.snd_max {
            // Go-back-N after an RTO skips what the receiver holds.
            self.snd_nxt = self.next_unsacked(self.snd_nxt).unwrap_or(self.snd_max);
        }
        let data_end = self.data_end();
        let fin_due = self.size != u64::MAX && self.snd_nxt == self.size;
        if self.snd_nxt >= data_end && !fin_due {
            if self.pacing {
                self.x.rate.app_limited(self.snd_nxt - self.snd_una);
            }
            return None;
        }
        if self.rec.idle_restart {
            self.restart_after_idle(now);
        }
        let span = self.seg_span(self.snd_nxt);
        let window = self.win.cwnd.min(self.peer_rwnd as f64);
        let flight = self.flight();
        let is_fin = self.snd_nxt >= self.size;
        if is_fin || flight == 0 || (flight + span) as f64 <= window {
            return Some(self.emit_next(now));
        }
        // RFC 3042: past cwnd by at most two segments, within the receive window.
        if self.rec.limited_transmit
            && self.x.lt_allowance > 0
            && self.snd_nxt == self.snd_max
            && (flight + span) as f64 <= self.win.cwnd + 2.0 * self.fmss()
            && self.snd_max + span - self.snd_una <= self.peer_rwnd as u64
        {
            self.x.lt_allowance -= 1;
            return Some(self.emit_next(now));
        }
        None
    }

    /// RFC 5681 §4.1: a sender that has been idle for longer than its RTO restarts from
    /// at most the initial window.
    fn restart_after_idle(&mut self, now: SimTime) {
        if self.snd_una < self.snd_max || self.snd_nxt != self.snd_max {
            return;
        }
        if self.last_send != NEVER && now.saturating_sub(self.last_send) > self.rto(0) {
            let iw = self.x.cfg.init_cwnd as f64 * self.fmss();
            self.win.cwnd = self.win.cwnd.min(iw);
        }
    }

    /// Sends the segment at `snd_nxt` and advances it.
    pub(super) fn emit_next(&mut self, now: SimTime) -> Segment {
        let seq = self.snd_nxt;
        let span = self.seg_span(seq);
        let seg = self.emit(now, seq);
        self.snd_nxt += span;
        self.snd_max = self.snd_max.max(self.snd_nxt);
        if self.rec.tlp {
            self.arm_tlp(now);
        }
        seg
    }

    /// Builds the segment at `seq` and does the bookkeeping of sending it: counters,
    /// the RTO, the Proactive copy, TCP-IR's block.
    pub(super) fn emit(&mut self, now: SimTime, seq: u64) -> Segment {
        self.last_send = now;
        if self.rto_deadline == NO_TIMER {
            self.arm_timer(now);
        }
        if seq >= self.size {
            // The FIN alone.
            return Segment {
                seq: self.size,
                flags: flags::FIN | flags::ACK,
                ts: now,
                rwnd: self.rcv_wnd,
                ..Segment::default()
            };
        }
        let len = self.seg_len(seq);
        let mut f = flags::ACK;
        if self.fin_rides(seq, len) {
            f |= flags::FIN;
        }
        self.bytes_sent += len;
        self.packets_sent += 1;
        if seq < self.snd_max {
            self.x.stats.bytes_retx += len;
            self.x.stats.packets_retx += 1;
            self.x.stats.packets_at_last_retx = self.packets_sent;
        } else if self.rec.tcp_ir {
            self.ir_add(now, seq, seq + len);
        }
        if self.pacing {
            self.paced(now, seq, len);
        }
        let seg = Segment {
            seq,
            len: len as u32,
            flags: f,
            ecn: self.ecn,
            ts: now,
            rwnd: self.rcv_wnd,
            ..Segment::default()
        };
        if self.rec.proactive {
            self.x.proactive.keep(seg);
            self.x.stats.proactive_copies += 1;
        }
        seg
    }

    /// Payload bytes of the segment starting at `seq` (a data byte): up to one MSS, and
    /// with SACK not into the next SACKed range.
    #[inline]
    fn seg_len(&self, seq: u64) -> u64 {
        let mut len = self.segment_end(seq) - seq;
        if !self.rec.sack {
            return len;
        }
        if let Some(s) = self.x.sack.next_sacked_above(seq) {
            len = len.min(s - seq);
        }
        len
    }

    /// Whether the data segment [seq, seq + len) carries the FIN.
    pub(super) fn fin_rides(&self, seq: u64, len: u64) -> bool {
        self.rec.fin_with_data && seq + len == self.size
    }

    /// Sequence length a segment starting at `seq` occupies (payload, plus one for a FIN).
    #[inline]
    pub(super) fn seg_span(&self, seq: u64) -> u64 {
        if seq >= self.size {
            1
        } else {
            let len = self.seg_len(seq);
            len + self.fin_rides(seq, len) as u64
        }
    }

    /// The receive window has room for the segment at `seq` on top of everything sent
    /// (it would go out as new data).
    pub(super) fn rwnd_has_room(&self, seq: u64) -> bool {
        self.snd_max + self.seg_span(seq) - self.snd_una <= self.peer_rwnd as u64
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::*;
    use super::*;
    use crate::transport::tcp::{LossRecovery, TcpConfig};
    use crate::transport::testing;

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
        assert_eq!(s.stats().finish, Some(300));
        assert!(!s.is_closed());
        s.on_segment(310, &ack(1501, 100));
        assert!(s.is_closed());
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
    fn idle_restart_resets_cwnd_to_the_initial_window() {
        for idle_restart in [true, false] {
            let c = TcpConfig {
                init_cwnd: 2,
                ..with(LossRecovery {
                    idle_restart,
                    ..LossRecovery::default()
                })
            };
            let mut p = testing::tcp(c, 0, D);
            p.client.size = u64::MAX;
            p.client.offer(5000);
            p.run();
            assert_eq!(p.client.bytes_acked(), 5000);
            assert_eq!(p.client.in_flight(), 0);
            p.client.win.cwnd = 20_000.0;
            p.client.offer(10_000);
            p.now += 10 * p.client.rtt.rto(0);
            p.flush();
            let n = p.up.seqs(p.now..).len();
            if idle_restart {
                assert_eq!(p.client.win.cwnd, 2000.0);
                assert_eq!(n, 2);
            } else {
                assert_eq!(n, 10);
            }
        }
    }

    #[test]
    fn fin_rides_on_the_last_data_segment() {
        let c = with(LossRecovery {
            fin_with_data: true,
            ..LossRecovery::default()
        });
        let mut p = testing::tcp(c, 2500, D);
        assert_eq!(p.finish(), 4 * D);
        let sent: Vec<Segment> = p.up.log.iter().skip(1).map(|s| s.seg).collect();
        assert_eq!(sent.len(), 3, "no segment for the FIN alone");
        assert!(sent[2].has(flags::FIN) && sent[2].len == 500);
        assert_eq!(p.down.log.last().unwrap().seg.ack, 2501);
    }
}
