//! The `matrix` pattern: the flows of a connection matrix (htsim's file format, read
//! and checked in `scenario::traffic::matrix`), with the triggers that start some of
//! them when others finish or are delivered.

use super::{Deps, FlowSpec, TrafficGen, Trigger};
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
    /// Indices in the file's triggers (`MatrixGen::triggers`).
    pub wait: Option<u32>,
    pub on_send_done: Option<u32>,
    pub on_recv_done: Option<u32>,
}

/// A connection matrix, checked: its connections in file order and its triggers.
#[derive(Clone, Debug, PartialEq)]
pub struct MatrixGen {
    pub conns: Vec<MatrixConn>,
    pub triggers: Vec<Trigger>,
    /// The index of the file's first trigger in the run's list (`Plan::triggers`): the
    /// triggers of earlier entries come before.
    pub trigger_base: u32,
    /// From a trigger's firing to the start of the flows it starts (compute time).
    pub delay: SimTime,
}

impl MatrixGen {
    /// Appends the matrix's flows, in file order, with entry `g`'s transport, class and
    /// priority; timed ones start at the entry's start plus their own.
    pub(super) fn generate(&self, g: &TrafficGen, out: &mut Vec<FlowSpec>) {
        let global = |t: Option<u32>| t.map(|t| self.trigger_base + t);
        out.extend(self.conns.iter().map(|c| FlowSpec {
            src: c.src,
            dst: c.dst,
            size: Some(c.size),
            start: c.start.map_or(self.delay, |s| g.start.saturating_add(s)),
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

    #[test]
    fn a_matrix_gives_its_flows_in_file_order_with_the_runs_trigger_numbers() {
        let conn = |src, id, start, wait| MatrixConn {
            src,
            dst: 0,
            id,
            start,
            size: 1000 * id as u64,
            wait,
            on_send_done: Some(0),
            on_recv_done: None,
        };
        let m = MatrixGen {
            conns: vec![conn(1, 1, Some(5), None), conn(2, 2, None, Some(0))],
            triggers: vec![Trigger {
                kind: TriggerKind::Oneshot,
                id: 7,
            }],
            trigger_base: 3,
            delay: 9,
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
