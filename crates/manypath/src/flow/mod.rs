//! The flow-level simulator: steady-state rates of long-lived flows on large fabrics.
//!
//! A run places every connection's subflows on paths (`paths`), then computes rates with
//! one of two models: the iterative TCP model (`tcp`: per-link loss from the offered
//! load, per-subflow rates from the TCP response function, MPTCP's LIA equilibrium for
//! coupled connections, iterated to a fixed point) or max–min fairness (`maxmin`). The
//! links are the packet-level simulator's ports, and single-path and ECMP placement use
//! the packet level's own hashes, so both levels put a scenario's flows on the same paths
//! and report the same tables.

pub mod maxmin;
pub mod paths;
pub mod tcp;

use crate::metrics::{FlowLevelInfo, FlowRecord, QueueRecord, Results, RunCounters, SubflowRecord};
use crate::net::network::{LinkParams, Network};
use crate::net::queue::QueueConfig;
use crate::scenario::{CcKind, FlowModelKind, Plan};
use paths::Paths;

/// What a model computes, per subflow and per link (the network's ports).
#[derive(Clone, Debug, Default)]
pub struct Solution {
    /// Sending rate of each subflow, wire bits/s.
    pub rate: Vec<f64>,
    /// Of that, what arrives (after the path's losses), wire bits/s.
    pub delivered: Vec<f64>,
    /// Loss rate of each link (0 for max–min).
    pub loss: Vec<f64>,
    /// Offered load of each link, wire bits/s.
    pub load: Vec<f64>,
    pub iterations: u32,
    pub converged: bool,
    pub residual: f64,
}

/// Runs a plan at flow level. The plan has been validated for it (`scenario::level`).
pub fn run_plan(plan: Plan) -> Results {
    run_plan_with_progress(plan, u32::MAX, |_| true)
}

/// `run_plan`, calling `progress(iterations)` every `every` iterations of the TCP
/// model's fixed point; a `false` from it stops the model there, and the results (of
/// the last iteration, not converged) are marked partial.
pub fn run_plan_with_progress(
    plan: Plan,
    every: u32,
    progress: impl FnMut(u32) -> bool,
) -> Results {
    let t0 = std::time::Instant::now();
    // No packet is ever queued here: zero-length queues keep the ports from reserving
    // packet slots (hundreds of MB at 27k hosts).
    let unqueued = |q: QueueConfig| QueueConfig {
        limit_packets: 0,
        ..q
    };
    let tiers: Vec<LinkParams> = plan
        .tier_params
        .iter()
        .map(|t| LinkParams {
            queue: unqueued(t.queue),
            ..*t
        })
        .collect();
    let mut net = Network::build(
        &plan.topology,
        &tiers,
        unqueued(plan.host_queue),
        plan.load_balancing,
        plan.seed,
    );
    let flows = plan.flows();
    let subflows: Vec<u32> = flows
        .iter()
        .map(|f| plan.transports[f.transport as usize].subflows)
        .collect();
    let paths = Paths::build(&plan, &mut net, &flows, &subflows);
    let capacity: Vec<f64> = net
        .ports
        .iter()
        .map(|p| p.rate.bits_per_sec() as f64)
        .collect();
    let transport = |c: usize| &plan.transports[flows[c].transport as usize];
    let packet_bits: Vec<f64> = (0..flows.len())
        .map(|c| (transport(c).tcp.mss + transport(c).tcp.header) as f64 * 8.0)
        .collect();
    let coupled: Vec<bool> = (0..flows.len())
        .map(|c| transport(c).cc == CcKind::Lia)
        .collect();
    let rtt = paths.rtts(&net, &plan.tier_params, &packet_bits);
    let problem = tcp::Problem {
        capacity: &capacity,
        paths: &paths,
        rtt: &rtt,
        packet_bits: &packet_bits,
        coupled: &coupled,
    };
    let cfg = plan.flow_model;
    let (sol, model, stopped) = match cfg.kind {
        FlowModelKind::TcpResponse => {
            let (sol, stopped) = tcp::solve_with_progress(
                &problem,
                cfg.max_iterations,
                cfg.tolerance,
                every,
                progress,
            );
            (sol, "tcp-response", stopped)
        }
        // Progressive filling takes one step per bottleneck: quick, not reported.
        FlowModelKind::MaxMin => (maxmin::solve(&capacity, &paths), "max-min", false),
    };
    let wall = t0.elapsed().as_secs_f64();
    let mut results = report(&plan, &net, &flows, &paths, &sol, model, wall);
    results.counters.partial = stopped;
    results
}

fn report(
    plan: &Plan,
    net: &Network,
    flows: &[crate::workload::FlowSpec],
    paths: &Paths,
    sol: &Solution,
    model: &'static str,
    wall_secs: f64,
) -> Results {
    let measured = plan.duration.saturating_sub(plan.warmup) as f64 / 1e12;
    let payload_share = |c: usize| {
        let t = &plan.transports[flows[c].transport as usize].tcp;
        t.mss as f64 / (t.mss + t.header) as f64
    };
    let bytes = |bits_per_s: f64| (bits_per_s * measured / 8.0).round() as u64;
    let mut records = Vec::with_capacity(flows.len());
    let mut sub_records = Vec::new();
    for (c, f) in flows.iter().enumerate() {
        let share = payload_share(c);
        let subs = paths.subflows_of(c);
        let sent: f64 = subs.clone().map(|s| sol.rate[s]).sum::<f64>() * share;
        let got: f64 = subs.clone().map(|s| sol.delivered[s]).sum::<f64>() * share;
        let tp = &plan.transports[f.transport as usize];
        if tp.subflows > 1 || tp.cc.info().coupled {
            for (k, s) in subs.clone().enumerate() {
                let (x, d) = (sol.rate[s] * share, sol.delivered[s] * share);
                sub_records.push(SubflowRecord {
                    flow: c as u32,
                    subflow: k as u32,
                    bytes_sent: bytes(x),
                    bytes_retx: bytes(x) - bytes(d).min(bytes(x)),
                    bytes_acked: bytes(d),
                    timeouts: 0,
                    fast_retx: 0,
                });
            }
        }
        records.push(FlowRecord {
            id: c as u32,
            src: f.src,
            dst: f.dst,
            transport: f.transport,
            class: f.class,
            job: f.job,
            size: None,
            start: f.start,
            finish: None,
            started: true,
            measured: true,
            ideal_fct: None,
            bytes_sent: bytes(sent),
            bytes_retx: bytes(sent) - bytes(got).min(bytes(sent)),
            bytes_acked: bytes(got),
            goodput_bps: got,
            timeouts: 0,
            fast_retx: 0,
            subflows: subs.len() as u32,
            ssr_suppressions: 0,
            ssr_releases: 0,
            recovery_bytes: 0,
            window_violations: 0,
            copies: 1,
            recovery: Default::default(),
            matrix_id: f.deps.matrix_id,
            received: None,
            collective: None,
        });
    }
    let wire_bits = plan
        .transports
        .first()
        .map(|t| (t.tcp.mss + t.tcp.header) as f64 * 8.0)
        .unwrap_or(12_000.0);
    let queues = net
        .ports
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let cap = p.rate.bits_per_sec() as f64;
            let carried = (sol.load[i] * (1.0 - sol.loss[i])).min(cap);
            let lost = sol.load[i] - carried;
            let tx_bytes = bytes(carried);
            let tx_packets = (carried * measured / wire_bits).round() as u64;
            QueueRecord {
                tx_packets,
                tx_bytes,
                utilization: if cap > 0.0 { carried / cap } else { 0.0 },
                enqueued: tx_packets,
                drops: (lost.max(0.0) * measured / wire_bits).round() as u64,
                ..QueueRecord::of_port(net, i as u32)
            }
        })
        .collect();
    let counters = RunCounters {
        sim_time: plan.duration,
        wall_secs,
        flows: flows.len() as u64,
        flows_started: flows.len() as u64,
        seed: plan.seed,
        ..RunCounters::default()
    };
    Results {
        name: plan.name.clone(),
        flows: records,
        subflows: sub_records,
        queues,
        flow_samples: Vec::new(),
        queue_samples: Vec::new(),
        collectives: Vec::new(),
        collective_steps: Vec::new(),
        counters,
        transports: plan.transports.iter().map(|t| t.name.clone()).collect(),
        classes: plan.classes.clone(),
        host_rate_bps: plan.tier_params[0].rate.bits_per_sec(),
        n_hosts: plan.topology.n_hosts,
        warmup: plan.warmup,
        flow_level: Some(FlowLevelInfo {
            model,
            iterations: sol.iterations,
            converged: sol.converged,
            residual: sol.residual,
        }),
        warnings: plan.warnings.clone(),
        roce: false,
        ndp: false,
        trim: false,
        homa: false,
        matrix: false,
        received: false,
        fabric: false,
        parallel: None,
    }
}
