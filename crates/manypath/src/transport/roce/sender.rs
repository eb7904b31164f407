//! The requester of a RoCE queue pair: sends a message's (or a persistent connection's
//! messages') bytes in packets of one payload, paced at its controller's rate, within
//! an optional window, and recovers losses by go-back-N, selectively, or not at all.
//!
//! Pacing is the NIC's rate limiter: after a packet of `w` wire bytes at rate `r`, the
//! next may leave `w·8/r` later. `poll_transmit(now)` returns a packet only when that
//! time has come, and `timer_deadline()` names it, so an engine that polls at deadlines
//! paces the sender without a timer of its own.

use super::receiver::insert_range;
use super::{flags, Rc, Retransmit, RoceConfig};
use crate::net::int::IntHop;
use crate::time::{Rate, SimTime};
use crate::transport::rate::{AckInfo, RateControl};
use crate::transport::tcp::Segment;

/// A requester's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RoceStats {
    /// Data packets and payload bytes put on the wire, retransmissions included.
    pub packets_sent: u64,
    pub bytes_sent: u64,
    pub packets_retx: u64,
    pub bytes_retx: u64,
    pub bytes_acked: u64,
    /// NAKs and CNPs received.
    pub naks: u32,
    /// Recoveries NAKs started: go-back-N's goes back, selective recovery episodes.
    pub recoveries: u32,
    pub cnps: u32,
    pub timeouts: u32,
}

/// One queue pair's requester.
#[derive(Clone, Debug)]
pub struct RoceSender {
    cfg: RoceConfig,
    pub cc: Rc,
    /// Bytes of the flow (`u64::MAX`: long-lived or persistent).
    size: u64,
    /// Bytes the application has handed over so far.
    avail: u64,
    open: bool,
    /// Every byte below it is acknowledged.
    snd_una: u64,
    /// The next byte to send (go-back-N moves it back).
    snd_nxt: u64,
    /// One past the highest byte ever sent: bytes below it go again as retransmissions.
    high_sent: u64,
    /// Selective: data the responder holds out of order, sorted disjoint ranges.
    sacked: Vec<(u64, u64)>,
    /// Selective, in recovery: holes below it have been resent.
    retx_nxt: u64,
    recovery: bool,
    /// The rate limiter: when the next packet may leave, and the pacing rate cached.
    next_send: SimTime,
    pace: Rate,
    pace_bps: f64,
    /// The latest time the sender was called at.
    now: SimTime,
    rto_at: Option<SimTime>,
    finish: Option<SimTime>,
    stats: RoceStats,
}

impl RoceSender {
    /// A requester of a flow of `size` bytes (`u64::MAX`: long-lived) under `cc`.
    pub fn new(cfg: RoceConfig, cc: Rc, size: u64) -> RoceSender {
        let bps = cc.rate_bps();
        RoceSender {
            cfg,
            cc,
            size,
            avail: size,
            open: false,
            snd_una: 0,
            snd_nxt: 0,
            high_sent: 0,
            sacked: Vec::new(),
            retx_nxt: 0,
            recovery: false,
            next_send: 0,
            pace: Rate::from_bps(bps.max(1.0) as u64),
            pace_bps: bps,
            now: 0,
            rto_at: None,
            finish: None,
            stats: RoceStats::default(),
        }
    }

    /// The flow starts: no handshake, the first packet may leave at once.
    pub fn open(&mut self) {
        self.open = true;
    }

    /// A persistent connection: no data until `offer`.
    pub fn make_idle(&mut self) {
        self.size = u64::MAX;
        self.avail = 0;
    }

    /// The application hands over `bytes` more (the next message).
    pub fn offer(&mut self, bytes: u64) {
        self.avail = self.avail.saturating_add(bytes);
    }

    pub fn stats(&self) -> RoceStats {
        RoceStats {
            bytes_acked: self.snd_una.min(self.size),
            ..self.stats
        }
    }

    pub fn config(&self) -> &RoceConfig {
        &self.cfg
    }

    /// Data bytes of the flow acknowledged.
    pub fn bytes_acked(&self) -> u64 {
        self.snd_una.min(self.size)
    }

    /// Every byte below this is acknowledged.
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }

    /// When every byte of the flow was acknowledged.
    pub fn finish(&self) -> Option<SimTime> {
        self.finish
    }

    /// Bytes in flight as the window counts them.
    pub fn in_flight(&self) -> u64 {
        self.snd_nxt.saturating_sub(self.snd_una)
    }

    /// The window in force, if any.
    pub fn window(&self) -> Option<u64> {
        if !self.cfg.window {
            return None;
        }
        Some(self.cc.window_bytes().unwrap_or(self.cfg.bdp_bytes))
    }

    fn end(&self) -> u64 {
        self.avail.min(self.size)
    }

    /// Selective recovery: the next hole below the highest SACKed byte, not yet resent.
    fn next_hole(&self) -> Option<(u64, u64)> {
        if !self.recovery {
            return None;
        }
        let mut start = self.retx_nxt.max(self.snd_una);
        for &(s, e) in &self.sacked {
            if e <= start {
                continue;
            }
            if start < s {
                return Some((start, s.min(start + self.cfg.payload as u64)));
            }
            start = e;
        }
        None
    }

    /// The byte range of the next new (or gone-back) packet, skipping SACKed data.
    fn next_new(&self) -> Option<(u64, u64)> {
        let mut start = self.snd_nxt;
        for &(s, e) in &self.sacked {
            if s <= start && start < e {
                start = e;
            }
        }
        let end = self.end();
        if start >= end {
            return None;
        }
        if let Some(w) = self.window() {
            if start.saturating_sub(self.snd_una) >= w {
                return None;
            }
        }
        let mut stop = end.min(start + self.cfg.payload as u64);
        if let Some(&(s, _)) = self.sacked.iter().find(|&&(s, _)| s > start) {
            stop = stop.min(s);
        }
        Some((start, stop))
    }

    /// What the sender would send next, ignoring pacing: (start, end, a hole resent).
    fn next_packet(&self) -> Option<(u64, u64, bool)> {
        if !self.open || self.finish.is_some() {
            return None;
        }
        if let Some((s, e)) = self.next_hole() {
            return Some((s, e, true));
        }
        self.next_new().map(|(s, e)| (s, e, false))
    }

    pub fn poll_transmit(&mut self, now: SimTime) -> Option<Segment> {
        self.now = now;
        let (start, end, hole) = self.next_packet()?;
        if now < self.next_send {
            return None;
        }
        let len = (end - start) as u32;
        if hole {
            self.retx_nxt = end;
        } else {
            self.snd_nxt = end;
        }
        let retx = start < self.high_sent;
        self.high_sent = self.high_sent.max(end);
        self.stats.packets_sent += 1;
        self.stats.bytes_sent += len as u64;
        if retx {
            self.stats.packets_retx += 1;
            self.stats.bytes_retx += len as u64;
        }
        let window_full = self
            .window()
            .is_some_and(|w| self.snd_nxt.saturating_sub(self.snd_una) >= w);
        let ack_req = end == self.end() || window_full;
        self.cc.on_sent(now, len as u64);
        self.pace(now, len + self.cfg.header);
        if self.rto_at.is_none() {
            self.rto_at = self.rto_after(now);
        }
        Some(Segment {
            seq: start,
            len,
            flags: if ack_req { flags::ACK } else { 0 },
            ecn: self.cfg.ecn,
            ts: now,
            ..Segment::default()
        })
    }

    /// The rate limiter: the next packet leaves one serialisation at the current rate
    /// after this one.
    fn pace(&mut self, now: SimTime, wire: u32) {
        let bps = self.cc.rate_bps();
        if bps != self.pace_bps {
            self.pace_bps = bps;
            self.pace = Rate::from_bps(bps.max(1.0) as u64);
        }
        self.next_send = now + self.pace.serialization(wire);
    }

    /// An ACK, NAK or CNP arrived (the engine's echo of INT records in `int`).
    pub fn on_segment_int(&mut self, now: SimTime, seg: &Segment, int: &[IntHop]) {
        self.now = now;
        if seg.has(flags::CNP) {
            self.stats.cnps += 1;
            self.cc.on_cnp(now);
            return;
        }
        let ack = seg.ack.min(self.high_sent);
        let newly = ack.saturating_sub(self.snd_una);
        if newly > 0 {
            self.snd_una = ack;
            self.sacked.retain(|&(_, e)| e > ack);
            if self.snd_nxt < ack {
                self.snd_nxt = ack;
            }
            self.rto_at = self.rto_after(now);
        }
        if seg.has(flags::SACK) {
            for (s, e) in seg.sack_blocks() {
                if e > self.snd_una {
                    insert_range(&mut self.sacked, s.max(self.snd_una), e);
                }
            }
        }
        if self.recovery && self.snd_una >= self.high_sent {
            self.recovery = false;
        }
        if seg.has(flags::NAK) {
            self.stats.naks += 1;
            match self.cfg.retransmit {
                Retransmit::GoBackN => {
                    if self.snd_nxt > ack {
                        self.snd_nxt = ack;
                        self.stats.recoveries += 1;
                    }
                }
                Retransmit::Selective => {
                    if !self.recovery {
                        self.stats.recoveries += 1;
                        self.recovery = true;
                        self.retx_nxt = self.snd_una;
                    }
                }
                Retransmit::None => {}
            }
        }
        self.cc.on_ack(&AckInfo {
            now,
            acked_bytes: newly,
            ack_seq: ack,
            snd_nxt: self.snd_nxt,
            rtt: Some(now.saturating_sub(seg.ts_echo)),
            ecn_echo: false,
            int,
        });
        if self.finish.is_none() && self.snd_una >= self.size {
            self.finish = Some(now);
            self.rto_at = None;
        }
    }

    pub fn on_segment(&mut self, now: SimTime, seg: &Segment) {
        self.on_segment_int(now, seg, &[]);
    }

    pub fn on_timer(&mut self, now: SimTime) {
        self.now = now;
        if self.cc.timer_deadline().is_some_and(|d| d <= now) {
            self.cc.on_timer(now);
        }
        if self.rto_at.is_some_and(|d| d <= now) {
            self.stats.timeouts += 1;
            // Everything not known to have arrived goes again, from the first byte
            // unacknowledged.
            self.snd_nxt = self.snd_una;
            self.recovery = false;
            self.rto_at = self.rto_after(now);
        }
    }

    /// The retransmission timeout started at `now`, while data is outstanding (never
    /// without a retransmission scheme or a timer).
    fn rto_after(&self, now: SimTime) -> Option<SimTime> {
        let rto = self.cfg.rto?;
        (self.cfg.retransmit != Retransmit::None && self.snd_una < self.high_sent)
            .then_some(now + rto)
    }

    /// The earliest of: the next send time (when there is something to send and it is
    /// still ahead), the controller's timer, the retransmission timeout.
    pub fn timer_deadline(&self) -> Option<SimTime> {
        if self.finish.is_some() {
            return None;
        }
        let pacing =
            (self.next_send > self.now && self.next_packet().is_some()).then_some(self.next_send);
        // The earliest of the three, written out: this runs after every send and
        // arrival of the queue pair.
        earliest(earliest(pacing, self.cc.timer_deadline()), self.rto_at)
    }
}

/// The earlier of two optional times (`None`: no deadline).
#[inline]
fn earliest(a: Option<SimTime>, b: Option<SimTime>) -> Option<SimTime> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}
