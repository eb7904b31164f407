//! The `matrix` pattern: the flows of a connection matrix (htsim's file format, read
//! and checked in `scenario::traffic::matrix`), with the triggers that start some of
//! them when others finish or are delivered. A collective (`collective`) is one too,
//! generated instead of read, with each flow's place in it.

use super::collective::{Algorithm, Collective};
use super::{CollectiveStep, Deps, FlowSpec, TrafficGen, Trigger};
use crate::time::SimTime;

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
}

impl MatrixGen {
    /// Appends the matrix's flows, in file order, with entry `g`'s transport, class and
    /// priority; timed ones start at the entry's start plus their own.
    pub(super) fn generate(&self, g: &TrafficGen, out: &mut Vec<FlowSpec>) {
        let global = |t: Option<u32>| t.map(|t| self.trigger_base + t);
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
}
