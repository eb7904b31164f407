//! Scenarios: the TOML schema, its validation, and the resolved plan a run is built from.
pub mod faults;
pub mod plan;
pub mod schema;

pub use plan::{CcKind, Plan, ScenarioError, TransportPlan};
pub use schema::{json_schema, Scenario};

/// The scenario text with its top-level `level` replaced by `level`. Text that does not
/// parse is returned unchanged, for `Plan::from_toml` to report.
pub fn with_level(text: &str, level: crate::flow::Level) -> Result<String, ScenarioError> {
    let Ok(mut table) = text.parse::<toml::Table>() else {
        return Ok(text.to_string());
    };
    let name = match level {
        crate::flow::Level::Packet => "packet",
        crate::flow::Level::Flow => "flow",
    };
    table.insert("level".into(), toml::Value::String(name.into()));
    toml::to_string(&table).map_err(|e| ScenarioError {
        problems: vec![("level".into(), e.to_string())],
    })
}
