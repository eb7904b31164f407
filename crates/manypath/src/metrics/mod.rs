//! What a run reports: one record per flow, one per output queue, and run counters.

pub mod ideal;

use crate::net::network::{Network, NodeKind};
use crate::time::SimTime;
use crate::workload::CollectiveStep;

#[derive(Clone, Debug, PartialEq)]
pub struct FlowRecord {
    pub id: u32,
    pub src: u32,
    pub dst: u32,
    pub transport: u16,
    pub class: u16,
    pub job: i64,
    /// Bytes, `None` for long-lived flows.
    pub size: Option<u64>,
    pub start: SimTime,
    /// When every data byte was acknowledged at the sender.
    pub finish: Option<SimTime>,
    /// The flow had started by the end of the run (a flow still running then is
    /// censored: started, not finished).
    pub started: bool,
    /// The flow starts at or after the measurement window's start (`measure_from_ms`);
    /// a flow that never started counts as starting after the end.
    pub measured: bool,
    /// The FCT the model gives this flow alone on an idle network along its (best)
    /// path; `None` for long-lived flows (see `ideal::ideal_fct`).
    pub ideal_fct: Option<SimTime>,
    pub bytes_sent: u64,
    pub bytes_retx: u64,
    pub bytes_acked: u64,
    /// Finished flows: size·8/FCT. Others: bytes acknowledged after the warm-up over the
    /// time measured.
    pub goodput_bps: f64,
    pub timeouts: u32,
    pub fast_retx: u32,
    /// Subflows of the connection (1 for TCP).
    pub subflows: u32,
    /// AMP's subflow suppression and release episodes.
    pub ssr_suppressions: u32,
    pub ssr_releases: u32,
    /// FUSO: payload bytes of the recovery copies sent for this flow.
    pub recovery_bytes: u64,
    /// FUSO: sends of new subflow data beyond the subflow's congestion window.
    pub window_violations: u64,
    /// Copies of the flow, each on its own connection (RepFlow: 2).
    pub copies: u32,
    /// Loss-recovery counters (single-path TCP; 0 for multipath flows).
    pub recovery: RecoveryCounters,
    /// The flow's connection id in its connection-matrix file (`None`: not from a
    /// matrix, or the file gave it none).
    pub matrix_id: Option<u32>,
    /// When its receiver had every byte (receive-done), for flows whose receive-done
    /// is watched (it activates a trigger); `None` otherwise or not yet.
    pub received: Option<SimTime>,
    /// A collective's flow: which run of which collective, and its step.
    pub collective: Option<CollectiveStep>,
}

/// One run (iteration) of a collective job: the `collectives` table.
#[derive(Clone, Debug, PartialEq)]
pub struct CollectiveRecord {
    pub job: u32,
    pub iteration: u32,
    pub collective: &'static str,
    pub algorithm: &'static str,
    pub ranks: u32,
    /// The buffer, in bytes.
    pub bytes: u64,
    pub flows: u32,
    /// Its first flow's start (`None`: none started).
    pub start: Option<SimTime>,
    /// Its last flow's receive-done (`None`: not complete).
    pub end: Option<SimTime>,
    /// The α–β lower bound on its completion time (`collectives::ideal_cct`).
    pub ideal: Option<SimTime>,
    /// The job's first iteration's start (for its completion time so far).
    pub job_start: Option<SimTime>,
    /// The rank, and its host, that received last.
    pub straggler: Option<(u32, u32)>,
}

/// One step of a collective run: the `collective_steps` table.
#[derive(Clone, Debug, PartialEq)]
pub struct CollectiveStepRecord {
    /// Its run's row in the `collectives` table.
    pub collective: u32,
    pub step: u16,
    pub flows: u32,
    pub bytes: u64,
    pub start: Option<SimTime>,
    pub end: Option<SimTime>,
}

/// A TCP flow's per-packet loss-recovery counters.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RecoveryCounters {
    /// Data segments sent, retransmissions included (not copies or coded packets).
    pub packets_sent: u64,
    pub packets_retx: u64,
    /// Timeouts of the SYN (included in `timeouts`).
    pub syn_timeouts: u32,
    pub tlp_probes: u32,
    pub ir_coded: u32,
    /// Segments the receiver rebuilt from TCP-IR coded packets.
    pub ir_recovered: u32,
    pub proactive_copies: u64,
    /// RoCE: NAKs and CNPs the requester received.
    pub naks: u32,
    pub cnps: u32,
    /// NDP: PULLs the sender received, NACKs (returned headers included), and trimmed
    /// headers the receiver got.
    pub pulls: u64,
    pub nacks: u32,
    pub trimmed: u32,
    /// Homa: GRANTs and RESENDs the sender received.
    pub grants: u32,
    pub resends: u32,
}

/// One subflow of a multipath flow.
#[derive(Clone, Debug, PartialEq)]
pub struct SubflowRecord {
    pub flow: u32,
    pub subflow: u32,
    pub bytes_sent: u64,
    pub bytes_retx: u64,
    pub bytes_acked: u64,
    pub timeouts: u32,
    pub fast_retx: u32,
}

impl FlowRecord {
    pub fn fct(&self) -> Option<SimTime> {
        self.finish.map(|f| f - self.start)
    }
}

/// One subflow of one running flow at one sampling time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlowSample {
    pub time: SimTime,
    pub flow: u32,
    pub subflow: u32,
    pub bytes_acked: u64,
    pub cwnd: f64,
    /// Smoothed RTT (0 before the first sample).
    pub srtt: SimTime,
}

/// One switch port's queue at one sampling time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QueueSample {
    pub time: SimTime,
    pub port: u32,
    pub packets: u64,
    pub bytes: u64,
    /// RWNDQ's per-connection window on the port (0 where RWNDQ is off).
    pub rwndq_window: u32,
    /// Bytes in the shared buffer of the port's switch (0 without `network.buffer`).
    pub buffer_bytes: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct QueueRecord {
    pub port: u32,
    pub node: String,
    pub is_host: bool,
    pub tier: &'static str,
    pub peer: String,
    pub rate_bps: u64,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    /// Fraction of the run the link was busy serialising.
    pub utilization: f64,
    pub enqueued: u64,
    /// Queue (congestion) drops.
    pub drops: u64,
    /// Of the drops, those RED made before the queue was full.
    pub early_drops: u64,
    /// Packets the link lost to faults (loss models, black holes, the link being down).
    pub fault_drops: u64,
    /// Runs of consecutive packets the link lost to faults.
    pub fault_bursts: u64,
    /// Configured long-run loss rate of the link's random loss models (0: none).
    pub loss_rate: f64,
    /// Share of the flow-hash space the link black-holes (0: none).
    pub blackhole_fraction: f64,
    pub ecn_marks: u64,
    pub max_packets: u64,
    pub max_bytes: u64,
    pub mean_packets: f64,
    pub mean_bytes: f64,
    /// Time-weighted occupancy percentiles in packets (NaN without a histogram).
    pub p50_packets: f64,
    pub p95_packets: f64,
    pub p99_packets: f64,
    /// RWNDQ runs on this port.
    pub rwndq: bool,
    /// RWNDQ: connections counted at the end of the run, and at most at once.
    pub rwndq_flows: u32,
    pub rwndq_peak_flows: u32,
    /// RWNDQ: the per-connection window at the end of the run, in bytes.
    pub rwndq_window: u32,
    /// RWNDQ: ACKs whose receive window the port lowered.
    pub rwndq_rewrites: u64,
    /// The shared buffer of the port's switch: mean and peak occupancy in bytes (NaN
    /// and 0 without `network.buffer`).
    pub buffer_mean_bytes: f64,
    pub buffer_peak_bytes: u64,
    /// Of this port's drops, those its switch's shared buffer made: the queue over its
    /// dynamic threshold, or the buffer full.
    pub buffer_drops_threshold: u64,
    pub buffer_drops_full: u64,
    /// PFC, per priority class: PAUSE and RESUME frames the port's switch sent on the
    /// port (to its peer), PAUSE frames the port received, and how long the peer kept
    /// the class paused (ps).
    pub pfc_pauses_sent: [u64; 2],
    pub pfc_resumes_sent: [u64; 2],
    pub pfc_pauses_received: [u64; 2],
    pub pfc_paused_time: [SimTime; 2],
    /// Packets that came in by this port and found PFC headroom and shared pool full.
    pub headroom_drops: u64,
    /// NDP's trimming queue: data packets cut to their header, headers dropped at the
    /// full header queue (included in `drops`), and trimmed headers returned to their
    /// sender (included in `drops`).
    pub trimmed: u64,
    pub header_drops: u64,
    pub returned: u64,
}

impl QueueRecord {
    /// Port `i` of `net`: its identity, every counter zero and the occupancy statistics
    /// unknown (NaN). Simulators fill in what they measure.
    pub fn of_port(net: &Network, i: u32) -> QueueRecord {
        let p = &net.ports[i as usize];
        QueueRecord {
            port: i,
            node: net.names[p.owner as usize].clone(),
            is_host: net.kinds[p.owner as usize] == NodeKind::Host,
            tier: net.tiers[p.tier as usize],
            peer: net.names[p.peer as usize].clone(),
            rate_bps: p.rate.bits_per_sec(),
            tx_packets: 0,
            tx_bytes: 0,
            utilization: 0.0,
            enqueued: 0,
            drops: 0,
            early_drops: 0,
            fault_drops: 0,
            fault_bursts: 0,
            loss_rate: 0.0,
            blackhole_fraction: 0.0,
            ecn_marks: 0,
            max_packets: 0,
            max_bytes: 0,
            mean_packets: f64::NAN,
            mean_bytes: f64::NAN,
            p50_packets: f64::NAN,
            p95_packets: f64::NAN,
            p99_packets: f64::NAN,
            rwndq: false,
            rwndq_flows: 0,
            rwndq_peak_flows: 0,
            rwndq_window: 0,
            rwndq_rewrites: 0,
            buffer_mean_bytes: f64::NAN,
            buffer_peak_bytes: 0,
            buffer_drops_threshold: 0,
            buffer_drops_full: 0,
            pfc_pauses_sent: [0; 2],
            pfc_resumes_sent: [0; 2],
            pfc_pauses_received: [0; 2],
            pfc_paused_time: [0; 2],
            headroom_drops: 0,
            trimmed: 0,
            header_drops: 0,
            returned: 0,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunCounters {
    pub events: u64,
    /// Packets that crossed one link, ACKs included.
    pub packet_hops: u64,
    pub sim_time: SimTime,
    pub wall_secs: f64,
    pub packets_created: u64,
    pub packets_delivered: u64,
    pub packets_dropped: u64,
    /// Packets still queued or on a link when the run stopped.
    pub packets_in_flight: u64,
    /// Flows generated (whether they started or not).
    pub flows: u64,
    /// Flows that had started by the end of the run.
    pub flows_started: u64,
    pub flows_completed: u64,
    pub seed: u64,
    /// Peak number of packets alive at once.
    pub peak_packets: u64,
    /// The run was interrupted before its end; its tables hold what was measured.
    pub partial: bool,
    /// Packets lost to link faults (included in `packets_dropped`).
    pub fault_drops: u64,
    /// Packets a switch dropped for want of a route, after link failures (included in
    /// `packets_dropped`).
    pub route_drops: u64,
    /// PFC: PAUSE and RESUME frames the switches sent, packets lost to headroom
    /// overflow (included in `packets_dropped`), deadlocks found (the run stops at the
    /// first, marked partial) and the message describing it (empty: none).
    pub pfc_pauses: u64,
    pub pfc_resumes: u64,
    pub headroom_drops: u64,
    pub deadlocks: u64,
    pub deadlock_message: String,
}

impl RunCounters {
    /// Every packet created is delivered, dropped, or still in the network.
    pub fn conserved(&self) -> bool {
        self.packets_created
            == self.packets_delivered + self.packets_dropped + self.packets_in_flight
    }
}

#[derive(Clone, Debug)]
pub struct Results {
    pub name: String,
    pub flows: Vec<FlowRecord>,
    /// Per-subflow counters of the multipath flows.
    pub subflows: Vec<SubflowRecord>,
    pub queues: Vec<QueueRecord>,
    pub flow_samples: Vec<FlowSample>,
    pub queue_samples: Vec<QueueSample>,
    /// Collective runs and their steps (empty without `pattern = "collective"`).
    pub collectives: Vec<CollectiveRecord>,
    pub collective_steps: Vec<CollectiveStepRecord>,
    pub counters: RunCounters,
    pub transports: Vec<String>,
    pub classes: Vec<String>,
    /// Bits per second of each host's NIC, for goodput fractions.
    pub host_rate_bps: u64,
    pub n_hosts: u32,
    pub warmup: SimTime,
    /// What the flow-level model reports (`None` at packet level).
    pub flow_level: Option<FlowLevelInfo>,
    /// The scenario's warnings (`Plan::warnings`).
    pub warnings: Vec<(String, String)>,
    /// Some flow runs a RoCE transport: the flows table has its columns (NAKs, CNPs).
    pub roce: bool,
    /// Some flow runs NDP: the flows table has its columns (pulls, NACKs, trimmed).
    pub ndp: bool,
    /// Some switch port trims: the queue table has its columns (trimmed, header drops,
    /// returned).
    pub trim: bool,
    /// Some flow runs Homa: the flows table has its columns (grants, resends).
    pub homa: bool,
    /// Some flow comes from a connection matrix: the flows table has its `matrix_id`
    /// column.
    pub matrix: bool,
    /// Some flow's receive-done is watched: the flows table has its `received_s`
    /// column.
    pub received: bool,
    /// Some switch has a shared buffer or PFC: the queue tables and counters have their
    /// columns (buffer occupancy and drops, pause frames and time, headroom drops,
    /// deadlocks), which runs without them do not carry.
    pub fabric: bool,
    /// How a run over several threads went (`None`: one thread). Not part of any table:
    /// it describes the execution, which does not change the results.
    pub parallel: Option<ParallelStats>,
}

/// What a run over several threads spent its time on.
#[derive(Clone, Debug, PartialEq)]
pub struct ParallelStats {
    pub threads: u32,
    pub partitions: u32,
    /// The synchronisation step (window length), ps.
    pub step: SimTime,
    /// Windows run (empty ones skipped).
    pub windows: u64,
    /// Packets and flow starts sent between partitions.
    pub messages: u64,
    /// Per thread, wall-clock seconds spent waiting at the barriers.
    pub wait_secs: Vec<f64>,
    /// Per thread, the waits at the barriers that went to sleep (spun for a while
    /// without the others arriving: on a busy machine, mostly).
    pub sleeps: Vec<u64>,
    /// Per partition, the events it ran (the fabric-wide ones each replica runs
    /// included): how evenly the split shared the work.
    pub part_events: Vec<u64>,
}

/// How a flow-level run went.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowLevelInfo {
    /// `tcp-response` or `max-min`.
    pub model: &'static str,
    /// Fixed-point iterations, or progressive-filling steps for max-min.
    pub iterations: u32,
    pub converged: bool,
    /// The largest relative violation of the fixed point when the model stopped.
    pub residual: f64,
}

impl Results {
    /// Aggregate goodput of all flows after the warm-up, as a fraction of the hosts'
    /// total link capacity.
    pub fn goodput_fraction(&self) -> f64 {
        let measured = self.counters.sim_time.saturating_sub(self.warmup) as f64 / 1e12;
        let bits: f64 = self
            .flows
            .iter()
            .map(|f| f.goodput_bps * self.measured_secs(f))
            .sum();
        bits / (self.n_hosts as f64 * self.host_rate_bps as f64 * measured.max(1e-12))
    }

    fn measured_secs(&self, f: &FlowRecord) -> f64 {
        match f.fct() {
            Some(fct) => fct as f64 / 1e12,
            None => {
                self.counters
                    .sim_time
                    .saturating_sub(f.start.max(self.warmup)) as f64
                    / 1e12
            }
        }
    }
}

/// The value below which a fraction `q` of the time was spent, from a histogram of time
/// per occupancy.
pub fn histogram_quantile(hist: &[u64], q: f64) -> f64 {
    let total: u64 = hist.iter().sum();
    if total == 0 {
        return f64::NAN;
    }
    let target = q * total as f64;
    let mut acc = 0u64;
    for (i, &t) in hist.iter().enumerate() {
        acc += t;
        if acc as f64 >= target {
            return i as f64;
        }
    }
    (hist.len() - 1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_of_time_histogram() {
        let h = [50, 0, 45, 5];
        assert_eq!(histogram_quantile(&h, 0.5), 0.0);
        assert_eq!(histogram_quantile(&h, 0.95), 2.0);
        assert_eq!(histogram_quantile(&h, 0.99), 3.0);
        assert!(histogram_quantile(&[], 0.5).is_nan());
    }
}
