//! In-band network telemetry (INT) as HPCC uses it (Li et al., SIGCOMM 2019, §3.2): every
//! switch egress port a data packet leaves stamps one record on it; the receiver echoes
//! the records in its ACK, and the sender's rate controller reads them.
//!
//! The records live beside the packet arena (`PacketArena::int`), written only for
//! packets whose descriptor has the `INT` bit of its class byte, so packets of other
//! transports never touch them. On the wire HPCC's INT header has a fixed size (room
//! for `MAX_INT_HOPS` records whether used or not), which the transport adds to its
//! packets' header bytes.

use crate::time::SimTime;

/// The most records a packet carries: hops beyond this many are not stamped. Five, as
/// HPCC's INT header has room for: a three-tier fat tree's longest path leaves five switch
/// ports (edge, aggregation, core, aggregation, edge).
pub const MAX_INT_HOPS: usize = 5;

/// One switch egress port's record, stamped on a data packet as it starts onto the port's
/// link.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntHop {
    /// The port's queue length in bytes when the packet left it.
    pub qlen_bytes: u64,
    /// Bytes the port had transmitted in total (a running counter) when the packet left.
    pub tx_bytes: u64,
    /// When the packet left the port.
    pub ts: SimTime,
    /// The port's link rate, bits/s.
    pub rate_bps: u64,
}

/// The records one packet carries, first hop first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntStack {
    pub n: u8,
    pub hops: [IntHop; MAX_INT_HOPS],
}

impl IntStack {
    /// Adds a hop's record; a packet that already carries `MAX_INT_HOPS` keeps them.
    #[inline]
    pub fn push(&mut self, hop: IntHop) {
        if (self.n as usize) < MAX_INT_HOPS {
            self.hops[self.n as usize] = hop;
            self.n += 1;
        }
    }

    pub fn hops(&self) -> &[IntHop] {
        &self.hops[..self.n as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stack_keeps_its_first_records_in_order() {
        let mut s = IntStack::default();
        for i in 0..(MAX_INT_HOPS as u64 + 2) {
            s.push(IntHop {
                qlen_bytes: i,
                ..IntHop::default()
            });
        }
        assert_eq!(s.hops().len(), MAX_INT_HOPS);
        let q: Vec<u64> = s.hops().iter().map(|h| h.qlen_bytes).collect();
        assert_eq!(q, (0..MAX_INT_HOPS as u64).collect::<Vec<_>>());
    }
}
