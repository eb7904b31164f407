//! Single-path congestion controllers, one per file, behind one small trait.
//!
//! The sender owns loss recovery (fast retransmit, NewReno, RTO); a controller only says
//! how the window grows on ACKs, how it reacts to ECN echoes, and where ssthresh goes on
//! a loss. Senders hold their controller in `transport::protocol::Cc`, an enum, so calls
//! are static (no boxes).

pub mod bbr;
pub mod cubic;
pub mod dctcp;
pub mod reno;
pub mod swift;

pub use bbr::Bbr;
pub use cubic::Cubic;
pub use dctcp::{Dctcp, MarkedFraction};
pub use reno::Reno;
pub use swift::Swift;

use crate::time::SimTime;

/// The window a controller steers, in bytes (floating point: coupled and fractional
/// increases need it; IEEE arithmetic keeps runs reproducible).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    pub cwnd: f64,
    pub ssthresh: f64,
}

/// What the sender tells its controller about one arriving ACK.
#[derive(Clone, Copy, Debug)]
pub struct AckEvent {
    /// Data bytes newly acknowledged by this ACK (0 for a duplicate).
    pub acked: u64,
    /// The ACK echoed a CE mark.
    pub ece: bool,
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// The sender is in fast recovery: the window must not grow.
    pub in_recovery: bool,
    pub mss: f64,
    /// Floor for ECN-driven cuts, in bytes.
    pub cwnd_min: f64,
    /// The window was the limit on sending (RFC 7661; Linux's `tcp_is_cwnd_limited`):
    /// a sender held back by something else — its NIC, the receive window — must not
    /// keep growing a window it does not use.
    pub cwnd_limited: bool,
    /// When the ACK arrived (CUBIC's window is a function of time).
    pub now: SimTime,
    /// The smallest RTT the sender has measured (0 before the first).
    pub min_rtt: SimTime,
    /// The RTT this ACK measured (0: none, as for a duplicate ACK).
    pub rtt: SimTime,
    /// Swift's endpoint delay: the receiving host's Rx queuing and processing of the
    /// data this ACK acknowledges, as the receiver measured and echoed it (0 without a
    /// host delay). It rides in the ACK's data-ack slot, which single-path connections
    /// (Swift is one) never use otherwise; other controllers ignore it.
    pub endpoint_delay: SimTime,
}

/// A delivery-rate sample (draft-cheng-iccrg-delivery-rate-estimation §3.3): the data
/// delivered between a segment's send and its acknowledgment over the longer of the
/// send and ACK intervals. Taken only by a pacing sender.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RateSample {
    /// Bytes per picosecond (0: no valid sample on this ACK).
    pub delivery_rate: f64,
    /// Bytes delivered over the connection so far (`C.delivered`).
    pub delivered: u64,
    /// `C.delivered` when the newest acknowledged segment was sent (`P.delivered`).
    pub prior_delivered: u64,
    /// The sample was taken while the sender had nothing more to send: it may
    /// understate the path's rate.
    pub app_limited: bool,
    /// Bytes in flight after this ACK.
    pub flight: u64,
}

pub trait CongestionControl {
    fn on_ack(&mut self, w: &mut Window, ev: &AckEvent);
    /// A loss detected by duplicate ACKs: set ssthresh (the sender then sets
    /// cwnd = ssthresh + 3 MSS and runs NewReno recovery). Default: halve (RFC 5681).
    fn on_fast_retransmit(&mut self, w: &mut Window, flight: u64, mss: f64) {
        halve_ssthresh(w, flight, mss);
    }
    /// A retransmission timeout: set ssthresh (the sender then sets cwnd to one MSS).
    /// Default: halve (RFC 5681).
    fn on_timeout(&mut self, w: &mut Window, flight: u64, mss: f64) {
        halve_ssthresh(w, flight, mss);
    }
    /// The rate the sender is to pace at, in bytes per picosecond (0: no pacing gate).
    /// Read only by a sender with pacing on.
    fn pacing_rate(&self) -> f64 {
        0.0
    }
    /// A pacing sender's delivery-rate sample of a cumulative ACK, handed over just
    /// before that ACK's `on_ack` (a sender that does not pace takes none).
    fn on_rate_sample(&mut self, _rs: &RateSample) {}
    /// Bytes carried between losses, OLIA's ℓ (0 for a controller that does not count
    /// them; only a coupled subflow's does).
    fn ell(&self) -> f64 {
        0.0
    }
}

/// An ACK event for controller unit tests: MSS 1000 B, cwnd_min 2000 B, window-limited.
#[cfg(test)]
pub fn test_ack(acked: u64, ece: bool, snd_una: u64, snd_nxt: u64) -> AckEvent {
    AckEvent {
        acked,
        ece,
        snd_una,
        snd_nxt,
        in_recovery: false,
        mss: 1000.0,
        cwnd_min: 2000.0,
        cwnd_limited: true,
        now: 0,
        min_rtt: 0,
        rtt: 0,
        endpoint_delay: 0,
    }
}

/// Standard increase: slow start below ssthresh (one MSS per ACKed MSS, RFC 5681 with
/// appropriate byte counting, L = 1), congestion avoidance above (about one MSS per RTT);
/// none while the window is not what limits the sender.
#[inline]
pub fn reno_increase(w: &mut Window, ev: &AckEvent) {
    let (acked, mss) = (ev.acked, ev.mss);
    if acked == 0 || !ev.cwnd_limited {
        return;
    }
    if w.cwnd < w.ssthresh {
        w.cwnd += (acked as f64).min(mss);
    } else {
        w.cwnd += mss * (acked as f64) / w.cwnd;
    }
}

/// Halving on loss, floored at two segments (RFC 5681).
#[inline]
pub fn halve_ssthresh(w: &mut Window, flight: u64, mss: f64) {
    w.ssthresh = (flight as f64 / 2.0).max(2.0 * mss);
}

/// Lets an ECN reaction happen at most once per window of data: after a cut, ECE echoes
/// are ignored until everything sent before the cut has been acknowledged.
#[derive(Clone, Copy, Debug, Default)]
pub struct OncePerWindow {
    high: u64,
}

impl OncePerWindow {
    #[inline]
    pub fn fire(&mut self, ece: bool, snd_una: u64, snd_nxt: u64) -> bool {
        if ece && snd_una >= self.high {
            self.high = snd_nxt.max(snd_una + 1);
            true
        } else {
            false
        }
    }
}
