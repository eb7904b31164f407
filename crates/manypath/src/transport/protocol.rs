//! Every congestion controller manypath runs, in one place: the `controllers!` table
//! below has one row per controller, giving the name a scenario gives it (`CcSpec`),
//! what it is (`CcInfo`), its resolved parameters (`CcKind`) and how a connection's
//! subflows run it (`build`, into the `Cc` a sender holds).
//!
//! Adding a controller (`docs/extending.md`): its own file under `cc/` or `mpcc/`, one
//! row in the table and, if it is a new state machine, one variant in `Cc`
//! (`cc_enum!`). The table generates every `match` over the controllers, each
//! exhaustive (no catch-all arm), so no place can forget a controller and run another
//! protocol instead.

use super::cc::swift::SwiftParams;
use super::cc::{AckEvent, Bbr, CongestionControl, Cubic, Dctcp, RateSample, Reno, Swift, Window};
use super::mpcc::{amp, dcm, xmp, Coupled, Coupling, EcnResponse};
use super::roce::plan::{DcqcnParams, HpccParams, RoceCc, TimelyParams};
use crate::time::SimTime;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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

impl CcInfo {
    /// A controller with every flag off and no parameters; a row of the table sets only
    /// the fields where it differs.
    const fn plain(name: &'static str) -> CcInfo {
        CcInfo {
            name,
            coupled: false,
            ecn: false,
            single_path_only: false,
            flow_level: false,
            hop_scaled: false,
            needs_pacing: false,
            paced: false,
            params: &[],
            roce: false,
            ndp: false,
        }
    }
}

/// Declares the controllers from their rows: `CcSpec` (its variants in the rows' order,
/// which is the schema's order), `CcSpec::ALL`, `CcSpec::info`, `CcKind` (one variant per
/// row, with the row's fields), `CcKind::spec`, `CcKind::new`, the accessors
/// (`roce`, `host_delay`, `scatter_bytes`) and `build`. A row reads:
///
/// ```text
/// /// Its doc comment: the schema's description of its name.
/// Variant = "name" { field: Type, .. } => {  // `{ .. }`: CcKind's fields, if any
///     info: { coupled: true, .. },          // the CcInfo fields not as in `CcInfo::plain`
///     roce: <expr>,                         // optional: a RoCE transport's RoceCc
///     host_delay: <expr>,                   // optional: the receiving host's delay (0)
///     scatter_bytes: <expr>,                // optional: MMPTCP's scatter phase (None)
///     build: |ctx| (<Coupling>, <Cc>),      // the coupling and each subflow's controller
/// },
/// ```
///
/// The expressions read the kind's fields by name. `CcKind::new` fills each field from
/// the `CcParams` field of the same name, so a controller's parameters are named alike
/// wherever they appear.
macro_rules! controllers {
    ($(
        $(#[$doc:meta])*
        $variant:ident = $name:literal $({ $($field:ident: $type:ty),* $(,)? })? => {
            info: { $($info:ident: $value:expr),* $(,)? },
            $(roce: $roce:expr,)?
            $(host_delay: $host_delay:expr,)?
            $(scatter_bytes: $scatter_bytes:expr,)?
            build: $build:expr $(,)?
        }
    ),* $(,)?) => {
        /// A transport's congestion controller as a scenario names it (`cc = "..."`).
        #[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
        #[serde(rename_all = "snake_case")]
        pub enum CcSpec {
            $($(#[$doc])* $variant,)*
        }

        impl CcSpec {
            /// Every controller, in the order error messages list them.
            pub const ALL: [CcSpec; [$(CcSpec::$variant),*].len()] = [$(CcSpec::$variant),*];

            pub const fn info(self) -> CcInfo {
                match self {
                    $(CcSpec::$variant => CcInfo {
                        $($info: $value,)*
                        ..CcInfo::plain($name)
                    },)*
                }
            }
        }

        /// A controller with its parameters resolved (defaults filled in, values checked).
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub enum CcKind {
            $($variant $({ $($field: $type),* })?,)*
        }

        // A row's expressions read only some of its kind's fields: the others are bound
        // and unused.
        #[allow(unused_variables)]
        impl CcKind {
            /// The controller `spec` with its parameters taken from `params`.
            pub fn new(spec: CcSpec, params: &CcParams) -> CcKind {
                match spec {
                    $(CcSpec::$variant => CcKind::$variant {
                        $($($field: params.$field),*)?
                    },)*
                }
            }

            pub fn spec(&self) -> CcSpec {
                match self {
                    $(CcKind::$variant { .. } => CcSpec::$variant,)*
                }
            }

            /// A RoCE transport's controller (`None` for the others).
            pub fn roce(&self) -> Option<RoceCc> {
                match *self {
                    $(CcKind::$variant { $($($field),*)? } => {
                        row_or!($(Some($roce))?; None)
                    })*
                }
            }

            /// Swift's host delay: the receiving host's processing time per data packet
            /// (0 for the others, whose hosts process at once).
            pub fn host_delay(&self) -> SimTime {
                match *self {
                    $(CcKind::$variant { $($($field),*)? } => {
                        row_or!($($host_delay)?; 0)
                    })*
                }
            }

            /// MMPTCP's scatter phase: the bytes its scatter subflow carries alone.
            pub fn scatter_bytes(&self) -> Option<u64> {
                match *self {
                    $(CcKind::$variant { $($($field),*)? } => {
                        row_or!($(Some($scatter_bytes))?; None)
                    })*
                }
            }
        }

        /// How a connection of kind `kind` is controlled: the coupling of its subflows
        /// (for a multipath connection; `Uncoupled` for single-path controllers) and the
        /// controller each subflow (or the one TCP sender) starts with.
        #[allow(unused_variables)] // as in `impl CcKind`
        pub fn build(kind: &CcKind, ctx: CcContext) -> (Coupling, Cc) {
            match *kind {
                $(CcKind::$variant { $($($field),*)? } => call_build(ctx, $build),)*
            }
        }
    };
}

/// A row's optional expression, or the default for rows without one.
macro_rules! row_or {
    ($row:expr; $default:expr) => {
        $row
    };
    (; $default:expr) => {
        $default
    };
}

/// Runs a row's `build` closure (its type here lets the row write `|ctx|` bare).
fn call_build(ctx: CcContext, build: impl FnOnce(CcContext) -> (Coupling, Cc)) -> (Coupling, Cc) {
    build(ctx)
}

controllers! {
    /// NewReno; with `ecn = true`, halves once per window on ECN echoes. With several
    /// subflows: uncoupled MPTCP.
    Reno = "reno" => {
        info: { flow_level: true },
        build: |_| (Coupling::Uncoupled, Cc::Reno(Reno::default())),
    },
    /// CUBIC (RFC 9438; β = 0.7, C = 0.4, no HyStart); with `ecn = true`, an ECN echo is
    /// a congestion event. With several subflows: uncoupled.
    Cubic = "cubic" => {
        info: {},
        build: |_| (Coupling::Uncoupled, Cc::Cubic(Cubic::default())),
    },
    /// DCTCP: cwnd·(1−α/2) once per window. With several subflows: uncoupled.
    Dctcp = "dctcp" { g: f64, alpha_init: f64 } => {
        info: { ecn: true, params: &["dctcp_g", "dctcp_alpha_init"] },
        build: |_| (Coupling::Uncoupled, Cc::Dctcp(Dctcp::new(g, alpha_init))),
    },
    /// MPTCP's linked increase (RFC 6356).
    Lia = "lia" => {
        // LIA's `beta`: the AMP document's "MPTCP with β" (a cut by 1/β on ECN).
        info: { coupled: true, flow_level: true, params: &["beta"] },
        build: lia_subflows,
    },
    /// Opportunistic linked increase (Khalili et al.).
    Olia = "olia" => {
        info: { coupled: true },
        build: |ctx| (
            Coupling::Olia,
            Cc::Coupled(Coupled::new(EcnResponse::Halve, ctx.two_mss())),
        ),
    },
    /// LIA increase with DCTCP's per-subflow ECN response.
    Dcm = "dcm" { g: f64 } => {
        info: { coupled: true, ecn: true, params: &["dctcp_g"] },
        build: |ctx| (Coupling::Dcm, Cc::Coupled(dcm::subflow_cc(g, ctx.two_mss()))),
    },
    /// XMP: δ-increase, cut by 1/β on ECN.
    Xmp = "xmp" { beta: f64 } => {
        info: { coupled: true, ecn: true, params: &["beta"] },
        build: |ctx| (Coupling::Xmp, Cc::Coupled(xmp::subflow_cc(beta, ctx.two_mss()))),
    },
    /// AMP: RTT-agnostic increase, cut by 1/β, subflow suppression/release.
    Amp = "amp" { beta: f64, gamma: u32, tau: u32 } => {
        info: { coupled: true, ecn: true, params: &["beta", "amp_gamma", "amp_tau"] },
        build: |ctx| (
            Coupling::Amp(amp::Ssr::new(gamma, tau)),
            Cc::Coupled(amp::subflow_cc(beta, ctx.cwnd_min)),
        ),
    },
    /// MMPTCP: one subflow scattering each packet on a random path, then LIA subflows
    /// after `mmptcp_switch_bytes`.
    Mmptcp = "mmptcp" { switch_bytes: u64 } => {
        info: { coupled: true, ecn: true, params: &["mmptcp_switch_bytes"] },
        scatter_bytes: switch_bytes,
        build: lia_subflows,
    },
    // The RoCE transports: the controller's constants as set, resolved against the NIC's
    // line rate and the base RTT when a connection is built (`transport/roce/plan.rs`).
    /// RoCE at line rate, no congestion control (a RoCE transport, `transport/roce/`).
    Roce = "roce" => {
        info: { single_path_only: true, roce: true, params: ROCE_PARAMS },
        roce: RoceCc::LineRate,
        build: not_tcp,
    },
    /// RoCE with DCQCN (Zhu et al., SIGCOMM 2015): ECN-marked data, CNPs, rate cuts.
    Dcqcn = "dcqcn" { dcqcn: DcqcnParams } => {
        info: { ecn: true, single_path_only: true, roce: true, params: DCQCN_PARAMS },
        roce: RoceCc::Dcqcn(dcqcn),
        build: not_tcp,
    },
    /// RoCE with TIMELY (Mittal et al., SIGCOMM 2015): RTT-gradient rate control.
    Timely = "timely" { timely: TimelyParams } => {
        info: { single_path_only: true, roce: true, params: TIMELY_PARAMS },
        roce: RoceCc::Timely(timely),
        build: not_tcp,
    },
    /// RoCE with HPCC (Li et al., SIGCOMM 2019): INT-driven window and rate.
    Hpcc = "hpcc" { hpcc: HpccParams } => {
        info: { single_path_only: true, roce: true, params: HPCC_PARAMS },
        roce: RoceCc::Hpcc(hpcc),
        build: not_tcp,
    },
    /// Swift (Kumar et al., SIGCOMM 2020): delay-based AIMD with a target delay scaled
    /// by the path's hops and the window (flow scaling); paced below one packet.
    /// Single path.
    Swift = "swift" { swift: SwiftParams } => {
        info: {
            single_path_only: true,
            hop_scaled: true,
            paced: true,
            params: SWIFT_PARAMS,
        },
        host_delay: swift.host_delay,
        // The parameters' `hops` is the connection's.
        build: |ctx| {
            let p = SwiftParams { hops: ctx.hops, ..swift };
            let controller = Swift::new(p, ctx.init_cwnd as f64);
            (Coupling::Uncoupled, Cc::Swift(Box::new(controller)))
        },
    },
    /// BBR v1 (Cardwell et al., 2016; Linux's tcp_bbr): paced at the estimated
    /// bottleneck bandwidth, window two BDPs. Needs `pacing`. Single path.
    Bbr = "bbr" => {
        info: { single_path_only: true, needs_pacing: true, paced: true },
        build: |_| (Coupling::Uncoupled, Cc::Bbr(Box::default())),
    },
    // NDP's and Homa's settings are the transport's (`TransportPlan::ndp`, `homa`).
    /// NDP (Handley et al., SIGCOMM 2017, `transport/ndp/`): a first window at line rate,
    /// then receiver-paced PULLs; every packet sprayed on its own path; meant for
    /// switches that trim (`queue.trim`).
    Ndp = "ndp" => {
        info: { single_path_only: true, ndp: true, params: NDP_PARAMS },
        build: not_tcp,
    },
    /// Homa (Montazeri et al., SIGCOMM 2018): messages, receiver-driven grants (SRPT with
    /// overcommitment), switch priorities (`transport/homa/`). Not a TCP connection.
    Homa = "homa" => {
        info: { single_path_only: true, params: HOMA_PARAMS },
        build: not_tcp,
    },
    /// pFabric (Alizadeh et al., SIGCOMM 2013): TCP that starts at one BDP and keeps it
    /// as its largest window, no fast retransmit, a small fixed RTO, 1-byte probes after
    /// repeated timeouts, and every data packet stamped with its flow's remaining bytes
    /// for switches that schedule and drop by them (`queue.pfabric`). Single path.
    Pfabric = "pfabric" => {
        info: { single_path_only: true, params: PFABRIC_PARAMS },
        // NewReno's window growth; its cap is the receive window, its loss recovery the
        // sender's settings (`TcpConfig`).
        build: |_| (Coupling::Uncoupled, Cc::Reno(Reno::default())),
    },
}

impl CcSpec {
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

impl CcKind {
    pub fn info(&self) -> CcInfo {
        self.spec().info()
    }
}

/// LIA's subflows (and MMPTCP's after its scatter phase): halving on an ECN echo, or
/// cutting by 1/β when the transport gives LIA a `beta`.
fn lia_subflows(ctx: CcContext) -> (Coupling, Cc) {
    let response = ctx
        .lia_beta
        .map_or(EcnResponse::Halve, |beta| EcnResponse::Beta { beta });
    (
        Coupling::Lia,
        Cc::Coupled(Coupled::new(response, ctx.two_mss())),
    )
}

/// RoCE queue pairs, NDP's ends and Homa's messages are built by `Endpoints::build` from
/// the transport's own settings and never reach `build`; Reno keeps it total without a
/// panic.
fn not_tcp(_: CcContext) -> (Coupling, Cc) {
    (Coupling::Uncoupled, Cc::Reno(Reno::default()))
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

/// Every controller's parameters, each as a scenario set it or at its default
/// (`scenario/transports.rs` fills them in). `CcKind::new` gives a kind the fields its
/// row names, by name.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CcParams {
    /// DCTCP's (and DCM's) EWMA weight.
    pub g: f64,
    /// DCTCP's initial α.
    pub alpha_init: f64,
    /// XMP's and AMP's cut factor (LIA's, with `TransportPlan::lia_beta`).
    pub beta: f64,
    /// AMP's suppression and release constants.
    pub gamma: u32,
    pub tau: u32,
    /// MMPTCP's scatter phase in bytes.
    pub switch_bytes: u64,
    pub swift: SwiftParams,
    /// The RoCE controllers' constants as set.
    pub dcqcn: DcqcnParams,
    pub timely: TimelyParams,
    pub hpcc: HpccParams,
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

impl CcContext {
    /// The loss floor of the coupled subflows but AMP's.
    fn two_mss(&self) -> f64 {
        2.0 * self.mss
    }
}

/// Declares `Cc` and its `CongestionControl` implementation, which hands every call to
/// the variant's own controller: a new controller state machine is one line here.
macro_rules! cc_enum {
    ($($(#[$doc:meta])* $variant:ident($type:ty),)*) => {
        /// The controller a sender runs. An enum, not a box, so calls are static.
        #[derive(Clone, Debug)]
        pub enum Cc {
            $($(#[$doc])* $variant($type),)*
        }

        impl CongestionControl for Cc {
            #[inline]
            fn on_ack(&mut self, w: &mut Window, ev: &AckEvent) {
                match self {
                    $(Cc::$variant(c) => c.on_ack(w, ev),)*
                }
            }
            fn on_fast_retransmit(&mut self, w: &mut Window, flight: u64, mss: f64) {
                match self {
                    $(Cc::$variant(c) => c.on_fast_retransmit(w, flight, mss),)*
                }
            }
            fn on_timeout(&mut self, w: &mut Window, flight: u64, mss: f64) {
                match self {
                    $(Cc::$variant(c) => c.on_timeout(w, flight, mss),)*
                }
            }
            fn on_rate_sample(&mut self, rs: &RateSample) {
                match self {
                    $(Cc::$variant(c) => c.on_rate_sample(rs),)*
                }
            }
            fn pacing_rate(&self) -> f64 {
                match self {
                    $(Cc::$variant(c) => c.pacing_rate(),)*
                }
            }
            #[inline]
            fn ell(&self) -> f64 {
                match self {
                    $(Cc::$variant(c) => c.ell(),)*
                }
            }
        }
    };
}

cc_enum! {
    Reno(Reno),
    Cubic(Cubic),
    Dctcp(Dctcp),
    /// A subflow of a coupled multipath connection.
    Coupled(Coupled),
    /// Boxed: its state is larger than the sender's line for the controller.
    Swift(Box<Swift>),
    Bbr(Box<Bbr>),
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

    fn params() -> CcParams {
        CcParams {
            g: 0.0625,
            alpha_init: 1.0,
            beta: 4.0,
            gamma: 2,
            tau: 8,
            switch_bytes: 1,
            swift: SwiftParams::default(),
            dcqcn: DcqcnParams::default(),
            timely: TimelyParams::default(),
            hpcc: HpccParams::default(),
        }
    }

    #[test]
    fn kinds_take_their_parameters_and_name_their_controller() {
        let p = params();
        for spec in CcSpec::ALL {
            assert_eq!(CcKind::new(spec, &p).spec(), spec);
        }
        assert_eq!(
            CcKind::new(CcSpec::Amp, &p),
            CcKind::Amp {
                beta: 4.0,
                gamma: 2,
                tau: 8
            }
        );
        let roce = |spec| CcKind::new(spec, &p).roce();
        assert_eq!(roce(CcSpec::Roce), Some(RoceCc::LineRate));
        assert_eq!(roce(CcSpec::Hpcc), Some(RoceCc::Hpcc(p.hpcc)));
        assert_eq!(roce(CcSpec::Reno), None);
        assert_eq!(CcKind::new(CcSpec::Mmptcp, &p).scatter_bytes(), Some(1));
        assert_eq!(CcKind::new(CcSpec::Lia, &p).scatter_bytes(), None);
        for spec in CcSpec::ALL {
            assert_eq!(CcKind::new(spec, &p).roce().is_some(), spec.info().roce);
        }
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
        let p = params();
        for spec in CcSpec::ALL {
            let k = CcKind::new(spec, &p);
            let (coupling, cc) = build(&k, ctx);
            let coupled = matches!(cc, Cc::Coupled(_));
            assert_eq!(coupled, k.info().coupled, "{k:?}");
            assert_eq!(matches!(coupling, Coupling::Uncoupled), !coupled, "{k:?}");
        }
    }
}
