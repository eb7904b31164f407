//! The discrete-event core: a time-ordered event queue and seeded random streams.
pub mod queue;
pub mod rng;

pub use queue::{Event, EventQueue, Kind, Payload};
pub use rng::Rng;
