//! The receiving side of a multipath connection: one TCP receiver per subflow (each
//! acknowledges its own sequence space) and the connection-level reassembly of the data
//! sequence space, which accepts data from any subflow. Every ACK carries the data-level
//! cumulative ACK and the connection's receive window.

use crate::time::SimTime;
use crate::transport::tcp::{Reassembly, Segment, TcpConfig, TcpReceiver};

#[derive(Clone, Debug)]
pub struct MptcpReceiver {
    cfg: TcpConfig,
    subs: Vec<TcpReceiver>,
    data: Reassembly,
}

impl MptcpReceiver {
    pub fn new(cfg: TcpConfig, subflows: usize) -> MptcpReceiver {
        MptcpReceiver {
            cfg,
            subs: (0..subflows).map(|_| TcpReceiver::new(cfg)).collect(),
            data: Reassembly::default(),
        }
    }

    /// In-order data bytes received at the connection level.
    pub fn bytes_received(&self) -> u64 {
        self.data.next
    }

    pub fn on_segment(&mut self, now: SimTime, sub: usize, seg: &Segment) {
        self.subs[sub].on_segment(now, seg);
        if seg.len > 0 {
            self.data.accept(seg.dsn, seg.dsn + seg.len as u64);
        }
    }

    pub fn on_timer(&mut self, now: SimTime) {
        for s in &mut self.subs {
            s.on_timer(now);
        }
    }

    pub fn timer_deadline(&self) -> Option<SimTime> {
        self.subs.iter().filter_map(|s| s.timer_deadline()).min()
    }

    pub fn poll_transmit(&mut self, now: SimTime) -> Option<(usize, Segment)> {
        let window = (self.cfg.rcv_wnd as u64).saturating_sub(self.data.held()) as u32;
        for (i, s) in self.subs.iter_mut().enumerate() {
            if let Some(mut seg) = s.poll_transmit(now) {
                seg.data_ack = self.data.next;
                seg.rwnd = seg.rwnd.min(window);
                return Some((i, seg));
            }
        }
        None
    }
}
