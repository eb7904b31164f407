//! The lossless-fabric settings of a scenario's switches: the shared buffer
//! (`network.buffer`), PFC (`network.pfc`, `network.tiers.NAME.pfc`) and RED-style ECN
//! marking (`ecn_red` of a switch queue), checked and resolved.

use super::checker::{show, Checker};
use super::schema::{AlphaSpec, EcnRedSpec, QueueSpec, Scenario};
use crate::net::ecn_red::EcnRedConfig;
use crate::net::network::LinkParams;
use crate::net::pfc::{default_headroom, PfcConfig, Xoff, CLASSES};
use crate::net::queue::QueueConfig;
use crate::net::topology::{NodeRole, Topology};

/// A switch's shared buffer as the plan gives it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BufferPlan {
    pub bytes: u64,
    /// α per priority class.
    pub alpha: [f64; CLASSES],
}

/// PFC as the plan gives it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PfcPlan {
    pub cfg: PfcConfig,
    /// Headroom of every ingress port (`None`: sized per port from its link).
    pub headroom: Option<u64>,
    /// The largest packet on the wire (bytes): what default headroom adds per frame.
    pub mtu: u64,
}

/// The HPCC authors' simulator's defaults (`switch-mmu.cc`; its `third.cc` sets the
/// dynamic threshold's shift to 3, α = 1/8, at the hosts' link rate).
const DEFAULT_PFC_ALPHA: f64 = 0.125;
const DEFAULT_RESUME_OFFSET: u64 = 3 * 1024;
const DEFAULT_RESERVE: u64 = 4 * 1024;

/// The shared buffer and PFC of `s`, checked; `mtu` is the largest packet the
/// transports send.
pub(super) fn fabric(
    s: &Scenario,
    tiers: &[&'static str],
    tier_params: &mut [LinkParams],
    mtu: u64,
    c: &mut Checker,
) -> (Option<BufferPlan>, Option<PfcPlan>) {
    let buffer = s.network.buffer.as_ref().map(|b| {
        if b.bytes == 0 {
            c.err("network.buffer.bytes", "must be at least 1, got 0".into());
        }
        let alpha = match &b.alpha {
            None => [1.0; CLASSES],
            Some(AlphaSpec::One(a)) => [*a; CLASSES],
            Some(AlphaSpec::PerClass(v)) => {
                if v.len() != CLASSES {
                    c.err(
                        "network.buffer.alpha",
                        format!(
                            "give one α or one per priority class ({CLASSES}), got {}",
                            v.len()
                        ),
                    );
                }
                let mut a = [1.0; CLASSES];
                for (i, x) in v.iter().take(CLASSES).enumerate() {
                    a[i] = *x;
                }
                a
            }
        };
        for a in alpha {
            if !(a.is_finite() && a > 0.0) {
                c.err(
                    "network.buffer.alpha",
                    format!("each α must be a positive number, got {}", show(a)),
                );
                break;
            }
        }
        BufferPlan {
            bytes: b.bytes,
            alpha,
        }
    });
    for (t, o) in &s.network.tiers {
        if o.pfc.is_some() && s.network.pfc.is_none() {
            c.err(
                &format!("network.tiers.{t}.pfc"),
                "applies only with PFC on (`[network.pfc]`)".into(),
            );
        }
    }
    let pfc = s.network.pfc.as_ref().map(|p| {
        let b = buffer.map_or(0, |b| b.bytes);
        if buffer.is_none() {
            c.err(
                "network.pfc",
                "PFC's ingress accounting shares the switch's buffer: set `[network.buffer]` \
                 (bytes per switch) too"
                    .into(),
            );
        }
        let xoff = match (p.xoff_bytes, p.alpha) {
            (Some(_), Some(_)) => {
                c.err(
                    "network.pfc.alpha",
                    "give either xoff_bytes (a static threshold) or alpha (dynamic), not both"
                        .into(),
                );
                Xoff::Dynamic(DEFAULT_PFC_ALPHA)
            }
            (Some(x), None) => {
                if x == 0 {
                    c.err("network.pfc.xoff_bytes", "must be at least 1, got 0".into());
                } else if buffer.is_some() && x >= b {
                    c.err(
                        "network.pfc.xoff_bytes",
                        format!(
                            "must be below the switch buffer (network.buffer.bytes = {b}), \
                             got {x}"
                        ),
                    );
                }
                Xoff::Static(x)
            }
            (None, a) => {
                let a = a.unwrap_or(DEFAULT_PFC_ALPHA);
                if !(a.is_finite() && a > 0.0) {
                    c.err(
                        "network.pfc.alpha",
                        format!("must be a positive number, got {}", show(a)),
                    );
                }
                Xoff::Dynamic(a)
            }
        };
        if let Some(h) = p.headroom_bytes {
            if h < mtu {
                c.err(
                    "network.pfc.headroom_bytes",
                    format!(
                        "must hold at least one packet of the largest size sent ({mtu} bytes), \
                         got {h}"
                    ),
                );
            } else if buffer.is_some() && h >= b {
                c.err(
                    "network.pfc.headroom_bytes",
                    format!("must be below the switch buffer ({b} bytes), got {h}"),
                );
            }
        }
        let reserve = p.reserve_bytes.unwrap_or(DEFAULT_RESERVE);
        if buffer.is_some() && reserve >= b {
            c.err(
                "network.pfc.reserve_bytes",
                format!("must be below the switch buffer ({b} bytes), got {reserve}"),
            );
        }
        PfcPlan {
            cfg: PfcConfig {
                xoff,
                resume_offset: p.resume_offset_bytes.unwrap_or(DEFAULT_RESUME_OFFSET),
                reserve,
            },
            headroom: p.headroom_bytes,
            mtu,
        }
    });
    for (t, params) in tiers.iter().zip(tier_params.iter_mut()) {
        params.pfc = pfc.is_some() && s.network.tiers.get(*t).and_then(|o| o.pfc).unwrap_or(true);
        let (spec, path) = match s.network.tiers.get(*t).and_then(|o| o.queue.as_ref()) {
            Some(q) => (q, format!("network.tiers.{t}.queue")),
            None => (&s.network.queue, "network.queue".to_string()),
        };
        if let Some(r) = &spec.ecn_red {
            let path = format!("{path}.ecn_red");
            params.ecn_red = Some(ecn_red_config(r, spec, &path, &params.queue, mtu, c));
            if let Some(b) = buffer.filter(|b| r.kmax_bytes > b.bytes) {
                c.err(
                    &format!("{path}.kmax_bytes"),
                    format!(
                        "must be at most the switch buffer ({} bytes), got {}",
                        b.bytes, r.kmax_bytes
                    ),
                );
            }
        }
    }
    if s.network.host_queue.ecn_red.is_some() {
        c.err(
            "network.host_queue.ecn_red",
            "ECN marking runs on switch ports; set it on `network.queue` or a tier's queue".into(),
        );
    }
    (buffer, pfc)
}

fn ecn_red_config(
    r: &EcnRedSpec,
    q: &QueueSpec,
    path: &str,
    queue: &QueueConfig,
    mtu: u64,
    c: &mut Checker,
) -> EcnRedConfig {
    let cfg = EcnRedConfig {
        kmin: r.kmin_bytes,
        kmax: r.kmax_bytes,
        pmax: r.pmax,
    };
    if r.kmin_bytes > r.kmax_bytes {
        c.err(
            &format!("{path}.kmin_bytes"),
            format!(
                "must not exceed kmax_bytes ({}), got {}",
                r.kmax_bytes, r.kmin_bytes
            ),
        );
    }
    if !(r.pmax.is_finite() && r.pmax > 0.0 && r.pmax <= 1.0) {
        c.err(
            &format!("{path}.pmax"),
            format!("must be in (0, 1], got {}", show(r.pmax)),
        );
    }
    // The queue's own limit, in bytes (a limit in packets counts full-sized packets).
    let limit = queue
        .limit_bytes
        .min(queue.limit_packets.saturating_mul(mtu));
    if r.kmin_bytes >= limit {
        c.err(
            &format!("{path}.kmin_bytes"),
            format!("must be below the queue's limit ({limit} bytes), or nothing is marked"),
        );
    }
    if q.ecn_k_packets.is_some() || q.ecn_k_bytes.is_some() {
        c.err(
            path,
            "RED-style marking replaces the step threshold: give ecn_red or ecn_k_packets / \
             ecn_k_bytes, not both"
                .into(),
        );
    }
    if q.red.is_some() {
        c.err(
            path,
            "give ecn_red (marking on the instantaneous queue) or red, not both".into(),
        );
    }
    cfg
}

/// Checks that each switch's headrooms and reserves leave room in its buffer for the
/// shared pool.
pub(super) fn check_switch_memory(
    topo: &Topology,
    tier_params: &[LinkParams],
    buffer: &Option<BufferPlan>,
    pfc: &Option<PfcPlan>,
    c: &mut Checker,
) {
    let (Some(b), Some(p)) = (buffer, pfc) else {
        return;
    };
    let mut need = vec![0u64; topo.roles.len()];
    for &(x, y, t) in &topo.links {
        let l = &tier_params[t as usize];
        let h = p
            .headroom
            .unwrap_or_else(|| default_headroom(l.rate.bits_per_sec(), l.delay, p.mtu));
        for n in [x, y] {
            need[n as usize] += h + CLASSES as u64 * p.cfg.reserve;
        }
    }
    if let Some((n, &most)) = need
        .iter()
        .enumerate()
        .filter(|(n, _)| topo.roles[*n] == NodeRole::Switch)
        .max_by_key(|(_, &v)| v)
    {
        if most >= b.bytes {
            c.err(
                "network.buffer.bytes",
                format!(
                    "switch {} needs {most} bytes for its ports' PFC headroom and reserves, \
                     which leaves no shared buffer of the {} given",
                    topo.names[n], b.bytes
                ),
            );
        }
    }
}
