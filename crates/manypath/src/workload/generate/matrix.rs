//! The `matrix` pattern: the flows of a connection matrix (htsim's file format, read
//! and checked in `scenario::traffic::matrix`), with the triggers that start some of
//! them when others finish or are delivered. A collective (`collective`) is one too,
//! generated instead of read, with each flow's place in it.

use super::collective::{Algorithm, Collective, Shape};
use super::{CollectiveStep, ConnSpec, Deps, FlowSpec, TrafficGen, Trigger};
use crate::time::SimTime;
use crate::workload::TriggerKind;
use std::collections::HashMap;

/// One connection of a matrix file: a flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatrixConn {
    pub src: u32,
    pub dst: u32,
    /// The file's connection id (0: none given).
    pub id: u32,
    /// Its start after the entry's start, or `None` when a trigger starts it.
    pub start: Option<SimTime>,
    pub size: u64,
    /// From its trigger's firing to its start (compute time).
    pub delay: SimTime,
    /// Indices in the file's triggers (`MatrixGen::triggers`).
    pub wait: Option<u32>,
    pub on_send_done: Option<u32>,
    pub on_recv_done: Option<u32>,
    /// A collective's connection: its iteration and step.
    pub tag: Option<CollectiveTag>,
}

/// Where a connection of a collective belongs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CollectiveTag {
    pub iteration: u32,
    pub step: u16,
    /// The channel it takes between its two ranks (the double binary tree's tree): with
    /// `CollectiveJob::pairs`, each (source, destination, channel) has one connection.
    pub channel: u8,
}

/// A connection matrix, checked: its connections in file order and its triggers.
#[derive(Clone, Debug, PartialEq)]
pub struct MatrixGen {
    pub conns: Vec<MatrixConn>,
    pub triggers: Vec<Trigger>,
    /// The index of the file's first trigger in the run's list (`Plan::triggers`): the
    /// triggers of earlier entries come before.
    pub trigger_base: u32,
    /// A generated collective: what it is.
    pub collective: Option<CollectiveJob>,
}

/// A collective job (one traffic entry): its operation, ranks and iterations.
#[derive(Clone, Debug, PartialEq)]
pub struct CollectiveJob {
    /// The job's number among the run's collective entries.
    pub job: u32,
    pub collective: Collective,
    pub algorithm: Algorithm,
    /// Rank r runs on `hosts[r]`.
    pub hosts: Vec<u32>,
    pub bytes: u64,
    pub iterations: u32,
    /// The index of its first iteration in the run's list of collectives
    /// (`Plan::collectives`).
    pub first: u32,
    /// Its transfers between two ranks are messages on one persistent connection per
    /// (source, destination, channel), opened by the first of them, as NCCL's and MPI's
    /// channels between peers stay open; else each transfer opens a connection of its
    /// own.
    pub pairs: bool,
}

impl MatrixGen {
    /// Appends the matrix's flows, in file order, with entry `g`'s transport, class and
    /// priority; timed ones start at the entry's start plus their own. A collective on
    /// persistent connections (`CollectiveJob::pairs`) appends them to `conns`, one per
    /// (source, destination, channel) in order of first use.
    pub(super) fn generate(
        &self,
        g: &TrafficGen,
        out: &mut Vec<FlowSpec>,
        conns: &mut Vec<ConnSpec>,
    ) {
        let global = |t: Option<u32>| t.map(|t| self.trigger_base + t);
        let first = out.len();
        out.extend(self.conns.iter().map(|c| {
            FlowSpec {
                src: c.src,
                dst: c.dst,
                size: Some(c.size),
                start: c.start.map_or(c.delay, |s| g.start.saturating_add(s)),
                transport: g.transport,
                class: g.class,
                priority: g.priority,
                job: -1,
                after: None,
                conn: None,
                after_job: None,
                deps: Deps {
                    wait: global(c.wait),
                    on_send_done: global(c.on_send_done),
                    on_recv_done: global(c.on_recv_done),
                    matrix_id: Some(c.id),
                    collective: self
                        .collective
                        .as_ref()
                        .zip(c.tag)
                        .map(|(j, t)| CollectiveStep {
                            instance: j.first + t.iteration,
                            step: t.step,
                        }),
                },
            }
        }));
        if self.collective.as_ref().is_some_and(|j| j.pairs) {
            let mut index: HashMap<(u32, u32, u8), u32> = HashMap::new();
            for (f, c) in out[first..].iter_mut().zip(&self.conns) {
                let key = (c.src, c.dst, c.tag.map_or(0, |t| t.channel));
                let next = conns.len() as u32;
                let id = *index.entry(key).or_insert_with(|| {
                    conns.push(ConnSpec {
                        src: c.src,
                        dst: c.dst,
                        transport: g.transport,
                        priority: g.priority,
                        start: g.start,
                        pool: None,
                        // Opened by its first message, when that starts.
                        on_demand: true,
                    });
                    next
                });
                f.conn = Some(id);
            }
        }
    }
}

/// A collective job placed on hosts and repeated: the connections (matrix rows) and
/// triggers of all its iterations. Iteration i+1 starts `gap` after every rank has its
/// result of iteration i (a barrier over the ends of the collective); the first
/// iteration's first transfers start at the entry's start. The last
/// iteration's ends activate a barrier that starts nothing, so every end is watched.
pub fn place(
    shape: &Shape,
    hosts: &[u32],
    iterations: u32,
    gap: SimTime,
) -> (Vec<MatrixConn>, Vec<TriggerKind>) {
    let sinks = shape.sinks();
    let per = shape.triggers.len() as u32 + 1;
    let mut conns = Vec::with_capacity(shape.transfers.len() * iterations as usize);
    let mut triggers = Vec::with_capacity((per * iterations) as usize);
    for it in 0..iterations {
        let base = it * per;
        let done = base + per - 1;
        triggers.extend(shape.triggers.iter().copied());
        triggers.push(TriggerKind::Barrier {
            count: sinks.len() as u32,
        });
        for (i, t) in shape.transfers.iter().enumerate() {
            let first = t.wait.is_none();
            let wait = match (first, it) {
                (false, _) => t.wait.map(|w| base + w),
                (true, 0) => None,
                (true, _) => Some(base - 1),
            };
            conns.push(MatrixConn {
                src: hosts[t.src as usize],
                dst: hosts[t.dst as usize],
                id: conns.len() as u32 + 1,
                start: (first && it == 0).then_some(0),
                size: t.bytes,
                delay: if first && it > 0 { gap } else { 0 },
                wait,
                on_send_done: t.on_send_done.map(|w| base + w),
                on_recv_done: match t.on_recv_done {
                    Some(w) => Some(base + w),
                    None => sinks.binary_search(&i).is_ok().then_some(done),
                },
                tag: Some(CollectiveTag {
                    iteration: it,
                    step: t.step,
                    channel: t.channel,
                }),
            });
        }
    }
    (conns, triggers)
}

#[cfg(test)]
mod tests {
    use super::super::collective::CollectiveSpec;
    use super::super::tests::gen;
    use super::super::Pattern;
    use super::*;
    use crate::engine::Rng;
    use crate::workload::TriggerKind;
    use std::sync::Arc;

    #[test]
    fn a_matrix_gives_its_flows_in_file_order_with_the_runs_trigger_numbers() {
        let conn = |src, id, start, wait| MatrixConn {
            src,
            dst: 0,
            id,
            start,
            size: 1000 * id as u64,
            delay: 9,
            wait,
            on_send_done: Some(0),
            on_recv_done: None,
            tag: None,
        };
        let m = MatrixGen {
            conns: vec![conn(1, 1, Some(5), None), conn(2, 2, None, Some(0))],
            triggers: vec![Trigger {
                kind: TriggerKind::Oneshot,
                id: 7,
            }],
            trigger_base: 3,
            collective: None,
        };
        let g = TrafficGen {
            start: 100,
            matrix: Some(Arc::new(m)),
            ..gen(Pattern::Matrix)
        };
        let mut out = Vec::new();
        g.generate(&mut Rng::new(1, 0, 0), &mut 0, &mut out, &mut Vec::new());
        let got: Vec<_> = out
            .iter()
            .map(|f| (f.src, f.size, f.start, f.deps.wait, f.deps.on_send_done))
            .collect();
        assert_eq!(
            got,
            [
                (1, Some(1000), 105, None, Some(3)),
                (2, Some(2000), 9, Some(3), Some(3))
            ]
        );
        assert_eq!(out[1].deps.matrix_id, Some(2));
    }

    #[test]
    fn iterations_follow_each_other_through_a_barrier_and_the_gap() {
        let shape = CollectiveSpec {
            collective: Collective::AllReduce,
            algorithm: Algorithm::RecursiveDoubling,
            bytes: 1 << 20,
            ranks: 4,
            chunks: 1,
            group: 4,
        }
        .shape();
        let (conns, triggers) = place(&shape, &[10, 11, 12, 13], 2, 500);
        assert_eq!(conns.len(), 2 * 8);
        let per = shape.triggers.len() as u32 + 1;
        assert_eq!(triggers.len() as u32, 2 * per);
        assert_eq!(
            triggers[per as usize - 1],
            TriggerKind::Barrier { count: 4 }
        );
        let second: Vec<&MatrixConn> = conns[8..12].iter().collect();
        assert!(second
            .iter()
            .all(|c| c.wait == Some(per - 1) && c.delay == 500));
        assert!(conns[..4]
            .iter()
            .all(|c| c.start == Some(0) && c.wait.is_none()));
        assert!(conns[12..]
            .iter()
            .all(|c| c.on_recv_done == Some(2 * per - 1)));
        assert_eq!((conns[0].src, conns[0].dst), (10, 11));
    }
}
