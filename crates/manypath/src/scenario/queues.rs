//! The queues of a scenario's ports: drop-tail limits and ECN marking (`QueueConfig`),
//! and the switch features in front of them, RED and RWNDQ.

use super::checker::Checker;
use super::schema::{MarkAtSpec, QueueSpec, RedSpec, RwndqPreset, RwndqSpec, Scenario};
use crate::net::network::LinkParams;
use crate::net::queue::{MarkAt, QueueConfig};
use crate::net::red::RedConfig;
use crate::net::rwndq::RwndqConfig;
use crate::time::from_us;
use crate::transport::tcp::TcpConfig;

/// The queue `q` (at `path`), checked; `default_limit` packets when it gives no limit.
pub(super) fn queue_config(
    q: &QueueSpec,
    path: &str,
    default_limit: u64,
    histogram: bool,
    c: &mut Checker,
) -> QueueConfig {
    for (field, v) in [
        ("limit_packets", q.limit_packets),
        ("limit_bytes", q.limit_bytes),
        ("ecn_k_bytes", q.ecn_k_bytes),
    ] {
        if v == Some(0) {
            c.err(
                &format!("{path}.{field}"),
                "must be at least 1, got 0".into(),
            );
        }
    }
    let (limit_packets, limit_bytes) = match (q.limit_packets, q.limit_bytes) {
        (None, None) => (default_limit, u64::MAX),
        (p, b) => (p.unwrap_or(u64::MAX), b.unwrap_or(u64::MAX)),
    };
    // A threshold the queue can never reach would never mark.
    for (field, k, limit_field, limit) in [
        (
            "ecn_k_packets",
            q.ecn_k_packets,
            "limit_packets",
            limit_packets,
        ),
        ("ecn_k_bytes", q.ecn_k_bytes, "limit_bytes", limit_bytes),
    ] {
        if let Some(k) = k.filter(|&k| k > limit) {
            let limit = if q.limit_packets.is_none() && q.limit_bytes.is_none() {
                format!("the queue's limit ({limit} packets by default)")
            } else {
                format!("{limit_field} ({limit})")
            };
            c.err(
                &format!("{path}.{field}"),
                format!("must be at most {limit}, or the queue never marks, got {k}"),
            );
        }
    }
    if let Some(n) = q.priority_levels {
        if c.priority_levels(&format!("{path}.priority_levels"), n, 2) && q.priority {
            c.err(
                &format!("{path}.priority_levels"),
                "set either `priority` (two levels) or `priority_levels`, not both".into(),
            );
        }
    }
    QueueConfig {
        limit_packets,
        limit_bytes,
        ecn_k_packets: q.ecn_k_packets.unwrap_or(u64::MAX),
        ecn_k_bytes: q.ecn_k_bytes.unwrap_or(u64::MAX),
        mark_at: match q.ecn_mark {
            MarkAtSpec::Enqueue => MarkAt::Enqueue,
            MarkAtSpec::Dequeue => MarkAt::Dequeue,
        },
        priority: q.priority,
        priority_levels: q.priority_levels.unwrap_or(0),
        histogram,
        pfabric: pfabric_alone(q, path, c),
    }
}

/// Whether `q` is a pFabric queue; one is nothing else (its own scheduling and dropping
/// replace priorities, marking and RED).
fn pfabric_alone(q: &QueueSpec, path: &str, c: &mut Checker) -> bool {
    if !q.pfabric {
        return false;
    }
    for (field, set) in [
        ("priority", q.priority),
        ("priority_levels", q.priority_levels.is_some()),
        ("red", q.red.is_some()),
        ("ecn_red", q.ecn_red.is_some()),
        ("ecn_k_packets", q.ecn_k_packets.is_some()),
        ("ecn_k_bytes", q.ecn_k_bytes.is_some()),
        ("rwndq", q.rwndq.is_some()),
        ("trim", q.trim.is_some()),
    ] {
        if set {
            c.err(
                &format!("{path}.{field}"),
                "a pFabric queue (pfabric = true) schedules and drops by its packets' \
                 priorities and neither marks nor drops early: remove this or `pfabric`"
                    .into(),
            );
        }
    }
    true
}

/// RED and RWNDQ on the switch ports of each tier (whose queue the tier's own `queue`
/// table or `network.queue` gives), set in `tier_params`; on host NICs they are errors.
pub(super) fn switch_features(
    s: &Scenario,
    tiers: &[&'static str],
    tier_params: &mut [LinkParams],
    base_tcp: &TcpConfig,
    c: &mut Checker,
) {
    if s.network.host_queue.rwndq.is_some() {
        c.err(
            "network.host_queue.rwndq",
            "RWNDQ runs on switch ports, not on host NICs; set it on `network.queue` or \
             a tier's queue"
                .into(),
        );
    }
    if s.network.host_queue.red.is_some() {
        c.err(
            "network.host_queue.red",
            "RED runs on switch ports; a host never drops its own packets (its NIC \
             holds the sender back instead); set it on `network.queue` or a tier's queue"
                .into(),
        );
    }
    for (t, params) in tiers.iter().zip(tier_params.iter_mut()) {
        let (spec, path) = match s.network.tiers.get(*t).and_then(|o| o.queue.as_ref()) {
            Some(q) => (q, format!("network.tiers.{t}.queue")),
            None => (&s.network.queue, "network.queue".to_string()),
        };
        if let Some(r) = &spec.rwndq {
            let path = format!("{path}.rwndq");
            params.rwndq = Some(rwndq_config(r, &path, &params.queue, base_tcp, c));
        }
        if let Some(r) = &spec.red {
            let path = format!("{path}.red");
            params.red = Some(red_config(r, &path, params.queue.limit_packets, c));
        }
    }
}

fn red_config(r: &RedSpec, path: &str, limit_packets: u64, c: &mut Checker) -> RedConfig {
    let cfg = RedConfig {
        min_th: r.min_packets,
        max_th: r.max_packets,
        max_p: r.max_p.unwrap_or(0.1),
        weight: r.weight.unwrap_or(0.002),
        gentle: r.gentle.unwrap_or(true),
        ecn: r.ecn,
    };
    if !(cfg.min_th.is_finite() && cfg.min_th >= 0.0) {
        c.err(
            &format!("{path}.min_packets"),
            format!("must be a number ≥ 0, got {}", cfg.min_th),
        );
    } else if !(cfg.max_th.is_finite() && cfg.max_th > cfg.min_th) {
        c.err(
            &format!("{path}.max_packets"),
            format!(
                "must be greater than min_packets ({}), got {}",
                cfg.min_th, cfg.max_th
            ),
        );
    } else if limit_packets != u64::MAX && cfg.min_th >= limit_packets as f64 {
        c.err(
            &format!("{path}.min_packets"),
            format!(
                "must be below the queue's limit of {limit_packets} packets, got {}",
                cfg.min_th
            ),
        );
    }
    for (field, v) in [("max_p", cfg.max_p), ("weight", cfg.weight)] {
        if !(v.is_finite() && v > 0.0 && v <= 1.0) {
            c.err(
                &format!("{path}.{field}"),
                format!("must be in (0, 1], got {v}"),
            );
        }
    }
    cfg
}

/// RWNDQ's parameters for ports with queue `q`: the preset's, with the user's overrides.
fn rwndq_config(
    r: &RwndqSpec,
    path: &str,
    q: &QueueConfig,
    tcp: &TcpConfig,
    c: &mut Checker,
) -> RwndqConfig {
    let (interval_us, updates, fraction) = match r.preset {
        RwndqPreset::Kernel => (1000.0, 8, 0.25),
        RwndqPreset::Ns2 => (50.0, 10, 0.20),
    };
    let interval = c.time(
        &format!("{path}.interval_us"),
        r.interval_us,
        from_us(interval_us),
        true,
    );
    let updates = r.updates.unwrap_or(updates);
    c.at_least(&format!("{path}.updates"), updates as u64, 1);
    let fraction = r.target_fraction.unwrap_or(fraction);
    if !(fraction.is_finite() && fraction > 0.0 && fraction <= 1.0) {
        c.err(
            &format!("{path}.target_fraction"),
            format!("must be in (0, 1], got {fraction}"),
        );
    }
    if r.target_fraction.is_some() && r.target_bytes.is_some() {
        c.err(
            &format!("{path}.target_bytes"),
            "give either target_bytes or target_fraction, not both".into(),
        );
    }
    let segment = (tcp.mss + tcp.header) as u64;
    let limit = q.limit_bytes.min(q.limit_packets.saturating_mul(segment));
    let target_bytes = match r.target_bytes {
        Some(b) => {
            c.at_least(&format!("{path}.target_bytes"), b, 1);
            b
        }
        None => ((limit as f64 * fraction.clamp(0.0, 1.0)) as u64).max(1),
    };
    RwndqConfig {
        interval,
        updates: updates.max(1),
        target_bytes,
        mss: tcp.mss,
    }
}

#[cfg(test)]
mod tests {
    use super::super::plan::tests::{errors, GOOD};
    use super::super::Plan;
    use std::path::Path;

    #[test]
    fn queue_limits_and_red_are_checked() {
        let e = errors(&GOOD.replace("limit_packets = 100", "limit_packets = 0"));
        assert!(
            e.contains("network.queue.limit_packets: must be at least 1, got 0"),
            "{e}"
        );
        let red = GOOD.replace(
            "ecn_k_packets = 20",
            "ecn_k_packets = 20\nred = { min_packets = 120, max_packets = 150 }",
        );
        let e = errors(&red);
        assert!(
            e.contains("network.queue.red.min_packets: must be below the queue's limit of 100"),
            "{e}"
        );
        let e = errors(
            &(GOOD.to_string()
                + "[network.host_queue]\nred = { min_packets = 1, max_packets = 5 }\n"),
        );
        assert!(
            e.contains("network.host_queue.red: RED runs on switch ports"),
            "{e}"
        );
    }

    #[test]
    fn rwndq_takes_its_preset_and_the_queue_limit() {
        let text = GOOD.replace(
            "ecn_k_packets = 20",
            "ecn_k_packets = 20\nrwndq = { preset = \"ns2\" }",
        );
        let p = Plan::from_toml(&text, Path::new(".")).unwrap();
        let r = p.tier_params[1].rwndq.expect("on the switch tiers");
        assert_eq!(r.updates, 10);
        // 20% of 100 full segments of 1460 + 40 bytes.
        assert_eq!(r.target_bytes, 30_000);
        assert!(p.tier_params[0].rwndq.is_some() && p.tier_params[2].rwndq.is_some());
    }
}
