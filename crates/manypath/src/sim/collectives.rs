//! The `collectives` and `collective_steps` tables: each run of a collective job (one
//! per iteration) from its flows' starts and receive-dones, with its α–β lower bound.
//! Computed once when the results are collected; nothing here runs per packet.
//!
//! The bound (`ideal_cct`) is the α–β model of the algorithm on this fabric: every
//! transfer takes its ideal time alone on its idle path (`metrics::ideal`: serialisation
//! of its packets with their headers at each link's rate, store and forward, propagation:
//! α is the path's latency, β its rate), a transfer starts as soon as its trigger would
//! fire on those times (plus the trigger's delay; a step more when the news has to cross
//! the fabric, as the run starts it: `sim::triggers`), and the collective ends with its
//! last transfer's last byte. For the usual algorithms this is their textbook cost —
//! 2(N−1)(α + S/N·β) for the ring all-reduce, log₂N·(α + S·β) for recursive doubling —
//! with α and β of the actual paths. It is no smaller than the time the busiest host's
//! NIC needs for the bytes it sends or receives.

use super::results::IdealTimes;
use super::triggers::{NOT_RECEIVED, NO_TRIGGER};
use super::{Sim, NOT_STARTED};
use crate::metrics::{CollectiveRecord, CollectiveStepRecord};
use crate::time::SimTime;
use crate::workload::TriggerKind;
use std::collections::{BTreeMap, HashMap};

impl Sim {
    /// The collectives' rows and their steps' (both empty without collectives).
    pub(super) fn collective_records(
        &self,
        ideal: &[Option<IdealTimes>],
    ) -> (Vec<CollectiveRecord>, Vec<CollectiveStepRecord>) {
        let runs = self.plan.collectives();
        if runs.is_empty() {
            return (Vec::new(), Vec::new());
        }
        let mut members: Vec<Vec<u32>> = vec![Vec::new(); runs.len()];
        for (i, f) in self.flows.iter().enumerate() {
            if let Some(c) = f.spec.deps.collective {
                members[c.instance as usize].push(i as u32);
            }
        }
        let mut rows: Vec<CollectiveRecord> = Vec::with_capacity(runs.len());
        let mut steps = Vec::new();
        // Scratch for the bounds: per trigger, per host (`ideal_cct`).
        let mut fed = vec![(0u32, 0, 0); self.closed.triggers.kind.len()];
        let mut volume = vec![(0u64, 0u64); self.net.host_nic.len()];
        let mut job_start: HashMap<u32, Option<SimTime>> = HashMap::new();
        for (k, (run, flows)) in runs.iter().zip(&members).enumerate() {
            let start = flows
                .iter()
                .map(|&f| self.flows[f as usize].spec.start)
                .filter(|&t| t != NOT_STARTED)
                .min();
            let ends: Vec<Option<SimTime>> = flows.iter().map(|&f| self.received_at(f)).collect();
            let end = ends
                .iter()
                .copied()
                .collect::<Option<Vec<SimTime>>>()
                .and_then(|e| e.into_iter().max());
            let straggler = end.and_then(|_| {
                let (i, _) = ends
                    .iter()
                    .enumerate()
                    .max_by_key(|&(i, e)| (e.unwrap_or(0), std::cmp::Reverse(i)))?;
                let host = self.flows[flows[i] as usize].spec.dst;
                let rank = run.hosts.iter().position(|&h| h == host)? as u32;
                Some((rank, host))
            });
            let first = *job_start.entry(run.job).or_insert(start);
            rows.push(CollectiveRecord {
                job: run.job,
                iteration: run.iteration,
                collective: run.collective.name(),
                algorithm: run.algorithm.name(),
                ranks: run.hosts.len() as u32,
                bytes: run.bytes,
                flows: flows.len() as u32,
                start,
                end,
                ideal: self.ideal_cct(flows, ideal, &mut fed, &mut volume),
                job_start: first,
                straggler,
            });
            let mut by_step: BTreeMap<u16, CollectiveStepRecord> = BTreeMap::new();
            for (j, &f) in flows.iter().enumerate() {
                let spec = &self.flows[f as usize].spec;
                let step = spec.deps.collective.map_or(0, |c| c.step);
                let r = by_step.entry(step).or_insert(CollectiveStepRecord {
                    collective: k as u32,
                    step,
                    flows: 0,
                    bytes: 0,
                    start: None,
                    end: Some(0),
                });
                r.flows += 1;
                r.bytes += spec.size.unwrap_or(0);
                if spec.start != NOT_STARTED {
                    r.start = Some(r.start.map_or(spec.start, |s: SimTime| s.min(spec.start)));
                }
                r.end = r.end.zip(ends[j]).map(|(a, b)| a.max(b));
            }
            steps.extend(by_step.into_values());
        }
        (rows, steps)
    }

    /// When flow `f`'s receiver had all of it (`None`: not yet, or not watched).
    fn received_at(&self, f: u32) -> Option<SimTime> {
        let t = *self.closed.triggers.received.get(f as usize)?;
        (t != NOT_RECEIVED).then_some(t)
    }

    /// The α–β lower bound on the completion of the collective run made of `flows`
    /// (in generation order, which is the order of its dependencies), from its start:
    /// see the module's comment. `None` when a flow has no ideal time (no route) or the
    /// run's triggers are not all fed from within it.
    /// `fed` (per trigger: activations from within the run, earliest and latest) and
    /// `volume` (per host: wire bytes out and in) are scratch, all zero on entry and on
    /// return.
    fn ideal_cct(
        &self,
        flows: &[u32],
        ideal: &[Option<IdealTimes>],
        fed: &mut [(u32, SimTime, SimTime)],
        volume: &mut [(u64, u64)],
    ) -> Option<SimTime> {
        let bound = self.chain_bound(flows, ideal, fed, volume);
        for &f in flows {
            let flow = &self.flows[f as usize];
            let tr = &self.closed.triggers;
            for t in [tr.on_finish.get(f as usize), tr.on_received.get(f as usize)]
                .into_iter()
                .flatten()
            {
                if *t != NO_TRIGGER {
                    fed[*t as usize] = (0, 0, 0);
                }
            }
            volume[flow.spec.src as usize] = (0, 0);
            volume[flow.spec.dst as usize] = (0, 0);
        }
        bound
    }

    fn chain_bound(
        &self,
        flows: &[u32],
        ideal: &[Option<IdealTimes>],
        fed: &mut [(u32, SimTime, SimTime)],
        volume: &mut [(u64, u64)],
    ) -> Option<SimTime> {
        let tr = &self.closed.triggers;
        let mut end: SimTime = 0;
        let mut hosts: Vec<u32> = Vec::new();
        for &f in flows {
            let flow = &self.flows[f as usize];
            let x = ideal[f as usize]?;
            let start = match tr.waits_for(&flow.spec) {
                None => 0,
                Some(t) => match fed[t as usize] {
                    // Fed from outside the run (a previous iteration): the run's start.
                    (0, _, _) => 0,
                    (n, first, last) => {
                        let at = match tr.kind[t as usize] {
                            TriggerKind::Oneshot => first,
                            TriggerKind::Barrier { count } if n >= count => last,
                            TriggerKind::Barrier { .. } | TriggerKind::Multishot => return None,
                        };
                        let signal = if tr.local[t as usize] {
                            0
                        } else {
                            self.windows.step
                        };
                        at + self.closed.think[f as usize].max(signal)
                    }
                },
            };
            let done = [
                (tr.on_finish.get(f as usize), start + x.fct),
                (tr.on_received.get(f as usize), start + x.received),
            ];
            for (t, at) in done {
                if let Some(&t) = t.filter(|&&t| t != NO_TRIGGER) {
                    let e = &mut fed[t as usize];
                    *e = if e.0 == 0 {
                        (1, at, at)
                    } else {
                        (e.0 + 1, e.1.min(at), e.2.max(at))
                    };
                }
            }
            end = end.max(start + x.received);
            for (h, out) in [(flow.spec.src, true), (flow.spec.dst, false)] {
                let v = &mut volume[h as usize];
                if *v == (0, 0) {
                    hosts.push(h);
                }
                if out {
                    v.0 += x.wire;
                } else {
                    v.1 += x.wire;
                }
            }
        }
        let nic = hosts
            .iter()
            .map(|&h| {
                let (out, inn) = volume[h as usize];
                let port = &self.net.ports[self.net.host_nic[h as usize] as usize];
                (out.max(inn) as f64 * 8.0 / port.rate.bits_per_sec() as f64 * 1e12) as SimTime
            })
            .max()
            .unwrap_or(0);
        Some(end.max(nic))
    }
}
