//! NIC rate controllers for RoCE-style senders, one per file, behind one small trait.
//!
//! A RoCE sender paces its packets at the rate its NIC's rate limiter allows and, as
//! modern NICs do, may also cap its bytes in flight by a window. A controller here is the
//! state machine behind that limiter: it takes events (an ACK with what it carries, a
//! congestion notification packet, a byte count sent, a timer firing) and answers with a
//! sending rate in bits/s and an optional window in bytes. It never touches the engine;
//! the sender asks [`RateControl::timer_deadline`] when it should next call
//! [`RateControl::on_timer`]. No event allocates.
//!
//! - [`dcqcn`]: DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA
//!   Deployments", SIGCOMM 2015), ECN/CNP-driven.
//! - [`timely`]: TIMELY (Mittal et al., "TIMELY: RTT-based Congestion Control for the
//!   Datacenter", SIGCOMM 2015), RTT-gradient-driven.
//! - [`hpcc`]: HPCC (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019),
//!   driven by in-band network telemetry (INT) echoed in ACKs.
//!
//! The controllers are not yet driven by a transport. Their default constants are still
//! to be checked one by one against the papers and the HPCC authors' public simulator
//! configuration (`docs/references.md` lists that configuration's values, which differ
//! from some of the papers' defaults, e.g. DCQCN's timers) before an experiment uses
//! them.

pub mod dcqcn;
pub mod hpcc;
pub mod timely;

pub use dcqcn::{CnpPacer, Dcqcn, DcqcnConfig};
pub use hpcc::{Hpcc, HpccConfig};
pub use timely::{Timely, TimelyConfig};

pub use crate::net::int::IntHop;
use crate::time::SimTime;

/// What one arriving ACK tells the rate controller.
#[derive(Clone, Copy, Debug)]
pub struct AckInfo<'a> {
    /// When the ACK arrived.
    pub now: SimTime,
    /// Data bytes newly acknowledged (0 for a duplicate).
    pub acked_bytes: u64,
    /// The cumulative acknowledgement after this ACK: every byte below it is acknowledged.
    pub ack_seq: u64,
    /// The sender's next byte to send when the ACK arrived (HPCC's once-per-RTT rule).
    pub snd_nxt: u64,
    /// An RTT sample taken from this ACK, if it carries one.
    pub rtt: Option<SimTime>,
    /// Whether the ACK echoes a congestion mark (ECN-echo).
    pub ecn_echo: bool,
    /// The INT records echoed in the ACK, from the first hop to the last (empty if none).
    pub int: &'a [IntHop],
}

impl AckInfo<'_> {
    /// An ACK carrying nothing but its time and bytes acknowledged.
    pub fn plain(now: SimTime, acked_bytes: u64) -> AckInfo<'static> {
        AckInfo {
            now,
            acked_bytes,
            ack_seq: 0,
            snd_nxt: 0,
            rtt: None,
            ecn_echo: false,
            int: &[],
        }
    }
}

/// A NIC rate controller: what a RoCE sender's rate limiter asks and the events it feeds.
pub trait RateControl {
    /// The current sending rate, bits/s.
    fn rate_bps(&self) -> f64;

    /// A cap on bytes in flight, if the controller sets one.
    fn window_bytes(&self) -> Option<u64> {
        None
    }

    /// An ACK arrived.
    fn on_ack(&mut self, ack: &AckInfo);

    /// A congestion notification packet (CNP) arrived.
    fn on_cnp(&mut self, _now: SimTime) {}

    /// The sender put `bytes` of data on the wire (DCQCN's byte counter counts these).
    fn on_sent(&mut self, _now: SimTime, _bytes: u64) {}

    /// The time given by [`RateControl::timer_deadline`] has come (`now` ≥ it).
    fn on_timer(&mut self, _now: SimTime) {}

    /// When the controller next needs [`RateControl::on_timer`], if ever.
    fn timer_deadline(&self) -> Option<SimTime> {
        None
    }
}
