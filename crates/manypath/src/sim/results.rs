//! Result collection: the flow and queue time series (`Sample` events), each flow's
//! record (summed over its copies, or its share of its persistent connections'
//! counters), and the result tables and run counters at the end.

use super::events::EventKind;
use super::triggers::NOT_RECEIVED;
use super::WireKind;
use super::{Sim, MAX_COPIES, SAMPLE_FLOWS};
use crate::connection::Endpoints;
use crate::metrics::ideal::{ideal_delivery, ideal_fct, ideal_received, Hop, Segments};
use crate::metrics::{
    histogram_quantile, FlowRecord, FlowSample, QueueRecord, QueueSample, RecoveryCounters,
    Results, RunCounters, SubflowRecord,
};
use crate::net::network::{LoadBalancing, Network, NO_RWNDQ};
use crate::net::pfc::CLASSES;
use crate::time::SimTime;
use crate::transport::mptcp::sender::MptcpCounters;
use crate::transport::pair::ServerCounters;
use crate::transport::roce::RocePair;
use crate::transport::tcp::SenderStats;

/// The packets' fates over the run, for the counters table.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Counts {
    pub hops: u64,
    pub delivered: u64,
    pub dropped: u64,
    /// Packets a switch had no route for (a failed link cut the destination off).
    pub route_drops: u64,
    /// The most packets alive at a window boundary (sampled there, the same for any
    /// number of threads).
    pub peak_packets: u64,
}

/// The time series: each flow's and each sampled queue's samples so far.
#[derive(Default)]
pub(super) struct Sampling {
    pub flow_samples: Vec<FlowSample>,
    pub queue_samples: Vec<QueueSample>,
    /// The switch ports the queue series covers.
    pub sampled_ports: Vec<u32>,
}

/// What a flow's record adds up from its connections' counters.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Tally {
    stats: SenderStats,
    mptcp: MptcpCounters,
    recovery: RecoveryCounters,
}

/// A message's counters on its persistent connections: each copy's connection counters
/// when it started, and, once finished, its share of them.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct PersistentTally {
    pub base: [Tally; MAX_COPIES],
    pub share: Option<Tally>,
}

impl Tally {
    pub(super) fn of(ep: &Endpoints) -> Tally {
        Tally {
            stats: ep.stats(),
            mptcp: ep.mptcp_counters(),
            recovery: ep.recovery_counters(),
        }
    }

    /// `self − base` for counters, and `self + other` with `subtract = false`.
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
                    naks: g(a.naks, b.naks),
                    cnps: g(a.cnps, b.cnps),
                    pulls: f(a.pulls, b.pulls),
                    nacks: g(a.nacks, b.nacks),
                    trimmed: g(a.trimmed, b.trimmed),
                    grants: g(a.grants, b.grants),
                    resends: g(a.resends, b.resends),
                }
            },
        }
    }
}

/// A flow's times alone on an idle path (`Sim::ideal_times`), and its bytes on the wire.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct IdealTimes {
    pub fct: SimTime,
    pub received: SimTime,
    /// Its payload and each segment's header.
    pub wire: u64,
}

fn wire(size: u64, seg: Segments) -> u64 {
    size + size.div_ceil(seg.mss.max(1) as u64) * seg.header as u64
}

impl Sim {
    /// Records one row of the flow or queue time series and schedules the next.
    pub(super) fn sample(&mut self, what: u32) {
        let now = self.now;
        let period = if what == SAMPLE_FLOWS {
            let period = self.plan.flow_sample.expect("flow sampling is on");
            let since = now.saturating_sub(period);
            for (i, f) in self.flows.iter().enumerate() {
                // Running flows of their own, and those that finished since the previous
                // sample (the first copy stands for the flow); in a run over several
                // threads, the flows this partition runs.
                if f.spec.conn.is_some()
                    || !self.owns_node(f.spec.src)
                    || f.spec.start > now
                    || f.finish.is_some_and(|t| t <= since)
                {
                    continue;
                }
                let c = &self.conns[f.conns[0] as usize];
                // A RoCE queue pair: bytes acknowledged, and its window (or 0) as cwnd.
                if let Some((bytes_acked, cwnd)) = c.ep.as_roce().map(RocePair::sample) {
                    self.sampling.flow_samples.push(FlowSample {
                        time: now,
                        flow: i as u32,
                        subflow: 0,
                        bytes_acked,
                        cwnd,
                        srtt: 0,
                    });
                }
                for (k, s) in c.ep.senders().iter().enumerate() {
                    self.sampling.flow_samples.push(FlowSample {
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
            for i in 0..self.sampling.sampled_ports.len() {
                let p = self.sampling.sampled_ports[i];
                let port = &self.net.ports[p as usize];
                if let Some(part) = self.part.as_deref() {
                    if part.owner[port.owner as usize] != part.me {
                        continue;
                    }
                }
                // A `TxDone` due now runs before a sample at the same time.
                self.settle_port(p, now + 1);
                let port = &mut self.net.ports[p as usize];
                port.queue.advance_to_read(now, port.rate);
                self.sampling.queue_samples.push(QueueSample {
                    time: now,
                    port: p,
                    packets: port.queue.packets(),
                    bytes: port.queue.bytes(),
                    rwndq_window: if port.rwndq == NO_RWNDQ {
                        0
                    } else {
                        self.net.rwndq[port.rwndq as usize].wnd
                    },
                    buffer_bytes: self
                        .fabric
                        .buffers
                        .get(port.owner as usize)
                        .and_then(|b| b.as_ref())
                        .map_or(0, |b| b.sb.total()),
                });
            }
            self.plan.queue_sample.expect("queue sampling is on")
        };
        if now + period <= self.plan.duration {
            self.events
                .schedule(now + period, EventKind::Sample, what, 0);
        }
    }

    /// What flow `f`'s copies' persistent connections counted since it started.
    pub(super) fn persistent_share(&self, f: u32) -> Tally {
        let flow = &self.flows[f as usize];
        flow.copies()
            .iter()
            .enumerate()
            .map(|(k, &c)| {
                let base = flow
                    .persistent
                    .as_ref()
                    .map_or(Tally::default(), |p| p.base[k]);
                Tally::of(&self.conns[c as usize].ep).combine(&base, true)
            })
            .fold(Tally::default(), |acc, t| acc.combine(&t, false))
    }

    /// What flow `i`'s copies' persistent connections' servers counted from its start
    /// until its finish, or until the run's end (`end`): the changes at times in
    /// [start, finish), or [start, end]. The client's own counters are read at its
    /// start and finish as they happen (`persistent_share`); the server's run on
    /// another host, whose changes at the same instant as the start or finish may run
    /// before or after it, so they count by time alone.
    fn server_share(&self, i: usize, end: SimTime) -> ServerCounters {
        let f = &self.flows[i];
        let until = f.finish.unwrap_or(end + 1);
        let before = |c: u32, t: SimTime| {
            let log = &self.server_log[c as usize];
            let n = log.partition_point(|&(at, _)| at < t);
            n.checked_sub(1)
                .map_or(ServerCounters::default(), |k| log[k].1)
        };
        let mut sum = ServerCounters::default();
        for &c in f.copies() {
            let d = before(c, until).since(&before(c, f.spec.start));
            sum.ir_recovered += d.ir_recovered;
            sum.trimmed += d.trimmed;
        }
        sum
    }

    /// Packets still queued or on a link, counted from the queues and pending events
    /// (independently of the arena's own count).
    pub(super) fn packets_in_flight(&self) -> u64 {
        let queued = self
            .net
            .ports
            .iter()
            .map(|p| p.queue.queued_ids().count() as u64)
            .sum::<u64>();
        let on_links = self
            .events
            .iter()
            // On links, and held by a receiving host's processing (`host_rx`).
            .filter(|e| matches!(e.kind(), EventKind::Arrive | EventKind::HostRx))
            .count() as u64;
        queued + on_links
    }

    /// Flow `i`'s ideal FCT (`metrics::ideal`) and ideal receive-done (its last byte's
    /// arrival): on the best path of its copies' subflows, as routed at the end of the
    /// run. `None` for long-lived flows and flows with no route.
    pub(super) fn ideal_times(
        &mut self,
        i: usize,
        data: &mut Vec<u32>,
        ack: &mut Vec<u32>,
    ) -> Option<IdealTimes> {
        let f = &self.flows[i];
        let size = f.spec.size?;
        let t = &self.plan.transports[f.spec.transport as usize];
        // A RoCE queue pair has no handshake; its packets are its payload and headers.
        let first = &self.conns[f.conns[0] as usize];
        let (seg, handshake) = match (t.roce, t.ndp) {
            (Some(r), _) => (
                Segments {
                    mss: r.payload,
                    header: first.wire.header,
                },
                false,
            ),
            // NDP has no handshake either.
            (None, Some(n)) => (
                Segments {
                    mss: n.payload,
                    header: first.wire.header,
                },
                false,
            ),
            (None, None) => (
                Segments {
                    mss: t.tcp.mss,
                    header: t.tcp.header,
                },
                // A flow of its own opens its connection; on a persistent one, only a
                // pool's response that found none idle did.
                f.spec.conn.is_none() || self.opened_connection(i),
            ),
        };
        let spray = self.plan.load_balancing == LoadBalancing::Spray;
        let hops = |net: &Network, ports: &[u32]| -> Vec<Hop> {
            ports
                .iter()
                .map(|&p| Hop {
                    rate: net.ports[p as usize].rate,
                    delay: net.ports[p as usize].delay,
                })
                .collect()
        };
        let mut best: Option<IdealTimes> = None;
        for &c in f.copies() {
            let conn = &self.conns[c as usize];
            for h in &conn.hash {
                data.clear();
                ack.clear();
                let reached = if conn.wire.pinned != 0 {
                    data.extend(self.net.pinned_ports(h[0]));
                    ack.extend(self.net.pinned_ports(h[1]));
                    !data.is_empty() && !ack.is_empty()
                } else if spray {
                    // Spraying draws a next hop per packet; every equal-cost path is as
                    // long, so the first stands for them.
                    self.net.indexed_path(conn.src, conn.dst, 0, data)
                        && self.net.indexed_path(conn.dst, conn.src, 0, ack)
                } else {
                    self.net.ecmp_path(conn.src, conn.dst, h[0], data)
                        && self.net.ecmp_path(conn.dst, conn.src, h[1], ack)
                };
                if reached {
                    // A Homa message is done when its last byte arrives: no
                    // handshake, no acknowledgment back.
                    let times = if t.homa.is_some() {
                        let d = ideal_delivery(size, seg, &hops(&self.net, data));
                        IdealTimes {
                            fct: d,
                            received: d,
                            wire: wire(size, seg),
                        }
                    } else {
                        let (d, a) = (hops(&self.net, data), hops(&self.net, ack));
                        IdealTimes {
                            fct: ideal_fct(size, seg, &d, &a, handshake),
                            received: ideal_received(size, seg, &d, &a, handshake),
                            wire: wire(size, seg),
                        }
                    };
                    best = Some(match best {
                        Some(b) if b.fct <= times.fct => b,
                        _ => times,
                    });
                }
            }
        }
        best
    }

    /// Flow `i`'s record at the end of the run (`end`). A flow of its own reports its
    /// connections' counters, summed over its copies; a message on persistent
    /// connections reports what they counted while it was outstanding.
    fn flow_record(&self, i: usize, end: SimTime) -> FlowRecord {
        let f = &self.flows[i];
        let spec = &f.spec;
        let first = &self.conns[f.conns[0] as usize];
        let t = match (spec.conn, f.persistent.as_ref().and_then(|p| p.share)) {
            (None, _) => f
                .copies()
                .iter()
                .map(|&c| Tally::of(&self.conns[c as usize].ep))
                .fold(Tally::default(), |acc, t| acc.combine(&t, false)),
            (Some(_), Some(share)) => share,
            (Some(_), None) if spec.start <= end => self.persistent_share(i as u32),
            (Some(_), None) => Tally::default(),
        };
        let mut t = t;
        if spec.conn.is_some() && spec.start <= end {
            self.server_share(i, end).set_in(&mut t.recovery);
        }
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
            started: f.started,
            // Long-lived flows have no FCT; their goodput is the window's.
            measured: spec.size.is_none() || spec.start >= warmup,
            ideal_fct: None,
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
            matrix_id: spec.deps.matrix_id,
            received: self
                .closed
                .triggers
                .received
                .get(i)
                .copied()
                .filter(|&t| t != NOT_RECEIVED),
            collective: spec.deps.collective,
        }
    }

    /// Port `i`'s shared-buffer and PFC columns, on `r` (`secs`: the run's length, ps).
    fn fabric_record(&self, i: usize, secs: f64, mut r: QueueRecord) -> QueueRecord {
        let Some(f) = self.fabric.ports.get(i) else {
            return r;
        };
        let owner = self.net.ports[i].owner as usize;
        if let Some(b) = &self.fabric.buffers[owner] {
            r.buffer_mean_bytes = b.area as f64 / secs;
            r.buffer_peak_bytes = b.sb.peak_total();
            for c in 0..CLASSES {
                let q = b.sb.counters(f.local as usize * CLASSES + c);
                r.buffer_drops_threshold += q.drops_threshold;
                r.buffer_drops_full += q.drops_buffer_full;
            }
        }
        r.pfc_pauses_sent = f.xoff_sent;
        r.pfc_resumes_sent = f.xon_sent;
        r.pfc_pauses_received = f.xoff_received;
        r.pfc_paused_time = f.paused_time;
        if let Some(p) = &self.fabric.pfc[owner] {
            r.headroom_drops = p.overflow_drops[f.local as usize];
        }
        r
    }

    /// Collects the results; `wall_secs` is the wall-clock time the caller measured.
    pub fn results(&mut self, wall_secs: f64) -> Results {
        let end = self.now;
        // Hops counted for packets a committed queue had admitted but not started, and
        // the `TxDone`s counted in place for a trimming queue's fixed headers that had not
        // started (`Sim::enqueue_trimming`): they would have run after the end.
        let (mut late_hops, mut late_tx_dones) = (0, 0);
        for p in &mut self.net.ports {
            // A packet starting at the end has started: the run handles events at its
            // end time.
            p.queue.advance(end + 1, p.rate);
            p.queue.finish(end);
            let late = p.queue.not_started(p.busy_until).0;
            late_hops += late;
            if p.queue.trims() {
                late_tx_dones += late;
            }
        }
        self.fabric.finish(&self.net, end);
        let warmup = self.plan.warmup;
        let mut flows: Vec<FlowRecord> = (0..self.flows.len())
            .map(|i| self.flow_record(i, end))
            .collect();
        let (mut data, mut ack) = (Vec::new(), Vec::new());
        let ideal: Vec<Option<IdealTimes>> = (0..flows.len())
            .map(|i| self.ideal_times(i, &mut data, &mut ack))
            .collect();
        for (r, x) in flows.iter_mut().zip(&ideal) {
            r.ideal_fct = x.map(|x| x.fct);
        }
        let (collectives, collective_steps) = self.collective_records(&ideal);
        // Subflows of the multipath flows that have connections of their own.
        let subflows = self
            .flows
            .iter()
            .enumerate()
            .filter(|(_, f)| f.spec.conn.is_none())
            .map(|(i, f)| (i, &self.conns[f.conns[0] as usize]))
            .filter(|(_, c)| match c.ep {
                Endpoints::Tcp(_) | Endpoints::Roce(_) | Endpoints::Ndp(_) | Endpoints::Homa(_) => {
                    false
                }
                Endpoints::Mptcp(_) => true,
            })
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
                let trim = p.queue.trim_stats();
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
                    trimmed: trim.map_or(0, |t| t.trimmed),
                    header_drops: trim.map_or(0, |t| t.header_drops),
                    returned: trim.map_or(0, |t| t.returned),
                    ..self.fabric_record(i, secs, QueueRecord::of_port(net, i as u32))
                }
            })
            .collect();
        let counters = RunCounters {
            events: self
                .merged
                .as_ref()
                .map_or(self.events.processed(), |m| m.events)
                - late_tx_dones,
            packet_hops: self.counts.hops - late_hops,
            sim_time: end,
            wall_secs,
            packets_created: self
                .merged
                .as_ref()
                .map_or(self.pkts.created(), |m| m.created),
            packets_delivered: self.counts.delivered,
            packets_dropped: self.counts.dropped,
            packets_in_flight: self
                .merged
                .as_ref()
                .map_or_else(|| self.packets_in_flight(), |m| m.in_flight),
            flows: self.flows.len() as u64,
            flows_started: flows.iter().filter(|f| f.started).count() as u64,
            flows_completed: flows.iter().filter(|f| f.finish.is_some()).count() as u64,
            seed: self.plan.seed,
            peak_packets: self.counts.peak_packets,
            partial: self.partial,
            fault_drops: self.net.ports.iter().map(|p| p.fault_drops).sum(),
            route_drops: self.counts.route_drops,
            pfc_pauses: self.fabric.ports.iter().flat_map(|p| p.xoff_sent).sum(),
            pfc_resumes: self.fabric.ports.iter().flat_map(|p| p.xon_sent).sum(),
            headroom_drops: self.lossless.headroom_drops,
            deadlocks: self.lossless.deadlocks,
            deadlock_message: self.lossless.deadlock_message.clone(),
        };
        Results {
            name: self.plan.name.clone(),
            flows,
            subflows,
            queues,
            flow_samples: std::mem::take(&mut self.sampling.flow_samples),
            queue_samples: std::mem::take(&mut self.sampling.queue_samples),
            collectives,
            collective_steps,
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
            warnings: self.run_warnings(),
            roce: self.conns.iter().any(|c| c.wire.kind.is_roce()),
            ndp: self.conns.iter().any(|c| c.wire.kind == WireKind::Ndp),
            trim: self.net.ports.iter().any(|p| p.queue.trims()),
            homa: self.homa.is_some(),
            matrix: self.flows.iter().any(|f| f.spec.deps.matrix_id.is_some()),
            received: !self.closed.triggers.received.is_empty(),
            fabric: self.fabric_on,
            parallel: None,
        }
    }

    /// The scenario's warnings, and the flows a trigger never started.
    fn run_warnings(&self) -> Vec<(String, String)> {
        let mut w = self.plan.warnings.clone();
        let (n, first) = self.never_triggered();
        if n > 0 {
            let names: Vec<String> = first
                .iter()
                .map(|&f| match self.flows[f as usize].spec.deps.matrix_id {
                    Some(id) if id > 0 => format!("flow {f} (connection {id})"),
                    _ => format!("flow {f}"),
                })
                .collect();
            let more = if n > first.len() { ", ..." } else { "" };
            w.push((
                "traffic".into(),
                format!(
                    "{n} flow(s) never started: their trigger never fired ({}{more})",
                    names.join(", ")
                ),
            ));
        }
        w
    }
}
