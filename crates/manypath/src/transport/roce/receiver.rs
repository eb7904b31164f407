//! The responder of a RoCE queue pair: accepts data, acknowledges it (coalesced),
//! NAKs sequence errors, sends CNPs for CE-marked data (DCQCN's notification point) and
//! keeps the INT records of the latest data packet for its ACKs to echo (HPCC).

use super::{flags, Retransmit, RoceConfig};
use crate::net::int::IntStack;
use crate::time::SimTime;
use crate::transport::rate::CnpPacer;
use crate::transport::tcp::{Segment, MAX_SACK_BLOCKS};

/// One queue pair's responder.
#[derive(Clone, Debug)]
pub struct RoceReceiver {
    cfg: RoceConfig,
    /// The next byte expected in order: every byte below it has arrived.
    rcv_nxt: u64,
    /// Selective retransmission: data held out of order, as sorted disjoint ranges.
    ooo: Vec<(u64, u64)>,
    /// In-order data packets since the last ACK.
    unacked: u32,
    /// Go-back-N: the expected byte the last NAK was sent for (one NAK per gap).
    nak_for: Option<u64>,
    pacer: CnpPacer,
    /// The control packets waiting to go: an ACK or NAK (the latest replaces an earlier
    /// one, which it covers), and a CNP.
    ack: Option<Segment>,
    cnp: bool,
    /// The INT records of the latest data packet, echoed on ACKs.
    echo: IntStack,
    pub naks_sent: u32,
    pub cnps_sent: u32,
    pub acks_sent: u64,
}

impl RoceReceiver {
    pub fn new(cfg: RoceConfig) -> RoceReceiver {
        RoceReceiver {
            cfg,
            rcv_nxt: 0,
            ooo: Vec::new(),
            unacked: 0,
            nak_for: None,
            pacer: CnpPacer::new(cfg.cnp_interval),
            ack: None,
            cnp: false,
            echo: IntStack::default(),
            naks_sent: 0,
            cnps_sent: 0,
            acks_sent: 0,
        }
    }

    /// Data bytes received in order.
    pub fn bytes_received(&self) -> u64 {
        self.rcv_nxt
    }

    /// The INT records the next ACK echoes.
    pub fn echo(&self) -> &IntStack {
        &self.echo
    }

    /// A data packet arrived carrying INT records `int`.
    pub fn on_segment_int(&mut self, now: SimTime, seg: &Segment, int: &IntStack) {
        if seg.len > 0 {
            self.echo = *int;
        }
        self.on_segment(now, seg);
    }

    /// A data packet arrived (`seg.ecn`: it carries CE).
    pub fn on_segment(&mut self, now: SimTime, seg: &Segment) {
        if seg.len == 0 {
            return;
        }
        if seg.ecn && self.pacer.on_marked(now) {
            self.cnp = true;
        }
        let end = seg.seq + seg.len as u64;
        // In order, or overlapping the expected byte (a resent packet cut differently).
        if seg.seq <= self.rcv_nxt && end > self.rcv_nxt {
            self.rcv_nxt = end;
            self.nak_for = None;
            self.unacked += 1;
            let filled = self.absorb_ooo();
            if filled || seg.has(flags::ACK) || self.unacked >= self.cfg.ack_every {
                self.queue_ack(seg, 0);
            }
        } else if seg.seq < self.rcv_nxt {
            // A duplicate: acknowledge at once (our ACK may have been lost).
            self.queue_ack(seg, 0);
        } else {
            self.out_of_order(seg, end);
        }
    }

    fn out_of_order(&mut self, seg: &Segment, end: u64) {
        match self.cfg.retransmit {
            Retransmit::GoBackN => {
                if self.nak_for != Some(self.rcv_nxt) {
                    self.nak_for = Some(self.rcv_nxt);
                    self.queue_ack(seg, flags::NAK);
                }
            }
            Retransmit::Selective => {
                insert_range(&mut self.ooo, seg.seq, end);
                self.queue_ack(seg, flags::NAK);
            }
            Retransmit::None => {}
        }
    }

    /// Moves `rcv_nxt` over out-of-order data it now reaches; whether it did.
    fn absorb_ooo(&mut self) -> bool {
        let mut moved = false;
        while let Some(&(s, e)) = self.ooo.first() {
            if s > self.rcv_nxt {
                break;
            }
            self.rcv_nxt = self.rcv_nxt.max(e);
            self.ooo.remove(0);
            moved = true;
        }
        moved
    }

    /// An ACK (or NAK, `kind`) for the data packet `seg`, echoing its timestamp.
    fn queue_ack(&mut self, seg: &Segment, kind: u8) {
        let mut a = Segment {
            ack: self.rcv_nxt,
            flags: if kind == 0 { flags::ACK } else { kind },
            ts_echo: seg.ts,
            ..Segment::default()
        };
        if kind == flags::NAK {
            self.naks_sent += 1;
        }
        if !self.ooo.is_empty() {
            self.sack_blocks(&mut a, seg.seq);
        }
        // A pending NAK stays a NAK if an ACK would replace it: the requester must
        // still learn of the gap.
        if let Some(prev) = self.ack {
            if prev.has(flags::NAK) && kind == 0 && a.ack == prev.ack {
                a.flags = flags::NAK | (a.flags & flags::SACK);
            }
        }
        self.unacked = 0;
        self.ack = Some(a);
    }

    /// SACK blocks: the one holding byte `latest` first, then the lowest others.
    fn sack_blocks(&self, a: &mut Segment, latest: u64) {
        let base = self.rcv_nxt;
        let off = |x: u64| (x - base).min(u32::MAX as u64) as u32;
        let mut n = 0;
        if let Some(&(s, e)) = self.ooo.iter().find(|&&(s, e)| s <= latest && latest < e) {
            a.sack[0] = (off(s), off(e));
            n = 1;
        }
        for &(s, e) in &self.ooo {
            if n == MAX_SACK_BLOCKS {
                break;
            }
            if !(s <= latest && latest < e) {
                a.sack[n] = (off(s), off(e));
                n += 1;
            }
        }
        a.sack_n = n as u8;
        a.flags |= flags::SACK;
    }

    /// The next control packet to send: a CNP first (the congestion signal), then the
    /// ACK or NAK.
    pub fn poll_transmit(&mut self, _now: SimTime) -> Option<Segment> {
        if self.cnp {
            self.cnp = false;
            self.cnps_sent += 1;
            return Some(Segment {
                ack: self.rcv_nxt,
                flags: flags::CNP,
                ..Segment::default()
            });
        }
        let a = self.ack.take()?;
        self.acks_sent += 1;
        Some(a)
    }

    pub fn on_timer(&mut self, _now: SimTime) {}

    pub fn timer_deadline(&self) -> Option<SimTime> {
        None
    }
}

/// Adds `[s, e)` to sorted disjoint ranges, merging what it touches.
pub(crate) fn insert_range(v: &mut Vec<(u64, u64)>, s: u64, e: u64) {
    let i = v.partition_point(|&(_, end)| end < s);
    let mut j = i;
    let (mut s, mut e) = (s, e);
    while j < v.len() && v[j].0 <= e {
        s = s.min(v[j].0);
        e = e.max(v[j].1);
        j += 1;
    }
    v.splice(i..j, std::iter::once((s, e)));
}
