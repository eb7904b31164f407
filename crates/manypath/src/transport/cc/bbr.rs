//! BBR v1 (Cardwell et al., ACM Queue 2016; draft-cardwell-iccrg-bbr-congestion-control,
//! which describes Linux's tcp_bbr): a model of the path — its bottleneck bandwidth
//! (BtlBw, the largest delivery rate of the last 10 round trips) and its round-trip
//! propagation time (RTprop, the smallest RTT of the last 10 s) — and a sender that
//! paces at `pacing_gain`·BtlBw with a window of `cwnd_gain`·BDP.
//!
//! States: STARTUP (gain 2/ln 2 on both) until BtlBw has not grown by 25% for three
//! round trips; DRAIN (the inverse pacing gain) until the data in flight is down to one
//! BDP; PROBE_BW, cycling the pacing gain through 1.25, 0.75 and six times 1, one phase
//! per RTprop (the 1.25 phase also until the flight reaches 1.25·BDP, the 0.75 phase
//! ends early once it is down to one BDP); PROBE_RTT, entered when RTprop has not been
//! lowered for 10 s: the window drops to 4 packets for 200 ms and a round trip, then the
//! previous window comes back. The delivery-rate samples come from the sender
//! (`RateSample`, taken only by a pacing sender: BBR needs `pacing = true`).
//!
//! PROBE_BW starts at the first phase of gain 1 after the probing pair (Linux starts at a
//! random one but the 0.75: a fixed start keeps runs deterministic without a stream of
//! random numbers per connection).

use super::{AckEvent, CongestionControl, RateSample, Window};
use crate::time::{SimTime, PS_PER_MS, PS_PER_S};

/// STARTUP's gain: 2/ln 2, the smallest that doubles the sending rate every round trip.
pub const HIGH_GAIN: f64 = 2.885_390_081_777_927;
/// PROBE_BW's pacing gains, one phase each.
pub const GAIN_CYCLE: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// The BtlBw filter's window, in round trips.
pub const BTLBW_ROUNDS: usize = 10;
/// The RTprop filter's window.
pub const RTPROP_WINDOW: SimTime = 10 * PS_PER_S;
/// How long PROBE_RTT holds the window at its minimum (at least a round trip too).
pub const PROBE_RTT_TIME: SimTime = 200 * PS_PER_MS;
/// The smallest window, in packets (and PROBE_RTT's).
pub const MIN_CWND: f64 = 4.0;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

#[derive(Clone, Debug)]
pub struct Bbr {
    pub mode: Mode,
    /// The largest delivery rate of each of the last `BTLBW_ROUNDS` round trips (bytes
    /// per ps), by round number modulo the window.
    bw: [f64; BTLBW_ROUNDS],
    /// RTprop and when it was last lowered (or renewed after expiring).
    rtprop: SimTime,
    rtprop_stamp: SimTime,
    /// Round trips counted by delivered data: one ends when a segment sent after the
    /// previous end is acknowledged.
    round: u64,
    next_round_delivered: u64,
    round_start: bool,
    /// STARTUP's plateau detection.
    full_bw: f64,
    full_bw_count: u32,
    filled_pipe: bool,
    pacing_gain: f64,
    cwnd_gain: f64,
    /// PROBE_BW's phase and when it began.
    cycle: usize,
    cycle_stamp: SimTime,
    /// PROBE_RTT: when it may end (0: the flight is not down yet), whether a round trip
    /// has passed since, and the window to restore.
    probe_rtt_done: SimTime,
    probe_rtt_round_done: bool,
    prior_cwnd: f64,
    /// Times PROBE_RTT was entered (for tests and counters).
    pub probe_rtts: u32,
    /// The delivery-rate sample of the ACK being handled.
    rs: RateSample,
}

impl Default for Bbr {
    fn default() -> Self {
        Bbr {
            mode: Mode::Startup,
            bw: [0.0; BTLBW_ROUNDS],
            rtprop: SimTime::MAX,
            rtprop_stamp: 0,
            round: 0,
            next_round_delivered: 0,
            round_start: false,
            full_bw: 0.0,
            full_bw_count: 0,
            filled_pipe: false,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            cycle: 0,
            cycle_stamp: 0,
            probe_rtt_done: 0,
            probe_rtt_round_done: false,
            prior_cwnd: 0.0,
            probe_rtts: 0,
            rs: RateSample::default(),
        }
    }
}

impl Bbr {
    /// The bottleneck bandwidth estimate, bytes per ps (0 before the first sample).
    pub fn btlbw(&self) -> f64 {
        self.bw.iter().copied().fold(0.0, f64::max)
    }

    /// RTprop, if measured.
    pub fn rtprop(&self) -> Option<SimTime> {
        (self.rtprop != SimTime::MAX).then_some(self.rtprop)
    }

    /// The estimated bandwidth-delay product in bytes (0 before the model has both).
    pub fn bdp(&self) -> f64 {
        self.rtprop().map_or(0.0, |r| self.btlbw() * r as f64)
    }

    fn update_round(&mut self, ev: &AckEvent) {
        self.round_start = false;
        if ev.acked > 0 && self.rs.prior_delivered >= self.next_round_delivered {
            self.next_round_delivered = self.rs.delivered;
            self.round += 1;
            self.round_start = true;
            // The slot of the new round starts empty.
            self.bw[(self.round % BTLBW_ROUNDS as u64) as usize] = 0.0;
        }
    }

    fn update_btlbw(&mut self) {
        let r = self.rs.delivery_rate;
        if r > 0.0 && (!self.rs.app_limited || r >= self.btlbw()) {
            let slot = &mut self.bw[(self.round % BTLBW_ROUNDS as u64) as usize];
            *slot = slot.max(r);
        }
    }

    /// RTprop: lowered by a smaller sample, or replaced once it is 10 s old (the
    /// sample that replaces it may be larger).
    fn update_rtprop(&mut self, ev: &AckEvent) -> bool {
        let expired = ev.now > self.rtprop_stamp.saturating_add(RTPROP_WINDOW);
        if ev.rtt > 0 && (ev.rtt < self.rtprop || expired) {
            self.rtprop = ev.rtt;
            self.rtprop_stamp = ev.now;
        }
        expired
    }

    fn check_full_pipe(&mut self) {
        if self.filled_pipe || !self.round_start || self.rs.app_limited {
            return;
        }
        let bw = self.btlbw();
        if bw >= self.full_bw * 1.25 {
            self.full_bw = bw;
            self.full_bw_count = 0;
            return;
        }
        self.full_bw_count += 1;
        self.filled_pipe = self.full_bw_count >= 3;
    }

    fn enter_probe_bw(&mut self, now: SimTime) {
        self.mode = Mode::ProbeBw;
        self.cwnd_gain = 2.0;
        self.cycle = 2;
        self.cycle_stamp = now;
        self.pacing_gain = GAIN_CYCLE[self.cycle];
    }

    fn advance_cycle(&mut self, ev: &AckEvent) {
        let bdp = self.bdp();
        let flight = self.rs.flight as f64;
        let full = ev.now.saturating_sub(self.cycle_stamp) > self.rtprop().unwrap_or(0);
        let next = if self.pacing_gain > 1.0 {
            full && flight >= self.pacing_gain * bdp
        } else if self.pacing_gain < 1.0 {
            full || flight <= bdp
        } else {
            full
        };
        if next {
            self.cycle = (self.cycle + 1) % GAIN_CYCLE.len();
            self.cycle_stamp = ev.now;
            self.pacing_gain = GAIN_CYCLE[self.cycle];
        }
    }

    fn update_model_and_state(&mut self, w: &Window, ev: &AckEvent) {
        self.update_round(ev);
        self.update_btlbw();
        let expired = self.update_rtprop(ev);
        self.check_full_pipe();
        match self.mode {
            Mode::Startup if self.filled_pipe => {
                self.mode = Mode::Drain;
                self.pacing_gain = 1.0 / HIGH_GAIN;
                self.cwnd_gain = HIGH_GAIN;
            }
            Mode::Drain if self.rs.flight as f64 <= self.bdp() => self.enter_probe_bw(ev.now),
            Mode::ProbeBw => self.advance_cycle(ev),
            Mode::Startup | Mode::Drain | Mode::ProbeRtt => {}
        }
        if expired && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.probe_rtts += 1;
            self.pacing_gain = 1.0;
            self.cwnd_gain = 1.0;
            self.prior_cwnd = w.cwnd;
            self.probe_rtt_done = 0;
        }
        if self.mode == Mode::ProbeRtt {
            self.probe_rtt(ev);
        }
    }

    /// PROBE_RTT: once the flight is down to the minimum window, hold it 200 ms and a
    /// round trip; then RTprop is fresh, and the sender goes back to probing.
    fn probe_rtt(&mut self, ev: &AckEvent) {
        let min = MIN_CWND * ev.mss;
        if self.probe_rtt_done == 0 {
            if self.rs.flight as f64 <= min {
                self.probe_rtt_done = ev.now + PROBE_RTT_TIME;
                self.probe_rtt_round_done = false;
                self.next_round_delivered = self.rs.delivered;
            }
            return;
        }
        if self.round_start {
            self.probe_rtt_round_done = true;
        }
        if self.probe_rtt_round_done && ev.now >= self.probe_rtt_done {
            self.rtprop_stamp = ev.now;
            if self.filled_pipe {
                self.enter_probe_bw(ev.now);
            } else {
                self.mode = Mode::Startup;
                self.pacing_gain = HIGH_GAIN;
                self.cwnd_gain = HIGH_GAIN;
            }
            self.probe_rtt_done = 0;
        }
    }

    fn set_cwnd(&mut self, w: &mut Window, ev: &AckEvent) {
        let mss = ev.mss;
        let min = MIN_CWND * mss;
        if self.mode == Mode::ProbeRtt {
            w.cwnd = w.cwnd.min(min);
            return;
        }
        if self.prior_cwnd > 0.0 {
            // Back from PROBE_RTT: the window it had.
            w.cwnd = w.cwnd.max(self.prior_cwnd);
            self.prior_cwnd = 0.0;
        }
        let bdp = self.bdp();
        // Before the model has a BDP, the window grows as in slow start.
        let target = if bdp > 0.0 {
            self.cwnd_gain * bdp + 3.0 * mss
        } else {
            f64::INFINITY
        };
        let acked = ev.acked as f64;
        w.cwnd = if self.filled_pipe {
            (w.cwnd + acked).min(target)
        } else if w.cwnd < target {
            w.cwnd + acked
        } else {
            w.cwnd
        };
        w.cwnd = w.cwnd.max(min);
        w.ssthresh = f64::INFINITY;
    }
}

impl CongestionControl for Bbr {
    fn on_ack(&mut self, w: &mut Window, ev: &AckEvent) {
        if ev.acked == 0 {
            return;
        }
        self.update_model_and_state(w, ev);
        if !ev.in_recovery {
            self.set_cwnd(w, ev);
        }
    }

    /// BBR does not take a loss as a congestion signal: the window stays.
    fn on_fast_retransmit(&mut self, w: &mut Window, _flight: u64, _mss: f64) {
        w.ssthresh = w.cwnd;
    }

    /// The sender restarts from one segment; the window grows back by the data
    /// acknowledged, up to the model's target.
    fn on_timeout(&mut self, w: &mut Window, _flight: u64, _mss: f64) {
        w.ssthresh = w.cwnd;
    }

    fn pacing_rate(&self) -> f64 {
        self.pacing_gain * self.btlbw()
    }

    fn on_rate_sample(&mut self, rs: &RateSample) {
        self.rs = *rs;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::PS_PER_US;
    use crate::transport::cc::test_ack;

    const US: SimTime = PS_PER_US;

    /// A path driven one ACK of 1000 bytes at a time.
    struct Path {
        bbr: Bbr,
        w: Window,
        now: SimTime,
        delivered: u64,
    }

    impl Path {
        fn new() -> Path {
            Path {
                bbr: Bbr::default(),
                w: Window {
                    cwnd: 10_000.0,
                    ssthresh: f64::INFINITY,
                },
                now: 0,
                delivered: 0,
            }
        }

        /// One ACK of 1000 bytes at rate `rate` with `flight` bytes left in flight,
        /// `per_round` ACKs per round trip of `rtt`.
        fn ack(&mut self, rate: f64, rtt: SimTime, flight: u64, per_round: u64) {
            self.now += rtt / per_round;
            self.delivered += 1000;
            // The segment acknowledged was sent a round trip ago.
            let prior_delivered = self.delivered.saturating_sub(per_round * 1000);
            let ev = AckEvent {
                now: self.now,
                rtt,
                ..test_ack(1000, false, 0, 0)
            };
            self.bbr.on_rate_sample(&RateSample {
                delivery_rate: rate,
                delivered: self.delivered,
                prior_delivered,
                app_limited: false,
                flight,
            });
            self.bbr.on_ack(&mut self.w, &ev);
        }
    }

    #[test]
    fn startup_fills_the_pipe_drains_then_probes_bandwidth() {
        let mut p = Path::new();
        let rate = 1.25e-3; // 10 Gbps
                            // Growing samples in STARTUP keep it there.
        for k in 1..=5 {
            for _ in 0..10 {
                p.ack(rate * k as f64 / 5.0, 100 * US, 100_000, 10);
            }
            assert_eq!(p.bbr.mode, Mode::Startup);
        }
        assert!((p.bbr.pacing_rate() / (HIGH_GAIN * rate) - 1.0).abs() < 1e-9);
        // Three rounds without 25% growth: the pipe is full, DRAIN.
        for _ in 0..30 {
            p.ack(rate, 100 * US, 1_000_000, 10);
        }
        assert_eq!(p.bbr.mode, Mode::Drain);
        assert!((p.bbr.pacing_rate() - rate / HIGH_GAIN).abs() < 1e-12);
        // The flight falls to one BDP (125 kB): PROBE_BW at gain 1.
        let bdp = p.bbr.bdp();
        assert!((bdp - 125_000.0).abs() < 1.0, "{bdp}");
        p.ack(rate, 100 * US, 120_000, 10);
        assert_eq!(p.bbr.mode, Mode::ProbeBw);
        assert_eq!(p.bbr.pacing_gain, 1.0);
        // The window is cwnd_gain·BDP + 3 MSS.
        for _ in 0..300 {
            p.ack(rate, 100 * US, 120_000, 10);
        }
        assert!(
            (p.w.cwnd - (2.0 * 125_000.0 + 3000.0)).abs() < 1.0,
            "{}",
            p.w.cwnd
        );
        // With the flight above 1.25 BDP, each phase lasts one RTprop: over whole
        // cycles (8 phases of 11 ACKs) the gains average to 1, pacing at BtlBw.
        while p.bbr.cycle != 0 {
            p.ack(rate, 100 * US, 160_000, 10);
        }
        let mut gains = Vec::new();
        for _ in 0..2 * 8 * 11 {
            p.ack(rate, 100 * US, 160_000, 10);
            gains.push(p.bbr.pacing_gain);
        }
        assert!(gains.contains(&1.25) && gains.contains(&0.75));
        let mean = gains.iter().sum::<f64>() / gains.len() as f64;
        assert!((mean - 1.0).abs() < 1e-9, "{mean}");
    }

    #[test]
    fn btlbw_is_the_max_of_ten_round_trips() {
        let mut p = Path::new();
        p.ack(2e-3, 100 * US, 100_000, 1);
        for _ in 0..9 {
            p.ack(1e-3, 100 * US, 100_000, 1);
            assert_eq!(p.bbr.btlbw(), 2e-3);
        }
        p.ack(1e-3, 100 * US, 100_000, 1);
        assert_eq!(p.bbr.btlbw(), 1e-3, "the old maximum left the window");
    }

    #[test]
    fn probe_rtt_every_ten_seconds_holds_four_packets_for_200_ms() {
        let mut p = Path::new();
        let rate = 1.25e-3;
        // Into PROBE_BW.
        for _ in 0..200 {
            p.ack(rate, 100 * US, 120_000, 10);
        }
        assert_eq!(p.bbr.mode, Mode::ProbeBw);
        let cwnd = p.w.cwnd;
        // RTprop is never lowered: after 10 s, PROBE_RTT.
        while p.now < 10 * PS_PER_S {
            p.ack(rate, 100 * US, 120_000, 10);
            assert_eq!(p.bbr.mode, Mode::ProbeBw);
        }
        p.ack(rate, 100 * US, 120_000, 10);
        p.ack(rate, 100 * US, 120_000, 10);
        assert_eq!(p.bbr.mode, Mode::ProbeRtt);
        assert_eq!(p.w.cwnd, 4000.0, "4 packets");
        assert_eq!(p.bbr.probe_rtts, 1);
        // The flight falls to 4 packets; 200 ms later (and a round trip) it ends.
        let entered = p.now;
        while p.bbr.mode == Mode::ProbeRtt {
            p.ack(rate, 100 * US, 4000, 10);
            if p.bbr.mode == Mode::ProbeRtt {
                assert_eq!(p.w.cwnd, 4000.0);
            }
        }
        let held = p.now - entered;
        assert!(
            (200 * PS_PER_MS..=201 * PS_PER_MS).contains(&held),
            "{held}"
        );
        assert_eq!(p.bbr.mode, Mode::ProbeBw);
        p.ack(rate, 100 * US, 4000, 10);
        assert!(p.w.cwnd >= cwnd, "the window comes back");
        // And again 10 s later.
        let start = p.now;
        while p.now < start + 10 * PS_PER_S + PS_PER_MS {
            p.ack(rate, 100 * US, 120_000, 10);
        }
        assert_eq!(p.bbr.probe_rtts, 2);
    }
}
