//! The lossless-fabric settings of a scenario's switches: the shared buffer
//! (`network.buffer`, or per switch tier `network.tiers.NAME.buffer`), PFC (`network.pfc`, `network.tiers.NAME.pfc`) and RED-style ECN
//! marking (`ecn_red` of a switch queue), checked and resolved.

use super::checker::{show, Checker};
use super::schema::{AlphaSpec, BufferSpec, EcnRedSpec, QueueSpec, Scenario, TierBufferSpec};
use crate::net::ecn_red::EcnRedConfig;
use crate::net::network::LinkParams;
use crate::net::pfc::{default_headroom, PfcConfig, Xoff, CLASSES};
use crate::net::queue::QueueConfig;
use crate::net::topology::Topology;

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

/// The lossless fabric of a plan: the shared buffer of each switch tier and PFC.
pub(super) struct FabricPlan {
    /// Per tier, the shared buffer of its switches (`Topology::switch_tiers`; `None`:
    /// none, their ports keep their own queue limits).
    pub(super) switch_buffers: Vec<Option<BufferPlan>>,
    pub(super) pfc: Option<PfcPlan>,
}

/// A buffer's settings (`network.buffer` or a tier's `buffer`, at `path`), checked.
fn buffer_plan(b: &BufferSpec, path: &str, c: &mut Checker) -> BufferPlan {
    if b.bytes == 0 {
        c.err(&format!("{path}.bytes"), "must be at least 1, got 0".into());
    }
    let alpha = match &b.alpha {
        None => [1.0; CLASSES],
        Some(AlphaSpec::One(a)) => [*a; CLASSES],
        Some(AlphaSpec::PerClass(v)) => {
            if v.len() != CLASSES {
                c.err(
                    &format!("{path}.alpha"),
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
                &format!("{path}.alpha"),
                format!("each α must be a positive number, got {}", show(a)),
            );
            break;
        }
    }
    BufferPlan {
        bytes: b.bytes,
        alpha,
    }
}

/// Per tier, its switches' buffer and the field it comes from (`network.buffer`, or the
/// tier's own `buffer`).
fn tier_buffers(
    s: &Scenario,
    tiers: &[&'static str],
    c: &mut Checker,
) -> Vec<(Option<BufferPlan>, String)> {
    let network = s
        .network
        .buffer
        .as_ref()
        .map(|b| buffer_plan(b, "network.buffer", c));
    tiers
        .iter()
        .map(|t| {
            let path = format!("network.tiers.{t}.buffer");
            match s.network.tiers.get(*t).and_then(|o| o.buffer.as_ref()) {
                None => (network, "network.buffer".to_string()),
                Some(TierBufferSpec::Off(false)) => (None, path),
                Some(TierBufferSpec::Off(true)) => {
                    c.err(
                        &path,
                        "give this tier's switches a buffer as a table { bytes, alpha }, or                          false for none, got true"
                            .into(),
                    );
                    (network, path)
                }
                Some(TierBufferSpec::Buffer(b)) => (Some(buffer_plan(b, &path, c)), path),
            }
        })
        .collect()
}

/// The shared buffers and PFC of `s`, checked, on `topo` (`None`: an invalid topology,
/// whose checks are skipped); `mtu` is the largest packet the transports send.
pub(super) fn fabric(
    s: &Scenario,
    tiers: &[&'static str],
    topo: Option<&Topology>,
    tier_params: &mut [LinkParams],
    mtu: u64,
    c: &mut Checker,
) -> FabricPlan {
    let buffers = tier_buffers(s, tiers, c);
    for (t, o) in &s.network.tiers {
        if o.pfc.is_some() && s.network.pfc.is_none() {
            c.err(
                &format!("network.tiers.{t}.pfc"),
                "applies only with PFC on (`[network.pfc]`)".into(),
            );
        }
    }
    for (t, params) in tiers.iter().zip(tier_params.iter_mut()) {
        params.pfc =
            s.network.pfc.is_some() && s.network.tiers.get(*t).and_then(|o| o.pfc).unwrap_or(true);
    }
    // Per switch, its buffer and where it is set, and whether PFC runs on its links.
    let switches = topo.map(|topo| switches(topo, tier_params, &buffers));
    if let (Some(topo), Some(sw)) = (topo, &switches) {
        check_tier_buffers(s, tiers, topo, &buffers, sw, c);
    }
    let pfc = s.network.pfc.as_ref().map(|p| {
        // The smallest buffer of a switch with PFC: what each threshold must fit in.
        let smallest = switches.as_ref().and_then(|sw| {
            sw.iter()
                .filter(|w| w.pfc)
                .filter_map(|w| w.buffer.map(|b| (b.bytes, w.path)))
                .min_by_key(|&(b, _)| b)
        });
        let b = smallest.map_or(0, |(b, _)| b);
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
                } else if let Some((b, path)) = smallest.filter(|&(b, _)| x >= b) {
                    c.err(
                        "network.pfc.xoff_bytes",
                        format!("must be below the switch buffer ({path}.bytes = {b}), got {x}"),
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
            } else if smallest.is_some() && h >= b {
                c.err(
                    "network.pfc.headroom_bytes",
                    format!("must be below the switch buffer ({b} bytes), got {h}"),
                );
            }
        }
        let reserve = p.reserve_bytes.unwrap_or(DEFAULT_RESERVE);
        if smallest.is_some() && reserve >= b {
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
    for (ti, (t, params)) in tiers.iter().zip(tier_params.iter_mut()).enumerate() {
        let (spec, path) = match s.network.tiers.get(*t).and_then(|o| o.queue.as_ref()) {
            Some(q) => (q, format!("network.tiers.{t}.queue")),
            None => (&s.network.queue, "network.queue".to_string()),
        };
        if let Some(r) = &spec.ecn_red {
            let path = format!("{path}.ecn_red");
            params.ecn_red = Some(ecn_red_config(r, spec, &path, &params.queue, mtu, c));
            // The smallest buffer of a switch with ports on this tier's links.
            let smallest = topo.zip(switches.as_ref()).and_then(|(topo, sw)| {
                topo.links
                    .iter()
                    .filter(|l| l.2 as usize == ti)
                    .flat_map(|l| [l.0, l.1])
                    .filter_map(|n| sw.get((n as usize).checked_sub(topo.n_hosts as usize)?))
                    .filter_map(|w| w.buffer.map(|b| b.bytes))
                    .min()
            });
            if let Some(b) = smallest.filter(|&b| r.kmax_bytes > b) {
                c.err(
                    &format!("{path}.kmax_bytes"),
                    format!(
                        "must be at most the switch buffer ({b} bytes), got {}",
                        r.kmax_bytes
                    ),
                );
            }
        }
    }
    if let (Some(topo), Some(sw), Some(p)) = (topo, &switches, &pfc) {
        check_switch_memory(topo, tier_params, sw, p, c);
    }
    if s.network.host_queue.ecn_red.is_some() {
        c.err(
            "network.host_queue.ecn_red",
            "ECN marking runs on switch ports; set it on `network.queue` or a tier's queue".into(),
        );
    }
    FabricPlan {
        switch_buffers: buffers.into_iter().map(|(b, _)| b).collect(),
        pfc,
    }
}

/// A switch as the fabric's checks see it.
struct Switch<'a> {
    tier: u8,
    buffer: Option<BufferPlan>,
    /// The field its buffer is set by.
    path: &'a str,
    /// PFC runs on one of its links.
    pfc: bool,
}

/// The switches of `topo` (hosts come first, so switch i is node n_hosts + i).
fn switches<'a>(
    topo: &Topology,
    tier_params: &[LinkParams],
    buffers: &'a [(Option<BufferPlan>, String)],
) -> Vec<Switch<'a>> {
    let mut pfc = vec![false; topo.roles.len()];
    for &(a, b, t) in &topo.links {
        if tier_params[t as usize].pfc {
            pfc[a as usize] = true;
            pfc[b as usize] = true;
        }
    }
    topo.switch_tiers()
        .into_iter()
        .enumerate()
        .skip(topo.n_hosts as usize)
        .map(|(n, tier)| {
            let tier = tier.expect("a switch has links");
            let (buffer, path) = &buffers[tier as usize];
            Switch {
                tier,
                buffer: *buffer,
                path,
                pfc: pfc[n],
            }
        })
        .collect()
}

/// A tier's own buffer must have switches to apply to, and every switch with a PFC link
/// a buffer (PFC's ingress accounting shares it).
fn check_tier_buffers(
    s: &Scenario,
    tiers: &[&'static str],
    topo: &Topology,
    buffers: &[(Option<BufferPlan>, String)],
    switches: &[Switch<'_>],
    c: &mut Checker,
) {
    let has_switches = |t: usize| switches.iter().any(|w| w.tier as usize == t);
    let switch_tiers: Vec<&str> = (0..tiers.len())
        .filter(|&t| has_switches(t))
        .map(|t| tiers[t])
        .collect();
    for (t, name) in tiers.iter().enumerate() {
        let own = s.network.tiers.get(*name).and_then(|o| o.buffer.as_ref());
        if own.is_some() && !has_switches(t) {
            c.err(
                &buffers[t].1,
                format!(
                    "no switch of the {} is of this tier: a switch's tier is that of its links \
                     towards the hosts (here: {})",
                    topo.kind,
                    switch_tiers.join(", ")
                ),
            );
        }
        let unbuffered_pfc = switches
            .iter()
            .any(|w| w.tier as usize == t && w.pfc && w.buffer.is_none());
        if !unbuffered_pfc {
            continue;
        }
        if own.is_some() {
            c.err(
                &buffers[t].1,
                "PFC runs on links of this tier's switches, and its ingress accounting shares \
                 their buffer: give them one, or set `pfc = false` on their links' tiers"
                    .into(),
            );
        } else if buffers.iter().all(|(b, _)| b.is_none()) {
            c.err(
                "network.pfc",
                "PFC's ingress accounting shares the switch's buffer: set `[network.buffer]` \
                 (bytes per switch) too"
                    .into(),
            );
            return;
        } else {
            c.err(
                "network.pfc",
                format!(
                    "PFC's ingress accounting shares the switch's buffer, and the switches of \
                     tier {name} have none: set `[network.buffer]` or \
                     `network.tiers.{name}.buffer`"
                ),
            );
        }
    }
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
fn check_switch_memory(
    topo: &Topology,
    tier_params: &[LinkParams],
    switches: &[Switch<'_>],
    p: &PfcPlan,
    c: &mut Checker,
) {
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
    // The switch short of the most room.
    let short = switches
        .iter()
        .enumerate()
        .filter_map(|(i, w)| {
            let n = topo.n_hosts as usize + i;
            let b = w.buffer?.bytes;
            (need[n] >= b).then_some((n, b, w.path))
        })
        .max_by_key(|&(n, b, _)| need[n] - b);
    if let Some((n, bytes, path)) = short {
        c.err(
            &format!("{path}.bytes"),
            format!(
                "switch {} needs {} bytes for its ports' PFC headroom and reserves, which \
                 leaves no shared buffer of the {bytes} given",
                topo.names[n], need[n]
            ),
        );
    }
}

/// The field that makes the fabric lossless, if any: `network.buffer`, a tier's own
/// `buffer`, or `network.pfc` (for the queues that cannot take part in one).
pub(super) fn lossless_field(s: &Scenario) -> Option<String> {
    let tier_buffer = s.network.tiers.iter().find_map(|(t, o)| match o.buffer {
        Some(TierBufferSpec::Buffer(_)) => Some(format!("network.tiers.{t}.buffer")),
        Some(TierBufferSpec::Off(_)) | None => None,
    });
    if s.network.buffer.is_some() {
        Some("network.buffer".to_string())
    } else if tier_buffer.is_some() {
        tier_buffer
    } else {
        s.network.pfc.is_some().then(|| "network.pfc".to_string())
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
        let b = p.switch_buffers[0].expect("a buffer");
        assert_eq!((b.bytes, b.alpha), (4_000_000, [1.0, 1.0]));
        assert!(
            p.switch_buffers.iter().all(|x| *x == Some(b)),
            "on every tier"
        );
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
        assert_eq!(p.switch_buffers[2].unwrap().alpha, [2.0, 0.5]);
        let off: Vec<bool> = p.tier_params.iter().map(|t| t.pfc).collect();
        assert_eq!(off, vec![true, true, false]);
    }

    /// A tier's own buffer replaces the network's for its switches, `false` takes it
    /// away, and a tier may have a buffer when the network has none.
    #[test]
    fn tiers_set_their_switches_buffers() {
        let p = Plan::from_toml(
            &with(
                "[network.buffer]\nbytes = 4000000\n\
                 [network.tiers.host]\nbuffer = { bytes = 1000000, alpha = 0.5 }\n\
                 [network.tiers.agg_core]\nbuffer = false\n",
            ),
            Path::new("."),
        )
        .unwrap();
        let b: Vec<Option<(u64, f64)>> = p
            .switch_buffers
            .iter()
            .map(|b| b.map(|b| (b.bytes, b.alpha[1])))
            .collect();
        assert_eq!(
            b,
            vec![Some((1_000_000, 0.5)), Some((4_000_000, 1.0)), None]
        );
        let p = Plan::from_toml(
            &with("[network.tiers.edge_agg]\nbuffer = { bytes = 2000000 }\n"),
            Path::new("."),
        )
        .unwrap();
        let on: Vec<bool> = p.switch_buffers.iter().map(|b| b.is_some()).collect();
        assert_eq!(on, vec![false, true, false]);
        // PFC on the host tier only needs buffers at the edge switches.
        let p = Plan::from_toml(
            &with(
                "[network.pfc]\n[network.tiers.host]\nbuffer = { bytes = 2000000 }\n\
                 [network.tiers.edge_agg]\npfc = false\n[network.tiers.agg_core]\npfc = false\n",
            ),
            Path::new("."),
        );
        assert!(p.is_ok(), "{:?}", p.err());
    }

    #[test]
    fn bad_tier_buffers_name_their_field() {
        let cases = [
            (
                "[network.tiers.host]\nbuffer = true\n",
                "network.tiers.host.buffer: give this tier's switches a buffer as a table",
            ),
            (
                "[network.tiers.edge_agg]\nbuffer = { bytes = 0 }\n",
                "network.tiers.edge_agg.buffer.bytes: must be at least 1, got 0",
            ),
            (
                "[network.tiers.edge_agg]\nbuffer = { bytes = 1000, alpha = [1.0] }\n",
                "network.tiers.edge_agg.buffer.alpha: give one α or one per priority class",
            ),
            (
                "[network.tiers.agg_core]\nbuffer = { bytes = 1000, alpha = -2 }\n",
                "network.tiers.agg_core.buffer.alpha: each α must be a positive number, got -2",
            ),
            (
                "[network.buffer]\nbytes = 4000000\n[network.pfc]\n\
                 [network.tiers.agg_core]\nbuffer = false\n",
                "network.tiers.agg_core.buffer: PFC runs on links of this tier's switches",
            ),
            (
                "[network.pfc]\n[network.tiers.host]\nbuffer = { bytes = 2000000 }\n",
                "network.pfc: PFC's ingress accounting shares the switch's buffer, and the \
                 switches of tier edge_agg have none",
            ),
            (
                "[network.buffer]\nbytes = 4000000\n[network.pfc]\nxoff_bytes = 300000\n\
                 [network.tiers.edge_agg]\nbuffer = { bytes = 200000 }\n",
                "network.pfc.xoff_bytes: must be below the switch buffer \
                 (network.tiers.edge_agg.buffer.bytes = 200000), got 300000",
            ),
            (
                "[network.buffer]\nbytes = 4000000\n[network.pfc]\n\
                 [network.tiers.agg_core]\nbuffer = { bytes = 20000 }\n",
                "network.tiers.agg_core.buffer.bytes: switch",
            ),
        ];
        for (extra, expect) in cases {
            let e = errors(&with(extra));
            assert!(e.contains(expect), "{extra}\n→ {e}");
        }
        // A tier without switches of its own: the dumbbell's bottleneck link joins two
        // switches that both have hosts.
        let dumbbell = with("[network.tiers.bottleneck]\nbuffer = { bytes = 100000 }\n").replace(
            "[topology.fat_tree]\n        k = 4",
            "[topology.dumbbell]\npairs = 2",
        );
        let e = errors(&dumbbell);
        assert!(
            e.contains("network.tiers.bottleneck.buffer: no switch of the dumbbell with 2 pairs is of this tier")
                && e.contains("(here: host)"),
            "{e}"
        );
        let flow = "level = \"flow\"\n".to_string()
            + &with("[network.tiers.host]\nbuffer = { bytes = 1000 }\n");
        assert!(
            errors(&flow).contains("network.tiers.host.buffer: switch buffers are packet-level")
        );
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
