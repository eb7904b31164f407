//! The client side of a TCP connection: handshake, sending the flow's bytes, loss
//! recovery and the retransmission timer.
//!
//! Sequence space: data bytes are [0, size); the FIN takes sequence number `size`.
//! The flow is complete when every data byte is acknowledged (that instant is its finish
//! time); the connection closes when the FIN is acknowledged.
//!
//! Loss recovery is NewReno (RFC 6582) unless `cfg.recovery` turns on SACK-based
//! recovery (RFC 6675) and the other options of `LossRecovery`, each independent of the
//! congestion controller, which only sees `on_ack`, `on_fast_retransmit` and `on_timeout`.

use std::collections::VecDeque;

use super::{LossRecovery, RttEstimator, Segment, TcpConfig};
use crate::net::packet::flags;
use crate::time::SimTime;
use crate::transport::cc::{AckEvent, CongestionControl, Window};
use crate::transport::protocol::Cc;

/// Per-connection counters reported in the flows table.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SenderStats {
    /// Payload bytes put on the wire, retransmissions included (Proactive copies and
    /// coded packets are counted apart).
    pub bytes_sent: u64,
    pub bytes_retx: u64,
    pub bytes_acked: u64,
    /// Retransmission timeouts, the SYN's included.
    pub timeouts: u32,
    /// Timeouts of the SYN (before any data could be sent).
    pub syn_timeouts: u32,
    pub fast_retx: u32,
    pub finish: Option<SimTime>,
    /// Data segments put on the wire, retransmissions included.
    pub packets_sent: u64,
    pub packets_retx: u64,
    /// `packets_sent` just after the last retransmission (0: none yet).
    pub packets_at_last_retx: u64,
    /// Tail loss probes sent.
    pub tlp_probes: u32,
    /// TCP-IR coded packets sent.
    pub ir_coded: u32,
    /// Proactive duplicate copies sent.
    pub proactive_copies: u64,
}

impl SenderStats {
    /// Data segments sent since, and including, the last retransmission (0 if none).
    pub fn packets_since_last_retx(&self) -> u64 {
        if self.packets_at_last_retx == 0 {
            0
        } else {
            self.packets_sent - self.packets_at_last_retx + 1
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SenderState {
    Idle,
    SynSent,
    Established,
    Closed,
}

/// TCP-IR: the coding block open for new segments.
#[derive(Clone, Copy, Debug)]
struct IrOpen {
    start: u64,
    end: u64,
    segs: u32,
    /// The block closes at this time (half an RTT after its first segment).
    close_at: SimTime,
}

/// TCP-IR: a closed block whose coded packet goes out at `due`.
#[derive(Clone, Copy, Debug)]
struct IrBlock {
    start: u64,
    end: u64,
    due: SimTime,
}

/// TCP-IR's largest coding block, in segments.
const IR_MAX_BLOCK: u32 = 16;

/// What a sender reads off its common path: the loss-recovery options' state, the
/// counters that change only on losses, timeouts and options, and the full settings.
/// Boxed, so that the state every ACK and every send touches stays in five cache lines.
#[derive(Clone, Debug)]
struct Extras {
    /// The settings (the common path reads the copies kept in the sender).
    cfg: TcpConfig,
    /// The counters, but for `bytes_sent`, `packets_sent` and `bytes_acked`, which the
    /// sender keeps itself.
    stats: SenderStats,
    /// SACK scoreboard: SACKed ranges above `snd_una`, sorted, disjoint, not adjacent.
    sacked: Vec<(u64, u64)>,
    /// SACK recovery: every unSACKed byte below this was retransmitted in this episode.
    high_rxt: u64,
    /// Limited transmit: new segments the dupacks received so far allow beyond cwnd.
    lt_allowance: u32,
    tlp_deadline: SimTime,
    tlp_probe_due: bool,
    /// A probe was sent and no ACK has arrived since.
    tlp_outstanding: bool,
    ir_open: Option<IrOpen>,
    ir_pending: VecDeque<IrBlock>,
    /// The first pending block's coded packet is due: `poll_transmit` sends it (the
    /// timer no longer reports its deadline, which has passed).
    ir_due: bool,
    /// Proactive: the copy of the segment just sent.
    copy_pending: Option<Segment>,
}

/// The fields are laid out by hand (`repr(C)`), in the order the common path uses
/// them, and the sender starts on a cache line: an ACK or a send touches its first four
/// lines and the congestion controller's first one. (A multipath connection has many
/// subflows, and their senders are mostly out of the cache when their ACKs arrive.)
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct TcpSender {
    // Line 0: the sequence space and the window.
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub snd_max: u64,
    /// Bytes of the stream handed to the sender so far: all of it for a single-path
    /// flow; a multipath subflow is given its data chunk by chunk by its connection.
    pub avail: u64,
    /// Data bytes to send (`u64::MAX`: long-lived, or a multipath subflow still open).
    pub size: u64,
    pub win: Window,
    rto_deadline: SimTime,
    // Line 1.
    pub rtt: RttEstimator,
    recover: u64,
    // Line 2.
    /// Sequence to retransmit at once (fast retransmit or a NewReno partial ACK), or
    /// `NO_SEQ`.
    retx_seq: u64,
    /// When the last segment was sent (idle restart), or `NEVER`.
    last_send: SimTime,
    bytes_sent: u64,
    packets_sent: u64,
    bytes_acked: u64,
    peer_rwnd: u32,
    dupacks: u32,
    backoff: u32,
    /// Copies of the settings the common path reads (all of them are in `x.cfg`).
    mss: u32,
    // Line 3.
    /// Multipath: the chunks handed over by `offer_chunk`, from those that end above
    /// `snd_una` on (acknowledged ones are dropped when the deque fills up). Each chunk
    /// has its own data sequence mapping, so no segment may span two.
    chunks: VecDeque<Chunk>,
    x: Box<Extras>,
    rcv_wnd: u32,
    cwnd_min: u32,
    rec: LossRecovery,
    pub state: SenderState,
    in_recovery: bool,
    syn_pending: bool,
    ack_fin_pending: bool,
    /// An RTO's go-back-N is under way (until `snd_una` reaches `recover`): unSACKed
    /// bytes above `snd_nxt` are presumed lost.
    after_rto: bool,
    ecn: bool,
    // Line 4 on.
    pub cc: Cc,
}

/// A multipath chunk: where it ends in the subflow's sequence space and in the data
/// sequence space (a chunk is contiguous in both).
#[derive(Clone, Copy, Debug)]
struct Chunk {
    end: u64,
    dsn_end: u64,
}

const NO_TIMER: SimTime = 0;
/// No retransmission scheduled (`retx_seq`).
const NO_SEQ: u64 = u64::MAX;
/// Nothing sent yet (`last_send`).
const NEVER: SimTime = SimTime::MAX;

/// The earlier of two deadlines, `NO_TIMER` meaning none.
fn earliest(a: SimTime, b: SimTime) -> SimTime {
    match (a, b) {
        (NO_TIMER, b) => b,
        (a, NO_TIMER) => a,
        (a, b) => a.min(b),
    }
}

impl TcpSender {
    pub fn new(cfg: TcpConfig, cc: Cc, size: u64) -> TcpSender {
        let mss = cfg.mss as f64;
        let r = cfg.recovery;
        TcpSender {
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            avail: size,
            size,
            win: Window {
                cwnd: cfg.init_cwnd as f64 * mss,
                ssthresh: cfg.init_ssthresh,
            },
            rto_deadline: NO_TIMER,
            rtt: RttEstimator::new(cfg.rto_initial, cfg.rto_min, cfg.rto_max),
            recover: 0,
            retx_seq: NO_SEQ,
            last_send: NEVER,
            bytes_sent: 0,
            packets_sent: 0,
            bytes_acked: 0,
            peer_rwnd: cfg.rcv_wnd,
            dupacks: 0,
            backoff: 0,
            mss: cfg.mss,
            chunks: VecDeque::new(),
            x: Box::new(Extras {
                cfg,
                stats: SenderStats::default(),
                sacked: if r.sack {
                    Vec::with_capacity(8)
                } else {
                    Vec::new()
                },
                high_rxt: 0,
                lt_allowance: 0,
                tlp_deadline: NO_TIMER,
                tlp_probe_due: false,
                tlp_outstanding: false,
                ir_open: None,
                ir_pending: if r.tcp_ir {
                    VecDeque::with_capacity(8)
                } else {
                    VecDeque::new()
                },
                ir_due: false,
                copy_pending: None,
            }),
            rcv_wnd: cfg.rcv_wnd,
            cwnd_min: cfg.cwnd_min,
            rec: r,
            state: SenderState::Idle,
            in_recovery: false,
            syn_pending: false,
            ack_fin_pending: false,
            after_rto: false,
            ecn: cfg.ecn,
            cc,
        }
    }

    /// The settings.
    pub fn config(&self) -> &TcpConfig {
        &self.x.cfg
    }

    /// The loss-recovery options.
    #[inline]
    pub fn recovery(&self) -> LossRecovery {
        self.rec
    }

    /// Sets the duplicate-ACK threshold (MMPTCP's scatter subflow).
    pub fn set_dupack_threshold(&mut self, k: u32) {
        self.x.cfg.dupack_threshold = k;
    }

    /// The flow's counters.
    pub fn stats(&self) -> SenderStats {
        SenderStats {
            bytes_sent: self.bytes_sent,
            packets_sent: self.packets_sent,
            bytes_acked: self.bytes_acked,
            ..self.x.stats
        }
    }

    /// Data bytes acknowledged.
    #[inline]
    pub fn bytes_acked(&self) -> u64 {
        self.bytes_acked
    }

    /// When every data byte was acknowledged.
    pub fn finish(&self) -> Option<SimTime> {
        self.x.stats.finish
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
    /// before or after it: a multipath subflow's data, mapped to the data sequence space
    /// from `dsn` on.
    pub fn offer_chunk(&mut self, bytes: u64, dsn: u64) {
        self.avail += bytes;
        if self.chunks.len() == self.chunks.capacity() {
            // Forget the acknowledged chunks only when the deque is full, and keep it at
            // most half full after: an ACK then need not read the deque's oldest entry
            // (a cache line of its own, cold by the time the ACK comes).
            while self.chunks.front().is_some_and(|c| c.end <= self.snd_una) {
                self.chunks.pop_front();
            }
            self.chunks.reserve(self.chunks.len().max(4));
        }
        self.chunks.push_back(Chunk {
            end: self.avail,
            dsn_end: dsn + bytes,
        });
    }

    /// Multipath: the chunk holding byte `seq` (at or above `snd_una`): where it ends,
    /// and the data sequence number that `seq` maps to.
    #[inline]
    pub fn chunk_of(&self, seq: u64) -> Option<(u64, u64)> {
        let n = self.chunks.len();
        // New data is in the last chunk: look there before searching.
        let i =
            if n > 0 && self.chunks[n - 1].end > seq && (n == 1 || self.chunks[n - 2].end <= seq) {
                n - 1
            } else {
                self.chunk_search(seq)
            };
        self.chunks
            .get(i)
            .map(|c| (c.end, c.dsn_end - (c.end - seq)))
    }

    /// The index of the chunk holding `seq`, a retransmission's mostly the first.
    #[inline(never)]
    fn chunk_search(&self, seq: u64) -> usize {
        if self.chunks.front().is_some_and(|c| c.end > seq) {
            0
        } else {
            self.chunks.partition_point(|c| c.end <= seq)
        }
    }

    /// Where the segment starting at data byte `seq` must end: the stream's available
    /// end, the end of its chunk, or one MSS on.
    #[inline]
    fn segment_end(&self, seq: u64) -> u64 {
        let mut end = self.size.min(self.avail).min(seq + self.mss as u64);
        if !self.chunks.is_empty() {
            if let Some((e, _)) = self.chunk_of(seq) {
                end = end.min(e);
            }
        }
        end
    }

    /// Polling would yield nothing now, nor until a segment or a timer arrives or more
    /// data is offered: everything offered is sent, no retransmission, FIN or ACK of the
    /// peer's FIN is due, and no option that sends on its own (Proactive, TCP-IR, loss
    /// probes, SACK recovery) is at work. False when unsure.
    pub fn is_drained(&self) -> bool {
        let r = self.rec;
        let options_idle = !(r.proactive || r.tcp_ir || r.tlp || r.sack && self.in_recovery);
        let fin_due = self.size != u64::MAX && self.snd_nxt == self.size;
        self.state == SenderState::Established
            && options_idle
            && self.retx_seq == NO_SEQ
            && !self.ack_fin_pending
            && self.snd_nxt >= self.data_end()
            && !fin_due
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
        flight == 0 || (flight + self.mss as u64) as f64 <= window
    }

    /// Bytes in flight: sent and not yet acknowledged, or with SACK the RFC 6675 pipe.
    pub fn in_flight(&self) -> u64 {
        self.flight()
    }

    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    /// The first sequence number at or above `from` (and `snd_una`), below `snd_max`,
    /// that the receiver has not SACKed.
    pub fn next_unsacked(&self, from: u64) -> Option<u64> {
        let mut at = from.max(self.snd_una);
        if !self.rec.sack {
            return (at < self.snd_max).then_some(at);
        }
        for &(s, e) in &self.x.sacked {
            if s > at {
                break;
            }
            at = at.max(e);
        }
        (at < self.snd_max).then_some(at)
    }

    /// When the next timer (RTO, loss probe, TCP-IR coding) expires, if any is armed.
    pub fn timer_deadline(&self) -> Option<SimTime> {
        let mut d = self.rto_deadline;
        if self.rec.tlp {
            d = earliest(d, self.x.tlp_deadline);
        }
        if self.rec.tcp_ir {
            if let Some(b) = &self.x.ir_open {
                d = earliest(d, b.close_at);
            }
            if let Some(b) = self.x.ir_pending.front() {
                if !self.x.ir_due {
                    d = earliest(d, b.due);
                }
            }
        }
        (d != NO_TIMER).then_some(d)
    }

    fn fmss(&self) -> f64 {
        self.mss as f64
    }

    fn data_end(&self) -> u64 {
        self.size.min(self.avail)
    }

    fn flight(&self) -> u64 {
        if self.rec.sack {
            self.pipe()
        } else {
            self.snd_nxt - self.snd_una
        }
    }

    fn arm_timer(&mut self, now: SimTime) {
        self.rto_deadline = now + self.rtt.rto(self.backoff);
    }

    /// Payload bytes of the segment starting at `seq` (a data byte): up to one MSS, and
    /// with SACK not into the next SACKed range.
    #[inline]
    fn seg_len(&self, seq: u64) -> u64 {
        let mut len = self.segment_end(seq) - seq;
        if !self.rec.sack {
            return len;
        }
        if let Some(&(s, _)) = self.x.sacked.iter().find(|&&(s, _)| s > seq) {
            len = len.min(s - seq);
        }
        len
    }

    /// Whether the data segment [seq, seq + len) carries the FIN.
    fn fin_rides(&self, seq: u64, len: u64) -> bool {
        self.rec.fin_with_data && seq + len == self.size
    }

    /// Sequence length a segment starting at `seq` occupies (payload, plus one for a FIN).
    #[inline]
    fn seg_span(&self, seq: u64) -> u64 {
        if seq >= self.size {
            1
        } else {
            let len = self.seg_len(seq);
            len + self.fin_rides(seq, len) as u64
        }
    }

    /// Builds the segment at `seq` and does the bookkeeping of sending it: counters,
    /// the RTO, the Proactive copy, TCP-IR's block.
    fn emit(&mut self, now: SimTime, seq: u64) -> Segment {
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
            self.x.copy_pending = Some(seg);
            self.x.stats.proactive_copies += 1;
        }
        seg
    }

    /// Sends the segment at `snd_nxt` and advances it.
    fn emit_next(&mut self, now: SimTime) -> Segment {
        let seq = self.snd_nxt;
        let span = self.seg_span(seq);
        let seg = self.emit(now, seq);
        self.snd_nxt += span;
        self.snd_max = self.snd_max.max(self.snd_nxt);
        self.arm_tlp(now);
        seg
    }

    /// Retransmits the segment at `seq` (below `snd_max`) during SACK recovery.
    fn emit_sack_retx(&mut self, now: SimTime, seq: u64) -> Segment {
        let span = self.seg_span(seq);
        self.x.high_rxt = self.x.high_rxt.max(seq + span);
        self.emit(now, seq)
    }

    /// The next segment to send now, if any. Call until it returns `None`.
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<Segment> {
        match self.state {
            SenderState::SynSent if self.syn_pending => {
                self.syn_pending = false;
                self.last_send = now;
                if self.rto_deadline == NO_TIMER {
                    self.arm_timer(now);
                }
                Some(Segment {
                    flags: flags::SYN,
                    ts: now,
                    ecn: false,
                    rwnd: self.rcv_wnd,
                    ..Segment::default()
                })
            }
            SenderState::Established => {
                if self.rec.proactive {
                    if let Some(copy) = self.x.copy_pending.take() {
                        return Some(copy);
                    }
                }
                if self.rec.tcp_ir {
                    if let Some(seg) = self.ir_coded_due(now) {
                        return Some(seg);
                    }
                }
                if self.rec.tlp && self.x.tlp_probe_due {
                    self.x.tlp_probe_due = false;
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
        if self.last_send != NEVER && now.saturating_sub(self.last_send) > self.rtt.rto(0) {
            let iw = self.x.cfg.init_cwnd as f64 * self.fmss();
            self.win.cwnd = self.win.cwnd.min(iw);
        }
    }

    /// RFC 6675 NextSeg during SACK recovery, while cwnd − pipe ≥ one MSS: a lost hole
    /// not yet retransmitted, else new data, else any hole below the highest SACKed byte.
    fn sack_recovery_next(&mut self, now: SimTime) -> Option<Segment> {
        let mss = self.mss as u64;
        if (self.pipe() + mss) as f64 > self.win.cwnd {
            return None;
        }
        let hole = self.next_unsacked(self.x.high_rxt);
        if let Some(seq) = hole {
            if seq < self.lost_end() {
                return Some(self.emit_sack_retx(now, seq));
            }
        }
        let new_ok = self.snd_nxt < self.data_end()
            && self.snd_max + self.seg_span(self.snd_nxt) - self.snd_una <= self.peer_rwnd as u64
            || self.size != u64::MAX && self.snd_nxt == self.size;
        if new_ok {
            return Some(self.emit_next(now));
        }
        let top = self.x.sacked.last().map_or(0, |r| r.1);
        match hole {
            Some(seq) if seq < top => Some(self.emit_sack_retx(now, seq)),
            _ => None,
        }
    }

    /// RFC 6675 IsLost as a boundary: the unSACKed bytes below the returned sequence
    /// have at least DupThresh SACKed segments (or more than (DupThresh − 1)·MSS SACKed
    /// bytes) above them.
    fn lost_end(&self) -> u64 {
        let k = self.dupthresh() as u64;
        let mss = self.mss as u64;
        let (mut bytes, mut segs) = (0, 0);
        for &(s, e) in self.x.sacked.iter().rev() {
            bytes += e - s;
            segs += (e - s).div_ceil(mss);
            if segs >= k || bytes > (k - 1) * mss {
                return s;
            }
        }
        self.snd_una
    }

    /// RFC 6675 SetPipe: unSACKed bytes not deemed lost, plus those retransmitted.
    /// After an RTO, the bytes resent since (each once).
    fn pipe(&self) -> u64 {
        let (una, nxt) = (self.snd_una, self.snd_nxt);
        if self.x.sacked.is_empty() && self.x.high_rxt <= una {
            return nxt - una;
        }
        let (lost_end, rxt) = if self.after_rto {
            (una, una)
        } else {
            (self.lost_end(), self.x.high_rxt)
        };
        let hole =
            |a: u64, b: u64| b.saturating_sub(a.max(lost_end)) + rxt.min(b).saturating_sub(a);
        let mut pipe = 0;
        let mut at = una;
        for &(s, e) in &self.x.sacked {
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

    /// The duplicate-ACK threshold now: RFC 5827's early retransmit lowers it to one
    /// less than the segments outstanding when fewer than four are and nothing new can
    /// be sent.
    fn dupthresh(&self) -> u32 {
        let k = self.x.cfg.dupack_threshold;
        if !self.rec.early_retransmit {
            return k;
        }
        // Segments outstanding: the data, and a FIN sent on its own.
        let data_out = self.snd_max.min(self.size) - self.snd_una.min(self.size);
        let lone_fin = self.snd_max > self.size && !self.rec.fin_with_data;
        let oseg = data_out.div_ceil(self.mss as u64) + lone_fin as u64;
        let can_send_new = self.snd_max < self.data_end()
            && self.snd_max + self.seg_span(self.snd_max) - self.snd_una <= self.peer_rwnd as u64;
        if oseg < 4 && !can_send_new {
            (oseg.saturating_sub(1).max(1) as u32).min(k)
        } else {
            k
        }
    }

    /// Adds a SACK block to the scoreboard; returns the bytes newly SACKed.
    fn sack_insert(&mut self, start: u64, end: u64) -> u64 {
        let (start, end) = (start.max(self.snd_una), end.min(self.snd_max));
        if start >= end {
            return 0;
        }
        let i = self.x.sacked.partition_point(|r| r.1 < start);
        let mut j = i;
        let (mut lo, mut hi, mut old) = (start, end, 0);
        while j < self.x.sacked.len() && self.x.sacked[j].0 <= end {
            let (s, e) = self.x.sacked[j];
            old += e.min(end).saturating_sub(s.max(start));
            lo = lo.min(s);
            hi = hi.max(e);
            j += 1;
        }
        if j == i {
            self.x.sacked.insert(i, (lo, hi));
        } else {
            self.x.sacked[i] = (lo, hi);
            self.x.sacked.drain(i + 1..j);
        }
        end - start - old
    }

    /// Drops the scoreboard below `snd_una`.
    fn sack_trim(&mut self) {
        let una = self.snd_una;
        let n = self.x.sacked.partition_point(|r| r.1 <= una);
        self.x.sacked.drain(..n);
        if let Some(r) = self.x.sacked.first_mut() {
            r.0 = r.0.max(una);
        }
    }

    fn enter_recovery(&mut self) {
        let mss = self.fmss();
        self.x.stats.fast_retx += 1;
        let flight = self.snd_nxt - self.snd_una;
        self.cc.on_fast_retransmit(&mut self.win, flight, mss);
        if self.rec.sack {
            self.win.cwnd = self.win.ssthresh.max(mss);
            self.x.high_rxt = self.snd_una;
        } else {
            self.win.cwnd = self.win.ssthresh + 3.0 * mss;
        }
        self.recover = self.snd_max;
        self.in_recovery = true;
        self.retx_seq = self.snd_una;
        self.x.lt_allowance = 0;
        self.x.tlp_deadline = NO_TIMER;
    }

    /// Schedules a tail loss probe 2·SRTT from now while data is outstanding outside
    /// recovery (and no probe is unanswered), unless the RTO would come first.
    fn arm_tlp(&mut self, now: SimTime) {
        if !self.rec.tlp {
            return;
        }
        self.x.tlp_deadline = NO_TIMER;
        if self.in_recovery
            || self.after_rto
            || self.x.tlp_outstanding
            || self.snd_una >= self.snd_max
            || self.state != SenderState::Established
        {
            return;
        }
        let Some(srtt) = self.rtt.srtt() else {
            return;
        };
        let mut pto = 2 * srtt;
        if self.x.cfg.delayed_ack && self.snd_max - self.snd_una <= self.mss as u64 {
            // A lone segment's ACK may be delayed.
            pto = pto.max(srtt * 3 / 2 + self.x.cfg.delack_timeout);
        }
        let at = now + pto;
        if self.rto_deadline == NO_TIMER || at < self.rto_deadline {
            self.x.tlp_deadline = at;
        }
    }

    /// The loss probe: a new segment if the receive window allows one, else the
    /// highest-sequence segment again.
    fn send_probe(&mut self, now: SimTime) -> Option<Segment> {
        if self.snd_una >= self.snd_max {
            return None;
        }
        self.x.stats.tlp_probes += 1;
        if self.snd_nxt == self.snd_max
            && self.snd_max < self.data_end()
            && self.snd_max + self.seg_span(self.snd_max) - self.snd_una <= self.peer_rwnd as u64
        {
            return Some(self.emit_next(now));
        }
        let data_top = self.snd_max.min(self.size);
        let seq = if self.snd_una >= data_top {
            self.size // only the FIN is outstanding
        } else {
            let mss = self.mss as u64;
            ((data_top - 1) / mss * mss).max(self.snd_una)
        };
        Some(self.emit(now, seq))
    }

    /// TCP-IR: adds the new segment [seq, end) to the open coding block, closing the
    /// block at its time limit, at a gap, or when it is full.
    fn ir_add(&mut self, now: SimTime, seq: u64, end: u64) {
        if let Some(b) = self.x.ir_open {
            if now >= b.close_at {
                self.ir_close(b.close_at);
            } else if b.end != seq {
                self.ir_close(now);
            }
        }
        let srtt = self.rtt.srtt().unwrap_or(self.x.cfg.rto_initial);
        let b = self.x.ir_open.get_or_insert(IrOpen {
            start: seq,
            end: seq,
            segs: 0,
            close_at: now + srtt / 2,
        });
        b.end = end;
        b.segs += 1;
        if b.segs >= IR_MAX_BLOCK {
            self.ir_close(now);
        }
    }

    /// Closes the open block at `at`; its coded packet is due a quarter RTT later.
    fn ir_close(&mut self, at: SimTime) {
        if let Some(b) = self.x.ir_open.take() {
            let srtt = self.rtt.srtt().unwrap_or(self.x.cfg.rto_initial);
            self.x.ir_pending.push_back(IrBlock {
                start: b.start,
                end: b.end,
                due: at + srtt / 4,
            });
        }
    }

    /// A coded packet whose time has come, for a block not yet wholly acknowledged.
    fn ir_coded_due(&mut self, now: SimTime) -> Option<Segment> {
        if let Some(b) = self.x.ir_open {
            if now >= b.close_at {
                self.ir_close(b.close_at);
            }
        }
        while let Some(&b) = self.x.ir_pending.front() {
            if b.due > now {
                self.x.ir_due = false;
                return None;
            }
            self.x.ir_pending.pop_front();
            if self.snd_una >= b.end {
                continue;
            }
            self.x.stats.ir_coded += 1;
            // A FIN riding on the block's last segment is protected too.
            let fin = if self.fin_rides(b.start, b.end - b.start) {
                flags::FIN
            } else {
                0
            };
            return Some(Segment {
                seq: b.start,
                len: self.mss,
                flags: flags::ACK | flags::CODED | fin,
                ecn: self.ecn,
                ts: now,
                rwnd: self.rcv_wnd,
                coded_len: (b.end - b.start) as u32,
                ..Segment::default()
            });
        }
        self.x.ir_due = false;
        None
    }

    /// Handles a segment from the server.
    pub fn on_segment(&mut self, now: SimTime, seg: &Segment) {
        match self.state {
            SenderState::SynSent => {
                if seg.has(flags::SYN) && seg.has(flags::ACK) {
                    self.state = SenderState::Established;
                    self.rtt.sample(now.saturating_sub(seg.ts_echo));
                    self.peer_rwnd = seg.rwnd;
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
        self.peer_rwnd = seg.rwnd;
        if self.rec.tlp {
            self.x.tlp_outstanding = false;
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
            self.rtt.sample(now.saturating_sub(seg.ts_echo));
            self.snd_una = seg.ack;
            if self.snd_nxt < self.snd_una {
                self.snd_nxt = self.snd_una;
            }
            if sack {
                self.sack_trim();
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
            };
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
                newly_sacked += self.sack_insert(s, e);
            }
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

    /// Handles the timers (RTO, loss probe, TCP-IR blocks); harmless if called early.
    pub fn on_timer(&mut self, now: SimTime) {
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

    /// TCP-IR: closes the open block at its time and notes a due coded packet.
    fn ir_timer(&mut self, now: SimTime) {
        if self.state != SenderState::Established {
            self.x.ir_open = None;
            self.x.ir_pending.clear();
        }
        if let Some(b) = self.x.ir_open {
            if now >= b.close_at {
                self.ir_close(b.close_at);
            }
        }
        // Coded packets are sent by `poll_transmit`; blocks acknowledged meanwhile need none.
        while let Some(b) = self.x.ir_pending.front() {
            if self.snd_una >= b.end {
                self.x.ir_pending.pop_front();
            } else {
                self.x.ir_due = b.due <= now;
                break;
            }
        }
    }

    /// The loss probe's timer: the probe goes out at the next `poll_transmit`.
    fn tlp_timer(&mut self, now: SimTime) {
        if self.x.tlp_deadline != NO_TIMER && now >= self.x.tlp_deadline {
            self.x.tlp_deadline = NO_TIMER;
            if self.state == SenderState::Established
                && self.snd_una < self.snd_max
                && !self.in_recovery
            {
                self.x.tlp_probe_due = true;
                self.x.tlp_outstanding = true;
                // The RTO runs from the probe.
                self.arm_timer(now);
            }
        }
    }

    /// The retransmission timer has expired.
    fn rto_timer(&mut self, now: SimTime) {
        match self.state {
            SenderState::SynSent => {
                self.x.stats.timeouts += 1;
                self.x.stats.syn_timeouts += 1;
                self.backoff += 1;
                self.syn_pending = true;
                self.arm_timer(now);
            }
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
                self.x.high_rxt = self.snd_una;
                self.x.lt_allowance = 0;
                self.x.tlp_deadline = NO_TIMER;
                self.x.tlp_probe_due = false;
                self.x.tlp_outstanding = false;
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
        assert_eq!(s.stats().finish, Some(300));
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

    // ---- Loss-recovery options, driven against a real receiver ----

    use super::super::{LossRecovery, TcpReceiver};

    fn with(recovery: LossRecovery, init_cwnd: u32, size: u64) -> (TcpSender, TcpReceiver) {
        let c = TcpConfig {
            init_cwnd,
            recovery,
            ..cfg()
        };
        let mut s = TcpSender::new(c, Cc::Reno(Reno::default()), size);
        s.open();
        let mut r = TcpReceiver::new(c);
        let syn = s.poll_transmit(0).unwrap();
        r.on_segment(0, &syn);
        let synack = r.poll_transmit(0).unwrap();
        s.on_segment(100, &synack);
        (s, r)
    }

    /// Delivers `segs` to the receiver except those starting at a sequence in `lost`;
    /// returns the ACKs it sends.
    fn deliver(r: &mut TcpReceiver, segs: &[Segment], lost: &[u64], now: SimTime) -> Vec<Segment> {
        let mut acks = Vec::new();
        for seg in segs {
            if lost.contains(&seg.seq) && !seg.has(flags::CODED) {
                continue;
            }
            r.on_segment(now, seg);
            acks.extend(r.poll_transmit(now));
        }
        acks
    }

    fn data_seqs(segs: &[Segment]) -> Vec<u64> {
        segs.iter().filter(|s| s.len > 0).map(|s| s.seq).collect()
    }

    const SACK: LossRecovery = LossRecovery {
        sack: true,
        limited_transmit: false,
        early_retransmit: false,
        tlp: false,
        tcp_ir: false,
        proactive: false,
        idle_restart: false,
        fin_with_data: false,
    };

    /// The end of a transaction without a separate FIN segment.
    const SACK_FIN: LossRecovery = LossRecovery {
        fin_with_data: true,
        ..SACK
    };
    const LT_FIN: LossRecovery = LossRecovery {
        sack: false,
        ..SACK_FIN
    };

    /// Segments 1, 3 and 5 of 10 lost: SACK recovery resends all three holes in the
    /// round after the dupacks; NewReno resends only the first.
    #[test]
    fn sack_recovery_repairs_several_holes_in_one_rtt() {
        for sack in [true, false] {
            let rec = LossRecovery {
                sack,
                ..LossRecovery::default()
            };
            let (mut s, mut r) = with(rec, 10, 10_000);
            let segs = drain(&mut s, 100);
            assert_eq!(data_seqs(&segs).len(), 10);
            let acks = deliver(&mut r, &segs, &[1000, 3000, 5000], 200);
            let mut resent = Vec::new();
            for a in &acks {
                s.on_segment(300, a);
                resent.extend(drain(&mut s, 300));
            }
            assert_eq!(s.stats().fast_retx, 1);
            let retx: Vec<u64> = data_seqs(&resent)
                .into_iter()
                .filter(|&q| q < 10_000)
                .collect();
            if sack {
                assert_eq!(retx, vec![1000, 3000, 5000], "every hole in one round");
                // The ACK of the three repairs completes the flow without an RTO.
                for a in deliver(&mut r, &resent, &[], 400) {
                    s.on_segment(500, &a);
                }
                assert_eq!(s.stats().finish, Some(500));
                assert_eq!(s.stats().packets_retx, 3);
            } else {
                assert_eq!(retx, vec![1000], "NewReno: one hole per round trip");
            }
        }
    }

    #[test]
    fn scoreboard_merges_and_trims() {
        let (mut s, _) = with(SACK, 10, 10_000);
        drain(&mut s, 100);
        assert_eq!(s.sack_insert(3000, 4000), 1000);
        assert_eq!(s.sack_insert(5000, 6000), 1000);
        assert_eq!(s.sack_insert(3500, 5000), 1000, "only the new bytes");
        assert_eq!(s.x.sacked, vec![(3000, 6000)]);
        assert_eq!(s.next_unsacked(3000), Some(6000));
        assert_eq!(s.next_unsacked(1000), Some(1000));
        s.snd_una = 4000;
        s.sack_trim();
        assert_eq!(s.x.sacked, vec![(4000, 6000)]);
        // pipe: [6000, 10001) (the data and the FIN) is not lost: 2 SACKed segments are
        // fewer than DupThresh.
        assert_eq!(s.in_flight(), 4001);
        s.sack_insert(7000, 8000);
        // No unSACKed byte has three SACKed segments above it yet.
        assert_eq!(s.in_flight(), 3001);
    }

    #[test]
    fn limited_transmit_sends_new_data_on_the_first_two_dupacks() {
        for lt in [true, false] {
            let rec = LossRecovery {
                limited_transmit: lt,
                ..LossRecovery::default()
            };
            let (mut s, mut r) = with(rec, 4, 100_000);
            let segs = drain(&mut s, 100);
            assert_eq!(segs.len(), 4);
            let acks = deliver(&mut r, &segs, &[0], 200);
            assert_eq!(acks.len(), 3);
            let mut sent = Vec::new();
            for a in &acks[..2] {
                s.on_segment(300, a);
                sent.push(data_seqs(&drain(&mut s, 300)));
            }
            if lt {
                assert_eq!(sent, vec![vec![4000], vec![5000]]);
            } else {
                assert_eq!(sent, vec![Vec::<u64>::new(), vec![]]);
            }
            assert_eq!(s.stats().fast_retx, 0);
        }
    }

    #[test]
    fn early_retransmit_fires_on_one_dupack_with_two_segments_outstanding() {
        for (rec, expect) in [
            (
                LossRecovery {
                    early_retransmit: true,
                    ..LT_FIN
                },
                1,
            ),
            (
                LossRecovery {
                    early_retransmit: true,
                    ..SACK_FIN
                },
                1,
            ),
            (LT_FIN, 0),
        ] {
            let (mut s, mut r) = with(rec, 10, 2000);
            let segs = drain(&mut s, 100);
            assert_eq!(segs.len(), 2, "the FIN rides on the second");
            let acks = deliver(&mut r, &segs, &[0], 200);
            assert_eq!(acks.len(), 1);
            s.on_segment(300, &acks[0]);
            assert_eq!(s.stats().fast_retx, expect, "{rec:?}");
            if expect == 1 {
                assert_eq!(data_seqs(&drain(&mut s, 300)), vec![0]);
            }
        }
    }

    /// The last two of ten segments are lost. The probe 2·SRTT after the last ACK
    /// resends segment 9; its SACK makes segment 8 lost (early retransmit, k = 1), and
    /// fast recovery repairs it before the RTO.
    #[test]
    fn tail_loss_probe_turns_a_tail_loss_into_fast_recovery() {
        let rec = LossRecovery {
            tlp: true,
            early_retransmit: true,
            ..SACK_FIN
        };
        let (mut s, mut r) = with(rec, 10, 10_000);
        let segs = drain(&mut s, 100);
        let acks = deliver(&mut r, &segs, &[8000, 9000], 150);
        for a in &acks {
            s.on_segment(200, a);
        }
        assert_eq!(s.snd_una, 8000);
        let srtt = s.rtt.srtt().unwrap();
        let pto = s.timer_deadline().unwrap();
        assert_eq!(pto, 200 + 2 * srtt);
        assert!(pto < s.rto_deadline);
        s.on_timer(pto);
        let probe = drain(&mut s, pto);
        assert_eq!(data_seqs(&probe), vec![9000]);
        assert_eq!(s.stats().tlp_probes, 1);
        let acks = deliver(&mut r, &probe, &[], pto + 50);
        s.on_segment(pto + 100, &acks[0]);
        assert_eq!(s.stats().fast_retx, 1);
        let repair = drain(&mut s, pto + 100);
        assert_eq!(data_seqs(&repair), vec![8000]);
        for a in deliver(&mut r, &repair, &[], pto + 150) {
            s.on_segment(pto + 200, &a);
        }
        assert_eq!(s.stats().finish, Some(pto + 200));
        assert_eq!(s.stats().timeouts, 0);
    }

    /// TCP-IR: a block of eight segments, coded RTT/2 + RTT/4 after its first one. With
    /// one segment lost the receiver rebuilds it; with two it cannot.
    #[test]
    fn tcp_ir_recovers_one_lost_segment_per_block_but_not_two() {
        for lost in [vec![3000], vec![3000, 5000]] {
            let rec = LossRecovery {
                tcp_ir: true,
                ..SACK
            };
            let (mut s, mut r) = with(rec, 10, 8000);
            let srtt = s.rtt.srtt().unwrap();
            let segs = drain(&mut s, 100);
            assert_eq!(data_seqs(&segs).len(), 8);
            let close = s.timer_deadline().unwrap();
            assert_eq!(
                close,
                100 + srtt / 2,
                "the block closes half an RTT after it opened"
            );
            let acks = deliver(&mut r, &segs, &lost, 120);
            s.on_timer(close);
            assert!(drain(&mut s, close).is_empty());
            let due = s.timer_deadline().unwrap();
            assert_eq!(due, close + srtt / 4);
            s.on_timer(due);
            let coded = drain(&mut s, due);
            assert_eq!(coded.len(), 1);
            assert!(coded[0].has(flags::CODED));
            assert_eq!((coded[0].seq, coded[0].coded_len), (0, 8000));
            assert_eq!(s.stats().ir_coded, 1);
            let more = deliver(&mut r, &coded, &[], due + 10);
            assert_eq!(more.len(), 1, "a coded packet is acknowledged at once");
            if lost.len() == 1 {
                assert_eq!(r.ir_recovered, 1);
                assert_eq!(r.bytes_received(), 8000);
                for a in acks.iter().chain(&more) {
                    s.on_segment(due + 20, a);
                }
                assert_eq!(s.stats().finish, Some(due + 20));
                assert_eq!(
                    s.stats().packets_retx,
                    0,
                    "recovered without retransmission"
                );
            } else {
                assert_eq!(r.ir_recovered, 0);
                assert_eq!(r.bytes_received(), 3000);
            }
        }
    }

    #[test]
    fn proactive_sends_every_segment_twice_without_spurious_recovery() {
        let rec = LossRecovery {
            proactive: true,
            ..SACK
        };
        let (mut s, mut r) = with(rec, 4, 20_000);
        let mut now = 100;
        let mut copies = 0;
        while s.stats().finish.is_none() && now < 100_000 {
            let segs = drain(&mut s, now);
            let data = data_seqs(&segs);
            for pair in data.chunks(2) {
                assert_eq!(pair.len(), 2);
                assert_eq!(pair[0], pair[1], "back-to-back copies");
                copies += 1;
            }
            for a in deliver(&mut r, &segs, &[], now + 50) {
                s.on_segment(now + 100, &a);
            }
            now += 100;
        }
        assert_eq!(s.stats().finish, Some(now));
        assert_eq!(copies, 20);
        assert_eq!(s.stats().proactive_copies, 20);
        assert_eq!(
            s.stats().packets_sent,
            20,
            "copies are not counted as data packets"
        );
        assert_eq!(s.stats().fast_retx, 0);
        assert_eq!(s.stats().timeouts, 0);
    }

    #[test]
    fn idle_restart_resets_cwnd_to_the_initial_window() {
        for idle_restart in [true, false] {
            let rec = LossRecovery {
                idle_restart,
                ..LossRecovery::default()
            };
            let (mut s, mut r) = with(rec, 2, 0);
            s.size = u64::MAX;
            s.offer(5000);
            let segs = drain(&mut s, 200);
            for a in deliver(&mut r, &segs, &[], 250) {
                s.on_segment(300, &a);
            }
            assert_eq!(s.snd_una, 2000);
            s.win.cwnd = 20_000.0;
            drain(&mut s, 300);
            s.on_segment(400, &ack(5000, 300));
            assert_eq!(s.in_flight(), 0);
            s.offer(10_000);
            let later = 400 + 10 * s.rtt.rto(0);
            let n = drain(&mut s, later).len();
            if idle_restart {
                assert_eq!(s.win.cwnd, 2000.0);
                assert_eq!(n, 2);
            } else {
                assert_eq!(n, 10);
            }
        }
    }

    #[test]
    fn packets_since_last_retransmission() {
        let mut st = SenderStats::default();
        assert_eq!(st.packets_since_last_retx(), 0);
        st.packets_sent = 10;
        st.packets_at_last_retx = 7;
        assert_eq!(st.packets_since_last_retx(), 4);
    }

    #[test]
    fn fin_rides_on_the_last_data_segment() {
        let rec = LossRecovery {
            fin_with_data: true,
            ..LossRecovery::default()
        };
        let (mut s, mut r) = with(rec, 10, 2500);
        let segs = drain(&mut s, 100);
        assert_eq!(segs.len(), 3);
        assert!(segs[2].has(flags::FIN) && segs[2].len == 500);
        let acks = deliver(&mut r, &segs, &[], 150);
        assert_eq!(acks.last().unwrap().ack, 2501);
        s.on_segment(200, acks.last().unwrap());
        assert_eq!(s.stats().finish, Some(200));
    }
}
