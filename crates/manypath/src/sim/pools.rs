//! Pools of persistent connections (`requests.pick = "idle"`, an entry's
//! `connection_pool`): a flow takes the first of its pool's open connections with
//! nothing left to deliver or, when none is, the connection drawn beside it, which opens
//! then and stays in the pool (as the Homa authors' ns-2 traffic generator keeps its
//! connections, so that no flow waits behind another). Empty, and never consulted,
//! without either.

use super::{Sim, NO_FLOW};
use crate::workload::ConnSpec;
use std::collections::HashMap;

const NO_POOL: u32 = u32::MAX;

/// Each persistent connection's pool, and each pool's open connections in the order
/// they opened.
#[derive(Default)]
pub(super) struct ConnPools {
    of_conn: Vec<u32>,
    open: Vec<Vec<u32>>,
    /// Per connection outside any pool that opens with its first message (a
    /// collective's between two ranks), that message; `NO_FLOW` for the others. Empty
    /// when there is none.
    opened_by: Vec<u32>,
    /// Per persistent connection of the workload (`FlowSpec::conn`), the id of its
    /// (first) connection: flows with connections of their own come first, so the two
    /// differ in a run that has both.
    drawn: Vec<u32>,
}

/// The pools as the run's setup files its persistent connections: with the pool of
/// each (traffic entry, pool within the entry), which the run does not need.
#[derive(Default)]
pub(super) struct PoolFiling {
    pools: ConnPools,
    index: HashMap<(u32, u32), u32>,
}

impl PoolFiling {
    /// Files connection `id`, made for `spec` of traffic entry `entry`: in its pool, and
    /// among the pool's open connections unless it opens on demand.
    pub(super) fn add(&mut self, id: u32, spec: &ConnSpec, entry: u32) {
        let Some(pool) = spec.pool else {
            if spec.on_demand {
                let lazy = &mut self.pools.opened_by;
                if lazy.len() <= id as usize {
                    lazy.resize(id as usize + 1, NO_FLOW);
                }
                // Its message is known once the flows are filed (`opens_with`).
                lazy[id as usize] = NO_FLOW - 1;
            }
            return;
        };
        let pools = &mut self.pools;
        let next = pools.open.len() as u32;
        let p = *self.index.entry((entry, pool)).or_insert(next);
        if p == next {
            pools.open.push(Vec::new());
        }
        if pools.of_conn.len() <= id as usize {
            pools.of_conn.resize(id as usize + 1, NO_POOL);
        }
        pools.of_conn[id as usize] = p;
        if !spec.on_demand {
            pools.open[p as usize].push(id);
        }
    }

    /// The workload's next persistent connection has `id` (its first copy's).
    pub(super) fn made(&mut self, id: u32) {
        self.pools.drawn.push(id);
    }

    /// Flow `f` is a message on connection `id`: the first opens it if it opens with
    /// its first message.
    pub(super) fn opens_with(&mut self, id: u32, f: u32) {
        if let Some(x) = self.pools.opened_by.get_mut(id as usize) {
            if *x == NO_FLOW - 1 {
                *x = f;
            }
        }
    }

    pub(super) fn done(self) -> ConnPools {
        self.pools
    }
}

impl ConnPools {
    /// The pool of connection `id`, if it is in one.
    fn of(&self, id: u32) -> Option<usize> {
        match self.of_conn.get(id as usize) {
            Some(&p) if p != NO_POOL => Some(p as usize),
            _ => None,
        }
    }

    /// The message that opens connection `id` (it opens with its first message).
    pub(super) fn opened_by(&self, id: u32) -> Option<u32> {
        self.opened_by
            .get(id as usize)
            .copied()
            .filter(|&f| f < NO_FLOW - 1)
    }

    /// How many connections the pools hold open (those opened at the start and those
    /// opened on demand so far).
    #[cfg(test)]
    pub(super) fn opened(&self) -> usize {
        self.open.iter().map(Vec::len).sum()
    }
}

impl Sim {
    /// The persistent connection flow `f` goes on: the one it was drawn with, or, when
    /// that one belongs to a pool, the pool's first open connection with nothing left to
    /// deliver, else the drawn one, opened now. The flow keeps the one it takes.
    pub(super) fn pick_connection(&mut self, f: u32) -> u32 {
        let own = self.flows[f as usize].conns[0];
        let Some(pool) = self.pools.of(own) else {
            return own;
        };
        let conns = &self.conns;
        let idle = self.pools.open[pool]
            .iter()
            .copied()
            .find(|&c| conns[c as usize].pending.is_empty());
        let id = match idle {
            Some(c) => c,
            None => {
                self.pools.open[pool].push(own);
                self.conns[own as usize].ep.open();
                own
            }
        };
        self.flows[f as usize].conns[0] = id;
        id
    }

    /// Flow `f` is a pool's that found no idle connection and opened the one drawn with
    /// it (it kept its drawn connection, which only a pool's flow opens on demand): its
    /// FCT has the handshake in it.
    pub(super) fn opened_connection(&self, f: usize) -> bool {
        let flow = &self.flows[f];
        flow.spec.conn.is_some_and(|pc| {
            let own = self.pools.drawn[pc as usize];
            (self.pools.of(own).is_some() && flow.conns[0] == own)
                || self.pools.opened_by(own) == Some(f as u32)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Plan;
    use std::path::Path;

    /// Host 1 answers host 0's requests (100 KB responses, 80 µs each at 10 Gb/s, one
    /// every 100 µs on average: 80% load) on a pool that starts with `connections`.
    fn run(pick: &str, connections: u32) -> Sim {
        run_with(pick, connections, "")
    }

    /// The same after the traffic entries `before`.
    fn run_with(pick: &str, connections: u32, before: &str) -> Sim {
        let text = format!(
            r#"
            duration_ms = 20
            seed = 3
            [topology.star]
            senders = 2
            [network.link]
            rate_gbps = 10
            delay_us = 1
            {before}
            [[traffic]]
            pattern = "requests"
            transport = "dctcp"
            rate_per_s = 10000
            requests = {{ clients = [0], servers = [1], connections = {connections}, pick = "{pick}" }}
            size = {{ fixed = 100000 }}
            "#
        );
        let mut sim = Sim::new(Plan::from_toml(&text, Path::new(".")).unwrap());
        sim.run();
        sim
    }

    /// Per connection, its responses' (start, finish), in order of start.
    fn by_connection(s: &Sim) -> Vec<Vec<(u64, u64)>> {
        let mut on = vec![Vec::new(); s.conns.len()];
        for f in &s.flows {
            if let Some(end) = f.finish {
                on[f.conns[0] as usize].push((f.spec.start, end));
            }
        }
        on.retain(|v| !v.is_empty());
        for v in &mut on {
            v.sort();
        }
        on
    }

    fn overlaps(on: &[Vec<(u64, u64)>]) -> usize {
        on.iter()
            .map(|v| v.windows(2).filter(|w| w[1].0 < w[0].1).count())
            .sum()
    }

    #[test]
    fn responses_that_opened_their_connection_are_known_beside_flows_of_their_own() {
        // Flows with connections of their own come first in the connection list, so a
        // pool's connection id is not its index among the persistent ones.
        let before = "[[traffic]]\npattern = \"pair\"\nsrc = 1\ndst = 0\nrepeat = 3\n\
                      interval_us = 50\ntransport = \"dctcp\"\nsize = { fixed = 1000 }\n";
        let s = run_with("idle", 0, before);
        let opened = (0..s.flows.len())
            .filter(|&f| s.opened_connection(f))
            .count();
        assert!(s.pools.opened() > 1);
        assert_eq!(opened, s.pools.opened());
    }

    #[test]
    fn an_idle_pick_never_puts_a_response_behind_another() {
        let rr = run("round_robin", 1);
        let idle = run("idle", 1);
        for s in [&rr, &idle] {
            assert!(s.flows.len() > 150, "{}", s.flows.len());
            // (Those started in the last millisecond may still run.)
            let early = |f: &&super::super::Flow| f.spec.start < 19_000_000_000;
            assert!(s.flows.iter().filter(early).all(|f| f.finish.is_some()));
        }
        // In turn on one connection, responses often start before the last is done.
        let rr_on = by_connection(&rr);
        assert_eq!(rr_on.len(), 1);
        assert!(overlaps(&rr_on) > 10, "{}", overlaps(&rr_on));
        // Idle: never; the pool grows to what the overlap needs and is reused.
        let on = by_connection(&idle);
        assert_eq!(overlaps(&on), 0);
        let opened = idle.pools.opened();
        assert!(
            opened > 1 && opened <= on.len() + 1,
            "{opened} opened, {} used",
            on.len()
        );
        assert!(
            opened < idle.flows.len() / 10,
            "{opened} for {}",
            idle.flows.len()
        );
        // The first connection carries most responses, being first in the pool.
        let first = on.iter().map(Vec::len).max().unwrap();
        assert!(first * 2 > idle.flows.len(), "{first}");
        // Starting with none: the first response opens the first connection.
        let none = run("idle", 0);
        let on = by_connection(&none);
        assert_eq!(overlaps(&on), 0);
        assert_eq!(none.pools.opened(), on.len());
        assert!(
            on.len() > 1 && on.len() < none.flows.len() / 10,
            "{}",
            on.len()
        );
        // A response that opened its connection has the handshake in its ideal FCT (a
        // round trip of 4 µs more here); one that reused a connection has not.
        let opened: Vec<bool> = (0..none.flows.len())
            .map(|f| none.opened_connection(f))
            .collect();
        assert_eq!(opened.iter().filter(|&&o| o).count(), on.len());
        let mut none = none;
        let ideal: Vec<(bool, u64)> = none
            .results(0.0)
            .flows
            .iter()
            .zip(&opened)
            .map(|(r, &o)| (o, r.ideal_fct.unwrap()))
            .collect();
        let of = |o: bool| ideal.iter().find(|x| x.0 == o).unwrap().1;
        let extra = of(true) - of(false);
        assert!((3_500_000..6_000_000).contains(&extra), "{extra} ps");
        assert!(ideal.iter().all(|&(o, t)| t == of(o)));
    }

    #[test]
    fn a_pooled_entry_keeps_its_arrivals_and_reuses_connections() {
        let text = |pool: bool| {
            format!(
                r#"
                duration_ms = 10
                [topology.star]
                senders = 3
                [[traffic]]
                pattern = "random_pairs"
                transport = "dctcp"
                arrival = "poisson"
                load = 0.6
                size = {{ fixed = 20000 }}
                connection_pool = {pool}
                "#
            )
        };
        let mut sims = [false, true].map(|pool| {
            let mut sim = Sim::new(Plan::from_toml(&text(pool), Path::new(".")).unwrap());
            sim.run();
            sim
        });
        let arrivals = |s: &Sim| -> Vec<(u32, u32, u64)> {
            s.flows
                .iter()
                .map(|f| (f.spec.src, f.spec.dst, f.spec.start))
                .collect()
        };
        assert_eq!(arrivals(&sims[0]), arrivals(&sims[1]));
        let [own, pooled] = &mut sims;
        assert!(own.flows.len() > 300, "{}", own.flows.len());
        let on = by_connection(pooled);
        assert_eq!(overlaps(&on), 0);
        // 12 ordered pairs: a few connections each carry most flows.
        assert_eq!(pooled.pools.opened(), on.len());
        assert!(
            on.len() >= 12 && on.len() < pooled.flows.len() / 4,
            "{}",
            on.len()
        );
        // Most flows skip the handshake: they finish sooner than on their own connection.
        let mean = |s: &mut Sim| {
            let r = s.results(0.0);
            let done: Vec<u64> = r
                .flows
                .iter()
                .filter_map(|f| Some(f.finish? - f.start))
                .collect();
            done.iter().sum::<u64>() / done.len() as u64
        };
        let (a, b) = (mean(own), mean(pooled));
        assert!(b < a, "pooled mean FCT {b} ps, own connections {a} ps");
    }
}
