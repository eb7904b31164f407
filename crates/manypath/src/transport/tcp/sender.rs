//! The client side of a TCP connection: handshake, sending the flow's bytes, loss
//! recovery and the retransmission timer.
//!
//! Sequence space: data bytes are [0, size); the FIN takes sequence number `size`.
//! The flow is complete when every data byte is acknowledged (that instant is its finish
//! time); the connection closes when the FIN is acknowledged.
//!
//! This file is the core: RFC 5681's slow start, congestion avoidance (through the
//! controller, which only sees `on_ack`, `on_fast_retransmit` and `on_timeout`), fast
//! retransmit and NewReno's recovery (RFC 6582), limited transmit (RFC 3042), early
//! retransmit (RFC 5827), the restart after idle, and RFC 6298's retransmission timer.
//! The optional loss-recovery features of `LossRecovery` live beside it, each with its
//! own state in the boxed `Extras`: `sack` (the scoreboard and RFC 6675's recovery),
//! `tlp` (tail loss probes), `ir` (TCP-IR's coded packets) and `proactive` (every
//! segment sent twice). The core calls them where it sends, acknowledges and times out.

mod ir;
mod pacing;
mod proactive;
mod rate;
mod sack;
mod tlp;

use std::collections::VecDeque;

use super::linux::{self, LinuxRtt};
use super::{HostTimers, LossRecovery, RttEstimator, Segment, TcpConfig};
use crate::net::packet::flags;
use crate::time::SimTime;
use crate::transport::cc::{AckEvent, CongestionControl, Window};
use crate::transport::protocol::Cc;
use ir::Ir;
use pacing::Pacer;
use proactive::Proactive;
use rate::RateSampler;
use sack::Scoreboard;
use tlp::Tlp;

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
    /// Limited transmit: new segments the dupacks received so far allow beyond cwnd.
    lt_allowance: u32,
    sack: Scoreboard,
    tlp: Tlp,
    ir: Ir,
    proactive: Proactive,
    pacer: Pacer,
    /// Delivery-rate samples, taken when pacing.
    rate: RateSampler,
    /// The Linux timers preset: its RTT estimator, and the jiffy (0 when off).
    linux: LinuxRtt,
    jiffy: SimTime,
}

/// The fields are laid out by hand (`repr(C)`), in the order the common path uses
/// them, and the sender starts on a cache line: an ACK or a send touches its first five
/// lines, the last one for the congestion controller's per-ACK state. (A multipath
/// connection has many subflows, and their senders are mostly out of the cache when
/// their ACKs arrive.) `tests::layout` checks the lines.
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
    // Line 3 (from the last word of line 2).
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
    /// `cfg.pacing`: the next-send gate is on (its state is in `x.pacer`).
    pacing: bool,
    /// The Linux timers preset is on (its state is in `x.linux`).
    linux: bool,
    // From the last word of line 3 on: the controller, whose per-ACK state comes first
    // and ends in line 4.
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
                lt_allowance: 0,
                sack: Scoreboard::new(r.sack),
                tlp: Tlp::new(),
                ir: Ir::new(r.tcp_ir),
                proactive: Proactive::default(),
                pacer: Pacer::default(),
                rate: RateSampler::default(),
                linux: LinuxRtt::default(),
                jiffy: match cfg.timers {
                    HostTimers::Exact => 0,
                    HostTimers::Linux { hz } => linux::jiffy(hz),
                },
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
            pacing: cfg.pacing,
            linux: matches!(cfg.timers, HostTimers::Linux { .. }),
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

    /// The bytes offered that the receiver does not hold yet, as far as the sender
    /// knows: neither cumulatively acknowledged nor SACKed (pFabric's priority; close to
    /// `u64::MAX` for a long-lived flow).
    #[inline(never)]
    pub fn unacked_bytes(&self) -> u64 {
        let end = self.size.min(self.avail);
        end.saturating_sub(self.snd_una)
            .saturating_sub(self.x.sack.sacked_bytes())
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

    /// Multipath: whether a byte sent and not yet acknowledged maps to data byte `dsn`.
    /// Chunks are contiguous from sequence 0 and only those ending at or below
    /// `snd_una` are forgotten, so the first chunk kept starts at or below `snd_una`.
    pub fn carries_dsn(&self, dsn: u64) -> bool {
        let mut start = 0;
        for c in &self.chunks {
            let (lo, hi) = (start.max(self.snd_una), c.end.min(self.snd_max));
            start = c.end;
            if lo < hi && (c.dsn_end - (c.end - lo)..c.dsn_end - (c.end - hi)).contains(&dsn) {
                return true;
            }
        }
        false
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
        if self.rec.sack {
            at = self.x.sack.skip_sacked(at);
        }
        (at < self.snd_max).then_some(at)
    }

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

    #[inline]
    fn arm_timer(&mut self, now: SimTime) {
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
    fn linux_sample(&mut self, rtt: SimTime, ack: u64) {
        let rto_min = self.linux_rto_min();
        self.x.linux.sample(rtt, ack, self.snd_nxt, rto_min);
    }

    /// rto_min as the Linux preset uses it: in whole jiffies, as Linux holds it.
    fn linux_rto_min(&self) -> SimTime {
        linux::rto_min_in_jiffies(self.x.cfg.rto_min, self.x.jiffy)
    }

    /// A pacing sender's delivery-rate sample of an ACK that moved `snd_una` by `newly`,
    /// passed to the controller before `on_ack` (out of line, as `linux_sample`).
    #[inline(never)]
    fn pass_rate_sample(&mut self, now: SimTime, newly: u64) {
        let rs = self.rate_sample(now, newly);
        self.cc.on_rate_sample(&rs);
    }

    /// The timeout after `backoff` consecutive expirations (before rounding to jiffies).
    fn rto(&self, backoff: u32) -> SimTime {
        if !self.linux {
            return self.rtt.rto(backoff);
        }
        let c = &self.x.cfg;
        let base = self.x.linux.rto().unwrap_or(c.rto_initial).min(c.rto_max);
        base.saturating_mul(1u64 << backoff.min(30)).min(c.rto_max)
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

    /// The receive window has room for the segment at `seq` on top of everything sent
    /// (it would go out as new data).
    fn rwnd_has_room(&self, seq: u64) -> bool {
        self.snd_max + self.seg_span(seq) - self.snd_una <= self.peer_rwnd as u64
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

    /// Sends the segment at `snd_nxt` and advances it.
    fn emit_next(&mut self, now: SimTime) -> Segment {
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

    /// Handles a segment from the server.
    pub fn on_segment(&mut self, now: SimTime, seg: &Segment) {
        match self.state {
            SenderState::SynSent => {
                if seg.has(flags::SYN) && seg.has(flags::ACK) {
                    self.state = SenderState::Established;
                    self.rtt.sample(now.saturating_sub(seg.ts_echo));
                    if self.linux {
                        let rto_min = self.linux_rto_min();
                        let m = now.saturating_sub(seg.ts_echo);
                        self.x.linux.sample(m, 0, 0, rto_min);
                    }
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::PS_PER_US;
    use crate::transport::cc::Reno;
    use crate::transport::testing::{self, first_sends};

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

    /// The one-way delay of the bench's links.
    const D: SimTime = 10 * PS_PER_US;

    fn with(recovery: LossRecovery) -> TcpConfig {
        TcpConfig {
            recovery,
            ..testing::cfg()
        }
    }

    /// The lines `TcpSender`'s comments name: what an ACK and a send touch fills the
    /// first five, the last one with the controller's per-ACK state (a coupled
    /// controller's, the largest, whose `Cc` tag is a niche in its payload).
    #[test]
    fn layout() {
        use crate::transport::mpcc::{Coupled, EcnResponse};
        use std::mem::{align_of, offset_of, size_of};
        assert_eq!((size_of::<TcpSender>(), align_of::<TcpSender>()), (384, 64));
        // Line 0: the sequence space and the window.
        assert_eq!(offset_of!(TcpSender, snd_una), 0);
        assert_eq!(offset_of!(TcpSender, rto_deadline), 56);
        // Line 1: the RTT estimator and `recover`.
        assert_eq!(offset_of!(TcpSender, rtt), 64);
        assert_eq!(offset_of!(TcpSender, recover), 120);
        // Line 2: the counters and the copies of the settings.
        assert_eq!(offset_of!(TcpSender, retx_seq), 128);
        assert_eq!(offset_of!(TcpSender, mss), 180);
        // Line 3: the chunks (from line 2's last word), the boxed rest, the flags.
        assert_eq!(offset_of!(TcpSender, chunks), 184);
        assert_eq!(offset_of!(TcpSender, ecn), 245);
        // The controller from line 3's last word; its per-ACK state ends in line 4.
        assert_eq!(offset_of!(TcpSender, cc), 248);
        let cc = Cc::Coupled(Coupled::new(EcnResponse::Halve, 2000.0));
        assert_eq!(size_of::<Cc>(), size_of::<Coupled>(), "the tag is a niche");
        let Cc::Coupled(c) = &cc else { unreachable!() };
        let at = c as *const Coupled as usize - &cc as *const Cc as usize;
        assert_eq!(at, 0);
        assert!(248 + offset_of!(Coupled, last_ece) < 5 * 64);
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

    #[test]
    fn packets_since_last_retransmission() {
        let mut st = SenderStats::default();
        assert_eq!(st.packets_since_last_retx(), 0);
        st.packets_sent = 10;
        st.packets_at_last_retx = 7;
        assert_eq!(st.packets_since_last_retx(), 4);
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
