//! Setting a run up: the network with its faults, the flows and the connections that
//! carry them (each subflow's flow hashes or pinned routes), which switch ports fix
//! departures at enqueue, and the first events.

use super::capture::Observers;
use super::endpoints::{ClosedLoops, Hosts};
use super::events::EventKind;
use super::events::EventQueue;
use super::fabric::LosslessCounts;
use super::fabric::DEADLOCK_HOLD;
use super::forward::{Deferred, DeferredTxDone};
use super::homa::HomaHosts;
use super::host_rx::HostDelay;
use super::pools::{ConnPools, PoolFiling};
use super::results::{Counts, Sampling};
use super::triggers::Triggers;
use super::{
    Conn, Flow, Sim, Windows, Wire, WireKind, MAX_COPIES, NOT_STARTED, NO_CONN, NO_FLOW, NO_WATCH,
    SAMPLE_FLOWS, SAMPLE_QUEUES,
};
use crate::connection::{Endpoints, NicInfo};
use crate::engine::rng::stream;
use crate::engine::Rng;
use crate::net::bcube::{bcube_connection, BCubeEnds};
use crate::net::fabric::{Fabric, PfcSetup};
use crate::net::faults::{LinkEvent, NO_FAULT};
use crate::net::hash::{ack_hash, data_hash};
use crate::net::jitter::NicJitter;
use crate::net::network::{LoadBalancing, Network, NodeKind, Port, NO_RWNDQ};
use crate::net::packet::{PacketArena, NDP, PINNED};
use crate::net::queue::Fixes;
use crate::scenario::{Plan, TransportPlan};
use crate::time::SimTime;
use crate::transport::ndp::PullPacer;
use crate::transport::protocol::CcKind;
use crate::transport::roce::RocePair;
use crate::workload::{ConnSpec, FlowSpec, Trigger};
use std::collections::{HashSet, VecDeque};

impl Sim {
    /// A run of `plan`, ready to start at time 0.
    pub fn new(plan: Plan) -> Sim {
        Sim::build(plan, false)
    }

    /// `new`, with every port's departures `held` for its `TxDone`s (no departure fixed
    /// ahead, no `TxDone` deferred): the same tables, more events.
    pub(crate) fn build(plan: Plan, held: bool) -> Sim {
        let mut net = Network::build(
            &plan.topology,
            &plan.tier_params,
            plan.host_queue,
            plan.load_balancing,
            plan.seed,
        );
        let link_events = plan.faults.install(plan.seed, &plan.topology, &mut net);
        let seed = plan.seed;
        let mut events = EventQueue::new();
        let (conns, w) = connect(&plan, &mut net, &mut events);
        let homa = HomaHosts::build(&plan, &mut net, &conns, &w.flows, longest_rtt);
        let host_ports = net.host_ports();
        let jitter = NicJitter::new(plan.host_jitter, seed, host_ports);
        let relaying = plan.topology.kind.bcube().is_some();
        let rwndq_on = !net.rwndq.is_empty();
        let fabric = fabric(&plan, &net);
        let fabric_on = fabric.buffers.iter().any(|b| b.is_some()) || fabric.pfc_on;
        let observe = plan.pcap.is_some() || plan.trace.is_some();
        let run = RunShortcuts {
            fabric: fabric_on,
            observe,
            nics: !jitter.is_on() && homa.is_none() && !net.multi_nic && !relaying && !observe,
            held,
        };
        take_fast_paths(&mut net, &link_events, run);
        if fabric.pfc_on {
            events.schedule(DEADLOCK_HOLD, EventKind::PfcCheck, 0, 0);
        }
        let sampled_ports = sampled_ports(&plan, &net);
        let ndp = conns.iter().any(|c| c.wire.kind == WireKind::Ndp);
        let plan_hosts = net.host_nic.len();
        let host_rx = conns.iter().any(|c| c.host_rx.per_packet > 0);
        schedule_start(&plan, &link_events, &mut events);
        let (conn_flow, capture, trace) = if observe {
            let mut conn_flows = vec![Vec::new(); conns.len()];
            for (i, f) in w.flows.iter().enumerate() {
                for &c in f.copies() {
                    conn_flows[c as usize].push(i as u32);
                }
            }
            let class: Vec<u16> = w.flows.iter().map(|f| f.spec.class).collect();
            let (capture, trace) = super::capture::observers(&plan, &net, &conn_flows, &class);
            let first = conn_flows
                .iter()
                .map(|fs| fs.first().copied().unwrap_or(NO_FLOW))
                .collect();
            (first, capture, trace)
        } else {
            (Vec::new(), None, None)
        };
        let step = net.ports.iter().map(|p| p.delay).min().unwrap_or(0).max(1);
        let defers_tx_done = net.ports.iter().any(|p| p.defers_tx_done);
        let tx_due = if defers_tx_done {
            let none = |far: &Port| DeferredTxDone {
                at: SimTime::MAX,
                port: far.reverse,
            };
            net.ports.iter().map(none).collect()
        } else {
            Vec::new()
        };
        let persistent = w.flows.iter().any(|f| f.spec.conn.is_some());
        let server_log = if persistent {
            vec![Vec::new(); conns.len()]
        } else {
            Vec::new()
        };
        Sim {
            now: 0,
            events,
            pkts: PacketArena::new(),
            net,
            conns,
            flows: w.flows,
            plan,
            counts: Counts::default(),
            unfinished: w.unfinished,
            long_lived: w.long_lived,
            hosts: Hosts {
                blocked: vec![VecDeque::new(); host_ports],
                relaying,
                scatter_rng: (0..plan_hosts)
                    .map(|h| Rng::new(seed, stream::HOST, (2 << 32) | h as u64))
                    .collect(),
                jitter,
                host_rx_free: if host_rx {
                    vec![0; plan_hosts]
                } else {
                    Vec::new()
                },
            },
            partial: false,
            rwndq_on,
            sampling: Sampling {
                sampled_ports,
                ..Sampling::default()
            },
            closed: w.closed,
            pools: w.pools,
            link_events,
            fabric,
            fabric_on,
            lossless: LosslessCounts::default(),
            deferred: Deferred {
                defers_tx_done,
                tx_due,
            },
            pacers: if ndp {
                vec![PullPacer::default(); plan_hosts]
            } else {
                Vec::new()
            },
            homa,
            observe,
            observers: Observers {
                capture,
                trace,
                conn_flow,
            },
            server_log,
            windows: Windows {
                step,
                next_boundary: step,
            },
            part: None,
            merged: None,
        }
    }
}

/// The flows and what starts them, as `Sim` keeps them.
struct Workload {
    flows: Vec<Flow>,
    closed: ClosedLoops,
    unfinished: u64,
    long_lived: u64,
    pools: ConnPools,
}

/// The run's flows and the connections that carry them, with the flows' `FlowStart`
/// and the persistent connections' `ConnOpen` events. A flow of its own gets
/// connection i for its first copy (so its 5-tuple, hence its paths, do not depend on
/// the rest of the workload); further copies and the persistent connections come after.
fn connect(plan: &Plan, net: &mut Network, events: &mut EventQueue) -> (Vec<Conn>, Workload) {
    let (specs, persistent, flow_entry, conn_entry) = plan.workload_entries();
    let net_rtt = base_rtt(plan, net);
    let mut builder = ConnBuilder::new(plan, net, specs.len(), net_rtt);
    let mut w = Workload::new(&specs, &plan.triggers());
    for (i, f) in specs.iter().enumerate() {
        let mut conns_of = [NO_CONN; MAX_COPIES];
        let mut copies = 1;
        if f.conn.is_none() {
            conns_of[0] = builder.flow_copy(f, i, flow_entry[i]);
            copies = plan.transports[f.transport as usize].replicas as usize;
        }
        w.add_flow(i, f, conns_of, copies as u8, events);
    }
    for (i, flow) in w.flows.iter_mut().enumerate() {
        for k in 1..flow.copies as usize {
            flow.conns[k] = builder.flow_copy(&specs[i], i, flow_entry[i]);
        }
    }
    // Persistent connections, with their replicas, open at their start.
    let mut persistent_conns = Vec::with_capacity(persistent.len());
    let mut pools = PoolFiling::default();
    for (pi, p) in persistent.iter().enumerate() {
        let mut ids = [NO_CONN; MAX_COPIES];
        let copies = plan.transports[p.transport as usize].replicas as usize;
        for id in ids.iter_mut().take(copies) {
            *id = builder.persistent(p, conn_entry[pi]);
            // (A pooled connection has one copy: the scenario's checks.)
            pools.add(*id, p, conn_entry[pi]);
            if !p.on_demand {
                events.schedule(p.start, EventKind::ConnOpen, *id, 0);
            }
        }
        persistent_conns.push((ids, copies as u8));
        pools.made(ids[0]);
    }
    for (i, f) in specs.iter().enumerate() {
        if let Some(pc) = f.conn {
            let (ids, copies) = persistent_conns[pc as usize];
            w.flows[i].conns = ids;
            w.flows[i].copies = copies;
            pools.opens_with(ids[0], i as u32);
        }
    }
    w.pools = pools.done();
    w.closed.triggers.watch(builder.conns.len(), &w.flows);
    for (c, watch) in builder.conns.iter_mut().zip(&w.closed.triggers.recv_watch) {
        c.watch_end = watch.front().map_or(NO_WATCH, |&(_, end)| end);
    }
    w.closed.triggers.link(&plan.trigger_links());
    // Where each flow's send-done happens: a Homa message's at its receiver.
    let finish_host: Vec<u32> = w
        .flows
        .iter()
        .map(|f| match builder.conns[f.conns[0] as usize].ep {
            Endpoints::Homa(_) => f.spec.dst,
            Endpoints::Tcp(_) | Endpoints::Mptcp(_) | Endpoints::Roce(_) | Endpoints::Ndp(_) => {
                f.spec.src
            }
        })
        .collect();
    w.closed.triggers.localise(&w.flows, &finish_host);
    w.start_triggered(plan, events);
    (builder.conns, w)
}

impl Workload {
    /// No flows yet; the triggers (closed-loop jobs' if some flow waits for a job, and
    /// the traffic entries' `triggers`) set up.
    fn new(specs: &[FlowSpec], triggers: &[Trigger]) -> Workload {
        Workload {
            flows: Vec::with_capacity(specs.len()),
            closed: ClosedLoops {
                successor: vec![NO_FLOW; specs.len()],
                think: vec![0; specs.len()],
                triggers: Triggers::new(specs, triggers),
            },
            unfinished: 0,
            long_lived: 0,
            pools: ConnPools::default(),
        }
    }

    /// Counts the activations made before the run (the triggers linked): the flows
    /// their firings start begin then, with no synchronisation step (nothing crosses the
    /// fabric to tell them).
    fn start_triggered(&mut self, plan: &Plan, events: &mut EventQueue) {
        for (f, fired) in self.closed.triggers.start(&plan.trigger_starts()) {
            let at = fired.saturating_add(self.closed.think[f as usize]);
            self.flows[f as usize].spec.start = at;
            events.schedule(at, EventKind::FlowStart, f, 0);
        }
    }

    /// Adds flow `i` on connections `conns` (`copies` of them once all are set up), and
    /// schedules its start unless a predecessor or a job starts it.
    fn add_flow(
        &mut self,
        i: usize,
        f: &FlowSpec,
        conns: [u32; MAX_COPIES],
        copies: u8,
        events: &mut EventQueue,
    ) {
        match f.size {
            Some(_) => self.unfinished += 1,
            None => self.long_lived += 1,
        }
        let mut spec = *f;
        match (f.after, f.after_job) {
            // Started by its predecessor's finish; until then it has no start time.
            (Some(p), _) => {
                self.closed.successor[p as usize] = i as u32;
                spec.start = NOT_STARTED;
                self.closed.think[i] = f.start;
            }
            // Started by a trigger: when every flow of the job before has finished, or
            // as its dependency graph says.
            (None, _) => match self.closed.triggers.waits_for(f) {
                Some(t) => {
                    self.closed.triggers.add_waiter(t, i as u32);
                    spec.start = NOT_STARTED;
                    self.closed.think[i] = f.start;
                }
                None => events.schedule(f.start, EventKind::FlowStart, i as u32, 0),
            },
        }
        self.flows.push(Flow {
            spec,
            conns,
            copies,
            persistent: None,
            started: false,
            finish: None,
        });
    }
}

/// A connection to set up: its hosts, transport and priority, and the traffic entry it
/// comes from (its pinned paths and stop time).
#[derive(Clone, Copy)]
struct NewConn {
    src: u32,
    dst: u32,
    transport: u16,
    priority: u8,
    entry: u32,
}

/// Builds connections in index order, pinning their routes in the network.
struct ConnBuilder<'a> {
    plan: &'a Plan,
    net: &'a mut Network,
    conns: Vec<Conn>,
    /// BCube's (n, k) if the hosts relay (every connection follows source routes).
    bcube: Option<(u32, u32)>,
    // Scratch paths, reused from connection to connection.
    route: Vec<u32>,
    back: Vec<u32>,
    bcube_paths: Vec<Vec<u32>>,
    /// The network's base RTT for RoCE transports (0 if none runs).
    net_rtt: SimTime,
}

impl<'a> ConnBuilder<'a> {
    fn new(
        plan: &'a Plan,
        net: &'a mut Network,
        capacity: usize,
        net_rtt: SimTime,
    ) -> ConnBuilder<'a> {
        ConnBuilder {
            plan,
            net,
            net_rtt,
            conns: Vec::with_capacity(capacity),
            bcube: plan.topology.kind.bcube(),
            route: Vec::new(),
            back: Vec::new(),
            bcube_paths: Vec::new(),
        }
    }

    /// A connection (a copy) of flow `i`, from traffic entry `entry`.
    fn flow_copy(&mut self, f: &FlowSpec, i: usize, entry: u32) -> u32 {
        let ends = NewConn {
            src: f.src,
            dst: f.dst,
            transport: f.transport,
            priority: f.priority,
            entry,
        };
        self.add(ends, f.size, i as u32)
    }

    /// A persistent connection (a copy) from traffic entry `entry`: idle until flows
    /// hand it their bytes.
    fn persistent(&mut self, p: &ConnSpec, entry: u32) -> u32 {
        let ends = NewConn {
            src: p.src,
            dst: p.dst,
            transport: p.transport,
            priority: p.priority,
            entry,
        };
        self.add(ends, None, NO_FLOW)
    }

    /// Adds a connection carrying `size` bytes of flow `owner` (`NO_FLOW`: persistent),
    /// and returns its index.
    fn add(&mut self, c: NewConn, size: Option<u64>, owner: u32) -> u32 {
        let plan = self.plan;
        let t = &plan.transports[c.transport as usize];
        // MMPTCP's duplicate-ACK threshold while scattering: 3 plus the number of
        // equal-cost paths between the hosts (when there is more than one).
        let paths = self.net.ecmp_paths(c.src, c.dst);
        let scatter_dupacks = 3 + if paths > 1 { paths } else { 0 };
        let nic = NicInfo {
            line_bps: self.net.ports[self.net.host_nic[c.src as usize] as usize]
                .rate
                .bits_per_sec() as f64,
            base_rtt: self.net_rtt,
        };
        let mut ep = Endpoints::build(t, size, scatter_dupacks, nic, self.hops(t, c));
        if owner == NO_FLOW {
            ep.make_idle();
        }
        let i = self.conns.len();
        let paths = &plan.entry_paths[c.entry as usize];
        // BCube's hosts relay: every connection follows source routes, on the paths
        // the flow level gives it too.
        let hash = match self.bcube {
            Some((n, k)) => {
                let at = BCubeEnds {
                    n,
                    k,
                    src: c.src,
                    dst: c.dst,
                };
                self.bcube_routes(i, at, paths, ep.subflows())
            }
            None => self.fabric_routes(i, c, paths, ep.subflows()),
        };
        let hash = match (&t.ndp, plan.load_balancing) {
            (Some(_), LoadBalancing::Ecmp) => {
                let h = self.ndp_path_hashes(i, c);
                let rng = Rng::new(plan.seed, stream::HOST, (1 << 32) | i as u64);
                if let Some(p) = ep.as_ndp_mut() {
                    p.set_paths(h.len(), rng);
                }
                h
            }
            _ => hash,
        };
        let pinned = if paths.is_empty() && self.bcube.is_none() {
            0
        } else {
            PINNED
        };
        self.conns.push(Conn {
            src: c.src,
            dst: c.dst,
            hash,
            wire: Wire::of(t, &ep, c.priority, pinned),
            stop_at: plan.entry_stop[c.entry as usize],
            host_rx: HostDelay {
                per_packet: t.cc.host_delay(),
                echo: 0,
            },
            blocked: [false; 2],
            ep,
            timer_at: [0; 2],
            acked_at_warmup: 0,
            pending: VecDeque::new(),
            offered: 0,
            watch_end: NO_WATCH,
        });
        i as u32
    }

    /// The links a connection's path crosses one way, for the controllers that scale by
    /// it (Swift); 0 for the others, which need not walk the path. Every equal-cost path
    /// between two hosts of the shipped topologies has the same length: the first
    /// stands for all.
    fn hops(&mut self, t: &TransportPlan, c: NewConn) -> u32 {
        if !t.cc.info().hop_scaled {
            return 0;
        }
        self.route.clear();
        self.net.indexed_path(c.src, c.dst, 0, &mut self.route);
        self.route.len() as u32
    }

    /// NDP's spraying: a flow hash for each of the equal-cost paths from `c.src` to
    /// `c.dst` (found by walking ECMP's choices for the hashes of successive source
    /// ports until every path has one), so its sender can send each packet on the path
    /// it picks. Control packets take random hashes of their own.
    fn ndp_path_hashes(&mut self, i: usize, c: NewConn) -> Vec<[u32; 2]> {
        let net = &mut *self.net;
        let want = net.ecmp_paths(c.src, c.dst) as usize;
        // The hashes of the paths found, in the order found; the paths, to tell a new one
        // (a set: a k = 32 fat tree has 256 paths between pods, found among ~1,400 draws).
        let mut found: Vec<u32> = Vec::with_capacity(want);
        let mut seen: HashSet<Vec<u32>> = HashSet::with_capacity(want);
        for k in 0..(64 * want as u32).max(64) {
            let h = data_hash(i, k as u16, c.src, c.dst);
            let mut path = Vec::new();
            let mut node = net.ports[net.host_nic[c.src as usize] as usize].peer;
            while node != c.dst && path.len() < 64 {
                let Some(port) = net.next_port(node, c.dst, h) else {
                    break;
                };
                path.push(port);
                node = net.ports[port as usize].peer;
            }
            if seen.insert(path) {
                found.push(h);
                if found.len() == want {
                    break;
                }
            }
        }
        found.into_iter().map(|h| [h, h]).collect()
    }

    /// The pinned routes (data, ACK) of connection `i`'s subflows in BCube, on the paths
    /// of BCube's path set the flow level gives them too (`paths`: the traffic entry's
    /// pinned ones), ACKs on the reverse.
    fn bcube_routes(
        &mut self,
        i: usize,
        at: BCubeEnds,
        paths: &[u32],
        subflows: usize,
    ) -> Vec<[u32; 2]> {
        let (net, back) = (&mut *self.net, &mut self.back);
        let bcube_paths = &mut self.bcube_paths;
        bcube_paths.resize(subflows.max(bcube_paths.len()), Vec::new());
        bcube_connection(
            net,
            self.plan.seed,
            i,
            at,
            paths,
            &mut bcube_paths[..subflows],
        );
        bcube_paths[..subflows]
            .iter()
            .map(|p| {
                back.clear();
                net.reverse_path(p, back);
                [net.pin(p), net.pin(back)]
            })
            .collect()
    }

    /// Connection `i`'s subflows on a switched fabric: each subflow's flow hash per
    /// direction for ECMP, or, if its traffic entry pins `paths`, its pinned routes.
    fn fabric_routes(
        &mut self,
        i: usize,
        c: NewConn,
        paths: &[u32],
        subflows: usize,
    ) -> Vec<[u32; 2]> {
        let (net, route, back) = (&mut *self.net, &mut self.route, &mut self.back);
        let (src, dst) = (c.src, c.dst);
        (0..subflows as u16)
            .map(|k| {
                if paths.is_empty() {
                    return [data_hash(i, k, src, dst), ack_hash(i, k, src, dst)];
                }
                // Subflow k follows path `paths[k % len]` both ways (ACKs on the
                // reverse of the data's path).
                route.clear();
                back.clear();
                let index = paths[k as usize % paths.len()];
                if net.indexed_path(src, dst, index, route) {
                    net.reverse_path(route, back);
                } else {
                    // No path: empty routes, whose packets routing drops.
                    route.clear();
                }
                [net.pin(route), net.pin(back)]
            })
            .collect()
    }
}

/// What of a run decides which shortcuts its ports may take (`fast_paths`).
#[derive(Clone, Copy, Debug)]
pub(super) struct RunShortcuts {
    /// Shared buffers or PFC: their accounting and pauses see every packet as it
    /// starts (`enqueue_fabric`, `tx_done_fabric`), so no departure is fixed ahead.
    pub fabric: bool,
    /// Packet capture or event trace: their hooks see each packet that waited as it
    /// leaves its queue (`observe`), except a committed queue's, captured as it joins.
    pub observe: bool,
    /// Host interfaces may defer their `TxDone`s: cleared where something else a host's
    /// `TxDone` does needs it as an event (send jitter, a draw per departure; Homa,
    /// whose agents hand the NIC a packet at each departure; hosts with several NICs or
    /// relaying hosts, which read or fill interfaces without their host acting; capture
    /// or trace).
    pub nics: bool,
    /// Fix no departure and defer no `TxDone` (tests compare such runs with the
    /// shortcuts' tables).
    pub held: bool,
}

/// Which shortcuts port `port` (of a node of kind `kind`; `changing`: a scheduled link
/// change touches it) takes: the queue's own (`OutQueue::fast_paths`), the departures
/// fixed ahead and its `TxDone`s deferred where nothing must see a packet at the moment
/// it starts. Every field of the port and of the run's settings is named here, so a new
/// one does not compile until someone decides what it allows. Call it once per port
/// before the first packet.
fn fast_paths(port: &mut Port, kind: NodeKind, changing: bool, run: RunShortcuts) {
    let RunShortcuts {
        fabric,
        observe,
        nics,
        held,
    } = run;
    let Port {
        // Where the port is and what it is wired to.
        owner: _,
        peer: _,
        reverse: _,
        tier: _,
        rate: _,
        // A deferred `TxDone` is taken when the packet before it reaches the far end: a
        // link without delay has no later time to take it at.
        delay,
        // RWNDQ reads the queue's length at each packet it rewrites.
        rwndq,
        // Its state during the run, set here or by the run.
        busy_until: _,
        txdone_pending: _,
        defers_tx_done: _,
        paused: _,
        queue,
        tx_packets: _,
        tx_bytes: _,
        busy_time: _,
        // A lossy link decides each packet's fate as it starts.
        fault,
        fault_drops: _,
        // Links between partitions defer nothing: a packet to a remote peer is a message,
        // whose arrival there cannot take the `TxDone`. (Set after setup, by the
        // parallel run, which clears `defers_tx_done` on such ports.)
        remote: _,
    } = port;
    let steady = *fault == NO_FAULT && !changing && !held && !fabric;
    let (fix, defer) = match kind {
        // A committed FIFO's packets are captured as they join (`Join::Committed`); the
        // queues that hold packets are captured as they leave, so they fix none then.
        NodeKind::Switch => {
            let may = steady && *rwndq == NO_RWNDQ;
            let committed = may && queue.fast_paths().fixes == Fixes::Every;
            (
                may && (committed || !observe),
                may && !committed && !observe,
            )
        }
        // A host's endpoints wait for room in its interface's queue: never fixed ahead.
        NodeKind::Host => (false, nics && steady),
    };
    queue.take_fast_paths(fix);
    port.defers_tx_done = defer && *delay > 0;
}

/// Every port's shortcuts (`fast_paths`).
fn take_fast_paths(net: &mut Network, link_events: &[LinkEvent], run: RunShortcuts) {
    let changing: std::collections::HashSet<u32> =
        link_events.iter().flat_map(|e| e.ports).collect();
    for i in 0..net.ports.len() {
        let kind = net.kinds[net.ports[i].owner as usize];
        fast_paths(&mut net.ports[i], kind, changing.contains(&(i as u32)), run);
    }
}

/// The shared buffers and PFC state of the plan's switches (empty when both are off).
fn fabric(plan: &Plan, net: &Network) -> Fabric {
    let pfc = plan.pfc.map(|p| PfcSetup {
        cfg: p.cfg,
        headroom: p.headroom,
        mtu: p.mtu,
    });
    let tiers: Vec<bool> = plan.tier_params.iter().map(|t| t.pfc).collect();
    let buffers: Vec<_> = plan
        .topology
        .switch_tiers()
        .iter()
        .map(|t| plan.switch_buffers[(*t)? as usize].map(|b| (b.bytes, b.alpha)))
        .collect();
    Fabric::build(net, &buffers, pfc, &tiers)
}

/// The switch ports the queue series covers: those of the sampled tiers (all if none
/// is named).
fn sampled_ports(plan: &Plan, net: &Network) -> Vec<u32> {
    (0..net.ports.len() as u32)
        .filter(|&p| {
            let port = &net.ports[p as usize];
            net.kinds[port.owner as usize] == NodeKind::Switch
                && (plan.queue_sample_tiers.is_empty()
                    || plan.queue_sample_tiers.contains(&port.tier))
        })
        .collect()
}

/// The first events besides the flows' starts and connections' openings: the time
/// series' first samples, the end of the warm-up and the scheduled link changes.
fn schedule_start(plan: &Plan, link_events: &[LinkEvent], events: &mut EventQueue) {
    if let Some(p) = plan.flow_sample {
        events.schedule(p, EventKind::Sample, SAMPLE_FLOWS, 0);
    }
    if let Some(p) = plan.queue_sample {
        events.schedule(p, EventKind::Sample, SAMPLE_QUEUES, 0);
    }
    if plan.warmup > 0 {
        events.schedule(plan.warmup, EventKind::Warmup, 0, 0);
    }
    for (i, e) in link_events.iter().enumerate() {
        events.schedule(e.at, EventKind::LinkChange, i as u32, 0);
    }
}

impl Wire {
    /// How the packets of a connection over transport `t` go on the wire: its data's
    /// class byte from `priority` (NDP's its own), with `pinned` (`PINNED` or 0).
    fn of(t: &TransportPlan, ep: &Endpoints, priority: u8, pinned: u8) -> Wire {
        let (kind, payload, header) = match (&t.roce, t.cc.roce(), &t.ndp) {
            (Some(s), Some(rc), _) => {
                let kind = if rc.int() {
                    WireKind::Hpcc
                } else {
                    WireKind::Roce
                };
                let header = ep.as_roce().map_or(t.tcp.header, RocePair::header);
                (kind, s.payload, header)
            }
            (_, _, Some(n)) => (
                WireKind::Ndp,
                n.payload,
                crate::transport::ndp::HEADER_BYTES,
            ),
            _ => {
                let kind = if t.cc == CcKind::Pfabric {
                    WireKind::Pfabric
                } else {
                    WireKind::Plain
                };
                (kind, t.tcp.mss, t.tcp.header)
            }
        };
        Wire {
            kind,
            // NDP's packets carry its class bit (trimming queues cut its data); its data
            // goes in class 1 behind its control packets in class 0, so a host NIC with
            // two priority classes (`host_queue.priority`) sends ACKs, NACKs and PULLs
            // first, as htsim's NDP hosts do.
            priority: match kind {
                WireKind::Ndp => NDP | 1,
                WireKind::Plain | WireKind::Pfabric | WireKind::Roce | WireKind::Hpcc => priority,
            },
            pinned,
            header,
            max_wire: payload + header,
        }
    }
}

/// Picoseconds to fall back on where no host pair has a route: TIMELY's minimum RTT.
const FALLBACK_RTT: SimTime = crate::transport::rate::timely::defaults::MIN_RTT;

/// The base RTT the RoCE and NDP transports use unless they set their own: the longest
/// host-to-host round trip on an idle network (a full data packet's serialisations and
/// propagation along a shortest path, an ACK's back), as the HPCC authors' simulator uses
/// one such value, the largest, for every flow. Taken from the first and the last host
/// to every other (the shipped topologies are symmetric, so these reach the farthest
/// pairs); 0 when no transport is RoCE or NDP.
fn base_rtt(plan: &Plan, net: &mut Network) -> SimTime {
    let packets: Vec<(u32, u32)> = plan
        .transports
        .iter()
        .filter_map(|t| {
            let s = t.roce?;
            let rc = t.cc.roce()?;
            let header = s.config(&rc, 1.0, 0).header;
            Some((s.payload + header, header))
        })
        // NDP's first window is a BDP of the same base RTT.
        .chain(plan.transports.iter().filter_map(|t| {
            let n = t.ndp?;
            Some((n.packet_bytes(), crate::transport::ndp::HEADER_BYTES))
        }))
        .collect();
    let Some(data) = packets.iter().map(|r| r.0).max() else {
        return 0;
    };
    let ack = packets.iter().map(|r| r.1).max().unwrap_or(0);
    longest_rtt(net, data, ack)
}

/// The longest host-to-host round trip on an idle network, for a packet of `data` wire
/// bytes there and one of `ack` back, along shortest paths (see `base_rtt`).
fn longest_rtt(net: &mut Network, data: u32, ack: u32) -> SimTime {
    let hosts = net.host_nic.len() as u32;
    let (mut there, mut back) = (Vec::new(), Vec::new());
    let mut best = 0;
    for src in [0, hosts.saturating_sub(1)] {
        for dst in 0..hosts {
            there.clear();
            back.clear();
            // Path 0 of the equal-cost set (all are as long); no random draw.
            if dst == src
                || !net.indexed_path(src, dst, 0, &mut there)
                || !net.indexed_path(dst, src, 0, &mut back)
            {
                continue;
            }
            let trip = |ports: &[u32], bytes: u32| -> SimTime {
                ports
                    .iter()
                    .map(|&p| {
                        let port = &net.ports[p as usize];
                        port.rate.serialization(bytes) + port.delay
                    })
                    .sum()
            };
            best = best.max(trip(&there, data) + trip(&back, ack));
        }
    }
    if best == 0 {
        FALLBACK_RTT
    } else {
        best
    }
}
