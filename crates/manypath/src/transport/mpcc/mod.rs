//! Coupled multipath congestion control, one algorithm per file.
//!
//! A multipath connection's subflows are TCP senders; each keeps its own loss recovery
//! and its own response to ECN and loss (the `Coupled` controller below). What couples
//! them is the window increase: before an ACK reaches subflow `i`, the connection asks
//! its `Coupling` for the increase per acknowledged byte, computed from every
//! subflow's window and RTT, and stores it in the subflow's controller.

pub mod amp;
pub mod dcm;
pub mod lia;
pub mod olia;
pub mod xmp;

use super::cc::{
    halve_ssthresh, reno_increase, AckEvent, CongestionControl, MarkedFraction, OncePerWindow,
    Window,
};

/// What the coupling sees of one subflow.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SubflowView {
    /// Congestion window in bytes.
    pub cwnd: f64,
    /// Smoothed RTT in seconds (a positive guess before the first sample).
    pub rtt: f64,
    /// The subflow takes part in the connection (established and not suppressed).
    pub active: bool,
    /// Bytes carried between losses (OLIA's ℓ): the larger of those since the last loss
    /// and those between the last two.
    pub ell: f64,
    /// cwnd / rtt and cwnd / rtt², computed with the view so that an ACK's coupling
    /// divides only for the subflows that changed.
    pub w_rtt: f64,
    pub w_rtt2: f64,
}

impl SubflowView {
    pub fn new(cwnd: f64, rtt: f64, active: bool, ell: f64) -> SubflowView {
        SubflowView {
            cwnd,
            rtt,
            active,
            ell,
            w_rtt: cwnd / rtt,
            w_rtt2: cwnd / (rtt * rtt),
        }
    }
}

/// How a subflow reacts to an ECN echo, once per window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum EcnResponse {
    /// Halve, as TCP with classic ECN.
    Halve,
    /// DCTCP: cwnd·(1 − α/2), α from the marked fraction (DCM).
    Dctcp { g: f64 },
    /// Cut by 1/β (XMP, AMP).
    Beta { beta: f64 },
}

/// The per-subflow controller of a coupled connection. Laid out by hand (`repr(C)`):
/// what every ACK reads and writes comes first (the increase, the loss counters, the ECN
/// state and response), so that inside the sender it spans the line that ends the
/// sender's hot fields and the next, which also holds the `Cc` enum's tag (a niche in
/// `response`); the `layout` test checks the order.
#[derive(Clone, Debug)]
#[repr(C)]
pub struct Coupled {
    /// Congestion-avoidance increase per acknowledged byte, set by the connection before
    /// each ACK.
    pub increase: f64,
    /// Bytes acknowledged since the last loss, and between the last two (OLIA).
    pub since_loss: u64,
    ecn: OncePerWindow,
    pub response: EcnResponse,
    /// Set when the last ACK carried an ECN echo (read by AMP's release rule).
    pub last_ece: bool,
    /// DCTCP's marked fraction, for `EcnResponse::Dctcp`.
    pub marked: MarkedFraction,
    /// Loss (and ECN) floor in bytes: AMP keeps cwnd_min, the others two segments.
    pub loss_floor: f64,
    pub between_losses: u64,
}

impl Coupled {
    pub fn new(response: EcnResponse, loss_floor: f64) -> Coupled {
        Coupled {
            response,
            increase: 0.0,
            loss_floor,
            marked: MarkedFraction::new(
                match response {
                    EcnResponse::Dctcp { g } => g,
                    EcnResponse::Halve | EcnResponse::Beta { .. } => 1.0 / 16.0,
                },
                1.0,
            ),
            ecn: OncePerWindow::default(),
            last_ece: false,
            since_loss: 0,
            between_losses: 0,
        }
    }
}

impl Coupled {
    fn on_loss(&mut self) {
        self.between_losses = self.since_loss;
        self.since_loss = 0;
    }
}

impl CongestionControl for Coupled {
    fn on_ack(&mut self, w: &mut Window, ev: &AckEvent) {
        self.last_ece = ev.ece;
        self.since_loss += ev.acked;
        if let EcnResponse::Dctcp { .. } = self.response {
            self.marked.on_ack(ev);
        }
        if ev.in_recovery {
            return;
        }
        if self.ecn.fire(ev.ece, ev.snd_una, ev.snd_nxt) {
            let cut = match self.response {
                EcnResponse::Halve => w.cwnd / 2.0,
                EcnResponse::Dctcp { .. } => w.cwnd * (1.0 - self.marked.alpha / 2.0),
                EcnResponse::Beta { beta } => w.cwnd * (1.0 - 1.0 / beta),
            };
            w.cwnd = cut.max(ev.cwnd_min).max(ev.mss);
            w.ssthresh = w.cwnd;
            return;
        }
        if w.cwnd < w.ssthresh {
            reno_increase(w, ev);
        } else if ev.cwnd_limited {
            // OLIA's increase can be negative (moving window off a path).
            w.cwnd = (w.cwnd + self.increase * ev.acked as f64).max(ev.mss);
        }
    }

    fn on_fast_retransmit(&mut self, w: &mut Window, flight: u64, mss: f64) {
        self.on_loss();
        halve_ssthresh(w, flight, mss);
        w.ssthresh = w.ssthresh.max(self.loss_floor);
    }

    fn on_timeout(&mut self, w: &mut Window, flight: u64, mss: f64) {
        self.on_loss();
        halve_ssthresh(w, flight, mss);
        w.ssthresh = w.ssthresh.max(self.loss_floor);
    }

    /// OLIA's ℓ: bytes carried between losses.
    fn ell(&self) -> f64 {
        self.since_loss.max(self.between_losses) as f64
    }
}

/// The coupling of a connection's subflows.
#[derive(Clone, Debug)]
pub enum Coupling {
    /// Independent subflows (their own Reno or DCTCP): no coupling.
    Uncoupled,
    Lia,
    Olia,
    Dcm,
    Xmp,
    Amp(amp::Ssr),
}

impl Coupling {
    /// Congestion-avoidance increase of subflow `i` per acknowledged byte.
    pub fn increase(&self, i: usize, subs: &[SubflowView], mss: f64) -> f64 {
        match self {
            Coupling::Uncoupled => mss / subs[i].cwnd,
            Coupling::Lia | Coupling::Dcm => lia::increase(i, subs, mss),
            Coupling::Olia => olia::increase(i, subs, mss),
            Coupling::Xmp => xmp::increase(i, subs, mss),
            Coupling::Amp(_) => amp::increase(i, subs, mss),
        }
    }

    /// AMP's suppression and release episodes (none for the other couplings).
    pub fn ssr_episodes(&self) -> (u32, u32) {
        match self {
            Coupling::Amp(ssr) => (ssr.suppressions, ssr.releases),
            Coupling::Uncoupled
            | Coupling::Lia
            | Coupling::Olia
            | Coupling::Dcm
            | Coupling::Xmp => (0, 0),
        }
    }
}

/// Sum of the active subflows' windows.
pub fn total_window(subs: &[SubflowView]) -> f64 {
    subs.iter().filter(|s| s.active).map(|s| s.cwnd).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout() {
        use std::mem::offset_of;
        assert_eq!(offset_of!(Coupled, increase), 0);
        assert!(offset_of!(Coupled, since_loss) < offset_of!(Coupled, response));
        assert!(offset_of!(Coupled, response) < offset_of!(Coupled, last_ece));
        assert!(offset_of!(Coupled, last_ece) < offset_of!(Coupled, marked));
    }

    pub fn views(cw: &[(f64, f64)]) -> Vec<SubflowView> {
        cw.iter()
            .map(|&(cwnd, rtt)| SubflowView::new(cwnd, rtt, true, 0.0))
            .collect()
    }

    #[test]
    fn coupled_increase_is_at_most_one_mss_per_rtt_in_total() {
        // Equal RTTs: AMP adds one MSS per RTT across the connection; LIA a times that,
        // a = w_total·w_max / w_total² = w_max / w_total (here 1/2).
        let subs = views(&[(10_000.0, 1e-4), (20_000.0, 1e-4), (30_000.0, 1e-4)]);
        let per_rtt = |c: &Coupling| -> f64 {
            (0..3)
                .map(|i| c.increase(i, &subs, 1000.0) * subs[i].cwnd)
                .sum()
        };
        assert!((per_rtt(&Coupling::Amp(amp::Ssr::new(2, 8))) - 1000.0).abs() < 1e-9);
        assert!((per_rtt(&Coupling::Lia) - 500.0).abs() < 1e-9);
        let per_rtt: f64 = (0..3)
            .map(|i| Coupling::Uncoupled.increase(i, &subs, 1000.0) * subs[i].cwnd)
            .sum();
        assert!(
            (per_rtt - 3000.0).abs() < 1e-9,
            "uncoupled: one MSS per subflow"
        );
    }
}
