//! The RoCE transports' settings of a `[transports.NAME]` entry (cc = "roce", "dcqcn",
//! "timely", "hpcc"): the queue pairs' settings and the controller's constants, each
//! checked and naming its field. Fields of a controller the entry does not run are
//! refused by `transports.rs`'s "applies only to" rule (`CcSpec::info().params`).

use super::checker::Checker;
use super::schema::{DcqcnClampSpec, DcqcnIncreaseSpec, PresetSpec, RetransmitSpec, TransportSpec};
use crate::time::SimTime;
use crate::transport::rate::dcqcn::{IncreaseRule, TargetClamp};
use crate::transport::roce::plan::{
    DcqcnParams, HpccParams, Preset, RoceCc, RoceSettings, TimelyParams,
};
use crate::transport::roce::{Retransmit, DEFAULT_ACK_EVERY, DEFAULT_PAYLOAD, DEFAULT_RTO};

/// Every RoCE field an entry may set, with whether it is set (for the "applies only to"
/// rule).
pub(super) fn fields(t: &TransportSpec) -> Vec<(&'static str, bool)> {
    vec![
        ("retransmit", t.retransmit.is_some()),
        ("ack_every", t.ack_every.is_some()),
        ("window", t.window.is_some()),
        ("window_bytes", t.window_bytes.is_some()),
        ("payload_bytes", t.payload_bytes.is_some()),
        ("rto_us", t.rto_us.is_some()),
        ("retransmit_timeout", t.retransmit_timeout.is_some()),
        ("cnp_interval_us", t.cnp_interval_us.is_some()),
        ("base_rtt_us", t.base_rtt_us.is_some()),
        ("int", t.int.is_some()),
        ("dcqcn_preset", t.dcqcn_preset.is_some()),
        ("dcqcn_g", t.dcqcn_g.is_some()),
        ("dcqcn_alpha_init", t.dcqcn_alpha_init.is_some()),
        ("dcqcn_alpha_timer_us", t.dcqcn_alpha_timer_us.is_some()),
        (
            "dcqcn_increase_timer_us",
            t.dcqcn_increase_timer_us.is_some(),
        ),
        (
            "dcqcn_byte_counter_bytes",
            t.dcqcn_byte_counter_bytes.is_some(),
        ),
        (
            "dcqcn_fast_recovery_stages",
            t.dcqcn_fast_recovery_stages.is_some(),
        ),
        ("dcqcn_rai_mbps", t.dcqcn_rai_mbps.is_some()),
        ("dcqcn_rhai_mbps", t.dcqcn_rhai_mbps.is_some()),
        (
            "dcqcn_rate_decrease_interval_us",
            t.dcqcn_rate_decrease_interval_us.is_some(),
        ),
        ("dcqcn_min_rate_mbps", t.dcqcn_min_rate_mbps.is_some()),
        ("dcqcn_increase", t.dcqcn_increase.is_some()),
        ("dcqcn_clamp_target", t.dcqcn_clamp_target.is_some()),
        ("timely_alpha", t.timely_alpha.is_some()),
        ("timely_beta", t.timely_beta.is_some()),
        ("timely_delta_mbps", t.timely_delta_mbps.is_some()),
        ("timely_t_low_us", t.timely_t_low_us.is_some()),
        ("timely_t_high_us", t.timely_t_high_us.is_some()),
        ("timely_min_rtt_us", t.timely_min_rtt_us.is_some()),
        ("timely_hai_threshold", t.timely_hai_threshold.is_some()),
        ("timely_min_rate_mbps", t.timely_min_rate_mbps.is_some()),
        ("timely_once_per_rtt", t.timely_once_per_rtt.is_some()),
        ("hpcc_preset", t.hpcc_preset.is_some()),
        ("hpcc_eta", t.hpcc_eta.is_some()),
        ("hpcc_max_stage", t.hpcc_max_stage.is_some()),
        ("hpcc_wai_bytes", t.hpcc_wai_bytes.is_some()),
        ("hpcc_min_rate_mbps", t.hpcc_min_rate_mbps.is_some()),
    ]
}

/// Field checks with the entry's path.
struct Fields<'a> {
    path: &'a str,
    c: &'a mut Checker,
}

impl Fields<'_> {
    fn at(&self, field: &str) -> String {
        format!("{}.{field}", self.path)
    }
    /// An optional time in µs that must be positive.
    fn time(&mut self, field: &str, v: Option<f64>) -> Option<SimTime> {
        v.map(|x| self.c.time(&self.at(field), Some(x), 1, true))
    }
    /// An optional rate in Mb/s, positive; in bits/s.
    fn mbps(&mut self, field: &str, v: Option<f64>) -> Option<f64> {
        v.map(|x| {
            self.c.positive(&self.at(field), x);
            x * 1e6
        })
    }
    /// An optional number in (0, 1] (`closed_low`: [0, 1]).
    fn unit(&mut self, field: &str, v: Option<f64>, closed_low: bool) -> Option<f64> {
        v.inspect(|&x| {
            let ok = x.is_finite() && x <= 1.0 && (x > 0.0 || (closed_low && x == 0.0));
            if !ok {
                let low = if closed_low { "[0, 1]" } else { "(0, 1]" };
                self.c
                    .err(&self.at(field), format!("must be in {low}, got {x}"));
            }
        })
    }
    fn count(&mut self, field: &str, v: Option<u64>, min: u64) -> Option<u64> {
        v.inspect(|&x| self.c.at_least(&self.at(field), x, min))
    }
}

fn preset(p: Option<PresetSpec>) -> Preset {
    match p {
        None | Some(PresetSpec::Paper) => Preset::Paper,
        Some(PresetSpec::HpccArtifact) => Preset::HpccArtifact,
    }
}

/// The controller of a RoCE entry with the constants it sets, checked; `cc` is the
/// entry's controller (`CcKind::roce`) with its constants at their defaults.
pub(super) fn roce_cc(t: &TransportSpec, cc: RoceCc, path: &str, c: &mut Checker) -> RoceCc {
    let mut f = Fields { path, c };
    match cc {
        RoceCc::LineRate => RoceCc::LineRate,
        RoceCc::Dcqcn(_) => {
            let p = DcqcnParams {
                preset: preset(t.dcqcn_preset),
                g: f.unit("dcqcn_g", t.dcqcn_g, false),
                alpha_init: f.unit("dcqcn_alpha_init", t.dcqcn_alpha_init, true),
                alpha_timer: f.time("dcqcn_alpha_timer_us", t.dcqcn_alpha_timer_us),
                increase_timer: f.time("dcqcn_increase_timer_us", t.dcqcn_increase_timer_us),
                byte_counter: f.count("dcqcn_byte_counter_bytes", t.dcqcn_byte_counter_bytes, 1),
                fast_recovery_stages: f
                    .count(
                        "dcqcn_fast_recovery_stages",
                        t.dcqcn_fast_recovery_stages.map(u64::from),
                        0,
                    )
                    .map(|x| x as u32),
                rate_ai_bps: f.mbps("dcqcn_rai_mbps", t.dcqcn_rai_mbps),
                rate_hai_bps: f.mbps("dcqcn_rhai_mbps", t.dcqcn_rhai_mbps),
                rate_decrease_interval: f.time(
                    "dcqcn_rate_decrease_interval_us",
                    t.dcqcn_rate_decrease_interval_us,
                ),
                min_rate_bps: f.mbps("dcqcn_min_rate_mbps", t.dcqcn_min_rate_mbps),
                increase_rule: t.dcqcn_increase.map(|r| match r {
                    DcqcnIncreaseSpec::Paper => IncreaseRule::Paper,
                    DcqcnIncreaseSpec::Timer => IncreaseRule::Timer,
                }),
                target_clamp: t.dcqcn_clamp_target.map(|c| match c {
                    DcqcnClampSpec::EveryCut => TargetClamp::EveryCut,
                    DcqcnClampSpec::AfterTimerIncrease => TargetClamp::AfterTimerIncrease,
                }),
            };
            // The timer rule has no byte counter: a setting for it would do nothing. (The
            // rule, the preset's or set, does not depend on the line rate given here.)
            if t.dcqcn_byte_counter_bytes.is_some()
                && p.config(1e9).increase_rule == IncreaseRule::Timer
            {
                f.c.err(
                    &f.at("dcqcn_byte_counter_bytes"),
                    "is not used by the timer increase rule (dcqcn_increase = \"timer\", or the \
                     hpcc-artifact preset's); give dcqcn_increase = \"paper\" to use a byte counter"
                        .into(),
                );
            }
            RoceCc::Dcqcn(p)
        }
        RoceCc::Timely(_) => {
            let p = TimelyParams {
                ewma_alpha: f.unit("timely_alpha", t.timely_alpha, false),
                beta: f.unit("timely_beta", t.timely_beta, false),
                delta_bps: f.mbps("timely_delta_mbps", t.timely_delta_mbps),
                t_low: f.time("timely_t_low_us", t.timely_t_low_us),
                t_high: f.time("timely_t_high_us", t.timely_t_high_us),
                min_rtt: f.time("timely_min_rtt_us", t.timely_min_rtt_us),
                hai_threshold: f
                    .count(
                        "timely_hai_threshold",
                        t.timely_hai_threshold.map(u64::from),
                        1,
                    )
                    .map(|x| x as u32),
                min_rate_bps: f.mbps("timely_min_rate_mbps", t.timely_min_rate_mbps),
                once_per_rtt: t.timely_once_per_rtt,
            };
            let d = crate::transport::rate::timely::defaults::T_LOW;
            let (lo, hi) = (
                p.t_low.unwrap_or(d),
                p.t_high
                    .unwrap_or(crate::transport::rate::timely::defaults::T_HIGH),
            );
            if lo >= hi {
                f.c.err(
                    &f.at("timely_t_high_us"),
                    "must be above timely_t_low_us".into(),
                );
            }
            RoceCc::Timely(p)
        }
        RoceCc::Hpcc(_) => {
            if t.int == Some(false) {
                f.c.err(
                    &f.at("int"),
                    "HPCC reads the INT records its data collects: int must be true".into(),
                );
            }
            let p = HpccParams {
                preset: preset(t.hpcc_preset),
                eta: f.unit("hpcc_eta", t.hpcc_eta, false),
                max_stage: t.hpcc_max_stage,
                w_ai_bytes: t
                    .hpcc_wai_bytes
                    .inspect(|&x| f.c.positive(&f.at("hpcc_wai_bytes"), x)),
                min_rate_bps: f.mbps("hpcc_min_rate_mbps", t.hpcc_min_rate_mbps),
            };
            RoceCc::Hpcc(p)
        }
    }
}

/// The queue pairs' settings of a RoCE entry, checked; `ecn`: data goes ECN-capable.
pub(super) fn roce_settings(
    t: &TransportSpec,
    cc: &RoceCc,
    ecn: bool,
    path: &str,
    c: &mut Checker,
) -> RoceSettings {
    if t.int == Some(true) && !cc.int() {
        c.err(
            &format!("{path}.int"),
            format!(
                "INT is HPCC's: only cc = hpcc stamps it, not {}",
                t.cc.info().name
            ),
        );
    }
    let mut f = Fields { path, c };
    let payload = t.payload_bytes.unwrap_or(DEFAULT_PAYLOAD);
    // A packet's wire size must fit the descriptor's 16 bits with its headers.
    if !(1..=9000).contains(&payload) {
        f.c.err(
            &f.at("payload_bytes"),
            format!("must be between 1 and 9000 (a jumbo frame), got {payload}"),
        );
    }
    let ack_every = t.ack_every.unwrap_or(DEFAULT_ACK_EVERY);
    f.count("ack_every", Some(ack_every as u64), 1);
    let window_bytes = f.count("window_bytes", t.window_bytes, 1);
    if window_bytes.is_some() && cc.int() {
        f.c.err(
            &f.at("window_bytes"),
            "HPCC's window is its own: window_bytes applies to dcqcn, timely and roce".into(),
        );
    }
    let retransmit = match t.retransmit.unwrap_or(RetransmitSpec::GoBackN) {
        RetransmitSpec::GoBackN => Retransmit::GoBackN,
        RetransmitSpec::Selective => Retransmit::Selective,
        RetransmitSpec::None => Retransmit::None,
    };
    if retransmit == Retransmit::None && t.rto_us.is_some() {
        f.c.err(
            &f.at("rto_us"),
            "retransmit = \"none\" sends nothing again: no timeout applies".into(),
        );
    }
    let timer = t.retransmit_timeout.unwrap_or(true);
    if retransmit == Retransmit::None && t.retransmit_timeout.is_some() {
        f.c.err(
            &f.at("retransmit_timeout"),
            "retransmit = \"none\" sends nothing again: there is no timeout to turn on or off"
                .into(),
        );
    } else if !timer && t.rto_us.is_some() {
        f.c.err(
            &f.at("rto_us"),
            "retransmit_timeout = false has no timer: give one or the other".into(),
        );
    }
    RoceSettings {
        payload: payload.clamp(1, 9000),
        retransmit,
        ack_every: ack_every.max(1),
        window: t.window.unwrap_or(cc.int()),
        window_bytes,
        rto: timer.then(|| f.time("rto_us", t.rto_us).unwrap_or(DEFAULT_RTO)),
        cnp_interval: f
            .time("cnp_interval_us", t.cnp_interval_us)
            .unwrap_or(crate::transport::rate::dcqcn::paper::CNP_INTERVAL),
        base_rtt: f.time("base_rtt_us", t.base_rtt_us),
        ecn,
    }
}

/// RWNDQ switches rewrite TCP's receive window, which RoCE packets do not have: a
/// traffic entry on a RoCE transport in a fabric with RWNDQ ports is refused.
pub(super) fn check_rwndq(
    s: &super::Scenario,
    tiers: &[crate::net::network::LinkParams],
    transports: &[super::TransportPlan],
    c: &mut Checker,
) {
    if !tiers.iter().any(|t| t.rwndq.is_some()) {
        return;
    }
    for (i, t) in s.traffic.iter().enumerate() {
        let roce = transports
            .iter()
            .find(|p| p.name == t.transport)
            .is_some_and(|p| p.roce.is_some());
        if roce {
            c.err(
                &format!("traffic[{i}].transport"),
                format!(
                    "transport {:?} is RoCE, which has no TCP window for RWNDQ's switches to rewrite: turn rwndq off or use a TCP transport",
                    t.transport
                ),
            );
        }
    }
}

/// A RoCE transport that never retransmits (`retransmit = "none"`), or has no timer to
/// resend a lost tail (`retransmit_timeout = false`), must run where no packet is lost:
/// on a fabric with PFC on every tier (no loss to a full queue) and without faults.
pub(super) fn check_lossless(
    s: &super::Scenario,
    transports: &[super::TransportPlan],
    c: &mut Checker,
) {
    let mut names: Vec<&str> = s.traffic.iter().map(|t| t.transport.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    for name in names {
        let Some(r) = transports
            .iter()
            .find(|p| p.name == name)
            .and_then(|p| p.roce.as_ref())
        else {
            continue;
        };
        // What would be lost for good, the field that says so, and the way out.
        let (field, what, instead) = if r.retransmit == Retransmit::None {
            (
                "retransmit",
                "retransmit = \"none\" never resends a lost packet",
                "use retransmit = \"go-back-n\" or \"selective\"",
            )
        } else if r.rto.is_none() {
            (
                "retransmit_timeout",
                "retransmit_timeout = false never resends a lost tail (only a later packet's NAK recovers a loss)",
                "give retransmit_timeout = true",
            )
        } else {
            continue;
        };
        let field = format!("transports.{name}.{field}");
        if s.network.pfc.is_none() {
            c.err(
                &field,
                format!("{what}, and this fabric has no PFC ([network.pfc]) to keep it from losing any: turn PFC on, or {instead}"),
            );
            continue;
        }
        for (tier, spec) in &s.network.tiers {
            if spec.pfc == Some(false) {
                c.err(
                    &field,
                    format!("{what}, and PFC is off on tier {tier:?} (network.tiers.{tier}.pfc = false): turn it on there, or {instead}"),
                );
            }
        }
        // Faults lose packets whatever PFC does.
        if let Some((i, fault)) = s.faults.iter().enumerate().next() {
            let kind = super::faults::kind_name(fault.kind);
            c.err(
                &field,
                format!("{what}, and faults[{i}] (kind = \"{kind}\") loses packets that PFC cannot hold back: {instead}"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::plan::tests::{errors, GOOD};
    use super::super::Plan;
    use super::*;
    use std::path::Path;

    /// GOOD with its flows on transport `qp`, defined by `fields`.
    fn with(fields: &str) -> String {
        GOOD.replace("transport = \"dctcp\"", "transport = \"qp\"")
            .replace(
                "ecn_k_packets = 20",
                "ecn_k_packets = 20\n[transports.qp]\n",
            )
            .replacen(
                "[transports.qp]\n",
                &format!("[transports.qp]\n{fields}\n"),
                1,
            )
    }

    fn qp(p: &Plan) -> &super::super::TransportPlan {
        p.transports.iter().find(|t| t.name == "qp").unwrap()
    }

    #[test]
    fn never_retransmitting_needs_pfc_on_every_tier() {
        let lossy = with("cc = \"roce\"\nretransmit = \"none\"");
        assert!(errors(&lossy).contains(
            "transports.qp.retransmit: retransmit = \"none\" never resends a lost packet, and this fabric has no PFC"
        ));
        let lossless =
            format!("{lossy}\n[network.buffer]\nbytes = 4000000\n[network.pfc]\nalpha = 0.125\n");
        assert!(Plan::from_toml(&lossless, Path::new(".")).is_ok());
        let tiers = Plan::from_toml(&lossless, Path::new("."))
            .unwrap()
            .topology
            .kind
            .tiers();
        let off = format!("{lossless}[network.tiers.{}]\npfc = false\n", tiers[0]);
        assert!(errors(&off).contains(&format!(
            "transports.qp.retransmit: retransmit = \"none\" never resends a lost packet, and PFC is off on tier \"{}\"",
            tiers[0]
        )));
    }

    #[test]
    fn roce_transports_resolve_with_their_defaults() {
        let p = Plan::from_toml(&with("cc = \"hpcc\""), Path::new(".")).unwrap();
        let t = qp(&p);
        let s = t.roce.expect("a RoCE transport");
        assert_eq!(s.payload, DEFAULT_PAYLOAD);
        assert_eq!(s.retransmit, Retransmit::GoBackN);
        assert!(s.window, "HPCC's window is on by default");
        assert!(!s.ecn);
        assert_eq!(t.cc.roce(), Some(RoceCc::Hpcc(HpccParams::default())));
        let p = Plan::from_toml(
            &with("cc = \"dcqcn\"\ndcqcn_preset = \"hpcc-artifact\"\ndcqcn_g = 0.5"),
            Path::new("."),
        )
        .unwrap();
        let t = qp(&p);
        assert!(t.roce.unwrap().ecn, "DCQCN's data is ECN-capable");
        assert!(!t.roce.unwrap().window);
        let Some(RoceCc::Dcqcn(d)) = t.cc.roce() else {
            panic!("{:?}", t.cc)
        };
        let cfg = d.config(100e9);
        assert_eq!(cfg.g, 0.5);
        assert_eq!(
            cfg.increase_timer,
            crate::transport::rate::dcqcn::artifact::INCREASE_TIMER
        );
        assert_eq!(cfg.rate_ai_bps, 20e6, "5·bw/25 Mb/s at 100 Gb/s");
        assert_eq!(cfg.increase_rule, IncreaseRule::Timer);
        assert_eq!(cfg.target_clamp, TargetClamp::AfterTimerIncrease);
        // Each rule can be set on its own, over the preset's.
        let p = Plan::from_toml(
            &with("cc = \"dcqcn\"\ndcqcn_increase = \"timer\"\ndcqcn_clamp_target = \"after-timer-increase\""),
            Path::new("."),
        )
        .unwrap();
        let Some(RoceCc::Dcqcn(d)) = qp(&p).cc.roce() else {
            panic!("not DCQCN")
        };
        let cfg = d.config(100e9);
        assert_eq!(
            (cfg.increase_rule, cfg.target_clamp, cfg.increase_timer),
            (
                IncreaseRule::Timer,
                TargetClamp::AfterTimerIncrease,
                crate::transport::rate::dcqcn::paper::INCREASE_TIMER
            )
        );
    }

    #[test]
    fn bad_roce_settings_name_their_field() {
        let e = errors(&with(
            "cc = \"dcqcn\"\ndcqcn_g = 0\ndcqcn_rai_mbps = -1\ndcqcn_alpha_timer_us = 0\nack_every = 0\npayload_bytes = 0",
        ));
        for want in [
            "transports.qp.dcqcn_g: must be in (0, 1], got 0",
            "transports.qp.dcqcn_rai_mbps: must be a positive number",
            "transports.qp.dcqcn_alpha_timer_us: must be a positive number",
            "transports.qp.ack_every: must be at least 1, got 0",
            "transports.qp.payload_bytes: must be between 1 and 9000",
        ] {
            assert!(e.contains(want), "{want} not in {e}");
        }
        let e = errors(&with(
            "cc = \"dcqcn\"\ndcqcn_preset = \"hpcc-artifact\"\ndcqcn_byte_counter_bytes = 1000000",
        ));
        assert!(
            e.contains(
                "transports.qp.dcqcn_byte_counter_bytes: is not used by the timer increase rule"
            ),
            "{e}"
        );
        let e = errors(&with("cc = \"dcqcn\"\ndcqcn_increase = \"hyper\""));
        assert!(e.contains("dcqcn_increase") && e.contains("hyper"), "{e}");
        let e = errors(&with("cc = \"hpcc\"\nhpcc_eta = 1.5"));
        assert!(
            e.contains("transports.qp.hpcc_eta: must be in (0, 1], got 1.5"),
            "{e}"
        );
        let e = errors(&with("cc = \"timely\"\ntimely_t_low_us = 600"));
        assert!(
            e.contains("transports.qp.timely_t_high_us: must be above"),
            "{e}"
        );
        let e = errors(&with("cc = \"dcqcn\"\nint = true"));
        assert!(e.contains("transports.qp.int: INT is HPCC's"), "{e}");
        let e = errors(&with("cc = \"hpcc\"\nint = false"));
        assert!(e.contains("transports.qp.int: HPCC reads"), "{e}");
        let e = errors(&with("cc = \"roce\"\nretransmit_timeout = false"));
        assert!(
            e.contains("transports.qp.retransmit_timeout: retransmit_timeout = false never resends a lost tail (only a later packet's NAK recovers a loss), and this fabric has no PFC"),
            "{e}"
        );
        let e = errors(&with(
            "cc = \"roce\"\nretransmit_timeout = false\nrto_us = 100",
        ));
        assert!(
            e.contains("transports.qp.rto_us: retransmit_timeout = false has no timer"),
            "{e}"
        );
        let lossy = format!(
            "{}\n[network.buffer]\nbytes = 4000000\n[network.pfc]\n[[faults]]\nkind = \"loss\"\ntier = \"host\"\nprobability = 0.01\n",
            with("cc = \"roce\"\nretransmit_timeout = false")
        );
        let e = errors(&lossy);
        assert!(
            e.contains("transports.qp.retransmit_timeout: retransmit_timeout = false never resends a lost tail (only a later packet's NAK recovers a loss), and faults[0] (kind = \"loss\") loses packets that PFC cannot hold back"),
            "{e}"
        );
        let e = errors(&with("cc = \"roce\"\nretransmit = \"none\"\nrto_us = 100"));
        assert!(
            e.contains("transports.qp.rto_us: retransmit = \"none\""),
            "{e}"
        );
        // Another controller's constant, and a RoCE field on a TCP transport.
        let e = errors(&with("cc = \"timely\"\nhpcc_eta = 0.9"));
        assert!(
            e.contains("transports.qp.hpcc_eta: applies only to cc = hpcc, not timely"),
            "{e}"
        );
        let e = errors(&with("cc = \"dctcp\"\nack_every = 2"));
        assert!(
            e.contains("transports.qp.ack_every: applies only to cc = roce or dcqcn or timely or hpcc, not dctcp"),
            "{e}"
        );
        let e = errors(&with("cc = \"roce\"\nsubflows = 2"));
        assert!(
            e.contains("transports.qp.subflows: cc = roce runs on a single path"),
            "{e}"
        );
    }

    #[test]
    fn roce_is_refused_at_flow_level_and_with_rwndq() {
        let flow = format!("level = \"flow\"\n{}", with("cc = \"roce\""));
        let e = errors(&flow);
        assert!(e.contains("is a RoCE transport (cc = roce)"), "{e}");
        let rwndq = with("cc = \"roce\"").replace(
            "ecn_k_packets = 20",
            "ecn_k_packets = 20\nrwndq = { preset = \"ns2\" }",
        );
        let e = errors(&rwndq);
        assert!(
            e.contains("traffic[0].transport: transport \"qp\" is RoCE"),
            "{e}"
        );
    }
}
