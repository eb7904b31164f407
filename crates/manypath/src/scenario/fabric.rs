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

#[cfg(test)]
mod tests {
    use super::super::plan::tests::{errors, GOOD};
    use super::super::Plan;
    use crate::net::pfc::Xoff;
    use std::path::Path;

    fn with(extra: &str) -> String {
        GOOD.to_string() + extra
    }

    #[test]
    fn pfc_and_buffer_resolve_with_their_defaults() {
        let p = Plan::from_toml(
            &with("[network.buffer]\nbytes = 4000000\n[network.pfc]\n"),
            Path::new("."),
        )
        .unwrap();
        let b = p.buffer.expect("a buffer");
        assert_eq!((b.bytes, b.alpha), (4_000_000, [1.0, 1.0]));
        let pfc = p.pfc.expect("PFC");
        assert_eq!(pfc.cfg.xoff, Xoff::Dynamic(0.125));
        assert_eq!((pfc.cfg.resume_offset, pfc.cfg.reserve), (3072, 4096));
        assert_eq!(pfc.mtu, 1500);
        assert!(p.tier_params.iter().all(|t| t.pfc));
        let p = Plan::from_toml(
            &with(
                "[network.buffer]\nbytes = 4000000\nalpha = [2.0, 0.5]\n[network.pfc]\n\
                 [network.tiers.agg_core]\npfc = false\n",
            ),
            Path::new("."),
        )
        .unwrap();
        assert_eq!(p.buffer.unwrap().alpha, [2.0, 0.5]);
        let off: Vec<bool> = p.tier_params.iter().map(|t| t.pfc).collect();
        assert_eq!(off, vec![true, true, false]);
    }

    #[test]
    fn bad_fabric_settings_name_their_field() {
        let cases = [
            (
                "[network.buffer]\nbytes = 100000\n[network.pfc]\nxoff_bytes = 200000\n",
                "network.pfc.xoff_bytes: must be below the switch buffer",
            ),
            (
                "[network.buffer]\nbytes = 1000000\n[network.pfc]\nheadroom_bytes = 1000\n",
                "network.pfc.headroom_bytes: must hold at least one packet",
            ),
            (
                "[network.buffer]\nbytes = 1000000\nalpha = 0\n",
                "network.buffer.alpha: each α must be a positive number, got 0",
            ),
            (
                "[network.buffer]\nbytes = 1000000\nalpha = [1.0, -1.0]\n",
                "network.buffer.alpha: each α must be a positive number, got -1",
            ),
            (
                "[network.buffer]\nbytes = 1000000\n[network.pfc]\nalpha = 0.0\n",
                "network.pfc.alpha: must be a positive number, got 0",
            ),
            (
                "[network.pfc]\n",
                "network.pfc: PFC's ingress accounting shares the switch's buffer",
            ),
            (
                "[network.buffer]\nbytes = 0\n",
                "network.buffer.bytes: must be at least 1, got 0",
            ),
            (
                "[network.buffer]\nbytes = 1000000\n[network.pfc]\nxoff_bytes = 1000\nalpha = 0.5\n",
                "network.pfc.alpha: give either xoff_bytes",
            ),
            (
                "[network.buffer]\nbytes = 20000\n[network.pfc]\n",
                "network.buffer.bytes: switch",
            ),
            (
                "[network.tiers.agg_core]\npfc = false\n",
                "network.tiers.agg_core.pfc: applies only with PFC on",
            ),
        ];
        for (extra, expect) in cases {
            let e = errors(&with(extra));
            assert!(e.contains(expect), "{extra}\n→ {e}");
        }
    }

    #[test]
    fn red_style_marking_is_checked() {
        let q = |red: &str| GOOD.replace("ecn_k_packets = 20", &format!("ecn_red = {{ {red} }}"));
        let p = Plan::from_toml(
            &q("kmin_bytes = 20000, kmax_bytes = 80000, pmax = 0.2"),
            Path::new("."),
        )
        .unwrap();
        let cfg = p.tier_params[1].ecn_red.expect("on switch tiers");
        assert_eq!((cfg.kmin, cfg.kmax, cfg.pmax), (20_000, 80_000, 0.2));
        let cases = [
            (
                "kmin_bytes = 90000, kmax_bytes = 80000, pmax = 0.2",
                "network.queue.ecn_red.kmin_bytes: must not exceed kmax_bytes",
            ),
            (
                "kmin_bytes = 1000, kmax_bytes = 8000, pmax = 0",
                "network.queue.ecn_red.pmax: must be in (0, 1]",
            ),
            (
                "kmin_bytes = 200000, kmax_bytes = 800000, pmax = 0.5",
                "network.queue.ecn_red.kmin_bytes: must be below the queue's limit (150000 bytes)",
            ),
        ];
        for (red, expect) in cases {
            let e = errors(&q(red));
            assert!(e.contains(expect), "{red}\n→ {e}");
        }
        let both = GOOD.replace(
            "ecn_k_packets = 20",
            "ecn_k_packets = 20\necn_red = { kmin_bytes = 1, kmax_bytes = 2, pmax = 1 }",
        );
        assert!(errors(&both).contains("network.queue.ecn_red: RED-style marking replaces"));
        let host =
            with("[network.host_queue]\necn_red = { kmin_bytes = 1, kmax_bytes = 2, pmax = 1 }\n");
        assert!(
            errors(&host).contains("network.host_queue.ecn_red: ECN marking runs on switch ports")
        );
        let flow = "level = \"flow\"\n".to_string() + &with("[network.buffer]\nbytes = 1000\n");
        assert!(errors(&flow).contains("network.buffer: switch buffers are packet-level"));
    }
}
