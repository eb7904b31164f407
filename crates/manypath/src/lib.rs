//! manypath: a packet-level simulator for data-center transports.
//!
//! The crate is laid out as `docs/architecture.md` describes: `engine` (events, random
//! streams), `net` (packets, queues, switches, topologies), `transport` (sans-IO TCP and
//! congestion control), `workload` (flow sizes and traffic patterns), `scenario` (the
//! TOML schema and its validation), `metrics` (result records) and `sim` (the event loop).
pub mod connection;
pub mod engine;
pub mod flow;
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
/// `level`. At flow level the run is one computation, so `progress` is not called.
pub fn run_toml_at_level(
    text: &str,
    base_dir: &std::path::Path,
    seed: Option<u64>,
    level: Option<scenario::Level>,
    every: u64,
    progress: impl FnMut(time::SimTime, u64) -> bool,
) -> Result<Results, ScenarioError> {
    let text = match level {
        Some(l) => scenario::with_level(text, l)?,
        None => text.to_string(),
    };
    let mut plan = Plan::from_toml(&text, base_dir)?;
    if let Some(s) = seed {
        plan.seed = s;
    }
    Ok(match plan.level {
        scenario::Level::Packet => sim::run_plan_with_progress(plan, every, progress),
        scenario::Level::Flow => flow::run_plan(plan),
    })
}
