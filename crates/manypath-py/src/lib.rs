//! Python bindings: `manypath._core.run`, `validate`, `resolve`, `estimate` and `schema`. Results cross as
//! columns (dicts of lists) that the Python package turns into DataFrames.

use manypath::capture::trace::{TraceEvent, NO_FLOW};
use manypath::capture::Observed;
use manypath::metrics::Results;
use manypath::scenario::Level;
use manypath::time::{to_secs, SimTime};
use manypath::Plan;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::path::Path;

/// One result table as it crosses into Python: a dict of columns, each a list of one
/// field of every row, in the order the columns are added (the DataFrame's order).
struct Columns<'py, 'r, T> {
    dict: Bound<'py, PyDict>,
    rows: &'r [T],
}

impl<'py, 'r, T> Columns<'py, 'r, T> {
    fn new(py: Python<'py>, rows: &'r [T]) -> Self {
        Columns {
            dict: PyDict::new(py),
            rows,
        }
    }

    /// Adds the column `name`: `value` of every row.
    fn add<V: IntoPyObject<'py>>(&self, name: &str, value: impl Fn(&'r T) -> V) -> PyResult<()> {
        self.dict
            .set_item(name, self.rows.iter().map(value).collect::<Vec<_>>())
    }
}

fn flows_columns<'py>(py: Python<'py>, r: &Results) -> PyResult<Bound<'py, PyDict>> {
    let t = Columns::new(py, &r.flows);
    let nan = f64::NAN;
    t.add("flow_id", |x| x.id)?;
    t.add("src", |x| x.src)?;
    t.add("dst", |x| x.dst)?;
    t.add("transport", |x| r.transports[x.transport as usize].as_str())?;
    t.add("class", |x| r.classes[x.class as usize].as_str())?;
    t.add("job", |x| x.job)?;
    t.add("size", |x| x.size.map(|s| s as i64).unwrap_or(-1))?;
    t.add("start_s", |x| {
        if x.start == manypath::sim::NOT_STARTED {
            nan
        } else {
            to_secs(x.start)
        }
    })?;
    t.add("finish_s", |x| x.finish.map_or(nan, to_secs))?;
    t.add("fct_s", |x| x.fct().map_or(nan, to_secs))?;
    t.add("completed", |x| x.finish.is_some())?;
    t.add("bytes_sent", |x| x.bytes_sent)?;
    t.add("bytes_retx", |x| x.bytes_retx)?;
    t.add("bytes_acked", |x| x.bytes_acked)?;
    t.add("goodput_bps", |x| x.goodput_bps)?;
    t.add("timeouts", |x| x.timeouts)?;
    t.add("fast_retx", |x| x.fast_retx)?;
    t.add("subflows", |x| x.subflows)?;
    t.add("ssr_suppressions", |x| x.ssr_suppressions)?;
    t.add("ssr_releases", |x| x.ssr_releases)?;
    t.add("recovery_bytes", |x| x.recovery_bytes)?;
    t.add("window_violations", |x| x.window_violations)?;
    t.add("copies", |x| x.copies)?;
    t.add("packets_sent", |x| x.recovery.packets_sent)?;
    t.add("packets_retx", |x| x.recovery.packets_retx)?;
    t.add("syn_timeouts", |x| x.recovery.syn_timeouts as u64)?;
    t.add("tlp_probes", |x| x.recovery.tlp_probes as u64)?;
    t.add("ir_coded", |x| x.recovery.ir_coded as u64)?;
    t.add("ir_recovered", |x| x.recovery.ir_recovered as u64)?;
    t.add("proactive_copies", |x| x.recovery.proactive_copies)?;
    t.add("started", |x| x.started)?;
    t.add("measured", |x| x.measured)?;
    t.add("ideal_fct_s", |x| x.ideal_fct.map_or(nan, to_secs))?;
    // RoCE's own counters, only in runs with a RoCE transport (other tables unchanged).
    if r.roce {
        t.add("naks", |x| x.recovery.naks as u64)?;
        t.add("cnps", |x| x.recovery.cnps as u64)?;
    }
    // NDP's own counters, only in runs with an NDP transport.
    if r.ndp {
        t.add("pulls", |x| x.recovery.pulls)?;
        t.add("nacks", |x| x.recovery.nacks as u64)?;
        t.add("trimmed", |x| x.recovery.trimmed as u64)?;
    }
    // Homa's own counters, only in runs with Homa.
    if r.homa {
        t.add("grants", |x| x.recovery.grants as u64)?;
        t.add("resends", |x| x.recovery.resends as u64)?;
    }
    // The connection-matrix file's connection ids, only in runs with a matrix (-1: the
    // connection has none).
    if r.matrix {
        t.add("matrix_id", |x| {
            x.matrix_id.filter(|&i| i > 0).map_or(-1, i64::from)
        })?;
    }
    // When the receiver had every byte, only in runs that watch some flow's
    // receive-done (NaN: not watched, or not yet).
    if r.received {
        t.add("received_s", |x| x.received.map_or(nan, to_secs))?;
    }
    // A collective's flows: the row of their run in the collectives table and their
    // step (-1 for other flows), only in runs with collectives.
    if !r.collectives.is_empty() {
        t.add("collective_id", |x| {
            x.collective.map_or(-1, |c| i64::from(c.instance))
        })?;
        t.add("step", |x| x.collective.map_or(-1, |c| i64::from(c.step)))?;
    }
    Ok(t.dict)
}

/// One row per run (iteration) of a collective job.
fn collectives_columns<'py>(py: Python<'py>, r: &Results) -> PyResult<Bound<'py, PyDict>> {
    let nan = f64::NAN;
    let secs = |t: Option<SimTime>| t.map_or(nan, to_secs);
    let t = Columns::new(py, &r.collectives);
    t.add("job", |x| x.job)?;
    t.add("iteration", |x| x.iteration)?;
    t.add("collective", |x| x.collective)?;
    t.add("algorithm", |x| x.algorithm)?;
    t.add("ranks", |x| x.ranks)?;
    t.add("bytes", |x| x.bytes)?;
    t.add("flows", |x| x.flows)?;
    t.add("completed", |x| x.end.is_some())?;
    t.add("start_s", |x| secs(x.start))?;
    t.add("end_s", |x| secs(x.end))?;
    t.add("cct_s", |x| secs(x.end.zip(x.start).map(|(e, s)| e - s)))?;
    t.add("ideal_cct_s", |x| secs(x.ideal))?;
    t.add("slowdown", |x| match (x.end.zip(x.start), x.ideal) {
        (Some((e, s)), Some(i)) if i > 0 => (e - s) as f64 / i as f64,
        _ => nan,
    })?;
    t.add("jct_s", |x| {
        secs(x.end.zip(x.job_start).map(|(e, s)| e - s))
    })?;
    t.add("straggler_rank", |x| {
        x.straggler.map_or(-1, |s| i64::from(s.0))
    })?;
    t.add("straggler_host", |x| {
        x.straggler.map_or(-1, |s| i64::from(s.1))
    })?;
    Ok(t.dict)
}

/// One row per step of each collective run.
fn collective_steps_columns<'py>(py: Python<'py>, r: &Results) -> PyResult<Bound<'py, PyDict>> {
    let nan = f64::NAN;
    let secs = |t: Option<SimTime>| t.map_or(nan, to_secs);
    let t = Columns::new(py, &r.collective_steps);
    t.add("collective_id", |x| x.collective)?;
    t.add("step", |x| x.step)?;
    t.add("flows", |x| x.flows)?;
    t.add("bytes", |x| x.bytes)?;
    t.add("start_s", |x| secs(x.start))?;
    t.add("end_s", |x| secs(x.end))?;
    t.add("duration_s", |x| {
        secs(x.end.zip(x.start).map(|(e, s)| e.saturating_sub(s)))
    })?;
    Ok(t.dict)
}

/// Per-subflow counters of the multipath flows.
fn subflows_columns<'py>(py: Python<'py>, r: &Results) -> PyResult<Bound<'py, PyDict>> {
    let t = Columns::new(py, &r.subflows);
    t.add("flow_id", |x| x.flow)?;
    t.add("subflow", |x| x.subflow)?;
    t.add("bytes_sent", |x| x.bytes_sent)?;
    t.add("bytes_retx", |x| x.bytes_retx)?;
    t.add("bytes_acked", |x| x.bytes_acked)?;
    t.add("timeouts", |x| x.timeouts)?;
    t.add("fast_retx", |x| x.fast_retx)?;
    Ok(t.dict)
}

fn queues_columns<'py>(py: Python<'py>, r: &Results) -> PyResult<Bound<'py, PyDict>> {
    let t = Columns::new(py, &r.queues);
    t.add("port", |x| x.port)?;
    t.add("node", |x| x.node.as_str())?;
    t.add("node_kind", |x| if x.is_host { "host" } else { "switch" })?;
    t.add("tier", |x| x.tier)?;
    t.add("peer", |x| x.peer.as_str())?;
    t.add("rate_bps", |x| x.rate_bps)?;
    t.add("tx_packets", |x| x.tx_packets)?;
    t.add("tx_bytes", |x| x.tx_bytes)?;
    t.add("utilization", |x| x.utilization)?;
    t.add("enqueued", |x| x.enqueued)?;
    t.add("drops", |x| x.drops)?;
    t.add("early_drops", |x| x.early_drops)?;
    t.add("fault_drops", |x| x.fault_drops)?;
    t.add("fault_bursts", |x| x.fault_bursts)?;
    t.add("loss_rate", |x| x.loss_rate)?;
    t.add("blackhole_fraction", |x| x.blackhole_fraction)?;
    t.add("ecn_marks", |x| x.ecn_marks)?;
    t.add("max_packets", |x| x.max_packets)?;
    t.add("max_bytes", |x| x.max_bytes)?;
    t.add("mean_packets", |x| x.mean_packets)?;
    t.add("mean_bytes", |x| x.mean_bytes)?;
    t.add("p50_packets", |x| x.p50_packets)?;
    t.add("p95_packets", |x| x.p95_packets)?;
    t.add("p99_packets", |x| x.p99_packets)?;
    t.add("rwndq", |x| x.rwndq)?;
    t.add("rwndq_flows", |x| x.rwndq_flows)?;
    t.add("rwndq_peak_flows", |x| x.rwndq_peak_flows)?;
    t.add("rwndq_window", |x| x.rwndq_window)?;
    t.add("rwndq_rewrites", |x| x.rwndq_rewrites)?;
    // A trimming queue's counters, only in runs where some switch port trims.
    if r.trim {
        t.add("trimmed", |x| x.trimmed)?;
        t.add("header_drops", |x| x.header_drops)?;
        t.add("returned", |x| x.returned)?;
    }
    if r.fabric {
        t.add("buffer_mean_bytes", |x| x.buffer_mean_bytes)?;
        t.add("buffer_peak_bytes", |x| x.buffer_peak_bytes)?;
        t.add("buffer_drops_threshold", |x| x.buffer_drops_threshold)?;
        t.add("buffer_drops_full", |x| x.buffer_drops_full)?;
        for c in 0..2 {
            t.add(&format!("pfc_pauses_sent_c{c}"), |x| x.pfc_pauses_sent[c])?;
            t.add(&format!("pfc_resumes_sent_c{c}"), |x| x.pfc_resumes_sent[c])?;
            t.add(&format!("pfc_pauses_received_c{c}"), |x| {
                x.pfc_pauses_received[c]
            })?;
            t.add(&format!("pfc_paused_s_c{c}"), |x| {
                to_secs(x.pfc_paused_time[c])
            })?;
        }
        t.add("headroom_drops", |x| x.headroom_drops)?;
    }
    Ok(t.dict)
}

fn flow_samples_columns<'py>(py: Python<'py>, r: &Results) -> PyResult<Bound<'py, PyDict>> {
    let t = Columns::new(py, &r.flow_samples);
    t.add("time_s", |x| to_secs(x.time))?;
    t.add("flow_id", |x| x.flow)?;
    t.add("subflow", |x| x.subflow)?;
    t.add("bytes_acked", |x| x.bytes_acked)?;
    t.add("cwnd_bytes", |x| x.cwnd)?;
    t.add("srtt_us", |x| x.srtt as f64 / 1e6)?;
    Ok(t.dict)
}

fn queue_samples_columns<'py>(py: Python<'py>, r: &Results) -> PyResult<Bound<'py, PyDict>> {
    let t = Columns::new(py, &r.queue_samples);
    t.add("time_s", |x| to_secs(x.time))?;
    t.add("port", |x| x.port)?;
    t.add("packets", |x| x.packets)?;
    t.add("bytes", |x| x.bytes)?;
    t.add("rwndq_window", |x| x.rwndq_window)?;
    if r.fabric {
        t.add("buffer_bytes", |x| x.buffer_bytes)?;
    }
    Ok(t.dict)
}

/// The event trace (`output.trace`): one row per event, in time order.
fn trace_columns<'py>(py: Python<'py>, events: &[TraceEvent]) -> PyResult<Bound<'py, PyDict>> {
    let t = Columns::new(py, events);
    t.add("time_s", |x| to_secs(x.time))?;
    t.add("time_ps", |x| x.time)?;
    t.add("port", |x| x.port)?;
    t.add("event", |x| x.kind.name())?;
    t.add("queued", |x| x.queued)?;
    t.add("flow_id", |x| {
        if x.flow == NO_FLOW {
            -1
        } else {
            x.flow as i64
        }
    })?;
    // As u32: a list of u8 would cross as bytes.
    t.add("subflow", |x| x.subflow as u32)?;
    t.add("class", |x| x.class as u32)?;
    t.add("bytes", |x| x.bytes)?;
    t.add("queue_packets", |x| x.queue_packets)?;
    t.add("queue_bytes", |x| x.queue_bytes)?;
    Ok(t.dict)
}

/// What the capture and trace recorded: the pcapng bytes, the trace's columns and
/// their counters (only the parts the scenario asked for).
fn observed_items(py: Python<'_>, d: &Bound<'_, PyDict>, o: &Observed) -> PyResult<()> {
    if let Some(bytes) = &o.pcap {
        d.set_item("pcap", PyBytes::new(py, bytes))?;
    }
    if let Some(events) = &o.trace {
        d.set_item("trace", trace_columns(py, events)?)?;
    }
    let c = d
        .get_item("counters")?
        .expect("set before")
        .downcast_into::<PyDict>()?;
    if o.pcap.is_some() {
        c.set_item("capture_packets", o.capture_packets)?;
        c.set_item("capture_missed", o.capture_missed)?;
    }
    if let Some(events) = &o.trace {
        c.set_item("trace_events", events.len())?;
        c.set_item("trace_missed", o.trace_missed)?;
    }
    Ok(())
}

fn counters<'py>(py: Python<'py>, r: &Results) -> PyResult<Bound<'py, PyDict>> {
    let c = &r.counters;
    let d = PyDict::new(py);
    let wall = c.wall_secs.max(1e-9);
    d.set_item("events", c.events)?;
    d.set_item("packet_hops", c.packet_hops)?;
    d.set_item("sim_time_s", to_secs(c.sim_time))?;
    d.set_item("wall_s", c.wall_secs)?;
    d.set_item("events_per_s", c.events as f64 / wall)?;
    d.set_item("hops_per_s", c.packet_hops as f64 / wall)?;
    d.set_item("packets_created", c.packets_created)?;
    d.set_item("packets_delivered", c.packets_delivered)?;
    d.set_item("packets_dropped", c.packets_dropped)?;
    d.set_item("packets_in_flight", c.packets_in_flight)?;
    d.set_item("fault_drops", c.fault_drops)?;
    d.set_item("route_drops", c.route_drops)?;
    d.set_item(
        "congestion_drops",
        c.packets_dropped - c.fault_drops - c.route_drops,
    )?;
    d.set_item("peak_packets", c.peak_packets)?;
    d.set_item("flows", c.flows)?;
    d.set_item("flows_generated", c.flows)?;
    d.set_item("flows_started", c.flows_started)?;
    d.set_item("flows_completed", c.flows_completed)?;
    d.set_item("seed", c.seed)?;
    d.set_item("duration_s", to_secs(c.sim_time))?;
    d.set_item("warmup_s", to_secs(r.warmup))?;
    d.set_item("n_hosts", r.n_hosts)?;
    d.set_item("host_rate_bps", r.host_rate_bps)?;
    d.set_item("goodput_fraction", r.goodput_fraction())?;
    d.set_item("partial", c.partial)?;
    if r.fabric {
        d.set_item("pfc_pauses", c.pfc_pauses)?;
        d.set_item("pfc_resumes", c.pfc_resumes)?;
        d.set_item("headroom_drops", c.headroom_drops)?;
        d.set_item("deadlocks", c.deadlocks)?;
        d.set_item("deadlock_message", c.deadlock_message.as_str())?;
    }
    match &r.flow_level {
        Some(f) => {
            d.set_item("level", "flow")?;
            d.set_item("flow_model", f.model)?;
            d.set_item("iterations", f.iterations)?;
            d.set_item("converged", f.converged)?;
            d.set_item("residual", f.residual)?;
        }
        None => d.set_item("level", "packet")?,
    }
    Ok(d)
}

/// Runs a scenario given as TOML text; CDF paths resolve against `base_dir`.
/// `progress(sim_time_s, events)` is called about every `progress_every` events; if it
/// returns False, or Ctrl-C is pressed, the run stops and its results are marked partial.
/// `level` ("packet" or "flow") replaces the scenario's own.
/// At flow level, `progress(iterations, iterations)` (the count as a float first) is
/// called every `progress_iterations` iterations of the TCP model.
/// `threads` (`"auto"` or a whole number, as text) replaces the scenario's
/// `parallel.threads`; the threads the run was given are returned as `threads`, beside
/// the tables (results are the same for any thread count).
#[pyfunction]
#[pyo3(signature = (toml_text, base_dir, seed=None, progress=None, progress_every=1_000_000, level=None, progress_iterations=100, threads=None))]
#[allow(clippy::too_many_arguments)]
fn run<'py>(
    py: Python<'py>,
    toml_text: &str,
    base_dir: &str,
    seed: Option<u64>,
    progress: Option<PyObject>,
    progress_every: u64,
    level: Option<&str>,
    progress_iterations: u32,
    threads: Option<String>,
) -> PyResult<Bound<'py, PyDict>> {
    let level = match level {
        None => None,
        Some("packet") => Some(Level::Packet),
        Some("flow") => Some(Level::Flow),
        Some(other) => {
            return Err(PyValueError::new_err(format!(
                "level: must be \"packet\" or \"flow\", got {other:?}"
            )))
        }
    };
    let base = Path::new(base_dir).to_path_buf();
    let text = toml_text.to_string();
    // Ctrl-C reaches Python only when it runs; check for it at each report.
    let (every, flow_every) = if progress.is_some() {
        (progress_every.max(1), progress_iterations.max(1))
    } else {
        (1 << 22, 1000)
    };
    let result = py.allow_threads(move || {
        let periods = (every, flow_every);
        let threads = threads.as_deref();
        manypath::run_toml_threads(
            &text,
            &base,
            seed,
            level,
            threads,
            periods,
            |now, events| {
                Python::with_gil(|py| {
                    if py.check_signals().is_err() {
                        return false;
                    }
                    match &progress {
                        Some(cb) => cb
                            .call1(py, (to_secs(now), events))
                            .map(|r| r.is_truthy(py).unwrap_or(true) || r.is_none(py))
                            .unwrap_or(false),
                        None => true,
                    }
                })
            },
        )
    });
    let (r, observed, used) = result.map_err(|e| PyValueError::new_err(e.to_string()))?;
    let d = PyDict::new(py);
    d.set_item("name", r.name.as_str())?;
    d.set_item("threads", used)?;
    d.set_item("flows", flows_columns(py, &r)?)?;
    d.set_item("queues", queues_columns(py, &r)?)?;
    d.set_item("subflows", subflows_columns(py, &r)?)?;
    d.set_item("flow_samples", flow_samples_columns(py, &r)?)?;
    d.set_item("queue_samples", queue_samples_columns(py, &r)?)?;
    d.set_item("collectives", collectives_columns(py, &r)?)?;
    d.set_item("collective_steps", collective_steps_columns(py, &r)?)?;
    d.set_item("counters", counters(py, &r)?)?;
    d.set_item("warnings", r.warnings.clone())?;
    if let Some(o) = &observed {
        observed_items(py, &d, o)?;
    }
    Ok(d)
}

/// Checks a scenario; raises ValueError listing every problem, one per line. Returns
/// its warnings (what is valid but likely not meant) as `(field path, message)` pairs.
#[pyfunction]
fn validate(toml_text: &str, base_dir: &str) -> PyResult<Vec<(String, String)>> {
    Plan::from_toml(toml_text, Path::new(base_dir))
        .map(|p| p.warnings)
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The scenario as TOML with every default filled in (`manypath::resolve_toml`); raises
/// ValueError as `validate` does.
#[pyfunction]
fn resolve(toml_text: &str, base_dir: &str) -> PyResult<String> {
    manypath::resolve_toml(toml_text, Path::new(base_dir))
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The scenario's topology as a custom topology file (TOML, or JSON if `json`); raises
/// ValueError as `validate` does.
#[pyfunction]
#[pyo3(signature = (toml_text, base_dir, json = false))]
fn export_topology(toml_text: &str, base_dir: &str, json: bool) -> PyResult<String> {
    manypath::export_topology(toml_text, Path::new(base_dir), json)
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// A collective's or connection matrix's traffic entry (`entry`, or the only one) as
/// htsim's connection-matrix text; raises ValueError naming the field.
#[pyfunction]
#[pyo3(signature = (toml_text, base_dir, entry = None))]
fn matrix_text(toml_text: &str, base_dir: &str, entry: Option<usize>) -> PyResult<String> {
    manypath::matrix_text(toml_text, Path::new(base_dir), entry)
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// What a run will need: hosts, switches, ports, connections, subflows and flows, the
/// simulator replicas of a run over several threads (`replicas`), and the estimated
/// peak memory of a packet-level run in bytes (`peak_bytes`).
#[pyfunction]
fn estimate<'py>(py: Python<'py>, toml_text: &str, base_dir: &str) -> PyResult<Bound<'py, PyDict>> {
    let plan = Plan::from_toml(toml_text, Path::new(base_dir))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let e = manypath::sim::estimate::estimate(&plan);
    let d = PyDict::new(py);
    d.set_item("hosts", e.hosts)?;
    d.set_item("switches", e.switches)?;
    d.set_item("ports", e.ports)?;
    d.set_item("connections", e.connections)?;
    d.set_item("subflows", e.subflows)?;
    d.set_item("flows", e.flows)?;
    d.set_item("replicas", e.replicas)?;
    d.set_item("peak_bytes", e.peak_bytes)?;
    Ok(d)
}

/// The scenario JSON Schema.
#[pyfunction]
fn schema() -> String {
    manypath::scenario::json_schema()
}

/// The 1-based line where the field at dotted `path` (`traffic[1].size` or
/// `traffic.1.size`) is written in scenario `toml_text`, or for a field not written there
/// the line of the deepest table on its path; None for text that does not parse or a
/// path none of which is written.
#[pyfunction]
fn line_of(toml_text: &str, path: &str) -> Option<usize> {
    use manypath::scenario::locate;
    locate::line_of(toml_text, &locate::segments(path))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(resolve, m)?)?;
    m.add_function(wrap_pyfunction!(estimate, m)?)?;
    m.add_function(wrap_pyfunction!(export_topology, m)?)?;
    m.add_function(wrap_pyfunction!(matrix_text, m)?)?;
    m.add_function(wrap_pyfunction!(line_of, m)?)?;
    Ok(())
}
