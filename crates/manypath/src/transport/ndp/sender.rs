//! NDP's sender: a first window at line rate, then one packet per PULL, NACKed packets
//! first, and a retransmission timeout for packets neither ACKed nor NACKed.

use super::{flags, NdpConfig};
use crate::engine::rng::Rng;
use crate::time::SimTime;
use crate::transport::tcp::Segment;
use std::collections::VecDeque;

/// Where each packet of the flow stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// On its way (sent, neither ACKed nor NACKed yet).
    InFlight,
    /// NACKed (or timed out): waits for a PULL to go again.
    Resend,
    Acked,
}

/// The sender's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NdpStats {
    pub bytes_sent: u64,
    pub bytes_retx: u64,
    pub bytes_acked: u64,
    pub packets_sent: u64,
    pub packets_retx: u64,
    pub timeouts: u32,
    /// PULLs that gave the sender a packet to send (cumulative counts).
    pub pulls: u64,
    pub nacks: u32,
    /// Of the NACKs, headers a full header queue returned.
    pub returned: u32,
}

#[derive(Clone, Debug)]
pub struct NdpSender {
    cfg: NdpConfig,
    /// Bytes the application has handed over (`u64::MAX`: long-lived).
    size: u64,
    /// The next byte never sent.
    next_new: u64,
    /// Packets it may send now: the first window, then one per PULL.
    credit: u64,
    /// The highest cumulative PULL count seen.
    pulls_seen: u64,
    /// The PULLs last wasted, numbers in (lo, hi]: they found nothing to send. A NACK
    /// naming one of them was overtaken by its own PULL and gets it back.
    wasted: (u64, u64),
    /// Each packet's state and last send time, by packet number (`seq / payload`).
    state: Vec<State>,
    sent_at: Vec<SimTime>,
    /// Packets to send again, in the order they were NACKed.
    resend: VecDeque<u32>,
    /// Packets in the order sent, with their send time, for the timeout (entries whose
    /// packet has moved on since are skipped).
    flight: VecDeque<(u32, SimTime)>,
    /// The last ACK, NACK or PULL (the timeout of a sender with nothing in flight).
    last_heard: SimTime,
    opened: bool,
    finish: Option<SimTime>,
    stats: NdpStats,
    /// Spraying over the connection's equal-cost paths (htsim's permuted scatter): the
    /// paths in a random order, the next one's place in it, and the order's stream.
    /// Without paths, each packet takes a random one (`Segment::scatter`).
    paths: Vec<u16>,
    next_path: usize,
    rng: Option<Rng>,
}

impl NdpSender {
    pub fn new(cfg: NdpConfig, size: u64) -> NdpSender {
        let packets = if size == u64::MAX {
            0
        } else {
            size.div_ceil(cfg.payload as u64) as usize
        };
        NdpSender {
            cfg,
            size,
            next_new: 0,
            credit: 0,
            pulls_seen: 0,
            wasted: (0, 0),
            state: Vec::with_capacity(packets),
            sent_at: Vec::with_capacity(packets),
            resend: VecDeque::new(),
            flight: VecDeque::with_capacity(cfg.window_packets as usize),
            last_heard: 0,
            opened: false,
            finish: None,
            stats: NdpStats::default(),
            paths: Vec::new(),
            next_path: 0,
            rng: None,
        }
    }

    /// Sprays over `n` paths: each packet takes the next of them in a random order,
    /// drawn anew from `rng` after each round, so every path carries the same share.
    pub fn set_paths(&mut self, n: usize, rng: Rng) {
        self.paths = (0..n.min(u16::MAX as usize) as u16).collect();
        self.rng = Some(rng);
        self.next_path = n;
    }

    /// The path of the next packet (`None`: a random one).
    fn path(&mut self) -> Option<usize> {
        let rng = self.rng.as_mut()?;
        if self.next_path >= self.paths.len() {
            // Fisher–Yates.
            for i in (1..self.paths.len()).rev() {
                let j = rng.below(i as u64 + 1) as usize;
                self.paths.swap(i, j);
            }
            self.next_path = 0;
        }
        self.next_path += 1;
        Some(self.paths[self.next_path - 1] as usize)
    }

    pub fn config(&self) -> &NdpConfig {
        &self.cfg
    }

    /// The flow starts: the first window may go at once.
    pub fn open(&mut self) {
        if !self.opened {
            self.opened = true;
            self.credit = self.cfg.window_packets as u64;
        }
    }

    /// A persistent connection: no data until `offer`.
    pub fn make_idle(&mut self) {
        self.size = 0;
    }

    /// The application hands over `bytes` more. An idle sender sends them as a new
    /// first window (nothing is in flight to be pulled for).
    pub fn offer(&mut self, bytes: u64) {
        if self.idle() {
            self.credit = self.cfg.window_packets as u64;
        }
        self.size = self.size.saturating_add(bytes);
        self.finish = None;
    }

    fn idle(&self) -> bool {
        self.next_new >= self.size && self.stats.bytes_acked >= self.size
    }

    pub fn bytes_acked(&self) -> u64 {
        self.stats.bytes_acked
    }

    pub fn finish(&self) -> Option<SimTime> {
        self.finish
    }

    pub fn stats(&self) -> NdpStats {
        self.stats
    }

    fn len_of(&self, n: u32) -> u32 {
        let start = n as u64 * self.cfg.payload as u64;
        (self.size - start).min(self.cfg.payload as u64) as u32
    }

    /// An ACK, NACK or PULL from the receiver (or a header returned by a switch). An
    /// ACK or NACK may carry a PULL (`flags::PULL`, the count in `ack`): it is read after
    /// the ACK or NACK, so a NACKed packet goes again on its own PULL.
    pub fn on_segment(&mut self, now: SimTime, seg: &Segment) {
        self.last_heard = now;
        if seg.has(flags::ACK | flags::NACK | flags::RETURNED) {
            self.on_ack_or_nack(now, seg);
        }
        if seg.has(flags::PULL) && seg.ack > self.pulls_seen {
            self.credit += seg.ack - self.pulls_seen;
            self.stats.pulls += seg.ack - self.pulls_seen;
            self.pulls_seen = seg.ack;
        }
    }

    fn on_ack_or_nack(&mut self, now: SimTime, seg: &Segment) {
        let n = (seg.seq / self.cfg.payload as u64) as u32;
        let Some(&st) = self.state.get(n as usize) else {
            return;
        };
        if seg.has(flags::ACK) {
            if st != State::Acked {
                self.state[n as usize] = State::Acked;
                self.stats.bytes_acked += self.len_of(n) as u64;
                if self.stats.bytes_acked >= self.size && self.finish.is_none() {
                    self.finish = Some(now);
                }
            }
        } else {
            self.stats.nacks += 1;
            if seg.has(flags::RETURNED) {
                self.stats.returned += 1;
                // A returned header is the sender's own packet: it says nothing of the
                // receiver, which will not pull for it; the sender pulls for itself.
                self.credit += 1;
            }
            if st == State::InFlight {
                self.state[n as usize] = State::Resend;
                self.resend.push_back(n);
                // Its PULL came first and was wasted (htsim's NDP has the same race:
                // the packet would wait for the timeout). A NACK carrying its PULL has
                // not been overtaken by it: that PULL is counted above `pulls_seen`.
                let pull = seg.ack;
                if !seg.has(flags::RETURNED) && self.wasted.0 < pull && pull <= self.wasted.1 {
                    self.credit += 1;
                }
            }
        }
        self.prune();
    }

    /// The next packet, if it has credit: a NACKed packet first, then new data. Credit
    /// with nothing to send is dropped, as NDP wastes a PULL that finds nothing.
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<(usize, Segment)> {
        if self.credit == 0 {
            return None;
        }
        while let Some(n) = self.resend.pop_front() {
            if self.state[n as usize] == State::Resend {
                let len = self.len_of(n);
                self.stats.bytes_retx += len as u64;
                self.stats.packets_retx += 1;
                return Some(self.send(now, n, len));
            }
        }
        if self.next_new < self.size {
            let n = (self.next_new / self.cfg.payload as u64) as u32;
            let len = self.len_of(n);
            self.next_new += len as u64;
            self.state.push(State::InFlight);
            self.sent_at.push(now);
            return Some(self.send(now, n, len));
        }
        // The last `credit` granted go unused: PULLs numbered up to `pulls_seen` (after
        // a first window's credit, which has no number).
        let lo = self.pulls_seen - self.credit.min(self.pulls_seen);
        if lo < self.pulls_seen {
            self.wasted = if self.wasted.0 < self.wasted.1 && lo <= self.wasted.1 {
                (self.wasted.0, self.pulls_seen)
            } else {
                (lo, self.pulls_seen)
            };
        }
        self.credit = 0;
        None
    }

    /// Packet `n` of `len` bytes goes now, on the path it is given.
    fn send(&mut self, now: SimTime, n: u32, len: u32) -> (usize, Segment) {
        self.credit -= 1;
        let path = self.path();
        self.state[n as usize] = State::InFlight;
        self.sent_at[n as usize] = now;
        self.flight.push_back((n, now));
        self.stats.bytes_sent += len as u64;
        self.stats.packets_sent += 1;
        let seg = Segment {
            seq: n as u64 * self.cfg.payload as u64,
            ack: self.size,
            len,
            ts: now,
            scatter: path.is_none(),
            ..Segment::default()
        };
        (path.unwrap_or(0), seg)
    }

    /// Drops the timeout records of packets that have moved on since they were sent.
    fn prune(&mut self) {
        while let Some(&(n, at)) = self.flight.front() {
            let i = n as usize;
            if self.state[i] == State::InFlight && self.sent_at[i] == at {
                return;
            }
            self.flight.pop_front();
        }
    }

    pub fn timer_deadline(&self) -> Option<SimTime> {
        if self.finish.is_some() || !self.opened {
            return None;
        }
        // The oldest packet still on its way (`prune` keeps the front current).
        if let Some(&(_, at)) = self.flight.front() {
            return Some(at + self.cfg.rto);
        }
        // Packets waiting for PULLs that do not come (lost PULLs).
        if !self.resend.is_empty() && self.credit == 0 {
            return Some(self.last_heard + self.cfg.rto);
        }
        None
    }

    /// The timeout: packets on their way for a whole RTO are sent again at once; a
    /// sender waiting too long for PULLs sends one packet on its own.
    pub fn on_timer(&mut self, now: SimTime) {
        self.prune();
        let mut fired = false;
        while let Some(&(n, at)) = self.flight.front() {
            if at + self.cfg.rto > now {
                break;
            }
            self.flight.pop_front();
            if self.state[n as usize] == State::InFlight && self.sent_at[n as usize] == at {
                self.state[n as usize] = State::Resend;
                self.resend.push_back(n);
                self.credit += 1;
                fired = true;
            }
        }
        if !fired
            && self.flight.is_empty()
            && !self.resend.is_empty()
            && self.credit == 0
            && self.last_heard + self.cfg.rto <= now
        {
            self.credit = 1;
            self.last_heard = now;
            fired = true;
        }
        if fired {
            self.stats.timeouts += 1;
        }
        self.prune();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RTO: SimTime = 1_000_000;

    fn cfg(window: u32) -> NdpConfig {
        NdpConfig {
            payload: 1000,
            header: 64,
            window_packets: window,
            rto: RTO,
        }
    }

    fn drain(s: &mut NdpSender, now: SimTime) -> Vec<u64> {
        std::iter::from_fn(|| s.poll_transmit(now))
            .map(|x| x.1.seq)
            .collect()
    }

    fn ctl(flag: u8, seq: u64) -> Segment {
        Segment {
            seq,
            flags: flag,
            ..Segment::default()
        }
    }

    fn pull(count: u64) -> Segment {
        Segment {
            ack: count,
            flags: flags::PULL,
            ..Segment::default()
        }
    }

    #[test]
    fn the_first_window_goes_at_once_then_one_packet_per_pull() {
        let mut s = NdpSender::new(cfg(3), 10_000);
        assert!(drain(&mut s, 0).is_empty(), "nothing before open");
        s.open();
        assert_eq!(drain(&mut s, 0), vec![0, 1000, 2000]);
        s.on_segment(10, &pull(1));
        assert_eq!(drain(&mut s, 10), vec![3000]);
        // Two PULLs, one of them lost: the cumulative count makes it up.
        s.on_segment(20, &pull(3));
        assert_eq!(drain(&mut s, 20), vec![4000, 5000]);
        assert_eq!(s.stats().pulls, 3);
    }

    #[test]
    fn nacked_packets_go_first_on_the_next_pull() {
        let mut s = NdpSender::new(cfg(3), 10_000);
        s.open();
        drain(&mut s, 0);
        s.on_segment(5, &ctl(flags::NACK, 1000));
        assert!(drain(&mut s, 5).is_empty(), "a NACK waits for its PULL");
        s.on_segment(6, &pull(1));
        assert_eq!(drain(&mut s, 6), vec![1000]);
        s.on_segment(7, &pull(2));
        assert_eq!(drain(&mut s, 7), vec![3000]);
        let st = s.stats();
        assert_eq!((st.nacks, st.packets_retx, st.bytes_retx), (1, 1, 1000));
    }

    /// An ACK or NACK carrying a PULL is both: the ACK counts, the PULL's credit sends
    /// the next packet, a NACKed packet first.
    #[test]
    fn an_ack_or_nack_carrying_a_pull_is_both() {
        let mut s = NdpSender::new(cfg(2), 10_000);
        s.open();
        assert_eq!(drain(&mut s, 0), vec![0, 1000]);
        let mut ack = ctl(flags::ACK | flags::PULL, 0);
        ack.ack = 1;
        s.on_segment(5, &ack);
        assert_eq!(drain(&mut s, 5), vec![2000]);
        assert_eq!(s.bytes_acked(), 1000);
        let mut nack = ctl(flags::NACK | flags::PULL, 1000);
        nack.ack = 2;
        s.on_segment(6, &nack);
        assert_eq!(
            drain(&mut s, 6),
            vec![1000],
            "the NACKed packet, on its own PULL"
        );
        // A PULL packet with an old count adds nothing.
        s.on_segment(7, &pull(2));
        assert!(drain(&mut s, 7).is_empty());
        let st = s.stats();
        assert_eq!((st.pulls, st.nacks, st.packets_retx), (2, 1, 1));
    }

    fn nack(seq: u64, pull: u64) -> Segment {
        Segment {
            seq,
            ack: pull,
            flags: flags::NACK,
            ..Segment::default()
        }
    }

    /// A PULL that overtakes its NACK finds nothing to send; the NACK, naming it, gets
    /// it back. A NACK whose PULL was used (for new data) waits for the next one.
    #[test]
    fn a_nack_overtaken_by_its_wasted_pull_sends_at_once() {
        let mut s = NdpSender::new(cfg(3), 3000);
        s.open();
        assert_eq!(drain(&mut s, 0), vec![0, 1000, 2000]);
        // Packet 0 is trimmed: the receiver NACKs it and will send PULL 1 for it, which
        // arrives first, with nothing to send.
        s.on_segment(5, &pull(1));
        assert!(drain(&mut s, 5).is_empty());
        s.on_segment(6, &nack(0, 1));
        assert_eq!(
            drain(&mut s, 6),
            vec![0],
            "no wait for a PULL already spent"
        );
        // Packet 1 too, but its PULL (2) is still on its way: the NACK waits for it.
        s.on_segment(7, &nack(1000, 2));
        assert!(drain(&mut s, 7).is_empty());
        s.on_segment(8, &pull(2));
        assert_eq!(drain(&mut s, 8), vec![1000]);
        // A NACK repeated for a packet already waiting does not count its PULL again.
        s.on_segment(9, &pull(3));
        assert!(drain(&mut s, 9).is_empty());
        s.on_segment(10, &nack(2000, 3));
        s.on_segment(11, &nack(2000, 3));
        assert_eq!(drain(&mut s, 11), vec![2000]);
        assert!(drain(&mut s, 12).is_empty());
    }

    #[test]
    fn a_nack_whose_pull_sent_new_data_waits_for_the_next() {
        let mut s = NdpSender::new(cfg(2), 5000);
        s.open();
        assert_eq!(drain(&mut s, 0), vec![0, 1000]);
        // PULL 1 (for the NACK of packet 0) arrives first and sends new data.
        s.on_segment(5, &pull(1));
        assert_eq!(drain(&mut s, 5), vec![2000]);
        s.on_segment(6, &nack(0, 1));
        assert!(drain(&mut s, 6).is_empty(), "its PULL was not wasted");
        s.on_segment(7, &pull(2));
        assert_eq!(drain(&mut s, 7), vec![0]);
    }

    #[test]
    fn the_flow_finishes_when_every_packet_is_acked_once() {
        let mut s = NdpSender::new(cfg(4), 2500);
        s.open();
        assert_eq!(drain(&mut s, 0), vec![0, 1000, 2000]);
        for (t, seq) in [(1, 0), (2, 2000), (3, 0)] {
            s.on_segment(t, &ctl(flags::ACK, seq));
        }
        assert_eq!(s.finish(), None);
        assert_eq!(s.bytes_acked(), 1500);
        s.on_segment(9, &ctl(flags::ACK, 1000));
        assert_eq!(s.finish(), Some(9));
        assert_eq!(s.bytes_acked(), 2500);
        assert_eq!(s.timer_deadline(), None);
    }

    /// A packet neither ACKed nor NACKed is sent again after the RTO, without a PULL.
    #[test]
    fn a_vanished_packet_is_resent_after_the_timeout() {
        let mut s = NdpSender::new(cfg(2), 2000);
        s.open();
        drain(&mut s, 0);
        s.on_segment(10, &ctl(flags::ACK, 0));
        assert_eq!(s.timer_deadline(), Some(RTO));
        s.on_timer(RTO);
        assert_eq!(drain(&mut s, RTO), vec![1000]);
        assert_eq!(s.stats().timeouts, 1);
        assert_eq!(s.timer_deadline(), Some(2 * RTO));
        s.on_segment(RTO + 10, &ctl(flags::ACK, 1000));
        assert_eq!(s.finish(), Some(RTO + 10));
    }

    /// NACKed packets whose PULLs never come go one at a time, an RTO after the sender
    /// last heard from the receiver.
    #[test]
    fn lost_pulls_are_made_up_by_the_timeout() {
        let mut s = NdpSender::new(cfg(1), 1000);
        s.open();
        drain(&mut s, 0);
        s.on_segment(10, &ctl(flags::NACK, 0));
        assert_eq!(s.timer_deadline(), Some(10 + RTO));
        s.on_timer(10 + RTO);
        assert_eq!(drain(&mut s, 10 + RTO), vec![0]);
        assert_eq!(s.stats().timeouts, 1);
    }

    #[test]
    fn a_returned_header_is_resent_on_the_senders_own_credit() {
        let mut s = NdpSender::new(cfg(2), 2000);
        s.open();
        drain(&mut s, 0);
        s.on_segment(5, &ctl(flags::RETURNED, 1000));
        assert_eq!(drain(&mut s, 5), vec![1000]);
        assert_eq!(s.stats().returned, 1);
    }

    /// With paths set, each round of packets takes every path once, in a new order.
    #[test]
    fn packets_spray_over_every_path_once_per_round() {
        let mut s = NdpSender::new(cfg(12), 12_000);
        s.set_paths(4, Rng::new(1, 2, 3));
        s.open();
        let paths: Vec<usize> = std::iter::from_fn(|| s.poll_transmit(0))
            .map(|(p, seg)| {
                assert!(!seg.scatter);
                p
            })
            .collect();
        assert_eq!(paths.len(), 12);
        for round in paths.chunks(4) {
            let mut r = round.to_vec();
            r.sort_unstable();
            assert_eq!(r, vec![0, 1, 2, 3], "{paths:?}");
        }
        assert_ne!(paths[..4], paths[4..8], "a new order each round");
    }

    #[test]
    fn a_persistent_sender_sends_each_offer_as_a_first_window() {
        let mut s = NdpSender::new(cfg(2), u64::MAX);
        s.make_idle();
        s.open();
        assert!(drain(&mut s, 0).is_empty());
        s.offer(3000);
        assert_eq!(drain(&mut s, 1), vec![0, 1000]);
    }
}
