//! A scenario's traffic entries: each entry's transport and class (and those of its
//! large flows), its routing (pinned paths, stop time), and its generator: the pattern's
//! fields and arrivals (`patterns`), the size distribution (`sizes`), and the jobs and
//! requests tables (`requests`).

mod collective;
mod goal;
mod matrix;
mod patterns;
mod placement;
mod requests;
mod sizes;

use crate::scenario::checker::Checker;
use crate::scenario::schema::{Pattern, Scenario, SizeSpec, SizeSplitSpec, TrafficSpec};
use crate::scenario::transports::{check_single_path_options, TransportPlan};
use crate::time::SimTime;
use crate::workload::generate::{SizeSplit, TrafficGen};
use patterns::{traffic_gen, Setting};
use requests::{jobs_gen, one_copy_each, requests_gen};
use std::path::Path;

pub(super) use matrix::write as write_matrix;

/// The traffic entries, checked: one generator per entry, with its routing.
pub(super) struct Traffic {
    /// The class labels, in order of first use.
    pub(super) classes: Vec<String>,
    pub(super) gens: Vec<TrafficGen>,
    /// Per entry: the path indices its connections are pinned to (empty: ECMP) and when
    /// its long-lived flows stop sending (`SimTime::MAX`: never).
    pub(super) entry_paths: Vec<Vec<u32>>,
    pub(super) entry_stop: Vec<SimTime>,
}

/// The `[[traffic]]` entries of `s` on a topology of `n_hosts` hosts (`None` when the
/// topology is wrong: only the entries' transports and classes are checked then), for a
/// run of `duration`. `host_rate_bps` is the hosts' NIC rate (for loads); `base_dir`
/// resolves relative CDF paths.
pub(super) fn traffic(
    s: &Scenario,
    n_hosts: Option<u32>,
    duration: SimTime,
    host_rate_bps: f64,
    base_dir: &Path,
    transports: &[TransportPlan],
    c: &mut Checker,
) -> Traffic {
    let mut out = Traffic {
        classes: Vec::new(),
        gens: Vec::new(),
        entry_paths: Vec::new(),
        entry_stop: Vec::new(),
    };
    if s.traffic.is_empty() {
        c.err("traffic", "at least one traffic entry is needed".into());
    }
    let mut trigger_base = 0;
    let (mut collective_jobs, mut collectives) = (0, 0);
    for (i, t) in s.traffic.iter().enumerate() {
        let path = format!("traffic[{i}]");
        let transport = entry_transport(s, t, &path, transports, c);
        let class = class_index(&mut out.classes, &t.class);
        let Some(n_hosts) = n_hosts else {
            // The rest needs the hosts; the size does not.
            if let Some(size) = &t.size {
                sizes::size_dist(size, &format!("{path}.size"), base_dir, c);
            }
            continue;
        };
        let requests = t.requests.as_ref().map(|r| {
            requests_gen(
                r,
                &path,
                n_hosts,
                transport,
                transports,
                &mut out.classes,
                c,
            )
        });
        let (paths, stop) = entry_routing(t, &path, &transports[transport as usize], c);
        let jobs = t
            .jobs
            .as_ref()
            .map(|j| jobs_gen(j, &path, &mut out.classes, c));
        let split = t
            .size_split
            .as_ref()
            .map(|x| size_split(x, &path, transports, &mut out.classes, c));
        let setting = Setting {
            n_hosts,
            duration,
            base_dir,
            host_rate_bps,
            trigger_base,
            seed: s.seed,
            entry: i,
            collective_jobs,
            collectives,
            transport: &transports[transport as usize].name,
            persistent: {
                let p = &transports[transport as usize];
                p.homa.is_none() && p.ndp.is_none() && p.roce.is_none()
            },
            replicas: transports[transport as usize].replicas,
        };
        if t.connection_pool {
            check_connection_pool(t, &path, transport, split.as_ref(), transports, c);
        }
        if let Some(mut g) = traffic_gen(t, &path, &setting, transport, class, requests.as_ref(), c)
        {
            g.requests = requests;
            g.jobs = jobs;
            g.split = split;
            trigger_base += g.matrix.as_ref().map_or(0, |m| m.triggers.len() as u32);
            if let Some(j) = g.matrix.as_ref().and_then(|m| m.collective.as_ref()) {
                collective_jobs += 1;
                collectives += j.iterations;
            }
            trigger_base += g.goal.as_ref().map_or(0, |m| m.triggers.len() as u32);
            out.gens.push(g);
            out.entry_paths.push(paths);
            out.entry_stop.push(stop);
        }
    }
    out
}

/// `connection_pool`: flows with a size, of transports that send each flow once, on a
/// pattern whose flows have connections of their own.
fn check_connection_pool(
    t: &TrafficSpec,
    path: &str,
    transport: u16,
    split: Option<&SizeSplit>,
    transports: &[TransportPlan],
    c: &mut Checker,
) {
    let field = format!("{path}.connection_pool");
    if t.pattern == Pattern::Requests {
        c.err(
            &field,
            "requests pick among their pair's connections with `requests.pick`".into(),
        );
    }
    if t.pattern == Pattern::Matrix {
        // A flow's receive-done is watched on a connection of its own.
        c.err(
            &field,
            "does not apply to pattern \"matrix\": each connection of the file is a flow on a connection of its own".into(),
        );
    }
    if t.pattern == Pattern::Goal {
        c.err(
            &field,
            "does not apply to pattern \"goal\": each message of the file is a flow on a connection of its own".into(),
        );
    }
    if matches!(t.size, Some(SizeSpec::LongLived)) {
        c.err(
            &field,
            "needs flows with a size (a long-lived flow never leaves its connection idle)".into(),
        );
    }
    one_copy_each(
        std::iter::once(transport).chain(split.map(|s| s.transport)),
        transports,
        &field,
        "a pooled flow takes one connection",
        c,
    );
}

/// The index of the entry's transport, whose single-path-only options are checked here
/// (for the transports traffic uses).
fn entry_transport(
    s: &Scenario,
    t: &TrafficSpec,
    path: &str,
    transports: &[TransportPlan],
    c: &mut Checker,
) -> u16 {
    match transports.iter().position(|p| p.name == t.transport) {
        Some(p) => {
            let prefix = if s.transports.contains_key(&t.transport) {
                format!("transports.{}.tcp", t.transport)
            } else {
                "tcp".to_string()
            };
            check_single_path_options(&transports[p], &prefix, c);
            p as u16
        }
        None => {
            let names: Vec<&str> = transports.iter().map(|p| p.name.as_str()).collect();
            c.err(
                &format!("{path}.transport"),
                format!(
                    "unknown transport {:?} (known: {})",
                    t.transport,
                    names.join(", ")
                ),
            );
            0
        }
    }
}

/// The index of class `name`, added to `classes` if new.
fn class_index(classes: &mut Vec<String>, name: &str) -> u16 {
    match classes.iter().position(|n| n == name) {
        Some(p) => p as u16,
        None => {
            classes.push(name.to_string());
            classes.len() as u16 - 1
        }
    }
}

/// The `size_split` of a traffic entry: its transport and class resolved.
fn size_split(
    x: &SizeSplitSpec,
    path: &str,
    transports: &[TransportPlan],
    classes: &mut Vec<String>,
    c: &mut Checker,
) -> SizeSplit {
    c.at_least(&format!("{path}.size_split.at_bytes"), x.at_bytes, 1);
    let transport = match transports.iter().position(|p| p.name == x.transport) {
        Some(p) => p as u16,
        None => {
            c.err(
                &format!("{path}.size_split.transport"),
                format!("unknown transport {:?}", x.transport),
            );
            0
        }
    };
    SizeSplit {
        at: x.at_bytes,
        transport,
        class: class_index(classes, x.class.as_deref().unwrap_or("long")),
    }
}

/// A traffic entry's `paths` and `stop_us`, checked as far as they can be without the
/// network (`topology::check_path_indices` and `level::check_unpinned` do the rest).
fn entry_routing(
    t: &TrafficSpec,
    path: &str,
    transport: &TransportPlan,
    c: &mut Checker,
) -> (Vec<u32>, SimTime) {
    let paths = t.paths.clone().unwrap_or_default();
    if t.paths.is_some() {
        let field = format!("{path}.paths");
        if paths.is_empty() {
            c.err(&field, "must name at least one path index, got []".into());
        } else if paths.len() > transport.subflows as usize {
            c.err(
                &field,
                format!(
                    "names {} paths for transport {:?}, which has {} subflow(s)",
                    paths.len(),
                    transport.name,
                    transport.subflows
                ),
            );
        }
        if transport.cc.scatter_bytes().is_some() {
            c.err(
                &field,
                "MMPTCP scatters packets over random paths; it cannot be pinned".into(),
            );
        }
    }
    let mut stop = SimTime::MAX;
    if let Some(us) = t.stop_us {
        let field = format!("{path}.stop_us");
        stop = c.time(&field, Some(us), SimTime::MAX, true);
        let long_lived = match t.size {
            Some(SizeSpec::LongLived) => true,
            Some(
                SizeSpec::Fixed(_)
                | SizeSpec::Uniform { .. }
                | SizeSpec::Pareto { .. }
                | SizeSpec::Cdf(_)
                | SizeSpec::CdfStep(_),
            )
            | None => false,
        };
        if !long_lived || t.pattern == Pattern::Requests {
            c.err(
                &field,
                "applies only to long-lived flows (size = \"long_lived\") of their own".into(),
            );
        } else if us <= t.start_us {
            c.err(
                &field,
                format!("must be after start_us ({}), got {us}", t.start_us),
            );
        }
    }
    (paths, stop)
}

#[cfg(test)]
mod tests {
    use crate::scenario::plan::tests::{errors, GOOD};
    use crate::scenario::Plan;
    use crate::time::from_us;
    use std::path::Path;

    #[test]
    fn unknown_transports_name_the_known_ones() {
        let e = errors(&GOOD.replace("transport = \"dctcp\"", "transport = \"quic\""));
        assert!(
            e.contains("traffic[0].transport: unknown transport \"quic\" (known: tcp, cubic,"),
            "{e}"
        );
        let split = GOOD.to_string() + "size_split = { at_bytes = 1000, transport = \"quic\" }\n";
        let e = errors(&split);
        assert!(
            e.contains("traffic[0].size_split.transport: unknown transport \"quic\""),
            "{e}"
        );
    }

    #[test]
    fn connection_pools_are_checked() {
        let sized = GOOD.replace("\"long_lived\"", "{ fixed = 1000 }");
        let ok = sized.clone() + "connection_pool = true\n";
        let p = Plan::from_toml(&ok, Path::new(".")).unwrap();
        let (flows, conns) = p.workload();
        assert_eq!(conns.len(), flows.len());
        assert!(flows.iter().all(|f| f.conn.is_some()));
        let e = errors(&(GOOD.to_string() + "connection_pool = true\n"));
        assert!(
            e.contains("traffic[0].connection_pool: needs flows with a size"),
            "{e}"
        );
        let e = errors(
            &(sized.clone()
                + "connection_pool = true\nsize_split = { at_bytes = 500, transport = \"rep\" }\n"
                + "[transports.rep]\ncc = \"dctcp\"\nreplicas = 2\n"),
        );
        assert!(
            e.contains("traffic[0].connection_pool: a pooled flow takes one connection: transports.rep.replicas must be 1, got 2"),
            "{e}"
        );
        let e = errors(
            &(sized.replace("\"permutation\"", "\"requests\"")
                + "load = 0.1\nrequests = { clients = [0], servers = [1] }\nconnection_pool = true\n"),
        );
        assert!(
            e.contains("traffic[0].connection_pool: requests pick among their pair's connections"),
            "{e}"
        );
        let e = errors(&(ok.replace("duration_ms = 10", "duration_ms = 10\nlevel = \"flow\"")));
        assert!(
            e.contains("traffic[0].connection_pool: connection pools are modelled at the packet level only"),
            "{e}"
        );
    }

    #[test]
    fn classes_are_numbered_in_order_of_first_use() {
        let text = GOOD.to_string()
            + "class = \"long\"\nsize_split = { at_bytes = 1000, transport = \"mptcp\", class = \"big\" }\n"
            + "[[traffic]]\npattern = \"permutation\"\nsize = \"long_lived\"\nclass = \"big\"\n";
        let p = Plan::from_toml(&text, Path::new(".")).unwrap();
        assert_eq!(p.classes, ["long", "big"]);
    }

    #[test]
    fn pinned_paths_are_checked() {
        let e = errors(&(GOOD.to_string() + "paths = [0, 1]\n"));
        assert!(
            e.contains("traffic[0].paths: names 2 paths for transport \"dctcp\""),
            "{e}"
        );
        let e = errors(&(GOOD.to_string() + "paths = []\n"));
        assert!(
            e.contains("traffic[0].paths: must name at least one"),
            "{e}"
        );
        let mmptcp = GOOD.replace("transport = \"dctcp\"", "transport = \"mp\"")
            + "paths = [1]\n[transports.mp]\ncc = \"mmptcp\"\n";
        let e = errors(&mmptcp);
        assert!(e.contains("traffic[0].paths: MMPTCP"), "{e}");
    }

    #[test]
    fn stop_times_are_checked() {
        let plan =
            Plan::from_toml(&(GOOD.to_string() + "stop_us = 500\n"), Path::new(".")).unwrap();
        assert_eq!(plan.entry_stop, vec![from_us(500.0)]);
        let e = errors(&(GOOD.to_string() + "start_us = 10\nstop_us = 5\n"));
        assert!(
            e.contains("traffic[0].stop_us: must be after start_us"),
            "{e}"
        );
        let e = errors(&(GOOD.replace("\"long_lived\"", "{ fixed = 1000 }") + "stop_us = 500\n"));
        assert!(
            e.contains("traffic[0].stop_us: applies only to long-lived flows"),
            "{e}"
        );
    }
}
