//! SACK-based loss recovery (RFC 6675), on when `LossRecovery::sack` is: the scoreboard
//! of the ranges the receiver holds above the cumulative ACK (RFC 2018's blocks), the
//! pipe that replaces the flight size, IsLost, and NextSeg, which picks what recovery
//! sends. The receiver's half (the blocks it reports) is in `receiver.rs`.

use super::TcpSender;
use crate::time::SimTime;
use crate::transport::tcp::Segment;

/// What the receiver has SACKed, and how far the current recovery has retransmitted.
#[derive(Clone, Debug, Default)]
pub(super) struct Scoreboard {
    /// SACKed ranges above `snd_una`, sorted, disjoint, not adjacent.
    sacked: Vec<(u64, u64)>,
    /// Every unSACKed byte below this was retransmitted in this episode.
    high_rxt: u64,
    /// With `LossRecovery::lost_retransmit`: this episode's retransmissions not yet
    /// known delivered or lost, as (start, end, send time), and those found lost, to be
    /// sent again (their starts, in the order found).
    rxt_log: Vec<(u64, u64, SimTime)>,
    rxt_again: Vec<u64>,
}

impl Scoreboard {
    /// A scoreboard; `on`: SACK is in use (room is made for a few ranges up front).
    pub(super) fn new(on: bool) -> Scoreboard {
        Scoreboard {
            sacked: if on {
                Vec::with_capacity(8)
            } else {
                Vec::new()
            },
            high_rxt: 0,
            rxt_log: Vec::new(),
            rxt_again: Vec::new(),
        }
    }

    /// Adds the SACKed range [start, end), already clipped to [snd_una, snd_max) (so
    /// possibly empty); returns the bytes newly SACKed.
    pub(super) fn insert(&mut self, start: u64, end: u64) -> u64 {
        if start >= end {
            return 0;
        }
        let i = self.sacked.partition_point(|r| r.1 < start);
        let mut j = i;
        let (mut lo, mut hi, mut old) = (start, end, 0);
        while j < self.sacked.len() && self.sacked[j].0 <= end {
            let (s, e) = self.sacked[j];
            old += e.min(end).saturating_sub(s.max(start));
            lo = lo.min(s);
            hi = hi.max(e);
            j += 1;
        }
        if j == i {
            self.sacked.insert(i, (lo, hi));
        } else {
            self.sacked[i] = (lo, hi);
            self.sacked.drain(i + 1..j);
        }
        end - start - old
    }

    /// Drops what lies below the cumulative ACK `una`.
    pub(super) fn trim(&mut self, una: u64) {
        let n = self.sacked.partition_point(|r| r.1 <= una);
        self.sacked.drain(..n);
        if let Some(r) = self.sacked.first_mut() {
            r.0 = r.0.max(una);
        }
    }

    /// Bytes SACKed above the cumulative ACK.
    pub(super) fn sacked_bytes(&self) -> u64 {
        self.sacked.iter().map(|&(s, e)| e - s).sum()
    }

    /// The first byte at or above `at` that is not SACKed.
    pub(super) fn skip_sacked(&self, mut at: u64) -> u64 {
        for &(s, e) in &self.sacked {
            if s > at {
                break;
            }
            at = at.max(e);
        }
        at
    }

    /// Where the first SACKed range above `seq` starts (a segment at `seq` stops there).
    pub(super) fn next_sacked_above(&self, seq: u64) -> Option<u64> {
        self.sacked.iter().find(|&&(s, _)| s > seq).map(|&(s, _)| s)
    }

    /// The highest SACKed byte's end (0: nothing SACKed).
    fn top(&self) -> u64 {
        self.sacked.last().map_or(0, |r| r.1)
    }

    /// A new episode from `una` (fast recovery starts, or an RTO): nothing is
    /// retransmitted yet.
    pub(super) fn new_episode(&mut self, una: u64) {
        self.high_rxt = una;
        self.end_episode();
    }

    /// The recovery is over: what it retransmitted is forgotten (RACK watches
    /// retransmissions in recovery only).
    pub(super) fn end_episode(&mut self) {
        self.rxt_log.clear();
        self.rxt_again.clear();
    }

    /// Whether [start, end) is wholly SACKed.
    fn holds(&self, start: u64, end: u64) -> bool {
        self.skip_sacked(start) >= end
    }

    /// RFC 6675 IsLost as a boundary: the unSACKed bytes below the returned sequence
    /// have at least `k` (DupThresh) SACKed segments, or more than (k − 1)·MSS SACKed
    /// bytes, above them; `una` when none has.
    fn lost_end(&self, k: u64, mss: u64, una: u64) -> u64 {
        let (mut bytes, mut segs) = (0, 0);
        for &(s, e) in self.sacked.iter().rev() {
            bytes += e - s;
            segs += (e - s).div_ceil(mss);
            if segs >= k || bytes > (k - 1) * mss {
                return s;
            }
        }
        una
    }

    /// RFC 6675 SetPipe over [una, nxt): the unSACKed bytes not below `lost_end`
    /// (deemed in flight), plus those below `rxt` (retransmitted).
    fn pipe(&self, una: u64, nxt: u64, lost_end: u64, rxt: u64) -> u64 {
        let hole =
            |a: u64, b: u64| b.saturating_sub(a.max(lost_end)) + rxt.min(b).saturating_sub(a);
        let mut pipe = 0;
        let mut at = una;
        for &(s, e) in &self.sacked {
            if s >= nxt {
                break;
            }
            if s > at {
                pipe += hole(at, s);
            }
            at = at.max(e);
        }
        if at < nxt {
            pipe += hole(at, nxt);
        }
        pipe
    }
}

/// RFC 6675's recovery as the sender runs it.
impl TcpSender {
    /// IsLost's boundary for this sender (its DupThresh, early retransmit included).
    pub(super) fn lost_end(&self) -> u64 {
        let k = self.dupthresh() as u64;
        self.x.sack.lost_end(k, self.mss as u64, self.snd_una)
    }

    /// RFC 6675 SetPipe: unSACKed bytes not deemed lost, plus those retransmitted.
    /// After an RTO, the bytes resent since (each once).
    pub(super) fn pipe(&self) -> u64 {
        let (una, nxt) = (self.snd_una, self.snd_nxt);
        let sb = &self.x.sack;
        if sb.sacked.is_empty() && sb.high_rxt <= una {
            return nxt - una;
        }
        let (lost_end, rxt) = if self.after_rto {
            (una, una)
        } else {
            (self.lost_end(), sb.high_rxt)
        };
        // Retransmissions found lost are below `high_rxt` but no longer in flight.
        let lost_again: u64 = sb
            .rxt_again
            .iter()
            .filter(|&&q| q >= una && !sb.holds(q, q + 1))
            .map(|&q| self.seg_span(q))
            .sum();
        sb.pipe(una, nxt, lost_end, rxt).saturating_sub(lost_again)
    }

    /// Retransmits the segment at `seq` (below `snd_max`) during SACK recovery.
    pub(super) fn emit_sack_retx(&mut self, now: SimTime, seq: u64) -> Segment {
        if self.probing() && seq < self.size {
            return self.emit_probe(now, seq);
        }
        let span = self.seg_span(seq);
        self.x.sack.high_rxt = self.x.sack.high_rxt.max(seq + span);
        if self.x.cfg.lost_retransmit {
            self.x.sack.rxt_log.push((seq, seq + span, now));
        }
        self.emit(now, seq)
    }

    /// RACK's detection of lost retransmissions (RFC 8985 §6.2), as Linux runs it while
    /// it has seen no reordering (no reordering window in recovery): a retransmission is
    /// lost once a segment sent after it has been delivered. `delivered_sent_at` is when
    /// the segment this ACK answers was sent (the timestamp it echoes); the ACK
    /// delivered new data. Lost ones go to be sent again, ahead of NextSeg's choice.
    pub(super) fn detect_lost_retransmissions(&mut self, delivered_sent_at: SimTime) {
        let una = self.snd_una;
        let sb = &mut self.x.sack;
        let mut i = 0;
        while i < sb.rxt_log.len() {
            let (start, end, sent_at) = sb.rxt_log[i];
            if end <= una || sb.holds(start.max(una), end) {
                sb.rxt_log.remove(i);
            } else if sent_at < delivered_sent_at {
                sb.rxt_log.remove(i);
                if !sb.rxt_again.contains(&start) {
                    sb.rxt_again.push(start);
                }
            } else {
                i += 1;
            }
        }
    }

    /// The next retransmission found lost that still needs sending.
    fn next_lost_again(&mut self) -> Option<u64> {
        while !self.x.sack.rxt_again.is_empty() {
            let seq = self.x.sack.rxt_again.remove(0);
            if seq >= self.snd_una && seq < self.snd_max && !self.x.sack.holds(seq, seq + 1) {
                return Some(seq);
            }
        }
        None
    }

    /// RFC 6675 NextSeg during SACK recovery, while cwnd − pipe ≥ one MSS: a lost hole
    /// not yet retransmitted, else new data, else any hole below the highest SACKed byte.
    pub(super) fn sack_recovery_next(&mut self, now: SimTime) -> Option<Segment> {
        let mss = self.mss as u64;
        if (self.pipe() + mss) as f64 > self.win.cwnd {
            return None;
        }
        if let Some(seq) = self.next_lost_again() {
            return Some(self.emit_sack_retx(now, seq));
        }
        let hole = self.next_unsacked(self.x.sack.high_rxt);
        if let Some(seq) = hole {
            if seq < self.lost_end() {
                return Some(self.emit_sack_retx(now, seq));
            }
        }
        let new_ok = self.snd_nxt < self.data_end() && self.rwnd_has_room(self.snd_nxt)
            || self.size != u64::MAX && self.snd_nxt == self.size;
        if new_ok {
            return Some(self.emit_next(now));
        }
        let top = self.x.sack.top();
        match hole {
            Some(seq) if seq < top => Some(self.emit_sack_retx(now, seq)),
            _ => None,
        }
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

    fn sack(sack: bool) -> TcpConfig {
        TcpConfig {
            recovery: LossRecovery {
                sack,
                ..LossRecovery::default()
            },
            ..testing::cfg()
        }
    }

    #[test]
    fn scoreboard_merges_and_trims() {
        let mut sb = Scoreboard::new(true);
        assert_eq!(sb.insert(3000, 4000), 1000);
        assert_eq!(sb.insert(5000, 6000), 1000);
        assert_eq!(sb.insert(3500, 5000), 1000, "only the new bytes");
        assert_eq!(sb.insert(4000, 4000), 0, "an empty block");
        assert_eq!(sb.sacked, vec![(3000, 6000)]);
        assert_eq!(sb.skip_sacked(3000), 6000);
        assert_eq!(sb.skip_sacked(1000), 1000);
        assert_eq!(sb.next_sacked_above(1000), Some(3000));
        sb.trim(4000);
        assert_eq!(sb.sacked, vec![(4000, 6000)]);
    }

    #[test]
    fn the_pipe_counts_what_is_neither_sacked_nor_lost() {
        let mut p = testing::tcp(sack(true), 10_000, D);
        p.establish();
        p.flush();
        let s = &mut p.client;
        assert_eq!(s.in_flight(), 10_001, "ten segments and the FIN");
        s.snd_una = 3000;
        s.x.sack.insert(4000, 6000);
        // [3000, 4000) has two SACKed segments above it, fewer than DupThresh: it is
        // in flight, as [6000, 10001) is.
        assert_eq!(s.in_flight(), 5001);
        s.x.sack.insert(7000, 8000);
        // Now three: [3000, 4000) is lost; [6000, 7000) has two above it.
        assert_eq!(s.in_flight(), 3001);
        assert_eq!(s.x.sack.lost_end(3, 1000, 3000), 4000);
        // Retransmitted, the lost bytes are in flight again.
        assert_eq!(s.x.sack.pipe(3000, 10_001, 4000, 3500), 3501);
        assert_eq!(s.x.sack.pipe(3000, 10_001, 4000, 4000), 4001);
    }

    /// Segments 1, 3 and 5 of a first window of twenty lost, more data waiting: SACK
    /// recovery resends all three holes in the round after the dupacks, before new
    /// data (RFC 6675's NextSeg); NewReno resends only the first.
    #[test]
    fn sack_recovery_repairs_several_holes_in_one_rtt() {
        for on in [true, false] {
            let c = TcpConfig {
                init_cwnd: 20,
                ..sack(on)
            };
            let mut p = testing::tcp(c, 40_000, D);
            p.up.lose(first_sends(&[1000, 3000, 5000]));
            p.run_until(4 * D);
            assert_eq!(p.client.stats().fast_retx, 1);
            let sent = p.up.seqs(4 * D..);
            let resent: Vec<u64> = sent.iter().copied().filter(|&q| q < 20_000).collect();
            if on {
                assert_eq!(resent, vec![1000, 3000, 5000], "every hole");
                let i = sent.iter().position(|&q| q == 1000).unwrap();
                assert!(sent[i..].starts_with(&resent), "before new data: {sent:?}");
                // The ACK of the three repairs covers the first window, without an RTO.
                p.run_until(6 * D);
                assert!(p.client.snd_una >= 20_000);
                assert_eq!(p.client.stats().packets_retx, 3);
                p.finish();
                assert_eq!(p.client.stats().timeouts, 0);
            } else {
                assert_eq!(resent, vec![1000], "one hole per round trip");
            }
        }
    }

    /// Segments 1 and 5 are lost, and their fast retransmissions too. After the RTO,
    /// the go-back-N resends the holes only, not the SACKed segments between them.
    #[test]
    fn go_back_n_after_an_rto_skips_what_the_receiver_holds() {
        let mut p = testing::tcp(sack(true), 10_000, D);
        p.up.lose(first_sends(&[1000, 5000, 1000, 5000]));
        p.run_until(4 * D);
        assert_eq!(p.up.seqs(4 * D..), vec![1000, 5000]);
        let rto_at = 4 * D + testing::cfg().rto_min;
        p.finish();
        assert_eq!(p.client.stats().timeouts, 1);
        assert_eq!(p.up.seqs(rto_at..), vec![1000, 5000]);
    }

    /// Segment 1 and its fast retransmission are lost, with new data sent after the
    /// retransmission. With RACK's detection, the SACK of that new data shows the
    /// retransmission lost and it goes again within the recovery, without an RTO;
    /// without it, the hole waits for the RTO.
    #[test]
    fn a_lost_retransmission_goes_again_once_later_data_is_sacked() {
        for on in [true, false] {
            let c = TcpConfig {
                init_cwnd: 20,
                recovery: LossRecovery {
                    sack: true,
                    ..LossRecovery::default()
                },
                lost_retransmit: on,
                ..testing::cfg()
            };
            let mut p = testing::tcp(c, 60_000, D);
            p.up.lose(first_sends(&[1000, 1000]));
            p.finish();
            let st = p.client.stats();
            let sends = p.up.seqs(..).iter().filter(|&&q| q == 1000).count();
            assert_eq!(sends, 3, "the original and two retransmissions");
            if on {
                assert_eq!(st.timeouts, 0);
                assert_eq!(st.fast_retx, 1, "one recovery episode");
                assert!(p.client.stats().finish.unwrap() < testing::cfg().rto_min);
            } else {
                assert_eq!(st.timeouts, 1);
            }
        }
    }
}
