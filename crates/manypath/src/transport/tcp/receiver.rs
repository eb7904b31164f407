//! The server side of a TCP connection: answers the SYN, reassembles the byte stream,
//! and acknowledges it — every segment, or every second one with delayed ACK — echoing
//! each CE mark with ECE on the ACK it triggers (the per-packet echo DCTCP needs).
//! With SACK it reports up to three out-of-order ranges, most recent first (RFC 2018);
//! with TCP-IR it recovers a single missing segment from a coded packet.

use super::{linux, HostTimers, Reassembly, Segment, TcpConfig, MAX_SACK_BLOCKS};
use crate::net::packet::flags;
use crate::time::{SimTime, PS_PER_US};

/// The fields are laid out by hand (`repr(C)`) and the receiver starts on a cache line:
/// a data segment touches the first two lines only (the third holds the handshake, SACK
/// and TCP-IR state). A multipath connection has many subflows, and their receivers are
/// mostly out of the cache when their segments arrive. `tests::layout` checks the lines.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct TcpReceiver {
    // Line 0: the sequence space.
    /// The received byte stream; `stream.next` is the next in-order byte expected.
    stream: Reassembly,
    /// Next sequence number expected (the cumulative ACK sent): `stream.next`, plus one
    /// once the FIN is in.
    pub rcv_nxt: u64,
    /// The FIN's sequence number once known, else `NO_FIN`.
    fin_seq: u64,
    /// Segments received and not yet acknowledged (delayed ACK).
    unacked: u32,
    /// Receive buffer: the largest window advertised (`TcpConfig::rcv_wnd`).
    rcv_wnd: u32,
    // Line 1: the acknowledgment.
    pending: PendingAck,
    first_unacked_ts: SimTime,
    delack_deadline: Option<SimTime>,
    delack_timeout: SimTime,
    established: bool,
    fin_done: bool,
    synack_pending: bool,
    ce_state: bool,
    delayed_ack: bool,
    sack: bool,
    recent_n: u8,
    // Line 2: the rest.
    syn_ts: SimTime,
    /// SACK: the blocks reported most recently (absolute), most recent first.
    /// (Boxed: only SACK connections use it, and the receiver stays compact.)
    recent_sack: Box<[(u64, u64); MAX_SACK_BLOCKS]>,
    /// The SACK blocks of the pending ACK (`flags::SACK` set), as a segment carries them.
    pending_sack: [(u32, u32); MAX_SACK_BLOCKS],
    pending_sack_n: u8,
    mss: u32,
    /// TCP-IR: segments recovered from coded packets.
    pub ir_recovered: u32,
    /// The Linux timers preset: segments still to acknowledge at once (quick-ACK mode
    /// at the start), and the jiffy in µs that delayed-ACK timers round to (0: exact).
    quickacks: u8,
    jiffy_us: u32,
}

/// The ACK to send, as `poll_transmit` will build it.
#[derive(Clone, Copy, Debug, Default)]
struct PendingAck {
    ack: u64,
    ts_echo: SimTime,
    rwnd: u32,
    flags: u8,
    due: bool,
}

/// No FIN received yet (`fin_seq`).
const NO_FIN: u64 = u64::MAX;

impl TcpReceiver {
    pub fn new(cfg: TcpConfig) -> TcpReceiver {
        TcpReceiver {
            stream: Reassembly::default(),
            rcv_nxt: 0,
            fin_seq: NO_FIN,
            unacked: 0,
            rcv_wnd: cfg.rcv_wnd,
            pending: PendingAck::default(),
            first_unacked_ts: 0,
            delack_deadline: None,
            delack_timeout: cfg.delack_timeout,
            established: false,
            fin_done: false,
            synack_pending: false,
            ce_state: false,
            delayed_ack: cfg.delayed_ack,
            sack: cfg.recovery.sack,
            recent_n: 0,
            syn_ts: 0,
            recent_sack: Box::new([(0, 0); MAX_SACK_BLOCKS]),
            pending_sack: [(0, 0); MAX_SACK_BLOCKS],
            pending_sack_n: 0,
            mss: cfg.mss,
            ir_recovered: 0,
            quickacks: match cfg.timers {
                HostTimers::Exact => 0,
                HostTimers::Linux { .. } => linux::QUICKACKS,
            },
            jiffy_us: match cfg.timers {
                HostTimers::Exact => 0,
                HostTimers::Linux { hz } => (linux::jiffy(hz) / PS_PER_US) as u32,
            },
        }
    }

    /// In-order bytes received.
    pub fn bytes_received(&self) -> u64 {
        if self.fin_done {
            self.rcv_nxt - 1
        } else {
            self.rcv_nxt
        }
    }

    pub fn timer_deadline(&self) -> Option<SimTime> {
        self.delack_deadline
    }

    fn advertised(&self) -> u32 {
        (self.rcv_wnd as u64).saturating_sub(self.stream.held()) as u32
    }

    fn ack_now(&mut self, ts_echo: SimTime, ece: bool, fin: bool) {
        let mut f = flags::ACK;
        if ece {
            f |= flags::ECE;
        }
        if fin {
            f |= flags::FIN;
        }
        let mut seg = Segment {
            ack: self.rcv_nxt,
            flags: f,
            ecn: ece,
            rwnd: self.advertised(),
            ts_echo,
            ..Segment::default()
        };
        if self.sack && self.stream.held() > 0 {
            self.fill_sack(&mut seg);
            self.pending_sack = seg.sack;
            self.pending_sack_n = seg.sack_n;
        }
        self.pending = PendingAck {
            ack: seg.ack,
            ts_echo: seg.ts_echo,
            rwnd: seg.rwnd,
            flags: seg.flags,
            due: true,
        };
        self.unacked = 0;
        self.delack_deadline = None;
    }

    /// Records that out-of-order data arrived at `seq`: its range becomes the first SACK
    /// block, followed by the earlier reported blocks that are still out of order.
    fn note_sack(&mut self, seq: u64) {
        let Some(first) = self.stream.range_containing(seq) else {
            return;
        };
        let mut blocks = [(0, 0); MAX_SACK_BLOCKS];
        blocks[0] = first;
        let mut n = 1;
        for &(s, _) in &self.recent_sack[..self.recent_n as usize] {
            if n == MAX_SACK_BLOCKS {
                break;
            }
            if let Some(r) = self.stream.range_containing(s) {
                if !blocks[..n].contains(&r) {
                    blocks[n] = r;
                    n += 1;
                }
            }
        }
        *self.recent_sack = blocks;
        self.recent_n = n as u8;
    }

    /// Puts the current SACK blocks on an ACK (ranges may have merged since reported).
    fn fill_sack(&mut self, seg: &mut Segment) {
        let mut n = 0;
        for i in 0..self.recent_n as usize {
            let Some((s, e)) = self.stream.range_containing(self.recent_sack[i].0) else {
                continue;
            };
            let block = ((s - self.rcv_nxt) as u32, (e - self.rcv_nxt) as u32);
            if !seg.sack[..n].contains(&block) {
                seg.sack[n] = block;
                n += 1;
            }
        }
        if n > 0 {
            seg.sack_n = n as u8;
            seg.flags |= flags::SACK;
        }
    }

    /// A TCP-IR coded packet: if exactly one hole of at most one MSS is missing in the
    /// range it protects, that hole is recovered. Either way it is acknowledged at once.
    fn on_coded(&mut self, seg: &Segment) {
        let (holes, first) = self
            .stream
            .holes_in(seg.seq, seg.seq + seg.coded_len as u64);
        if let (1, Some((s, e))) = (holes, first) {
            if e - s <= self.mss as u64 {
                self.stream.accept(s, e);
                self.ir_recovered += 1;
                self.rcv_nxt = self.stream.next;
                if self.stream.held() > 0 && s > self.rcv_nxt {
                    self.note_sack(s);
                }
            }
        }
        if seg.has(flags::FIN) {
            self.fin_seq = seg.seq + seg.coded_len as u64;
        }
        let mut fin_now = false;
        if !self.fin_done && self.fin_seq == self.rcv_nxt {
            self.rcv_nxt += 1;
            self.fin_done = true;
            fin_now = true;
        }
        self.ack_now(
            seg.ts,
            seg.ecn,
            fin_now || self.fin_done && seg.has(flags::FIN),
        );
    }

    pub fn on_segment(&mut self, now: SimTime, seg: &Segment) {
        if seg.has(flags::SYN) {
            self.established = true;
            self.synack_pending = true;
            self.syn_ts = seg.ts;
            return;
        }
        if !self.established {
            return;
        }
        if seg.has(flags::CODED) {
            self.on_coded(seg);
            return;
        }
        let is_fin = seg.has(flags::FIN);
        if seg.len == 0 && !is_fin {
            return; // A pure ACK (handshake completion or the ACK of our FIN).
        }
        let before = self.rcv_nxt;
        let in_order = seg.seq <= self.rcv_nxt;
        // Whether the segment may fill (part of) a gap: Linux then ACKs at once (RFC 5681
        // §4.2).
        let gap = self.stream.held() > 0;
        let new = seg.len > 0 && self.stream.accept(seg.seq, seg.seq + seg.len as u64);
        self.rcv_nxt = self.stream.next;
        if self.sack {
            if self.stream.held() == 0 {
                self.recent_n = 0;
            } else if new && seg.seq > self.rcv_nxt {
                self.note_sack(seg.seq);
            }
        }
        if is_fin {
            self.fin_seq = seg.seq + seg.len as u64;
        }
        let mut fin_now = false;
        if !self.fin_done && self.fin_seq == self.rcv_nxt {
            self.rcv_nxt += 1;
            self.fin_done = true;
            fin_now = true;
        }
        let ce = seg.ecn;
        let immediate = !self.delayed_ack
            || !in_order
            || !new && !fin_now
            || is_fin
            || self.stream.held() > 0
            || ce != self.ce_state
            || self.unacked + 1 >= 2
            || self.quickacks > 0
            || gap && self.jiffy_us != 0;
        let _ = before;
        if self.unacked == 0 {
            self.first_unacked_ts = seg.ts;
        }
        self.ce_state = ce;
        if immediate {
            // (Quick-ACK mode needs delayed ACKs: without, every segment is ACKed.)
            if self.delayed_ack && self.quickacks > 0 {
                self.quickacks -= new as u8;
            }
            let ts = if self.delayed_ack {
                self.first_unacked_ts
            } else {
                seg.ts
            };
            self.ack_now(ts, ce, fin_now || (is_fin && self.fin_done));
        } else {
            self.unacked += 1;
            if self.delack_deadline.is_none() {
                self.delack_deadline = Some(if self.jiffy_us == 0 {
                    now + self.delack_timeout
                } else {
                    let j = self.jiffy_us as SimTime * PS_PER_US;
                    linux::tick_deadline(now, self.delack_timeout, j)
                });
            }
        }
    }

    pub fn on_timer(&mut self, now: SimTime) {
        if let Some(d) = self.delack_deadline {
            if now >= d {
                let ts = self.first_unacked_ts;
                let ce = self.ce_state;
                self.ack_now(ts, ce, false);
            }
        }
    }

    /// An ACK (or the SYN-ACK) waits to be sent.
    #[inline]
    pub fn has_pending(&self) -> bool {
        self.synack_pending || self.pending.due
    }

    pub fn poll_transmit(&mut self, _now: SimTime) -> Option<Segment> {
        if self.synack_pending {
            self.synack_pending = false;
            return Some(Segment {
                flags: flags::SYN | flags::ACK,
                rwnd: self.advertised(),
                ts_echo: self.syn_ts,
                ..Segment::default()
            });
        }
        if !self.pending.due {
            return None;
        }
        self.pending.due = false;
        let p = self.pending;
        let mut seg = Segment {
            ack: p.ack,
            flags: p.flags,
            ecn: p.flags & flags::ECE != 0,
            rwnd: p.rwnd,
            ts_echo: p.ts_echo,
            ..Segment::default()
        };
        if p.flags & flags::SACK != 0 {
            seg.sack = self.pending_sack;
            seg.sack_n = self.pending_sack_n;
        }
        Some(seg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(seq: u64, len: u32, ce: bool) -> Segment {
        Segment {
            seq,
            len,
            flags: flags::ACK,
            ecn: ce,
            ts: seq,
            ..Segment::default()
        }
    }

    fn open(cfg: TcpConfig) -> TcpReceiver {
        let mut r = TcpReceiver::new(cfg);
        r.on_segment(
            0,
            &Segment {
                flags: flags::SYN,
                ..Segment::default()
            },
        );
        let sa = r.poll_transmit(0).unwrap();
        assert!(sa.has(flags::SYN) && sa.has(flags::ACK));
        r
    }

    /// The lines the comments name: a data segment touches the first two.
    #[test]
    fn layout() {
        use std::mem::{align_of, offset_of, size_of};
        assert_eq!(
            (size_of::<TcpReceiver>(), align_of::<TcpReceiver>()),
            (192, 64)
        );
        // Line 0: the sequence space.
        assert_eq!(offset_of!(TcpReceiver, stream), 0);
        assert_eq!(offset_of!(TcpReceiver, rcv_wnd), 60);
        // Line 1: the acknowledgment.
        assert_eq!(offset_of!(TcpReceiver, pending), 64);
        assert_eq!(offset_of!(TcpReceiver, recent_n), 126);
        // Line 2: the rest.
        assert_eq!(offset_of!(TcpReceiver, syn_ts), 128);
    }

    #[test]
    fn acks_every_segment_and_echoes_ce_per_packet() {
        let mut r = open(TcpConfig::default());
        r.on_segment(1, &data(0, 1000, false));
        let a = r.poll_transmit(1).unwrap();
        assert_eq!((a.ack, a.ecn), (1000, false));
        r.on_segment(2, &data(1000, 1000, true));
        let a = r.poll_transmit(2).unwrap();
        assert_eq!((a.ack, a.ecn), (2000, true));
        assert!(a.has(flags::ECE));
    }

    #[test]
    fn reassembles_out_of_order() {
        let mut r = open(TcpConfig::default());
        r.on_segment(1, &data(2000, 1000, false));
        assert_eq!(r.poll_transmit(1).unwrap().ack, 0);
        r.on_segment(2, &data(0, 1000, false));
        assert_eq!(r.poll_transmit(2).unwrap().ack, 1000);
        r.on_segment(3, &data(1000, 1000, false));
        assert_eq!(r.poll_transmit(3).unwrap().ack, 3000);
        assert_eq!(r.bytes_received(), 3000);
    }

    #[test]
    fn answers_fin_with_fin_ack() {
        let mut r = open(TcpConfig::default());
        r.on_segment(1, &data(0, 500, false));
        r.poll_transmit(1);
        r.on_segment(
            2,
            &Segment {
                seq: 500,
                flags: flags::FIN | flags::ACK,
                ..Segment::default()
            },
        );
        let a = r.poll_transmit(2).unwrap();
        assert!(a.has(flags::FIN));
        assert_eq!(a.ack, 501);
        assert_eq!(r.bytes_received(), 500);
    }

    #[test]
    fn delayed_ack_every_second_segment_or_timer() {
        let cfg = TcpConfig {
            delayed_ack: true,
            delack_timeout: 50,
            ..TcpConfig::default()
        };
        let mut r = open(cfg);
        r.on_segment(1, &data(0, 1000, false));
        assert!(r.poll_transmit(1).is_none());
        r.on_segment(2, &data(1000, 1000, false));
        assert_eq!(r.poll_transmit(2).unwrap().ack, 2000);
        r.on_segment(3, &data(2000, 1000, false));
        assert!(r.poll_transmit(3).is_none());
        assert_eq!(r.timer_deadline(), Some(53));
        r.on_timer(53);
        assert_eq!(r.poll_transmit(53).unwrap().ack, 3000);
    }

    #[test]
    fn advertised_window_shrinks_with_held_bytes() {
        let mut r = open(TcpConfig {
            rcv_wnd: 10_000,
            ..TcpConfig::default()
        });
        r.on_segment(1, &data(5000, 1000, false));
        assert_eq!(r.poll_transmit(1).unwrap().rwnd, 9000);
    }
}
