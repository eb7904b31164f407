//! Scenarios: the TOML schema, its validation, and the resolved plan a run is built from.
pub mod faults;
pub mod plan;
pub mod schema;

pub use plan::{CcKind, Plan, ScenarioError, TransportPlan};
pub use schema::{json_schema, Scenario};
