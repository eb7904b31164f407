//! Transports as sans-IO state machines: they take (time, segment) or (time, timer) and
//! hand back segments to send and a timer deadline. They never touch the engine, so a
//! unit test can drive one by hand.
pub mod cc;
pub mod homa;
pub mod mpcc;
pub mod mptcp;
pub mod ndp;
pub mod pair;
pub mod protocol;
pub mod rate;
pub mod roce;
pub mod tcp;
#[cfg(test)]
pub(crate) mod testing;
