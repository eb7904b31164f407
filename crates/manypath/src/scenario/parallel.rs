//! `[parallel]`: how many threads run one simulation and how the fabric is split
//! between them, checked and resolved into plain data the engine reads. Results are the
//! same for every thread count, so nothing here enters a result's tables or identity.

use super::capture::NodeNames;
use super::checker::Checker;
use super::schema::{ParallelSpec, ThreadsSpec};
use super::ScenarioError;
use crate::machine;
use crate::net::topology::{NodeRole, Topology};
use crate::scenario::Plan;

/// Fabrics with fewer hosts than this run on 1 thread when `threads = "auto"`: a small
/// fabric has too few events in each synchronisation window (the lookahead of the links
/// between partitions) to pay for the threads' synchronisation. A first setting, to be
/// replaced by the measured break-even point of the parallel engine.
pub const AUTO_MIN_HOSTS: usize = 512;

/// Switch names a "not in any partition" error lists before it only counts the rest.
const LISTED_MISSING: usize = 5;

/// A resolved `[parallel]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ParallelPlan {
    /// Threads asked for (`None`: `"auto"`, resolved by `resolve_threads`).
    pub threads: Option<u32>,
    /// Per node id (hosts first, as `Topology` numbers them), the index of its
    /// partition; `None`: the engine partitions the fabric itself.
    pub partition: Option<Vec<u32>>,
    /// How many partitions `partition` uses (0 when it is `None`).
    pub partitions: u32,
}

/// Under `threads = "auto"`, a core counts as free when at least this share of it is
/// left idle by other work: a thread on a core it shares runs at a fraction of its
/// speed, and every window the others wait for it at the barrier.
pub const FREE_SHARE: f64 = 0.75;

impl ParallelPlan {
    /// The threads a run of a fabric of `hosts` hosts is given on this machine:
    /// `resolve_threads` with the cores the operating system lets this process use and,
    /// for `"auto"` on a fabric large enough to be split, the cores other work leaves
    /// free (watched for `machine::SAMPLE`, 0.1 s); never more than the partitions the
    /// scenario gives (`"auto"` stays within them; an explicit count above them is
    /// refused by the checker). Called once per run: the load it watches changes.
    pub fn threads_used(&self, hosts: usize) -> u32 {
        let cores = machine::usable();
        let free = || machine::free(machine::SAMPLE).unwrap_or(cores as f64);
        self.within_partitions(resolve_threads(self.threads, hosts, cores, free))
    }

    /// The most threads a run of `hosts` hosts can be given on this machine (`"auto"`
    /// as if no other work ran), without watching the load: for estimates.
    pub fn threads_at_most(&self, hosts: usize) -> u32 {
        let cores = machine::usable();
        self.within_partitions(resolve_threads(self.threads, hosts, cores, || cores as f64))
    }

    fn within_partitions(&self, n: u32) -> u32 {
        if self.partitions > 0 {
            n.min(self.partitions)
        } else {
            n
        }
    }
}

/// The thread count of a run: `threads` when given; for `None` (`"auto"`), 1 thread for
/// a fabric of fewer than `AUTO_MIN_HOSTS` (512) hosts or on one core, otherwise
/// `auto_threads(cores, free())`: one per core that other work leaves free. At least 1
/// either way. Small fabrics stay on one thread because each synchronisation window
/// holds too few events to pay for the synchronisation. `free` (the free cores, in
/// cores' worth) is asked only in the last case, as measuring it takes time.
pub fn resolve_threads(
    threads: Option<u32>,
    hosts: usize,
    cores: usize,
    free: impl FnOnce() -> f64,
) -> u32 {
    match threads {
        Some(n) => n.max(1),
        None if hosts < AUTO_MIN_HOSTS || cores < 2 => 1,
        None => auto_threads(cores, free()),
    }
}

/// `"auto"` on a fabric worth splitting: one thread per free core (a core counts when
/// at least `FREE_SHARE` of it is idle: `free` cores' worth of idle time gives
/// ⌊free + 1 − FREE_SHARE⌋ threads), at least 1 and at most the `cores` this process
/// may use. On 2 cores: 2 threads on an idle machine, 1 as soon as other work keeps a
/// quarter of a core busy.
pub fn auto_threads(cores: usize, free: f64) -> u32 {
    let cores = u32::try_from(cores).unwrap_or(u32::MAX).max(1);
    if !free.is_finite() {
        return 1;
    }
    let n = (free + 1.0 - FREE_SHARE).floor();
    if n < 1.0 {
        1
    } else if n >= f64::from(cores) {
        cores
    } else {
        n as u32
    }
}

/// The scenario text with `parallel.threads` replaced by `threads` as a command line
/// gives it (`"auto"` or a whole number; anything else is kept as written, for the
/// checker to refuse naming the field). Text that does not parse is returned unchanged,
/// for `Plan::from_toml` to report.
pub fn with_threads(text: &str, threads: &str) -> Result<String, ScenarioError> {
    let Ok(mut table) = text.parse::<toml::Table>() else {
        return Ok(text.to_string());
    };
    let value = if let Ok(n) = threads.parse::<i64>() {
        toml::Value::Integer(n)
    } else if let Ok(x) = threads.parse::<f64>() {
        toml::Value::Float(x)
    } else {
        toml::Value::String(threads.to_string())
    };
    let parallel = table
        .entry("parallel")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    // A `parallel` that is not a table is left for the parser to report.
    if let toml::Value::Table(t) = parallel {
        t.insert("threads".into(), value);
    }
    toml::to_string(&table).map_err(|e| ScenarioError {
        problems: vec![("parallel.threads".into(), e.to_string())],
    })
}

/// `[parallel]`, checked; the partitions against the topology's nodes when it is known.
pub(super) fn parallel_plan(
    spec: &ParallelSpec,
    topo: Option<&Topology>,
    c: &mut Checker,
) -> ParallelPlan {
    let threads = threads(&spec.threads, c);
    let partition = match (&spec.partitions, topo) {
        (Some(lists), Some(topo)) => partition(lists, topo, c),
        (Some(lists), None) => {
            empty_partitions(lists, c);
            None
        }
        (None, _) => None,
    };
    let partitions = spec.partitions.as_ref().map_or(0, |l| l.len() as u32);
    if let (Some(n), true) = (threads, partitions > 0) {
        if n > partitions {
            c.err(
                "parallel.threads",
                format!(
                    "more threads than partitions: {n} threads for the {partitions} partition(s) \
                     of parallel.partitions; give at most {partitions} threads, or more partitions"
                ),
            );
        }
    }
    ParallelPlan {
        threads,
        partition,
        partitions,
    }
}

/// `parallel.threads`: `None` for `"auto"` (and in place of a refused value).
fn threads(spec: &ThreadsSpec, c: &mut Checker) -> Option<u32> {
    const PATH: &str = "parallel.threads";
    const EXPECTED: &str = "a whole number of threads ≥ 1, or \"auto\"";
    match spec {
        ThreadsSpec::Auto(_) => None,
        ThreadsSpec::Count(n) if *n <= 0 => {
            c.err(PATH, format!("must be {EXPECTED}, got {n}"));
            None
        }
        ThreadsSpec::Count(n) => match u32::try_from(*n) {
            Ok(n) => Some(n),
            Err(_) => {
                c.err(PATH, format!("must be at most {}, got {n}", u32::MAX));
                None
            }
        },
        ThreadsSpec::Other(v) => {
            let got = match v {
                toml::Value::String(s) => format!("the unknown value {s:?}"),
                toml::Value::Float(x) => format!("{x} (not a whole number)"),
                // Shown as its type: its value would print as the TOML reader's own form.
                toml::Value::Datetime(_) => "a date or time".into(),
                other => format!("a value of type {} ({other})", other.type_str()),
            };
            c.err(PATH, format!("must be {EXPECTED}, got {got}"));
            None
        }
    }
}

/// Refuses the empty partitions (what can be checked without the topology).
fn empty_partitions(lists: &[Vec<String>], c: &mut Checker) {
    for (i, list) in lists.iter().enumerate() {
        if list.is_empty() {
            c.err(
                &format!("parallel.partitions[{i}]"),
                "an empty partition: list at least one node in each".into(),
            );
        }
    }
}

/// `parallel.partitions` against the topology: each node's partition, every switch
/// listed exactly once, hosts not listed placed with the switch of their first NIC.
fn partition(lists: &[Vec<String>], topo: &Topology, c: &mut Checker) -> Option<Vec<u32>> {
    empty_partitions(lists, c);
    let names = NodeNames::new(topo);
    let n_nodes = topo.roles.len();
    // Per node, where it is listed: (partition, position in it).
    let mut at: Vec<Option<(usize, usize)>> = vec![None; n_nodes];
    for (i, list) in lists.iter().enumerate() {
        for (j, name) in list.iter().enumerate() {
            let path = format!("parallel.partitions[{i}][{j}]");
            let Some(node) = names.resolve(&path, name, c) else {
                continue;
            };
            match at[node as usize] {
                Some((pi, pj)) => c.err(
                    &path,
                    format!(
                        "{name:?} is listed already, at parallel.partitions[{pi}][{pj}]; \
                         list each node in one partition, once"
                    ),
                ),
                None => at[node as usize] = Some((i, j)),
            }
        }
    }
    let missing: Vec<&str> = (0..n_nodes)
        .filter(|&n| topo.roles[n] == NodeRole::Switch && at[n].is_none())
        .map(|n| topo.names[n].as_str())
        .collect();
    if !missing.is_empty() {
        let more = missing.len().saturating_sub(LISTED_MISSING);
        let tail = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        c.err(
            "parallel.partitions",
            format!(
                "every switch must be in a partition; {} switch(es) are in none: {}{tail}",
                missing.len(),
                missing[..missing.len().min(LISTED_MISSING)].join(", ")
            ),
        );
        return None;
    }
    let mut part: Vec<u32> = at
        .iter()
        .map(|a| a.map_or(u32::MAX, |(i, _)| i as u32))
        .collect();
    for h in 0..topo.n_hosts as usize {
        if part[h] != u32::MAX {
            continue;
        }
        match first_switch(topo, h as u32) {
            Some(s) => part[h] = part[s as usize],
            None => {
                c.err(
                    "parallel.partitions",
                    format!(
                        "host {:?} has no link to a switch to go with: list it in a partition",
                        topo.names[h]
                    ),
                );
                return None;
            }
        }
    }
    Some(part)
}

/// The switch at the other end of host `h`'s first link (its first NIC), if any.
fn first_switch(topo: &Topology, h: u32) -> Option<u32> {
    topo.links.iter().find_map(|&(a, b, _)| {
        let peer = if a == h {
            b
        } else if b == h {
            a
        } else {
            return None;
        };
        (topo.roles[peer as usize] == NodeRole::Switch).then_some(peer)
    })
}

/// The threads a plan actually runs on: 1 at flow level (one solver), otherwise
/// `ParallelPlan::threads_used` (which, under `"auto"`, watches the machine's load:
/// call it once per run, then `pin_threads`).
pub fn threads_for(plan: &Plan) -> u32 {
    if plan.level != super::Level::Packet {
        return 1;
    }
    plan.parallel.threads_used(plan.topology.n_hosts as usize)
}

/// Resolves the plan's threads once (`threads_for`) and writes the count in, so the
/// run and whatever reports it agree on one count. Returns it.
pub fn pin_threads(plan: &mut Plan) -> u32 {
    let n = threads_for(plan);
    if plan.level == super::Level::Packet {
        plan.parallel.threads = Some(n);
    }
    n
}

/// The simulator replicas a run on `threads` threads holds: one per partition when it
/// runs over several (the scenario's partitions, or one per thread), otherwise 1. Each
/// replica holds the whole fabric's state, so memory grows with them.
pub fn replicas(plan: &Plan, threads: u32) -> u32 {
    match (threads, plan.parallel.partitions) {
        (1, _) => 1,
        (threads, 0) => threads,
        (_, given) => given,
    }
}

/// The most replicas a run of `plan` can hold on this machine (`"auto"` as on an idle
/// machine), without watching the load: for estimates.
pub fn replicas_at_most(plan: &Plan) -> u32 {
    let threads = if plan.level == super::Level::Packet {
        plan.parallel
            .threads_at_most(plan.topology.n_hosts as usize)
    } else {
        1
    };
    replicas(plan, threads)
}

#[cfg(test)]
mod tests {
    use super::super::plan::tests::{errors, GOOD};
    use super::*;
    use crate::scenario::Plan;
    use std::path::Path;

    /// A load measurement that must not be taken.
    fn unmeasured() -> f64 {
        panic!("the load was measured")
    }

    #[test]
    fn auto_is_one_thread_below_512_hosts_and_the_free_cores_from_there() {
        assert_eq!(resolve_threads(None, 0, 8, unmeasured), 1);
        assert_eq!(resolve_threads(None, 511, 8, unmeasured), 1);
        assert_eq!(resolve_threads(None, 512, 8, || 8.0), 8);
        assert_eq!(resolve_threads(None, 100_000, 2, || 2.0), 2);
        assert_eq!(resolve_threads(None, 100_000, 2, || 0.4), 1);
        // One core (or none reported): one thread, without measuring.
        assert_eq!(resolve_threads(None, 1024, 1, unmeasured), 1);
        assert_eq!(resolve_threads(None, 1024, 0, unmeasured), 1);
    }

    #[test]
    fn auto_takes_one_thread_per_core_other_work_leaves_free() {
        // (cores this process may use, free cores measured) → threads.
        for (cores, free, want) in [
            (2, 2.0, 2),
            (2, 1.8, 2), // background noise of a fifth of a core
            (2, 1.75, 2),
            (2, 1.7, 1), // more than a quarter of a core busy: both threads would share
            (2, 1.0, 1), // one busy loop
            (2, 0.0, 1), // two busy loops
            (8, 8.0, 8),
            (8, 5.1, 5),
            (8, 4.7, 4),
            (8, 0.3, 1),
            (4, 7.5, 4), // a quota of 4 cores on 8 idle CPUs
            (1, 1.0, 1),
            (2, f64::NAN, 1),
            (2, -1.0, 1),
        ] {
            assert_eq!(
                auto_threads(cores, free),
                want,
                "{cores} cores, {free} free"
            );
        }
    }

    #[test]
    fn an_explicit_count_is_kept_whatever_the_fabric_and_the_load() {
        assert_eq!(resolve_threads(Some(4), 16, 2, unmeasured), 4);
        assert_eq!(resolve_threads(Some(1), 100_000, 64, unmeasured), 1);
        assert_eq!(resolve_threads(Some(2), 100_000, 2, unmeasured), 2);
        assert_eq!(resolve_threads(Some(0), 16, 2, unmeasured), 1);
    }

    #[test]
    fn a_run_resolves_its_threads_once_and_keeps_them() {
        let mut p = plan("[parallel]\nthreads = \"auto\"\n");
        // 16 hosts: one thread, pinned into the plan.
        assert_eq!(pin_threads(&mut p), 1);
        assert_eq!(p.parallel.threads, Some(1));
        assert_eq!(replicas(&p, 1), 1);
        let mut p = plan("[parallel]\nthreads = 3\n");
        assert_eq!(pin_threads(&mut p), 3);
        assert_eq!((replicas(&p, 3), replicas_at_most(&p)), (3, 3));
    }

    fn plan(extra: &str) -> Plan {
        Plan::from_toml(&format!("{GOOD}\n{extra}"), Path::new(".")).unwrap()
    }

    #[test]
    fn threads_default_to_auto_and_take_a_count() {
        assert_eq!(plan("").parallel, ParallelPlan::default());
        let p = plan("[parallel]\nthreads = 3\n").parallel;
        assert_eq!((p.threads, p.partition, p.partitions), (Some(3), None, 0));
        assert_eq!(
            plan("[parallel]\nthreads = \"auto\"\n").parallel.threads,
            None
        );
    }

    #[test]
    fn unlisted_hosts_go_with_the_switch_of_their_first_nic() {
        // k = 4: hosts 0-15, edges 16-23 (edge p.i serves hosts 4p+2i, 4p+2i+1), aggs,
        // cores. host0 is listed with the second partition, away from its edge.
        let p = plan(
            "[parallel]\nthreads = 2\npartitions = [\
             [\"edge0.0\", \"edge0.1\", \"edge1.0\", \"edge1.1\", \"agg0.0\", \"agg0.1\", \
              \"agg1.0\", \"agg1.1\", \"core0\", \"core1\"], \
             [\"host0\", \"edge2.0\", \"edge2.1\", \"edge3.0\", \"edge3.1\", \"agg2.0\", \
              \"agg2.1\", \"agg3.0\", \"agg3.1\", \"core2\", \"core3\"]]\n",
        )
        .parallel;
        assert_eq!(p.partitions, 2);
        let part = p.partition.unwrap();
        let hosts: Vec<u32> = part[..16].to_vec();
        assert_eq!(hosts, [1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1]);
        assert!(part[16..].iter().all(|&x| x < 2));
    }

    #[test]
    fn refused_values_name_the_field() {
        for (threads, want) in [
            ("0", "got 0"),
            ("-2", "got -2"),
            ("1.5", "1.5 (not a whole number)"),
            ("true", "a value of type boolean (true)"),
            ("\"all\"", "the unknown value \"all\""),
            ("8589934592", "must be at most 4294967295"),
        ] {
            let e = errors(&format!("{GOOD}\n[parallel]\nthreads = {threads}\n"));
            assert!(e.starts_with("parallel.threads: "), "{threads}: {e}");
            assert!(e.contains(want), "{threads}: {e}");
        }
    }

    #[test]
    fn partitions_are_checked_against_the_nodes() {
        let e = errors(&format!(
            "{GOOD}\n[parallel]\npartitions = [[\"core0\"], [\"edge0.0\", \"edge0.0\", \"nowhere\"], []]\n"
        ));
        assert!(
            e.contains("parallel.partitions[1][1]: \"edge0.0\" is listed already, at parallel.partitions[1][0]"),
            "{e}"
        );
        assert!(
            e.contains("parallel.partitions[1][2]: no node of this topology has that name"),
            "{e}"
        );
        assert!(
            e.contains("parallel.partitions[2]: an empty partition"),
            "{e}"
        );
        assert!(
            e.contains("parallel.partitions: every switch must be in a partition; 18 switch(es)"),
            "{e}"
        );
    }

    #[test]
    fn more_threads_than_partitions_is_refused() {
        let all: Vec<String> = plan("")
            .topology
            .names
            .iter()
            .skip(16)
            .map(|n| format!("{n:?}"))
            .collect();
        let text = format!(
            "{GOOD}\n[parallel]\nthreads = 3\npartitions = [[{}], [{}]]\n",
            all[..10].join(", "),
            all[10..].join(", ")
        );
        let e = errors(&text);
        assert!(
            e.starts_with("parallel.threads: more threads than partitions: 3 threads for the 2"),
            "{e}"
        );
        let ok = Plan::from_toml(&text.replace("threads = 3", "threads = 2"), Path::new("."));
        assert_eq!(ok.unwrap().parallel.threads_used(16), 2);
    }

    #[test]
    fn a_command_line_count_replaces_the_scenarios() {
        let text = format!("{GOOD}\n[parallel]\nthreads = 3\n");
        let p = |t: &str| Plan::from_toml(&with_threads(&text, t).unwrap(), Path::new("."));
        assert_eq!(p("2").unwrap().parallel.threads, Some(2));
        assert_eq!(p("auto").unwrap().parallel.threads, None);
        let e = p("0").unwrap_err().to_string();
        assert!(e.starts_with("parallel.threads: must be"), "{e}");
        let e = p("many").unwrap_err().to_string();
        assert!(e.contains("the unknown value \"many\""), "{e}");
        let bare = Plan::from_toml(&with_threads(GOOD, "2").unwrap(), Path::new("."));
        assert_eq!(bare.unwrap().parallel.threads, Some(2));
    }
}
