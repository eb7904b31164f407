//! A scenario's transports: the built-in ones, and the `[transports.NAME]` entries
//! resolved into a controller (`CcKind`, its parameters checked against the description
//! table `CcSpec::info`) with its TCP settings, subflows and loss-recovery options.

use super::checker::Checker;
use super::homa;
use super::ndp::{self, NdpSettings};
use super::roce;
use super::schema::{CcSpec, SchedulerSpec, TcpSpec, TimersSpec, TransportSpec};
use crate::net::network::LinkParams;
use crate::time::{to_us, SimTime};
use crate::transport::cc::swift::SwiftParams;
use crate::transport::homa::HomaSettings;
use crate::transport::mptcp::{FusoConfig, Scheduler};
use crate::transport::protocol::{CcInfo, CcKind, CcParams, SWIFT_PARAMS};
use crate::transport::roce::plan::{RoceCc, RoceSettings};
use crate::transport::tcp::{linux, HostTimers, TcpConfig};
use std::collections::BTreeMap;

#[derive(Clone, Debug)]
pub struct TransportPlan {
    pub name: String,
    pub tcp: TcpConfig,
    pub cc: CcKind,
    /// 1: plain TCP (for Reno and DCTCP); more: a multipath connection.
    pub subflows: u32,
    pub scheduler: Scheduler,
    /// Delay of the extra subflows after the first handshake.
    pub subflow_gap: SimTime,
    /// FUSO's proactive multipath loss recovery (multipath connections only).
    pub fuso: Option<FusoConfig>,
    /// Copies of every flow, each on its own connection; the first to finish counts.
    pub replicas: u32,
    /// LIA only: cut a subflow's window by 1/β on an ECN echo instead of halving it
    /// (the AMP document's "MPTCP with β", §4.1).
    pub lia_beta: Option<f64>,
    /// A RoCE transport's queue-pair settings (`None` for TCP transports).
    pub roce: Option<RoceSettings>,
    /// NDP's settings (`None` for other transports).
    pub ndp: Option<NdpSettings>,
    /// A Homa transport's settings (`None` for the others).
    pub homa: Option<HomaSettings>,
}

impl TransportPlan {
    /// The largest packet this transport puts on the wire, headers included.
    pub fn max_wire_bytes(&self) -> u64 {
        match (&self.roce, self.cc.roce()) {
            (Some(r), Some(cc)) => {
                let int = if cc.int() {
                    crate::transport::roce::INT_HEADER_BYTES
                } else {
                    0
                };
                (r.payload + crate::transport::roce::HEADER_BYTES + int) as u64
            }
            _ => match &self.ndp {
                Some(n) => n.packet_bytes() as u64,
                None => (self.tcp.mss + self.tcp.header) as u64,
            },
        }
    }

    /// Whether a connection of this transport is multipath (even with one subflow).
    pub fn is_multipath(&self) -> bool {
        self.subflows > 1 || self.cc.info().coupled || self.fuso.is_some()
    }
}

/// Subflows of the built-in multipath transports (the AMP document's default).
pub const DEFAULT_SUBFLOWS: u32 = 4;
/// XMP's and AMP's cut factor β, AMP's γ and τ (the AMP document's recommendations).
pub const DEFAULT_BETA: f64 = 4.0;
pub const DEFAULT_GAMMA: u32 = 2;
pub const DEFAULT_TAU: u32 = 8;
/// MMPTCP switches from packet scatter to MPTCP subflows after this much data.
pub const DEFAULT_SWITCH_BYTES: u64 = 100_000;
/// DCTCP's EWMA weight g and initial α (as in Linux).
const DEFAULT_DCTCP_G: f64 = 1.0 / 16.0;
const DEFAULT_DCTCP_ALPHA_INIT: f64 = 1.0;

/// pFabric's settings as the Homa authors ran its ns-2 simulator at 10 Gbit/s for their
/// comparison (HomaSimulation's `run-list-*-pfabric.pl` and `empirical_*_pfabric.tcl`,
/// `docs/references.md`): the first window and the largest one 12 packets (the BDP,
/// `windowInit_` and `maxcwnd_`), a retransmission timeout of 24 µs (`minrto_`, which
/// pFabric's `rtt_timeout` returns as it is: no estimate, no backoff), no fast
/// retransmit (`dynamic_dupack_` 1000000), SACK, slow start after idle, and 1-byte
/// probes after 5 timeouts in a row (`prob_cap_`).
const PFABRIC_WINDOW_PACKETS: u32 = 12;
const PFABRIC_RTO_US: f64 = 24.0;
pub const DEFAULT_PFABRIC_PROBE_TIMEOUTS: u32 = 5;

/// The TCP settings a pFabric transport starts from, before its own `tcp` table.
fn pfabric_tcp(base: TcpConfig, probe_timeouts: u32) -> TcpConfig {
    let rto = crate::time::from_us(PFABRIC_RTO_US);
    TcpConfig {
        init_cwnd: PFABRIC_WINDOW_PACKETS,
        rcv_wnd: PFABRIC_WINDOW_PACKETS * base.mss,
        rto_min: rto,
        rto_max: rto,
        rto_initial: rto,
        dupack_threshold: u32::MAX,
        recovery: crate::transport::tcp::LossRecovery {
            sack: true,
            idle_restart: true,
            ..base.recovery
        },
        probe_after_timeouts: probe_timeouts,
        ..base
    }
}

/// A built-in transport: a controller with its default parameters, and what sets it
/// apart from a `[transports.NAME]` entry that names only that controller.
struct Builtin {
    name: &'static str,
    cc: CcSpec,
    ecn: bool,
    fuso: bool,
    replicas: u32,
}

const fn builtin(name: &'static str, cc: CcSpec, ecn: bool) -> Builtin {
    Builtin {
        name,
        cc,
        ecn,
        fuso: false,
        replicas: 1,
    }
}

/// Every scenario's transports, in the order of their indices in the results (so this
/// order must not change).
const BUILTINS: [Builtin; 11] = [
    builtin("tcp", CcSpec::Reno, false),
    builtin("cubic", CcSpec::Cubic, false),
    builtin("dctcp", CcSpec::Dctcp, true),
    builtin("mptcp", CcSpec::Lia, false),
    builtin("olia", CcSpec::Olia, false),
    builtin("dcm", CcSpec::Dcm, true),
    builtin("xmp", CcSpec::Xmp, true),
    // Without ECN, unlike a `[transports.NAME]` entry with cc = "mmptcp".
    builtin("mmptcp", CcSpec::Mmptcp, false),
    builtin("amp", CcSpec::Amp, true),
    Builtin {
        fuso: true,
        ..builtin("fuso", CcSpec::Lia, false)
    },
    Builtin {
        replicas: 2,
        ..builtin("repflow", CcSpec::Reno, false)
    },
];

impl Builtin {
    /// The transport, on the scenario's shared TCP settings (which have ECN off).
    fn plan(&self, base_tcp: TcpConfig) -> TransportPlan {
        let cc = CcKind::new(self.cc, &default_params());
        TransportPlan {
            name: self.name.into(),
            tcp: TcpConfig {
                ecn: self.ecn,
                ..base_tcp
            },
            cc,
            subflows: default_subflows(&cc),
            scheduler: Scheduler::RoundRobin,
            subflow_gap: 0,
            fuso: self.fuso.then(FusoConfig::default),
            replicas: self.replicas,
            lia_beta: None,
            roce: None,
            ndp: None,
            homa: None,
        }
    }
}

/// A coupled controller's connection is multipath, with `DEFAULT_SUBFLOWS`; the others
/// have one subflow unless told otherwise.
fn default_subflows(cc: &CcKind) -> u32 {
    if cc.info().coupled {
        DEFAULT_SUBFLOWS
    } else {
        1
    }
}

/// The built-in transports, then the scenario's `[transports.NAME]` entries (an entry
/// with a built-in's name replaces it).
pub(super) fn transports(
    specs: &BTreeMap<String, TransportSpec>,
    base_tcp: TcpConfig,
    c: &mut Checker,
) -> Vec<TransportPlan> {
    let mut transports: Vec<TransportPlan> = BUILTINS.iter().map(|b| b.plan(base_tcp)).collect();
    for (name, t) in specs {
        let plan = transport_plan(name, t, base_tcp, c);
        match transports.iter_mut().find(|p| &p.name == name) {
            Some(p) => *p = plan,
            None => transports.push(plan),
        }
    }
    transports
}

/// One `[transports.NAME]` entry, checked.
fn transport_plan(
    name: &str,
    t: &TransportSpec,
    base_tcp: TcpConfig,
    c: &mut Checker,
) -> TransportPlan {
    let path = format!("transports.{name}");
    let cc = transport_cc(t, &path, c);
    let base = if cc == CcKind::Pfabric {
        let probe = t
            .pfabric_probe_timeouts
            .unwrap_or(DEFAULT_PFABRIC_PROBE_TIMEOUTS);
        pfabric_tcp(base_tcp, probe)
    } else {
        base_tcp
    };
    let mut tcp = tcp_config(base, &t.tcp, &format!("{path}.tcp"), c);
    if tcp.probe_after_timeouts > 0 && !tcp.recovery.sack {
        c.err(
            &format!("{path}.tcp.sack"),
            "pFabric's probes (pfabric_probe_timeouts above 0) go out as SACK's \
             retransmissions: sack must be true, or set pfabric_probe_timeouts = 0"
                .into(),
        );
    }
    tcp.ecn = t.ecn.unwrap_or(cc.info().ecn);
    tcp.pacing = t.tcp.pacing.unwrap_or(base_tcp.pacing || cc.info().paced);
    if cc.info().needs_pacing && !tcp.pacing {
        c.err(
            &format!("{path}.tcp.pacing"),
            format!(
                "cc = {} paces its sending: pacing must be true",
                cc.info().name
            ),
        );
    }
    if cc == CcKind::Lia && t.beta.is_some() && !tcp.ecn {
        c.err(
            &format!("{path}.beta"),
            "LIA cuts by 1/beta on ECN echoes: it needs ecn = true".into(),
        );
    }
    let subflows = t.subflows.unwrap_or(default_subflows(&cc));
    if !(1..=64).contains(&subflows) {
        c.err(
            &format!("{path}.subflows"),
            format!("must be between 1 and 64, got {subflows}"),
        );
    }
    check_single_path(cc.info(), subflows, &path, c);
    let plan = TransportPlan {
        name: name.to_string(),
        tcp,
        cc,
        subflows: subflows.clamp(1, 64),
        scheduler: match t.scheduler {
            SchedulerSpec::RoundRobin => Scheduler::RoundRobin,
            SchedulerSpec::LowestRtt => Scheduler::LowestRtt,
        },
        subflow_gap: c.time(
            &format!("{path}.subflow_gap_us"),
            t.subflow_gap_us,
            0,
            false,
        ),
        fuso: fuso_config(t, &path, &cc, c),
        replicas: t.replicas.unwrap_or(1),
        lia_beta: t.beta.filter(|_| cc == CcKind::Lia),
        roce: cc
            .roce()
            .map(|r| roce::roce_settings(t, &r, tcp.ecn, &path, c)),
        ndp: cc.info().ndp.then(|| ndp::ndp_settings(t, &path, c)),
        homa: (cc == CcKind::Homa).then(|| homa::settings(t, &path, c)),
    };
    if !(1..=4).contains(&plan.replicas) {
        c.err(
            &format!("{path}.replicas"),
            format!("must be between 1 and 4, got {}", plan.replicas),
        );
    }
    plan
}

/// A controller that runs on one path only (its description says so) takes one subflow.
fn check_single_path(info: CcInfo, subflows: u32, path: &str, c: &mut Checker) {
    if info.single_path_only && subflows > 1 {
        c.err(
            &format!("{path}.subflows"),
            format!(
                "cc = {} runs on a single path: subflows must be 1, got {subflows}",
                info.name
            ),
        );
    }
}

/// Every controller's parameters at their defaults (the constants above; Swift's and
/// the RoCE controllers' are their own types' defaults).
fn default_params() -> CcParams {
    CcParams {
        g: DEFAULT_DCTCP_G,
        alpha_init: DEFAULT_DCTCP_ALPHA_INIT,
        beta: DEFAULT_BETA,
        gamma: DEFAULT_GAMMA,
        tau: DEFAULT_TAU,
        switch_bytes: DEFAULT_SWITCH_BYTES,
        swift: SwiftParams::default(),
        dcqcn: Default::default(),
        timely: Default::default(),
        hpcc: Default::default(),
    }
}

/// The controller of a `[transports.NAME]` entry, with its parameters checked.
fn transport_cc(t: &TransportSpec, path: &str, c: &mut Checker) -> CcKind {
    let defaults = default_params();
    let g = t.dctcp_g.unwrap_or(defaults.g);
    if !(g > 0.0 && g <= 1.0) {
        c.err(
            &format!("{path}.dctcp_g"),
            format!("must be in (0, 1], got {g}"),
        );
    }
    let alpha_init = t.dctcp_alpha_init.unwrap_or(defaults.alpha_init);
    if !(0.0..=1.0).contains(&alpha_init) {
        c.err(
            &format!("{path}.dctcp_alpha_init"),
            format!("must be in [0, 1], got {alpha_init}"),
        );
    }
    let beta = t.beta.unwrap_or(defaults.beta);
    if !(beta.is_finite() && beta > 1.0) {
        c.err(
            &format!("{path}.beta"),
            format!("must be greater than 1, got {beta}"),
        );
    }
    // A parameter set on a transport whose controller does not take it.
    for (field, set) in [
        ("dctcp_g", t.dctcp_g.is_some()),
        ("dctcp_alpha_init", t.dctcp_alpha_init.is_some()),
        ("beta", t.beta.is_some()),
        ("amp_gamma", t.amp_gamma.is_some()),
        ("amp_tau", t.amp_tau.is_some()),
        ("mmptcp_switch_bytes", t.mmptcp_switch_bytes.is_some()),
        ("pfabric_probe_timeouts", t.pfabric_probe_timeouts.is_some()),
    ]
    .into_iter()
    .chain(roce::fields(t))
    .chain(homa::fields(t))
    .chain(SWIFT_PARAMS.iter().copied().zip(swift_set(t)))
    {
        c.applies_only(
            &format!("{path}.{field}"),
            set,
            "cc",
            t.cc.info().name,
            &CcSpec::taking(field),
        );
    }
    let switch_bytes = t.mmptcp_switch_bytes.unwrap_or(defaults.switch_bytes);
    c.at_least(&format!("{path}.mmptcp_switch_bytes"), switch_bytes, 1);
    let gamma = t.amp_gamma.unwrap_or(defaults.gamma);
    let tau = t.amp_tau.unwrap_or(defaults.tau);
    c.at_least(&format!("{path}.amp_gamma"), gamma as u64, 1);
    c.at_least(&format!("{path}.amp_tau"), tau as u64, 1);
    let mut params = CcParams {
        g,
        alpha_init,
        beta,
        gamma,
        tau,
        switch_bytes,
        ..defaults
    };
    // A RoCE entry's constants are checked in `scenario/roce.rs`, starting from its
    // controller at the defaults; any other entry's Swift fields here.
    match CcKind::new(t.cc, &defaults).roce() {
        Some(default) => match roce::roce_cc(t, default, path, c) {
            RoceCc::LineRate => {}
            RoceCc::Dcqcn(p) => params.dcqcn = p,
            RoceCc::Timely(p) => params.timely = p,
            RoceCc::Hpcc(p) => params.hpcc = p,
        },
        None => params.swift = swift_params(t, path, c),
    }
    CcKind::new(t.cc, &params)
}

/// Which of Swift's parameters an entry sets, in the order of `SWIFT_PARAMS`.
fn swift_set(t: &TransportSpec) -> [bool; 15] {
    [
        t.swift_base_target_us.is_some(),
        t.swift_hop_scale_us.is_some(),
        t.swift_fs_range_us.is_some(),
        t.swift_fs_min_cwnd.is_some(),
        t.swift_fs_max_cwnd.is_some(),
        t.swift_ai.is_some(),
        t.swift_beta.is_some(),
        t.swift_max_mdf.is_some(),
        t.swift_min_cwnd.is_some(),
        t.swift_max_cwnd.is_some(),
        t.swift_retx_reset.is_some(),
        t.swift_host_delay_us.is_some(),
        t.swift_endpoint_target_us.is_some(),
        t.swift_endpoint_ai.is_some(),
        t.swift_endpoint_beta.is_some(),
    ]
}

/// Swift's parameters of a `[transports.NAME]` entry, checked (the base target against
/// the base RTT is checked with the topology, in `check_swift_targets`).
fn swift_params(t: &TransportSpec, path: &str, c: &mut Checker) -> SwiftParams {
    let d = SwiftParams::default();
    let f = |field: &str| format!("{path}.{field}");
    let p = SwiftParams {
        base_target: c.time(
            &f("swift_base_target_us"),
            t.swift_base_target_us,
            d.base_target,
            true,
        ),
        hop_scale: c.time(
            &f("swift_hop_scale_us"),
            t.swift_hop_scale_us,
            d.hop_scale,
            false,
        ),
        hops: 0,
        fs_range: c.time(
            &f("swift_fs_range_us"),
            t.swift_fs_range_us,
            d.fs_range,
            false,
        ),
        fs_min_cwnd: t.swift_fs_min_cwnd.unwrap_or(d.fs_min_cwnd),
        fs_max_cwnd: t.swift_fs_max_cwnd.unwrap_or(d.fs_max_cwnd),
        ai: t.swift_ai.unwrap_or(d.ai),
        beta: t.swift_beta.unwrap_or(d.beta),
        max_mdf: t.swift_max_mdf.unwrap_or(d.max_mdf),
        min_cwnd: t.swift_min_cwnd.unwrap_or(d.min_cwnd),
        max_cwnd: t.swift_max_cwnd.unwrap_or(d.max_cwnd),
        retx_reset: t.swift_retx_reset.unwrap_or(d.retx_reset),
        host_delay: c.time(
            &f("swift_host_delay_us"),
            t.swift_host_delay_us,
            d.host_delay,
            false,
        ),
        endpoint_target: c.time(
            &f("swift_endpoint_target_us"),
            t.swift_endpoint_target_us,
            d.endpoint_target,
            true,
        ),
        endpoint_ai: t.swift_endpoint_ai.unwrap_or(d.endpoint_ai),
        endpoint_beta: t.swift_endpoint_beta.unwrap_or(d.endpoint_beta),
    };
    let positive = [
        ("swift_fs_min_cwnd", p.fs_min_cwnd),
        ("swift_ai", p.ai),
        ("swift_beta", p.beta),
        ("swift_min_cwnd", p.min_cwnd),
        ("swift_endpoint_ai", p.endpoint_ai),
        ("swift_endpoint_beta", p.endpoint_beta),
    ];
    for (field, v) in positive {
        if !(v.is_finite() && v > 0.0) {
            c.err(&f(field), format!("must be positive, got {v}"));
        }
    }
    if !(p.max_mdf > 0.0 && p.max_mdf < 1.0) {
        c.err(
            &f("swift_max_mdf"),
            format!("must be in (0, 1), got {}", p.max_mdf),
        );
    }
    if !(p.fs_max_cwnd.is_finite() && p.fs_max_cwnd > p.fs_min_cwnd) {
        c.err(
            &f("swift_fs_max_cwnd"),
            format!(
                "must exceed swift_fs_min_cwnd ({}), got {}",
                p.fs_min_cwnd, p.fs_max_cwnd
            ),
        );
    }
    if !(p.max_cwnd.is_finite() && p.max_cwnd >= p.min_cwnd) {
        c.err(
            &f("swift_max_cwnd"),
            format!(
                "must be at least swift_min_cwnd ({}), got {}",
                p.min_cwnd, p.max_cwnd
            ),
        );
    }
    c.at_least(&f("swift_retx_reset"), p.retx_reset as u64, 1);
    // The endpoint window's settings say nothing without a host delay to react to.
    if p.host_delay == 0 {
        for (field, set) in [
            (
                "swift_endpoint_target_us",
                t.swift_endpoint_target_us.is_some(),
            ),
            ("swift_endpoint_ai", t.swift_endpoint_ai.is_some()),
            ("swift_endpoint_beta", t.swift_endpoint_beta.is_some()),
        ] {
            if set {
                c.err(
                    &f(field),
                    "applies only with a host delay (swift_host_delay_us above 0)".into(),
                );
            }
        }
    } else if p.endpoint_target <= p.host_delay {
        // Every packet's endpoint delay is at least the host delay: a target at or below
        // it would cut the endpoint window on every RTT, whatever the load.
        c.err(
            &f("swift_endpoint_target_us"),
            format!(
                "must be above swift_host_delay_us ({} µs), the endpoint delay of every \
                 packet, got {} µs",
                to_us(p.host_delay),
                to_us(p.endpoint_target)
            ),
        );
    }
    p
}

/// FUSO's settings of a `[transports.NAME]` entry, checked; `None` when FUSO is off.
fn fuso_config(t: &TransportSpec, path: &str, cc: &CcKind, c: &mut Checker) -> Option<FusoConfig> {
    let on = t.fuso.unwrap_or(false);
    if !on {
        for (field, v) in [("fuso_alpha", t.fuso_alpha), ("fuso_beta", t.fuso_beta)] {
            if v.is_some() {
                c.err(
                    &format!("{path}.{field}"),
                    "applies only with fuso = true".into(),
                );
            }
        }
        return None;
    }
    if cc.scatter_bytes().is_some() {
        c.err(
            &format!("{path}.fuso"),
            "FUSO does not combine with MMPTCP's packet scatter; use another controller".into(),
        );
    }
    let mut cfg = FusoConfig::default();
    for (field, v, slot) in [
        ("fuso_alpha", t.fuso_alpha, &mut cfg.alpha),
        ("fuso_beta", t.fuso_beta, &mut cfg.beta),
    ] {
        if let Some(x) = v {
            if !(x.is_finite() && x >= 0.0) {
                c.err(
                    &format!("{path}.{field}"),
                    format!("must be a non-negative number, got {x}"),
                );
            }
            *slot = x;
        }
    }
    Some(cfg)
}

/// The TCP settings `t` (at `path`) makes of `base`: the shared `[tcp]` section made of
/// the defaults, or a transport's `tcp` table made of the shared settings.
pub(super) fn tcp_config(base: TcpConfig, t: &TcpSpec, path: &str, c: &mut Checker) -> TcpConfig {
    let mut cfg = base;
    host_timers(&mut cfg, t, path, c);
    if let Some(m) = t.mss {
        c.at_least(&format!("{path}.mss"), m as u64, 1);
        cfg.mss = m.max(1);
    }
    if let Some(h) = t.header_bytes {
        cfg.header = h;
    }
    if let Some(w) = t.init_cwnd_packets {
        c.at_least(&format!("{path}.init_cwnd_packets"), w as u64, 1);
        cfg.init_cwnd = w.max(1);
    }
    if let Some(s) = t.init_ssthresh_bytes {
        c.at_least(&format!("{path}.init_ssthresh_bytes"), s, 1);
        cfg.init_ssthresh = s as f64;
    }
    cfg.rto_min = c.time(
        &format!("{path}.rto_min_us"),
        t.rto_min_us,
        cfg.rto_min,
        true,
    );
    cfg.rto_max = c.time(
        &format!("{path}.rto_max_us"),
        t.rto_max_us,
        cfg.rto_max,
        true,
    );
    cfg.rto_initial = c.time(
        &format!("{path}.rto_initial_us"),
        t.rto_initial_us,
        cfg.rto_initial,
        true,
    );
    if cfg.rto_min > cfg.rto_max {
        c.err(
            &format!("{path}.rto_min_us"),
            "must not exceed rto_max_us".into(),
        );
    }
    if let Some(d) = t.dupack_threshold {
        c.at_least(&format!("{path}.dupack_threshold"), d as u64, 1);
        cfg.dupack_threshold = d.max(1);
    }
    if let Some(d) = t.delayed_ack {
        cfg.delayed_ack = d;
    }
    cfg.delack_timeout = c.time(
        &format!("{path}.delayed_ack_timeout_us"),
        t.delayed_ack_timeout_us,
        cfg.delack_timeout,
        true,
    );
    if let Some(w) = t.rcv_wnd_bytes {
        c.at_least(&format!("{path}.rcv_wnd_bytes"), w as u64, 1);
        cfg.rcv_wnd = w.max(1);
    }
    if let Some(m) = t.cwnd_min_packets {
        c.at_least(&format!("{path}.cwnd_min_packets"), m as u64, 1);
        cfg.cwnd_min = m.max(1);
    }
    let r = &mut cfg.recovery;
    for (value, set) in [
        (t.sack, &mut r.sack),
        (t.limited_transmit, &mut r.limited_transmit),
        (t.early_retransmit, &mut r.early_retransmit),
        (t.tlp, &mut r.tlp),
        (t.tcp_ir, &mut r.tcp_ir),
        (t.proactive, &mut r.proactive),
        (t.idle_restart, &mut r.idle_restart),
        (t.fin_with_data, &mut r.fin_with_data),
        (t.pacing, &mut cfg.pacing),
        (t.lost_retransmit, &mut cfg.lost_retransmit),
    ] {
        if let Some(v) = value {
            *set = v;
        }
    }
    if cfg.lost_retransmit && !cfg.recovery.sack {
        c.err(
            &format!("{path}.lost_retransmit"),
            "needs sack = true (it reads which segments the receiver holds)".into(),
        );
    }
    if cfg.recovery.proactive && !cfg.recovery.sack {
        c.err(
            &format!("{path}.proactive"),
            "needs sack = true (without SACK the ACKs of the copies are duplicate ACKs)".into(),
        );
    }
    cfg
}

/// The `timers` preset and its `hz`. The Linux preset also turns delayed ACKs on with
/// Linux's timeout (40 ms), as Linux runs them; the fields after it may override.
fn host_timers(cfg: &mut TcpConfig, t: &TcpSpec, path: &str, c: &mut Checker) {
    match t.timers {
        None => {}
        Some(TimersSpec::Exact) => cfg.timers = HostTimers::Exact,
        Some(TimersSpec::Linux) => {
            cfg.timers = HostTimers::Linux { hz: DEFAULT_HZ };
            cfg.delayed_ack = true;
            cfg.delack_timeout = linux::DELACK_MIN;
        }
    }
    if let Some(hz) = t.hz {
        match cfg.timers {
            HostTimers::Linux { .. } if (100..=10_000).contains(&hz) => {
                cfg.timers = HostTimers::Linux { hz }
            }
            HostTimers::Linux { .. } => c.err(
                &format!("{path}.hz"),
                format!("must be between 100 and 10000, got {hz}"),
            ),
            HostTimers::Exact => c.err(
                &format!("{path}.hz"),
                "applies only with timers = \"linux\"".into(),
            ),
        }
    }
}

/// Linux's default timer frequency in the preset (HZ = 1000).
const DEFAULT_HZ: u32 = 1000;

/// Loss-recovery options that work on single-path TCP only: TCP-IR's receiver rebuilds
/// subflow bytes the data level could not map, and Proactive's copies would be counted
/// per subflow. Checked for the transports that traffic uses.
pub(super) fn check_single_path_options(p: &TransportPlan, field_prefix: &str, c: &mut Checker) {
    if p.subflows == 1 && !p.cc.info().coupled {
        return;
    }
    for (field, on) in [
        ("tcp_ir", p.tcp.recovery.tcp_ir),
        ("proactive", p.tcp.recovery.proactive),
    ] {
        if on {
            c.err(
                &format!("{field_prefix}.{field}"),
                format!("only single-path TCP (transport {:?} is multipath)", p.name),
            );
        }
    }
}

/// Swift's target must exceed the base RTT, or Swift cuts its window on every ACK and
/// never grows it. The check uses the shortest path between two hosts (to a switch and
/// out: two host links each way, a full segment out and a bare ACK back), so it is a
/// lower bound: a longer path's base RTT is met by the hop scaling or not checked.
pub(super) fn check_swift_targets(
    transports: &[TransportPlan],
    host: &LinkParams,
    c: &mut Checker,
) {
    for t in transports {
        let CcKind::Swift { swift: p } = t.cc else {
            continue;
        };
        let data = host.delay + host.rate.serialization(t.tcp.mss + t.tcp.header);
        let ack = host.delay + host.rate.serialization(t.tcp.header);
        let base_rtt = 2 * (data + ack);
        let target = p.base_target + 2 * p.hop_scale;
        if target < base_rtt {
            c.err(
                &format!("transports.{}.swift_base_target_us", t.name),
                format!(
                    "the target ({:.2} µs with the hop scaling of a 2-hop path) is below the \
                     base RTT of the shortest path between two hosts ({:.2} µs)",
                    target as f64 / 1e6,
                    base_rtt as f64 / 1e6
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::plan::tests::{errors, GOOD};
    use super::super::Plan;
    use super::*;

    #[test]
    fn a_single_path_controller_takes_one_subflow() {
        let info = CcInfo {
            single_path_only: true,
            ..CcSpec::Reno.info()
        };
        let mut c = Checker::default();
        check_single_path(info, 1, "transports.t", &mut c);
        assert!(c.problems.is_empty());
        check_single_path(info, 2, "transports.t", &mut c);
        check_single_path(CcSpec::Reno.info(), 4, "transports.u", &mut c);
        assert_eq!(
            c.problems,
            vec![(
                "transports.t.subflows".to_string(),
                "cc = reno runs on a single path: subflows must be 1, got 2".to_string()
            )]
        );
    }
    use std::path::Path;

    #[test]
    fn builtins_take_the_table_defaults() {
        let p = Plan::from_toml(GOOD, Path::new(".")).unwrap();
        let names: Vec<&str> = p.transports.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "tcp", "cubic", "dctcp", "mptcp", "olia", "dcm", "xmp", "mmptcp", "amp", "fuso",
                "repflow"
            ]
        );
        for t in &p.transports {
            let info = t.cc.info();
            // MMPTCP's built-in transport runs without ECN, unlike its table default.
            assert_eq!(t.tcp.ecn, info.ecn && t.name != "mmptcp", "{}", t.name);
            assert_eq!(t.subflows > 1, info.coupled, "{}", t.name);
        }
        let amp = p.transports.iter().find(|t| t.name == "amp").unwrap();
        assert_eq!(
            amp.cc,
            CcKind::Amp {
                beta: DEFAULT_BETA,
                gamma: DEFAULT_GAMMA,
                tau: DEFAULT_TAU
            }
        );
        let named = GOOD.to_string() + "[transports.dctcp]\ncc = \"dctcp\"\n";
        let q = Plan::from_toml(&named, Path::new(".")).unwrap();
        let (a, b) = (&p.transports[2], &q.transports[2]);
        assert_eq!((a.cc, a.tcp.ecn, a.subflows), (b.cc, b.tcp.ecn, b.subflows));
    }

    #[test]
    fn loss_recovery_options_parse_and_combinations_are_checked() {
        let text = format!("{GOOD}\n[tcp]\nsack = true\ntlp = true\nearly_retransmit = true\n");
        let p = Plan::from_toml(&text, Path::new(".")).unwrap();
        let r = p.transports[p.flows()[0].transport as usize].tcp.recovery;
        assert!(r.sack && r.tlp && r.early_retransmit && !r.tcp_ir && !r.proactive);
        let e = errors(&format!("{GOOD}\n[tcp]\nproactive = true\n"));
        assert!(e.contains("tcp.proactive: needs sack = true"), "{e}");
        let e = errors(&format!("{GOOD}\n[tcp]\nlost_retransmit = true\n"));
        assert!(e.contains("tcp.lost_retransmit: needs sack = true"), "{e}");
        let mp = GOOD.replace("transport = \"dctcp\"", "transport = \"mp\"");
        let e = errors(&format!(
            "{mp}\n[transports.mp]\ncc = \"lia\"\ntcp = {{ sack = true, proactive = true }}\n"
        ));
        assert!(
            e.contains("transports.mp.tcp.proactive: only single-path TCP"),
            "{e}"
        );
    }

    #[test]
    fn lia_takes_a_beta_cut_with_ecn_only() {
        let lia = |extra: &str| {
            GOOD.replace("transport = \"dctcp\"", "transport = \"mp\"")
                + &format!("[transports.mp]\ncc = \"lia\"\nbeta = 4\n{extra}")
        };
        let plan = Plan::from_toml(&lia("ecn = true\n"), Path::new(".")).unwrap();
        let mp = plan.transports.iter().find(|t| t.name == "mp").unwrap();
        assert_eq!(mp.lia_beta, Some(4.0));
        let e = errors(&lia(""));
        assert!(e.contains("transports.mp.beta: LIA cuts by 1/beta"), "{e}");
        let e = errors(
            &GOOD
                .replace("transport = \"dctcp\"", "transport = \"mp\"")
                .replace("k = 4", "k = 4\n[transports.mp]\ncc = \"olia\"\nbeta = 4"),
        );
        assert!(
            e.contains("transports.mp.beta: applies only to cc = lia or xmp or amp, not olia"),
            "{e}"
        );
    }

    #[test]
    fn pfabric_starts_from_its_own_tcp_settings_which_its_table_changes() {
        let pf = |extra: &str| {
            GOOD.replace("transport = \"dctcp\"", "transport = \"pf\"")
                + &format!("[transports.pf]\ncc = \"pfabric\"\n{extra}")
        };
        let plan = Plan::from_toml(&pf(""), Path::new(".")).unwrap();
        let t = plan.transports.iter().find(|t| t.name == "pf").unwrap();
        let rto = crate::time::from_us(PFABRIC_RTO_US);
        assert_eq!(t.cc, CcKind::Pfabric);
        assert_eq!((t.tcp.init_cwnd, t.tcp.rcv_wnd), (12, 12 * 1460));
        assert_eq!(
            (t.tcp.rto_min, t.tcp.rto_max, t.tcp.rto_initial),
            (rto, rto, rto)
        );
        assert_eq!(t.tcp.dupack_threshold, u32::MAX);
        assert!(t.tcp.recovery.sack && t.tcp.recovery.idle_restart && !t.tcp.ecn);
        assert_eq!(t.tcp.probe_after_timeouts, DEFAULT_PFABRIC_PROBE_TIMEOUTS);
        // Its own table and parameter change them; other transports keep the shared ones.
        let text = pf("pfabric_probe_timeouts = 0\ntcp = { init_cwnd_packets = 20 }\n");
        let plan = Plan::from_toml(&text, Path::new(".")).unwrap();
        let t = plan.transports.iter().find(|t| t.name == "pf").unwrap();
        assert_eq!((t.tcp.init_cwnd, t.tcp.probe_after_timeouts), (20, 0));
        let tcp = plan.transports.iter().find(|t| t.name == "tcp").unwrap();
        assert_eq!((tcp.tcp.init_cwnd, tcp.tcp.probe_after_timeouts), (10, 0));
        let e = errors(&pf("tcp = { sack = false }\n"));
        assert!(
            e.contains("transports.pf.tcp.sack: pFabric's probes"),
            "{e}"
        );
        assert!(Plan::from_toml(
            &pf("pfabric_probe_timeouts = 0\ntcp = { sack = false }\n"),
            Path::new(".")
        )
        .is_ok());
    }
}
