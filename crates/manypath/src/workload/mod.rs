//! Traffic: flow-size distributions, arrival processes and traffic patterns, producing
//! the list of flows a run starts.
pub mod cdf;
pub mod generate;
pub mod size;

pub use cdf::EmpiricalCdf;
pub use generate::TriggerLink;
pub use generate::{
    CollectiveStep, ConnPick, ConnSpec, Deps, FlowSpec, Pattern, RequestsGen, Trigger, TriggerKind,
};
pub use size::SizeDist;
