//! Python bindings: `manypath._core.run`, `validate` and `schema`. Results cross as
//! columns (dicts of lists) that the Python package turns into DataFrames.

use manypath::metrics::{RecoveryCounters, Results};
use manypath::scenario::Level;
use manypath::Plan;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::Path;

fn flows_columns<'py>(py: Python<'py>, r: &Results) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let f = &r.flows;
    let nan = f64::NAN;
    d.set_item("flow_id", f.iter().map(|x| x.id).collect::<Vec<_>>())?;
    d.set_item("src", f.iter().map(|x| x.src).collect::<Vec<_>>())?;
    d.set_item("dst", f.iter().map(|x| x.dst).collect::<Vec<_>>())?;
    d.set_item(
        "transport",
        f.iter()
            .map(|x| r.transports[x.transport as usize].as_str())
            .collect::<Vec<_>>(),
    )?;
    d.set_item(
        "class",
        f.iter()
            .map(|x| r.classes[x.class as usize].as_str())
            .collect::<Vec<_>>(),
    )?;
    d.set_item("job", f.iter().map(|x| x.job).collect::<Vec<_>>())?;
    d.set_item(
        "size",
        f.iter()
            .map(|x| x.size.map(|s| s as i64).unwrap_or(-1))
            .collect::<Vec<_>>(),
    )?;
    d.set_item(
        "start_s",
        f.iter()
            .map(|x| {
                if x.start == manypath::sim::NOT_STARTED {
                    nan
                } else {
                    x.start as f64 / 1e12
                }
            })
            .collect::<Vec<_>>(),
    )?;
    d.set_item(
        "finish_s",
        f.iter()
            .map(|x| x.finish.map(|t| t as f64 / 1e12).unwrap_or(nan))
            .collect::<Vec<_>>(),
    )?;
    d.set_item(
        "fct_s",
        f.iter()
            .map(|x| x.fct().map(|t| t as f64 / 1e12).unwrap_or(nan))
            .collect::<Vec<_>>(),
    )?;
    d.set_item(
        "completed",
        f.iter().map(|x| x.finish.is_some()).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "bytes_sent",
        f.iter().map(|x| x.bytes_sent).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "bytes_retx",
        f.iter().map(|x| x.bytes_retx).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "bytes_acked",
        f.iter().map(|x| x.bytes_acked).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "goodput_bps",
        f.iter().map(|x| x.goodput_bps).collect::<Vec<_>>(),
    )?;
    d.set_item("timeouts", f.iter().map(|x| x.timeouts).collect::<Vec<_>>())?;
    d.set_item(
        "fast_retx",
        f.iter().map(|x| x.fast_retx).collect::<Vec<_>>(),
    )?;
    d.set_item("subflows", f.iter().map(|x| x.subflows).collect::<Vec<_>>())?;
    d.set_item(
        "ssr_suppressions",
        f.iter().map(|x| x.ssr_suppressions).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "ssr_releases",
        f.iter().map(|x| x.ssr_releases).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "recovery_bytes",
        f.iter().map(|x| x.recovery_bytes).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "window_violations",
        f.iter().map(|x| x.window_violations).collect::<Vec<_>>(),
    )?;
    d.set_item("copies", f.iter().map(|x| x.copies).collect::<Vec<_>>())?;
    let rec =
        |get: fn(&RecoveryCounters) -> u64| f.iter().map(|x| get(&x.recovery)).collect::<Vec<_>>();
    d.set_item("packets_sent", rec(|r| r.packets_sent))?;
    d.set_item("packets_retx", rec(|r| r.packets_retx))?;
    d.set_item("syn_timeouts", rec(|r| r.syn_timeouts as u64))?;
    d.set_item("tlp_probes", rec(|r| r.tlp_probes as u64))?;
    d.set_item("ir_coded", rec(|r| r.ir_coded as u64))?;
    d.set_item("ir_recovered", rec(|r| r.ir_recovered as u64))?;
    d.set_item("proactive_copies", rec(|r| r.proactive_copies))?;
    Ok(d)
}

/// Per-subflow counters of the multipath flows.
fn subflows_columns<'py>(py: Python<'py>, r: &Results) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let s = &r.subflows;
    d.set_item("flow_id", s.iter().map(|x| x.flow).collect::<Vec<_>>())?;
    d.set_item("subflow", s.iter().map(|x| x.subflow).collect::<Vec<_>>())?;
    d.set_item(
        "bytes_sent",
        s.iter().map(|x| x.bytes_sent).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "bytes_retx",
        s.iter().map(|x| x.bytes_retx).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "bytes_acked",
        s.iter().map(|x| x.bytes_acked).collect::<Vec<_>>(),
    )?;
    d.set_item("timeouts", s.iter().map(|x| x.timeouts).collect::<Vec<_>>())?;
    d.set_item(
        "fast_retx",
        s.iter().map(|x| x.fast_retx).collect::<Vec<_>>(),
    )?;
    Ok(d)
}

fn queues_columns<'py>(py: Python<'py>, r: &Results) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let q = &r.queues;
    d.set_item("port", q.iter().map(|x| x.port).collect::<Vec<_>>())?;
    d.set_item(
        "node",
        q.iter().map(|x| x.node.as_str()).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "node_kind",
        q.iter()
            .map(|x| if x.is_host { "host" } else { "switch" })
            .collect::<Vec<_>>(),
    )?;
    d.set_item("tier", q.iter().map(|x| x.tier).collect::<Vec<_>>())?;
    d.set_item(
        "peer",
        q.iter().map(|x| x.peer.as_str()).collect::<Vec<_>>(),
    )?;
    d.set_item("rate_bps", q.iter().map(|x| x.rate_bps).collect::<Vec<_>>())?;
    d.set_item(
        "tx_packets",
        q.iter().map(|x| x.tx_packets).collect::<Vec<_>>(),
    )?;
    d.set_item("tx_bytes", q.iter().map(|x| x.tx_bytes).collect::<Vec<_>>())?;
    d.set_item(
        "utilization",
        q.iter().map(|x| x.utilization).collect::<Vec<_>>(),
    )?;
    d.set_item("enqueued", q.iter().map(|x| x.enqueued).collect::<Vec<_>>())?;
    d.set_item("drops", q.iter().map(|x| x.drops).collect::<Vec<_>>())?;
    d.set_item(
        "early_drops",
        q.iter().map(|x| x.early_drops).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "fault_drops",
        q.iter().map(|x| x.fault_drops).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "fault_bursts",
        q.iter().map(|x| x.fault_bursts).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "loss_rate",
        q.iter().map(|x| x.loss_rate).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "blackhole_fraction",
        q.iter().map(|x| x.blackhole_fraction).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "ecn_marks",
        q.iter().map(|x| x.ecn_marks).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "max_packets",
        q.iter().map(|x| x.max_packets).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "max_bytes",
        q.iter().map(|x| x.max_bytes).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "mean_packets",
        q.iter().map(|x| x.mean_packets).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "mean_bytes",
        q.iter().map(|x| x.mean_bytes).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "p50_packets",
        q.iter().map(|x| x.p50_packets).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "p95_packets",
        q.iter().map(|x| x.p95_packets).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "p99_packets",
        q.iter().map(|x| x.p99_packets).collect::<Vec<_>>(),
    )?;
    d.set_item("rwndq", q.iter().map(|x| x.rwndq).collect::<Vec<_>>())?;
    d.set_item(
        "rwndq_flows",
        q.iter().map(|x| x.rwndq_flows).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "rwndq_peak_flows",
        q.iter().map(|x| x.rwndq_peak_flows).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "rwndq_window",
        q.iter().map(|x| x.rwndq_window).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "rwndq_rewrites",
        q.iter().map(|x| x.rwndq_rewrites).collect::<Vec<_>>(),
    )?;
    Ok(d)
}

fn flow_samples_columns<'py>(py: Python<'py>, r: &Results) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let s = &r.flow_samples;
    d.set_item(
        "time_s",
        s.iter().map(|x| x.time as f64 / 1e12).collect::<Vec<_>>(),
    )?;
    d.set_item("flow_id", s.iter().map(|x| x.flow).collect::<Vec<_>>())?;
    d.set_item("subflow", s.iter().map(|x| x.subflow).collect::<Vec<_>>())?;
    d.set_item(
        "bytes_acked",
        s.iter().map(|x| x.bytes_acked).collect::<Vec<_>>(),
    )?;
    d.set_item("cwnd_bytes", s.iter().map(|x| x.cwnd).collect::<Vec<_>>())?;
    d.set_item(
        "srtt_us",
        s.iter().map(|x| x.srtt as f64 / 1e6).collect::<Vec<_>>(),
    )?;
    Ok(d)
}

fn queue_samples_columns<'py>(py: Python<'py>, r: &Results) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let s = &r.queue_samples;
    d.set_item(
        "time_s",
        s.iter().map(|x| x.time as f64 / 1e12).collect::<Vec<_>>(),
    )?;
    d.set_item("port", s.iter().map(|x| x.port).collect::<Vec<_>>())?;
    d.set_item("packets", s.iter().map(|x| x.packets).collect::<Vec<_>>())?;
    d.set_item("bytes", s.iter().map(|x| x.bytes).collect::<Vec<_>>())?;
    d.set_item(
        "rwndq_window",
        s.iter().map(|x| x.rwndq_window).collect::<Vec<_>>(),
    )?;
    Ok(d)
}

fn counters<'py>(py: Python<'py>, r: &Results) -> PyResult<Bound<'py, PyDict>> {
    let c = &r.counters;
    let d = PyDict::new(py);
    let wall = c.wall_secs.max(1e-9);
    d.set_item("events", c.events)?;
    d.set_item("packet_hops", c.packet_hops)?;
    d.set_item("sim_time_s", c.sim_time as f64 / 1e12)?;
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
    d.set_item("flows_completed", c.flows_completed)?;
    d.set_item("seed", c.seed)?;
    d.set_item("duration_s", c.sim_time as f64 / 1e12)?;
    d.set_item("warmup_s", r.warmup as f64 / 1e12)?;
    d.set_item("n_hosts", r.n_hosts)?;
    d.set_item("host_rate_bps", r.host_rate_bps)?;
    d.set_item("goodput_fraction", r.goodput_fraction())?;
    d.set_item("partial", c.partial)?;
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
#[pyfunction]
#[pyo3(signature = (toml_text, base_dir, seed=None, progress=None, progress_every=1_000_000, level=None))]
fn run<'py>(
    py: Python<'py>,
    toml_text: &str,
    base_dir: &str,
    seed: Option<u64>,
    progress: Option<PyObject>,
    progress_every: u64,
    level: Option<&str>,
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
    let every = if progress.is_some() {
        progress_every.max(1)
    } else {
        1 << 22
    };
    let result = py.allow_threads(move || {
        manypath::run_toml_at_level(&text, &base, seed, level, every, |now, events| {
            Python::with_gil(|py| {
                if py.check_signals().is_err() {
                    return false;
                }
                match &progress {
                    Some(cb) => cb
                        .call1(py, (now as f64 / 1e12, events))
                        .map(|r| r.is_truthy(py).unwrap_or(true) || r.is_none(py))
                        .unwrap_or(false),
                    None => true,
                }
            })
        })
    });
    let r = result.map_err(|e| PyValueError::new_err(e.to_string()))?;
    let d = PyDict::new(py);
    d.set_item("name", r.name.as_str())?;
    d.set_item("flows", flows_columns(py, &r)?)?;
    d.set_item("queues", queues_columns(py, &r)?)?;
    d.set_item("subflows", subflows_columns(py, &r)?)?;
    d.set_item("flow_samples", flow_samples_columns(py, &r)?)?;
    d.set_item("queue_samples", queue_samples_columns(py, &r)?)?;
    d.set_item("counters", counters(py, &r)?)?;
    Ok(d)
}

/// Checks a scenario; raises ValueError listing every problem, one per line.
#[pyfunction]
fn validate(toml_text: &str, base_dir: &str) -> PyResult<()> {
    Plan::from_toml(toml_text, Path::new(base_dir))
        .map(|_| ())
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The scenario JSON Schema.
#[pyfunction]
fn schema() -> String {
    manypath::scenario::json_schema()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    Ok(())
}
