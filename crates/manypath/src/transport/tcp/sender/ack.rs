//! What an ACK does: the cumulative acknowledgment (RTT sample, the controller's
//! `on_ack`, the end of recovery, the finish time, the RTO re-armed), SACK blocks,
//! duplicate ACKs and the loss recovery they start: fast retransmit with RFC 5681's
//! threshold, lowered by early retransmit (RFC 5827), then NewReno's partial ACKs
//! (RFC 6582) or, with SACK, RFC 6675's recovery (`sack.rs`).

use super::{SenderState, TcpSender, NO_TIMER};
use crate::net::packet::flags;
use crate::time::SimTime;
use crate::transport::cc::{AckEvent, CongestionControl};
use crate::transport::tcp::Segment;

impl TcpSender {
    /// Handles a segment from the server.
    pub fn on_segment(&mut self, now: SimTime, seg: &Segment) {
        match self.state {
            SenderState::SynSent => {
                if seg.has(flags::SYN) && seg.has(flags::ACK) {
                    self.on_syn_ack(now, seg);
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
        self.peer_rwnd = seg.rwnd;
        if self.rec.tlp {
            self.x.tlp.on_ack(seg.ack);
        }
        let sack = self.rec.sack;
        let mss = self.fmss();
        let cwnd_min = self.cwnd_min as f64 * mss;
        // Was the window what limited sending? In slow start, Linux counts a window at
        // least half used; in congestion avoidance, one with no room for a segment.
        let flight = self.flight() as f64;
        let cwnd_limited = if self.win.cwnd < self.win.ssthresh {
            2.0 * flight >= self.win.cwnd
        } else {
            flight + mss >= self.win.cwnd
        };
        let advanced = seg.ack > self.snd_una;
        if advanced {
            let newly = seg.ack - self.snd_una;
            let data_acked = seg.ack.min(self.size) - self.snd_una.min(self.size);
            let rtt = now.saturating_sub(seg.ts_echo);
            self.rtt.sample(rtt);
            if self.linux {
                self.linux_sample(rtt, seg.ack);
            }
            self.snd_una = seg.ack;
            if self.snd_nxt < self.snd_una {
                self.snd_nxt = self.snd_una;
            }
            if sack {
                self.x.sack.trim(self.snd_una);
            }
            if self.after_rto && self.snd_una >= self.recover {
                self.after_rto = false;
            }
            self.backoff = 0;
            self.bytes_acked += data_acked;
            // The ACK that ends recovery sets cwnd = ssthresh and does not also grow it.
            let was_recovering = self.in_recovery;
            if self.in_recovery {
                if seg.ack >= self.recover {
                    self.in_recovery = false;
                    self.win.cwnd = self.win.ssthresh.max(mss);
                    self.x.sack.end_episode();
                } else if !sack {
                    // NewReno partial ACK (RFC 6582): retransmit the next hole, deflate.
                    self.retx_seq = self.snd_una;
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
                rtt,
                endpoint_delay: seg.data_ack,
            };
            if self.pacing {
                self.pass_rate_sample(now, newly);
            }
            self.cc.on_ack(&mut self.win, &ev);
            self.dupacks = 0;
            if self.rec.limited_transmit {
                self.x.lt_allowance = 0;
            }
            if self.snd_una >= self.size && self.x.stats.finish.is_none() {
                self.x.stats.finish = Some(now);
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
        }
        let mut newly_sacked = 0;
        if sack && seg.has(flags::SACK) {
            for (s, e) in seg.sack_blocks() {
                newly_sacked += self.x.sack.insert(s.max(self.snd_una), e.min(self.snd_max));
            }
        }
        if self.in_recovery && (advanced || newly_sacked > 0) && self.x.cfg.lost_retransmit {
            self.detect_lost_retransmissions(seg.ts_echo);
        }
        // A duplicate ACK: with SACK, one that SACKs new data (RFC 6675), so the ACKs of
        // duplicated segments do not count.
        let dupack = !advanced
            && seg.ack == self.snd_una
            && self.snd_max > self.snd_una
            && if sack {
                newly_sacked > 0
            } else {
                seg.len == 0 && !seg.has(flags::FIN)
            };
        let may_enter = !self.in_recovery && self.snd_una >= self.recover;
        if dupack {
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
                rtt: 0,
                endpoint_delay: 0,
            };
            self.cc.on_ack(&mut self.win, &ev);
            if may_enter
                && (self.dupacks >= self.dupthresh() || sack && self.snd_una < self.lost_end())
            {
                self.enter_recovery();
            } else if may_enter {
                if self.rec.limited_transmit && self.dupacks <= 2 {
                    self.x.lt_allowance += 1;
                }
            } else if self.in_recovery && !sack {
                self.win.cwnd += mss;
            }
        } else if sack
            && advanced
            && may_enter
            && self.snd_max > self.snd_una
            && self.snd_una < self.lost_end()
        {
            // The cumulative ACK left a hole with enough SACKed data above it.
            self.enter_recovery();
        }
        if self.rec.tlp && self.state == SenderState::Established {
            self.arm_tlp(now);
        }
    }

    /// The duplicate-ACK threshold now: RFC 5827's early retransmit lowers it to one
    /// less than the segments outstanding when fewer than four are and nothing new can
    /// be sent.
    pub(super) fn dupthresh(&self) -> u32 {
        let k = self.x.cfg.dupack_threshold;
        if !self.rec.early_retransmit {
            return k;
        }
        // Segments outstanding: the data, and a FIN sent on its own.
        let data_out = self.snd_max.min(self.size) - self.snd_una.min(self.size);
        let lone_fin = self.snd_max > self.size && !self.rec.fin_with_data;
        let oseg = data_out.div_ceil(self.mss as u64) + lone_fin as u64;
        let can_send_new = self.snd_max < self.data_end() && self.rwnd_has_room(self.snd_max);
        if oseg < 4 && !can_send_new {
            (oseg.saturating_sub(1).max(1) as u32).min(k)
        } else {
            k
        }
    }

    fn enter_recovery(&mut self) {
        let mss = self.fmss();
        self.x.stats.fast_retx += 1;
        let flight = self.snd_nxt - self.snd_una;
        self.cc.on_fast_retransmit(&mut self.win, flight, mss);
        if self.rec.sack {
            // RFC 6675: cwnd = ssthresh, and the recovery sends what the pipe allows.
            self.win.cwnd = self.win.ssthresh.max(mss);
            self.x.sack.new_episode(self.snd_una);
        } else {
            self.win.cwnd = self.win.ssthresh + 3.0 * mss;
        }
        self.recover = self.snd_max;
        self.in_recovery = true;
        self.retx_seq = self.snd_una;
        self.x.lt_allowance = 0;
        self.x.tlp.disarm();
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::*;
    use super::*;
    use crate::transport::tcp::{LossRecovery, TcpConfig};
    use crate::transport::testing::{self, first_sends};

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
        assert_eq!(s.stats().fast_retx, 1);
        let r = drain(&mut s, 200);
        assert_eq!(r[0].seq, 0, "retransmits the hole first");
        assert_eq!(s.stats().bytes_retx, 1000);
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

    // ---- Over the bench's links (one-way delay D, the window of 10 goes out at 2·D) ----

    /// Segment 6 of the first window of ten is lost: the three after it bring the
    /// third dupack one round trip after it left. It is resent then, and the flow ends
    /// without a timeout.
    #[test]
    fn fast_retransmit_repairs_a_loss_within_one_round_trip() {
        let mut p = testing::tcp(testing::cfg(), 20_000, D);
        p.up.lose(first_sends(&[6000]));
        p.finish();
        assert_eq!(p.up.times_of(6000), vec![2 * D, 4 * D]);
        let st = p.client.stats();
        assert_eq!((st.fast_retx, st.timeouts, st.packets_retx), (1, 0, 1));
        assert_eq!(p.server.bytes_received(), 20_000);
    }

    /// Segment 1000 is held back until the `k` segments after it have arrived: their
    /// `k` dupacks trigger fast retransmit (a spurious one) only from three on.
    #[test]
    fn reordering_below_the_dupack_threshold_is_not_a_loss() {
        for k in [2u64, 3] {
            let c = with(LossRecovery {
                fin_with_data: true,
                ..LossRecovery::default()
            });
            let mut p = testing::tcp(c, (2 + k) * 1000, D);
            p.up.set_rule(|s| match s.seg.seq {
                1000 => testing::Fate::Hold(D / 2),
                _ => testing::Fate::Deliver,
            });
            p.finish();
            let st = p.client.stats();
            let spurious = (k >= 3) as u32;
            assert_eq!((st.fast_retx, st.packets_retx), (spurious, spurious as u64));
            assert_eq!(p.server.bytes_received(), (2 + k) * 1000);
        }
    }

    /// With a window of three and the first segment lost, only two dupacks come back.
    /// Limited transmit sends a new segment on each, whose dupacks make the third:
    /// fast retransmit instead of a timeout.
    #[test]
    fn limited_transmit_sends_new_data_on_the_first_two_dupacks() {
        for lt in [true, false] {
            let c = TcpConfig {
                init_cwnd: 3,
                ..with(LossRecovery {
                    limited_transmit: lt,
                    ..LossRecovery::default()
                })
            };
            let mut p = testing::tcp(c, 100_000, D);
            p.up.lose(first_sends(&[0]));
            p.run_until(4 * D);
            let on_dupacks = if lt { vec![3000, 4000] } else { vec![] };
            assert_eq!(p.up.seqs(4 * D..), on_dupacks);
            assert_eq!(p.client.stats().fast_retx, 0);
            p.finish();
            let st = p.client.stats();
            assert_eq!((st.fast_retx, st.timeouts), (lt as u32, !lt as u32));
        }
    }

    #[test]
    fn early_retransmit_fires_on_one_dupack_with_two_segments_outstanding() {
        let fin = LossRecovery {
            fin_with_data: true,
            ..LossRecovery::default()
        };
        let er = LossRecovery {
            early_retransmit: true,
            ..fin
        };
        let er_sack = LossRecovery { sack: true, ..er };
        for (rec, expect) in [(er, 1), (er_sack, 1), (fin, 0)] {
            let mut p = testing::tcp(with(rec), 2000, D);
            p.up.lose(first_sends(&[0]));
            p.run_until(4 * D);
            let at_2d = p.up.log.iter().filter(|s| s.at == 2 * D).count();
            assert_eq!(at_2d, 2, "the FIN rides on the second");
            assert_eq!(p.client.stats().fast_retx, expect, "{rec:?}");
            if expect == 1 {
                assert_eq!(p.up.seqs(4 * D..), vec![0]);
            }
        }
    }
}
