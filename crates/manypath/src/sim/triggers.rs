//! Traffic as a dependency graph: triggers that flows' finishes (send-done) and
//! deliveries in full (receive-done) activate, and that start the flows waiting for them.
//! A closed-loop job is one of them: a barrier its flows' finishes activate, which starts
//! the job after it. A trigger's firing may also activate other triggers, at once or a
//! delay later (`TriggerLink`: a GOAL schedule's operations passing their start or
//! completion on, a computation's time in between), and a trigger may be activated
//! before the run, at a time of its own (`Triggers::start`: a GOAL operation with
//! nothing to wait for).
//!
//! A trigger's firing is news that crosses the fabric: the flows it starts start a
//! synchronisation step (the smallest link delay) after it at the earliest, as a job's
//! waiters do (`Sim::start_later`). In a run over several threads every activation is
//! counted at its window's end by every partition, in (time, flow, trigger) order
//! (`parallel::count_activations`), so every partition keeps the same trigger state and
//! starts its own flows: the same starts for any number of threads. A link's delay may
//! date an activation after others still to be counted: a barrier fires at the latest of
//! its activations' times, whatever the order they are counted in, so the order changes
//! nothing. Triggers that fire before the run (every activation known then) start their
//! flows at their firing, with no step: no news has to cross the fabric.
//!
//! A *local* trigger is the exception: every activation happens at one host (the
//! receiver of the flows whose receive-done activates it, the sender of those whose
//! send-done does) and every flow it starts is sent from that host: a collective's
//! rank going on with what it just received, a GOAL rank's next operations. Its firing
//! crosses nothing, so its flows start at the firing plus their delay, as htsim starts
//! them; the one partition that runs the host counts it at once, and no other partition
//! needs to. Triggers joined by links are local together or not at all (a local
//! trigger's firing is counted in one partition only, so everything it activates must
//! be too): all of them at one host.

use super::{Flow, Sim, NOT_STARTED, NO_WATCH};
use crate::time::SimTime;
use crate::workload::{FlowSpec, Trigger, TriggerKind, TriggerLink};
use std::collections::VecDeque;

/// No trigger.
pub(super) const NO_TRIGGER: u32 = u32::MAX;

/// A flow not (yet) received in full.
pub(super) const NOT_RECEIVED: SimTime = SimTime::MAX;

/// The run's triggers: closed-loop jobs' barriers first (trigger j is job j's), then the
/// triggers of the traffic entries (`Plan::triggers`). Empty when no flow waits for one.
#[derive(Default)]
pub(super) struct Triggers {
    /// Per trigger: what it does, and the activations it still needs before it fires
    /// (0: fired, or a multishot with no flow left to start).
    pub kind: Vec<TriggerKind>,
    pub left: Vec<u32>,
    /// Per trigger, the flows waiting for it, in flow order; a multishot's next one.
    pub waiters: Vec<Vec<u32>>,
    pub next: Vec<u32>,
    /// Per flow, the trigger its finish activates (`NO_TRIGGER`: none). Empty when no
    /// flow's finish activates one.
    pub on_finish: Vec<u32>,
    /// Per flow, the trigger its receive-done activates, and when it was seen (the
    /// first of its copies to deliver every byte; `NOT_RECEIVED`: not yet). Empty when
    /// no flow has one.
    pub on_received: Vec<u32>,
    pub received: Vec<SimTime>,
    /// Per trigger: all its activations and waiters are at one host (see above).
    pub local: Vec<bool>,
    /// Per collective message on a persistent connection, where it ends in the
    /// connection's stream (`watch`; 0 for other flows); empty unless some such message
    /// exists and some flow's receive-done is watched.
    pub persistent_end: Vec<u64>,
    /// Per connection, the flows whose receive-done its server watches for, with the
    /// byte of the connection's stream that ends each. Empty when no flow has one: the
    /// per-packet path then tests one length (`Sim::flush_ep`).
    pub recv_watch: Vec<VecDeque<(u32, u64)>>,
    /// The jobs' barriers, which come first.
    pub jobs: u32,
    /// Per trigger, the latest time it was activated at: a barrier fires then.
    pub at: Vec<SimTime>,
    /// Per trigger, the triggers its firing activates and the delay to each
    /// (`link_to[link_start[t]..link_start[t + 1]]`). Empty when no trigger has links.
    pub link_start: Vec<u32>,
    pub link_to: Vec<(u32, SimTime)>,
}

impl Triggers {
    /// The triggers of `specs`: a barrier per closed-loop job if some flow waits for a
    /// job, then `entries` (the traffic entries' triggers, which the flows' `deps`
    /// number from 0).
    pub(super) fn new(specs: &[FlowSpec], entries: &[Trigger]) -> Triggers {
        let mut t = Triggers::default();
        let jobs = if specs.iter().any(|f| f.after_job.is_some()) {
            specs.iter().map(|f| f.job + 1).max().unwrap_or(0).max(0) as usize
        } else {
            0
        };
        let graph = specs.iter().any(|f| {
            f.deps.wait.is_some() || f.deps.on_send_done.is_some() || f.deps.on_recv_done.is_some()
        });
        if jobs == 0 && !graph {
            return t;
        }
        for _ in 0..jobs {
            t.push(TriggerKind::Barrier { count: 0 });
        }
        t.jobs = jobs as u32;
        for e in entries {
            t.push(e.kind);
        }
        t.on_finish = vec![NO_TRIGGER; specs.len()];
        for (i, f) in specs.iter().enumerate() {
            if jobs > 0 && f.job >= 0 {
                t.on_finish[i] = f.job as u32;
                t.left[f.job as usize] += 1;
            }
            if let Some(s) = f.deps.on_send_done {
                t.on_finish[i] = jobs as u32 + s;
            }
        }
        if specs.iter().any(|f| f.deps.on_recv_done.is_some()) {
            t.on_received = specs
                .iter()
                .map(|f| f.deps.on_recv_done.map_or(NO_TRIGGER, |r| jobs as u32 + r))
                .collect();
            t.received = vec![NOT_RECEIVED; specs.len()];
        }
        t
    }

    /// Marks the local triggers (see above): `finish_host[f]` is where flow `f`'s
    /// send-done happens. A job's barrier is never local (its flows finish on many
    /// hosts). Call it once the triggers are linked (`link`).
    pub(super) fn localise(&mut self, flows: &[Flow], finish_host: &[u32]) {
        const NONE: u32 = u32::MAX;
        const MANY: u32 = u32::MAX - 1;
        if self.kind.is_empty() {
            return;
        }
        let mut host = vec![NONE; self.kind.len()];
        let mut note = |t: u32, h: u32| {
            let x = &mut host[t as usize];
            *x = if *x == NONE || *x == h { h } else { MANY };
        };
        for (i, f) in flows.iter().enumerate() {
            if let Some(&t) = self.on_finish.get(i).filter(|&&t| t != NO_TRIGGER) {
                note(t, finish_host[i]);
            }
            if let Some(&t) = self.on_received.get(i).filter(|&&t| t != NO_TRIGGER) {
                note(t, f.spec.dst);
            }
        }
        for (t, ws) in self.waiters.iter().enumerate() {
            for &w in ws {
                note(t as u32, flows[w as usize].spec.src);
            }
        }
        if !self.link_to.is_empty() {
            // Triggers joined by links are local together, at one host, or not at all.
            let join = |x: u32, h: u32| match (x, h) {
                (x, NONE) => x,
                (NONE, h) => h,
                (x, h) if x == h => h,
                _ => MANY,
            };
            let n = self.kind.len();
            let mut root: Vec<u32> = (0..n as u32).collect();
            fn find(root: &mut [u32], mut x: u32) -> u32 {
                while root[x as usize] != x {
                    root[x as usize] = root[root[x as usize] as usize];
                    x = root[x as usize];
                }
                x
            }
            for from in 0..n {
                let links = self.link_start[from] as usize..self.link_start[from + 1] as usize;
                for &(to, _) in &self.link_to[links] {
                    let (a, b) = (find(&mut root, from as u32), find(&mut root, to));
                    root[a as usize] = b;
                }
            }
            let mut at_root = vec![NONE; n];
            for (t, &h) in host.iter().enumerate() {
                let r = find(&mut root, t as u32) as usize;
                at_root[r] = join(at_root[r], h);
            }
            for (t, h) in host.iter_mut().enumerate() {
                *h = at_root[find(&mut root, t as u32) as usize];
            }
        }
        self.local = host
            .iter()
            .enumerate()
            .map(|(t, &h)| t as u32 >= self.jobs && h < MANY)
            .collect();
    }

    /// The run has `n` connections and `flows`: the server of each connection of a flow
    /// with a receive-done trigger watches for the flow's last byte, on every replica of
    /// a run over threads (the one running the server acts on it). A flow with
    /// connections of its own ends at its size; a message on a persistent connection (a
    /// collective's between two ranks) ends where the sizes of the connection's messages
    /// before it and its own add up, in flow order: the order its messages start in,
    /// which the collective's triggers ensure and `start_flow` checks
    /// (`persistent_end`), so the server's replica need not see the offers.
    pub(super) fn watch(&mut self, n: usize, flows: &[Flow]) {
        if self.on_received.is_empty() {
            return;
        }
        self.recv_watch = vec![VecDeque::new(); n];
        let mut offered: Vec<u64> = Vec::new();
        for (i, f) in flows.iter().enumerate() {
            let Some(size) = f.spec.size else {
                continue;
            };
            // A collective's messages on its persistent connections (a pool's flows
            // take whichever connection is idle: none of them has a receive-done).
            if f.spec.conn.is_some() && f.spec.deps.collective.is_some() {
                if offered.is_empty() {
                    offered = vec![0; n];
                    self.persistent_end = vec![0; flows.len()];
                }
                let c = f.conns[0] as usize;
                offered[c] += size;
                self.persistent_end[i] = offered[c];
                if self.on_received[i] != NO_TRIGGER {
                    self.recv_watch[c].push_back((i as u32, offered[c]));
                }
                continue;
            }
            if self.on_received[i] == NO_TRIGGER || f.spec.conn.is_some() {
                continue;
            }
            for &c in &f.conns[..f.copies as usize] {
                self.recv_watch[c as usize].push_back((i as u32, size));
            }
        }
    }

    /// The links between the traffic entries' triggers (numbered as the flows' `deps`).
    pub(super) fn link(&mut self, links: &[TriggerLink]) {
        if links.is_empty() || self.kind.is_empty() {
            return;
        }
        let n = self.kind.len();
        let mut start = vec![0u32; n + 1];
        for l in links {
            start[(self.jobs + l.from) as usize + 1] += 1;
        }
        let mut sum = 0;
        for s in &mut start {
            sum += *s;
            *s = sum;
        }
        let mut next = start.clone();
        self.link_to = vec![(0, 0); links.len()];
        for l in links {
            let from = (self.jobs + l.from) as usize;
            self.link_to[next[from] as usize] = (self.jobs + l.to, l.delay);
            next[from] += 1;
        }
        self.link_start = start;
    }

    /// The activations made before the run, `(time, trigger)` (numbered as the flows'
    /// `deps`): the flows they start, each with its trigger's firing time.
    pub(super) fn start(&mut self, starts: &[(SimTime, u32)]) -> Vec<(u32, SimTime)> {
        let mut started = Vec::new();
        if self.kind.is_empty() {
            return started;
        }
        for &(at, t) in starts {
            self.activate(self.jobs + t, at, &mut started);
        }
        started
    }

    fn push(&mut self, kind: TriggerKind) {
        self.at.push(0);
        self.left.push(match kind {
            TriggerKind::Oneshot => 1,
            TriggerKind::Multishot => 0,
            TriggerKind::Barrier { count } => count,
        });
        self.kind.push(kind);
        self.waiters.push(Vec::new());
        self.next.push(0);
    }

    /// The trigger that starts flow `f` of `specs` (a job's, or its `deps.wait`).
    pub(super) fn waits_for(&self, f: &FlowSpec) -> Option<u32> {
        match (f.after_job, f.deps.wait) {
            (Some(j), _) => Some(j as u32),
            (None, Some(w)) => Some(self.jobs + w),
            (None, None) => None,
        }
    }

    /// Flow `f` waits for trigger `t`.
    pub(super) fn add_waiter(&mut self, t: u32, f: u32) {
        self.waiters[t as usize].push(f);
        if self.kind[t as usize] == TriggerKind::Multishot {
            self.left[t as usize] += 1;
        }
    }

    /// Activates trigger `t` at `at`, and the triggers its firing activates through its
    /// links, and theirs: appends the flows they start to `started`, each with the time
    /// its trigger fired (a barrier's latest activation, a multishot's activation).
    pub(super) fn activate(&mut self, t: u32, at: SimTime, started: &mut Vec<(u32, SimTime)>) {
        let mut work = vec![(t, at)];
        while let Some((t, at)) = work.pop() {
            let t = t as usize;
            if self.left[t] == 0 {
                continue;
            }
            self.left[t] -= 1;
            let when = match self.kind[t] {
                TriggerKind::Oneshot | TriggerKind::Barrier { .. } => {
                    self.at[t] = self.at[t].max(at);
                    if self.left[t] > 0 {
                        continue;
                    }
                    let when = self.at[t];
                    started.extend(self.waiters[t].drain(..).map(|w| (w, when)));
                    when
                }
                TriggerKind::Multishot => {
                    let k = self.next[t] as usize;
                    self.next[t] += 1;
                    started.push((self.waiters[t][k], at));
                    at
                }
            };
            if let Some(&[a, b]) = self.link_start.get(t..t + 2) {
                for &(to, delay) in &self.link_to[a as usize..b as usize] {
                    work.push((to, when.saturating_add(delay)));
                }
            }
        }
    }
}

impl Sim {
    /// Flow `f` activates trigger `t` at `at` (now): counted now with one thread, at the
    /// window's end with several (a trigger's activations come from many partitions).
    pub(super) fn activate(&mut self, t: u32, f: u32) {
        let now = self.now;
        if self.closed.triggers.local[t as usize] {
            return self.fire(t, now, true, 0);
        }
        if let Some(part) = self.part.as_deref_mut() {
            part.activations.push((now, f, t));
            return;
        }
        self.fire(t, now, true, self.windows.step);
    }

    /// Counts an activation of trigger `t` made at `at`: the flows it starts (it, or the
    /// triggers its links activate) start `signal` after their trigger's firing at the
    /// earliest (`start_later`: a step, or nothing for a local trigger); `all`: this
    /// replica starts every one, else only its own.
    pub(super) fn fire(&mut self, t: u32, at: SimTime, all: bool, signal: SimTime) {
        let mut started = Vec::new();
        self.closed.triggers.activate(t, at, &mut started);
        for (w, fired) in started {
            if all || self.owns_flow(w) {
                self.start_later(w, fired, signal);
            }
        }
    }

    /// Connection `conn_id`'s server has taken data: the flows it carries whose every
    /// byte it now has are received (receive-done). Out of line: the per-packet path
    /// tests whether any flow has a receive-done trigger, nothing more.
    #[inline(never)]
    pub(super) fn check_received(&mut self, conn_id: u32) {
        let got = self.conns[conn_id as usize].ep.data_received();
        loop {
            match self.closed.triggers.recv_watch[conn_id as usize].front() {
                Some(&(f, end)) if got >= end => {
                    self.closed.triggers.recv_watch[conn_id as usize].pop_front();
                    self.flow_received(f);
                }
                next => {
                    self.conns[conn_id as usize].watch_end = next.map_or(NO_WATCH, |&(_, end)| end);
                    return;
                }
            }
        }
    }

    /// Every byte of flow `f` has reached its receiver (the first of its copies to get
    /// them all): its receive-done trigger is activated.
    pub(super) fn flow_received(&mut self, f: u32) {
        let tr = &mut self.closed.triggers;
        if tr.on_received.is_empty() || tr.received[f as usize] != NOT_RECEIVED {
            return;
        }
        tr.received[f as usize] = self.now;
        let t = tr.on_received[f as usize];
        if t != NO_TRIGGER {
            self.activate(t, f);
        }
    }

    /// The flows that wait for a trigger that never fired for them, and of them the
    /// first few, for the run's warnings.
    pub(super) fn never_triggered(&self) -> (usize, Vec<u32>) {
        let mut n = 0;
        let mut first = Vec::new();
        for (i, flow) in self.flows.iter().enumerate() {
            if flow.spec.deps.wait.is_some() && flow.spec.start == NOT_STARTED {
                n += 1;
                if first.len() < 5 {
                    first.push(i as u32);
                }
            }
        }
        (n, first)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Triggers of kinds `kinds` (no jobs), linked by `links`; flow 7 waits for the last.
    fn triggers(kinds: &[TriggerKind], links: &[(u32, u32, SimTime)]) -> Triggers {
        let mut t = Triggers::default();
        for &k in kinds {
            t.push(k);
        }
        let links: Vec<TriggerLink> = links
            .iter()
            .map(|&(from, to, delay)| TriggerLink { from, to, delay })
            .collect();
        t.link(&links);
        t.add_waiter(kinds.len() as u32 - 1, 7);
        t
    }

    const ONE: TriggerKind = TriggerKind::Barrier { count: 1 };
    const TWO: TriggerKind = TriggerKind::Barrier { count: 2 };

    /// A link passes a firing on a delay later; a barrier fires at its latest
    /// activation's time whatever the order the activations are counted in (a link's
    /// delay may date one after those counted later).
    #[test]
    fn a_barrier_fires_at_its_latest_activation_in_any_order_of_counting() {
        for order in [[0, 1], [1, 0]] {
            let mut t = triggers(&[ONE, ONE, TWO], &[(0, 2, 50), (1, 2, 0)]);
            let mut started = Vec::new();
            for i in order {
                t.activate(i, [10, 30][i as usize], &mut started);
            }
            // Trigger 0 at 10 reaches 2 at 60, trigger 1 at 30 reaches it at 30.
            assert_eq!(started, [(7, 60)], "{order:?}");
        }
    }

    #[test]
    fn links_chain_with_their_delays_and_fire_once() {
        let mut t = triggers(&[ONE, ONE, ONE], &[(0, 1, 5), (1, 2, 7)]);
        assert_eq!(t.start(&[(100, 0)]), [(7, 112)]);
        let mut started = Vec::new();
        t.activate(0, 200, &mut started);
        assert!(started.is_empty());
    }
}
