//! The simulation: the event loop that moves packets between ports, switches and the
//! transport state machines of the hosts.
//!
//! Per packet and link, a packet costs one `Arrive` event. At a switch port with a plain
//! FIFO queue, a packet's departure is fixed as it joins (a committed queue, see
//! `net::queue`), so a hop is one event however long the queue. Other ports add a
//! `TxDone` event when packets are waiting behind the one on the wire.

use crate::connection::Endpoints;
use crate::engine::queue::EventKind;
use crate::engine::rng::stream;
use crate::engine::{EventQueue, Rng};
use crate::metrics::{
    histogram_quantile, FlowRecord, FlowSample, QueueRecord, QueueSample, RecoveryCounters,
    Results, RunCounters, SubflowRecord,
};
use crate::net::bcube::{bcube_connection, BCubeEnds};
use crate::net::faults::{LinkEvent, NO_FAULT};
use crate::net::hash::{ack_hash, data_hash};
use crate::net::jitter::NicJitter;
use crate::net::network::{Network, NodeKind, NO_RWNDQ};
use crate::net::packet::flags;
use crate::net::packet::{Desc, Ecn, Packet, PacketArena, PacketExt, PINNED, TO_CLIENT, TO_SERVER};
use crate::net::queue::Admit;
use crate::scenario::Plan;
use crate::time::SimTime;
use crate::transport::mptcp::sender::MptcpCounters;
use crate::transport::tcp::{Segment, SenderStats};
use crate::workload::FlowSpec;
use std::collections::VecDeque;

/// One connection: the client (data sender) and server (receiver) endpoints, carrying
/// one flow of its own or, persistent, the messages of many.
struct Conn {
    src: u32,
    dst: u32,
    priority: u8,
    /// ECMP hash of each subflow's 5-tuple, per direction; for a pinned connection, the
    /// id of each subflow's route per direction.
    hash: Vec<[u32; 2]>,
    /// `PINNED` if the subflows follow pinned routes, else 0 (ORed into the class).
    pinned: u8,
    /// The client sends nothing from this time on (`traffic.stop_us`; `SimTime::MAX`: never).
    stop_at: SimTime,
    header: u32,
    /// Wire size of a full segment, for the NIC's room check.
    max_wire: u32,
    /// Each endpoint waits for room in its host's NIC queue.
    blocked: [bool; 2],
    ep: Endpoints,
    /// Time of the pending timer event of each endpoint (0: none).
    timer_at: [SimTime; 2],
    acked_at_warmup: u64,
    /// Flows handed to the connection and not yet acknowledged, with the stream offset
    /// their last byte ends at, in stream order.
    pending: VecDeque<(u32, u64)>,
    /// Bytes handed to the connection so far.
    offered: u64,
}

/// What a flow's record adds up from its connections' counters.
#[derive(Clone, Copy, Debug, Default)]
struct Tally {
    stats: SenderStats,
    mptcp: MptcpCounters,
    recovery: RecoveryCounters,
}

impl Tally {
    fn of(ep: &Endpoints) -> Tally {
        Tally {
            stats: ep.stats(),
            mptcp: ep.mptcp_counters(),
            recovery: ep.recovery_counters(),
        }
    }

    /// `self − base` for counters, and `self + other` with `sign = false`.
    fn combine(&self, o: &Tally, subtract: bool) -> Tally {
        let f = |a: u64, b: u64| if subtract { a.saturating_sub(b) } else { a + b };
        let g = |a: u32, b: u32| if subtract { a.saturating_sub(b) } else { a + b };
        let (a, b) = (&self.stats, &o.stats);
        Tally {
            stats: SenderStats {
                bytes_sent: f(a.bytes_sent, b.bytes_sent),
                bytes_retx: f(a.bytes_retx, b.bytes_retx),
                bytes_acked: f(a.bytes_acked, b.bytes_acked),
                timeouts: g(a.timeouts, b.timeouts),
                fast_retx: g(a.fast_retx, b.fast_retx),
                ..*a
            },
            mptcp: MptcpCounters {
                recovery_packets: f(self.mptcp.recovery_packets, o.mptcp.recovery_packets),
                recovery_bytes: f(self.mptcp.recovery_bytes, o.mptcp.recovery_bytes),
                window_violations: f(self.mptcp.window_violations, o.mptcp.window_violations),
            },
            recovery: {
                let (a, b) = (&self.recovery, &o.recovery);
                RecoveryCounters {
                    packets_sent: f(a.packets_sent, b.packets_sent),
                    packets_retx: f(a.packets_retx, b.packets_retx),
                    syn_timeouts: g(a.syn_timeouts, b.syn_timeouts),
                    tlp_probes: g(a.tlp_probes, b.tlp_probes),
                    ir_coded: g(a.ir_coded, b.ir_coded),
                    ir_recovered: g(a.ir_recovered, b.ir_recovered),
                    proactive_copies: f(a.proactive_copies, b.proactive_copies),
                }
            },
        }
    }
}

/// The most copies of a flow (RepFlow uses 2).
const MAX_COPIES: usize = 4;

/// One flow: a whole connection's data, or one message on persistent connections; with
/// replicas, each copy on a connection of its own.
struct Flow {
    spec: FlowSpec,
    conns: [u32; MAX_COPIES],
    copies: u8,
    /// Persistent connections: each copy's connection counters when the flow started,
    /// and, once finished, the flow's share of them.
    base: [Tally; MAX_COPIES],
    share: Option<Tally>,
    finish: Option<SimTime>,
}

impl Flow {
    fn copies(&self) -> &[u32] {
        &self.conns[..self.copies as usize]
    }
}

pub struct Sim {
    pub now: SimTime,
    events: EventQueue,
    pkts: PacketArena,
    pub net: Network,
    conns: Vec<Conn>,
    flows: Vec<Flow>,
    plan: Plan,
    hops: u64,
    delivered: u64,
    dropped: u64,
    peak_packets: u64,
    unfinished: u64,
    long_lived: u64,
    /// Per host port (NIC), the connection endpoints (conn << 1 | endpoint) waiting for
    /// room in its queue, served in order as it drains.
    blocked: Vec<VecDeque<u32>>,
    /// The hosts relay packets (BCube): they send without waiting for room.
    relaying: bool,
    /// Draws the random paths of MMPTCP's scattered packets.
    scatter_rng: Rng,
    /// Send jitter at the hosts' interfaces (`network.host_jitter_us`).
    jitter: NicJitter,
    /// The run was stopped before its end (by the progress callback).
    partial: bool,
    /// Some switch port runs RWNDQ.
    rwndq_on: bool,
    flow_samples: Vec<FlowSample>,
    queue_samples: Vec<QueueSample>,
    /// The switch ports the queue series covers.
    sampled_ports: Vec<u32>,
    /// Closed loops: the flow each flow's finish starts (`NO_FLOW`: none), and each
    /// flow's think time after its predecessor's finish.
    successor: Vec<u32>,
    think: Vec<SimTime>,
    /// Closed-loop jobs (`FlowSpec::after_job`), per job number: its flows not finished
    /// yet and the flows waiting for it. Empty when no flow waits for a job.
    job_left: Vec<u32>,
    job_waiters: Vec<Vec<u32>>,
    /// Scheduled link changes, referred to by their `LinkChange` events.
    link_events: Vec<LinkEvent>,
    /// Packets a switch had no route for (a failed link cut the destination off).
    route_drops: u64,
}

const NO_FLOW: u32 = u32::MAX;
const NO_CONN: u32 = u32::MAX;

/// Start time of a closed-loop flow whose predecessor has not finished.
pub const NOT_STARTED: SimTime = SimTime::MAX;

/// `Sample` events: operand 0 samples the flows, 1 the queues.
const SAMPLE_FLOWS: u32 = 0;
const SAMPLE_QUEUES: u32 = 1;

impl Sim {
    pub fn new(plan: Plan) -> Sim {
        let mut net = Network::build(
            &plan.topology,
            &plan.tier_params,
            plan.host_queue,
            plan.load_balancing,
            plan.seed,
        );
        let link_events = plan.faults.install(plan.seed, &plan.topology, &mut net);
        let (specs, persistent, flow_entry, conn_entry) = plan.workload_entries();
        let seed = plan.seed;
        let mut events = EventQueue::new();
        let mut conns = Vec::with_capacity(specs.len());
        let mut flows: Vec<Flow> = Vec::with_capacity(specs.len());
        let mut successor = vec![NO_FLOW; specs.len()];
        let mut think = vec![0; specs.len()];
        let (mut job_left, mut job_waiters) = (Vec::new(), Vec::new());
        if specs.iter().any(|f| f.after_job.is_some()) {
            let jobs = specs.iter().map(|f| f.job + 1).max().unwrap_or(0).max(0) as usize;
            job_left = vec![0u32; jobs];
            job_waiters = vec![Vec::new(); jobs];
            for f in specs.iter().filter(|f| f.job >= 0) {
                job_left[f.job as usize] += 1;
            }
        }
        let mut unfinished = 0;
        let mut long_lived = 0;
        let mut route = Vec::new();
        let mut back = Vec::new();
        let mut bcube_paths: Vec<Vec<u32>> = Vec::new();
        let bcube = plan.topology.kind.bcube();
        let mut new_conn = |conns: &mut Vec<Conn>,
                            src: u32,
                            dst: u32,
                            transport: u16,
                            priority: u8,
                            size: Option<u64>,
                            owner: u32,
                            entry: u32| {
            let t = &plan.transports[transport as usize];
            // MMPTCP's duplicate-ACK threshold while scattering: 3 plus the number of
            // equal-cost paths between the hosts (when there is more than one).
            let paths = net.ecmp_paths(src, dst);
            let scatter_dupacks = 3 + if paths > 1 { paths } else { 0 };
            let mut ep = Endpoints::build(t, size, scatter_dupacks);
            if owner == NO_FLOW {
                ep.make_idle();
            }
            let i = conns.len();
            let paths = &plan.entry_paths[entry as usize];
            // BCube's hosts relay: every connection follows source routes, on the paths
            // the flow level gives it too.
            let hash = if let Some((n, k)) = bcube {
                let subflows = ep.subflows();
                bcube_paths.resize(subflows.max(bcube_paths.len()), Vec::new());
                let at = BCubeEnds { n, k, src, dst };
                bcube_connection(&net, plan.seed, i, at, paths, &mut bcube_paths[..subflows]);
                bcube_paths[..subflows]
                    .iter()
                    .map(|p| {
                        back.clear();
                        net.reverse_path(p, &mut back);
                        [net.pin(p), net.pin(&back)]
                    })
                    .collect()
            } else {
                (0..ep.subflows() as u16)
                    .map(|k| {
                        if paths.is_empty() {
                            return [data_hash(i, k, src, dst), ack_hash(i, k, src, dst)];
                        }
                        // Subflow k follows path `paths[k % len]` both ways (ACKs on the
                        // reverse of the data's path).
                        route.clear();
                        back.clear();
                        let index = paths[k as usize % paths.len()];
                        if net.indexed_path(src, dst, index, &mut route) {
                            net.reverse_path(&route, &mut back);
                        } else {
                            // No path: empty routes, whose packets routing drops.
                            route.clear();
                        }
                        [net.pin(&route), net.pin(&back)]
                    })
                    .collect()
            };
            conns.push(Conn {
                src,
                dst,
                priority,
                hash,
                pinned: if paths.is_empty() && bcube.is_none() {
                    0
                } else {
                    PINNED
                },
                stop_at: plan.entry_stop[entry as usize],
                header: t.tcp.header,
                max_wire: t.tcp.mss + t.tcp.header,
                blocked: [false; 2],
                ep,
                timer_at: [0; 2],
                acked_at_warmup: 0,
                pending: VecDeque::new(),
                offered: 0,
            });
            i as u32
        };
        // A connection (a copy) of flow i.
        let mut flow_conn = |conns: &mut Vec<Conn>, i: usize| {
            let f = &specs[i];
            let entry = flow_entry[i];
            new_conn(
                conns,
                f.src,
                f.dst,
                f.transport,
                f.priority,
                f.size,
                i as u32,
                entry,
            )
        };
        // A flow of its own gets connection i for its first copy (so its 5-tuple, hence
        // its paths, do not depend on the rest of the workload); further copies and the
        // persistent connections come after.
        for (i, f) in specs.iter().enumerate() {
            let mut conns_of = [NO_CONN; MAX_COPIES];
            let mut copies = 1;
            if f.conn.is_none() {
                conns_of[0] = flow_conn(&mut conns, i);
            }
            match f.size {
                Some(_) => unfinished += 1,
                None => long_lived += 1,
            }
            let mut spec = *f;
            match (f.after, f.after_job) {
                // Started by its predecessor's finish; until then it has no start time.
                (Some(p), _) => {
                    successor[p as usize] = i as u32;
                    spec.start = NOT_STARTED;
                    think[i] = f.start;
                }
                // Started when every flow of the job before has finished.
                (None, Some(j)) => {
                    job_waiters[j as usize].push(i as u32);
                    spec.start = NOT_STARTED;
                    think[i] = f.start;
                }
                (None, None) => events.schedule(f.start, EventKind::FlowStart, i as u32, 0),
            }
            if f.conn.is_none() {
                copies = plan.transports[f.transport as usize].replicas as usize;
            }
            flows.push(Flow {
                spec,
                conns: conns_of,
                copies: copies as u8,
                base: [Tally::default(); MAX_COPIES],
                share: None,
                finish: None,
            });
        }
        for (i, flow) in flows.iter_mut().enumerate() {
            for k in 1..flow.copies as usize {
                flow.conns[k] = flow_conn(&mut conns, i);
            }
        }
        // Persistent connections, with their replicas, open at their start.
        let mut persistent_conns = Vec::with_capacity(persistent.len());
        for (pi, p) in persistent.iter().enumerate() {
            let mut ids = [NO_CONN; MAX_COPIES];
            let copies = plan.transports[p.transport as usize].replicas as usize;
            for id in ids.iter_mut().take(copies) {
                let entry = conn_entry[pi];
                *id = new_conn(
                    &mut conns,
                    p.src,
                    p.dst,
                    p.transport,
                    p.priority,
                    None,
                    NO_FLOW,
                    entry,
                );
                events.schedule(p.start, EventKind::ConnOpen, *id, 0);
            }
            persistent_conns.push((ids, copies as u8));
        }
        for (i, f) in specs.iter().enumerate() {
            if let Some(pc) = f.conn {
                let (ids, copies) = persistent_conns[pc as usize];
                flows[i].conns = ids;
                flows[i].copies = copies;
            }
        }
        let host_ports = net.host_ports();
        let jitter = NicJitter::new(plan.host_jitter, seed, host_ports);
        let relaying = bcube.is_some();
        let rwndq_on = !net.rwndq.is_empty();
        // Departures are fixed at enqueue except where something must see a packet at
        // the moment it starts: host NICs (send jitter, endpoints waiting for room),
        // lossy or failing links, and RWNDQ's queue reading.
        let changing: std::collections::HashSet<u32> =
            link_events.iter().flat_map(|e| e.ports).collect();
        for (i, port) in net.ports.iter_mut().enumerate() {
            if net.kinds[port.owner as usize] == NodeKind::Switch
                && port.fault == NO_FAULT
                && port.rwndq == NO_RWNDQ
                && !changing.contains(&(i as u32))
            {
                port.queue.commit_departures();
            }
        }
        if let Some(p) = plan.flow_sample {
            events.schedule(p, EventKind::Sample, SAMPLE_FLOWS, 0);
        }
        if let Some(p) = plan.queue_sample {
            events.schedule(p, EventKind::Sample, SAMPLE_QUEUES, 0);
        }
        let sampled_ports = (0..net.ports.len() as u32)
            .filter(|&p| {
                let port = &net.ports[p as usize];
                net.kinds[port.owner as usize] == NodeKind::Switch
                    && (plan.queue_sample_tiers.is_empty()
                        || plan.queue_sample_tiers.contains(&port.tier))
            })
            .collect();
        if plan.warmup > 0 {
            events.schedule(plan.warmup, EventKind::Warmup, 0, 0);
        }
        for (i, e) in link_events.iter().enumerate() {
            events.schedule(e.at, EventKind::LinkChange, i as u32, 0);
        }
        Sim {
            now: 0,
            events,
            pkts: PacketArena::new(),
            net,
            conns,
            flows,
            plan,
            hops: 0,
            delivered: 0,
            dropped: 0,
            peak_packets: 0,
            unfinished,
            long_lived,
            blocked: vec![VecDeque::new(); host_ports],
            relaying,
            scatter_rng: Rng::new(seed, stream::HOST, u64::MAX),
            jitter,
            partial: false,
            rwndq_on,
            flow_samples: Vec::new(),
            queue_samples: Vec::new(),
            sampled_ports,
            successor,
            think,
            job_left,
            job_waiters,
            link_events,
            route_drops: 0,
        }
    }

    fn all_done(&self) -> bool {
        self.plan.stop_when_done && self.unfinished == 0 && self.long_lived == 0
    }

    /// Runs until the scenario's duration, or until every flow is done.
    pub fn run(&mut self) {
        self.run_with_progress(u64::MAX, |_, _| true);
    }

    /// Runs like `run`, calling `progress(now, events)` every `every` events; when it
    /// returns false the run stops there, marked partial in its counters.
    pub fn run_with_progress(
        &mut self,
        every: u64,
        mut progress: impl FnMut(SimTime, u64) -> bool,
    ) {
        let end = self.plan.duration;
        if self.all_done() {
            return;
        }
        let mut next_report = every;
        while let Some(t) = self.events.peek_time() {
            if t > end {
                break;
            }
            if self.events.processed() >= next_report {
                next_report = next_report.saturating_add(every);
                if !progress(self.now, self.events.processed()) {
                    self.partial = true;
                    return;
                }
            }
            let ev = self.events.pop().expect("peeked");
            self.now = ev.time;
            match ev.kind() {
                EventKind::Arrive => self.arrive(ev.a, ev.via(), ev.d),
                EventKind::TxDone => self.tx_done(ev.a),
                EventKind::FlowStart => self.start_flow(ev.a),
                EventKind::ConnOpen => {
                    self.conns[ev.a as usize].ep.open();
                    self.flush(ev.a);
                }
                EventKind::Timer => self.timer(ev.a, ev.b()),
                EventKind::Warmup => {
                    for c in &mut self.conns {
                        c.acked_at_warmup = c.ep.data_acked();
                    }
                }
                EventKind::Sample => self.sample(ev.a),
                EventKind::RwndqTick => self.rwndq_tick(ev.a),
                EventKind::LinkChange => self.link_change(ev.a),
            }
            if self.unfinished == 0 && self.all_done() {
                return;
            }
        }
        self.now = self.now.max(end);
    }

    #[inline]
    fn arrive(&mut self, node: u32, via: u32, d: Desc) {
        if self.net.kinds[node as usize] == NodeKind::Switch {
            let next = if d.pinned() {
                self.net.pinned_port(node, d.hash)
            } else {
                self.net.next_port(node, d.dst, d.hash)
            };
            match next {
                Some(port) => {
                    if self.rwndq_on && self.net.rwndq_node[node as usize] {
                        self.rwndq_inspect(via, port, d);
                    }
                    self.enqueue(port, d)
                }
                None => {
                    self.route_drops += 1;
                    self.dropped += 1;
                    self.pkts.free(d.pkt);
                }
            }
        } else if d.pinned() && d.dst != node {
            self.relay(node, d);
        } else {
            self.deliver(d);
        }
    }

    /// A host on a pinned route that is not the packet's destination passes it on (BCube).
    fn relay(&mut self, node: u32, d: Desc) {
        match self.net.pinned_port(node, d.hash) {
            Some(port) => self.enqueue(port, d),
            None => {
                self.route_drops += 1;
                self.dropped += 1;
                self.pkts.free(d.pkt);
            }
        }
    }

    /// When a packet that finds port `port_id` idle starts onto the wire: now, or, on a
    /// host interface with send jitter, after the interface's random hold.
    #[inline]
    fn start_time(&mut self, port_id: u32) -> SimTime {
        if self.jitter.is_on() && (port_id as usize) < self.blocked.len() {
            self.now + self.jitter.draw(port_id)
        } else {
            self.now
        }
    }

    /// Offers a packet to a port; one that finds the link idle goes onto the wire (after
    /// the hold of a host interface's send jitter).
    #[inline]
    fn enqueue(&mut self, port_id: u32, mut d: Desc) {
        let now = self.now;
        let ect = d.ecn != Ecn::NotEct;
        let port = &mut self.net.ports[port_id as usize];
        if port.queue.is_committed() {
            port.queue.advance(now, port.rate);
        }
        if !port.txdone_pending
            && port.busy_until <= now
            && port.queue.is_empty()
            && !port.queue.has_red()
        {
            // An idle link: the packet goes straight onto the wire.
            port.queue.pass_through();
            if ect && (port.queue.marks_on_enqueue() || port.queue.marks_on_dequeue()) {
                d.ecn = Ecn::Ce;
                port.queue.count_mark();
            }
            let start = self.start_time(port_id);
            self.transmit(port_id, d, start);
            return;
        }
        // A committed queue fixes the packet's start now: when the link is done with the
        // packets ahead of it.
        let start = port.busy_until;
        let admit = if port.queue.is_committed() {
            port.queue.commit(now, &mut d, ect, start)
        } else {
            port.queue.enqueue(now, d, ect)
        };
        match admit {
            Admit::Dropped => {
                self.dropped += 1;
                self.pkts.free(d.pkt);
            }
            Admit::Queued { .. } if port.queue.is_committed() => self.transmit(port_id, d, start),
            Admit::Queued { .. } => {
                if !port.txdone_pending {
                    port.txdone_pending = true;
                    let at = port.busy_until.max(now);
                    self.events.schedule(at, EventKind::TxDone, port_id, 0);
                }
            }
        }
    }

    /// Puts a packet on the wire of `port_id` from time `start` (now, or later for a
    /// host interface with send jitter, which stays busy, idle on the wire, until then).
    #[inline]
    fn transmit(&mut self, port_id: u32, d: Desc, start: SimTime) {
        let port = &mut self.net.ports[port_id as usize];
        let ser = port.rate.serialization(d.wire as u32);
        port.busy_until = start + ser;
        port.busy_time += ser;
        port.tx_packets += 1;
        port.tx_bytes += d.wire as u64;
        self.hops += 1;
        let (arrive_at, peer, via, faulty) = (
            start + ser + port.delay,
            port.peer,
            port.reverse,
            port.fault != NO_FAULT,
        );
        if !port.queue.is_empty() && !port.queue.is_committed() {
            port.txdone_pending = true;
            self.events
                .schedule(port.busy_until, EventKind::TxDone, port_id, 0);
        }
        if faulty && self.net.link_loses(port_id, d.hash) {
            self.lose_on_link(port_id, d);
            return;
        }
        self.events.schedule_arrival(arrive_at, peer, via, d);
    }

    /// RWNDQ at a switch: the packet came in on port `via` and leaves by port `out`
    /// (Listing 2 of the RWNDQ document). Only switches with an RWNDQ port read the
    /// packet's TCP header.
    fn rwndq_inspect(&mut self, via: u32, out: u32, d: Desc) {
        let (rin, rout) = (
            self.net.ports[via as usize].rwndq,
            self.net.ports[out as usize].rwndq,
        );
        let p = self.pkts.get_mut(d.pkt);
        if p.has(flags::SYN) && p.has(flags::ACK) {
            for r in [rin, rout] {
                if r != NO_RWNDQ && self.net.rwndq[r as usize].on_syn_ack() {
                    let port = if r == rin { via } else { out };
                    self.net.rwndq[r as usize].timer_armed = true;
                    let at = self.now + self.net.rwndq[r as usize].cfg.interval;
                    self.events.schedule(at, EventKind::RwndqTick, port, 0);
                }
            }
        }
        if rin == NO_RWNDQ {
            return;
        }
        let state = &mut self.net.rwndq[rin as usize];
        if p.has(flags::FIN) || p.has(flags::RST) {
            state.on_fin();
        }
        if p.has(flags::ACK) {
            p.rwnd = state.rewrite(p.rwnd);
        }
    }

    /// Records one row of the flow or queue time series and schedules the next.
    fn sample(&mut self, what: u32) {
        let now = self.now;
        let period = if what == SAMPLE_FLOWS {
            let period = self.plan.flow_sample.expect("flow sampling is on");
            let since = now.saturating_sub(period);
            for (i, f) in self.flows.iter().enumerate() {
                // Running flows of their own, and those that finished since the previous
                // sample (the first copy stands for the flow).
                if f.spec.conn.is_some()
                    || f.spec.start > now
                    || f.finish.is_some_and(|t| t <= since)
                {
                    continue;
                }
                let c = &self.conns[f.conns[0] as usize];
                for (k, s) in c.ep.senders().iter().enumerate() {
                    self.flow_samples.push(FlowSample {
                        time: now,
                        flow: i as u32,
                        subflow: k as u32,
                        bytes_acked: s.bytes_acked(),
                        cwnd: s.win.cwnd,
                        srtt: s.rtt.srtt().unwrap_or(0),
                    });
                }
            }
            period
        } else {
            for &p in &self.sampled_ports {
                let port = &mut self.net.ports[p as usize];
                port.queue.advance(now, port.rate);
                self.queue_samples.push(QueueSample {
                    time: now,
                    port: p,
                    packets: port.queue.packets(),
                    bytes: port.queue.bytes(),
                    rwndq_window: if port.rwndq == NO_RWNDQ {
                        0
                    } else {
                        self.net.rwndq[port.rwndq as usize].wnd
                    },
                });
            }
            self.plan.queue_sample.expect("queue sampling is on")
        };
        if now + period <= self.plan.duration {
            self.events
                .schedule(now + period, EventKind::Sample, what, 0);
        }
    }

    /// RWNDQ's window-update timer of one port (Listing 1).
    fn rwndq_tick(&mut self, port_id: u32) {
        let port = &self.net.ports[port_id as usize];
        let backlog = port.queue.bytes();
        let state = &mut self.net.rwndq[port.rwndq as usize];
        if state.on_tick(backlog) {
            let at = self.now + state.cfg.interval;
            self.events.schedule(at, EventKind::RwndqTick, port_id, 0);
        }
    }

    /// Kept out of line so the rare routing recomputation does not weigh on the
    /// inlining of the event loop's packet handlers.
    #[cold]
    #[inline(never)]
    fn link_change(&mut self, i: u32) {
        let e = self.link_events[i as usize];
        self.net.apply_link_event(&e);
    }

    #[cold]
    fn lose_on_link(&mut self, port_id: u32, d: Desc) {
        self.net.ports[port_id as usize].fault_drops += 1;
        self.dropped += 1;
        self.pkts.free(d.pkt);
    }

    #[inline]
    fn tx_done(&mut self, port_id: u32) {
        let now = self.now;
        let port = &mut self.net.ports[port_id as usize];
        port.txdone_pending = false;
        if let Some(mut d) = port.queue.dequeue(now) {
            if d.ecn == Ecn::Ect && port.queue.marks_on_dequeue() {
                d.ecn = Ecn::Ce;
                port.queue.count_mark();
            }
            let start = self.start_time(port_id);
            self.transmit(port_id, d, start);
        }
        if (port_id as usize) < self.blocked.len() {
            self.unblock(port_id);
        }
    }

    /// Lets endpoints waiting for room in a host's NIC queue send again.
    fn unblock(&mut self, nic: u32) {
        let waiting = nic as usize;
        while let Some(&entry) = self.blocked[waiting].front() {
            let (conn_id, ep) = (entry >> 1, (entry & 1) as usize);
            let wire = self.conns[conn_id as usize].max_wire;
            if !self.net.ports[nic as usize].queue.has_room(wire) {
                return;
            }
            self.blocked[waiting].pop_front();
            self.conns[conn_id as usize].blocked[ep] = false;
            self.flush(conn_id);
        }
    }

    fn deliver(&mut self, d: Desc) {
        let p = *self.pkts.get(d.pkt);
        self.pkts.free(d.pkt);
        self.delivered += 1;
        let conn = &mut self.conns[p.conn as usize];
        // The descriptor holds the ECN codepoint as the fabric left it.
        let incoming_ecn = if p.dir == TO_SERVER {
            d.ecn == Ecn::Ce
        } else {
            p.has(flags::ECE)
        };
        let mut seg = Segment {
            seq: p.seq,
            ack: p.ack,
            len: p.payload,
            flags: p.flags,
            ecn: incoming_ecn,
            rwnd: p.rwnd,
            ts: p.ts,
            ts_echo: p.ts_echo,
            dsn: p.dsn,
            data_ack: p.data_ack,
            scatter: false,
            ..Segment::default()
        };
        if p.has(flags::SACK | flags::CODED) {
            let ext = self.pkts.ext(d.pkt);
            seg.sack = ext.sack;
            seg.sack_n = ext.sack_n;
            seg.coded_len = ext.coded_len;
        }
        let ep = if p.dir == TO_SERVER { 1 } else { 0 };
        conn.ep.on_segment(self.now, ep, p.sub as usize, &seg);
        self.flush(p.conn);
    }

    fn timer(&mut self, conn_id: u32, endpoint: u32) {
        let now = self.now;
        let conn = &mut self.conns[conn_id as usize];
        if conn.timer_at[endpoint as usize] == now {
            conn.timer_at[endpoint as usize] = 0;
        }
        conn.ep.on_timer(now, endpoint as usize);
        self.flush(conn_id);
    }

    /// Sends whatever both endpoints of a connection have to send, and keeps one timer
    /// event pending per endpoint at or before its deadline.
    fn flush(&mut self, conn_id: u32) {
        let (src, dst) = {
            let c = &self.conns[conn_id as usize];
            (c.src, c.dst)
        };
        self.pump(conn_id, 0, src);
        self.pump(conn_id, 1, dst);
        let conn = &mut self.conns[conn_id as usize];
        let deadlines = [conn.ep.timer_deadline(0), conn.ep.timer_deadline(1)];
        for (ep, d) in deadlines.into_iter().enumerate() {
            if let Some(d) = d {
                let at = conn.timer_at[ep];
                if at == 0 || at > d {
                    conn.timer_at[ep] = d;
                    self.events
                        .schedule(d, EventKind::Timer, conn_id, ep as u32);
                }
            }
        }
        loop {
            let conn = &mut self.conns[conn_id as usize];
            match conn.pending.front() {
                Some(&(f, end)) if conn.ep.data_acked() >= end => {
                    conn.pending.pop_front();
                    self.copy_done(f);
                }
                _ => break,
            }
        }
    }

    /// Flow `f` starts: its connections open, or its bytes go to its persistent ones.
    fn start_flow(&mut self, f: u32) {
        let flow = &mut self.flows[f as usize];
        let persistent = flow.spec.conn.is_some();
        let size = flow.spec.size;
        for k in 0..flow.copies as usize {
            let id = self.flows[f as usize].conns[k];
            let conn = &mut self.conns[id as usize];
            match (persistent, size) {
                (false, Some(size)) => {
                    conn.ep.open();
                    conn.pending.push_back((f, size));
                }
                (false, None) => conn.ep.open(),
                (true, size) => {
                    let size = size.expect("messages have a size");
                    self.flows[f as usize].base[k] = Tally::of(&conn.ep);
                    conn.offered += size;
                    conn.ep.offer(size);
                    conn.pending.push_back((f, conn.offered));
                }
            }
            self.flush(id);
        }
    }

    /// A copy of flow `f` has been acknowledged in full: the first completes the flow.
    fn copy_done(&mut self, f: u32) {
        let flow = &mut self.flows[f as usize];
        if flow.finish.is_some() {
            return;
        }
        flow.finish = Some(self.now);
        if flow.spec.conn.is_some() {
            let share = self.persistent_share(f);
            self.flows[f as usize].share = Some(share);
        }
        self.unfinished -= 1;
        let next = self.successor[f as usize];
        if next != NO_FLOW {
            self.start_later(next);
        }
        let job = self.flows[f as usize].spec.job;
        if job >= 0 && (job as usize) < self.job_left.len() {
            self.job_left[job as usize] -= 1;
            if self.job_left[job as usize] == 0 {
                for w in std::mem::take(&mut self.job_waiters[job as usize]) {
                    self.start_later(w);
                }
            }
        }
    }

    /// A waiting flow's turn has come: it starts after its think time.
    fn start_later(&mut self, f: u32) {
        let at = self.now + self.think[f as usize];
        self.flows[f as usize].spec.start = at;
        self.events.schedule(at, EventKind::FlowStart, f, 0);
    }

    /// What flow `f`'s copies' persistent connections counted since it started.
    fn persistent_share(&self, f: u32) -> Tally {
        let flow = &self.flows[f as usize];
        flow.copies()
            .iter()
            .enumerate()
            .map(|(k, &c)| Tally::of(&self.conns[c as usize].ep).combine(&flow.base[k], true))
            .fold(Tally::default(), |acc, t| acc.combine(&t, false))
    }

    /// Hands an endpoint's segments to its host's NIC while the NIC queue has room. A
    /// full NIC makes the endpoint wait (as Linux's TCP small queues do) instead of
    /// dropping the host's own packets.
    fn pump(&mut self, conn_id: u32, ep: usize, host: u32) {
        let now = self.now;
        let nic = self.net.host_nic[host as usize];
        if ep == 0 && now >= self.conns[conn_id as usize].stop_at {
            return;
        }
        loop {
            let c = &mut self.conns[conn_id as usize];
            // Relaying hosts (BCube) offer their own packets to their interfaces as they
            // do relayed ones: a full queue drops them.
            if !self.net.ports[nic as usize].queue.has_room(c.max_wire) && !self.relaying {
                if !c.blocked[ep] {
                    c.blocked[ep] = true;
                    self.blocked[nic as usize].push_back(conn_id << 1 | ep as u32);
                }
                return;
            }
            match c.ep.poll_transmit(now, ep) {
                Some((sub, seg)) => {
                    let dir = if ep == 0 { TO_SERVER } else { TO_CLIENT };
                    self.send(conn_id, dir, sub, &seg)
                }
                None => return,
            }
        }
    }

    fn send(&mut self, conn_id: u32, dir: u8, sub: usize, seg: &Segment) {
        let c = &self.conns[conn_id as usize];
        let (src, dst) = if dir == TO_SERVER {
            (c.src, c.dst)
        } else {
            (c.dst, c.src)
        };
        let pkt = Packet {
            seq: seg.seq,
            ack: seg.ack,
            ts: seg.ts,
            ts_echo: seg.ts_echo,
            dsn: seg.dsn,
            data_ack: seg.data_ack,
            conn: conn_id,
            rwnd: seg.rwnd,
            payload: seg.len,
            flags: seg.flags,
            dir,
            sub: sub as u8,
        };
        let id = self.pkts.alloc(pkt);
        let d = Desc {
            pkt: id,
            dst,
            // A scattered packet takes a random source port, hence a random ECMP path.
            hash: if seg.scatter {
                self.scatter_rng.next_u64() as u32
            } else {
                c.hash[sub][dir as usize]
            },
            wire: (seg.len + c.header) as u16,
            ecn: if seg.ecn && seg.len > 0 {
                Ecn::Ect
            } else {
                Ecn::NotEct
            },
            class: c.priority | c.pinned,
        };
        if seg.has(flags::SACK | flags::CODED) {
            self.pkts.set_ext(
                id,
                PacketExt {
                    sack: seg.sack,
                    sack_n: seg.sack_n,
                    coded_len: seg.coded_len,
                },
            );
        }
        self.peak_packets = self.peak_packets.max(self.pkts.live());
        let nic = if d.class & PINNED != 0 {
            self.net
                .pinned_first(d.hash)
                .unwrap_or(self.net.host_nic[src as usize])
        } else {
            self.net.host_nic[src as usize]
        };
        self.enqueue(nic, d);
    }

    /// Packets still queued or on a link, counted from the queues and pending events
    /// (independently of the arena's own count).
    fn packets_in_flight(&self) -> u64 {
        let queued = self
            .net
            .ports
            .iter()
            .map(|p| p.queue.queued_ids().count() as u64)
            .sum::<u64>();
        let on_links = self
            .events
            .iter()
            .filter(|e| e.kind() == EventKind::Arrive)
            .count() as u64;
        queued + on_links
    }

    /// Flow `i`'s record at the end of the run (`end`). A flow of its own reports its
    /// connections' counters, summed over its copies; a message on persistent
    /// connections reports what they counted while it was outstanding.
    fn flow_record(&self, i: usize, end: SimTime) -> FlowRecord {
        let f = &self.flows[i];
        let spec = &f.spec;
        let first = &self.conns[f.conns[0] as usize];
        let t = match (spec.conn, f.share) {
            (None, _) => f
                .copies()
                .iter()
                .map(|&c| Tally::of(&self.conns[c as usize].ep))
                .fold(Tally::default(), |acc, t| acc.combine(&t, false)),
            (Some(_), Some(share)) => share,
            (Some(_), None) if spec.start <= end => self.persistent_share(i as u32),
            (Some(_), None) => Tally::default(),
        };
        let mut st = t.stats;
        if spec.conn.is_some() {
            // Bytes of this message acknowledged: its copies' best progress.
            st.bytes_acked = match (f.finish, spec.size) {
                (Some(_), Some(size)) => size,
                (_, size) => {
                    let size = size.unwrap_or(0);
                    f.copies()
                        .iter()
                        .map(|&c| {
                            let conn = &self.conns[c as usize];
                            let done_to = conn.ep.data_acked();
                            let ends = conn.pending.iter().find(|&&(g, _)| g == i as u32);
                            ends.map_or(0, |&(_, e)| (done_to + size).saturating_sub(e))
                        })
                        .max()
                        .unwrap_or(0)
                        .min(size)
                }
            };
        } else if f.copies > 1 {
            st.bytes_acked = f
                .copies()
                .iter()
                .map(|&c| self.conns[c as usize].ep.data_acked())
                .max()
                .unwrap_or(0);
        }
        let warmup = self.plan.warmup;
        let goodput_bps = match (f.finish, spec.size) {
            (Some(t), Some(size)) if t > spec.start => {
                size as f64 * 8.0 / ((t - spec.start) as f64 / 1e12)
            }
            _ => {
                let from = spec.start.max(warmup);
                let acked = st.bytes_acked
                    - if spec.start < warmup && spec.conn.is_none() {
                        first.acked_at_warmup.min(st.bytes_acked)
                    } else {
                        0
                    };
                if end > from {
                    acked as f64 * 8.0 / ((end - from) as f64 / 1e12)
                } else {
                    0.0
                }
            }
        };
        FlowRecord {
            id: i as u32,
            src: spec.src,
            dst: spec.dst,
            transport: spec.transport,
            class: spec.class,
            job: spec.job,
            size: spec.size,
            start: spec.start,
            finish: f.finish,
            bytes_sent: st.bytes_sent,
            bytes_retx: st.bytes_retx,
            bytes_acked: st.bytes_acked,
            goodput_bps,
            timeouts: st.timeouts,
            fast_retx: st.fast_retx,
            subflows: first.ep.subflows() as u32,
            ssr_suppressions: first.ep.ssr_episodes().0,
            ssr_releases: first.ep.ssr_episodes().1,
            recovery_bytes: t.mptcp.recovery_bytes,
            window_violations: t.mptcp.window_violations,
            copies: f.copies as u32,
            recovery: t.recovery,
        }
    }

    /// Collects the results; `wall_secs` is the wall-clock time the caller measured.
    pub fn results(&mut self, wall_secs: f64) -> Results {
        let end = self.now;
        // Hops counted for packets a committed queue had admitted but not started.
        let mut late_hops = 0;
        for p in &mut self.net.ports {
            // A packet starting at the end has started: the run handles events at its
            // end time.
            p.queue.advance(end + 1, p.rate);
            p.queue.finish(end);
            late_hops += p.queue.not_started(p.busy_until).0;
        }
        let warmup = self.plan.warmup;
        let flows: Vec<FlowRecord> = (0..self.flows.len())
            .map(|i| self.flow_record(i, end))
            .collect();
        // Subflows of the multipath flows that have connections of their own.
        let subflows = self
            .flows
            .iter()
            .enumerate()
            .filter(|(_, f)| f.spec.conn.is_none())
            .map(|(i, f)| (i, &self.conns[f.conns[0] as usize]))
            .filter(|(_, c)| matches!(c.ep, Endpoints::Mptcp { .. }))
            .flat_map(|(i, c)| {
                c.ep.subflow_stats()
                    .into_iter()
                    .enumerate()
                    .map(move |(k, st)| SubflowRecord {
                        flow: i as u32,
                        subflow: k as u32,
                        bytes_sent: st.bytes_sent,
                        bytes_retx: st.bytes_retx,
                        bytes_acked: st.bytes_acked,
                        timeouts: st.timeouts,
                        fast_retx: st.fast_retx,
                    })
            })
            .collect();
        let net = &self.net;
        let queues = net
            .ports
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let st = &p.queue.stats;
                let secs = end.max(1) as f64;
                let rw = (p.rwndq != NO_RWNDQ).then(|| &net.rwndq[p.rwndq as usize]);
                // A committed queue counted its packets' transmissions as they joined;
                // those still waiting at the end have not started.
                let (late_packets, late_bytes, late_time) = p.queue.not_started(p.busy_until);
                QueueRecord {
                    tx_packets: p.tx_packets - late_packets,
                    tx_bytes: p.tx_bytes - late_bytes,
                    utilization: (p.busy_time - late_time).min(end) as f64 / secs,
                    enqueued: st.enqueued,
                    drops: st.drops,
                    early_drops: st.early_drops,
                    fault_drops: p.fault_drops,
                    fault_bursts: net.fault_of(i as u32).map_or(0, |f| f.bursts),
                    loss_rate: net.fault_of(i as u32).map_or(0.0, |f| f.random_loss_rate()),
                    blackhole_fraction: net
                        .fault_of(i as u32)
                        .map_or(0.0, |f| f.blackhole_fraction()),
                    ecn_marks: st.marks,
                    max_packets: st.max_packets,
                    max_bytes: st.max_bytes,
                    mean_packets: st.area_packets as f64 / secs,
                    mean_bytes: st.area_bytes as f64 / secs,
                    p50_packets: histogram_quantile(&st.histogram, 0.5),
                    p95_packets: histogram_quantile(&st.histogram, 0.95),
                    p99_packets: histogram_quantile(&st.histogram, 0.99),
                    rwndq: rw.is_some(),
                    rwndq_flows: rw.map_or(0, |r| r.conns),
                    rwndq_peak_flows: rw.map_or(0, |r| r.peak_conns),
                    rwndq_window: rw.map_or(0, |r| r.wnd),
                    rwndq_rewrites: rw.map_or(0, |r| r.rewrites),
                    ..QueueRecord::of_port(net, i as u32)
                }
            })
            .collect();
        let counters = RunCounters {
            events: self.events.processed(),
            packet_hops: self.hops - late_hops,
            sim_time: end,
            wall_secs,
            packets_created: self.pkts.created(),
            packets_delivered: self.delivered,
            packets_dropped: self.dropped,
            packets_in_flight: self.packets_in_flight(),
            flows: self.flows.len() as u64,
            flows_completed: flows.iter().filter(|f| f.finish.is_some()).count() as u64,
            seed: self.plan.seed,
            peak_packets: self.peak_packets,
            partial: self.partial,
            fault_drops: self.net.ports.iter().map(|p| p.fault_drops).sum(),
            route_drops: self.route_drops,
        };
        Results {
            name: self.plan.name.clone(),
            flows,
            subflows,
            queues,
            flow_samples: std::mem::take(&mut self.flow_samples),
            queue_samples: std::mem::take(&mut self.queue_samples),
            counters,
            transports: self
                .plan
                .transports
                .iter()
                .map(|t| t.name.clone())
                .collect(),
            classes: self.plan.classes.clone(),
            host_rate_bps: self.plan.tier_params[0].rate.bits_per_sec(),
            n_hosts: self.plan.topology.n_hosts,
            warmup,
            flow_level: None,
        }
    }
}

/// Parses, runs and reports a scenario.
pub fn run_plan(plan: Plan) -> Results {
    run_plan_with_progress(plan, u64::MAX, |_, _| true)
}

/// Runs a plan, reporting progress every `every` events (see `Sim::run_with_progress`).
pub fn run_plan_with_progress(
    plan: Plan,
    every: u64,
    progress: impl FnMut(SimTime, u64) -> bool,
) -> Results {
    let t0 = std::time::Instant::now();
    let mut sim = Sim::new(plan);
    sim.run_with_progress(every, progress);
    let wall = t0.elapsed().as_secs_f64();
    sim.results(wall)
}
