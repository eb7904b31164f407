//! DCQCN (Zhu, Eran, Firestone, Guo, Lipshteyn, Liron, Padhye, Raindel, Yahia, Zhang,
//! "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015): the reaction
//! point (RP, the sender's NIC) as a [`RateControl`], and the notification point's CNP
//! spacing (NP, the receiver's NIC) as [`CnpPacer`]. The congestion point (a switch
//! marking ECN RED-style) belongs to the fabric.
//!
//! The RP keeps a current rate R_C, a target rate R_T and α, an estimate of congestion:
//!
//! - On a CNP: α ← (1−g)α + g; if at least one rate-decrease interval has passed since
//!   the last cut, R_T ← R_C and R_C ← R_C(1 − α/2), and the increase stages restart.
//! - Every K without a CNP: α ← (1−g)α.
//! - A rate-increase event comes from the byte counter (every B bytes sent) or the timer
//!   (every T); each advances its own stage count (BC or T). Then, with F stages:
//!   max(BC, T) ≤ F: fast recovery, R_C ← (R_T + R_C)/2;
//!   min(BC, T) > F: hyper increase, R_T += i·R_HAI with i = min(BC, T) − F, then
//!   R_C ← (R_T + R_C)/2; otherwise additive increase, R_T += R_AI, then
//!   R_C ← (R_T + R_C)/2. Rates stay within [min_rate, line rate].
//!
//! Mellanox's NICs, and the HPCC authors' simulator that models them
//! (`RdmaHw::CheckRateDecreaseMlx`, `RateIncEventMlx`), differ in two rules, which
//! [`IncreaseRule::Timer`] and [`TargetClamp::AfterTimerIncrease`] select: the timer
//! alone drives increases (fast recovery for the first F events after a cut, additive
//! increase at the next, hyper increase by R_HAI at every one after), and a cut lowers
//! R_T to R_C only if the timer has raised the rate since the previous cut, so a run of
//! cuts keeps the target the flow had before the first.
//!
//! Timers run only while they can change something: the increase timer while R_C is
//! below line rate, the α timer while α is above [`ALPHA_IDLE`] or R_C is below line
//! rate. Both start with the first CNP.

use super::{AckInfo, RateControl};
use crate::time::SimTime;

/// Below this α, with R_C back at line rate, the α timer stops (α's further decay would
/// change nothing until the next CNP, which sets α from its current value).
pub const ALPHA_IDLE: f64 = 1e-6;

/// DCQCN's defaults: the paper's values (Zhu et al., SIGCOMM 2015, §5 and its Table of
/// parameters, chosen by the authors' fluid model for 40 Gb/s), since `dcqcn` names the
/// paper's protocol. The HPCC authors' simulator runs DCQCN with Mellanox-style timers
/// instead (much faster α decay, slower increase); that setting is
/// [`DcqcnConfig::hpcc_artifact`], also selectable as a scenario preset.
pub mod paper {
    use crate::time::{SimTime, PS_PER_US};
    /// g = 1/256 (paper; the artifact uses the same).
    pub const G: f64 = 1.0 / 256.0;
    /// K, α's decay period: 55 µs (paper).
    pub const ALPHA_TIMER: SimTime = 55 * PS_PER_US;
    /// T, the rate-increase timer: 55 µs (paper).
    pub const INCREASE_TIMER: SimTime = 55 * PS_PER_US;
    /// B, the byte counter: 10 MB (paper).
    pub const BYTE_COUNTER: u64 = 10_000_000;
    /// F, fast-recovery stages: 5 (paper).
    pub const FAST_RECOVERY_STAGES: u32 = 5;
    /// R_AI: 40 Mb/s (paper).
    pub const RATE_AI_BPS: f64 = 40e6;
    /// R_HAI: 400 Mb/s, 10 × R_AI (the paper gives no number; the artifact's defaults
    /// keep the same 1:10 ratio, 5 and 50 Mb/s per 25 Gb/s).
    pub const RATE_HAI_BPS: f64 = 400e6;
    /// The least time between two cuts: 4 µs (the NIC default
    /// `rate_reduce_monitor_period`, also the artifact's; the paper cuts on every CNP,
    /// which its notification point already spaces by N = 50 µs, so with the default
    /// CNP interval this changes nothing).
    pub const RATE_DECREASE_INTERVAL: SimTime = 4 * PS_PER_US;
    /// The lowest rate: 10 Mb/s (chosen here; the paper gives none).
    pub const MIN_RATE_BPS: f64 = 10e6;
    /// α before the first CNP: 1 (the NIC's and the artifact's: the first CNP halves).
    pub const ALPHA_INIT: f64 = 1.0;
    /// N, the notification point's least spacing of CNPs per flow: 50 µs (paper).
    pub const CNP_INTERVAL: SimTime = 50 * PS_PER_US;
}

/// The HPCC authors' public simulator's DCQCN (`simulation/run.py`, `--cc dcqcn`, the
/// setting of the HPCC paper's comparisons), for a NIC of `bw` Gb/s.
pub mod artifact {
    use crate::time::{SimTime, PS_PER_US};
    /// ALPHA_RESUME_INTERVAL 1 µs.
    pub const ALPHA_TIMER: SimTime = PS_PER_US;
    /// RP_TIMER 300 µs.
    pub const INCREASE_TIMER: SimTime = 300 * PS_PER_US;
    /// RATE_DECREASE_INTERVAL 4 µs.
    pub const RATE_DECREASE_INTERVAL: SimTime = 4 * PS_PER_US;
    /// FAST_RECOVERY_TIMES 1.
    pub const FAST_RECOVERY_STAGES: u32 = 1;
    /// RATE_AI 5·bw/25 Mb/s: a fraction 2·10⁻⁴ of the line rate.
    pub const RATE_AI_PER_LINE: f64 = 2e-4;
    /// RATE_HAI 50·bw/25 Mb/s: a fraction 2·10⁻³ of the line rate.
    pub const RATE_HAI_PER_LINE: f64 = 2e-3;
    /// MIN_RATE 1000 Mb/s.
    pub const MIN_RATE_BPS: f64 = 1e9;
    /// Its NIC model has no byte counter (increases come from the timer only).
    pub const BYTE_COUNTER: u64 = u64::MAX;
    /// `RateIncEventMlx`: the timer's stage picks the phase.
    pub const INCREASE_RULE: super::IncreaseRule = super::IncreaseRule::Timer;
    /// CLAMP_TARGET_RATE 0.
    pub const TARGET_CLAMP: super::TargetClamp = super::TargetClamp::AfterTimerIncrease;
}

/// What phase a rate-increase event is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IncreaseRule {
    /// The paper's: byte-counter and timer stages together (see the module comment).
    Paper,
    /// Mellanox's: the timer's stage alone; fast recovery while fewer than F timer
    /// events have passed since the cut, additive increase at the (F+1)-th, hyper
    /// increase by R_HAI (not a multiple) at each later one.
    Timer,
}

/// When a cut lowers the target rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetClamp {
    /// At every cut, R_T ← R_C (the paper).
    EveryCut,
    /// Only if the increase timer fired since the previous cut (Mellanox's
    /// `clamp_tgt_rate` off; the HPCC simulator's `CLAMP_TARGET_RATE 0`).
    AfterTimerIncrease,
}

/// DCQCN's constants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DcqcnConfig {
    /// The NIC's line rate, bits/s: the initial and highest rate.
    pub line_rate_bps: f64,
    /// The lowest rate a cut may leave, bits/s ([`paper::MIN_RATE_BPS`]).
    pub min_rate_bps: f64,
    /// EWMA gain g of α ([`paper::G`]).
    pub g: f64,
    /// α before the first CNP ([`paper::ALPHA_INIT`]).
    pub alpha_init: f64,
    /// α's decay period K without CNPs ([`paper::ALPHA_TIMER`]).
    pub alpha_timer: SimTime,
    /// The rate-increase timer's period T ([`paper::INCREASE_TIMER`]).
    pub increase_timer: SimTime,
    /// The byte counter's period B, bytes sent ([`paper::BYTE_COUNTER`]).
    pub byte_counter: u64,
    /// Fast-recovery stages F ([`paper::FAST_RECOVERY_STAGES`]).
    pub fast_recovery_stages: u32,
    /// Additive increase step R_AI, bits/s ([`paper::RATE_AI_BPS`]).
    pub rate_ai_bps: f64,
    /// Hyper increase step R_HAI, bits/s ([`paper::RATE_HAI_BPS`]).
    pub rate_hai_bps: f64,
    /// The least time between two rate cuts ([`paper::RATE_DECREASE_INTERVAL`]).
    pub rate_decrease_interval: SimTime,
    /// How increase events pick their phase ([`IncreaseRule::Paper`]).
    pub increase_rule: IncreaseRule,
    /// When a cut lowers R_T ([`TargetClamp::EveryCut`]).
    pub target_clamp: TargetClamp,
}

impl DcqcnConfig {
    /// The paper's defaults for a NIC of the given line rate.
    pub fn new(line_rate_bps: f64) -> DcqcnConfig {
        DcqcnConfig {
            line_rate_bps,
            min_rate_bps: paper::MIN_RATE_BPS,
            g: paper::G,
            alpha_init: paper::ALPHA_INIT,
            alpha_timer: paper::ALPHA_TIMER,
            increase_timer: paper::INCREASE_TIMER,
            byte_counter: paper::BYTE_COUNTER,
            fast_recovery_stages: paper::FAST_RECOVERY_STAGES,
            rate_ai_bps: paper::RATE_AI_BPS,
            rate_hai_bps: paper::RATE_HAI_BPS,
            rate_decrease_interval: paper::RATE_DECREASE_INTERVAL,
            increase_rule: IncreaseRule::Paper,
            target_clamp: TargetClamp::EveryCut,
        }
    }

    /// The HPCC authors' simulator's DCQCN for a NIC of the given line rate ([`artifact`]).
    pub fn hpcc_artifact(line_rate_bps: f64) -> DcqcnConfig {
        DcqcnConfig {
            min_rate_bps: artifact::MIN_RATE_BPS.min(line_rate_bps),
            alpha_timer: artifact::ALPHA_TIMER,
            increase_timer: artifact::INCREASE_TIMER,
            byte_counter: artifact::BYTE_COUNTER,
            fast_recovery_stages: artifact::FAST_RECOVERY_STAGES,
            rate_ai_bps: artifact::RATE_AI_PER_LINE * line_rate_bps,
            rate_hai_bps: artifact::RATE_HAI_PER_LINE * line_rate_bps,
            rate_decrease_interval: artifact::RATE_DECREASE_INTERVAL,
            increase_rule: artifact::INCREASE_RULE,
            target_clamp: artifact::TARGET_CLAMP,
            ..DcqcnConfig::new(line_rate_bps)
        }
    }
}

/// The reaction point: one flow's DCQCN rate limiter.
#[derive(Clone, Debug)]
pub struct Dcqcn {
    /// Current rate R_C, bits/s.
    rc: f64,
    /// Target rate R_T, bits/s.
    rt: f64,
    alpha: f64,
    /// Byte-counter stage BC and timer stage T since the last cut.
    bc_stage: u32,
    t_stage: u32,
    /// Bytes sent since the byte counter last fired.
    bytes: u64,
    last_cut: Option<SimTime>,
    alpha_deadline: Option<SimTime>,
    increase_deadline: Option<SimTime>,
    cfg: DcqcnConfig,
}

impl Dcqcn {
    pub fn new(cfg: DcqcnConfig) -> Dcqcn {
        Dcqcn {
            rc: cfg.line_rate_bps,
            rt: cfg.line_rate_bps,
            alpha: cfg.alpha_init,
            bc_stage: 0,
            t_stage: 0,
            bytes: 0,
            last_cut: None,
            alpha_deadline: None,
            increase_deadline: None,
            cfg,
        }
    }

    pub fn config(&self) -> &DcqcnConfig {
        &self.cfg
    }

    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// The target rate R_T, bits/s.
    pub fn target_bps(&self) -> f64 {
        self.rt
    }

    /// The byte-counter and timer stages (BC, T) since the last cut.
    pub fn stages(&self) -> (u32, u32) {
        (self.bc_stage, self.t_stage)
    }

    fn at_line_rate(&self) -> bool {
        self.rc >= self.cfg.line_rate_bps
    }

    /// One rate-increase event, after its stage count has advanced.
    fn increase(&mut self) {
        let f = self.cfg.fast_recovery_stages;
        match self.cfg.increase_rule {
            IncreaseRule::Paper => {
                let hi = self.bc_stage.max(self.t_stage);
                let lo = self.bc_stage.min(self.t_stage);
                if hi <= f {
                    // fast recovery: R_T stays
                } else if lo > f {
                    self.rt += (lo - f) as f64 * self.cfg.rate_hai_bps;
                } else {
                    self.rt += self.cfg.rate_ai_bps;
                }
            }
            // The stage before this event: below F fast recovery, F additive, above hyper.
            IncreaseRule::Timer => match (self.t_stage.saturating_sub(1)).cmp(&f) {
                std::cmp::Ordering::Less => {}
                std::cmp::Ordering::Equal => self.rt += self.cfg.rate_ai_bps,
                std::cmp::Ordering::Greater => self.rt += self.cfg.rate_hai_bps,
            },
        }
        self.rt = self.rt.min(self.cfg.line_rate_bps);
        self.rc = ((self.rt + self.rc) / 2.0).min(self.cfg.line_rate_bps);
    }

    fn fire_increase_timer(&mut self, now: SimTime) {
        while let Some(d) = self.increase_deadline {
            if d > now {
                break;
            }
            self.t_stage = self.t_stage.saturating_add(1);
            self.increase();
            self.increase_deadline = if self.at_line_rate() {
                None
            } else {
                Some(d + self.cfg.increase_timer)
            };
        }
    }

    fn fire_alpha_timer(&mut self, now: SimTime) {
        while let Some(d) = self.alpha_deadline {
            if d > now {
                break;
            }
            self.alpha *= 1.0 - self.cfg.g;
            self.alpha_deadline = if self.alpha <= ALPHA_IDLE && self.at_line_rate() {
                None
            } else {
                Some(d + self.cfg.alpha_timer)
            };
        }
    }
}

impl RateControl for Dcqcn {
    fn rate_bps(&self) -> f64 {
        self.rc
    }

    /// DCQCN reads congestion from CNPs only; an ACK's ECN echo is not its signal.
    fn on_ack(&mut self, _ack: &AckInfo) {}

    fn on_cnp(&mut self, now: SimTime) {
        let g = self.cfg.g;
        self.alpha = (1.0 - g) * self.alpha + g;
        self.alpha_deadline = Some(now + self.cfg.alpha_timer);
        let may_cut = match self.last_cut {
            None => true,
            Some(t) => now >= t + self.cfg.rate_decrease_interval,
        };
        if may_cut {
            let clamp = match self.cfg.target_clamp {
                TargetClamp::EveryCut => true,
                TargetClamp::AfterTimerIncrease => self.t_stage > 0,
            };
            if clamp {
                self.rt = self.rc;
            }
            self.rc = (self.rc * (1.0 - self.alpha / 2.0)).max(self.cfg.min_rate_bps);
            self.last_cut = Some(now);
            self.bc_stage = 0;
            self.t_stage = 0;
            self.bytes = 0;
            self.increase_deadline = Some(now + self.cfg.increase_timer);
        }
    }

    fn on_sent(&mut self, _now: SimTime, bytes: u64) {
        // Under the timer rule the byte counter is not used (as Mellanox's NICs).
        if self.at_line_rate() || self.cfg.increase_rule == IncreaseRule::Timer {
            return;
        }
        self.bytes += bytes;
        while self.bytes >= self.cfg.byte_counter && !self.at_line_rate() {
            self.bytes -= self.cfg.byte_counter;
            self.bc_stage = self.bc_stage.saturating_add(1);
            self.increase();
        }
        if self.at_line_rate() {
            self.bytes = 0;
            self.increase_deadline = None;
        }
    }

    fn on_timer(&mut self, now: SimTime) {
        // The earlier timer first, so that simultaneous expiries are handled in time order.
        self.fire_alpha_timer(now);
        self.fire_increase_timer(now);
    }

    fn timer_deadline(&self) -> Option<SimTime> {
        match (self.alpha_deadline, self.increase_deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// The notification point's rule: at most one CNP per flow per interval. The receiver
/// keeps one per flow and asks it on each ECN-marked data packet.
#[derive(Clone, Copy, Debug)]
pub struct CnpPacer {
    /// Least time between two CNPs of one flow ([`paper::CNP_INTERVAL`]).
    pub interval: SimTime,
    last: Option<SimTime>,
}

impl Default for CnpPacer {
    fn default() -> CnpPacer {
        CnpPacer::new(paper::CNP_INTERVAL)
    }
}

impl CnpPacer {
    pub fn new(interval: SimTime) -> CnpPacer {
        CnpPacer {
            interval,
            last: None,
        }
    }

    /// A marked packet of the flow arrived at `now`: whether to send a CNP for it.
    pub fn on_marked(&mut self, now: SimTime) -> bool {
        let send = match self.last {
            None => true,
            Some(t) => now >= t + self.interval,
        };
        if send {
            self.last = Some(now);
        }
        send
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::PS_PER_US;

    const LINE: f64 = 100e9;
    const US: SimTime = PS_PER_US;

    fn rp() -> Dcqcn {
        Dcqcn::new(DcqcnConfig::new(LINE))
    }

    /// Fires every timer due up to `until`, in order.
    fn run_timers(d: &mut Dcqcn, until: SimTime) {
        while let Some(t) = d.timer_deadline() {
            if t > until {
                break;
            }
            d.on_timer(t);
        }
    }

    #[test]
    fn one_cnp_at_line_rate_with_alpha_one_halves_the_rate() {
        let mut d = rp();
        assert_eq!(d.rate_bps(), LINE);
        d.on_cnp(10 * US);
        assert_eq!(d.alpha(), 1.0);
        assert_eq!(d.rate_bps(), LINE / 2.0);
        assert_eq!(d.target_bps(), LINE);
    }

    #[test]
    fn the_cut_uses_alpha_after_its_update() {
        let mut cfg = DcqcnConfig::new(LINE);
        cfg.alpha_init = 0.5;
        let mut d = Dcqcn::new(cfg);
        d.on_cnp(0);
        let a = (1.0 - cfg.g) * 0.5 + cfg.g;
        assert_eq!(d.alpha(), a);
        assert_eq!(d.rate_bps(), LINE * (1.0 - a / 2.0));
    }

    #[test]
    fn cuts_are_at_most_one_per_decrease_interval_but_alpha_rises_on_each_cnp() {
        let mut d = rp();
        d.on_cnp(0);
        let r = d.rate_bps();
        d.on_cnp(2 * US); // within 4 µs: α rises, no cut
        assert_eq!(d.rate_bps(), r);
        d.on_cnp(4 * US);
        assert!(d.rate_bps() < r);
    }

    #[test]
    fn alpha_decays_towards_zero_without_cnps() {
        let mut d = rp();
        d.on_cnp(0);
        let g = d.config().g;
        run_timers(&mut d, 55 * US);
        assert!((d.alpha() - (1.0 - g)).abs() < 1e-12, "{}", d.alpha());
        run_timers(&mut d, 55 * US * 1000);
        let expect = (1.0 - g).powi(1000);
        assert!(
            (d.alpha() - expect).abs() < 1e-9,
            "{} vs {expect}",
            d.alpha()
        );
        run_timers(&mut d, 55 * US * 10_000);
        assert!(d.alpha() <= ALPHA_IDLE);
        // A CNP restarts α's decay period from its own time.
        let a = d.alpha();
        d.on_cnp(55 * US * 10_000 + 7);
        assert!(d.alpha() > a);
        assert_eq!(d.timer_deadline(), Some(55 * US * 10_000 + 7 + 55 * US));
    }

    #[test]
    fn fast_recovery_halves_the_distance_to_the_target_for_f_stages() {
        let mut d = rp();
        d.on_cnp(0);
        let rt = d.target_bps();
        let mut gap = rt - d.rate_bps();
        for k in 1..=5u64 {
            d.on_timer(k * 55 * US);
            assert_eq!(d.stages(), (0, k as u32));
            assert_eq!(d.target_bps(), rt, "R_T holds during fast recovery");
            let new_gap = rt - d.rate_bps();
            assert!((new_gap - gap / 2.0).abs() < 1.0, "stage {k}");
            gap = new_gap;
        }
        assert!(gap < LINE / 2.0 / 31.0);
    }

    #[test]
    fn timer_stages_go_from_fast_recovery_to_additive_increase() {
        // Three cuts leave R_T far below line rate, so no increase here is capped.
        let cfg = DcqcnConfig::new(LINE);
        let mut d = Dcqcn::new(cfg);
        d.on_cnp(0);
        d.on_cnp(100 * US);
        d.on_cnp(200 * US);
        let rt0 = d.target_bps();
        let start = 200 * US;
        for k in 1..=5 {
            d.on_timer(start + k * 55 * US);
        }
        assert_eq!(d.target_bps(), rt0);
        d.on_timer(start + 6 * 55 * US);
        assert_eq!(d.stages(), (0, 6));
        assert_eq!(d.target_bps(), rt0 + cfg.rate_ai_bps);
        d.on_timer(start + 7 * 55 * US);
        assert_eq!(d.target_bps(), rt0 + 2.0 * cfg.rate_ai_bps);
        // The timer alone never reaches hyper increase: BC stays at 0.
        d.on_timer(start + 20 * 55 * US);
        assert_eq!(d.target_bps(), rt0 + 15.0 * cfg.rate_ai_bps);
    }

    #[test]
    fn byte_counter_stages_and_hyper_increase_when_both_pass_f() {
        let mut cfg = DcqcnConfig::new(LINE);
        cfg.byte_counter = 1_000_000;
        let mut d = Dcqcn::new(cfg);
        d.on_cnp(0);
        d.on_cnp(100 * US);
        d.on_cnp(200 * US);
        let rt0 = d.target_bps();
        // Byte counter alone: 5 stages of fast recovery, then additive increase.
        d.on_sent(200 * US, 5 * 1_000_000 + 999_999);
        assert_eq!(d.stages(), (5, 0));
        assert_eq!(d.target_bps(), rt0);
        d.on_sent(200 * US, 1);
        assert_eq!(d.stages(), (6, 0));
        assert_eq!(d.target_bps(), rt0 + cfg.rate_ai_bps);
        // Timer to stage 6 as well: min(BC, T) = 6 > F, hyper increase with i = 1.
        for k in 1..=5 {
            d.on_timer(200 * US + k * 55 * US);
        }
        let rt = d.target_bps();
        assert_eq!(rt, rt0 + 6.0 * cfg.rate_ai_bps);
        d.on_timer(200 * US + 6 * 55 * US);
        assert_eq!(d.stages(), (6, 6));
        assert_eq!(d.target_bps(), rt + cfg.rate_hai_bps);
        d.on_sent(0, 1_000_000);
        assert_eq!(d.stages(), (7, 6));
        assert_eq!(d.target_bps(), rt + 2.0 * cfg.rate_hai_bps);
        d.on_timer(200 * US + 7 * 55 * US);
        assert_eq!(d.target_bps(), rt + 4.0 * cfg.rate_hai_bps, "i = 2");
    }

    #[test]
    fn recovery_reaches_line_rate_and_the_increase_timer_stops() {
        let mut d = rp();
        d.on_cnp(0);
        run_timers(&mut d, 100_000 * US);
        assert_eq!(d.rate_bps(), LINE);
        assert_eq!(d.target_bps(), LINE);
        assert!(d.increase_deadline.is_none());
        // The α timer runs on until α is negligible, then stops too.
        run_timers(&mut d, 10_000_000 * US);
        assert_eq!(d.timer_deadline(), None);
    }

    #[test]
    fn rates_stay_above_the_minimum() {
        let mut d = rp();
        for k in 0..200 {
            d.on_cnp(k * 10 * US);
        }
        assert!(d.rate_bps() >= d.config().min_rate_bps);
        assert!(d.rate_bps() < 2.0 * d.config().min_rate_bps);
    }

    fn mellanox() -> Dcqcn {
        Dcqcn::new(DcqcnConfig::hpcc_artifact(LINE))
    }

    #[test]
    fn without_a_timer_increase_between_them_cuts_keep_the_target() {
        let mut d = mellanox();
        let step = d.config().rate_decrease_interval;
        d.on_cnp(0);
        d.on_cnp(step);
        d.on_cnp(2 * step);
        // α stays near 1: three halvings, and R_T still the line rate.
        assert!(d.rate_bps() < LINE / 7.0, "{}", d.rate_bps());
        assert_eq!(d.target_bps(), LINE);
        // The first timer event (fast recovery, F = 1) goes halfway back to it ...
        let before = d.rate_bps();
        let t = 2 * step + d.config().increase_timer;
        run_timers(&mut d, t);
        assert_eq!(d.stages(), (0, 1));
        assert!((d.rate_bps() - (before + LINE) / 2.0).abs() < 1.0);
        // ... and a cut after it clamps the target to the rate it had reached.
        let reached = d.rate_bps();
        d.on_cnp(t + 1);
        assert_eq!(d.target_bps(), reached);
        // The paper's rule clamps at every cut.
        let mut p = rp();
        p.on_cnp(0);
        p.on_cnp(step);
        assert_eq!(p.target_bps(), LINE / 2.0);
    }

    #[test]
    fn the_timer_rule_recovers_then_adds_once_then_hyper_increases() {
        let mut cfg = DcqcnConfig::hpcc_artifact(LINE);
        cfg.fast_recovery_stages = 2;
        let t = cfg.increase_timer;
        let mut d = Dcqcn::new(cfg);
        // A cut, one timer event, then a cut that clamps R_T below the line rate.
        d.on_cnp(0);
        run_timers(&mut d, t);
        d.on_cnp(t + 1);
        let rt0 = d.target_bps();
        assert!(rt0 < LINE);
        let targets: Vec<f64> = (1..=5)
            .map(|k| {
                run_timers(&mut d, t + 1 + k * t);
                d.target_bps() - rt0
            })
            .collect();
        let (ai, hai) = (cfg.rate_ai_bps, cfg.rate_hai_bps);
        let expect = [0.0, 0.0, ai, ai + hai, ai + 2.0 * hai];
        for (got, want) in targets.iter().zip(expect) {
            assert!((got - want).abs() < 1e-3, "{targets:?} against {expect:?}");
        }
        // Bytes sent never advance a stage under the timer rule.
        let stages = d.stages();
        d.on_sent(0, 1 << 40);
        assert_eq!(d.stages(), stages);
    }

    #[test]
    fn the_notification_point_sends_at_most_one_cnp_per_interval() {
        let mut np = CnpPacer::default();
        assert!(np.on_marked(0));
        assert!(!np.on_marked(1));
        assert!(!np.on_marked(50 * US - 1));
        assert!(np.on_marked(50 * US));
        assert!(!np.on_marked(60 * US));
        assert!(np.on_marked(200 * US));
        let sent = (0..1000u64)
            .filter(|k| np.on_marked(300 * US + k * US))
            .count();
        assert_eq!(sent, 20);
    }
}
