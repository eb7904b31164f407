//! The scenario with the defaults a run used written in (`resolved.toml` beside a run's
//! results): the shared `[tcp]` settings in full, and every transport the traffic uses
//! (and every `[transports.NAME]` entry) as an entry of its own with its controller's
//! parameters and, for the transports that run TCP, a `tcp` table of the settings in
//! which it differs from `[tcp]` (pFabric's window and timeouts, pacing for Swift and
//! BBR, its own overrides). Loaded back, it builds the same plan: each value written
//! is the one the plan holds.

use super::checker::Checker;
use super::plan::Plan;
use super::schema::{Scenario, SchedulerSpec, TcpSpec, TimersSpec, TransportSpec};
use super::transports::{tcp_config, TransportPlan};
use crate::time::to_us;
use crate::transport::mptcp::Scheduler;
use crate::transport::protocol::CcKind;
use crate::transport::tcp::{HostTimers, TcpConfig};

/// `s` with the defaults of `plan` (built from it) written in.
pub fn fill_defaults(s: &mut Scenario, plan: &Plan) {
    let base = tcp_config(TcpConfig::default(), &s.tcp, "tcp", &mut Checker::default());
    s.tcp = tcp_spec(&base);
    let mut names: Vec<String> = s.transports.keys().cloned().collect();
    for t in &s.traffic {
        names.push(t.transport.clone());
        if let Some(split) = &t.size_split {
            names.push(split.transport.clone());
        }
    }
    for name in names {
        let Some(p) = plan.transports.iter().find(|p| p.name == name) else {
            continue;
        };
        let given = s.transports.get(&name);
        let entry = transport_spec(p, given, &s.tcp);
        s.transports.insert(name, entry);
    }
}

/// The fields of `own` that differ from `shared` (the others it takes from there).
fn differences(own: &TcpSpec, shared: &TcpSpec) -> TcpSpec {
    let table = |t: &TcpSpec| match toml::Value::try_from(t) {
        Ok(toml::Value::Table(t)) => t,
        _ => toml::Table::new(),
    };
    let base = table(shared);
    let mut mine = table(own);
    mine.retain(|k, v| base.get(k) != Some(v));
    toml::Value::Table(mine)
        .try_into()
        .expect("fields of a TcpSpec make one")
}

/// Every TCP setting of `cfg`, written out. `init_ssthresh_bytes` stays unset when
/// there is none (its default).
pub fn tcp_spec(cfg: &TcpConfig) -> TcpSpec {
    let r = &cfg.recovery;
    let (timers, hz) = match cfg.timers {
        HostTimers::Exact => (TimersSpec::Exact, None),
        HostTimers::Linux { hz } => (TimersSpec::Linux, Some(hz)),
    };
    TcpSpec {
        mss: Some(cfg.mss),
        header_bytes: Some(cfg.header),
        init_cwnd_packets: Some(cfg.init_cwnd),
        init_ssthresh_bytes: cfg
            .init_ssthresh
            .is_finite()
            .then_some(cfg.init_ssthresh as u64),
        rto_min_us: Some(to_us(cfg.rto_min)),
        rto_max_us: Some(to_us(cfg.rto_max)),
        rto_initial_us: Some(to_us(cfg.rto_initial)),
        dupack_threshold: Some(cfg.dupack_threshold),
        delayed_ack: Some(cfg.delayed_ack),
        delayed_ack_timeout_us: Some(to_us(cfg.delack_timeout)),
        rcv_wnd_bytes: Some(cfg.rcv_wnd),
        cwnd_min_packets: Some(cfg.cwnd_min),
        sack: Some(r.sack),
        limited_transmit: Some(r.limited_transmit),
        early_retransmit: Some(r.early_retransmit),
        tlp: Some(r.tlp),
        lost_retransmit: Some(cfg.lost_retransmit),
        tcp_ir: Some(r.tcp_ir),
        proactive: Some(r.proactive),
        idle_restart: Some(r.idle_restart),
        fin_with_data: Some(r.fin_with_data),
        pacing: Some(cfg.pacing),
        timers: Some(timers),
        hz,
    }
}

/// Transport `p` as a `[transports.NAME]` entry with what it ran with written in,
/// starting from the scenario's own entry `given` (if any), whose fields the plan
/// resolved from.
fn transport_spec(
    p: &TransportPlan,
    given: Option<&TransportSpec>,
    shared: &TcpSpec,
) -> TransportSpec {
    let spec = p.cc.spec();
    let mut t = match given {
        Some(g) => g.clone(),
        None => toml::from_str(&format!("cc = {:?}", spec.info().name))
            .expect("an entry of only its controller parses"),
    };
    t.cc = spec;
    t.ecn = Some(p.tcp.ecn);
    t.subflows = Some(p.subflows);
    t.replicas = Some(p.replicas);
    t.subflow_gap_us = Some(to_us(p.subflow_gap));
    t.scheduler = match p.scheduler {
        Scheduler::RoundRobin => SchedulerSpec::RoundRobin,
        Scheduler::LowestRtt => SchedulerSpec::LowestRtt,
    };
    if let Some(f) = p.fuso {
        (t.fuso, t.fuso_alpha, t.fuso_beta) = (Some(true), Some(f.alpha), Some(f.beta));
    }
    let mut tcp = true;
    match p.cc {
        CcKind::Reno | CcKind::Cubic | CcKind::Olia | CcKind::Bbr => {}
        CcKind::Lia => t.beta = p.lia_beta,
        CcKind::Dctcp { g, alpha_init } => {
            (t.dctcp_g, t.dctcp_alpha_init) = (Some(g), Some(alpha_init));
        }
        CcKind::Dcm { g } => t.dctcp_g = Some(g),
        CcKind::Xmp { beta } => t.beta = Some(beta),
        CcKind::Amp { beta, gamma, tau } => {
            (t.beta, t.amp_gamma, t.amp_tau) = (Some(beta), Some(gamma), Some(tau));
        }
        CcKind::Mmptcp { switch_bytes } => t.mmptcp_switch_bytes = Some(switch_bytes),
        CcKind::Swift { swift: s } => {
            t.swift_base_target_us = Some(to_us(s.base_target));
            t.swift_hop_scale_us = Some(to_us(s.hop_scale));
            t.swift_fs_range_us = Some(to_us(s.fs_range));
            t.swift_fs_min_cwnd = Some(s.fs_min_cwnd);
            t.swift_fs_max_cwnd = Some(s.fs_max_cwnd);
            t.swift_ai = Some(s.ai);
            t.swift_beta = Some(s.beta);
            t.swift_max_mdf = Some(s.max_mdf);
            t.swift_min_cwnd = Some(s.min_cwnd);
            t.swift_max_cwnd = Some(s.max_cwnd);
            t.swift_retx_reset = Some(s.retx_reset);
            t.swift_host_delay_us = Some(to_us(s.host_delay));
            // The endpoint window's settings apply only with a host delay.
            if s.host_delay > 0 {
                t.swift_endpoint_target_us = Some(to_us(s.endpoint_target));
                t.swift_endpoint_ai = Some(s.endpoint_ai);
                t.swift_endpoint_beta = Some(s.endpoint_beta);
            }
        }
        CcKind::Pfabric => t.pfabric_probe_timeouts = Some(p.tcp.probe_after_timeouts),
        // The RoCE controllers' constants resolve against each NIC's line rate and the
        // base RTT when a connection is built: they stay as given.
        CcKind::Roce | CcKind::Dcqcn { .. } | CcKind::Timely { .. } | CcKind::Hpcc { .. } => {
            tcp = false;
        }
        CcKind::Ndp => {
            if let Some(n) = &p.ndp {
                t.payload_bytes = Some(n.payload);
                t.rto_us = Some(to_us(n.rto));
            }
            tcp = false;
        }
        CcKind::Homa => {
            // RTTbytes, the overcommitment and the unscheduled levels come from the
            // network and the workload when they are not set: they stay as given.
            if let Some(h) = &p.homa {
                t.homa_priority_levels = Some(h.levels);
                t.homa_resend_timeout_us = Some(to_us(h.resend_timeout));
            }
            // Homa's packets take the transport's MSS and header bytes.
            t.tcp.mss = Some(p.tcp.mss);
            t.tcp.header_bytes = Some(p.tcp.header);
            tcp = false;
        }
    }
    if tcp {
        t.tcp = differences(&tcp_spec(&p.tcp), shared);
    }
    t
}
