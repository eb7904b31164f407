//! What an output queue did with an arriving packet, as every discipline reports it:
//! drop-tail FIFOs and strict priority (`net::queue`), NDP's trimming queue
//! (`net::trim`) and pFabric's (`net::pfabric`). One result, so the engine settles every
//! arrival in one place (`Sim::settle_admission`): the observers hear of it, dropped
//! packets are counted and freed, returned headers go back, and a packet that waits
//! gets its port's `TxDone`.

use super::packet::Desc;

/// What became of a packet at a queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Waits in the queue: its FIFO (its priority level's), a trimming queue's data
    /// queue, or pFabric's buffer.
    Queued,
    /// Waits in a trimming queue's header queue (a control packet, or a trimmed data
    /// packet).
    Header,
    /// Dropped: a drop-tail limit, RED's early drop, a full header queue, or the least
    /// urgent packet of a full pFabric queue.
    Dropped,
    /// A trimmed header that found the header queue full, to be sent back to its source
    /// (NDP's return to sender).
    Returned,
}

impl Fate {
    /// The packet waits in the queue.
    #[inline]
    pub fn waits(self) -> bool {
        match self {
            Fate::Queued | Fate::Header => true,
            Fate::Dropped | Fate::Returned => false,
        }
    }
}

/// The outcome of one arrival: the arriving packet as it now is (marked CE, trimmed to
/// its header) and what became of it, and a packet that waited and was trimmed or
/// dropped to make room for it, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Admission {
    pub arriving: (Desc, Fate),
    pub evicted: Option<(Desc, Fate)>,
    /// The evicted packet's wire bytes while it waited (0: none evicted).
    pub evicted_wire: u16,
}

impl Admission {
    /// The arrival alone was decided on: nothing that waited changed.
    #[inline]
    pub fn of(d: Desc, fate: Fate) -> Admission {
        Admission {
            arriving: (d, fate),
            evicted: None,
            evicted_wire: 0,
        }
    }

    /// The arrival (queued) took the place of `evicted`, which waited as `wire` bytes
    /// and now meets `fate`.
    #[inline]
    pub fn evicting(d: Desc, evicted: (Desc, Fate), wire: u16) -> Admission {
        Admission {
            arriving: (d, Fate::Queued),
            evicted: Some(evicted),
            evicted_wire: wire,
        }
    }

    /// Something now waits that did not: the arrival or the evicted packet (trimmed,
    /// it waits as a header).
    #[inline]
    pub fn waits(&self) -> bool {
        self.arriving.1.waits() || self.evicted.is_some_and(|(_, f)| f.waits())
    }

    /// The arrival was queued and marked CE.
    pub fn marked(&self) -> bool {
        self.arriving.1 == Fate::Queued && self.arriving.0.ecn == super::packet::Ecn::Ce
    }
}
