//! NDP (Handley et al., "Re-architecting datacenter networks and stacks for low latency
//! and high performance", SIGCOMM 2017) as sans-IO state machines: the sender
//! ([`NdpSender`]), the receiver ([`NdpReceiver`]) and the pull pacer of a receiving
//! host's NIC ([`PullPacer`]), which the simulator shares among every NDP flow to that
//! host.
//!
//! The sender has no handshake: it sends a first window (one BDP by default) at line
//! rate, then one packet per PULL the receiver sends, retransmissions of NACKed packets
//! first; a retransmission timeout is the backstop for packets that vanish (a header
//! dropped at a full header queue, a lost PULL). The receiver ACKs every data packet,
//! NACKs every trimmed header (`flags::TRIMMED`, which the simulator sets on delivery),
//! and asks its host's pacer for one PULL per arrival; the pacer sends PULLs at the NIC's
//! rate, one per full data packet's serialisation time, across all its flows. A PULL the
//! pacer grants as it is asked for (nothing queued, a full packet's time since its last)
//! rides on the ACK or NACK that asked for it (htsim's pull bit); the others are PULL
//! packets. A header a full header queue sent back to its sender (`flags::RETURNED`) is
//! a NACK too.
//!
//! Packets are `Segment`s: data carries its first byte in `seq`, its payload in `len`
//! and the flow's size so far in `ack` (so the receiver knows when it has everything and
//! stops pulling); ACK and NACK name the data packet by its `seq`; a PULL (or an ACK or
//! NACK carrying one) carries the receiver's cumulative pull count in `ack`, so a lost
//! PULL is made up by the next. A NACK without a PULL carries in `ack` the count of the
//! PULL that will come for it: ACKs, NACKs and PULLs are sprayed each on its own path,
//! so that PULL may arrive first and find nothing to send, and the NACK then gets it
//! back (htsim's NDP leaves such a packet to its timeout).

pub mod pacer;
pub mod pair;
pub mod receiver;
pub mod sender;

pub use pacer::PullPacer;
pub use pair::NdpPair;
pub use receiver::NdpReceiver;
pub use sender::{NdpSender, NdpStats};

use crate::net::trim::HEADER_WIRE;
use crate::time::{SimTime, PS_PER_US};

/// What an NDP packet is. ACK, NACK and PULL are on the wire; `TRIMMED` and `RETURNED`
/// are set by the simulator on delivery only (what the switches did to a data packet),
/// so they take TCP bits no NDP packet carries.
pub mod flags {
    use crate::net::packet::flags as tcp;
    pub const ACK: u8 = tcp::ACK;
    pub const NACK: u8 = tcp::CWR;
    pub const PULL: u8 = tcp::ECE;
    /// A data packet that arrives cut to its header.
    pub const TRIMMED: u8 = tcp::RST;
    /// A trimmed header a switch's full header queue sent back to its sender.
    pub const RETURNED: u8 = tcp::SYN;
}

/// NDP's header on the wire (the paper's 64 bytes), which its control packets and
/// trimmed data packets are.
pub const HEADER_BYTES: u32 = HEADER_WIRE as u32;
/// A data packet on the wire: 9000 bytes (the paper's and htsim's jumbo frames).
pub const DEFAULT_PACKET_BYTES: u32 = 9000;
/// Payload bytes of a full data packet.
pub const DEFAULT_PAYLOAD: u32 = DEFAULT_PACKET_BYTES - HEADER_BYTES;
/// Retransmission timeout, the backstop for packets neither ACKed nor NACKed and for
/// PULLs that do not come: 5 ms, htsim's minimum RTO for NDP (`DEFAULT_RTO_MIN`; its
/// source starts at 20 ms and adapts to SRTT + 4·RTTVAR above that floor). It must
/// exceed the time a flow waits for its turn at a busy pull pacer: with n flows into one
/// host, a PULL every n full-packet times (1.08 ms for 150 flows of 9000-byte packets at
/// 10 Gb/s).
pub const DEFAULT_RTO: SimTime = 5000 * PS_PER_US;

/// An NDP connection's settings (both ends).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NdpConfig {
    /// Payload bytes of a full data packet.
    pub payload: u32,
    /// Header bytes on the wire.
    pub header: u32,
    /// Packets the sender sends before its first PULL.
    pub window_packets: u32,
    pub rto: SimTime,
}

impl NdpConfig {
    /// The first window: one BDP (`line_bps` × `base_rtt`) in full packets, at least
    /// one, or `window_bytes` if set.
    pub fn new(
        payload: u32,
        rto: SimTime,
        window_bytes: Option<u64>,
        line_bps: f64,
        base_rtt: SimTime,
    ) -> NdpConfig {
        let packet = (payload + HEADER_BYTES) as f64;
        let bytes = window_bytes
            .map(|b| b as f64)
            .unwrap_or(line_bps / 8.0 * base_rtt as f64 / 1e12);
        NdpConfig {
            payload,
            header: HEADER_BYTES,
            window_packets: (bytes / packet).ceil().max(1.0) as u32,
            rto,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One BDP of 10 Gb/s × 12 µs is 15,000 bytes: two 9000-byte packets.
    #[test]
    fn the_first_window_is_one_bdp_in_packets() {
        let c = NdpConfig::new(DEFAULT_PAYLOAD, DEFAULT_RTO, None, 10e9, 12 * PS_PER_US);
        assert_eq!(c.window_packets, 2);
        let c = NdpConfig::new(DEFAULT_PAYLOAD, DEFAULT_RTO, Some(90_000), 10e9, 1);
        assert_eq!(c.window_packets, 10);
        let c = NdpConfig::new(DEFAULT_PAYLOAD, DEFAULT_RTO, None, 10e9, 0);
        assert_eq!(c.window_packets, 1);
    }
}
