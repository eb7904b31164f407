//! The `goal` pattern: a GOAL schedule (LogGOPSim's text format, read, matched and
//! checked in `scenario::traffic::goal`) as flows and triggers. Each operation has two
//! triggers, its start and its completion; a matched send and receive between ranks on
//! different hosts is a flow that waits for the send's start, whose send-done completes
//! the send and whose receive-done completes the receive (with the receive's own start:
//! a barrier of two). Dependencies, computations and messages between ranks on one host
//! are links between triggers (`TriggerLink`); operations that wait for nothing are
//! activated at the entry's start.

use super::{Deps, FlowSpec, TrafficGen, Trigger, TriggerLink};

/// A message of the schedule carried by the fabric: a flow between two ranks' hosts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GoalFlow {
    pub src_rank: u32,
    pub dst_rank: u32,
    pub size: u64,
    /// The send's number among the file's sends, from 1 (the flows table's `matrix_id`).
    pub send: u32,
    /// The schedule's triggers (indices in `GoalGen::triggers`): the send's start,
    /// which starts the flow; the send's completion (its send-done) and the receive's
    /// (its receive-done).
    pub wait: u32,
    pub on_send_done: u32,
    pub on_recv_done: u32,
}

/// A GOAL schedule, checked: its messages as flows, its triggers and their links.
#[derive(Clone, Debug, PartialEq)]
pub struct GoalGen {
    pub ranks: u32,
    /// Rank r runs on host `hosts[r]`.
    pub hosts: Vec<u32>,
    /// In the order of their sends in the file.
    pub flows: Vec<GoalFlow>,
    pub triggers: Vec<Trigger>,
    /// Between the schedule's triggers (indices in `triggers`).
    pub links: Vec<TriggerLink>,
    /// The triggers activated at the entry's start (operations with no dependency).
    pub starts: Vec<u32>,
    /// The index of the schedule's first trigger in the run's list (`Plan::triggers`).
    pub trigger_base: u32,
}

impl GoalGen {
    /// The links, numbered in the run's trigger list.
    pub fn links(&self) -> impl Iterator<Item = TriggerLink> + '_ {
        let base = self.trigger_base;
        self.links.iter().map(move |l| TriggerLink {
            from: base + l.from,
            to: base + l.to,
            delay: l.delay,
        })
    }

    /// The triggers activated at the entry's start, numbered in the run's list.
    pub fn starts(&self) -> impl Iterator<Item = u32> + '_ {
        self.starts.iter().map(move |&t| self.trigger_base + t)
    }

    /// Appends the schedule's flows, in the order of their sends in the file, with
    /// entry `g`'s transport, class and priority; each waits for its send's start.
    pub(super) fn generate(&self, g: &TrafficGen, out: &mut Vec<FlowSpec>) {
        let hosts = &self.hosts;
        let global = |t: u32| Some(self.trigger_base + t);
        out.extend(self.flows.iter().map(|f| FlowSpec {
            src: hosts[f.src_rank as usize],
            dst: hosts[f.dst_rank as usize],
            size: Some(f.size),
            start: 0,
            transport: g.transport,
            class: g.class,
            priority: g.priority,
            job: -1,
            after: None,
            conn: None,
            after_job: None,
            deps: Deps {
                wait: global(f.wait),
                on_send_done: global(f.on_send_done),
                on_recv_done: global(f.on_recv_done),
                matrix_id: Some(f.send),
                collective: None,
            },
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::gen;
    use super::super::Pattern;
    use super::*;
    use crate::engine::Rng;
    use crate::workload::TriggerKind;
    use std::sync::Arc;

    fn schedule(hosts: Vec<u32>) -> GoalGen {
        let barrier = |count| Trigger {
            kind: TriggerKind::Barrier { count },
            id: 0,
        };
        GoalGen {
            ranks: 3,
            hosts,
            flows: vec![
                GoalFlow {
                    src_rank: 0,
                    dst_rank: 2,
                    size: 100,
                    send: 1,
                    wait: 0,
                    on_send_done: 1,
                    on_recv_done: 3,
                },
                GoalFlow {
                    src_rank: 2,
                    dst_rank: 1,
                    size: 200,
                    send: 3,
                    wait: 4,
                    on_send_done: 5,
                    on_recv_done: 7,
                },
            ],
            triggers: vec![barrier(1); 8],
            links: vec![],
            starts: vec![0],
            trigger_base: 10,
        }
    }

    #[test]
    fn a_schedule_gives_its_flows_on_the_ranks_hosts_with_the_runs_trigger_numbers() {
        let g = TrafficGen {
            goal: Some(Arc::new(schedule(vec![5, 3, 9]))),
            ..gen(Pattern::Goal)
        };
        let mut out = Vec::new();
        g.generate(&mut Rng::new(1, 0, 0), &mut 0, &mut out, &mut Vec::new());
        let got: Vec<_> = out
            .iter()
            .map(|f| (f.src, f.dst, f.size, f.start, f.deps))
            .collect();
        let deps = |w, s, r, id| Deps {
            wait: Some(w),
            on_send_done: Some(s),
            on_recv_done: Some(r),
            matrix_id: Some(id),
            collective: None,
        };
        assert_eq!(
            got,
            [
                (5, 9, Some(100), 0, deps(10, 11, 13, 1)),
                (9, 3, Some(200), 0, deps(14, 15, 17, 3)),
            ]
        );
    }
}
