//! What the simulator asks of a connection's two endpoints, whatever the transport: the
//! small trait every protocol's pair implements in its own folder (`tcp::TcpPair`,
//! `mptcp::MptcpPair`, `roce::RocePair`, `ndp::NdpPair`, `homa::HomaMessage`). Endpoint 0
//! is the client (data sender), 1 the server (receiver). What only one protocol does
//! (NDP's pulls, HPCC's INT records) is that protocol's own method, reached through
//! `connection::Endpoints`' accessors, not part of this trait.

use crate::metrics::RecoveryCounters;
use crate::time::SimTime;
use crate::transport::mptcp::sender::MptcpCounters;
use crate::transport::tcp::{Segment, SenderStats, TcpSender};

/// A connection's two endpoints, as sans-IO state machines.
pub trait Pair {
    /// The client starts: it opens its connection (or, persistent, waits for `offer`).
    fn open(&mut self);
    /// A persistent connection: it opens without data and is handed messages by `offer`.
    fn make_idle(&mut self);
    /// The application hands the client `bytes` more data to send.
    fn offer(&mut self, bytes: u64);
    /// Data bytes acknowledged (at the data level for multipath).
    fn data_acked(&self) -> u64;
    /// Data bytes the server has received in order (at the data level for multipath):
    /// what it has delivered to its application.
    fn data_received(&self) -> u64;
    /// When every data byte was acknowledged.
    fn finish(&self) -> Option<SimTime>;

    /// Handles a segment for endpoint `ep` on subflow `sub`.
    fn on_segment(&mut self, now: SimTime, ep: usize, sub: usize, seg: &Segment);
    /// The next segment endpoint `ep` sends, with its subflow.
    fn poll_transmit(&mut self, now: SimTime, ep: usize) -> Option<(usize, Segment)>;
    fn on_timer(&mut self, now: SimTime, ep: usize);
    fn timer_deadline(&self, ep: usize) -> Option<SimTime>;

    /// Swaps the server endpoints of two copies of one connection (a run over several
    /// threads gathers each endpoint from the partition that ran it).
    fn swap_server(&mut self, other: &mut Self);

    /// The flow's counters in TCP's terms (summed over subflows; bytes acknowledged at
    /// the data level).
    fn stats(&self) -> SenderStats;
    /// The loss-recovery counters of the flow.
    fn recovery_counters(&self) -> RecoveryCounters;
    /// What the server endpoint counts of the loss-recovery counters (the receiver's
    /// own); the rest are the client's.
    fn server_counters(&self) -> ServerCounters;

    /// The paths the connection uses at once (subflows).
    fn subflows(&self) -> usize {
        1
    }
    /// Each subflow's own counters.
    fn subflow_stats(&self) -> Vec<SenderStats> {
        vec![self.stats()]
    }
    /// Each subflow's TCP sender, in order (none for transports that are not TCP).
    fn senders(&self) -> &[TcpSender] {
        &[]
    }
    /// The multipath sender's connection-level counters (zero for one path).
    fn mptcp_counters(&self) -> MptcpCounters {
        MptcpCounters::default()
    }
    /// AMP's suppression and release episodes (none without a coupling that has them).
    fn ssr_episodes(&self) -> (u32, u32) {
        (0, 0)
    }
}

/// `Pair`'s calls that go to the client (endpoint 0) or to the server alike, for pairs
/// whose two state machines have the same methods: `timers` (`on_timer(now)`,
/// `timer_deadline()`), single-path `segments` (`on_segment(now, seg)`), `stream` (a
/// client with `open`, `make_idle` and `offer`) and `swap` (the server swapped whole).
macro_rules! to_endpoint {
    (stream) => {
        fn open(&mut self) {
            self.client.open()
        }

        fn make_idle(&mut self) {
            self.client.make_idle()
        }

        fn offer(&mut self, bytes: u64) {
            self.client.offer(bytes)
        }
    };
    (swap) => {
        fn swap_server(&mut self, other: &mut Self) {
            std::mem::swap(&mut self.server, &mut other.server)
        }
    };
    (timers) => {
        fn on_timer(&mut self, now: SimTime, ep: usize) {
            if ep == 0 {
                self.client.on_timer(now)
            } else {
                self.server.on_timer(now)
            }
        }

        #[inline]
        fn timer_deadline(&self, ep: usize) -> Option<SimTime> {
            if ep == 0 {
                self.client.timer_deadline()
            } else {
                self.server.timer_deadline()
            }
        }
    };
    (segments) => {
        #[inline]
        fn on_segment(&mut self, now: SimTime, ep: usize, _sub: usize, seg: &Segment) {
            if ep == 0 {
                self.client.on_segment(now, seg)
            } else {
                self.server.on_segment(now, seg)
            }
        }
    };
}
pub(crate) use to_endpoint;

/// The loss-recovery counters a connection's server endpoint keeps (`recovery_counters`
/// takes them from there).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServerCounters {
    pub ir_recovered: u32,
    pub trimmed: u32,
}

impl ServerCounters {
    /// `self − base`.
    pub fn since(&self, base: &ServerCounters) -> ServerCounters {
        ServerCounters {
            ir_recovered: self.ir_recovered - base.ir_recovered,
            trimmed: self.trimmed - base.trimmed,
        }
    }

    /// Puts these in `r` in place of what it has.
    pub fn set_in(&self, r: &mut RecoveryCounters) {
        r.ir_recovered = self.ir_recovered;
        r.trimmed = self.trimmed;
    }
}
