//! NDP's receiver: an ACK for every data packet, a NACK for every trimmed header, and
//! for each of either one PULL asked of the host's pull pacer (`PullPacer`), until it
//! holds every byte of the flow. A PULL the pacer grants at once rides on the ACK or NACK
//! that asked for it.

use super::flags;
use crate::time::SimTime;
use crate::transport::tcp::Segment;
use std::collections::VecDeque;

#[derive(Clone, Debug, Default)]
pub struct NdpReceiver {
    /// Every byte below it has arrived.
    rcv_nxt: u64,
    /// Data held above `rcv_nxt`, as sorted disjoint ranges.
    ooo: Vec<(u64, u64)>,
    /// The flow's size as the latest data packet gave it.
    size: u64,
    /// ACKs, NACKs and PULLs waiting to go, in order.
    out: VecDeque<Segment>,
    /// PULLs to ask of the pacer (taken by `take_pull_requests`).
    requests: u32,
    /// PULLs asked for, and the pacer's turns taken for them (a PULL sent, or a turn
    /// given up by a complete flow), since the start: a NACK's PULL is the one that many
    /// turns ahead of the last sent.
    asked: u64,
    served: u64,
    /// PULLs sent (the cumulative count each PULL carries), and of them those an ACK or
    /// NACK carried.
    pub pulls: u64,
    pub pulls_on_acks: u64,
    pub nacks: u32,
    pub acks: u64,
    /// Trimmed headers that arrived.
    pub trimmed: u32,
}

impl NdpReceiver {
    pub fn new() -> NdpReceiver {
        NdpReceiver::default()
    }

    /// Data bytes received in order.
    pub fn bytes_received(&self) -> u64 {
        self.rcv_nxt
    }

    /// It holds every byte the sender has offered so far.
    pub fn complete(&self) -> bool {
        self.rcv_nxt >= self.size
    }

    /// A data packet, or its header (`flags::TRIMMED`).
    pub fn on_segment(&mut self, _now: SimTime, seg: &Segment) {
        if seg.len == 0 {
            return;
        }
        self.size = self.size.max(seg.ack);
        let kind = if seg.has(flags::TRIMMED) {
            self.trimmed += 1;
            self.nacks += 1;
            flags::NACK
        } else {
            self.acks += 1;
            self.take(seg.seq, seg.seq + seg.len as u64);
            flags::ACK
        };
        let mut pull = 0;
        if !self.complete() {
            self.requests += 1;
            self.asked += 1;
            pull = self.pulls + (self.asked - self.served);
        }
        // A NACK names the PULL that will come for it (0: none): ACKs, NACKs and PULLs
        // each take a path of their own, so that PULL may reach the sender first, find
        // nothing to send and be wasted; the NACK then tells the sender it was its PULL
        // (`NdpSender::on_segment`).
        self.out.push_back(Segment {
            seq: seg.seq,
            ack: if kind == flags::NACK { pull } else { 0 },
            flags: kind,
            ts_echo: seg.ts,
            scatter: true,
            ..Segment::default()
        });
    }

    fn take(&mut self, s: u64, e: u64) {
        if s > self.rcv_nxt {
            crate::transport::roce::receiver::insert_range(&mut self.ooo, s, e);
            return;
        }
        self.rcv_nxt = self.rcv_nxt.max(e);
        while let Some(&(a, b)) = self.ooo.first() {
            if a > self.rcv_nxt {
                break;
            }
            self.rcv_nxt = self.rcv_nxt.max(b);
            self.ooo.remove(0);
        }
    }

    /// The PULLs it has asked for since last called (for the host's pacer).
    pub fn take_pull_requests(&mut self) -> u32 {
        std::mem::take(&mut self.requests)
    }

    /// The pacer's turn for this flow: a PULL, unless the flow has all its data (then
    /// the pacer's slot goes to the next flow). Returns whether it pulled. With
    /// `on_ack`, the turn comes at the instant the ACK or NACK that asked for it is
    /// made (the pacer was idle, nothing waiting, a full packet's time since its last
    /// PULL): that ACK or NACK carries the PULL (its `PULL` flag, the cumulative count in
    /// `ack`) and no PULL packet goes, as htsim's NDP receiver does; a turn that comes
    /// later is a PULL packet of its own.
    pub fn pull(&mut self, on_ack: bool) -> bool {
        self.served += 1;
        if self.complete() {
            return false;
        }
        self.pulls += 1;
        if on_ack {
            if let Some(last) = self.out.back_mut() {
                if last.has(flags::ACK | flags::NACK) && !last.has(flags::PULL) {
                    last.flags |= flags::PULL;
                    last.ack = self.pulls;
                    self.pulls_on_acks += 1;
                    return true;
                }
            }
        }
        self.out.push_back(Segment {
            ack: self.pulls,
            flags: flags::PULL,
            scatter: true,
            ..Segment::default()
        });
        true
    }

    pub fn poll_transmit(&mut self, _now: SimTime) -> Option<Segment> {
        self.out.pop_front()
    }

    pub fn timer_deadline(&self) -> Option<SimTime> {
        None
    }

    pub fn on_timer(&mut self, _now: SimTime) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(seq: u64, trimmed: bool) -> Segment {
        Segment {
            seq,
            len: 1000,
            ack: 3000,
            ts: 7,
            flags: if trimmed { flags::TRIMMED } else { 0 },
            ..Segment::default()
        }
    }

    fn sent(r: &mut NdpReceiver) -> Vec<(u8, u64)> {
        std::iter::from_fn(|| r.poll_transmit(0))
            .map(|s| (s.flags, if s.has(flags::PULL) { s.ack } else { s.seq }))
            .collect()
    }

    #[test]
    fn acks_data_nacks_headers_and_asks_a_pull_for_each() {
        let mut r = NdpReceiver::new();
        r.on_segment(0, &data(0, false));
        r.on_segment(0, &data(1000, true));
        let out: Vec<_> = std::iter::from_fn(|| r.poll_transmit(0)).collect();
        let got: Vec<_> = out.iter().map(|s| (s.flags, s.seq, s.ack)).collect();
        // The NACK names its PULL: the second this flow will send.
        assert_eq!(got, vec![(flags::ACK, 0, 0), (flags::NACK, 1000, 2)]);
        assert_eq!(r.take_pull_requests(), 2);
        assert_eq!(r.take_pull_requests(), 0);
        assert!(r.pull(false));
        assert!(r.pull(false));
        assert_eq!(sent(&mut r), vec![(flags::PULL, 1), (flags::PULL, 2)]);
        assert_eq!((r.acks, r.nacks, r.trimmed, r.pulls), (1, 1, 1, 2));
    }

    /// Once every byte is in, it asks for no more PULLs and gives up pacer slots.
    #[test]
    fn a_complete_flow_stops_pulling() {
        let mut r = NdpReceiver::new();
        r.on_segment(0, &data(2000, false));
        r.on_segment(0, &data(0, false));
        assert_eq!(r.take_pull_requests(), 2);
        assert_eq!(r.bytes_received(), 1000);
        r.on_segment(0, &data(1000, false));
        assert!(r.complete());
        assert_eq!(r.bytes_received(), 3000);
        assert_eq!(r.take_pull_requests(), 0, "the last packet asks for none");
        assert!(!r.pull(false));
        assert_eq!(sent(&mut r).len(), 3, "three ACKs, no PULL");
    }

    /// A turn granted as the ACK or NACK is made rides on it: one packet, the PULL flag
    /// and the cumulative count in `ack`; a later turn (an ACK already gone) is a PULL.
    #[test]
    fn a_pull_granted_at_once_rides_on_its_ack_or_nack() {
        let mut r = NdpReceiver::new();
        r.on_segment(0, &data(0, false));
        assert_eq!(r.take_pull_requests(), 1);
        assert!(r.pull(true));
        r.on_segment(0, &data(1000, true));
        assert!(r.pull(true));
        let out: Vec<_> = std::iter::from_fn(|| r.poll_transmit(0)).collect();
        let got: Vec<_> = out.iter().map(|s| (s.flags, s.seq, s.ack)).collect();
        assert_eq!(
            got,
            vec![
                (flags::ACK | flags::PULL, 0, 1),
                (flags::NACK | flags::PULL, 1000, 2)
            ]
        );
        // The ACK has gone: the next turn is a PULL packet.
        r.on_segment(0, &data(1000, false));
        assert!(r.poll_transmit(0).is_some());
        assert!(r.pull(true));
        assert_eq!(sent(&mut r), vec![(flags::PULL, 3)]);
        assert_eq!((r.pulls, r.pulls_on_acks), (3, 2));
    }
}
