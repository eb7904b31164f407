//! The receiving side of a multipath connection: one TCP receiver per subflow (each
//! acknowledges its own sequence space) and the connection-level reassembly of the data
//! sequence space, which accepts data from any subflow. Every ACK carries the data-level
//! cumulative ACK and the connection's receive window.

use super::SubflowDeadlines;
use crate::time::SimTime;
use crate::transport::tcp::{Reassembly, Segment, TcpConfig, TcpReceiver};

/// Laid out by hand (`repr(C)`, from a cache line): a delivery to the client reads the
/// first line only (no ACK to send, no timer to arm). `tests::layout` checks it.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct MptcpReceiver {
    /// Bit i: subflow i may have an ACK to send (set by its segments and the timers,
    /// cleared when polling it yields nothing or it has no ACK left), so polling skips
    /// the others.
    ready: u128,
    /// Each subflow's timer deadline (it changes only with the subflow's segments and
    /// timers), so the connection's deadline reads one small array.
    deadlines: SubflowDeadlines,
    subs: Vec<TcpReceiver>,
    data: Reassembly,
    /// The receive buffer (`TcpConfig::rcv_wnd`).
    rcv_wnd: u32,
}

impl MptcpReceiver {
    pub fn new(cfg: TcpConfig, subflows: usize) -> MptcpReceiver {
        assert!(subflows <= 128, "at most 128 subflows");
        MptcpReceiver {
            subs: (0..subflows).map(|_| TcpReceiver::new(cfg)).collect(),
            data: Reassembly::default(),
            ready: 0,
            deadlines: SubflowDeadlines::new(subflows),
            rcv_wnd: cfg.rcv_wnd,
        }
    }

    /// In-order data bytes received at the connection level.
    pub fn bytes_received(&self) -> u64 {
        self.data.next
    }

    /// Data bytes held out of order at the connection level (they take receive buffer).
    pub fn bytes_held(&self) -> u64 {
        self.data.held()
    }

    pub fn on_segment(&mut self, now: SimTime, sub: usize, seg: &Segment) {
        self.subs[sub].on_segment(now, seg);
        self.ready |= 1 << sub;
        self.deadlines.set(sub, self.subs[sub].timer_deadline());
        if seg.len > 0 {
            self.data.accept(seg.dsn, seg.dsn + seg.len as u64);
        }
    }

    pub fn on_timer(&mut self, now: SimTime) {
        for (i, s) in self.subs.iter_mut().enumerate() {
            s.on_timer(now);
            self.deadlines.set(i, s.timer_deadline());
        }
        self.ready = u128::MAX >> (128 - self.subs.len());
    }

    pub fn timer_deadline(&self) -> Option<SimTime> {
        self.deadlines.earliest()
    }

    pub fn poll_transmit(&mut self, now: SimTime) -> Option<(usize, Segment)> {
        if self.ready == 0 {
            return None;
        }
        let window = (self.rcv_wnd as u64).saturating_sub(self.data.held()) as u32;
        while self.ready != 0 {
            // Lowest index first.
            let i = self.ready.trailing_zeros() as usize;
            if let Some(mut seg) = self.subs[i].poll_transmit(now) {
                seg.data_ack = self.data.next;
                seg.rwnd = seg.rwnd.min(window);
                if !self.subs[i].has_pending() {
                    // Polling it again would yield nothing: spare the next call that.
                    self.ready &= !(1 << i);
                }
                return Some((i, seg));
            }
            self.ready &= !(1 << i);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a delivery to the client reads fills the first line.
    #[test]
    fn layout() {
        use std::mem::{align_of, offset_of, size_of};
        assert_eq!(align_of::<MptcpReceiver>(), 64);
        assert_eq!(offset_of!(MptcpReceiver, ready), 0);
        assert_eq!(
            offset_of!(MptcpReceiver, deadlines) + size_of::<SubflowDeadlines>(),
            64
        );
    }
}
