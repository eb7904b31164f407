//! Every shipped scenario's topology (`scenarios/`, the package's default, `bench/`),
//! written out by `manypath topology export` and read back as `[topology.custom]`, runs
//! to the same tables as the scenario itself.

use manypath::{export_topology, run_toml, Results};
use std::path::{Path, PathBuf};

/// How long each scenario runs here: enough for flows to start, queue and finish.
const SHORT_MS: f64 = 3.0;

/// Shipped scenarios left out, with why.
const SKIPPED: [(&str, &str); 4] = [
    // No shipped scenario is a BCube, whose relaying hosts the format cannot describe;
    // were one shipped, it would be listed here.
    (
        "flow-fattree32-mptcp8.toml",
        "8,192 servers: too large for a test",
    ),
    (
        "flow-fattree48-mptcp8.toml",
        "27,648 servers: too large for a test",
    ),
    (
        "flow-fattree74-mptcp8.toml",
        "101,306 servers: too large for a test",
    ),
    (
        "fattree24-dctcp.toml",
        "3,456 servers: 16 s, too slow for a test",
    ),
];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `.toml` files of `dir`, in name order.
fn scenarios_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
}

/// Scenario `text` cut to `SHORT_MS`, with the times that must fall within the run
/// (warm-up, measurement start, arrivals' end) cut to fit.
fn shortened(text: &str) -> toml::Table {
    let mut s: toml::Table = text.parse().unwrap();
    let duration = s
        .get("duration_ms")
        .and_then(number)
        .unwrap_or(SHORT_MS)
        .min(SHORT_MS);
    s.insert("duration_ms".into(), duration.into());
    for field in ["warmup_ms", "measure_from_ms"] {
        if let Some(ms) = s.get(field).and_then(number) {
            s.insert(field.into(), (ms.min(duration / 3.0)).into());
        }
    }
    for entry in s
        .get_mut("traffic")
        .and_then(|t| t.as_array_mut())
        .into_iter()
        .flatten()
    {
        let entry = entry.as_table_mut().unwrap();
        if let Some(ms) = entry.get("arrivals_until_ms").and_then(number) {
            entry.insert("arrivals_until_ms".into(), ms.min(duration).into());
        }
        if let Some(us) = entry.get("until_us").and_then(number) {
            entry.insert("until_us".into(), us.min(duration * 1e3).into());
        }
    }
    s
}

/// A TOML number as f64, whether written as an integer or a float.
fn number(v: &toml::Value) -> Option<f64> {
    v.as_float().or_else(|| v.as_integer().map(|i| i as f64))
}

/// Every table of `r` as text (wall-clock time and how the threads went left out),
/// by name.
fn tables(mut r: Results) -> Vec<(&'static str, String)> {
    r.counters.wall_secs = 0.0;
    r.parallel = None;
    vec![
        ("flows", format!("{:?}", r.flows)),
        ("subflows", format!("{:?}", r.subflows)),
        ("queues", format!("{:?}", r.queues)),
        ("flow samples", format!("{:?}", r.flow_samples)),
        ("queue samples", format!("{:?}", r.queue_samples)),
        ("counters", format!("{:?}", r.counters)),
        ("flow level", format!("{:?}", r.flow_level)),
        ("warnings", format!("{:?}", r.warnings)),
        (
            "the rest",
            format!(
                "{:?}",
                (
                    &r.name,
                    &r.transports,
                    &r.classes,
                    r.host_rate_bps,
                    r.n_hosts,
                    r.warmup,
                    (r.roce, r.ndp, r.trim, r.homa, r.fabric),
                )
            ),
        ),
    ]
}

/// Runs `file` (shortened) as written and with its topology exported and read back,
/// and checks every table is the same.
fn round_trip(file: &Path) {
    let name = file.file_name().unwrap().to_string_lossy();
    let dir = file.parent().unwrap();
    let scenario = shortened(&std::fs::read_to_string(file).unwrap());
    let text = toml::to_string(&scenario).unwrap();
    let exported = export_topology(&text, dir, false)
        .unwrap_or_else(|e| panic!("{name}: the export failed: {e}"));
    let mut again = scenario.clone();
    let custom: toml::Table = exported.parse().unwrap();
    let topology = toml::Table::from_iter([("custom".to_string(), custom.into())]);
    again.insert("topology".into(), topology.into());
    let again = toml::to_string(&again).unwrap();
    let run = |text: &str| run_toml(text, dir, None).unwrap_or_else(|e| panic!("{name}: {e}"));
    let (built, read) = (tables(run(&text)), tables(run(&again)));
    for ((table, a), (_, b)) in built.iter().zip(&read) {
        assert!(
            a == b,
            "{name}: the {table} differ with the exported topology:\n{a:.2000}\n{b:.2000}"
        );
    }
}

#[test]
fn every_shipped_scenario_runs_the_same_from_its_exported_topology() {
    let root = repo();
    let files = [
        scenarios_in(&root.join("scenarios")),
        scenarios_in(&root.join("python/manypath/scenarios")),
        scenarios_in(&root.join("bench")),
    ];
    let mut ran = 0;
    for file in files.iter().flatten() {
        let name = file.file_name().unwrap().to_string_lossy();
        if SKIPPED.iter().any(|(skipped, _)| *skipped == name) {
            continue;
        }
        round_trip(file);
        ran += 1;
    }
    assert!(ran >= 20, "only {ran} scenarios found");
}
