//! The network's side of faults: a port's faults (created on first use), the two ports
//! of each topology link (faults are installed per link direction), and the scheduled
//! link changes, whose routing changes recompute every route.
//!
//! Kept apart from `net::faults` (the loss models, which know nothing of the network)
//! and from `net::network` (ports and routing, which only hold the faults' state).

use super::faults::{LinkAction, LinkEvent, PortFault, NO_FAULT};
use super::network::Network;
use crate::engine::rng::{stream, Rng};

impl Network {
    /// The faults of `port`, created on first use with the port's own random stream.
    pub fn port_fault(&mut self, port: u32) -> &mut PortFault {
        if self.ports[port as usize].fault == NO_FAULT {
            self.ports[port as usize].fault = self.faults.len() as u32;
            let rng = Rng::new(self.seed, stream::LINK, port as u64);
            self.faults.push(PortFault::new(rng));
        }
        let f = self.ports[port as usize].fault;
        &mut self.faults[f as usize]
    }

    /// The faults of `port`, if it has any.
    pub fn fault_of(&self, port: u32) -> Option<&PortFault> {
        let f = self.ports[port as usize].fault;
        (f != NO_FAULT).then(|| &self.faults[f as usize])
    }

    /// The two ports of each topology link (a → b, b → a), in the order of `links`.
    /// The j-th of several parallel links between two nodes is the j-th port of each
    /// with the other as peer, since ports are created in link order.
    pub fn link_ports(&self, links: &[(u32, u32, u8)]) -> Vec<[u32; 2]> {
        let mut seen: std::collections::HashMap<(u32, u32), usize> = Default::default();
        links
            .iter()
            .map(|&(a, b, _)| {
                let k = seen.entry((a.min(b), a.max(b))).or_insert(0);
                let j = *k;
                *k += 1;
                let nth = |from: u32, to: u32| {
                    self.ports_of(from)
                        .filter(|&p| self.ports[p as usize].peer == to)
                        .nth(j)
                        .expect("every link has a port at each end")
                };
                [nth(a, b), nth(b, a)]
            })
            .collect()
    }

    /// Carries out a scheduled link change. Routing changes recompute every switch's
    /// next hops at once, as a converged routing protocol would have them.
    pub fn apply_link_event(&mut self, ev: &LinkEvent) {
        for &p in &ev.ports {
            match ev.action {
                LinkAction::Down => self.port_fault(p).down = true,
                LinkAction::Up => self.port_fault(p).down = false,
                LinkAction::Unroute => self.unrouted[p as usize] = true,
                LinkAction::Reroute => self.unrouted[p as usize] = false,
            }
        }
        let reroute = match ev.action {
            LinkAction::Down | LinkAction::Up => false,
            LinkAction::Unroute | LinkAction::Reroute => true,
        };
        if reroute {
            self.compute_routes();
        }
    }
}
