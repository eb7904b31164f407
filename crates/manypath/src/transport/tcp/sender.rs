//! The client side of a TCP connection: handshake, sending the flow's bytes, loss
//! recovery and the retransmission timer.
//!
//! Sequence space: data bytes are [0, size); the FIN takes sequence number `size`.
//! The flow is complete when every data byte is acknowledged (that instant is its finish
//! time); the connection closes when the FIN is acknowledged.
//!
//! This file holds the sender's state, laid out for its common path, and the questions
//! asked of it (flight, window room, drained). The core's behaviour is split by concern
//! under `sender/`: `handshake` (SYN, SYN-ACK), `stream` (the bytes offered, multipath
//! chunks, where segments end), `transmit` (`poll_transmit`: new data within the window,
//! limited transmit (RFC 3042), the restart after idle, the FIN), `ack` (ACK processing:
//! the controller's `on_ack`, fast retransmit, early retransmit (RFC 5827), NewReno's
//! recovery (RFC 6582)), `timers` (RFC 6298's retransmission timer, the Linux preset's,
//! the deadlines of all timers) and `stats` (the counters). The controller only sees
//! `on_ack`, `on_fast_retransmit` and `on_timeout`. The optional loss-recovery features
//! of `LossRecovery` live beside them, each with its own state in the boxed `Extras`:
//! `sack` (the scoreboard and RFC 6675's recovery), `tlp` (tail loss probes), `ir`
//! (TCP-IR's coded packets) and `proactive` (every segment sent twice), as do `pacing`
//! (the next-send gate) and `rate` (delivery-rate samples). The core calls them where
//! it sends, acknowledges and times out.

mod ack;
mod handshake;
mod ir;
mod pacing;
mod proactive;
mod rate;
mod sack;
mod stats;
mod stream;
mod timers;
mod tlp;
mod transmit;

use std::collections::VecDeque;

use super::linux::{self, LinuxRtt};
use super::{HostTimers, LossRecovery, RttEstimator, TcpConfig};
use crate::time::SimTime;
use crate::transport::cc::Window;
use crate::transport::protocol::Cc;
use ir::Ir;
use pacing::Pacer;
use proactive::Proactive;
use rate::RateSampler;
use sack::Scoreboard;
pub use stats::SenderStats;
use stream::Chunk;
use tlp::Tlp;

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

    pub fn is_closed(&self) -> bool {
        self.state == SenderState::Closed
    }

    pub fn is_established(&self) -> bool {
        self.state == SenderState::Established
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::flags;
    use crate::time::PS_PER_US;
    use crate::transport::cc::Reno;
    use crate::transport::tcp::Segment;
    use crate::transport::testing;

    pub(super) fn cfg() -> TcpConfig {
        TcpConfig {
            mss: 1000,
            init_cwnd: 2,
            rto_min: 1000,
            rto_initial: 10_000,
            ..TcpConfig::default()
        }
    }

    pub(super) fn established(size: u64) -> TcpSender {
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

    pub(super) fn ack(n: u64, ts: SimTime) -> Segment {
        Segment {
            ack: n,
            flags: flags::ACK,
            rwnd: 1 << 20,
            ts_echo: ts,
            ..Segment::default()
        }
    }

    pub(super) fn drain(s: &mut TcpSender, now: SimTime) -> Vec<Segment> {
        std::iter::from_fn(|| s.poll_transmit(now)).collect()
    }

    /// The one-way delay of the bench's links.
    pub(super) const D: SimTime = 10 * PS_PER_US;

    pub(super) fn with(recovery: LossRecovery) -> TcpConfig {
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
}
