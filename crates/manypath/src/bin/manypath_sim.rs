//! `manypath-sim FILE [--seed N] [--threads N|auto] [--flows OUT]`: runs a scenario without
//! Python and prints the run counters, the goodput fraction, the peak memory and the
//! threads the run was given as JSON. The benchmarks use it. `--threads` replaces the
//! scenario's `parallel.threads`. `--flows OUT` also writes each flow's id and goodput
//! (bits/s) to OUT as CSV, to compare two builds' allocations flow by flow.

use std::path::Path;
use std::process::ExitCode;

fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| {
                l.split_whitespace()
                    .nth(1)
                    .and_then(|v| v.parse::<f64>().ok())
            })
        })
        .map(|kb| kb / 1024.0)
        .unwrap_or(f64::NAN)
}

/// The value after option `name` (`None` when the option is not given); an error, said
/// on stderr, when the option is last with no value (`what` says what it needs).
fn option_value<'a>(args: &'a [String], name: &str, what: &str) -> Result<Option<&'a str>, ()> {
    match args.iter().position(|a| a == name) {
        Some(i) => match args.get(i + 1) {
            Some(v) => Ok(Some(v.as_str())),
            None => {
                eprintln!("{name} needs {what}");
                Err(())
            }
        },
        None => Ok(None),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(file) = args.first() else {
        eprintln!("usage: manypath-sim FILE [--seed N] [--threads N|auto] [--flows OUT]");
        return ExitCode::from(2);
    };
    let seed = match args.iter().position(|a| a == "--seed") {
        Some(i) => match args.get(i + 1).and_then(|v| v.parse::<u64>().ok()) {
            Some(s) => Some(s),
            None => {
                eprintln!("--seed needs a non-negative integer");
                return ExitCode::from(2);
            }
        },
        None => None,
    };
    // Checked with the scenario, as `parallel.threads`.
    let Ok(threads) = option_value(&args, "--threads", "a number of threads or \"auto\"") else {
        return ExitCode::from(2);
    };
    let Ok(flows_out) = option_value(&args, "--flows", "an output file") else {
        return ExitCode::from(2);
    };
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("cannot read {file}: {e}");
            return ExitCode::from(1);
        }
    };
    let base = Path::new(file).parent().unwrap_or(Path::new("."));
    let every = (u64::MAX, u32::MAX);
    let run = manypath::run_toml_threads(&text, base, seed, None, threads, every, |_, _| true);
    let (r, threads) = match run {
        Ok((r, _, threads)) => (r, threads),
        Err(e) => {
            eprintln!("{file}: invalid scenario\n{e}");
            return ExitCode::from(1);
        }
    };
    if let Some(out) = flows_out {
        let mut csv = String::from("id,goodput_bps\n");
        for f in &r.flows {
            csv += &format!("{},{:e}\n", f.id, f.goodput_bps);
        }
        if let Err(e) = std::fs::write(out, csv) {
            eprintln!("cannot write {out}: {e}");
            return ExitCode::from(1);
        }
    }
    let c = &r.counters;
    let wall = c.wall_secs.max(1e-9);
    let flow = match &r.flow_level {
        Some(f) => format!(
            ", \"level\": \"flow\", \"model\": {:?}, \"iterations\": {}, \"converged\": {}, \"residual\": {:e}",
            f.model, f.iterations, f.converged, f.residual
        ),
        None => ", \"level\": \"packet\"".into(),
    };
    let flow = match &r.parallel {
        Some(p) => format!(
            "{flow}, \"partitions\": {}, \"windows\": {}, \"step_ps\": {}, \"messages\": {}, \"barrier_wait_s\": {:?}, \"barrier_sleeps\": {:?}, \"partition_events\": {:?}",
            p.partitions, p.windows, p.step, p.messages, p.wait_secs, p.sleeps, p.part_events
        ),
        None => flow,
    };
    println!(
        "{{\"name\": {:?}, \"events\": {}, \"packet_hops\": {}, \"sim_time_s\": {}, \"wall_s\": {:.4}, \"events_per_s\": {:.0}, \"hops_per_s\": {:.0}, \"goodput_fraction\": {:.4}, \"peak_rss_mib\": {:.1}, \"flows\": {}, \"flows_completed\": {}, \"drops\": {}, \"conserved\": {}, \"threads\": {}{}}}",
        r.name,
        c.events,
        c.packet_hops,
        c.sim_time as f64 / 1e12,
        c.wall_secs,
        c.events as f64 / wall,
        c.packet_hops as f64 / wall,
        r.goodput_fraction(),
        peak_rss_mib(),
        c.flows,
        c.flows_completed,
        c.packets_dropped,
        c.conserved(),
        threads,
        flow
    );
    ExitCode::SUCCESS
}
