//! TCP as two sans-IO state machines: the client side, which opens the connection and
//! sends the flow's bytes, and the server side, which receives and acknowledges them.
pub mod linux;
pub mod pair;
pub mod reassembly;
pub mod receiver;
pub mod rtt;
pub mod sender;

pub use pair::TcpPair;
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
    /// SACK blocks (RFC 2018), most recent first: `[start, end)` as offsets above `ack`.
    /// Only the first `sack_n` are valid; the flag `flags::SACK` says there are any.
    pub sack: [(u32, u32); MAX_SACK_BLOCKS],
    pub sack_n: u8,
    /// TCP-IR coded packet (`flags::CODED`): the sequence range it protects is
    /// `[seq, seq + coded_len)`; `len` is the wire payload (one MSS).
    pub coded_len: u32,
}

/// SACK blocks an ACK carries (three fit beside the timestamp option).
pub const MAX_SACK_BLOCKS: usize = 3;

impl Segment {
    #[inline]
    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
    pub fn is_syn(&self) -> bool {
        self.has(flags::SYN)
    }

    /// The valid SACK blocks as absolute sequence ranges.
    pub fn sack_blocks(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.sack[..self.sack_n as usize]
            .iter()
            .map(move |&(s, e)| (self.ack + s as u64, self.ack + e as u64))
    }
}

/// Loss-recovery options, each independent of congestion control; all off by default
/// (NewReno with the RTO).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LossRecovery {
    /// SACK (RFC 2018) and SACK-based loss recovery (RFC 6675).
    pub sack: bool,
    /// Limited transmit (RFC 3042): a new segment on each of the first two dupacks.
    pub limited_transmit: bool,
    /// Early retransmit (RFC 5827): with fewer than 4 segments outstanding and nothing
    /// new to send, the dupack threshold is one less than the segments outstanding.
    pub early_retransmit: bool,
    /// Tail loss probe: one probe segment 2·SRTT after the last ACK.
    pub tlp: bool,
    /// TCP Instant Recovery: an XOR-coded packet per block of new segments.
    pub tcp_ir: bool,
    /// Proactive: every data segment sent twice.
    pub proactive: bool,
    /// Slow start after idle (RFC 5681 §4.1): cwnd back to the initial window after
    /// an idle period longer than the RTO.
    pub idle_restart: bool,
    /// Set FIN on the last data segment instead of sending it alone (as a sender does
    /// when the application closes before the last segment leaves).
    pub fin_with_data: bool,
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
    pub recovery: LossRecovery,
    /// With `recovery.sack`: RACK's detection of lost retransmissions (RFC 8985 §6.2, as
    /// Linux while no reordering is seen): in recovery, a retransmission is lost once a
    /// segment sent after it has been delivered, and is sent again without a timeout.
    /// (Not in `LossRecovery`, whose copy in the sender sits on its hot lines: this is
    /// read in recovery only.)
    pub lost_retransmit: bool,
    /// Pace the sender at the rate its controller sets (a next-send time gate).
    pub pacing: bool,
    /// How the hosts' timers work.
    pub timers: HostTimers,
    /// pFabric's probe mode: after this many consecutive timeouts, each timeout resends
    /// one byte of the first unacknowledged segment instead of the segment, until an ACK
    /// moves (0: never).
    pub probe_after_timeouts: u32,
}

/// The hosts' timers: exact (RFC 6298's RTO, loss probes at 2·SRTT, at any instant), or
/// as Linux runs them (`linux.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HostTimers {
    #[default]
    Exact,
    /// Linux's RTO estimator, timers in jiffies of 1/`hz` s, Linux's loss-probe timeout,
    /// and quick-ACK mode at the receiver's start.
    Linux { hz: u32 },
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
            recovery: LossRecovery::default(),
            lost_retransmit: false,
            pacing: false,
            timers: HostTimers::Exact,
            probe_after_timeouts: 0,
        }
    }
}
