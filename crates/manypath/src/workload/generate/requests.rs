//! The requests pattern: every client's persistent connections to every server, and
//! the Poisson requests whose responses ride them (round robin or an idle one), one
//! server each or a fanout of server applications as one job.

use super::{Arrival, ConnSpec, FlowSpec, TrafficGen};
use crate::engine::Rng;

/// The client/server request workload (the FUSO document's benchmark application):
/// every client keeps `connections` persistent connections to every server for its
/// latency-sensitive requests, and as many for its background requests (those of at
/// least `background_above` bytes, on their own transport); requests of each kind go
/// round robin over the pair's connections of that kind, or (`ConnPick::Idle`) to one
/// with nothing left to deliver.
#[derive(Clone, Debug, PartialEq)]
pub struct RequestsGen {
    pub clients: Vec<u32>,
    pub servers: Vec<u32>,
    pub connections: u32,
    pub pick: ConnPick,
    /// Sizes are drawn below this bound (the distribution conditioned on it).
    pub sizes_below: Option<u64>,
    /// Requests of at least this many bytes are background requests.
    pub background_above: Option<u64>,
    pub background_transport: u16,
    pub background_class: u16,
    /// Partition–aggregate: each request goes to this many server applications at once
    /// (application i on `servers[i % servers.len()]`, each with its own connections),
    /// and the responses form one job. `None`: each request goes to one random server.
    pub fanout: Option<u32>,
}

/// How a response picks one of its client–server pair's persistent connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnPick {
    /// The pair's connections in turn, fixed when the workload is drawn: a response may
    /// wait behind the one before it on its connection.
    RoundRobin,
    /// When the response starts: the first of the pair's open connections with nothing
    /// left to deliver or, when none is, a new one that then stays open with the others
    /// (as the Homa authors' ns-2 traffic generator keeps its connections:
    /// `docs/references.md`). Each response is drawn with a connection of its own
    /// (`ConnSpec::on_demand`) for the case that none is idle.
    Idle,
}

impl TrafficGen {
    /// A size for the requests pattern: the entry's distribution, conditioned on
    /// `sizes_below` when set.
    fn request_size(&self, r: &RequestsGen, rng: &mut Rng) -> u64 {
        loop {
            let s = self.size.sample(rng).unwrap_or(u64::MAX);
            if r.sizes_below.is_none_or(|b| s < b) {
                return s;
            }
        }
    }

    pub(super) fn generate_requests(
        &self,
        r: &RequestsGen,
        rng: &mut Rng,
        out: &mut Vec<FlowSpec>,
        conns: &mut Vec<ConnSpec>,
    ) {
        let kinds = if r.background_above.is_some() { 2 } else { 1 };
        let per_pair = kinds * r.connections as usize;
        // The first connection of each (client, server) pair; none for a host and itself.
        let mut first = vec![u32::MAX; r.clients.len() * r.servers.len()];
        for (ci, &client) in r.clients.iter().enumerate() {
            for (si, &server) in r.servers.iter().enumerate() {
                if server == client {
                    continue;
                }
                first[ci * r.servers.len() + si] = conns.len() as u32;
                for kind in 0..kinds {
                    let transport = if kind == 0 {
                        self.transport
                    } else {
                        r.background_transport
                    };
                    let pool = (r.pick == ConnPick::Idle)
                        .then_some(((ci * r.servers.len() + si) * kinds + kind) as u32);
                    for _ in 0..r.connections {
                        conns.push(ConnSpec {
                            src: server,
                            dst: client,
                            transport,
                            priority: self.priority,
                            start: 0,
                            pool,
                            on_demand: false,
                        });
                    }
                }
            }
        }
        let Arrival::Poisson { rate_per_s } = self.arrival else {
            return;
        };
        let mut next_slot = vec![0u32; first.len() * kinds];
        let mut clock = self.poisson_clock(rate_per_s);
        let mut n = 0;
        while let Some(start) = clock.next(rng, n) {
            let ci = rng.below(r.clients.len() as u64) as usize;
            let si = loop {
                let si = rng.below(r.servers.len() as u64) as usize;
                if r.servers[si] != r.clients[ci] {
                    break si;
                }
            };
            let pair = ci * r.servers.len() + si;
            let size = self.request_size(r, rng);
            let background = r.background_above.is_some_and(|b| size >= b);
            let kind = background as usize;
            let mut flow = FlowSpec {
                src: r.servers[si],
                dst: r.clients[ci],
                size: Some(size),
                start,
                // (The kind's transport, as its connections were made.)
                transport: if background {
                    r.background_transport
                } else {
                    self.transport
                },
                class: if background {
                    r.background_class
                } else {
                    self.class
                },
                priority: self.priority,
                job: -1,
                after: None,
                conn: None,
                after_job: None,
                deps: Default::default(),
            };
            let conn = match r.pick {
                ConnPick::RoundRobin => {
                    let slot = &mut next_slot[pair * kinds + kind];
                    let conn =
                        first[pair] as usize + kind * r.connections as usize + *slot as usize;
                    *slot = (*slot + 1) % r.connections;
                    debug_assert!(conn < first[pair] as usize + per_pair);
                    conn
                }
                ConnPick::Idle => {
                    // The response's own connection, should its pool have none idle.
                    conns.push(ConnSpec::on_demand(&flow, (pair * kinds + kind) as u32));
                    conns.len() - 1
                }
            };
            debug_assert_eq!(conns[conn].transport, flow.transport);
            flow.conn = Some(conn as u32);
            out.push(flow);
            n += 1;
        }
    }

    /// Requests from random clients, each to `fanout` server applications at once; the
    /// responses of one request form a job.
    pub(super) fn generate_fanout(
        &self,
        r: &RequestsGen,
        fanout: u32,
        rng: &mut Rng,
        next_job: &mut i64,
        out: &mut Vec<FlowSpec>,
        conns: &mut Vec<ConnSpec>,
    ) {
        let apps = fanout as usize;
        let per_app = r.connections as usize;
        // Connections of (client c, application a) start at first[c * apps + a].
        let mut first = Vec::with_capacity(r.clients.len() * apps);
        for &client in &r.clients {
            for a in 0..apps {
                first.push(conns.len() as u32);
                let server = r.servers[a % r.servers.len()];
                for _ in 0..per_app {
                    conns.push(ConnSpec {
                        src: server,
                        dst: client,
                        transport: self.transport,
                        priority: self.priority,
                        start: 0,
                        pool: None,
                        on_demand: false,
                    });
                }
            }
        }
        let Arrival::Poisson { rate_per_s } = self.arrival else {
            return;
        };
        let mut next_slot = vec![0u32; first.len()];
        let mut clock = self.poisson_clock(rate_per_s);
        let mut n = 0;
        while let Some(start) = clock.next(rng, n) {
            let ci = rng.below(r.clients.len() as u64) as usize;
            let job = *next_job;
            *next_job += 1;
            for a in 0..apps {
                let k = ci * apps + a;
                let conn = first[k] + next_slot[k];
                next_slot[k] = (next_slot[k] + 1) % r.connections;
                out.push(FlowSpec {
                    src: conns[conn as usize].src,
                    dst: r.clients[ci],
                    size: Some(self.request_size(r, rng)),
                    start,
                    transport: self.transport,
                    class: self.class,
                    priority: self.priority,
                    job,
                    after: None,
                    conn: Some(conn),
                    after_job: None,
                    deps: Default::default(),
                });
                n += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::gen;
    use super::super::Pattern;
    use super::*;
    use crate::workload::SizeDist;

    #[test]
    fn requests_go_round_robin_over_each_pairs_persistent_connections() {
        let g = TrafficGen {
            arrival: Arrival::Poisson {
                rate_per_s: 20_000.0,
            },
            size: SizeDist::Uniform {
                min: 1000,
                max: 200_000,
            },
            transport: 3,
            class: 1,
            requests: Some(RequestsGen {
                clients: vec![3, 4, 5],
                servers: vec![0, 1, 2, 3],
                connections: 5,
                pick: ConnPick::RoundRobin,
                sizes_below: Some(150_000),
                background_above: Some(100_000),
                background_transport: 0,
                background_class: 2,
                fanout: None,
            }),
            ..gen(Pattern::Requests)
        };
        let mut out = Vec::new();
        let mut conns = Vec::new();
        g.generate(&mut Rng::new(4, 0, 0), &mut 0, &mut out, &mut conns);
        // 3 clients × 4 servers, less client 3 with itself, × 2 kinds × 5.
        assert_eq!(conns.len(), 11 * 10);
        assert!(out.len() > 15_000, "{}", out.len());
        for f in &out {
            let c = conns[f.conn.unwrap() as usize];
            assert_eq!(
                (c.src, c.dst),
                (f.src, f.dst),
                "a flow rides its pair's connection"
            );
            assert!(f.src != f.dst && f.size.unwrap() < 150_000);
            let bg = f.size.unwrap() >= 100_000;
            assert_eq!(c.transport, if bg { 0 } else { 3 });
            assert_eq!(f.class, if bg { 2 } else { 1 });
        }
        // Round robin: a pair's first five latency-sensitive requests use its five
        // connections in turn.
        let pair: Vec<u32> = out
            .iter()
            .filter(|f| (f.src, f.dst) == (0, 4) && f.size.unwrap() < 100_000)
            .take(6)
            .map(|f| f.conn.unwrap())
            .collect();
        assert_eq!(pair[1] - pair[0], 1);
        assert_eq!(pair[5], pair[0]);
    }

    #[test]
    fn idle_pick_draws_a_connection_beside_each_response_in_its_pairs_pool() {
        let r = RequestsGen {
            clients: vec![0, 1],
            servers: vec![1, 2],
            connections: 2,
            pick: ConnPick::Idle,
            sizes_below: None,
            background_above: None,
            background_transport: 0,
            background_class: 0,
            fanout: None,
        };
        let g = TrafficGen {
            arrival: Arrival::Poisson {
                rate_per_s: 1_000.0,
            },
            requests: Some(r),
            ..gen(Pattern::Requests)
        };
        let mut out = Vec::new();
        let mut conns = Vec::new();
        g.generate(&mut Rng::new(4, 0, 0), &mut 0, &mut out, &mut conns);
        // 3 pairs (client 1 to server 1 is none) of 2 connections opened at the start,
        // then one on demand per response.
        assert!(out.len() > 100, "{}", out.len());
        assert_eq!(conns.len(), 3 * 2 + out.len());
        assert!(conns[..6].iter().all(|c| !c.on_demand && c.start == 0));
        let pools: Vec<u32> = conns[..6].iter().map(|c| c.pool.unwrap()).collect();
        // Numbered by (client, server) index, the pair of a host and itself included.
        assert_eq!(pools, [0, 0, 1, 1, 3, 3]);
        for f in &out {
            let c = conns[f.conn.unwrap() as usize];
            assert!(c.on_demand && c.start == f.start);
            assert_eq!((c.src, c.dst), (f.src, f.dst));
            // Its pool is its pair's: the one of the connections opened at the start.
            let first = conns[..6]
                .iter()
                .position(|o| (o.src, o.dst) == (f.src, f.dst))
                .unwrap();
            assert_eq!(c.pool, conns[first].pool);
        }
    }

    #[test]
    fn fanout_requests_are_jobs_over_every_application() {
        let g = TrafficGen {
            arrival: Arrival::Poisson { rate_per_s: 100.0 },
            requests: Some(RequestsGen {
                clients: vec![0],
                servers: vec![1, 2, 3, 4, 5],
                connections: 1,
                pick: ConnPick::RoundRobin,
                sizes_below: None,
                background_above: None,
                background_transport: 0,
                background_class: 0,
                fanout: Some(12),
            }),
            ..gen(Pattern::Requests)
        };
        let (mut out, mut conns) = (Vec::new(), Vec::new());
        let mut job = 3;
        g.generate(&mut Rng::new(4, 0, 0), &mut job, &mut out, &mut conns);
        assert_eq!(conns.len(), 12, "one connection per application");
        assert_eq!(out.len() % 12, 0);
        assert!(job > 50, "{job}");
        let first: Vec<_> = out.iter().take(12).collect();
        assert!(first
            .iter()
            .all(|f| f.job == 3 && f.start == first[0].start && f.dst == 0));
        // Applications are spread over the servers in turn: 12 over 5 hosts.
        let on_host1 = first.iter().filter(|f| f.src == 1).count();
        assert_eq!(on_host1, 3);
    }
}
