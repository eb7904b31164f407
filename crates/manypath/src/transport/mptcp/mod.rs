//! A multipath TCP connection (RFC 8684's data model): n subflows, each a TCP sender and
//! receiver of its own, between the same pair of hosts on distinct source ports (so
//! ECMP places them, collisions included); one data sequence space across them, with a
//! data-level cumulative ACK; a scheduler that hands each subflow chunks of data as its
//! window opens; a coupled congestion controller; and, optionally, FUSO's proactive
//! multipath loss recovery.
pub mod fuso;
pub mod pair;
pub mod receiver;
pub mod sender;

pub use fuso::FusoConfig;
pub use pair::MptcpPair;
pub use receiver::MptcpReceiver;
pub use sender::{MptcpSender, Scheduler};

use crate::time::SimTime;

/// The timer deadlines of a connection's subflows at one end, updated whenever a
/// subflow changes, so that the connection's deadline (asked after every delivery)
/// reads one word instead of n state machines.
#[derive(Clone, Debug)]
pub(crate) struct SubflowDeadlines {
    /// Bit i: subflow i has a deadline, `at[i]` (`SimTime::MAX` for the others).
    armed: u128,
    /// The earliest of `at`, kept up to date by `set`.
    min: SimTime,
    at: Vec<SimTime>,
}

impl SubflowDeadlines {
    pub(crate) fn new(subflows: usize) -> SubflowDeadlines {
        SubflowDeadlines {
            armed: 0,
            min: SimTime::MAX,
            at: vec![SimTime::MAX; subflows],
        }
    }

    #[inline]
    pub(crate) fn set(&mut self, i: usize, deadline: Option<SimTime>) {
        let d = match deadline {
            Some(d) => {
                self.armed |= 1 << i;
                d
            }
            None => {
                self.armed &= !(1 << i);
                SimTime::MAX
            }
        };
        let old = std::mem::replace(&mut self.at[i], d);
        if d <= self.min {
            self.min = d;
        } else if old == self.min {
            // The earliest moved later: look again.
            self.min = self.at.iter().fold(SimTime::MAX, |m, &t| m.min(t));
        }
    }

    /// The earliest deadline.
    #[inline]
    pub(crate) fn earliest(&self) -> Option<SimTime> {
        (self.armed != 0).then_some(self.min)
    }
}

#[cfg(test)]
mod tests {
    use super::SubflowDeadlines;

    #[test]
    fn deadlines_track_the_earliest_armed() {
        let mut d = SubflowDeadlines::new(3);
        assert_eq!(d.earliest(), None);
        d.set(0, Some(50));
        d.set(1, Some(30));
        d.set(2, Some(40));
        assert_eq!(d.earliest(), Some(30));
        // The earliest moves later: the next one takes over.
        d.set(1, Some(70));
        assert_eq!(d.earliest(), Some(40));
        d.set(2, None);
        assert_eq!(d.earliest(), Some(50));
        d.set(0, None);
        d.set(1, None);
        assert_eq!(d.earliest(), None);
        d.set(2, Some(5));
        assert_eq!(d.earliest(), Some(5));
    }
}
