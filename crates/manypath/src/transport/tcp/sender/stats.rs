//! The sender's counters, reported in the flows table. The ones every send and ACK
//! changes (`bytes_sent`, `packets_sent`, `bytes_acked`) sit on the sender's hot lines;
//! the rest in its boxed part.

use super::TcpSender;
use crate::time::SimTime;

/// Per-connection counters reported in the flows table.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SenderStats {
    /// Payload bytes put on the wire, retransmissions included (Proactive copies and
    /// coded packets are counted apart).
    pub bytes_sent: u64,
    pub bytes_retx: u64,
    pub bytes_acked: u64,
    /// Retransmission timeouts, the SYN's included.
    pub timeouts: u32,
    /// Timeouts of the SYN (before any data could be sent).
    pub syn_timeouts: u32,
    pub fast_retx: u32,
    pub finish: Option<SimTime>,
    /// Data segments put on the wire, retransmissions included.
    pub packets_sent: u64,
    pub packets_retx: u64,
    /// `packets_sent` just after the last retransmission (0: none yet).
    pub packets_at_last_retx: u64,
    /// Tail loss probes sent.
    pub tlp_probes: u32,
    /// TCP-IR coded packets sent.
    pub ir_coded: u32,
    /// Proactive duplicate copies sent.
    pub proactive_copies: u64,
}

impl SenderStats {
    /// Data segments sent since, and including, the last retransmission (0 if none).
    pub fn packets_since_last_retx(&self) -> u64 {
        if self.packets_at_last_retx == 0 {
            0
        } else {
            self.packets_sent - self.packets_at_last_retx + 1
        }
    }
}

impl TcpSender {
    /// The flow's counters.
    pub fn stats(&self) -> SenderStats {
        SenderStats {
            bytes_sent: self.bytes_sent,
            packets_sent: self.packets_sent,
            bytes_acked: self.bytes_acked,
            ..self.x.stats
        }
    }

    /// Data bytes acknowledged.
    #[inline]
    pub fn bytes_acked(&self) -> u64 {
        self.bytes_acked
    }

    /// When every data byte was acknowledged.
    pub fn finish(&self) -> Option<SimTime> {
        self.x.stats.finish
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_since_last_retransmission() {
        let mut st = SenderStats::default();
        assert_eq!(st.packets_since_last_retx(), 0);
        st.packets_sent = 10;
        st.packets_at_last_retx = 7;
        assert_eq!(st.packets_since_last_retx(), 4);
    }
}
