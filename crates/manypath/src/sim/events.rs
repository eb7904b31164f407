//! The simulator's kinds of events and its event queue, whose events carry a packet's
//! descriptor (the engine orders them by time, then by their kinds' codes and operands:
//! `engine::queue`).

use crate::engine::queue::{self, Kind, CARRIES_PACKET};
use crate::net::packet::Desc;

/// The event queue of a run.
pub type EventQueue = queue::EventQueue<Desc>;
/// One of its events.
pub type Event = queue::Event<Desc>;

/// An event is 32 bytes: two to a cache line.
const _: () = assert!(std::mem::size_of::<Event>() == 32);

/// What an event does; `a` and `b` are its operands (a node, port, packet or connection).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// Packet `b` arrives at node `a`.
    Arrive,
    /// Port `a` finished serialising a packet and has more queued.
    TxDone,
    /// Flow `a` starts: its connection opens, or its bytes go to its persistent one.
    FlowStart,
    /// Timer of connection `a`, endpoint `b` (0 client, 1 server).
    Timer,
    /// Snapshot of per-flow counters at the end of the warm-up.
    Warmup,
    /// Periodic sampling of queues.
    Sample,
    /// RWNDQ window-update timer of port `a`.
    RwndqTick,
    /// Scheduled link change `a` (down, up, or routing catching up with either).
    LinkChange,
    /// Persistent connection `a` opens.
    ConnOpen,
    /// A PFC frame reaches port `a`: class `b & 1`, PAUSE if `b & 2`, else RESUME.
    Pause,
    /// The periodic PFC deadlock check.
    PfcCheck,
    /// The NDP pull pacer of host `a` may send a PULL.
    NdpPull,
    /// Host `a` has processed a received data packet (its descriptor in the event):
    /// Swift's host delay (`sim::host_rx`).
    HostRx,
}

/// `HostRx`'s code: it carries the packet's descriptor.
const HOST_RX: u32 = 12 | CARRIES_PACKET;

impl Kind for EventKind {
    const ARRIVAL: EventKind = EventKind::Arrive;

    /// The order in which kinds run at one time: arrivals, then as listed.
    #[inline]
    fn code(self) -> u32 {
        match self {
            EventKind::Arrive => 0,
            EventKind::TxDone => 1,
            EventKind::FlowStart => 2,
            EventKind::Timer => 3,
            EventKind::Warmup => 4,
            EventKind::Sample => 5,
            EventKind::RwndqTick => 6,
            EventKind::LinkChange => 7,
            EventKind::ConnOpen => 8,
            EventKind::Pause => 9,
            EventKind::PfcCheck => 10,
            EventKind::NdpPull => 11,
            EventKind::HostRx => HOST_RX,
        }
    }

    #[inline]
    fn of_code(c: u32) -> EventKind {
        match c {
            1 => EventKind::TxDone,
            2 => EventKind::FlowStart,
            3 => EventKind::Timer,
            4 => EventKind::Warmup,
            5 => EventKind::Sample,
            6 => EventKind::RwndqTick,
            7 => EventKind::LinkChange,
            8 => EventKind::ConnOpen,
            9 => EventKind::Pause,
            10 => EventKind::PfcCheck,
            11 => EventKind::NdpPull,
            HOST_RX => EventKind::HostRx,
            // An arrival's incoming port, less the engine's tag base.
            _ => EventKind::Arrive,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_operands_round_trip() {
        use EventKind::*;
        let kinds = [
            TxDone, FlowStart, Timer, Warmup, Sample, RwndqTick, LinkChange, ConnOpen, Pause,
            PfcCheck, NdpPull, HostRx,
        ];
        let mut q = EventQueue::new();
        for (t, &k) in kinds.iter().enumerate() {
            q.schedule(t as u64, k, 7, 9);
        }
        q.schedule_arrival(100, 3, 5, Desc::default());
        for &k in &kinds {
            let e = q.pop().unwrap();
            assert_eq!((e.kind::<EventKind>(), e.a, e.b()), (k, 7, 9));
        }
        let e = q.pop().unwrap();
        assert_eq!((e.kind::<EventKind>(), e.via()), (Arrive, 5));
    }
}
