//! TCP Reno/NewReno window control (RFC 5681), with the classic ECN response (RFC 3168):
//! on an ECN echo, halve once per window.

use super::{reno_increase, AckEvent, CongestionControl, OncePerWindow, Window};

#[derive(Clone, Debug, Default)]
pub struct Reno {
    ecn: OncePerWindow,
}

impl CongestionControl for Reno {
    fn on_ack(&mut self, w: &mut Window, ev: &AckEvent) {
        if ev.in_recovery {
            return;
        }
        if self.ecn.fire(ev.ece, ev.snd_una, ev.snd_nxt) {
            w.ssthresh = (w.cwnd / 2.0).max(ev.cwnd_min).max(ev.mss);
            w.cwnd = w.ssthresh;
            return;
        }
        reno_increase(w, ev);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::transport::cc::test_ack as ev;

    #[test]
    fn slow_start_then_linear() {
        let mut r = Reno::default();
        let mut w = Window {
            cwnd: 1000.0,
            ssthresh: 4000.0,
        };
        for _ in 0..3 {
            r.on_ack(&mut w, &ev(1000, false, 0, 0));
        }
        assert_eq!(w.cwnd, 4000.0);
        r.on_ack(&mut w, &ev(1000, false, 0, 0));
        assert_eq!(w.cwnd, 4250.0);
    }

    #[test]
    fn ecn_halves_once_per_window() {
        let mut r = Reno::default();
        let mut w = Window {
            cwnd: 10000.0,
            ssthresh: 1e9,
        };
        r.on_ack(&mut w, &ev(1000, true, 1000, 10000));
        assert_eq!(w.cwnd, 5000.0);
        r.on_ack(&mut w, &ev(1000, true, 2000, 10000));
        assert!(
            w.cwnd > 5000.0 && w.cwnd < 5300.0,
            "no second cut in the same window"
        );
        r.on_ack(&mut w, &ev(1000, true, 10000, 15000));
        assert!(w.cwnd < 3000.0);
    }
}
