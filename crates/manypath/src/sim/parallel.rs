//! One packet-level run over several threads, with the same results as on one.
//!
//! The fabric's nodes are split into partitions (`sim::partition`, or the scenario's
//! own split). Each partition is run by a replica of the whole simulator that handles
//! only its own nodes' events: its switches' ports, its hosts' endpoints (a
//! connection's client with its source host, its server with its destination host),
//! its flows (with their source host). A thread runs one or more partitions.
//!
//! Synchronisation is conservative, in windows one synchronisation step long (the
//! fabric's smallest link delay; `Sim::step`), aligned on multiples of it: a node's
//! events reach another node at least one link delay later, so what a partition sends
//! during a window is due in a later window. Each window, every partition runs its
//! events before the window's end; then the partitions swap what they sent each other
//! (packets crossing a link between them, flows started across them) and the trigger
//! activations (`sim::triggers`: closed-loop jobs' finished flows among them), and all agree on the next window (the earliest pending
//! event) and on whether every flow is done.
//!
//! Why the results do not depend on the threads or the split: events at equal times
//! run in content order (`engine::queue`), so a node's events run in the same order
//! whichever replica scheduled them and when; no handler touches another node's state
//! (a host's event acts on its own endpoint only; random streams are per port, switch
//! or host); and what has no link delay to wait for is given one on every run, one
//! thread included: a finish releasing a flow on another host, or a job, is signalled a
//! step later (`Sim::start_later`), as is a Homa message's completion to its sender
//! (`Sim::homa_tell_sender`); a run whose flows are all done ends at its window's
//! end (`Sim::window_end`); the peak of live packets is sampled at window boundaries.
//! What a flow's record needs from both of its hosts is gathered at the end (`merge`):
//! a Homa message's finish from its receiver's partition (a flow counts as unfinished
//! where it completes: `Sim::finish_host`), the server counters of a message on a
//! persistent connection from the log its server's partition kept (`Sim::server_log`).
//! Events of the whole fabric (the warm-up, samples, link changes) run in every
//! replica, each for its own nodes, and count once.
//!
//! A lossless fabric (`sim::fabric`) splits the same way: a switch's shared buffer and
//! PFC ingress accounting are its own state, and PAUSE and RESUME frames travel their
//! link as packets do, so a frame to a node of another partition goes there as a
//! message, due a link delay later. The deadlock check (`PfcCheck`, every 200 µs)
//! looks at the whole fabric at one instant: every replica reaches it at the same point
//! of its events (a replicated event, in content order), stops there and publishes its
//! own ports' paused classes and the links their waiting packets came in by
//! (`fabric::PausedView`); every thread then looks for a cycle in all of them (a
//! barrier inside the window, only at checks). A cycle stops every partition at the
//! check's time with the same message; otherwise the window goes on. One thread looks
//! at the same state at the same point of the instant, so the check finds the same
//! deadlock, at the same time, for any number of threads.

use super::capture::EventKeys;
use super::events::{Event, EventKind};
use super::fabric::PausedView;
use super::{partition, Sim};
use crate::capture::Observed;
use crate::metrics::{ParallelStats, Results};
use crate::net::int::IntStack;
use crate::net::packet::{flags, Desc, Packet, PacketExt};
use crate::scenario::Plan;
use crate::time::SimTime;
use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

/// A replica's partition: what it runs and what it sends the others.
pub(super) struct Part {
    /// Per node, the partition that runs it.
    pub owner: Vec<u32>,
    pub me: u32,
    /// Per partition, what this one sent it during the current window.
    out: Vec<Outbox>,
    /// Trigger activations made during the current window (a closed-loop job's flow
    /// finishing among them): (time, flow, trigger). Every partition counts every one at
    /// the window's end.
    pub activations: Vec<(SimTime, u32, u32)>,
    /// Events that every replica runs (the warm-up, samples, link changes), which the
    /// run's event count counts once.
    replicated: u64,
    /// Messages sent to other partitions.
    sent: u64,
    /// At a PFC deadlock check: this partition's view of its paused ports, for the
    /// threads to gather (`run_thread`).
    pub view: Option<PausedView>,
    /// With capture or trace on, the one-thread order of the events run, which keys
    /// their records (`sim::capture`).
    pub keys: EventKeys,
}

/// What one partition sends another in a window. Packets' SACK blocks and INT records
/// ride alongside, referred to by index.
#[derive(Default)]
struct Outbox {
    msgs: Vec<Remote>,
    exts: Vec<PacketExt>,
    ints: Vec<IntStack>,
}

const NONE: u32 = u32::MAX;

#[derive(Clone, Copy)]
enum Remote {
    /// Packet `pkt` arrives at node `node` by its port `via` at `at`.
    Arrive {
        at: SimTime,
        node: u32,
        via: u32,
        d: Desc,
        pkt: Packet,
        ext: u32,
        int: u32,
    },
    /// Flow `flow` starts at `at`.
    FlowStart { at: SimTime, flow: u32 },
    /// A PFC frame reaches port `port` at `at` (`b` as `EventKind::Pause`'s).
    Pause { at: SimTime, port: u32, b: u32 },
    /// Homa message `conn`'s sender learns at `at` that its receiver has all of it.
    HomaDone { at: SimTime, conn: u32 },
}

impl Sim {
    /// Counts an event every replica runs (nothing on one thread).
    #[inline]
    pub(super) fn count_replicated(&mut self) {
        if let Some(p) = self.part.as_deref_mut() {
            p.replicated += 1;
        }
    }

    /// A packet leaves for a node of another partition: it goes there as a message,
    /// and leaves this replica's arena.
    #[inline(never)]
    pub(super) fn send_remote(&mut self, at: SimTime, node: u32, via: u32, d: Desc) {
        let part = self
            .part
            .as_deref_mut()
            .expect("remote ports only in parts");
        let out = &mut part.out[part.owner[node as usize] as usize];
        let pkt = *self.pkts.get(d.pkt);
        let ext = if pkt.has(flags::SACK | flags::CODED) {
            out.exts.push(self.pkts.ext(d.pkt));
            out.exts.len() as u32 - 1
        } else {
            NONE
        };
        // Every packet of an HPCC connection has its INT slot: the switches' stamps on
        // data, the echo on ACKs and NAKs, none on CNPs (`special_send`); the
        // receiving endpoint reads it whatever the packet.
        let int_conn = self
            .conns
            .get(pkt.conn as usize)
            .is_some_and(|c| c.wire.kind.carries_int());
        let int = if d.has_int() || int_conn {
            out.ints.push(*self.pkts.int(d.pkt));
            out.ints.len() as u32 - 1
        } else {
            NONE
        };
        part.sent += 1;
        let out = &mut part.out[part.owner[node as usize] as usize];
        out.msgs.push(Remote::Arrive {
            at,
            node,
            via,
            d,
            pkt,
            ext,
            int,
        });
        self.pkts.free(d.pkt);
    }

    /// A flow of another partition is released to start at `at` (at least a step
    /// ahead: `start_later`).
    pub(super) fn send_flow_start(&mut self, at: SimTime, flow: u32) {
        let src = self.flows[flow as usize].spec.src;
        let part = self.part.as_deref_mut().expect("parts only");
        part.sent += 1;
        part.out[part.owner[src as usize] as usize]
            .msgs
            .push(Remote::FlowStart { at, flow });
    }

    /// A PFC frame leaves for port `port` of another partition, to act at `at` (a
    /// link delay ahead at least, as a packet).
    pub(super) fn send_remote_pause(&mut self, at: SimTime, port: u32, b: u32) {
        let node = self.net.ports[port as usize].owner;
        let part = self
            .part
            .as_deref_mut()
            .expect("remote ports only in parts");
        part.sent += 1;
        part.out[part.owner[node as usize] as usize]
            .msgs
            .push(Remote::Pause { at, port, b });
    }

    /// A Homa message's completion goes to its sender's partition, due at `at` (a
    /// step ahead: `homa_tell_sender`).
    pub(super) fn send_homa_done(&mut self, at: SimTime, conn: u32) {
        let src = self.conns[conn as usize].src;
        let part = self.part.as_deref_mut().expect("parts only");
        part.sent += 1;
        part.out[part.owner[src as usize] as usize]
            .msgs
            .push(Remote::HomaDone { at, conn });
    }

    /// Takes in what another partition sent this one.
    fn receive(&mut self, from: &mut Outbox) {
        for m in from.msgs.drain(..) {
            match m {
                Remote::Arrive {
                    at,
                    node,
                    via,
                    mut d,
                    pkt,
                    ext,
                    int,
                } => {
                    let id = self.pkts.adopt(pkt);
                    if ext != NONE {
                        self.pkts.set_ext(id, from.exts[ext as usize]);
                    }
                    if int != NONE {
                        self.pkts.clear_int(id);
                        *self.pkts.int_mut(id) = from.ints[int as usize];
                    }
                    d.pkt = id;
                    self.events.schedule_arrival(at, node, via, d);
                }
                Remote::FlowStart { at, flow } => {
                    self.flows[flow as usize].spec.start = at;
                    self.events.schedule(at, EventKind::FlowStart, flow, 0);
                }
                Remote::Pause { at, port, b } => {
                    self.events.schedule(at, EventKind::Pause, port, b);
                }
                Remote::HomaDone { at, conn } => self.homa_release(at, conn),
            }
        }
        from.exts.clear();
        from.ints.clear();
    }

    /// Makes this replica run partition `me` of `parts`: only its own nodes' events
    /// stay, its ports to other partitions send messages, and it counts only its own
    /// flows as unfinished.
    fn become_part(&mut self, owner: Vec<u32>, me: u32, parts: usize) {
        for p in &mut self.net.ports {
            let (o, peer) = (owner[p.owner as usize], owner[p.peer as usize]);
            p.remote = o == me && peer != me;
            // A deferred `TxDone` is taken where its packet arrives: in this partition.
            p.defers_tx_done &= peer == me;
        }
        let mine = |n: u32| owner[n as usize] == me;
        let pending: Vec<Event> = self.events.iter().copied().collect();
        self.events = Default::default();
        for e in pending {
            let keep = match e.kind() {
                EventKind::Arrive | EventKind::NdpPull => mine(e.a),
                EventKind::HostRx => mine(e.d.dst),
                EventKind::TxDone | EventKind::RwndqTick | EventKind::Pause => {
                    mine(self.net.ports[e.a as usize].owner)
                }
                EventKind::FlowStart => mine(self.flows[e.a as usize].spec.src),
                EventKind::ConnOpen => mine(self.conns[e.a as usize].src),
                EventKind::Timer => {
                    let c = &self.conns[e.a as usize];
                    mine(if e.b() == 0 { c.src } else { c.dst })
                }
                EventKind::Warmup
                | EventKind::Sample
                | EventKind::LinkChange
                | EventKind::PfcCheck => true,
            };
            if keep {
                self.events.reschedule(e);
            }
        }
        self.events.sort_pending_due();
        // A flow counts where it completes.
        self.unfinished = (0..self.flows.len() as u32)
            .filter(|&f| {
                let flow = &self.flows[f as usize];
                flow.spec.size.is_some() && flow.finish.is_none() && mine(self.finish_host(f))
            })
            .count() as u64;
        self.part = Some(Box::new(Part {
            owner,
            me,
            out: (0..parts).map(|_| Outbox::default()).collect(),
            activations: Vec::new(),
            replicated: 0,
            sent: 0,
            view: None,
            keys: EventKeys::default(),
        }));
    }

    /// Runs this partition's events before `until`: false if it stopped short, at a
    /// PFC deadlock check (`Sim::pfc_check`), which the threads then decide together.
    fn run_until(&mut self, until: SimTime) -> bool {
        if self.observe {
            return self.run_until_keyed(until);
        }
        // The queue must not move past `until`: other partitions' packets may still
        // arrive from then on.
        while self.events.peek_time_before(until).is_some() {
            let ev = self.events.pop().expect("peeked");
            if !self.dispatch(ev) {
                return false;
            }
        }
        true
    }

    /// The trigger activations of the window, from every partition in (time, flow,
    /// trigger) order (a job's flows' finishes among them): a trigger that fires starts
    /// its flows a step after the activation at the earliest (`start_later`), each in
    /// the partition of its source host. Every partition counts every activation, so
    /// they all keep the same triggers.
    fn count_activations(&mut self, done: &[(SimTime, u32, u32)]) {
        let step = self.windows.step;
        for &(at, _, t) in done {
            self.fire(t, at, false, step);
        }
    }
}

/// The shortest a thread waiting at the barrier spins before it sleeps (`spin_for`).
/// On an idle machine a wait is a few microseconds per barrier on the small benchmarks,
/// and waking a sleeper costs a system call and tens of microseconds before it runs
/// again; against that, a busy machine may leave the awaited thread descheduled for
/// milliseconds, during which a spinning thread takes a core from it or from the
/// machine's other work.
const SPIN_MIN: std::time::Duration = std::time::Duration::from_micros(50);

/// The longest a waiting thread spins.
const SPIN_MAX: std::time::Duration = std::time::Duration::from_millis(1);

/// How long a thread that worked `worked` since it last left the barrier spins there:
/// twice that, within [`SPIN_MIN`, `SPIN_MAX`]. The other threads' share of a window is
/// about as long as this one's (the split balances them), so on an idle machine they
/// arrive within it; a wait longer than that means one of them is not running. A fixed
/// 50 µs made 7–11% of the idle waits of fattree16-dctcp (windows of ~200 µs of work per
/// thread) sleep, and the run 13–17% slower.
fn spin_for(worked: std::time::Duration) -> std::time::Duration {
    (worked * 2).clamp(SPIN_MIN, SPIN_MAX)
}

/// Spins between two looks at the clock while spinning.
const SPINS_PER_CLOCK: u32 = 64;

/// A barrier that spins briefly, then sleeps until the last thread arrives (`spin_for`).
///
/// It is poisoned when a thread it joins panics (`guarded`): the threads waiting at it,
/// or reaching it later, unwind too instead of waiting for a thread that will never
/// come, and the first panic's payload is kept for the caller to raise (`rethrow`).
struct SpinBarrier {
    n: usize,
    count: AtomicUsize,
    generation: AtomicUsize,
    poisoned: AtomicBool,
    /// Threads asleep at the barrier, or about to be: the last thread to arrive takes
    /// `lock` and wakes them only when there are some, so waits that end while spinning
    /// cost no system call.
    sleepers: AtomicUsize,
    lock: Mutex<()>,
    wake: Condvar,
    /// The first panic of a thread (not the unwinding of those it woke).
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

/// The payload of a thread unwinding because another panicked.
struct Poisoned;

/// One wait at the barrier: how long it took and whether the thread slept.
#[derive(Clone, Copy, Debug, Default)]
struct Waited {
    time: std::time::Duration,
    slept: bool,
}

/// A thread's waits at the barrier, added up.
#[derive(Clone, Copy, Debug, Default)]
struct Waits {
    time: std::time::Duration,
    /// Waits that slept (spun for `spin_for` without the barrier passing).
    sleeps: u64,
}

impl std::ops::AddAssign<Waited> for Waits {
    fn add_assign(&mut self, w: Waited) {
        self.time += w.time;
        self.sleeps += u64::from(w.slept);
    }
}

/// One thread's side of the barrier: when it last left it, and its waits so far.
struct Waiter {
    left: std::time::Instant,
    waits: Waits,
}

impl Waiter {
    fn new() -> Waiter {
        Waiter {
            left: std::time::Instant::now(),
            waits: Waits::default(),
        }
    }

    /// Waits at `barrier`, spinning for as long as `spin_for` the work since the last
    /// wait.
    fn wait(&mut self, barrier: &SpinBarrier) {
        let arrived = std::time::Instant::now();
        let slept = barrier.wait_from(arrived, spin_for(arrived - self.left));
        self.left = std::time::Instant::now();
        self.waits += Waited {
            time: self.left - arrived,
            slept,
        };
    }
}

impl SpinBarrier {
    fn new(n: usize) -> SpinBarrier {
        SpinBarrier {
            n,
            count: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
            poisoned: AtomicBool::new(false),
            sleepers: AtomicUsize::new(0),
            lock: Mutex::new(()),
            wake: Condvar::new(),
            panic: Mutex::new(None),
        }
    }

    /// Waits until all `n` threads have arrived, spinning for `SPIN_MIN`; true if this
    /// thread slept.
    #[cfg(test)]
    fn wait(&self) -> bool {
        self.wait_from(std::time::Instant::now(), SPIN_MIN)
    }

    /// Waits until all `n` threads have arrived, spinning for up to `spin` from
    /// `arrived`, then sleeping; true if this thread slept.
    fn wait_from(&self, arrived: std::time::Instant, spin: std::time::Duration) -> bool {
        let generation = self.generation.load(Ordering::Acquire);
        if self.count.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.count.store(0, Ordering::Relaxed);
            // SeqCst with the sleepers' count (here and in `sleep`): either this thread
            // sees a sleeper's count, or the sleeper sees the new generation.
            self.generation.fetch_add(1, Ordering::SeqCst);
            if self.sleepers.load(Ordering::SeqCst) > 0 {
                // Taken so the notification cannot fall between a sleeper's last look
                // at the generation and its wait.
                let _held = self.lock.lock().unwrap_or_else(|e| e.into_inner());
                self.wake.notify_all();
            }
            return false;
        }
        let mut spins = 0u32;
        while self.generation.load(Ordering::Acquire) == generation {
            if self.poisoned.load(Ordering::Relaxed) {
                self.unwind();
            }
            std::hint::spin_loop();
            spins += 1;
            if spins.is_multiple_of(SPINS_PER_CLOCK) && arrived.elapsed() >= spin {
                self.sleep(generation);
                return true;
            }
        }
        false
    }

    /// Sleeps until the barrier passes `generation` (or is poisoned).
    #[cold]
    #[inline(never)]
    fn sleep(&self, generation: usize) {
        let mut held = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        while self.generation.load(Ordering::SeqCst) == generation
            && !self.poisoned.load(Ordering::SeqCst)
        {
            held = self.wake.wait(held).unwrap_or_else(|e| e.into_inner());
        }
        self.sleepers.fetch_sub(1, Ordering::SeqCst);
        let passed = self.generation.load(Ordering::SeqCst) != generation;
        drop(held);
        if !passed {
            self.unwind();
        }
    }

    /// Unwinds a waiting thread of a poisoned barrier (without the panic hook's
    /// message: the first panic has said what went wrong).
    #[cold]
    #[inline(never)]
    fn unwind(&self) -> ! {
        std::panic::resume_unwind(Box::new(Poisoned))
    }

    /// Runs `f`, one thread's part of the run: if it panics, the barrier is poisoned
    /// (so the other threads stop waiting for this one, asleep or not) and the first
    /// panic's payload kept; `None` then.
    fn guarded<T>(&self, f: impl FnOnce() -> T) -> Option<T> {
        match std::panic::catch_unwind(AssertUnwindSafe(f)) {
            Ok(out) => Some(out),
            Err(payload) => {
                if !payload.is::<Poisoned>() {
                    let mut first = self.panic.lock().unwrap_or_else(|e| e.into_inner());
                    first.get_or_insert(payload);
                }
                self.poisoned.store(true, Ordering::SeqCst);
                // A sleeper looks at the flag holding the lock: it saw it, or is waiting.
                let _held = self.lock.lock().unwrap_or_else(|e| e.into_inner());
                self.wake.notify_all();
                None
            }
        }
    }

    /// Raises the first panic of a thread `guarded` ran, if any, in the caller.
    fn rethrow(&self) {
        let first = self.panic.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(payload) = first {
            std::panic::resume_unwind(payload);
        }
    }
}

/// What the partitions share: their messages, job finishes, and per partition what
/// the window's end agrees on.
struct Shared {
    parts: usize,
    /// `mail[from * parts + to]`.
    mail: Vec<Mutex<Outbox>>,
    /// Per partition, its trigger activations of the window (`Part::activations`).
    activations: Vec<Mutex<Vec<(SimTime, u32, u32)>>>,
    next: Vec<AtomicU64>,
    unfinished: Vec<AtomicU64>,
    live: Vec<AtomicU64>,
    processed: Vec<AtomicU64>,
    barrier: SpinBarrier,
    /// The progress callback asked to stop.
    stop: AtomicBool,
    /// Each partition's view of its paused ports at a PFC deadlock check.
    views: Vec<Mutex<PausedView>>,
}

/// How a parallel run ended, the same for every partition, and what this thread
/// measured on the way.
struct Ending {
    now: SimTime,
    partial: bool,
    peak_packets: u64,
    windows: u64,
    wait_secs: f64,
    /// Waits at the barrier that slept.
    sleeps: u64,
}

/// Runs `plan` on `threads` threads over `parts` partitions (`owner`: per node, its
/// partition; `None`: the automatic split), calling `progress` as `run_plan_observing`
/// does (at window ends, with the events run so far). The results are those of a
/// one-thread run.
pub fn run_parallel(
    plan: Plan,
    threads: usize,
    parts: usize,
    owner: Option<Vec<u32>>,
    every: u64,
    progress: impl FnMut(SimTime, u64) -> bool,
) -> Results {
    run_parallel_observing(plan, threads, parts, owner, every, progress).0
}

/// `run_parallel`, also returning what the capture and trace recorded: the one-thread
/// run's, byte for byte.
pub fn run_parallel_observing(
    plan: Plan,
    threads: usize,
    parts: usize,
    owner: Option<Vec<u32>>,
    every: u64,
    mut progress: impl FnMut(SimTime, u64) -> bool,
) -> (Results, Option<Observed>) {
    let t0 = std::time::Instant::now();
    let parts = parts.max(1);
    let threads = threads.clamp(1, parts);
    let shared = Shared {
        parts,
        mail: (0..parts * parts)
            .map(|_| Mutex::new(Outbox::default()))
            .collect(),
        activations: (0..parts).map(|_| Mutex::new(Vec::new())).collect(),
        next: (0..parts).map(|_| AtomicU64::new(0)).collect(),
        unfinished: (0..parts).map(|_| AtomicU64::new(0)).collect(),
        live: (0..parts).map(|_| AtomicU64::new(0)).collect(),
        processed: (0..parts).map(|_| AtomicU64::new(0)).collect(),
        barrier: SpinBarrier::new(threads),
        stop: AtomicBool::new(false),
        views: (0..parts)
            .map(|_| Mutex::new(PausedView::default()))
            .collect(),
    };
    // The split is made once, from one replica's network, and shared by all.
    let (mut windows, mut wait_secs, mut sleeps) = (0, Vec::new(), Vec::new());
    let first = Sim::new(plan.clone());
    let owner = owner.unwrap_or_else(|| {
        let flows = first.flows.iter().map(|f| &f.spec);
        let bytes = partition::expected_host_bytes(&first.net, flows, first.plan.duration);
        partition::partition(&first.net, &bytes, parts)
    });
    let mut first = Some(first);
    let mut replicas: Vec<(usize, Sim)> = std::thread::scope(|scope| {
        let shared = &shared;
        let handles: Vec<_> = (1..threads)
            .map(|t| {
                let plan = plan.clone();
                let owner = owner.clone();
                scope.spawn(move || {
                    shared.barrier.guarded(|| {
                        let mine = build(&plan, None, &owner, t, threads, parts);
                        run_thread(mine, shared, None, &mut |_, _| true)
                    })
                })
            })
            .collect();
        let main = shared.barrier.guarded(|| {
            let mine = build(&plan, first.take(), &owner, 0, threads, parts);
            run_thread(mine, shared, Some(every), &mut progress)
        });
        // A thread's panic is caught by `guarded`, so joining never fails.
        let rest: Vec<_> = handles
            .into_iter()
            .map(|h| h.join().ok().flatten())
            .collect();
        // A panic in any thread ends the run with its message, as on one thread.
        shared.barrier.rethrow();
        let (mut out, ending) = main.expect("no thread panicked");
        windows = ending.windows;
        wait_secs.push(ending.wait_secs);
        sleeps.push(ending.sleeps);
        for (sims, ending) in rest.into_iter().map(|r| r.expect("no thread panicked")) {
            out.extend(sims);
            wait_secs.push(ending.wait_secs);
            sleeps.push(ending.sleeps);
        }
        out
    });
    replicas.sort_by_key(|(i, _)| *i);
    let sims: Vec<Sim> = replicas.into_iter().map(|(_, s)| s).collect();
    let messages = sims
        .iter()
        .map(|s| s.part.as_deref().map_or(0, |p| p.sent))
        .sum();
    let step = sims[0].windows.step;
    let part_events = sims.iter().map(|s| s.events.processed()).collect();
    let mut merged = merge(sims, &owner);
    let mut results = merged.results(t0.elapsed().as_secs_f64());
    results.parallel = Some(ParallelStats {
        threads: threads as u32,
        partitions: parts as u32,
        step,
        windows,
        messages,
        wait_secs,
        sleeps,
        part_events,
    });
    (results, merged.observed())
}

/// The replicas of thread `t`: partitions t, t + threads, ...
fn build(
    plan: &Plan,
    mut first: Option<Sim>,
    owner: &[u32],
    t: usize,
    threads: usize,
    parts: usize,
) -> Vec<(usize, Sim)> {
    (t..parts)
        .step_by(threads)
        .map(|i| {
            let mut sim = first.take().unwrap_or_else(|| Sim::new(plan.clone()));
            sim.become_part(owner.to_vec(), i as u32, parts);
            (i, sim)
        })
        .collect()
}

/// One thread's loop over windows.
fn run_thread(
    mut mine: Vec<(usize, Sim)>,
    shared: &Shared,
    report_every: Option<u64>,
    progress: &mut dyn FnMut(SimTime, u64) -> bool,
) -> (Vec<(usize, Sim)>, Ending) {
    let parts = shared.parts;
    let (step, duration, stop_when_done, long_lived) = {
        let s = &mine[0].1;
        (
            s.windows.step,
            s.plan.duration,
            s.plan.stop_when_done,
            s.long_lived,
        )
    };
    let (mut windows, mut waiter) = (0u64, Waiter::new());
    for (i, sim) in &mut mine {
        publish(*i, sim, shared);
    }
    waiter.wait(&shared.barrier);
    let mut peak = 0u64;
    let mut until = 0;
    let mut next_report = report_every.unwrap_or(u64::MAX);
    // The time of a PFC deadlock found, where every partition stopped.
    let mut deadlock = None;
    let (now, partial) = loop {
        // A deadlock ends the run at its check, as on one thread: no window boundary
        // is passed there.
        if let Some(at) = deadlock {
            break (at, true);
        }
        let (mut next, mut unfinished, mut live) = (SimTime::MAX, 0u64, 0u64);
        for i in 0..parts {
            next = next.min(shared.next[i].load(Ordering::Acquire));
            unfinished += shared.unfinished[i].load(Ordering::Acquire);
            live += shared.live[i].load(Ordering::Acquire);
        }
        peak = peak.max(live);
        // The end of the last window run (a run stopped or done before any event stays
        // at time 0): where a stopped run has simulated to in every partition, and where
        // one thread's run whose flows are all done stops (`Sim::window_end`).
        let reached = if windows > 0 { until - 1 } else { 0 };
        if shared.stop.load(Ordering::Acquire) {
            break (reached, true);
        }
        if stop_when_done && unfinished == 0 && long_lived == 0 {
            break (reached, false);
        }
        if next > duration {
            break (duration, false);
        }
        let start = next / step * step;
        until = (start + step).min(duration + 1);
        windows += 1;
        for (i, _) in &mine {
            shared.activations[*i].lock().expect("activations").clear();
        }
        // The window, cut at its PFC deadlock checks: every partition stops at each
        // (a replicated event), and goes on unless the gathered view has a cycle.
        loop {
            let mut at_check = false;
            for (_, sim) in &mut mine {
                at_check |= !sim.run_until(until);
            }
            if !at_check {
                break;
            }
            deadlock_check(&mut mine, shared, &mut waiter);
            if mine[0].1.lossless.deadlocks > 0 {
                deadlock = Some(mine[0].1.now);
                break;
            }
        }
        for (i, sim) in &mut mine {
            let part = sim.part.as_deref_mut().expect("a partition");
            for (to, out) in part.out.iter_mut().enumerate() {
                if !out.msgs.is_empty() {
                    std::mem::swap(
                        out,
                        &mut *shared.mail[*i * parts + to].lock().expect("mail"),
                    );
                }
            }
            std::mem::swap(
                &mut part.activations,
                &mut *shared.activations[*i].lock().expect("activations"),
            );
        }
        waiter.wait(&shared.barrier);
        let mut activations = Vec::new();
        for from in 0..parts {
            activations.extend_from_slice(&shared.activations[from].lock().expect("activations"));
        }
        activations.sort_unstable();
        for (i, sim) in &mut mine {
            for from in 0..parts {
                let mut mail = shared.mail[from * parts + *i].lock().expect("mail");
                sim.receive(&mut mail);
            }
            if !activations.is_empty() {
                sim.count_activations(&activations);
            }
            sim.events.sort_pending_due();
            publish(*i, sim, shared);
        }
        if let Some(every) = report_every {
            let processed: u64 = (0..parts)
                .map(|i| shared.processed[i].load(Ordering::Acquire))
                .sum();
            if processed >= next_report {
                next_report = processed.saturating_add(every);
                if !progress(until - 1, processed) {
                    shared.stop.store(true, Ordering::Release);
                }
            }
        }
        waiter.wait(&shared.barrier);
    };
    let ending = Ending {
        now,
        partial,
        peak_packets: peak,
        windows,
        wait_secs: waiter.waits.time.as_secs_f64(),
        sleeps: waiter.waits.sleeps,
    };
    for (_, sim) in &mut mine {
        sim.settle_all_tx_done(ending.now);
        sim.now = ending.now;
        sim.partial = ending.partial;
        sim.counts.peak_packets = ending.peak_packets;
    }
    (mine, ending)
}

/// A PFC deadlock check, at which every partition has stopped: each publishes its
/// view of its own ports, and every thread looks for a cycle in all of them, in
/// partition order, so all find the same deadlock or none.
fn deadlock_check(mine: &mut [(usize, Sim)], shared: &Shared, waiter: &mut Waiter) {
    for (i, sim) in mine.iter_mut() {
        let part = sim.part.as_deref_mut().expect("a partition");
        let view = part.view.take().expect("stopped at a deadlock check");
        *shared.views[*i].lock().expect("views") = view;
    }
    waiter.wait(&shared.barrier);
    let mut all = PausedView::default();
    for view in &shared.views {
        all.extend(&view.lock().expect("views"));
    }
    // No partition replaces its view before every thread has read them all.
    waiter.wait(&shared.barrier);
    for (_, sim) in mine.iter_mut() {
        sim.note_deadlock(&all);
    }
}

/// What partition `i` tells the others at a window's end.
fn publish(i: usize, sim: &mut Sim, shared: &Shared) {
    let next = sim.events.next_time().unwrap_or(SimTime::MAX);
    shared.next[i].store(next, Ordering::Release);
    shared.unfinished[i].store(sim.unfinished, Ordering::Release);
    shared.live[i].store(sim.pkts.live(), Ordering::Release);
    shared.processed[i].store(sim.events.processed(), Ordering::Release);
}

/// One simulator holding every partition's own state, for the result tables: each
/// port, connection endpoint and flow from the replica that ran it; counters summed.
fn merge(mut sims: Vec<Sim>, owner: &[u32]) -> Sim {
    let mut events = 0;
    let mut in_flight = 0;
    let mut created = 0;
    for (i, s) in sims.iter().enumerate() {
        let part = s.part.as_deref().expect("a partition");
        events += s.events.processed() - if i == 0 { 0 } else { part.replicated };
        in_flight += s.packets_in_flight();
        created += s.pkts.created();
    }
    let mut rest = sims.split_off(1);
    let mut base = sims.pop().expect("one replica at least");
    if base.observe {
        base.merge_observers(&mut rest);
    }
    for (k, other) in rest.iter_mut().enumerate() {
        let o = (k + 1) as u32;
        base.counts.hops += other.counts.hops;
        base.counts.delivered += other.counts.delivered;
        base.counts.dropped += other.counts.dropped;
        base.counts.route_drops += other.counts.route_drops;
        base.lossless.headroom_drops += other.lossless.headroom_drops;
        // A deadlock (`deadlocks`, its message) is found by every replica alike: the
        // base's stands for the run.
        base.sampling
            .flow_samples
            .append(&mut other.sampling.flow_samples);
        base.sampling
            .queue_samples
            .append(&mut other.sampling.queue_samples);
        for p in 0..base.net.ports.len() {
            if owner[base.net.ports[p].owner as usize] != o {
                continue;
            }
            std::mem::swap(&mut base.net.ports[p], &mut other.net.ports[p]);
            let f = base.net.ports[p].fault as usize;
            if f < base.net.faults.len() {
                std::mem::swap(&mut base.net.faults[f], &mut other.net.faults[f]);
            }
            let r = base.net.ports[p].rwndq as usize;
            if r < base.net.rwndq.len() {
                std::mem::swap(&mut base.net.rwndq[r], &mut other.net.rwndq[r]);
            }
            // Its PFC counters and the ingress of its waiting packets (no fabric: none).
            if p < base.fabric.ports.len() {
                std::mem::swap(&mut base.fabric.ports[p], &mut other.fabric.ports[p]);
            }
        }
        // Switches' shared buffers and PFC ingress accounting (each empty with no
        // fabric, `None` at hosts).
        for (n, _) in owner.iter().enumerate().filter(|&(_, &w)| w == o) {
            if n < base.fabric.buffers.len() {
                std::mem::swap(&mut base.fabric.buffers[n], &mut other.fabric.buffers[n]);
            }
            if n < base.fabric.pfc.len() {
                std::mem::swap(&mut base.fabric.pfc[n], &mut other.fabric.pfc[n]);
            }
        }
        for c in 0..base.conns.len() {
            let (src, dst) = (base.conns[c].src, base.conns[c].dst);
            if owner[dst as usize] == o && !base.server_log.is_empty() {
                std::mem::swap(&mut base.server_log[c], &mut other.server_log[c]);
            }
            // The client's side comes with the whole connection; the server's side is
            // then put back (when another partition ran it) or taken from here.
            if owner[src as usize] == o {
                std::mem::swap(&mut base.conns[c], &mut other.conns[c]);
            }
            if (owner[src as usize] == o) != (owner[dst as usize] == o) {
                base.conns[c].ep.swap_server(&mut other.conns[c].ep);
                std::mem::swap(&mut base.conns[c].host_rx, &mut other.conns[c].host_rx);
            }
        }
        for f in 0..base.flows.len() {
            let src = base.flows[f].spec.src;
            if owner[src as usize] == o {
                std::mem::swap(&mut base.flows[f], &mut other.flows[f]);
            }
            // When its receiver got it all, from the receiver's replica.
            let dst = base.flows[f].spec.dst;
            if owner[dst as usize] == o && !base.closed.triggers.received.is_empty() {
                base.closed.triggers.received[f] = other.closed.triggers.received[f];
            }
            // A flow that completes on another host than its source (a Homa message,
            // at its receiver) takes its finish from there.
            let done_at = base.finish_host(f as u32);
            if (owner[src as usize] == o) != (owner[done_at as usize] == o) {
                std::mem::swap(&mut base.flows[f].finish, &mut other.flows[f].finish);
            }
        }
    }
    base.sampling
        .flow_samples
        .sort_by_key(|s| (s.time, s.flow, s.subflow));
    let position: Vec<usize> = {
        let mut pos = vec![0; base.net.ports.len()];
        for (k, &p) in base.sampling.sampled_ports.iter().enumerate() {
            pos[p as usize] = k;
        }
        pos
    };
    base.sampling
        .queue_samples
        .sort_by_key(|s| (s.time, position[s.port as usize]));
    base.merged = Some(Merged {
        events,
        in_flight,
        created,
    });
    base
}

/// A merged run's counts, which no single replica holds.
pub(super) struct Merged {
    pub events: u64,
    pub in_flight: u64,
    pub created: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    /// Runs `threads` threads at one barrier, each passing it 3 times, thread 0
    /// panicking after `before_panic` of its waits (having slept `delay` first, so the
    /// others may be asleep at the barrier by then), as `run_parallel` runs them
    /// (`guarded`, then `rethrow`). Returns each thread's outcome and the message the
    /// caller gets, or `None` if they are not all back within a deadline (a hang).
    fn panic_at_barrier(
        threads: usize,
        before_panic: usize,
        delay: Duration,
    ) -> Option<(Vec<Option<usize>>, Option<String>)> {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let barrier = SpinBarrier::new(threads);
            let outcomes: Vec<Option<usize>> = std::thread::scope(|s| {
                let barrier = &barrier;
                let handles: Vec<_> = (0..threads)
                    .map(|t| {
                        s.spawn(move || {
                            barrier.guarded(|| {
                                for k in 0..3 {
                                    if t == 0 && k == before_panic {
                                        std::thread::sleep(delay);
                                        panic!("partition 0 failed");
                                    }
                                    barrier.wait();
                                }
                                t
                            })
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().expect("caught"))
                    .collect()
            });
            let message = std::panic::catch_unwind(AssertUnwindSafe(|| barrier.rethrow()))
                .err()
                .map(|p| p.downcast_ref::<&str>().expect("a message").to_string());
            tx.send((outcomes, message)).ok();
        });
        rx.recv_timeout(Duration::from_secs(20)).ok()
    }

    #[test]
    fn a_panic_before_the_barrier_ends_every_thread_with_its_message() {
        for (threads, before_panic) in [(2, 0), (4, 0), (3, 1)] {
            let (outcomes, message) = panic_at_barrier(threads, before_panic, Duration::ZERO)
                .unwrap_or_else(|| panic!("{threads} threads: still waiting (a hang)"));
            assert_eq!(outcomes, vec![None; threads]);
            assert_eq!(message.as_deref(), Some("partition 0 failed"));
        }
    }

    #[test]
    fn threads_without_a_panic_pass_the_barrier_alike() {
        let (outcomes, message) = panic_at_barrier(3, usize::MAX, Duration::ZERO).expect("no hang");
        assert_eq!(outcomes, [Some(0), Some(1), Some(2)]);
        assert_eq!(message, None);
    }

    #[test]
    fn a_thread_spins_twice_its_own_work_within_bounds() {
        let us = Duration::from_micros;
        assert_eq!(spin_for(us(0)), SPIN_MIN);
        assert_eq!(spin_for(us(10)), SPIN_MIN);
        assert_eq!(spin_for(us(200)), us(400));
        assert_eq!(spin_for(us(100_000)), SPIN_MAX);
    }

    #[test]
    fn a_panic_while_the_others_sleep_at_the_barrier_wakes_and_ends_them() {
        // The others spin for `SPIN_MIN`, then sleep: the panic must wake them.
        for threads in [2, 4] {
            let delay = SPIN_MIN * 1000;
            let (outcomes, message) = panic_at_barrier(threads, 1, delay)
                .unwrap_or_else(|| panic!("{threads} threads: still asleep (a hang)"));
            assert_eq!(outcomes, vec![None; threads]);
            assert_eq!(message.as_deref(), Some("partition 0 failed"));
        }
    }

    #[test]
    fn a_thread_waiting_longer_than_the_spin_sleeps_and_is_woken() {
        let barrier = SpinBarrier::new(2);
        let slept: Vec<bool> = std::thread::scope(|s| {
            let late = s.spawn(|| {
                std::thread::sleep(SPIN_MIN * 2000);
                barrier.wait()
            });
            let early = barrier.wait();
            vec![early, late.join().expect("no panic")]
        });
        // The late thread arrives last and never waits; the early one slept.
        assert_eq!(slept, [true, false]);
    }

    /// Threads passing the barrier many times, one of them late by about the spin's
    /// length, so the last arrival often meets a thread on its way to sleep: every
    /// round, each thread sees the others' arrivals, and none is left asleep (which
    /// would hang the run).
    #[test]
    fn arrivals_around_the_end_of_the_spin_lose_no_wake_up() {
        const THREADS: usize = 3;
        const ROUNDS: usize = 400;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let barrier = SpinBarrier::new(THREADS);
            let arrived = AtomicUsize::new(0);
            let sleeps: usize = std::thread::scope(|s| {
                let handles: Vec<_> = (0..THREADS)
                    .map(|t| {
                        let (barrier, arrived) = (&barrier, &arrived);
                        s.spawn(move || {
                            let mut sleeps = 0;
                            for round in 0..ROUNDS {
                                if round % THREADS == t {
                                    // 0 to 2 spins' length, in 16 steps.
                                    let late = SPIN_MIN * (round % 17) as u32 / 8;
                                    let t0 = std::time::Instant::now();
                                    while t0.elapsed() < late {
                                        std::hint::spin_loop();
                                    }
                                }
                                arrived.fetch_add(1, Ordering::SeqCst);
                                sleeps += usize::from(barrier.wait());
                                assert!(arrived.load(Ordering::SeqCst) >= THREADS * (round + 1));
                                barrier.wait();
                            }
                            sleeps
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().expect("no panic"))
                    .sum()
            });
            tx.send(sleeps).ok();
        });
        let sleeps = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("every round passed (no thread left asleep)");
        // Late arrivals of up to twice the spin made some waits sleep.
        assert!(sleeps > 0, "no wait slept");
    }
}
