//! `pattern = "collective"`: the operation, algorithm, ranks and their placement,
//! buffer size, iterations and compute gap of a collective job, checked, and the job
//! generated as a connection matrix (`workload::generate::collective`).

use super::placement::Placement;
use crate::scenario::checker::{Checker, MAX_TIME_US};
use crate::scenario::schema::{SizeSpec, TrafficSpec};
use crate::time::from_us;
use crate::workload::generate::{
    place, Algorithm, Collective, CollectiveJob, CollectiveSpec, MatrixGen, Pattern, ALGORITHMS,
    COLLECTIVES,
};
use crate::workload::Trigger;

/// The most transfers one collective entry may generate (all are drawn before the run).
const MAX_TRANSFERS: u64 = 20_000_000;

/// What a collective entry is checked against, besides its own fields.
pub(super) struct CollectiveSetting<'a> {
    /// The entry's candidate hosts (`hosts`, `host_range` or all), checked.
    pub(super) hosts: &'a [u32],
    pub(super) seed: u64,
    /// The entry's index, for its placement's random stream.
    pub(super) entry: usize,
    /// The run's triggers, collective jobs and collectives before this entry's.
    pub(super) trigger_base: u32,
    pub(super) job: u32,
    pub(super) first: u32,
    /// The entry's transport carries messages one after another on a persistent
    /// connection (TCP and its variants; not yet NDP's or RoCE's queue pairs, and Homa's
    /// messages have no connections), and sends each flow once (no copies): what a
    /// connection per pair needs.
    pub(super) persistent: bool,
    pub(super) replicas: u32,
    pub(super) transport: &'a str,
}

/// The fields only a collective takes, rejected on other patterns.
fn own_fields(t: &TrafficSpec) -> [(&'static str, bool); 8] {
    [
        ("connections", t.connections.is_some()),
        ("collective", t.collective.is_some()),
        ("algorithm", t.algorithm.is_some()),
        ("ranks", t.ranks.is_some()),
        ("iterations", t.iterations.is_some()),
        ("gap_us", t.gap_us.is_some()),
        ("chunks", t.chunks.is_some()),
        ("group_size", t.group_size.is_some()),
    ]
}

fn names<T: Copy>(all: &[T], name: impl Fn(T) -> &'static str) -> String {
    all.iter()
        .map(|&x| format!("{:?}", name(x)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Entry `t` (at `path`): its collective as a matrix, or `None` when it is not a
/// collective (its collective-only fields are then errors) or something is wrong.
pub(super) fn collective_fields(
    t: &TrafficSpec,
    path: &str,
    at: &CollectiveSetting,
    c: &mut Checker,
) -> Option<MatrixGen> {
    let field = |name: &str| format!("{path}.{name}");
    if t.pattern != Pattern::Collective {
        c.not_given(
            path,
            &own_fields(t),
            "applies only to pattern \"collective\"",
        );
        // (A GOAL schedule's too.)
        c.not_given(
            path,
            &[(
                "placement",
                t.placement.is_some() && t.pattern != Pattern::Goal,
            )],
            "applies only to pattern \"collective\" or \"goal\"",
        );
        return None;
    }
    let before = c.problems.len();
    c.not_given(
        path,
        &[
            ("arrival", t.arrival.is_some()),
            ("size_split", t.size_split.is_some()),
            ("closed_loop", t.closed_loop),
            ("repeat", t.repeat != 1),
            ("stagger_us", t.stagger_us != 0.0),
            ("flows", t.flows.is_some()),
            ("connection_pool", t.connection_pool),
        ],
        "does not apply to pattern \"collective\" (its algorithm gives the flows; \
         `iterations` and `gap_us` repeat it)",
    );
    let collective = match t.collective.as_deref() {
        Some(name) => match COLLECTIVES.iter().find(|x| x.name() == name) {
            Some(&x) => Some(x),
            None => {
                c.err(
                    &field("collective"),
                    format!(
                        "unknown collective {name:?} (known: {})",
                        names(&COLLECTIVES, Collective::name)
                    ),
                );
                None
            }
        },
        None => {
            c.err(
                &field("collective"),
                format!(
                    "pattern \"collective\" needs one of {}",
                    names(&COLLECTIVES, Collective::name)
                ),
            );
            None
        }
    };
    let algorithm = collective.and_then(|x| algorithm(t, x, &field("algorithm"), c));
    let bytes = match &t.size {
        Some(SizeSpec::Fixed(b)) => Some(*b),
        _ => {
            c.err(
                &field("size"),
                "pattern \"collective\" needs the buffer's size in bytes: size = { fixed = BYTES }"
                    .into(),
            );
            None
        }
    };
    let hosts = ranks_on_hosts(t, path, at, c);
    let n = hosts.len() as u32;
    let iterations = t.iterations.unwrap_or(1);
    c.at_least(&field("iterations"), iterations as u64, 1);
    let gap = match t.gap_us {
        Some(x) => {
            c.non_negative(&field("gap_us"), x);
            c.time_us(&field("gap_us"), x);
            if iterations < 2 {
                c.err(
                    &field("gap_us"),
                    "is the compute time between iterations: it needs iterations ≥ 2".into(),
                );
            }
            from_us(x.clamp(0.0, MAX_TIME_US))
        }
        None => 0,
    };
    let pipelined = matches!(
        (collective, algorithm),
        (
            Some(Collective::AllReduce),
            Some(Algorithm::DoubleBinaryTree)
        ) | (Some(Collective::Broadcast), Some(Algorithm::Ring))
    );
    let chunks = t.chunks.unwrap_or(1);
    if t.chunks.is_some() {
        if !pipelined {
            c.err(
                &field("chunks"),
                "applies only to the pipelined algorithms: allreduce by double_binary_tree, \
                 broadcast by ring"
                    .into(),
            );
        }
        c.at_least(&field("chunks"), chunks as u64, 1);
    }
    let hierarchical = algorithm == Some(Algorithm::Hierarchical);
    let group = t.group_size.unwrap_or(0);
    match (hierarchical, t.group_size) {
        (true, None) => c.err(
            &field("group_size"),
            "algorithm \"hierarchical\" needs the ranks per group (consecutive ranks, e.g. \
             the hosts under one switch)"
                .into(),
        ),
        (true, Some(g)) if n >= 2 && (g < 2 || g >= n || !n.is_multiple_of(g)) => c.err(
            &field("group_size"),
            format!("must divide the {n} ranks into at least two groups of at least two, got {g}"),
        ),
        (false, Some(_)) => c.err(
            &field("group_size"),
            "applies only to algorithm \"hierarchical\"".into(),
        ),
        (true, Some(_)) | (false, None) => {}
    }
    let pairs = match t.connections.as_deref() {
        None => at.persistent && at.replicas == 1,
        Some("pair") => {
            if !at.persistent {
                c.err(
                    &field("connections"),
                    format!(
                        "transport {:?} does not carry messages one after another on a \
                         persistent connection (TCP and its variants do): give \"transfer\"",
                        at.transport
                    ),
                );
            } else if at.replicas > 1 {
                c.err(
                    &field("connections"),
                    format!(
                        "a connection per pair carries each transfer once: transports.{}.replicas \
                         must be 1, got {} (or give \"transfer\")",
                        at.transport, at.replicas
                    ),
                );
            }
            true
        }
        Some("transfer") => false,
        Some(other) => {
            c.err(
                &field("connections"),
                format!("expected \"pair\" or \"transfer\", got {other:?}"),
            );
            false
        }
    };
    if let Some(a) = algorithm {
        if a.needs_power_of_two() && n >= 2 && !n.is_power_of_two() {
            c.err(
                &field("algorithm"),
                format!(
                    "{:?} pairs ranks at distances 1, 2, 4, ...: it needs a power-of-two number \
                     of ranks, got {n}",
                    a.name()
                ),
            );
        }
    }
    if let Some(b) = bytes {
        let least = n as u64 * chunks as u64 * 2;
        if b < least {
            c.err(
                &field("size"),
                format!(
                    "must give every rank's piece at least a byte: at least {least} bytes for \
                     {n} ranks, got {b}"
                ),
            );
        }
    }
    if c.problems.len() != before {
        return None;
    }
    let spec = CollectiveSpec {
        collective: collective?,
        algorithm: algorithm?,
        bytes: bytes?,
        ranks: n,
        chunks,
        group,
    };
    let per = estimated_transfers(&spec);
    if per.saturating_mul(iterations as u64) > MAX_TRANSFERS {
        c.err(
            &field("iterations"),
            format!(
                "{iterations} iterations of {per} transfers is more than {MAX_TRANSFERS} flows"
            ),
        );
        return None;
    }
    let shape = spec.shape();
    let (conns, triggers) = place(&shape, &hosts, iterations, gap);
    Some(MatrixGen {
        conns,
        triggers: triggers
            .into_iter()
            .enumerate()
            .map(|(i, kind)| Trigger {
                kind,
                id: i as u32 + 1,
            })
            .collect(),
        trigger_base: at.trigger_base,
        collective: Some(CollectiveJob {
            job: at.job,
            collective: spec.collective,
            algorithm: spec.algorithm,
            hosts,
            bytes: spec.bytes,
            iterations,
            first: at.first,
            pairs,
        }),
    })
}

/// An upper bound on one run of the collective's transfers, before building it.
fn estimated_transfers(s: &CollectiveSpec) -> u64 {
    let n = s.ranks as u64;
    n * n * 2 + 4 * n * s.chunks as u64
}

/// The algorithm, which must be one the collective has.
fn algorithm(t: &TrafficSpec, x: Collective, field: &str, c: &mut Checker) -> Option<Algorithm> {
    let known = names(x.algorithms(), Algorithm::name);
    let Some(name) = t.algorithm.as_deref() else {
        c.err(
            field,
            format!("a {} needs an algorithm: one of {known}", x.name()),
        );
        return None;
    };
    match ALGORITHMS.iter().find(|a| a.name() == name) {
        Some(a) if x.algorithms().contains(a) => Some(*a),
        Some(_) => {
            c.err(
                field,
                format!(
                    "{} has no algorithm {name:?} here (it has {known})",
                    x.name()
                ),
            );
            None
        }
        None => {
            c.err(
                field,
                format!(
                    "unknown algorithm {name:?} (known: {})",
                    names(&ALGORITHMS, Algorithm::name)
                ),
            );
            None
        }
    }
}

/// The host of each rank: the entry's hosts (`hosts` in its order, `host_range` or
/// all), `ranks` of them taken by `placement`: contiguous (the first), strided (evenly
/// spread) or random (drawn with the run's seed).
fn ranks_on_hosts(
    t: &TrafficSpec,
    path: &str,
    at: &CollectiveSetting,
    c: &mut Checker,
) -> Vec<u32> {
    let field = |name: &str| format!("{path}.{name}");
    let hosts = at.hosts;
    let mut seen = std::collections::HashSet::new();
    if let Some(d) = hosts.iter().find(|&&h| !seen.insert(h)) {
        c.err(
            &field("hosts"),
            format!("host {d} is listed twice: a collective has one rank per host"),
        );
        return Vec::new();
    }
    let n = t.ranks.unwrap_or(hosts.len() as u32);
    if n < 2 {
        c.err(
            &field(if t.ranks.is_some() { "ranks" } else { "hosts" }),
            format!("a collective needs at least two ranks, got {n}"),
        );
        return Vec::new();
    }
    if n as usize > hosts.len() {
        c.err(
            &field("ranks"),
            format!(
                "{n} ranks need as many hosts; the entry has {}",
                hosts.len()
            ),
        );
        return Vec::new();
    }
    let field_name = field("placement");
    Placement::of(t.placement.as_deref(), at.seed, at.entry, &field_name, c)
        .map_or_else(Vec::new, |p| p.hosts(hosts, n as usize))
}

#[cfg(test)]
mod tests {
    use crate::scenario::plan::tests::errors;
    use crate::scenario::Plan;
    use std::path::Path;

    const RING: &str = r#"
duration_ms = 5
[topology.fat_tree]
k = 4
[[traffic]]
pattern = "collective"
collective = "allreduce"
algorithm = "ring"
transport = "dctcp"
size = { fixed = 1600000 }
"#;

    #[test]
    fn a_ring_allreduce_over_every_host_is_its_matrix() {
        let p = Plan::from_toml(RING, Path::new(".")).unwrap();
        let (flows, _) = p.workload();
        assert_eq!(flows.len(), 16 * 30);
        assert!(flows.iter().all(|f| f.size == Some(100_000)));
        assert_eq!(flows.iter().filter(|f| f.deps.wait.is_none()).count(), 16);
        assert_eq!(p.triggers().len(), 16 * 29 + 1);
        let c = p.collectives();
        assert_eq!(c.len(), 1);
        assert_eq!((c[0].hosts.len(), c[0].bytes), (16, 1_600_000));
    }

    #[test]
    fn placements_pick_the_ranks_hosts() {
        let hosts = |extra: &str| -> Vec<u32> {
            let p = Plan::from_toml(&(RING.to_string() + extra), Path::new(".")).unwrap();
            let mut h: Vec<u32> = p.workload().0[..4].iter().map(|f| f.src).collect();
            h.sort();
            h
        };
        assert_eq!(hosts("ranks = 4\n"), [0, 1, 2, 3]);
        assert_eq!(hosts("ranks = 4\nplacement = \"strided\"\n"), [0, 4, 8, 12]);
        let random = hosts("ranks = 4\nplacement = \"random\"\n");
        assert_ne!(random, [0, 1, 2, 3]);
        assert_eq!(random, hosts("ranks = 4\nplacement = \"random\"\n"));
        assert_eq!(hosts("hosts = [9, 3, 5, 1]\n"), [1, 3, 5, 9]);
    }

    #[test]
    fn bad_collectives_are_named() {
        let cases = [
            ("ranks = 1\n", "traffic[0].ranks: a collective needs at least two ranks, got 1"),
            ("hosts = [1, 2, 1]\n", "traffic[0].hosts: host 1 is listed twice"),
            ("ranks = 40\n", "traffic[0].ranks: 40 ranks need as many hosts; the entry has 16"),
            ("placement = \"spread\"\n", "traffic[0].placement: unknown placement \"spread\""),
            ("chunks = 4\n", "traffic[0].chunks: applies only to the pipelined algorithms"),
            ("gap_us = 5\n", "traffic[0].gap_us: is the compute time between iterations: it needs iterations ≥ 2"),
            ("group_size = 4\n", "traffic[0].group_size: applies only to algorithm \"hierarchical\""),
        ];
        for (extra, want) in cases {
            let e = errors(&(RING.to_string() + extra));
            assert!(e.contains(want), "{extra}: {e}");
        }
        let e = errors(&RING.replace("\"ring\"", "\"bruck\""));
        assert!(
            e.contains("traffic[0].algorithm: allreduce has no algorithm \"bruck\" here (it has \"ring\", \"recursive_doubling\""),
            "{e}"
        );
        let e = errors(&RING.replace("\"ring\"", "\"tree\""));
        assert!(
            e.contains("traffic[0].algorithm: unknown algorithm \"tree\""),
            "{e}"
        );
        let e = errors(&RING.replace("\"allreduce\"", "\"reduce\""));
        assert!(
            e.contains(
                "traffic[0].collective: unknown collective \"reduce\" (known: \"allreduce\""
            ),
            "{e}"
        );
        let e = errors(&(RING.replace("\"ring\"", "\"recursive_doubling\"") + "ranks = 6\n"));
        assert!(
            e.contains("it needs a power-of-two number of ranks, got 6"),
            "{e}"
        );
        let e = errors(&RING.replace("{ fixed = 1600000 }", "{ fixed = 8 }"));
        assert!(e.contains("traffic[0].size: must give every rank's piece at least a byte: at least 32 bytes for 16 ranks, got 8"), "{e}");
        let e = errors(&RING.replace("{ fixed = 1600000 }", "{ cdf = \"websearch\" }"));
        assert!(
            e.contains("traffic[0].size: pattern \"collective\" needs the buffer's size in bytes"),
            "{e}"
        );
        let e = errors(&(RING.replace("\"ring\"", "\"hierarchical\"") + "group_size = 5\n"));
        assert!(e.contains("traffic[0].group_size: must divide the 16 ranks into at least two groups of at least two, got 5"), "{e}");
        let e = errors(&(RING.replace("\"collective\"", "\"permutation\"")));
        assert!(
            e.contains("traffic[0].collective: applies only to pattern \"collective\""),
            "{e}"
        );
    }
}
