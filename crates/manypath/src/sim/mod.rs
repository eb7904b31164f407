//! The simulation: the event loop that moves packets between ports, switches and the
//! transport state machines of the hosts.
//!
//! Per packet and link, a packet costs one `Arrive` event. At a switch port with a plain
//! FIFO queue, a packet's departure is fixed as it joins (a committed queue, see
//! `net::queue`), so a hop is one event however long the queue. Other ports add a
//! `TxDone` event when packets are waiting behind the one on the wire.
//!
//! This file holds the simulator's state and its event loop; the handlers live by
//! concern: `setup` (the network, connections, flows and first events), `forward`
//! (ports, links and switches: arrivals, relaying, queues, transmission, link faults and
//! changes, RWNDQ), `endpoints` (delivery to the transports, their timers and sends, the
//! flows' starts and finishes), `triggers` (traffic as a dependency graph: the flows that
//! flows' finishes and deliveries start) and `results` (time series and the result
//! tables).

mod capture;
mod collectives;
mod endpoints;
pub mod estimate;
mod events;
mod fabric;
mod forward;
mod homa;
mod host_rx;
mod ndp;
pub mod parallel;
mod partition;
mod pfabric;
mod pools;
mod results;
mod setup;
mod triggers;

use crate::capture::Observed;
use crate::connection::Endpoints;
use crate::metrics::Results;
use crate::net::fabric::Fabric;
use crate::net::faults::LinkEvent;
use crate::net::network::Network;
use crate::net::packet::PacketArena;
use crate::scenario::Plan;
use crate::time::SimTime;
use crate::transport::ndp::PullPacer;
use crate::transport::pair::ServerCounters;
use crate::workload::FlowSpec;
use events::EventQueue;
use events::{Event, EventKind};
use results::PersistentTally;
use std::collections::VecDeque;

/// One connection: the client (data sender) and server (receiver) endpoints, carrying
/// one flow of its own or, persistent, the messages of many.
struct Conn {
    src: u32,
    dst: u32,
    /// ECMP hash of each subflow's 5-tuple, per direction; for a pinned connection, the
    /// id of each subflow's route per direction.
    hash: Vec<[u32; 2]>,
    /// How its packets go on the wire.
    wire: Wire,
    /// The client sends nothing from this time on (`traffic.stop_us`; `SimTime::MAX`: never).
    stop_at: SimTime,
    /// Swift's host delay at its receiving host (`host_rx`).
    host_rx: host_rx::HostDelay,
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
    /// The stream offset the next flow whose receive-done is watched ends at
    /// (`Triggers::recv_watch`'s front; `NO_WATCH`: none), beside the rest of the
    /// connection so that a packet that completes none reads nothing else.
    watch_end: u64,
}

/// No receive-done watched on a connection.
const NO_WATCH: u64 = u64::MAX;

/// How a connection's packets go on the wire: fixed at setup from its transport, read by
/// every send (`send_classed`) and delivery (`process`).
#[derive(Clone, Copy, Debug)]
struct Wire {
    kind: WireKind,
    /// The class byte of its data packets (their priority; NDP's bit).
    priority: u8,
    /// `PINNED` if the subflows follow pinned routes, else 0 (ORed into the class).
    pinned: u8,
    header: u32,
    /// Wire size of a full segment, for the NIC's room check.
    max_wire: u32,
}

/// The transports whose packets differ on the wire or at delivery. Every per-packet
/// decision that depends on the transport matches on this, naming each kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WireKind {
    /// TCP, its multipath variants and Homa's messages: packets as the transport makes
    /// them.
    Plain,
    /// pFabric: the client's data packets carry its unacknowledged bytes as their
    /// priority (in the data-sequence slot, which single-path TCP leaves at 0).
    Pfabric,
    /// A RoCE queue pair: control packets (ACK, NAK, CNP) go in class 0.
    Roce,
    /// A RoCE queue pair with HPCC: data packets carry INT records, ACKs echo them.
    Hpcc,
    /// NDP: delivered by `deliver_ndp`, its receiver's PULLs paced by its host's pacer.
    Ndp,
}

impl WireKind {
    /// A send adds to the packet (`special_send`).
    #[inline(always)]
    fn adds_at_send(self) -> bool {
        match self {
            WireKind::Plain => false,
            WireKind::Pfabric | WireKind::Roce | WireKind::Hpcc | WireKind::Ndp => true,
        }
    }

    /// Its packets carry INT records.
    #[inline(always)]
    fn carries_int(self) -> bool {
        match self {
            WireKind::Hpcc => true,
            WireKind::Plain | WireKind::Pfabric | WireKind::Roce | WireKind::Ndp => false,
        }
    }

    fn is_roce(self) -> bool {
        match self {
            WireKind::Roce | WireKind::Hpcc => true,
            WireKind::Plain | WireKind::Pfabric | WireKind::Ndp => false,
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
    /// A message on persistent connections: its counters there (`None` for a flow with
    /// connections of its own, and until the message starts). Boxed: most flows have
    /// none, and a run may hold millions of flows (a collective's steps).
    persistent: Option<Box<PersistentTally>>,
    /// The flow's start has come (its `FlowStart` ran).
    started: bool,
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
    /// The packets' fates over the run, for the counters table.
    counts: results::Counts,
    unfinished: u64,
    long_lived: u64,
    /// What the engine keeps per host for its endpoints (`endpoints`).
    hosts: endpoints::Hosts,
    /// The run was stopped before its end (by the progress callback).
    partial: bool,
    /// Some switch port runs RWNDQ.
    rwndq_on: bool,
    /// The time series (`output.flow_sample_us`, `queue_sample_us`).
    sampling: results::Sampling,
    /// Closed loops and jobs: the flows a flow's or a job's finish starts (`endpoints`).
    closed: endpoints::ClosedLoops,
    /// Scheduled link changes, referred to by their `LinkChange` events.
    link_events: Vec<LinkEvent>,
    /// Shared buffers and PFC (`net::fabric`), and whether there are any: then every
    /// packet goes through `enqueue_fabric` and `tx_done_fabric`.
    fabric: Fabric,
    fabric_on: bool,
    /// The lossless fabric's drops and deadlocks (`sim::fabric`).
    lossless: fabric::LosslessCounts,
    /// The `TxDone`s ports defer (`Port::defers_tx_done`, `sim::forward`).
    deferred: forward::Deferred,
    /// NDP's pull pacer of each host (empty when no flow runs NDP).
    pacers: Vec<PullPacer>,
    /// Every host's Homa agents, in a run with a Homa transport.
    homa: Option<Box<homa::HomaHosts>>,
    /// Pools of persistent connections that flows pick from when idle (empty without
    /// `requests.pick = "idle"` or `connection_pool`).
    pools: pools::ConnPools,
    /// Packet capture or event trace is on: the packet path calls `sim/capture.rs`'s
    /// hooks (one test of this flag per transmission otherwise).
    observe: bool,
    /// What the capture and the trace record (`sim::capture`).
    observers: capture::Observers,
    /// Per connection, its server endpoint's counters (`Endpoints::server_counters`)
    /// each time they changed, with the time: a message on a persistent connection
    /// reports the server's part of its counters from the changes while it was
    /// outstanding, which the client's host cannot read as they happen in a run over
    /// several threads. Empty without persistent connections.
    server_log: Vec<Vec<(SimTime, ServerCounters)>>,
    /// The synchronisation windows (see `Windows`).
    windows: Windows,
    /// In a run over several threads, this replica's partition (`None`: one thread
    /// runs everything).
    part: Option<Box<parallel::Part>>,
    /// A run over several threads merged into this replica: its counts.
    merged: Option<parallel::Merged>,
}

/// The synchronisation step and the next window boundary.
struct Windows {
    /// The smallest link delay of the fabric (at least 1 ps). Time is cut into windows
    /// of this length, whatever the number of threads: one node's events reach
    /// another's at least one step later, so a window's events of different nodes never
    /// depend on each other (see `window_end`).
    step: SimTime,
    /// The first window boundary not yet passed, where `peak_packets` is sampled.
    next_boundary: SimTime,
}

const NO_FLOW: u32 = u32::MAX;
const NO_CONN: u32 = u32::MAX;

/// Start time of a closed-loop flow whose predecessor has not finished.
pub const NOT_STARTED: SimTime = SimTime::MAX;

/// `Sample` events: operand 0 samples the flows, 1 the queues.
const SAMPLE_FLOWS: u32 = 0;
const SAMPLE_QUEUES: u32 = 1;

impl Sim {
    fn all_done(&self) -> bool {
        self.plan.stop_when_done && self.unfinished == 0 && self.long_lived == 0
    }

    /// The last instant of the synchronisation window holding time `t`. A run whose
    /// flows are all done ends there: a thread learns that every other thread's flows
    /// are done only at a window's end, so every run ends at one, whatever the number
    /// of threads.
    fn window_end(&self, t: SimTime) -> SimTime {
        (t / self.windows.step + 1) * self.windows.step - 1
    }

    /// Passes the window boundaries up to time `t`: the packets alive there count
    /// towards `peak_packets`.
    #[inline(never)]
    fn pass_boundary(&mut self, t: SimTime) {
        self.counts.peak_packets = self.counts.peak_packets.max(self.pkts.live());
        self.windows.next_boundary = self.window_end(t) + 1;
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
        let mut end = self.plan.duration;
        if self.all_done() {
            return;
        }
        let mut next_report = every;
        // The events scheduled at setup for time 0 joined `due` as they came.
        self.events.sort_pending_due();
        while let Some(t) = self.events.peek_time() {
            if t > end {
                break;
            }
            if t >= self.windows.next_boundary {
                self.pass_boundary(t);
            }
            if self.events.processed() >= next_report {
                next_report = next_report.saturating_add(every);
                if !progress(self.now, self.events.processed()) {
                    self.settle_all_tx_done(self.now);
                    self.partial = true;
                    return;
                }
            }
            let ev = self.events.pop().expect("peeked");
            if !self.dispatch(ev) {
                self.partial = true;
                return;
            }
            if self.unfinished == 0 && self.all_done() {
                end = end.min(self.window_end(self.now));
            }
        }
        self.settle_all_tx_done(end);
        self.now = self.now.max(end);
        self.pass_boundary(self.now);
    }
}

impl Sim {
    /// Runs event `ev`: false when the run must stop there (a PFC deadlock; in a run
    /// over several threads, every deadlock check, which the threads decide together).
    #[inline(always)]
    fn dispatch(&mut self, ev: Event) -> bool {
        self.now = ev.time;
        if self.deferred.defers_tx_done {
            if let Some(host) = self.host_acting(&ev) {
                // What the host does may read or fill its NIC's queue: the NIC's
                // `TxDone`s due through now run first, as their events ran before it.
                self.settle_host_nic(host, self.now + 1);
            }
        }
        match ev.kind() {
            EventKind::Arrive => self.arrive(ev.a, ev.via(), ev.d),
            EventKind::TxDone => self.tx_done(ev.a),
            EventKind::FlowStart => self.start_flow(ev.a),
            EventKind::ConnOpen => {
                self.conns[ev.a as usize].ep.open();
                self.flush_ep(ev.a, 0);
            }
            EventKind::Timer => self.timer(ev.a, ev.b()),
            EventKind::Warmup => {
                for c in &mut self.conns {
                    c.acked_at_warmup = c.ep.data_acked();
                }
                self.count_replicated();
            }
            EventKind::Sample => {
                self.sample(ev.a);
                self.count_replicated();
            }
            EventKind::RwndqTick => self.rwndq_tick(ev.a),
            EventKind::LinkChange => {
                self.link_change(ev.a);
                self.count_replicated();
            }
            EventKind::Pause => self.pause(ev.a, ev.b()),
            EventKind::NdpPull => self.pull_tick(ev.a, None),
            EventKind::HostRx => self.host_rx_done(ev.d),
            EventKind::PfcCheck => {
                self.count_replicated();
                return self.pfc_check();
            }
        }
        true
    }

    /// The host whose NIC an event of this kind may read or fill besides by an arrival,
    /// if any: its NIC's deferred `TxDone`s due through now run before it (`dispatch`).
    /// One decision per kind, so a new kind of event does not compile until someone
    /// decides what it reads.
    #[inline(always)]
    fn host_acting(&self, ev: &Event) -> Option<u32> {
        match ev.kind() {
            // An arrival settles the port it joins or the host it reaches itself, those
            // due before its instant (`arrive`: it ran before a `TxDone` at the same time).
            EventKind::Arrive => None,
            // A port's own `TxDone`.
            EventKind::TxDone => None,
            EventKind::FlowStart => Some(self.flows[ev.a as usize].spec.src),
            EventKind::Timer => {
                let c = &self.conns[ev.a as usize];
                Some(if ev.b() == 0 { c.src } else { c.dst })
            }
            EventKind::ConnOpen => Some(self.conns[ev.a as usize].src),
            EventKind::NdpPull => Some(ev.a),
            EventKind::HostRx => Some(ev.d.dst),
            // Reads only the endpoints' counters.
            EventKind::Warmup => None,
            // Settles each port it reads (`sample`).
            EventKind::Sample => None,
            // RWNDQ's ports and the ports of changing links keep their `TxDone`s events
            // (`setup::fast_paths`).
            EventKind::RwndqTick | EventKind::LinkChange => None,
            // A fabric with shared buffers or PFC defers nothing.
            EventKind::Pause | EventKind::PfcCheck => None,
        }
    }

    /// Whether this replica runs node `node`'s events (always, on one thread).
    #[inline]
    fn owns_node(&self, node: u32) -> bool {
        match self.part.as_deref() {
            None => true,
            Some(p) => p.owner[node as usize] == p.me,
        }
    }

    /// The host where flow `f` completes: a Homa message's receiver (it has the whole
    /// message), any other flow's source (its sender has every byte acknowledged).
    #[inline]
    fn finish_host(&self, f: u32) -> u32 {
        let flow = &self.flows[f as usize];
        let homa = self.homa.is_some()
            && matches!(self.conns[flow.conns[0] as usize].ep, Endpoints::Homa(_));
        if homa {
            flow.spec.dst
        } else {
            flow.spec.src
        }
    }

    /// Whether this replica runs flow `f` (its source host's).
    #[inline]
    fn owns_flow(&self, f: u32) -> bool {
        self.owns_node(self.flows[f as usize].spec.src)
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
    run_plan_observing(plan, every, progress).0
}

/// `run_plan_with_progress`, also returning what the capture and trace recorded.
pub fn run_plan_observing(
    mut plan: Plan,
    every: u64,
    progress: impl FnMut(SimTime, u64) -> bool,
) -> (Results, Option<Observed>) {
    let threads = crate::scenario::parallel::pin_threads(&mut plan);
    if threads > 1 {
        let parts = crate::scenario::parallel::replicas(&plan, threads) as usize;
        let threads = threads as usize;
        let owner = plan.parallel.partition.clone();
        return parallel::run_parallel_observing(plan, threads, parts, owner, every, progress);
    }
    let t0 = std::time::Instant::now();
    let mut sim = Sim::new(plan);
    sim.run_with_progress(every, progress);
    let wall = t0.elapsed().as_secs_f64();
    let results = sim.results(wall);
    let observed = sim.observed();
    (results, observed)
}
