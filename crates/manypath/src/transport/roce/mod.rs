//! A RoCEv2-style transport as two sans-IO state machines: a queue pair's requester
//! ([`RoceSender`], the flow's source) and responder ([`RoceReceiver`]).
//!
//! As a RoCE NIC does, the sender has no handshake (the first packet leaves at the flow's
//! start), sends packets of one MTU's payload, paces them at the rate its rate limiter
//! allows (a controller of `transport/rate/`, or line rate), optionally caps its bytes in
//! flight by a window, and recovers losses by go-back-N (the responder accepts only
//! in-order data and NAKs the first packet out of order), by IRN-style selective
//! retransmission, or not at all (a lossless fabric assumed). The responder acknowledges
//! every `ack_every` packets, is the DCQCN notification point (a CNP per flow at most once
//! per interval for CE-marked data), and echoes the INT records of HPCC's data packets
//! on its ACKs.
//!
//! Packets are [`Segment`]s: `seq` is the first payload byte (the PSN times the payload
//! size), `ack` the responder's next expected byte, and the flags of [`flags`] say what a
//! packet is. The engine maps them onto packets as it does TCP's.

pub mod pair;
pub mod plan;
pub mod receiver;
pub mod sender;

pub use pair::RocePair;
pub use receiver::RoceReceiver;
pub use sender::{RoceSender, RoceStats};

use crate::time::{SimTime, PS_PER_US};
use crate::transport::rate::{
    AckInfo, Dcqcn, DcqcnConfig, Hpcc, HpccConfig, RateControl, Timely, TimelyConfig,
};

/// What a RoCE packet is. The bits avoid TCP's SYN, FIN and RST, which RWNDQ switches
/// count; a packet with none of them set and a payload is plain data.
pub mod flags {
    use crate::net::packet::flags as tcp;
    /// On data: the BTH's AckReq bit, the responder acknowledges this packet at once (the
    /// last packet of a message, or the one that fills the window). Alone: an ACK.
    pub const ACK: u8 = tcp::ACK;
    /// A congestion notification packet (DCQCN's CNP).
    pub const CNP: u8 = tcp::ECE;
    /// A NAK: sequence error, `ack` is the byte the responder expects.
    pub const NAK: u8 = tcp::CWR;
    /// The ACK or NAK carries SACK blocks of data held out of order (selective
    /// retransmission); the engine keeps them in the arena's extension slot.
    pub const SACK: u8 = tcp::SACK;
}

/// Header bytes of a RoCEv2 packet on the wire: Ethernet 14 (without preamble and
/// inter-frame gap, as the TCP header bytes leave them out too), IPv4 20, UDP 8, the
/// InfiniBand base transport header (BTH) 12, the invariant CRC 4 and the Ethernet FCS 4
/// (InfiniBand Architecture Specification, Annex A17 RoCEv2).
pub const HEADER_BYTES: u32 = 14 + 20 + 8 + 12 + 4 + 4;
/// HPCC's INT header on its data packets and ACKs: room for five hops of 8 bytes and a
/// 2-byte hop count, 42 bytes whether used or not (the HPCC authors' simulator,
/// `IntHeader::GetStaticSize`).
pub const INT_HEADER_BYTES: u32 = 5 * 8 + 2;
/// Payload bytes per packet: 1000 (the HPCC authors' simulator, `PACKET_PAYLOAD_SIZE`).
pub const DEFAULT_PAYLOAD: u32 = 1000;
/// Retransmission timeout: 320 µs, IRN's RTO_high (Mittal et al., "Revisiting Network
/// Support for RDMA", SIGCOMM 2018, §3.2), for go-back-N too (NICs' own default, 4.096
/// µs·2^14 ≈ 67 ms, would leave a lost tail unrecovered for most of a short run).
pub const DEFAULT_RTO: SimTime = 320 * PS_PER_US;
/// One ACK per data packet (the HPCC authors' simulator, `L2_ACK_INTERVAL 1`).
pub const DEFAULT_ACK_EVERY: u32 = 1;

/// How the sender recovers lost packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Retransmit {
    /// The responder drops data out of order and NAKs once per gap; the requester sends
    /// again from the NAK's byte (and from the first unacknowledged byte on a timeout).
    GoBackN,
    /// IRN: the responder keeps data out of order and NAKs each such packet with SACK
    /// blocks; the requester resends only the holes below the highest SACKed byte.
    Selective,
    /// Nothing is sent again: the fabric is assumed lossless (PFC).
    None,
}

/// A RoCE connection's settings (both ends).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RoceConfig {
    /// Payload bytes per packet.
    pub payload: u32,
    /// Header bytes on the wire of every packet (data and control).
    pub header: u32,
    pub retransmit: Retransmit,
    /// The responder acknowledges every this many in-order data packets (and the last
    /// of a message at once).
    pub ack_every: u32,
    /// Cap the bytes in flight: by the controller's window (HPCC), else by `bdp_bytes`.
    pub window: bool,
    /// The fixed window of `window` for controllers without one.
    pub bdp_bytes: u64,
    /// The retransmission timeout; `None`: no timer, recovery by NAK only (the HPCC
    /// authors' simulator's NICs, whose lossless fabric loses nothing).
    pub rto: Option<SimTime>,
    /// The notification point's least spacing of CNPs.
    pub cnp_interval: SimTime,
    /// Data goes ECN-capable (DCQCN).
    pub ecn: bool,
}

impl Default for RoceConfig {
    fn default() -> RoceConfig {
        RoceConfig {
            payload: DEFAULT_PAYLOAD,
            header: HEADER_BYTES,
            retransmit: Retransmit::GoBackN,
            ack_every: DEFAULT_ACK_EVERY,
            window: false,
            bdp_bytes: 0,
            rto: Some(DEFAULT_RTO),
            cnp_interval: crate::transport::rate::dcqcn::paper::CNP_INTERVAL,
            ecn: false,
        }
    }
}

/// The rate controller a RoCE sender runs: an enum, not a box, so calls are static.
#[derive(Clone, Debug)]
pub enum Rc {
    /// No congestion control: line rate (bits/s).
    LineRate(f64),
    Dcqcn(Dcqcn),
    Timely(Timely),
    Hpcc(Hpcc),
}

impl Rc {
    pub fn dcqcn(cfg: DcqcnConfig) -> Rc {
        Rc::Dcqcn(Dcqcn::new(cfg))
    }
    pub fn timely(cfg: TimelyConfig) -> Rc {
        Rc::Timely(Timely::new(cfg))
    }
    pub fn hpcc(cfg: HpccConfig) -> Rc {
        Rc::Hpcc(Hpcc::new(cfg))
    }
}

impl RateControl for Rc {
    #[inline]
    fn rate_bps(&self) -> f64 {
        match self {
            Rc::LineRate(r) => *r,
            Rc::Dcqcn(c) => c.rate_bps(),
            Rc::Timely(c) => c.rate_bps(),
            Rc::Hpcc(c) => c.rate_bps(),
        }
    }
    fn window_bytes(&self) -> Option<u64> {
        match self {
            Rc::LineRate(_) => None,
            Rc::Dcqcn(c) => c.window_bytes(),
            Rc::Timely(c) => c.window_bytes(),
            Rc::Hpcc(c) => c.window_bytes(),
        }
    }
    fn on_ack(&mut self, ack: &AckInfo) {
        match self {
            Rc::LineRate(_) => {}
            Rc::Dcqcn(c) => c.on_ack(ack),
            Rc::Timely(c) => c.on_ack(ack),
            Rc::Hpcc(c) => c.on_ack(ack),
        }
    }
    fn on_cnp(&mut self, now: SimTime) {
        match self {
            Rc::LineRate(_) => {}
            Rc::Dcqcn(c) => c.on_cnp(now),
            Rc::Timely(c) => c.on_cnp(now),
            Rc::Hpcc(c) => c.on_cnp(now),
        }
    }
    fn on_sent(&mut self, now: SimTime, bytes: u64) {
        match self {
            Rc::LineRate(_) => {}
            Rc::Dcqcn(c) => c.on_sent(now, bytes),
            Rc::Timely(c) => c.on_sent(now, bytes),
            Rc::Hpcc(c) => c.on_sent(now, bytes),
        }
    }
    fn on_timer(&mut self, now: SimTime) {
        match self {
            Rc::LineRate(_) => {}
            Rc::Dcqcn(c) => c.on_timer(now),
            Rc::Timely(c) => c.on_timer(now),
            Rc::Hpcc(c) => c.on_timer(now),
        }
    }
    fn timer_deadline(&self) -> Option<SimTime> {
        match self {
            Rc::LineRate(_) => None,
            Rc::Dcqcn(c) => c.timer_deadline(),
            Rc::Timely(c) => c.timer_deadline(),
            Rc::Hpcc(c) => c.timer_deadline(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::tcp::Segment;
    use crate::transport::testing::{first_sends, Pair};

    const US: SimTime = PS_PER_US;
    const D: SimTime = 10 * US;
    /// 8 Gb/s: a 1000-byte payload with its 62 header bytes every 1062 ns.
    const LINE: f64 = 8e9;

    fn pair(cfg: RoceConfig, cc: Rc, size: u64) -> Pair<RoceSender, RoceReceiver> {
        let mut s = RoceSender::new(cfg, cc, size);
        s.open();
        Pair::new(s, RoceReceiver::new(cfg), D)
    }

    fn finish(p: &mut Pair<RoceSender, RoceReceiver>) -> SimTime {
        p.run_while(|p| p.client.finish().is_none());
        p.client.finish().expect("the flow finishes")
    }

    fn data_seqs(p: &Pair<RoceSender, RoceReceiver>) -> Vec<u64> {
        p.up.data().map(|s| s.seg.seq).collect()
    }

    #[test]
    fn the_first_packet_leaves_at_the_start_and_packets_are_paced_at_the_rate() {
        let mut p = pair(RoceConfig::default(), Rc::LineRate(LINE), 10_000);
        let end = finish(&mut p);
        let times: Vec<SimTime> = p.up.data().map(|s| s.at).collect();
        assert_eq!(times.len(), 10);
        assert_eq!(times[0], 0, "no handshake");
        for w in times.windows(2) {
            assert_eq!(
                w[1] - w[0],
                1_062_000,
                "one serialisation of 1062 B at 8 Gb/s"
            );
        }
        // The last packet's ACK returns one round trip after it left.
        assert_eq!(end, times[9] + 2 * D);
        assert_eq!(p.client.stats().packets_retx, 0);
        // Half the rate: twice the spacing.
        let mut p = pair(RoceConfig::default(), Rc::LineRate(LINE / 2.0), 3000);
        finish(&mut p);
        let times: Vec<SimTime> = p.up.data().map(|s| s.at).collect();
        assert_eq!(times, vec![0, 2_124_000, 4_248_000]);
    }

    #[test]
    fn go_back_n_naks_once_per_gap_and_resends_from_the_expected_byte() {
        let mut p = pair(RoceConfig::default(), Rc::LineRate(LINE), 10_000);
        p.up.lose(first_sends(&[3000]));
        finish(&mut p);
        let naks: Vec<u64> = p
            .down
            .log
            .iter()
            .filter(|s| s.seg.has(flags::NAK))
            .map(|s| s.seg.ack)
            .collect();
        assert_eq!(
            naks,
            vec![3000],
            "one NAK for the gap, naming the byte expected"
        );
        let seqs = data_seqs(&p);
        let first_pass: Vec<u64> = (0..10).map(|k| k * 1000).collect();
        assert_eq!(&seqs[..10], &first_pass[..]);
        let again: Vec<u64> = (3..10).map(|k| k * 1000).collect();
        assert_eq!(
            &seqs[10..],
            &again[..],
            "everything from the lost packet goes again"
        );
        let st = p.client.stats();
        assert_eq!((st.naks, st.packets_retx, st.timeouts), (1, 7, 0));
        assert_eq!(p.server.bytes_received(), 10_000);
    }

    #[test]
    fn selective_retransmission_resends_only_the_lost_packet() {
        let cfg = RoceConfig {
            retransmit: Retransmit::Selective,
            ..RoceConfig::default()
        };
        let mut p = pair(cfg, Rc::LineRate(LINE), 10_000);
        p.up.lose(first_sends(&[3000, 6000]));
        finish(&mut p);
        let seqs = data_seqs(&p);
        assert_eq!(&seqs[10..], &[3000, 6000]);
        let st = p.client.stats();
        assert_eq!((st.packets_retx, st.timeouts), (2, 0));
        assert_eq!(p.server.bytes_received(), 10_000);
    }

    #[test]
    fn a_lost_tail_is_recovered_by_the_timeout_and_none_sends_nothing_again() {
        let mut p = pair(RoceConfig::default(), Rc::LineRate(LINE), 5000);
        p.up.lose(first_sends(&[4000]));
        let end = finish(&mut p);
        let st = p.client.stats();
        assert_eq!((st.timeouts, st.packets_retx), (1, 1));
        let sent_last = p.up.times_of(4000);
        // The timer restarts at each ACK that acknowledges new data, the last for 3000.
        let last_ack = p.up.times_of(3000)[0] + 2 * D;
        assert_eq!(sent_last[1], last_ack + DEFAULT_RTO);
        assert_eq!(end, sent_last[1] + 2 * D);

        let cfg = RoceConfig {
            retransmit: Retransmit::None,
            ..RoceConfig::default()
        };
        let mut p = pair(cfg, Rc::LineRate(LINE), 5000);
        p.up.lose(first_sends(&[2000]));
        p.run();
        assert_eq!(p.client.finish(), None);
        assert_eq!(p.up.data().count(), 5);
        assert_eq!(p.server.bytes_received(), 2000);
    }

    /// Without a timer (the HPCC simulator's NICs), a loss with data behind it is still
    /// recovered by the NAK; a lost tail is not, and nothing fires however long the
    /// sender waits.
    #[test]
    fn without_a_timer_naks_recover_a_loss_but_not_a_lost_tail() {
        let cfg = RoceConfig {
            rto: None,
            ..RoceConfig::default()
        };
        let mut p = pair(cfg, Rc::LineRate(LINE), 5000);
        p.up.lose(first_sends(&[1000]));
        assert!(finish(&mut p) > 0);
        assert_eq!(
            (p.client.stats().timeouts, p.client.stats().packets_retx),
            (0, 4)
        );
        let mut p = pair(cfg, Rc::LineRate(LINE), 5000);
        p.up.lose(first_sends(&[4000]));
        p.run();
        assert_eq!(p.client.finish(), None);
        assert_eq!(p.client.stats().timeouts, 0);
        assert_eq!(p.client.timer_deadline(), None);
        assert_eq!(p.server.bytes_received(), 4000);
    }

    #[test]
    fn a_window_caps_the_bytes_in_flight() {
        let cfg = RoceConfig {
            window: true,
            bdp_bytes: 4000,
            ..RoceConfig::default()
        };
        let mut p = pair(cfg, Rc::LineRate(LINE), 20_000);
        // Before the first ACK returns, four packets only.
        p.run_until(2 * D - 1);
        assert_eq!(data_seqs(&p), vec![0, 1000, 2000, 3000]);
        assert_eq!(p.client.in_flight(), 4000);
        finish(&mut p);
        assert_eq!(p.up.data().count(), 20);
        // Without the window the whole flow leaves in the first round trip.
        let mut p = pair(RoceConfig::default(), Rc::LineRate(LINE), 20_000);
        p.run_until(2 * D - 1);
        assert_eq!(p.up.data().count(), 19);
    }

    #[test]
    fn acks_are_coalesced_one_per_n_packets_and_the_last() {
        let cfg = RoceConfig {
            ack_every: 4,
            ..RoceConfig::default()
        };
        let mut p = pair(cfg, Rc::LineRate(LINE), 10_000);
        finish(&mut p);
        let acks: Vec<u64> = p.down.log.iter().map(|s| s.seg.ack).collect();
        assert_eq!(acks, vec![4000, 8000, 10_000]);
        let mut p = pair(RoceConfig::default(), Rc::LineRate(LINE), 10_000);
        finish(&mut p);
        assert_eq!(p.down.log.len(), 10);
    }

    #[test]
    fn the_notification_point_sends_a_cnp_at_most_once_per_interval() {
        let mut r = RoceReceiver::new(RoceConfig::default());
        let mut cnps = Vec::new();
        for k in 0..200u64 {
            let seg = Segment {
                seq: k * 1000,
                len: 1000,
                ecn: k % 3 != 1,
                ts: k * US,
                ..Segment::default()
            };
            r.on_segment(k * US, &seg);
            while let Some(s) = r.poll_transmit(k * US) {
                if s.has(flags::CNP) {
                    cnps.push(k);
                }
            }
        }
        // Marks at 0, 2, 3, 5, ...: a CNP at the first marked packet 50 µs or more after
        // the last CNP.
        assert_eq!(cnps, vec![0, 50, 101, 152]);
        assert_eq!(r.cnps_sent, 4);
        assert_eq!(r.acks_sent, 200);
    }

    #[test]
    fn a_cnp_cuts_the_dcqcn_rate_and_the_pacing_follows() {
        let mut p = pair(
            RoceConfig::default(),
            Rc::dcqcn(DcqcnConfig::new(LINE)),
            u64::MAX,
        );
        p.run_until(5 * US);
        p.client.on_segment(
            p.now,
            &Segment {
                flags: flags::CNP,
                ..Segment::default()
            },
        );
        assert_eq!(p.client.cc.rate_bps(), LINE / 2.0);
        assert_eq!(p.client.stats().cnps, 1);
        p.run_until(20 * US);
        let times: Vec<SimTime> = p.up.data().map(|s| s.at).collect();
        let gaps: Vec<SimTime> = times.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(gaps[..4].iter().all(|&g| g == 1_062_000), "{gaps:?}");
        assert!(
            gaps[gaps.len() - 3..].iter().all(|&g| g == 2_124_000),
            "{gaps:?}"
        );
    }

    #[test]
    fn timely_moves_its_rate_with_the_rtt_gradient_as_its_equations_give() {
        let cfg = TimelyConfig::new(LINE);
        let mut p = pair(RoceConfig::default(), Rc::timely(cfg), u64::MAX);
        // One-way 30 µs: a flat RTT of 60 µs (between T_low and T_high) keeps line rate.
        p.up.delay = 30 * US;
        p.down.delay = 30 * US;
        p.run_until(300 * US);
        assert_eq!(p.client.cc.rate_bps(), LINE);
        // The RTT steps up by 10 µs: the first sample of it sees a gradient of
        // α·10 µs / 20 µs and cuts by β times it.
        p.up.delay = 40 * US;
        p.run_while(|p| p.client.cc.rate_bps() == LINE);
        let cut = 1.0 - 0.8 * (0.875 * 10.0 / 20.0);
        let r = p.client.cc.rate_bps();
        assert!((r - LINE * cut).abs() < 1.0, "{r} vs {}", LINE * cut);
        // A flat RTT after the step still decreases (the EWMA keeps a positive
        // difference), and the RTT falling back gives a negative gradient: +δ.
        p.run_until(p.now + 200 * US);
        p.up.delay = 30 * US;
        let before = p.client.cc.rate_bps();
        assert!(before < LINE * cut);
        let mut prev = before;
        p.run_while(|p| {
            let r = p.client.cc.rate_bps();
            if r > prev {
                return false;
            }
            prev = r;
            true
        });
        let Rc::Timely(t) = &p.client.cc else {
            unreachable!()
        };
        assert!(t.gradient() < 0.0);
        let step = p.client.cc.rate_bps() - prev;
        assert!((step - cfg.delta_bps).abs() < 1e-3, "{step}");
    }
}
