//! A topology given as data (`[topology.custom]`): its nodes and links as the scenario
//! or a file lists them, resolved to indices, hosts first. It builds the same
//! `Topology` the generators do, with a link's own rate, delay and queues where it sets
//! them, so routing, faults, tiers and the flow level treat it as any other.

use super::queue::QueueConfig;
use crate::time::{Rate, SimTime};
use std::collections::HashSet;
use std::sync::Mutex;

/// A resolved custom topology. Nodes are in simulator order: hosts first, in the order
/// they were listed, then switches in theirs.
#[derive(Clone, Debug, PartialEq)]
pub struct CustomTopology {
    /// Where it came from (`inline` or the file), for its description.
    pub source: String,
    pub tiers: Vec<&'static str>,
    pub nodes: Vec<CustomNode>,
    /// Links in the order listed, parallel links one after another.
    pub links: Vec<CustomLink>,
    pub n_hosts: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub struct CustomNode {
    pub name: String,
    pub host: bool,
    /// A switch's tier when the topology names it (else its links decide).
    pub tier: Option<u8>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CustomLink {
    pub a: u32,
    pub b: u32,
    pub tier: u8,
    pub own: LinkOverride,
}

/// What one link sets for itself instead of taking its tier's.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LinkOverride {
    pub rate: Option<Rate>,
    pub delay: Option<SimTime>,
    /// The queue of the port at end a, then at end b.
    pub queue: [Option<QueueConfig>; 2],
}

impl LinkOverride {
    pub fn is_empty(&self) -> bool {
        *self == LinkOverride::default()
    }
}

/// The `'static` name of a tier read from data. Tier names live for the whole process
/// (`Topology::tiers` and the queue table hold `&'static str`); each distinct name is
/// stored once however many scenarios use it.
pub fn tier_name(name: &str) -> &'static str {
    static NAMES: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    let set = names.get_or_insert_with(HashSet::new);
    if let Some(&n) = set.get(name) {
        return n;
    }
    let n: &'static str = Box::leak(name.to_string().into_boxed_str());
    set.insert(n);
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tier_names_are_stored_once() {
        let a = tier_name("spine_core");
        let b = tier_name(&String::from("spine_core"));
        assert!(std::ptr::eq(a, b));
        assert_eq!(a, "spine_core");
    }
}
