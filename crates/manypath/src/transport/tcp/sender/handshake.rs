//! Opening the connection: the SYN, sent again on each of its timeouts (backed off as
//! the RTO is), and the SYN-ACK that establishes the connection with a first RTT
//! sample. (Closing is sending the FIN after the data, `transmit.rs`.)

use super::{SenderState, TcpSender, NO_TIMER};
use crate::net::packet::flags;
use crate::time::SimTime;
use crate::transport::tcp::Segment;

impl TcpSender {
    /// Opens the connection: the next `poll_transmit` returns the SYN.
    pub fn open(&mut self) {
        self.state = SenderState::SynSent;
        self.syn_pending = true;
    }

    /// The SYN (sent again after each of its timeouts).
    pub(super) fn syn(&mut self, now: SimTime) -> Segment {
        self.syn_pending = false;
        self.last_send = now;
        if self.rto_deadline == NO_TIMER {
            self.arm_timer(now);
        }
        Segment {
            flags: flags::SYN,
            ts: now,
            ecn: false,
            rwnd: self.rcv_wnd,
            ..Segment::default()
        }
    }

    /// The SYN-ACK: the connection is established, with a first RTT sample.
    pub(super) fn on_syn_ack(&mut self, now: SimTime, seg: &Segment) {
        self.state = SenderState::Established;
        self.rtt.sample(now.saturating_sub(seg.ts_echo));
        if self.linux {
            let rto_min = self.linux_rto_min();
            let m = now.saturating_sub(seg.ts_echo);
            self.x.linux.sample(m, 0, 0, rto_min);
        }
        self.peer_rwnd = seg.rwnd;
        self.backoff = 0;
        self.rto_deadline = NO_TIMER;
    }

    /// The SYN's retransmission timer has expired: send it again, backed off.
    pub(super) fn syn_timeout(&mut self, now: SimTime) {
        self.x.stats.timeouts += 1;
        self.x.stats.syn_timeouts += 1;
        self.backoff += 1;
        self.syn_pending = true;
        self.arm_timer(now);
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::*;
    use super::*;
    use crate::transport::cc::Reno;
    use crate::transport::protocol::Cc;

    #[test]
    fn syn_is_retransmitted() {
        let mut s = TcpSender::new(cfg(), Cc::Reno(Reno::default()), 1000);
        s.open();
        s.poll_transmit(0).unwrap();
        let d = s.timer_deadline().unwrap();
        assert_eq!(d, 10_000);
        s.on_timer(d);
        assert!(s.poll_transmit(d).unwrap().is_syn());
    }
}
