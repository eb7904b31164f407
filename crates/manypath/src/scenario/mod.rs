//! Scenarios: the TOML schema, its validation, and the resolved plan a run is built from.
//!
//! Validation is split by concern; `plan` runs the steps in order and each reports to
//! one `checker::Checker`: `topology` (kind, tiers, links), `queues` (queues, RED,
//! RWNDQ), `transports` (the built-in ones and `[transports.NAME]`), `traffic` (entries,
//! patterns, sizes, jobs and requests), `faults`, `level` (which simulator runs the
//! plan and what it cannot represent) and `parallel` (threads and partitions).
pub mod capture;
mod checker;
pub mod custom;
pub mod fabric;
mod faults;
mod graph_files;
mod homa;
pub mod level;
pub mod locate;
pub mod ndp;
pub mod parallel;
mod pfabric;
pub mod plan;
mod queues;
pub mod resolved;
mod roce;
pub mod schema;
mod topology;
mod traffic;
pub mod transports;

pub use crate::transport::protocol::CcKind;
pub use level::{FlowModelConfig, FlowModelKind, Level};
pub use parallel::{resolve_threads, with_threads, ParallelPlan};
pub use plan::{Plan, ScenarioError};
pub use schema::{json_schema, Scenario};
pub use transports::TransportPlan;

/// The scenario text with its top-level `level` replaced by `level`. Text that does not
/// parse is returned unchanged, for `Plan::from_toml` to report.
pub fn with_level(text: &str, level: Level) -> Result<String, ScenarioError> {
    let Ok(mut table) = text.parse::<toml::Table>() else {
        return Ok(text.to_string());
    };
    table.insert("level".into(), toml::Value::String(level.name().into()));
    toml::to_string(&table).map_err(|e| ScenarioError {
        problems: vec![("level".into(), e.to_string())],
    })
}
