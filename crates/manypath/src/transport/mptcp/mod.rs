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
