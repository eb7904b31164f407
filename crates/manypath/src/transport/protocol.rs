//! Every congestion controller manypath runs, in one place: the name a scenario gives it
//! (`CcSpec`), what it is (`CcInfo`, one exhaustive table), its resolved parameters
//! (`CcKind`), and the controller a connection's subflows run (`Cc`, built by `build`).
//!
//! Adding a controller: its own file under `cc/` or `mpcc/`, one variant in each enum
//! below, and one arm in each `match` here (the compiler points at every one), then the
//! resolution of its parameters in `scenario/transports.rs`. No `match` over a kind has a
//! catch-all arm, so a forgotten case does not compile rather than run another protocol.

use super::cc::swift::SwiftParams;
use super::cc::{AckEvent, Bbr, CongestionControl, Cubic, Dctcp, RateSample, Reno, Swift, Window};
use super::mpcc::{amp, dcm, xmp, Coupled, Coupling, EcnResponse};
use super::roce::plan::RoceCc;
use crate::time::SimTime;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A transport's congestion controller as a scenario names it (`cc = "..."`).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CcSpec {
    /// NewReno; with `ecn = true`, halves once per window on ECN echoes. With several
    /// subflows: uncoupled MPTCP.
    Reno,
    /// CUBIC (RFC 9438; β = 0.7, C = 0.4, no HyStart); with `ecn = true`, an ECN echo is
    /// a congestion event. With several subflows: uncoupled.
    Cubic,
    /// DCTCP: cwnd·(1−α/2) once per window. With several subflows: uncoupled.
    Dctcp,
    /// MPTCP's linked increase (RFC 6356).
    Lia,
    /// Opportunistic linked increase (Khalili et al.).
    Olia,
    /// LIA increase with DCTCP's per-subflow ECN response.
    Dcm,
    /// XMP: δ-increase, cut by 1/β on ECN.
    Xmp,
    /// AMP: RTT-agnostic increase, cut by 1/β, subflow suppression/release.
    Amp,
    /// MMPTCP: one subflow scattering each packet on a random path, then LIA subflows
    /// after `mmptcp_switch_bytes`.
    Mmptcp,
    /// RoCE at line rate, no congestion control (a RoCE transport, `transport/roce/`).
    Roce,
    /// RoCE with DCQCN (Zhu et al., SIGCOMM 2015): ECN-marked data, CNPs, rate cuts.
    Dcqcn,
    /// RoCE with TIMELY (Mittal et al., SIGCOMM 2015): RTT-gradient rate control.
    Timely,
    /// RoCE with HPCC (Li et al., SIGCOMM 2019): INT-driven window and rate.
    Hpcc,
    /// Swift (Kumar et al., SIGCOMM 2020): delay-based AIMD with a target delay scaled
    /// by the path's hops and the window (flow scaling); paced below one packet.
    /// Single path.
    Swift,
    /// BBR v1 (Cardwell et al., 2016; Linux's tcp_bbr): paced at the estimated
    /// bottleneck bandwidth, window two BDPs. Needs `pacing`. Single path.
    Bbr,
    /// NDP (Handley et al., SIGCOMM 2017, `transport/ndp/`): a first window at line rate,
    /// then receiver-paced PULLs; every packet sprayed on its own path; meant for
    /// switches that trim (`queue.trim`).
    Ndp,
    /// Homa (Montazeri et al., SIGCOMM 2018): messages, receiver-driven grants (SRPT with
    /// overcommitment), switch priorities (`transport/homa/`). Not a TCP connection.
    Homa,
    /// pFabric (Alizadeh et al., SIGCOMM 2013): TCP that starts at one BDP and keeps it
    /// as its largest window, no fast retransmit, a small fixed RTO, 1-byte probes after
    /// repeated timeouts, and every data packet stamped with its flow's remaining bytes
    /// for switches that schedule and drop by them (`queue.pfabric`). Single path.
    Pfabric,
}

/// What a controller is, for the checks and defaults that depend on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CcInfo {
    /// The name scenarios and tables use.
    pub name: &'static str,
    /// Couples its subflows' windows: a connection is multipath even with one subflow,
    /// and has `DEFAULT_SUBFLOWS` unless told otherwise (the others have one, and run
    /// uncoupled on each subflow when given several).
    pub coupled: bool,
    /// Sends ECN-capable data unless the transport says `ecn = false`.
    pub ecn: bool,
    /// Cannot run on several subflows.
    pub single_path_only: bool,
    /// The flow-level model has an equilibrium for it.
    pub flow_level: bool,
    /// Scales by the hops of the connection's path (set up with `CcContext::hops`).
    pub hop_scaled: bool,
    /// Needs a pacing sender (`tcp.pacing`): without it, an error.
    pub needs_pacing: bool,
    /// Paces by default (`tcp.pacing` unless told otherwise).
    pub paced: bool,
    /// The `[transports.NAME]` fields that set its parameters (any other controller's
    /// parameter set on a transport of this kind is an error).
    pub params: &'static [&'static str],
    /// A RoCE transport (`transport/roce/`): a queue pair paced by a NIC rate controller,
    /// not a TCP connection.
    pub roce: bool,
    /// NDP (`transport/ndp/`): receiver-driven, sprayed per packet.
    pub ndp: bool,
}

impl CcSpec {
    /// Every controller, in the order error messages list them.
    pub const ALL: [CcSpec; 18] = [
        CcSpec::Reno,
        CcSpec::Cubic,
        CcSpec::Dctcp,
        CcSpec::Lia,
        CcSpec::Olia,
        CcSpec::Dcm,
        CcSpec::Xmp,
        CcSpec::Amp,
        CcSpec::Mmptcp,
        CcSpec::Roce,
        CcSpec::Dcqcn,
        CcSpec::Timely,
        CcSpec::Hpcc,
        CcSpec::Swift,
        CcSpec::Bbr,
        CcSpec::Ndp,
        CcSpec::Homa,
        CcSpec::Pfabric,
    ];

    pub const fn info(self) -> CcInfo {
        const fn info(
            name: &'static str,
            coupled: bool,
            ecn: bool,
            flow_level: bool,
            params: &'static [&'static str],
        ) -> CcInfo {
            CcInfo {
                name,
                coupled,
                ecn,
                single_path_only: false,
                flow_level,
                hop_scaled: false,
                needs_pacing: false,
                paced: false,
                params,
                roce: false,
                ndp: false,
            }
        }
        // A RoCE transport: one path, packet level only, its transport settings and
        // its controller's constants.
        const fn roce(name: &'static str, ecn: bool, params: &'static [&'static str]) -> CcInfo {
            CcInfo {
                name,
                coupled: false,
                ecn,
                single_path_only: true,
                flow_level: false,
                hop_scaled: false,
                needs_pacing: false,
                paced: false,
                params,
                roce: true,
                ndp: false,
            }
        }
        match self {
            CcSpec::Reno => info("reno", false, false, true, &[]),
            CcSpec::Cubic => info("cubic", false, false, false, &[]),
            CcSpec::Dctcp => info(
                "dctcp",
                false,
                true,
                false,
                &["dctcp_g", "dctcp_alpha_init"],
            ),
            // LIA's `beta`: the AMP document's "MPTCP with β" (a cut by 1/β on ECN).
            CcSpec::Lia => info("lia", true, false, true, &["beta"]),
            CcSpec::Olia => info("olia", true, false, false, &[]),
            CcSpec::Dcm => info("dcm", true, true, false, &["dctcp_g"]),
            CcSpec::Xmp => info("xmp", true, true, false, &["beta"]),
            CcSpec::Amp => info("amp", true, true, false, &["beta", "amp_gamma", "amp_tau"]),
            CcSpec::Mmptcp => info("mmptcp", true, true, false, &["mmptcp_switch_bytes"]),
            CcSpec::Roce => roce("roce", false, ROCE_PARAMS),
            CcSpec::Dcqcn => roce("dcqcn", true, DCQCN_PARAMS),
            CcSpec::Timely => roce("timely", false, TIMELY_PARAMS),
            CcSpec::Hpcc => roce("hpcc", false, HPCC_PARAMS),
            CcSpec::Swift => CcInfo {
                single_path_only: true,
                hop_scaled: true,
                paced: true,
                ..info("swift", false, false, false, SWIFT_PARAMS)
            },
            CcSpec::Bbr => CcInfo {
                single_path_only: true,
                needs_pacing: true,
                paced: true,
                ..info("bbr", false, false, false, &[])
            },
            CcSpec::Ndp => CcInfo {
                single_path_only: true,
                ndp: true,
                ..info("ndp", false, false, false, NDP_PARAMS)
            },
            CcSpec::Homa => CcInfo {
                single_path_only: true,
                ..info("homa", false, false, false, HOMA_PARAMS)
            },
            CcSpec::Pfabric => CcInfo {
                single_path_only: true,
                ..info("pfabric", false, false, false, PFABRIC_PARAMS)
            },
        }
    }

    /// The controllers that take parameter `field`, by name.
    pub fn taking(field: &str) -> Vec<&'static str> {
        CcSpec::ALL
            .iter()
            .map(|k| k.info())
            .filter(|i| i.params.contains(&field))
            .map(|i| i.name)
            .collect()
    }
}

/// NDP's `[transports.NAME]` fields (shared with the RoCE transports' names).
pub const NDP_PARAMS: &[&str] = &["payload_bytes", "window_bytes", "rto_us", "base_rtt_us"];

/// The settings every RoCE transport takes (its queue pairs' transport).
macro_rules! roce_params {
    ($($extra:literal),*) => {
        &[
            "retransmit",
            "ack_every",
            "window",
            "window_bytes",
            "payload_bytes",
            "rto_us",
            "retransmit_timeout",
            "cnp_interval_us",
            "base_rtt_us",
            $($extra),*
        ]
    };
}
const ROCE_PARAMS: &[&str] = roce_params!();
const DCQCN_PARAMS: &[&str] = roce_params!(
    "dcqcn_preset",
    "dcqcn_g",
    "dcqcn_alpha_init",
    "dcqcn_alpha_timer_us",
    "dcqcn_increase_timer_us",
    "dcqcn_byte_counter_bytes",
    "dcqcn_fast_recovery_stages",
    "dcqcn_rai_mbps",
    "dcqcn_rhai_mbps",
    "dcqcn_rate_decrease_interval_us",
    "dcqcn_min_rate_mbps",
    "dcqcn_increase",
    "dcqcn_clamp_target"
);
const TIMELY_PARAMS: &[&str] = roce_params!(
    "timely_alpha",
    "timely_beta",
    "timely_delta_mbps",
    "timely_t_low_us",
    "timely_t_high_us",
    "timely_min_rtt_us",
    "timely_hai_threshold",
    "timely_min_rate_mbps",
    "timely_once_per_rtt"
);
const HPCC_PARAMS: &[&str] = roce_params!(
    "int",
    "hpcc_preset",
    "hpcc_eta",
    "hpcc_max_stage",
    "hpcc_wai_bytes",
    "hpcc_min_rate_mbps"
);
/// The `[transports.NAME]` fields of Swift's parameters.
pub const SWIFT_PARAMS: &[&str] = &[
    "swift_base_target_us",
    "swift_hop_scale_us",
    "swift_fs_range_us",
    "swift_fs_min_cwnd",
    "swift_fs_max_cwnd",
    "swift_ai",
    "swift_beta",
    "swift_max_mdf",
    "swift_min_cwnd",
    "swift_max_cwnd",
    "swift_retx_reset",
    "swift_host_delay_us",
    "swift_endpoint_target_us",
    "swift_endpoint_ai",
    "swift_endpoint_beta",
];

/// The `[transports.NAME]` fields of Homa's settings.
pub const HOMA_PARAMS: &[&str] = &[
    "homa_rtt_bytes",
    "homa_overcommit",
    "homa_priority_levels",
    "homa_unscheduled_levels",
    "homa_resend_timeout_us",
];

/// The `[transports.NAME]` fields of pFabric's settings (its window and timeouts are
/// the transport's `tcp` table, with pFabric's defaults).
pub const PFABRIC_PARAMS: &[&str] = &["pfabric_probe_timeouts"];

/// A controller with its parameters resolved (defaults filled in, values checked).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CcKind {
    Reno,
    Cubic,
    Dctcp {
        g: f64,
        alpha_init: f64,
    },
    Lia,
    Olia,
    Dcm {
        g: f64,
    },
    Xmp {
        beta: f64,
    },
    Amp {
        beta: f64,
        gamma: u32,
        tau: u32,
    },
    /// MMPTCP: packet scatter on one subflow for `switch_bytes`, then LIA subflows.
    Mmptcp {
        switch_bytes: u64,
    },
    /// The RoCE transports: the controller's constants, resolved against the NIC's line
    /// rate and the base RTT when a connection is built (`transport/roce/plan.rs`).
    Roce(RoceCc),
    /// Swift; `hops` in the parameters is set per connection (`CcContext::hops`).
    Swift(SwiftParams),
    Bbr,
    /// NDP; its settings are the transport's (`TransportPlan::ndp`).
    Ndp,
    /// Homa: its settings are the transport's (`TransportPlan::homa`).
    Homa,
    /// pFabric: NewReno's window growth under its TCP settings (`TcpConfig`), its data
    /// stamped with the flow's remaining bytes.
    Pfabric,
}

impl CcKind {
    pub fn spec(&self) -> CcSpec {
        match self {
            CcKind::Reno => CcSpec::Reno,
            CcKind::Cubic => CcSpec::Cubic,
            CcKind::Dctcp { .. } => CcSpec::Dctcp,
            CcKind::Lia => CcSpec::Lia,
            CcKind::Olia => CcSpec::Olia,
            CcKind::Dcm { .. } => CcSpec::Dcm,
            CcKind::Xmp { .. } => CcSpec::Xmp,
            CcKind::Amp { .. } => CcSpec::Amp,
            CcKind::Mmptcp { .. } => CcSpec::Mmptcp,
            CcKind::Roce(RoceCc::LineRate) => CcSpec::Roce,
            CcKind::Roce(RoceCc::Dcqcn(_)) => CcSpec::Dcqcn,
            CcKind::Roce(RoceCc::Timely(_)) => CcSpec::Timely,
            CcKind::Roce(RoceCc::Hpcc(_)) => CcSpec::Hpcc,
            CcKind::Swift(_) => CcSpec::Swift,
            CcKind::Bbr => CcSpec::Bbr,
            CcKind::Ndp => CcSpec::Ndp,
            CcKind::Homa => CcSpec::Homa,
            CcKind::Pfabric => CcSpec::Pfabric,
        }
    }

    pub fn info(&self) -> CcInfo {
        self.spec().info()
    }

    /// A RoCE transport's controller (`None` for TCP's).
    pub fn roce(&self) -> Option<RoceCc> {
        match *self {
            CcKind::Roce(r) => Some(r),
            CcKind::Reno
            | CcKind::Cubic
            | CcKind::Dctcp { .. }
            | CcKind::Lia
            | CcKind::Olia
            | CcKind::Dcm { .. }
            | CcKind::Xmp { .. }
            | CcKind::Amp { .. }
            | CcKind::Mmptcp { .. }
            | CcKind::Swift(_)
            | CcKind::Bbr
            | CcKind::Ndp
            | CcKind::Homa
            | CcKind::Pfabric => None,
        }
    }

    /// Swift's host delay: the receiving host's processing time per data packet (0 for
    /// the others, whose hosts process at once).
    pub fn host_delay(&self) -> SimTime {
        match *self {
            CcKind::Swift(p) => p.host_delay,
            CcKind::Reno
            | CcKind::Cubic
            | CcKind::Dctcp { .. }
            | CcKind::Lia
            | CcKind::Olia
            | CcKind::Dcm { .. }
            | CcKind::Xmp { .. }
            | CcKind::Amp { .. }
            | CcKind::Mmptcp { .. }
            | CcKind::Roce(_)
            | CcKind::Bbr
            | CcKind::Ndp
            | CcKind::Homa
            | CcKind::Pfabric => 0,
        }
    }

    /// MMPTCP's scatter phase: the bytes its scatter subflow carries alone.
    pub fn scatter_bytes(&self) -> Option<u64> {
        match *self {
            CcKind::Mmptcp { switch_bytes } => Some(switch_bytes),
            CcKind::Reno
            | CcKind::Cubic
            | CcKind::Dctcp { .. }
            | CcKind::Lia
            | CcKind::Olia
            | CcKind::Dcm { .. }
            | CcKind::Xmp { .. }
            | CcKind::Amp { .. }
            | CcKind::Roce(_)
            | CcKind::Swift(_)
            | CcKind::Bbr
            | CcKind::Ndp
            | CcKind::Homa
            | CcKind::Pfabric => None,
        }
    }
}

/// The settings of a connection's controllers that come from its TCP configuration.
#[derive(Clone, Copy, Debug)]
pub struct CcContext {
    pub mss: f64,
    /// `tcp.cwnd_min` in bytes (AMP's loss floor).
    pub cwnd_min: f64,
    /// LIA only: cut by 1/β on an ECN echo instead of halving.
    pub lia_beta: Option<f64>,
    /// The initial window in segments.
    pub init_cwnd: u32,
    /// Hops (links crossed one way) of the connection's path (Swift's hop scaling).
    pub hops: u32,
}

/// How a connection of kind `kind` is controlled: the coupling of its subflows (for a
/// multipath connection; `Uncoupled` for single-path controllers) and the controller
/// each subflow (or the one TCP sender) starts with.
pub fn build(kind: &CcKind, ctx: CcContext) -> (Coupling, Cc) {
    let two_mss = 2.0 * ctx.mss;
    match *kind {
        // pFabric's window grows as NewReno's; its cap is the receive window, its loss
        // recovery the sender's settings.
        CcKind::Reno | CcKind::Pfabric => (Coupling::Uncoupled, Cc::Reno(Reno::default())),
        CcKind::Cubic => (Coupling::Uncoupled, Cc::Cubic(Cubic::default())),
        CcKind::Dctcp { g, alpha_init } => {
            (Coupling::Uncoupled, Cc::Dctcp(Dctcp::new(g, alpha_init)))
        }
        CcKind::Lia | CcKind::Mmptcp { .. } => {
            let response = ctx
                .lia_beta
                .map_or(EcnResponse::Halve, |beta| EcnResponse::Beta { beta });
            (Coupling::Lia, Cc::Coupled(Coupled::new(response, two_mss)))
        }
        CcKind::Olia => (
            Coupling::Olia,
            Cc::Coupled(Coupled::new(EcnResponse::Halve, two_mss)),
        ),
        CcKind::Dcm { g } => (Coupling::Dcm, Cc::Coupled(dcm::subflow_cc(g, two_mss))),
        CcKind::Xmp { beta } => (Coupling::Xmp, Cc::Coupled(xmp::subflow_cc(beta, two_mss))),
        CcKind::Amp { beta, gamma, tau } => (
            Coupling::Amp(amp::Ssr::new(gamma, tau)),
            Cc::Coupled(amp::subflow_cc(beta, ctx.cwnd_min)),
        ),
        // RoCE queue pairs and Homa messages are built by `Endpoints::build` from the
        // transport's own settings and never reach here; Reno keeps the match total
        // without a panic.
        CcKind::Roce(_) | CcKind::Homa => (Coupling::Uncoupled, Cc::Reno(Reno::default())),
        CcKind::Swift(p) => {
            let p = SwiftParams {
                hops: ctx.hops,
                ..p
            };
            let swift = Swift::new(p, ctx.init_cwnd as f64);
            (Coupling::Uncoupled, Cc::Swift(Box::new(swift)))
        }
        CcKind::Bbr => (Coupling::Uncoupled, Cc::Bbr(Box::default())),
        // NDP's ends are built by `Endpoints::build` from its settings and never reach
        // here; Reno keeps the match total without a panic.
        CcKind::Ndp => (Coupling::Uncoupled, Cc::Reno(Reno::default())),
    }
}

/// The controller a sender runs. An enum, not a box, so calls are static.
#[derive(Clone, Debug)]
pub enum Cc {
    Reno(Reno),
    Cubic(Cubic),
    Dctcp(Dctcp),
    /// A subflow of a coupled multipath connection.
    Coupled(Coupled),
    /// Boxed: its state is larger than the sender's line for the controller.
    Swift(Box<Swift>),
    Bbr(Box<Bbr>),
}

impl CongestionControl for Cc {
    #[inline]
    fn on_ack(&mut self, w: &mut Window, ev: &AckEvent) {
        match self {
            Cc::Reno(c) => c.on_ack(w, ev),
            Cc::Cubic(c) => c.on_ack(w, ev),
            Cc::Dctcp(c) => c.on_ack(w, ev),
            Cc::Coupled(c) => c.on_ack(w, ev),
            Cc::Swift(c) => c.on_ack(w, ev),
            Cc::Bbr(c) => c.on_ack(w, ev),
        }
    }
    fn on_fast_retransmit(&mut self, w: &mut Window, flight: u64, mss: f64) {
        match self {
            Cc::Reno(c) => c.on_fast_retransmit(w, flight, mss),
            Cc::Cubic(c) => c.on_fast_retransmit(w, flight, mss),
            Cc::Dctcp(c) => c.on_fast_retransmit(w, flight, mss),
            Cc::Coupled(c) => c.on_fast_retransmit(w, flight, mss),
            Cc::Swift(c) => c.on_fast_retransmit(w, flight, mss),
            Cc::Bbr(c) => c.on_fast_retransmit(w, flight, mss),
        }
    }
    fn on_timeout(&mut self, w: &mut Window, flight: u64, mss: f64) {
        match self {
            Cc::Reno(c) => c.on_timeout(w, flight, mss),
            Cc::Cubic(c) => c.on_timeout(w, flight, mss),
            Cc::Dctcp(c) => c.on_timeout(w, flight, mss),
            Cc::Coupled(c) => c.on_timeout(w, flight, mss),
            Cc::Swift(c) => c.on_timeout(w, flight, mss),
            Cc::Bbr(c) => c.on_timeout(w, flight, mss),
        }
    }
    fn on_rate_sample(&mut self, rs: &RateSample) {
        match self {
            Cc::Reno(_) | Cc::Cubic(_) | Cc::Dctcp(_) | Cc::Coupled(_) | Cc::Swift(_) => {}
            Cc::Bbr(c) => c.on_rate_sample(rs),
        }
    }
    fn pacing_rate(&self) -> f64 {
        match self {
            Cc::Reno(_) | Cc::Cubic(_) | Cc::Dctcp(_) | Cc::Coupled(_) => 0.0,
            Cc::Swift(c) => c.pacing_rate(),
            Cc::Bbr(c) => c.pacing_rate(),
        }
    }
}

impl Cc {
    /// OLIA's ℓ, bytes carried between losses (0 for an uncoupled controller, which
    /// does not count them).
    #[inline]
    pub fn ell(&self) -> f64 {
        match self {
            Cc::Coupled(c) => c.ell(),
            Cc::Reno(_) | Cc::Cubic(_) | Cc::Dctcp(_) | Cc::Swift(_) | Cc::Bbr(_) => 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_the_schema() {
        for k in CcSpec::ALL {
            let text = serde_json::to_string(&k).unwrap();
            assert_eq!(text, format!("\"{}\"", k.info().name));
        }
    }

    #[test]
    fn every_controller_is_listed() {
        // The schema lists every variant of CcSpec; ALL must too (error messages and
        // `taking` read it).
        let schema = serde_json::to_value(schemars::schema_for!(CcSpec)).unwrap();
        let mut names: Vec<String> =
            serde_json::from_value(schema["enum"].clone()).unwrap_or_else(|_| {
                schema["oneOf"]
                    .as_array()
                    .expect("an enum or oneOf schema")
                    .iter()
                    .flat_map(|v| v["enum"].as_array().cloned().unwrap_or_default())
                    .map(|v| v.as_str().unwrap().to_string())
                    .collect()
            });
        names.sort();
        let mut listed: Vec<String> = CcSpec::ALL
            .iter()
            .map(|k| k.info().name.to_string())
            .collect();
        listed.sort();
        assert_eq!(names, listed);
    }

    #[test]
    fn parameters_name_their_controllers() {
        assert_eq!(CcSpec::taking("dctcp_g"), ["dctcp", "dcm"]);
        assert_eq!(CcSpec::taking("beta"), ["lia", "xmp", "amp"]);
        assert!(CcSpec::taking("no_such_field").is_empty());
    }

    #[test]
    fn coupled_kinds_build_coupled_controllers() {
        let ctx = CcContext {
            mss: 1000.0,
            cwnd_min: 2000.0,
            lia_beta: None,
            init_cwnd: 10,
            hops: 2,
        };
        let kinds = [
            CcKind::Reno,
            CcKind::Cubic,
            CcKind::Dctcp {
                g: 0.0625,
                alpha_init: 1.0,
            },
            CcKind::Lia,
            CcKind::Olia,
            CcKind::Dcm { g: 0.0625 },
            CcKind::Xmp { beta: 4.0 },
            CcKind::Amp {
                beta: 4.0,
                gamma: 2,
                tau: 8,
            },
            CcKind::Mmptcp { switch_bytes: 1 },
            CcKind::Swift(SwiftParams::default()),
            CcKind::Bbr,
        ];
        for k in kinds {
            let (coupling, cc) = build(&k, ctx);
            let coupled = matches!(cc, Cc::Coupled(_));
            assert_eq!(coupled, k.info().coupled, "{k:?}");
            assert_eq!(matches!(coupling, Coupling::Uncoupled), !coupled, "{k:?}");
        }
    }
}
