//! Homa's settings of a `[transports.NAME]` entry (cc = "homa"), each checked and naming
//! its field, and what Homa needs of the rest of the scenario: switch queues with at
//! least its priority levels, one message per flow (no persistent connections, no
//! replicas), and one Homa transport per scenario (a host's agents serve every message
//! to and from it with one set of settings).

use super::checker::Checker;
use super::schema::{Pattern, Scenario, SizeSpec, TransportSpec};
use super::TransportPlan;
use crate::net::network::LinkParams;
use crate::net::packet::MAX_PRIORITY_LEVELS;
use crate::transport::homa::{HomaSettings, DEFAULT_PRIORITY_LEVELS, DEFAULT_RESEND_TIMEOUT};

/// Every Homa field an entry may set, with whether it is set (for the "applies only to"
/// rule), in the order of `HOMA_PARAMS`.
pub(super) fn fields(t: &TransportSpec) -> [(&'static str, bool); 5] {
    [
        ("homa_rtt_bytes", t.homa_rtt_bytes.is_some()),
        ("homa_overcommit", t.homa_overcommit.is_some()),
        ("homa_priority_levels", t.homa_priority_levels.is_some()),
        (
            "homa_unscheduled_levels",
            t.homa_unscheduled_levels.is_some(),
        ),
        ("homa_resend_timeout_us", t.homa_resend_timeout_us.is_some()),
    ]
}

/// The Homa settings of entry `t` at `path`, checked.
pub(super) fn settings(t: &TransportSpec, path: &str, c: &mut Checker) -> HomaSettings {
    let f = |field: &str| format!("{path}.{field}");
    let levels = t.homa_priority_levels.unwrap_or(DEFAULT_PRIORITY_LEVELS);
    c.priority_levels(&f("homa_priority_levels"), levels, 1);
    if let Some(u) = t.homa_unscheduled_levels {
        // With two levels or more, one is left for scheduled packets.
        let most = if levels > 1 { levels - 1 } else { 1 };
        if u == 0 || u > most {
            c.err(
                &f("homa_unscheduled_levels"),
                format!(
                    "must be from 1 to {most} (one of the {levels} levels is left for \
                     scheduled packets), got {u}"
                ),
            );
        }
    }
    if let Some(b) = t.homa_rtt_bytes {
        c.at_least(&f("homa_rtt_bytes"), b, 1);
    }
    if let Some(o) = t.homa_overcommit {
        c.at_least(&f("homa_overcommit"), o as u64, 1);
    }
    HomaSettings {
        rtt_bytes: t.homa_rtt_bytes,
        overcommit: t.homa_overcommit,
        levels: levels.clamp(1, MAX_PRIORITY_LEVELS),
        unscheduled: t.homa_unscheduled_levels,
        resend_timeout: c.time(
            &f("homa_resend_timeout_us"),
            t.homa_resend_timeout_us,
            DEFAULT_RESEND_TIMEOUT,
            true,
        ),
    }
}

/// Homa's levels against the switches' (each tier's queue, named by `tiers`), its
/// flows against what a message is, and one Homa transport at most.
pub(super) fn check(
    s: &Scenario,
    tiers: &[&'static str],
    tier_params: &[LinkParams],
    transports: &[TransportPlan],
    c: &mut Checker,
) {
    let homa: Vec<&TransportPlan> = transports.iter().filter(|t| t.homa.is_some()).collect();
    if homa.len() > 1 {
        c.err(
            &format!("transports.{}.cc", homa[1].name),
            format!(
                "one Homa transport per scenario (a host's Homa agents serve all its \
                 messages with one set of settings); {:?} is one already",
                homa[0].name
            ),
        );
    }
    for t in &homa {
        let levels = t.homa.map_or(1, |h| h.levels);
        // Levels out of range are reported by `settings` alone.
        let given = s
            .transports
            .get(&t.name)
            .and_then(|x| x.homa_priority_levels);
        let valid = given.is_none_or(|n| (1..=MAX_PRIORITY_LEVELS).contains(&n));
        // The tier whose switch ports have the fewest levels (switch ports only: the
        // host tier's NICs hand out one packet at a time).
        let fewest = tiers
            .iter()
            .zip(tier_params)
            .map(|(name, p)| (p.queue.levels(), *name))
            .min();
        if let Some((have, tier)) = fewest.filter(|(have, _)| valid && *have < levels) {
            let queue = match s.network.tiers.get(tier).and_then(|o| o.queue.as_ref()) {
                Some(_) => format!("network.tiers.{tier}.queue.priority_levels"),
                None => "network.queue.priority_levels".to_string(),
            };
            c.err(
                &format!("transports.{}.homa_priority_levels", t.name),
                format!(
                    "Homa uses {levels} priority levels but the switch queues of tier \
                     {tier:?} have {have}: set {queue} = {levels} (or more), or lower \
                     homa_priority_levels"
                ),
            );
        }
        if t.replicas > 1 {
            c.err(
                &format!("transports.{}.replicas", t.name),
                format!(
                    "Homa sends each message once: replicas must be 1, got {}",
                    t.replicas
                ),
            );
        }
    }
    for (i, tr) in s.traffic.iter().enumerate() {
        let is_homa = homa.iter().any(|t| t.name == tr.transport);
        if is_homa && tr.pattern == Pattern::Requests {
            c.err(
                &format!("traffic[{i}].pattern"),
                format!(
                    "transport {:?} is Homa, whose flows are messages of their own: the \
                     requests pattern's persistent connections do not apply",
                    tr.transport
                ),
            );
        }
        if is_homa && tr.connection_pool {
            c.err(
                &format!("traffic[{i}].connection_pool"),
                format!(
                    "transport {:?} is Homa, whose flows are messages of their own: \
                     connection pools do not apply",
                    tr.transport
                ),
            );
        }
        if is_homa && matches!(tr.size, Some(SizeSpec::LongLived)) {
            c.err(
                &format!("traffic[{i}].size"),
                format!(
                    "transport {:?} is Homa, whose messages have a size: long-lived flows \
                     do not apply",
                    tr.transport
                ),
            );
        }
    }
}
