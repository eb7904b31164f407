//! DCTCP (Alizadeh et al., SIGCOMM 2010; RFC 8257), as the AMP document's eq. 2 states it:
//! α ← (1−g)·α + g·F once per window of data, where F is the fraction of bytes acknowledged
//! with an ECN echo in that window; on the first echo of a window, cwnd ← cwnd·(1−α/2),
//! never below cwnd_min. Loss is handled as in Reno (RFC 8257 §3.5).

use super::{reno_increase, AckEvent, CongestionControl, OncePerWindow, Window};

/// DCTCP's estimate α of the fraction of marked bytes, updated once per window of data
/// (also used by DCM's subflows).
#[derive(Clone, Debug)]
pub struct MarkedFraction {
    /// EWMA weight g (1/16 in the documents).
    pub g: f64,
    pub alpha: f64,
    acked: u64,
    acked_marked: u64,
    window_end: u64,
}

impl MarkedFraction {
    pub fn new(g: f64, alpha_init: f64) -> MarkedFraction {
        MarkedFraction {
            g,
            alpha: alpha_init,
            acked: 0,
            acked_marked: 0,
            window_end: 0,
        }
    }

    /// Counts an ACK's bytes; at the end of a window, folds them into α.
    #[inline]
    pub fn on_ack(&mut self, ev: &AckEvent) {
        self.acked += ev.acked;
        if ev.ece {
            self.acked_marked += ev.acked;
        }
        if ev.snd_una >= self.window_end && self.acked > 0 {
            let f = self.acked_marked as f64 / self.acked as f64;
            self.alpha = (1.0 - self.g) * self.alpha + self.g * f;
            self.acked = 0;
            self.acked_marked = 0;
            self.window_end = ev.snd_nxt;
        }
    }
}

#[derive(Clone, Debug)]
pub struct Dctcp {
    pub marked: MarkedFraction,
    ecn: OncePerWindow,
}

impl Dctcp {
    pub fn new(g: f64, alpha_init: f64) -> Dctcp {
        Dctcp {
            marked: MarkedFraction::new(g, alpha_init),
            ecn: OncePerWindow::default(),
        }
    }

    /// The current estimate of the marked fraction.
    pub fn alpha(&self) -> f64 {
        self.marked.alpha
    }
}

impl CongestionControl for Dctcp {
    fn on_ack(&mut self, w: &mut Window, ev: &AckEvent) {
        self.marked.on_ack(ev);
        if ev.in_recovery {
            return;
        }
        if self.ecn.fire(ev.ece, ev.snd_una, ev.snd_nxt) {
            w.cwnd = (w.cwnd * (1.0 - self.marked.alpha / 2.0)).max(ev.cwnd_min);
            w.ssthresh = w.cwnd;
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
    fn alpha_tracks_marked_fraction() {
        let mut d = Dctcp::new(1.0 / 16.0, 0.0);
        let mut w = Window {
            cwnd: 10000.0,
            ssthresh: 1e9,
        };
        // Many windows with a quarter of the bytes marked: α converges to 0.25.
        let mut una = 0;
        for _ in 0..400 {
            for i in 0..4 {
                una += 1000;
                d.on_ack(&mut w, &ev(1000, i == 0, una, una + 3000));
            }
        }
        assert!((d.alpha() - 0.25).abs() < 0.02, "alpha {}", d.alpha());
    }

    #[test]
    fn cut_is_proportional_and_floored() {
        let mut d = Dctcp::new(1.0 / 16.0, 0.5);
        let mut w = Window {
            cwnd: 10000.0,
            ssthresh: 1e9,
        };
        d.on_ack(&mut w, &ev(0, true, 0, 10000));
        assert!((w.cwnd - 10000.0 * (1.0 - d.alpha() / 2.0)).abs() < 1e-6);
        let mut d = Dctcp::new(1.0 / 16.0, 1.0);
        let mut w = Window {
            cwnd: 2500.0,
            ssthresh: 1e9,
        };
        d.on_ack(&mut w, &ev(0, true, 0, 10000));
        assert_eq!(w.cwnd, 2000.0);
    }
}
