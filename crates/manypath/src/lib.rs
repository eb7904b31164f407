//! manypath: a packet-level simulator for data-center transports.
//!
//! The crate is laid out as `docs/architecture.md` describes: `engine` (events, random
//! streams), `net` (packets, queues, switches, topologies), `transport` (sans-IO TCP and
//! congestion control), `workload` (flow sizes and traffic patterns), `scenario` (the
//! TOML schema and its validation), `metrics` (result records) and `sim` (the event loop).
pub mod capture;
pub mod connection;
pub mod engine;
pub mod flow;
pub mod machine;
pub mod metrics;
pub mod net;
pub mod scenario;
pub mod sim;
pub mod time;
pub mod transport;
pub mod workload;

pub use metrics::Results;
pub use scenario::{Plan, ScenarioError};

/// Parses, validates and runs a scenario given as TOML text.
pub fn run_toml(
    text: &str,
    base_dir: &std::path::Path,
    seed: Option<u64>,
) -> Result<Results, ScenarioError> {
    run_toml_with_progress(text, base_dir, seed, u64::MAX, |_, _| true)
}

/// Like `run_toml`, calling `progress(simulated ps, events)` every `every` events; a
/// `false` from it stops the run, whose results are then marked partial.
pub fn run_toml_with_progress(
    text: &str,
    base_dir: &std::path::Path,
    seed: Option<u64>,
    every: u64,
    progress: impl FnMut(time::SimTime, u64) -> bool,
) -> Result<Results, ScenarioError> {
    run_toml_at_level(text, base_dir, seed, None, every, progress)
}

/// Like `run_toml_with_progress`, with `level` (when given) replacing the scenario's own
/// `level`. At flow level, `progress(iterations · 1 s, iterations)` is called every
/// `flow_every` iterations of the TCP model (the iteration count stands in the place of
/// simulated time).
pub fn run_toml_at_level(
    text: &str,
    base_dir: &std::path::Path,
    seed: Option<u64>,
    level: Option<scenario::Level>,
    every: u64,
    progress: impl FnMut(time::SimTime, u64) -> bool,
) -> Result<Results, ScenarioError> {
    run_toml_reporting(text, base_dir, seed, level, (every, u32::MAX), progress)
}

/// `run_toml_at_level` with the progress periods of both levels: `every` events at
/// packet level, `flow_every` iterations at flow level.
pub fn run_toml_reporting(
    text: &str,
    base_dir: &std::path::Path,
    seed: Option<u64>,
    level: Option<scenario::Level>,
    periods: (u64, u32),
    progress: impl FnMut(time::SimTime, u64) -> bool,
) -> Result<Results, ScenarioError> {
    run_toml_observing(text, base_dir, seed, level, periods, progress).map(|(r, _)| r)
}

/// `run_toml_reporting` that also returns what the scenario's `output.pcap` and
/// `output.trace` recorded (`None` without either, and at flow level).
pub fn run_toml_observing(
    text: &str,
    base_dir: &std::path::Path,
    seed: Option<u64>,
    level: Option<scenario::Level>,
    periods: (u64, u32),
    progress: impl FnMut(time::SimTime, u64) -> bool,
) -> Result<(Results, Option<capture::Observed>), ScenarioError> {
    run_toml_threads(text, base_dir, seed, level, None, periods, progress).map(|r| (r.0, r.1))
}

/// `run_toml_observing` with `threads` (when given: `"auto"` or a whole number, as on a
/// command line) replacing the scenario's `parallel.threads`; also returns the threads
/// the run was given (`ParallelPlan::threads_used`), for its metadata: results are the
/// same for any thread count, so the count is in none of their tables.
pub fn run_toml_threads(
    text: &str,
    base_dir: &std::path::Path,
    seed: Option<u64>,
    level: Option<scenario::Level>,
    threads: Option<&str>,
    (every, flow_every): (u64, u32),
    mut progress: impl FnMut(time::SimTime, u64) -> bool,
) -> Result<(Results, Option<capture::Observed>, u32), ScenarioError> {
    let text = match level {
        Some(l) => scenario::with_level(text, l)?,
        None => text.to_string(),
    };
    let text = match threads {
        Some(t) => scenario::with_threads(&text, t)?,
        None => text,
    };
    let mut plan = Plan::from_toml(&text, base_dir)?;
    if let Some(s) = seed {
        plan.seed = s;
    }
    // Resolved once: under "auto" the count depends on the machine's load.
    let used = scenario::parallel::pin_threads(&mut plan);
    let (results, observed) = match plan.level {
        scenario::Level::Packet => sim::run_plan_observing(plan, every, progress),
        scenario::Level::Flow => {
            let r = flow::run_plan_with_progress(plan, flow_every, |i| {
                progress(i as time::SimTime * time::PS_PER_S, i as u64)
            });
            (r, None)
        }
    };
    Ok((results, observed, used))
}

/// The scenario given as TOML text, checked, re-written with every default filled in
/// (the fields a scenario may leave out and that have a default; options without a
/// default stay absent): the shared `[tcp]` settings in full, and each transport the
/// traffic uses as a `[transports.NAME]` entry with its parameters and the TCP settings
/// in which it differs (`scenario::resolved`).
/// A custom topology read from a file is written in, so the resolved scenario stands
/// alone.
pub fn resolve_toml(text: &str, base_dir: &std::path::Path) -> Result<String, ScenarioError> {
    let mut scenario = scenario::plan::parse(text)?;
    let plan = Plan::from_scenario(&scenario, base_dir)?;
    scenario::resolved::fill_defaults(&mut scenario, &plan);
    if let scenario::schema::TopologySpec::Custom(spec) = &mut scenario.topology {
        if spec.file.is_some() {
            *spec = scenario::custom::export(&plan.topology).map_err(|m| ScenarioError {
                problems: vec![("topology.custom".into(), m)],
            })?;
        }
    }
    toml::to_string(&scenario).map_err(|e| ScenarioError {
        problems: vec![(
            String::new(),
            format!("cannot write the scenario as TOML: {e}"),
        )],
    })
}

/// A collective's or connection matrix's traffic entry (`entry`, or the only one) of a
/// scenario given as TOML text, as htsim's connection-matrix text.
pub fn matrix_text(
    text: &str,
    base_dir: &std::path::Path,
    entry: Option<usize>,
) -> Result<String, ScenarioError> {
    let plan = Plan::from_toml(text, base_dir)?;
    plan.matrix_text(entry)
        .map_err(|(path, msg)| ScenarioError {
            problems: vec![(path, msg)],
        })
}

/// The topology of a scenario given as TOML text, as a `[topology.custom]` file: TOML
/// (`json` false) or JSON with its `tiers`, `nodes` (hosts first) and `links` in the
/// order that numbers the ports, so the file builds the same network port for port.
pub fn export_topology(
    text: &str,
    base_dir: &std::path::Path,
    json: bool,
) -> Result<String, ScenarioError> {
    let plan = Plan::from_toml(text, base_dir)?;
    let fail = |path: &str, msg: String| ScenarioError {
        problems: vec![(path.to_string(), msg)],
    };
    let spec = scenario::custom::export(&plan.topology).map_err(|m| fail("topology", m))?;
    if json {
        serde_json::to_string_pretty(&spec).map_err(|e| fail("", e.to_string()))
    } else {
        toml::to_string(&spec).map_err(|e| fail("", e.to_string()))
    }
}
