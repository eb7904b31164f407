//! A RoCE transport as a scenario resolves it: the controller with the constants the
//! scenario set (the others at their defaults, which depend on the NIC's line rate and
//! the network's base RTT, so they are filled in when a connection is built), and the
//! queue pairs' settings.

use super::{Rc, Retransmit, RoceConfig};
use crate::time::{SimTime, PS_PER_S};
use crate::transport::rate::dcqcn::{IncreaseRule, TargetClamp};
use crate::transport::rate::{DcqcnConfig, HpccConfig, TimelyConfig};

/// Which published setting a controller's unset constants take.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Preset {
    /// The controller's paper.
    #[default]
    Paper,
    /// The HPCC authors' public simulator (`run.py`'s setting for the paper's
    /// comparisons).
    HpccArtifact,
}

/// DCQCN's constants as set (`None`: the preset's).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DcqcnParams {
    pub preset: Preset,
    pub g: Option<f64>,
    pub alpha_init: Option<f64>,
    pub alpha_timer: Option<SimTime>,
    pub increase_timer: Option<SimTime>,
    pub byte_counter: Option<u64>,
    pub fast_recovery_stages: Option<u32>,
    pub rate_ai_bps: Option<f64>,
    pub rate_hai_bps: Option<f64>,
    pub rate_decrease_interval: Option<SimTime>,
    pub min_rate_bps: Option<f64>,
    pub increase_rule: Option<IncreaseRule>,
    pub target_clamp: Option<TargetClamp>,
}

impl DcqcnParams {
    pub fn config(&self, line_bps: f64) -> DcqcnConfig {
        let base = match self.preset {
            Preset::Paper => DcqcnConfig::new(line_bps),
            Preset::HpccArtifact => DcqcnConfig::hpcc_artifact(line_bps),
        };
        DcqcnConfig {
            line_rate_bps: line_bps,
            min_rate_bps: self.min_rate_bps.unwrap_or(base.min_rate_bps),
            g: self.g.unwrap_or(base.g),
            alpha_init: self.alpha_init.unwrap_or(base.alpha_init),
            alpha_timer: self.alpha_timer.unwrap_or(base.alpha_timer),
            increase_timer: self.increase_timer.unwrap_or(base.increase_timer),
            byte_counter: self.byte_counter.unwrap_or(base.byte_counter),
            fast_recovery_stages: self
                .fast_recovery_stages
                .unwrap_or(base.fast_recovery_stages),
            rate_ai_bps: self.rate_ai_bps.unwrap_or(base.rate_ai_bps),
            rate_hai_bps: self.rate_hai_bps.unwrap_or(base.rate_hai_bps),
            rate_decrease_interval: self
                .rate_decrease_interval
                .unwrap_or(base.rate_decrease_interval),
            increase_rule: self.increase_rule.unwrap_or(base.increase_rule),
            target_clamp: self.target_clamp.unwrap_or(base.target_clamp),
        }
    }
}

/// TIMELY's constants as set (`None`: the defaults).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TimelyParams {
    pub ewma_alpha: Option<f64>,
    pub beta: Option<f64>,
    pub delta_bps: Option<f64>,
    pub t_low: Option<SimTime>,
    pub t_high: Option<SimTime>,
    pub min_rtt: Option<SimTime>,
    pub hai_threshold: Option<u32>,
    pub min_rate_bps: Option<f64>,
    pub once_per_rtt: Option<bool>,
}

impl TimelyParams {
    pub fn config(&self, line_bps: f64) -> TimelyConfig {
        let d = TimelyConfig::new(line_bps);
        TimelyConfig {
            ewma_alpha: self.ewma_alpha.unwrap_or(d.ewma_alpha),
            beta: self.beta.unwrap_or(d.beta),
            delta_bps: self.delta_bps.unwrap_or(d.delta_bps),
            t_low: self.t_low.unwrap_or(d.t_low),
            t_high: self.t_high.unwrap_or(d.t_high),
            min_rtt: self.min_rtt.unwrap_or(d.min_rtt),
            hai_threshold: self.hai_threshold.unwrap_or(d.hai_threshold),
            min_rate_bps: self.min_rate_bps.unwrap_or(d.min_rate_bps),
            once_per_rtt: self.once_per_rtt.unwrap_or(d.once_per_rtt),
            ..d
        }
    }
}

/// HPCC's constants as set (`None`: the preset's).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HpccParams {
    pub preset: Preset,
    pub eta: Option<f64>,
    pub max_stage: Option<u32>,
    pub w_ai_bytes: Option<f64>,
    pub min_rate_bps: Option<f64>,
}

impl HpccParams {
    pub fn config(&self, line_bps: f64, base_rtt: SimTime) -> HpccConfig {
        let base = match self.preset {
            Preset::Paper => HpccConfig::new(line_bps, base_rtt),
            Preset::HpccArtifact => HpccConfig::hpcc_artifact(line_bps, base_rtt),
        };
        HpccConfig {
            eta: self.eta.unwrap_or(base.eta),
            max_stage: self.max_stage.unwrap_or(base.max_stage),
            w_ai_bytes: self.w_ai_bytes.unwrap_or(base.w_ai_bytes),
            min_rate_bps: self.min_rate_bps.unwrap_or(base.min_rate_bps),
            ..base
        }
    }
}

/// A RoCE transport's controller.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RoceCc {
    LineRate,
    Dcqcn(DcqcnParams),
    Timely(TimelyParams),
    Hpcc(HpccParams),
}

impl RoceCc {
    /// Its data packets carry INT (HPCC).
    pub fn int(&self) -> bool {
        match self {
            RoceCc::Hpcc(_) => true,
            RoceCc::LineRate | RoceCc::Dcqcn(_) | RoceCc::Timely(_) => false,
        }
    }

    /// The controller of a queue pair on a NIC of `line_bps` in a network of base RTT
    /// `base_rtt`.
    pub fn build(&self, line_bps: f64, base_rtt: SimTime) -> Rc {
        match self {
            RoceCc::LineRate => Rc::LineRate(line_bps),
            RoceCc::Dcqcn(p) => Rc::dcqcn(p.config(line_bps)),
            RoceCc::Timely(p) => Rc::timely(p.config(line_bps)),
            RoceCc::Hpcc(p) => Rc::hpcc(p.config(line_bps, base_rtt)),
        }
    }
}

/// A RoCE transport's queue-pair settings, as the scenario set them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RoceSettings {
    pub payload: u32,
    pub retransmit: Retransmit,
    pub ack_every: u32,
    pub window: bool,
    /// The fixed window of non-HPCC controllers (`None`: one line-rate BDP of the base RTT).
    pub window_bytes: Option<u64>,
    /// `None`: no retransmission timer (recovery by NAK only).
    pub rto: Option<SimTime>,
    pub cnp_interval: SimTime,
    /// `None`: the network's largest host-to-host base RTT.
    pub base_rtt: Option<SimTime>,
    /// Data goes ECN-capable.
    pub ecn: bool,
}

impl RoceSettings {
    /// The connection's settings on a NIC of `line_bps`, with the network's base RTT
    /// `net_rtt` where the scenario set none; and its header bytes on the wire.
    pub fn config(&self, cc: &RoceCc, line_bps: f64, net_rtt: SimTime) -> RoceConfig {
        let rtt = self.base_rtt.unwrap_or(net_rtt);
        let bdp = (line_bps / 8.0 * rtt as f64 / PS_PER_S as f64).ceil() as u64;
        RoceConfig {
            payload: self.payload,
            header: super::HEADER_BYTES + if cc.int() { super::INT_HEADER_BYTES } else { 0 },
            retransmit: self.retransmit,
            ack_every: self.ack_every,
            window: self.window,
            bdp_bytes: self.window_bytes.unwrap_or(bdp).max(self.payload as u64),
            rto: self.rto,
            cnp_interval: self.cnp_interval,
            ecn: self.ecn,
        }
    }

    /// The base RTT the controller uses.
    pub fn base_rtt(&self, net_rtt: SimTime) -> SimTime {
        self.base_rtt.unwrap_or(net_rtt)
    }
}
