//! Swift (Kumar et al., SIGCOMM 2020), Algorithm 1 and §3: delay-based AIMD on the
//! congestion window, in packets (fractions of a packet allowed).
//!
//! Every ACK brings a delay sample. Below the target delay the window grows additively,
//! `ai` packets per RTT (`ai/cwnd` per packet acknowledged, or `ai` per packet below one
//! packet); at or above it the window shrinks by `β·(delay − target)/delay`, at most by
//! `max_mdf`, and at most once per RTT. The target is the base target, plus `h` per hop
//! of the connection's path (hop scaling), plus flow scaling: `α/√cwnd + β'`, clamped to
//! `[0, fs_range]`, with α and β' chosen so that it is `fs_range` at `fs_min_cwnd` and 0
//! at `fs_max_cwnd` — many flows with small windows get a larger target, so the queue
//! they share is shared more fairly. A retransmission timeout cuts by `max_mdf` (once per
//! RTT), and after `retx_reset` consecutive timeouts drops the window to its minimum; a
//! fast retransmit cuts by `max_mdf` (once per RTT). Below one packet the sender paces:
//! one packet per `rtt/cwnd`.
//!
//! Two windows, as the paper separates fabric and host congestion (§3.2): the **fabric
//! window** reacts to the fabric delay, the RTT less the endpoint delay, against the
//! scaled target above; the **endpoint window** reacts to the **endpoint delay** — the
//! receiving host's NIC Rx queuing and processing of the data packet, measured there and
//! echoed in the ACK — against a fixed `endpoint_target`, with its own additive increase
//! and decrease scale (the same AIMD, bounded by `max_mdf` and once per RTT). The sender's
//! window is the smaller of the two. The endpoint window runs only when the receiving
//! hosts have a processing delay (`host_delay`, the engine's `sim::host_rx`): without one
//! the endpoint delay is always 0, the endpoint window could only grow, and the fabric
//! window alone is the window.

use super::{AckEvent, CongestionControl, Window};
use crate::time::SimTime;

/// Swift's parameters (times in picoseconds, windows in packets).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SwiftParams {
    /// The base target delay, for a path of no hops.
    pub base_target: SimTime,
    /// Target added per hop of the connection's path.
    pub hop_scale: SimTime,
    /// Hops of the connection's path (links crossed one way).
    pub hops: u32,
    /// Flow scaling's range: the most it adds to the target.
    pub fs_range: SimTime,
    pub fs_min_cwnd: f64,
    pub fs_max_cwnd: f64,
    /// Additive increase, packets per RTT.
    pub ai: f64,
    /// Multiplicative decrease's scale β.
    pub beta: f64,
    /// The largest decrease at once (a fraction of the window).
    pub max_mdf: f64,
    pub min_cwnd: f64,
    pub max_cwnd: f64,
    /// Consecutive timeouts after which the window drops to `min_cwnd`.
    pub retx_reset: u32,
    /// The endpoint window's target for the endpoint delay (no hop or flow scaling:
    /// the host is one queue whatever the path).
    pub endpoint_target: SimTime,
    /// The endpoint window's additive increase (packets per RTT) and decrease scale.
    pub endpoint_ai: f64,
    pub endpoint_beta: f64,
    /// The receiving host's processing time per data packet (its NIC Rx queue is served
    /// at one packet per `host_delay`); 0: none, and no endpoint window. Read by the
    /// engine, which models the host and echoes the endpoint delay it measures.
    pub host_delay: SimTime,
}

/// The endpoint window's default target. The paper gives the structure (a separate
/// window with a fixed target for the host's delay) but not its production value; this
/// is the base fabric target's value, a choice (docs/scenarios.md).
pub const DEFAULT_ENDPOINT_TARGET: SimTime = 25 * crate::time::PS_PER_US;

impl Default for SwiftParams {
    /// The defaults (docs/scenarios.md gives where each comes from): a 25 µs base
    /// target and 1 µs per hop, flow scaling over 0.1 to 100 packets with a 125 µs
    /// range, one packet per RTT of increase, β = 0.8 bounded by a 0.5 cut, windows
    /// from 0.001 to 10,000 packets, and the minimum window after 5 timeouts in a row.
    fn default() -> Self {
        use crate::time::PS_PER_US;
        SwiftParams {
            base_target: 25 * PS_PER_US,
            hop_scale: PS_PER_US,
            hops: 0,
            fs_range: 125 * PS_PER_US,
            fs_min_cwnd: 0.1,
            fs_max_cwnd: 100.0,
            ai: 1.0,
            beta: 0.8,
            max_mdf: 0.5,
            min_cwnd: 0.001,
            max_cwnd: 10_000.0,
            retx_reset: 5,
            endpoint_target: DEFAULT_ENDPOINT_TARGET,
            endpoint_ai: 1.0,
            endpoint_beta: 0.8,
            host_delay: 0,
        }
    }
}

/// One of Swift's two windows: the AIMD of Algorithm 1 on a delay and a target.
#[derive(Clone, Copy, Debug)]
struct Aimd {
    /// The window in packets.
    cwnd: f64,
    /// When the window was last decreased (`None`: never).
    last_decrease: Option<SimTime>,
}

impl Aimd {
    /// At most one decrease per RTT.
    fn can_decrease(&self, now: SimTime, rtt: SimTime) -> bool {
        self.last_decrease
            .is_none_or(|t| now.saturating_sub(t) >= rtt)
    }

    fn decrease_to(&mut self, now: SimTime, factor: f64) {
        self.cwnd *= factor;
        self.last_decrease = Some(now);
    }

    /// An ACK of `acked` packets with `delay` against `target`: additive increase below
    /// the target, else (at most once per `rtt`) a cut by β·(delay − target)/delay, at
    /// most `max_mdf`. True when the window was cut.
    #[allow(clippy::too_many_arguments)]
    fn on_delay(
        &mut self,
        now: SimTime,
        rtt: SimTime,
        delay: f64,
        target: f64,
        acked: f64,
        ai: f64,
        beta: f64,
        max_mdf: f64,
    ) -> bool {
        if delay < target {
            if self.cwnd >= 1.0 {
                self.cwnd += ai / self.cwnd * acked;
            } else {
                self.cwnd += ai * acked;
            }
            false
        } else if self.can_decrease(now, rtt) {
            let f = (1.0 - beta * (delay - target) / delay).max(1.0 - max_mdf);
            self.decrease_to(now, f);
            true
        } else {
            false
        }
    }
}

#[derive(Clone, Debug)]
pub struct Swift {
    p: SwiftParams,
    /// Flow scaling's α and β' (ps), from the parameters.
    fs_alpha: f64,
    fs_beta: f64,
    /// The fabric window.
    fabric: Aimd,
    /// The endpoint window (`None`: no host delay, the fabric window alone).
    endpoint: Option<Aimd>,
    /// The latest RTT sample (a decrease waits one RTT from the last).
    rtt: SimTime,
    /// When the last ACK arrived (a fast retransmit is decided on one).
    last_ack: SimTime,
    /// The sender's MSS (for the pacing rate in bytes).
    mss: f64,
    retransmits: u32,
    /// The number of decreases of the fabric window (for tests and counters).
    pub decreases: u64,
    /// The number of decreases of the endpoint window.
    pub endpoint_decreases: u64,
}

impl Swift {
    pub fn new(p: SwiftParams, init_cwnd: f64) -> Swift {
        let (a, b) = flow_scaling(&p);
        let window = Aimd {
            cwnd: init_cwnd.clamp(p.min_cwnd, p.max_cwnd),
            last_decrease: None,
        };
        Swift {
            p,
            fs_alpha: a,
            fs_beta: b,
            fabric: window,
            endpoint: (p.host_delay > 0).then_some(window),
            rtt: 0,
            last_ack: 0,
            mss: 0.0,
            retransmits: 0,
            decreases: 0,
            endpoint_decreases: 0,
        }
    }

    /// The window in packets: the smaller of the fabric and endpoint windows.
    pub fn cwnd(&self) -> f64 {
        match self.endpoint {
            Some(e) => self.fabric.cwnd.min(e.cwnd),
            None => self.fabric.cwnd,
        }
    }

    /// The fabric window in packets.
    pub fn fabric_cwnd(&self) -> f64 {
        self.fabric.cwnd
    }

    /// The endpoint window in packets (`None`: no host delay, so none).
    pub fn endpoint_cwnd(&self) -> Option<f64> {
        self.endpoint.map(|e| e.cwnd)
    }

    /// The fabric target delay at the current fabric window, in ps.
    pub fn target(&self) -> f64 {
        let fs = (self.fs_alpha / self.fabric.cwnd.sqrt() + self.fs_beta)
            .clamp(0.0, self.p.fs_range as f64);
        self.p.base_target as f64 + self.p.hops as f64 * self.p.hop_scale as f64 + fs
    }

    /// A loss (timeout or fast retransmit) cuts both windows by `max_mdf`, each at most
    /// once per RTT: it does not say which part of the path is congested.
    fn cut_on_loss(&mut self, now: SimTime) {
        let f = 1.0 - self.p.max_mdf;
        if self.fabric.can_decrease(now, self.rtt) {
            self.fabric.decrease_to(now, f);
            self.decreases += 1;
        }
        if let Some(e) = self.endpoint.as_mut() {
            if e.can_decrease(now, self.rtt) {
                e.decrease_to(now, f);
                self.endpoint_decreases += 1;
            }
        }
    }

    fn clamp_into(&mut self, w: &mut Window, mss: f64) {
        let (lo, hi) = (self.p.min_cwnd, self.p.max_cwnd);
        self.fabric.cwnd = self.fabric.cwnd.clamp(lo, hi);
        if let Some(e) = self.endpoint.as_mut() {
            e.cwnd = e.cwnd.clamp(lo, hi);
        }
        w.cwnd = self.cwnd() * mss;
        // No slow start: the window is Swift's alone.
        w.ssthresh = w.cwnd;
    }
}

/// Flow scaling's α and β': α/√cwnd + β' is `fs_range` at `fs_min_cwnd` and 0 at
/// `fs_max_cwnd`.
fn flow_scaling(p: &SwiftParams) -> (f64, f64) {
    let range = p.fs_range as f64;
    let alpha = range / (1.0 / p.fs_min_cwnd.sqrt() - 1.0 / p.fs_max_cwnd.sqrt());
    (alpha, -alpha / p.fs_max_cwnd.sqrt())
}

impl CongestionControl for Swift {
    fn on_ack(&mut self, w: &mut Window, ev: &AckEvent) {
        let now = ev.now;
        self.last_ack = now;
        self.mss = ev.mss;
        if ev.rtt == 0 || ev.in_recovery {
            return;
        }
        self.retransmits = 0;
        let p = self.p;
        let acked = ev.acked as f64 / ev.mss;
        // The fabric delay: the RTT less the receiver's endpoint delay (0 without a
        // host delay, so the RTT).
        let fabric_delay = ev.rtt.saturating_sub(ev.endpoint_delay) as f64;
        let target = self.target();
        if self.fabric.on_delay(
            now,
            self.rtt,
            fabric_delay,
            target,
            acked,
            p.ai,
            p.beta,
            p.max_mdf,
        ) {
            self.decreases += 1;
        }
        if let Some(e) = self.endpoint.as_mut() {
            let cut = e.on_delay(
                now,
                self.rtt,
                ev.endpoint_delay as f64,
                p.endpoint_target as f64,
                acked,
                p.endpoint_ai,
                p.endpoint_beta,
                p.max_mdf,
            );
            self.endpoint_decreases += cut as u64;
        }
        self.rtt = ev.rtt;
        self.clamp_into(w, ev.mss);
    }

    fn on_fast_retransmit(&mut self, w: &mut Window, _flight: u64, mss: f64) {
        self.retransmits = 0;
        // Decided on the duplicate ACK that just arrived.
        self.cut_on_loss(self.last_ack);
        self.clamp_into(w, mss);
    }

    fn on_timeout(&mut self, w: &mut Window, _flight: u64, mss: f64) {
        self.retransmits += 1;
        if self.retransmits >= self.p.retx_reset {
            self.fabric.cwnd = self.p.min_cwnd;
            if let Some(e) = self.endpoint.as_mut() {
                e.cwnd = self.p.min_cwnd;
            }
        } else {
            // A timeout is at least an RTO (> RTT) after the last send: a decrease is due
            // on each window.
            let f = 1.0 - self.p.max_mdf;
            let due = |a: &Aimd, rtt| a.last_decrease.unwrap_or(0).saturating_add(rtt);
            let now = due(&self.fabric, self.rtt);
            self.fabric.decrease_to(now, f);
            self.decreases += 1;
            if let Some(e) = self.endpoint.as_mut() {
                let now = due(e, self.rtt);
                e.decrease_to(now, f);
                self.endpoint_decreases += 1;
            }
        }
        self.clamp_into(w, mss);
    }

    /// Below one packet: one packet per `rtt/cwnd` (`cwnd·mss/rtt` payload bytes per ps).
    fn pacing_rate(&self) -> f64 {
        let cwnd = self.cwnd();
        if cwnd < 1.0 && self.rtt > 0 {
            cwnd * self.mss / self.rtt as f64
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::PS_PER_US;
    use crate::transport::cc::test_ack;

    const US: SimTime = PS_PER_US;

    fn params() -> SwiftParams {
        SwiftParams {
            base_target: 25 * US,
            hop_scale: US,
            hops: 4,
            fs_range: 100 * US,
            fs_min_cwnd: 0.1,
            fs_max_cwnd: 100.0,
            ai: 1.0,
            beta: 0.8,
            max_mdf: 0.5,
            min_cwnd: 0.001,
            max_cwnd: 1000.0,
            retx_reset: 5,
            endpoint_target: 20 * US,
            endpoint_ai: 2.0,
            endpoint_beta: 0.5,
            host_delay: 0,
        }
    }

    fn ack(now: SimTime, rtt: SimTime) -> AckEvent {
        AckEvent {
            now,
            rtt,
            ..test_ack(1000, false, 0, 0)
        }
    }

    fn window(s: &Swift) -> Window {
        Window {
            cwnd: s.cwnd() * 1000.0,
            ssthresh: 0.0,
        }
    }

    #[test]
    fn flow_scaling_is_the_range_at_the_small_window_and_zero_at_the_large_one() {
        let p = params();
        let base = 29.0 * US as f64; // 25 µs + 4 hops × 1 µs
        let at = |cwnd: f64| Swift::new(p, cwnd).target() - base;
        assert!((at(0.1) - 100.0 * US as f64).abs() < 1.0);
        assert!(at(100.0).abs() < 1.0);
        assert_eq!(at(0.01), 100.0 * US as f64, "clamped to the range");
        assert_eq!(at(500.0), 0.0, "never negative");
        // In between it is α/√cwnd + β': at 10 packets, with α = 100/(1/√0.1 − 1/√100).
        let alpha = 100.0 / (1.0 / 0.1f64.sqrt() - 0.1);
        let expect = (alpha / 10f64.sqrt() - alpha / 10.0) * US as f64;
        assert!((at(10.0) - expect).abs() < 1.0, "{} vs {expect}", at(10.0));
    }

    #[test]
    fn additive_increase_is_ai_per_rtt() {
        let mut s = Swift::new(params(), 10.0);
        let mut w = window(&s);
        // One window of ACKs below the target: about one packet more.
        for i in 0..10 {
            s.on_ack(&mut w, &ack(i, 10 * US));
        }
        assert!((s.cwnd() - 11.0).abs() < 0.05, "{}", s.cwnd());
        assert_eq!(w.cwnd, s.cwnd() * 1000.0);
        // Below one packet, ai per packet acknowledged.
        let mut s = Swift::new(params(), 0.5);
        let mut w = window(&s);
        s.on_ack(&mut w, &ack(0, 10 * US));
        assert!((s.cwnd() - 1.5).abs() < 1e-9);
    }

    #[test]
    fn decrease_follows_the_excess_delay_at_most_once_per_rtt_and_is_bounded() {
        let mut s = Swift::new(params(), 100.0);
        let target = s.target();
        let mut w = window(&s);
        // Delay 20% above target: cut by β·(delay − target)/delay.
        let delay = (target * 1.25) as SimTime;
        s.on_ack(&mut w, &ack(1000 * US, delay));
        let f = 1.0 - 0.8 * (delay as f64 - target) / delay as f64;
        assert!((s.cwnd() - 100.0 * f).abs() < 1e-6, "{}", s.cwnd());
        // Within the same RTT, no second cut.
        let c = s.cwnd();
        s.on_ack(&mut w, &ack(1000 * US + delay / 2, delay));
        assert_eq!(s.cwnd(), c);
        assert_eq!(s.decreases, 1);
        // One RTT later: a second; a huge delay is bounded by max_mdf.
        s.on_ack(&mut w, &ack(1000 * US + delay, 100 * delay));
        assert_eq!(s.decreases, 2);
        assert!((s.cwnd() - c * 0.5).abs() < 1e-9);
    }

    #[test]
    fn timeouts_cut_then_reset_and_small_windows_pace() {
        let mut s = Swift::new(params(), 8.0);
        let mut w = window(&s);
        s.on_ack(&mut w, &ack(0, 10 * US));
        let c = s.cwnd();
        s.on_timeout(&mut w, 0, 1000.0);
        assert!((s.cwnd() - c * 0.5).abs() < 1e-9);
        for _ in 0..4 {
            s.on_timeout(&mut w, 0, 1000.0);
        }
        assert_eq!(
            s.cwnd(),
            0.001,
            "five timeouts in a row: the minimum window"
        );
        assert_eq!(w.cwnd, 1.0);
        // Below one packet: one packet per rtt/cwnd.
        let mut s = Swift::new(params(), 0.25);
        let mut w = window(&s);
        // (A delay above the target: the window shrinks and stays below one packet.)
        s.on_ack(&mut w, &ack(0, 500 * US));
        assert!(s.cwnd() < 0.25);
        let interval = 1000.0 / s.pacing_rate();
        assert!((interval - 500.0 * US as f64 / s.cwnd()).abs() < 1.0);
        let s = Swift::new(params(), 2.0);
        assert_eq!(s.pacing_rate(), 0.0);
    }

    fn with_host_delay() -> SwiftParams {
        SwiftParams {
            host_delay: 2 * US,
            ..params()
        }
    }

    fn ack_with(now: SimTime, rtt: SimTime, endpoint_delay: SimTime) -> AckEvent {
        AckEvent {
            endpoint_delay,
            ..ack(now, rtt)
        }
    }

    #[test]
    fn without_host_delay_there_is_no_endpoint_window() {
        let mut s = Swift::new(params(), 10.0);
        assert_eq!(s.endpoint_cwnd(), None);
        let mut w = window(&s);
        s.on_ack(&mut w, &ack(0, 10 * US));
        assert_eq!(s.cwnd(), s.fabric_cwnd());
    }

    /// A large endpoint delay with a small fabric delay: the endpoint window is cut by
    /// its own β against its own target, the fabric window (which sees the RTT less the
    /// endpoint delay) grows, and the sender's window is the endpoint window.
    #[test]
    fn the_endpoint_window_reacts_to_the_echoed_endpoint_delay_and_binds() {
        let mut s = Swift::new(with_host_delay(), 50.0);
        let mut w = window(&s);
        // RTT 100 µs of which 90 µs at the receiving host: fabric delay 10 µs, below
        // the fabric target (29 µs and flow scaling); endpoint delay 90 µs, above 20 µs.
        s.on_ack(&mut w, &ack_with(1000 * US, 100 * US, 90 * US));
        assert!(s.fabric_cwnd() > 50.0, "fabric grows: {}", s.fabric_cwnd());
        let f = 1.0 - 0.5 * (90.0 - 20.0) / 90.0;
        let e = s.endpoint_cwnd().expect("an endpoint window");
        assert!((e - 50.0 * f).abs() < 1e-9, "{e} vs {}", 50.0 * f);
        assert_eq!(s.cwnd(), e);
        assert_eq!(w.cwnd, e * 1000.0);
        assert_eq!((s.decreases, s.endpoint_decreases), (0, 1));
        // Once per RTT: no second cut within 100 µs; the fabric window keeps growing.
        s.on_ack(&mut w, &ack_with(1000 * US + 50 * US, 100 * US, 90 * US));
        assert_eq!(s.endpoint_cwnd(), Some(e));
        assert_eq!(s.endpoint_decreases, 1);
        // The same RTT all in the fabric: the fabric window is cut instead, the
        // endpoint window grows by its own additive increase (2 per RTT).
        let mut s = Swift::new(with_host_delay(), 50.0);
        let mut w = window(&s);
        s.on_ack(&mut w, &ack_with(1000 * US, 100 * US, 0));
        assert!(s.fabric_cwnd() < 50.0);
        let e = s.endpoint_cwnd().expect("an endpoint window");
        assert!((e - (50.0 + 2.0 / 50.0)).abs() < 1e-12, "{e}");
        assert_eq!(s.cwnd(), s.fabric_cwnd());
    }

    #[test]
    fn a_loss_cuts_both_windows() {
        let mut s = Swift::new(with_host_delay(), 8.0);
        let mut w = window(&s);
        s.on_ack(&mut w, &ack_with(0, 10 * US, 2 * US));
        let (f, e) = (s.fabric_cwnd(), s.endpoint_cwnd().unwrap());
        s.on_timeout(&mut w, 0, 1000.0);
        assert!((s.fabric_cwnd() - f * 0.5).abs() < 1e-9);
        assert!((s.endpoint_cwnd().unwrap() - e * 0.5).abs() < 1e-9);
        for _ in 0..4 {
            s.on_timeout(&mut w, 0, 1000.0);
        }
        assert_eq!(s.endpoint_cwnd(), Some(0.001));
        assert_eq!(s.cwnd(), 0.001);
    }
}
