//! TCP as two sans-IO state machines: the client side, which opens the connection and
//! sends the flow's bytes, and the server side, which receives and acknowledges them.
pub mod reassembly;
pub mod receiver;
pub mod rtt;
pub mod sender;

pub use reassembly::Reassembly;
pub use receiver::TcpReceiver;
pub use rtt::RttEstimator;
pub use sender::{SenderStats, TcpSender};

use crate::net::packet::flags;
use crate::time::SimTime;

/// A TCP segment as the state machines see it; the engine maps it to and from packets.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Segment {
    pub seq: u64,
    pub ack: u64,
    /// Payload bytes.
    pub len: u32,
    pub flags: u8,
    /// Outgoing: send as ECN-capable (ECT). Incoming: arrived with CE.
    pub ecn: bool,
    pub rwnd: u32,
    pub ts: SimTime,
    pub ts_echo: SimTime,
    /// Multipath: the data sequence number of the payload's first byte.
    pub dsn: u64,
    /// Multipath: the cumulative data-level acknowledgment.
    pub data_ack: u64,
    /// MMPTCP's packet scatter: send on an independent random path (a random source
    /// port, so ECMP hashes it anew).
    pub scatter: bool,
}

impl Segment {
    #[inline]
    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
    pub fn is_syn(&self) -> bool {
        self.has(flags::SYN)
    }
}

/// Settings of one TCP endpoint pair. Times in picoseconds, sizes in bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TcpConfig {
    /// Maximum payload per segment.
    pub mss: u32,
    /// TCP/IP header bytes added on the wire to every segment.
    pub header: u32,
    /// Initial window, in segments.
    pub init_cwnd: u32,
    /// Initial slow-start threshold in bytes (`f64::INFINITY`: none).
    pub init_ssthresh: f64,
    pub rto_min: SimTime,
    pub rto_max: SimTime,
    /// RTO before the first RTT sample (RFC 6298: 1 s).
    pub rto_initial: SimTime,
    pub dupack_threshold: u32,
    /// Acknowledge every second segment (or after `delack_timeout`) instead of every one.
    pub delayed_ack: bool,
    pub delack_timeout: SimTime,
    /// Receive buffer: the largest window the receiver advertises.
    pub rcv_wnd: u32,
    /// Send data as ECN-capable and echo CE marks.
    pub ecn: bool,
    /// Floor of ECN-driven window cuts, in segments.
    pub cwnd_min: u32,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            mss: 1460,
            header: 40,
            init_cwnd: 10,
            init_ssthresh: f64::INFINITY,
            rto_min: 200 * crate::time::PS_PER_MS,
            rto_max: 60 * crate::time::PS_PER_S,
            rto_initial: crate::time::PS_PER_S,
            dupack_threshold: 3,
            delayed_ack: false,
            delack_timeout: crate::time::PS_PER_MS,
            rcv_wnd: 4 << 20,
            ecn: false,
            cwnd_min: 2,
        }
    }
}
