//! A multipath TCP connection (RFC 8684's data model): n subflows, each a TCP sender and
//! receiver of its own, between the same pair of hosts on distinct source ports (so
//! ECMP places them, collisions included); one data sequence space across them, with a
//! data-level cumulative ACK; a scheduler that hands each subflow chunks of data as its
//! window opens; a coupled congestion controller; and, optionally, FUSO's proactive
//! multipath loss recovery.
pub mod fuso;
pub mod receiver;
pub mod sender;

pub use fuso::FusoConfig;
pub use receiver::MptcpReceiver;
pub use sender::{MptcpSender, Scheduler};

use crate::time::SimTime;

/// The timer deadlines of a connection's subflows at one end, updated whenever a
/// subflow changes, so that the connection's deadline (asked after every delivery)
/// reads one small array instead of n state machines, and nothing when no subflow has
/// a timer armed.
#[derive(Clone, Debug)]
pub(crate) struct SubflowDeadlines {
    /// Bit i: subflow i has a deadline, `at[i]` (`SimTime::MAX` for the others).
    armed: u128,
    at: Vec<SimTime>,
}

impl SubflowDeadlines {
    pub(crate) fn new(subflows: usize) -> SubflowDeadlines {
        SubflowDeadlines {
            armed: 0,
            at: vec![SimTime::MAX; subflows],
        }
    }

    #[inline]
    pub(crate) fn set(&mut self, i: usize, deadline: Option<SimTime>) {
        match deadline {
            Some(d) => {
                self.armed |= 1 << i;
                self.at[i] = d;
            }
            None => {
                self.armed &= !(1 << i);
                self.at[i] = SimTime::MAX;
            }
        }
    }

    /// The earliest deadline.
    #[inline]
    pub(crate) fn earliest(&self) -> Option<SimTime> {
        if self.armed == 0 {
            return None;
        }
        self.at.iter().copied().min()
    }
}
