//! The tables of the closed-loop patterns: `jobs` (partition–aggregate jobs) and
//! `requests` (requests over persistent connections, with their background kind).

use super::class_index;
use crate::scenario::checker::Checker;
use crate::scenario::schema::{ConnPickSpec, JobsSpec, RequestsSpec};
use crate::scenario::transports::TransportPlan;
use crate::workload::generate::{ConnPick, JobsGen, RequestsGen};

/// The `jobs` table of a traffic entry, checked (the host count in `patterns::jobs_fields`).
pub(super) fn jobs_gen(
    j: &JobsSpec,
    path: &str,
    classes: &mut Vec<String>,
    c: &mut Checker,
) -> JobsGen {
    let parallel = j.parallel.unwrap_or(1);
    c.at_least(&format!("{path}.jobs.parallel"), parallel as u64, 1);
    c.at_least(&format!("{path}.jobs.fanout"), j.fanout as u64, 1);
    if j.request_bytes.unwrap_or(0) == 0 && j.request_class.is_some() {
        c.err(
            &format!("{path}.jobs.request_class"),
            "applies only with request_bytes > 0".into(),
        );
    }
    JobsGen {
        parallel: parallel.max(1),
        fanout: j.fanout.max(1),
        request_bytes: j.request_bytes.unwrap_or(0),
        request_class: class_index(classes, j.request_class.as_deref().unwrap_or("request")),
    }
}

/// The `requests` table of a traffic entry (whose transport is `transport`): hosts
/// checked, the background transport and class resolved.
pub(super) fn requests_gen(
    r: &RequestsSpec,
    path: &str,
    n_hosts: u32,
    transport: u16,
    transports: &[TransportPlan],
    classes: &mut Vec<String>,
    c: &mut Checker,
) -> RequestsGen {
    for (field, hosts) in [("clients", &r.clients), ("servers", &r.servers)] {
        if hosts.is_empty() {
            c.err(
                &format!("{path}.requests.{field}"),
                "needs at least one host".into(),
            );
        }
        for &h in hosts {
            if h >= n_hosts {
                c.err(
                    &format!("{path}.requests.{field}"),
                    format!(
                        "host {h} does not exist (hosts are 0..{})",
                        n_hosts.max(1) - 1
                    ),
                );
            }
        }
    }
    if r.servers.len() == 1 && r.clients == r.servers {
        c.err(
            &format!("{path}.requests.servers"),
            "needs a server other than the one client".into(),
        );
    }
    let connections = r.connections.unwrap_or(5);
    let pick = match r.pick {
        None | Some(ConnPickSpec::RoundRobin) => ConnPick::RoundRobin,
        Some(ConnPickSpec::Idle) => ConnPick::Idle,
    };
    let idle = pick == ConnPick::Idle;
    // An idle pick opens connections as responses need them: it may start with none.
    if connections == 0 && !idle {
        c.err(
            &format!("{path}.requests.connections"),
            "must be at least 1 (0 only with pick = \"idle\"), got 0".into(),
        );
    }
    if let Some(b) = r.sizes_below_bytes {
        c.at_least(&format!("{path}.requests.sizes_below_bytes"), b, 2);
    }
    let name = r.background_transport.as_deref().unwrap_or("tcp");
    let background_transport = match transports.iter().position(|p| p.name == name) {
        Some(p) => p as u16,
        None => {
            c.err(
                &format!("{path}.requests.background_transport"),
                format!("unknown transport {name:?}"),
            );
            0
        }
    };
    if r.background_above_bytes.is_none()
        && (r.background_transport.is_some() || r.background_class.is_some())
    {
        c.err(
            &format!("{path}.requests.background_above_bytes"),
            "is needed for background_transport and background_class".into(),
        );
    }
    let background_class = class_index(
        classes,
        r.background_class.as_deref().unwrap_or("background"),
    );
    if let Some(n) = r.fanout {
        c.at_least(&format!("{path}.requests.fanout"), n as u64, 1);
        if r.background_above_bytes.is_some() {
            c.err(
                &format!("{path}.requests.fanout"),
                "partition–aggregate requests have no background kind; drop background_above_bytes"
                    .into(),
            );
        }
        if r.servers.iter().any(|s| r.clients.contains(s)) {
            c.err(
                &format!("{path}.requests.servers"),
                "with fanout, clients and servers must be different hosts".into(),
            );
        }
    }
    if idle {
        if r.fanout.is_some() {
            c.err(
                &format!("{path}.requests.pick"),
                "\"idle\" applies to requests without fanout (each application's connections go in turn)".into(),
            );
        }
        let background = r.background_above_bytes.map(|_| background_transport);
        one_copy_each(
            [Some(transport), background].into_iter().flatten(),
            transports,
            &format!("{path}.requests.pick"),
            "\"idle\" picks one connection per response",
            c,
        );
    }
    RequestsGen {
        pick,
        fanout: r.fanout.map(|n| n.max(1)),
        clients: r.clients.clone(),
        servers: r.servers.clone(),
        connections: if idle {
            connections
        } else {
            connections.max(1)
        },
        sizes_below: r.sizes_below_bytes.map(|b| b.max(2)),
        background_above: r.background_above_bytes,
        background_transport,
        background_class,
    }
}

/// Every one of `used` (transport indices) sends each flow once (`replicas` = 1), as a
/// flow that picks its connection from a pool needs: else an error at `field` saying
/// `why`.
pub(super) fn one_copy_each(
    used: impl Iterator<Item = u16>,
    transports: &[TransportPlan],
    field: &str,
    why: &str,
    c: &mut Checker,
) {
    for t in used.map(|i| &transports[i as usize]) {
        if t.replicas > 1 {
            c.err(
                field,
                format!(
                    "{why}: transports.{}.replicas must be 1, got {}",
                    t.name, t.replicas
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::plan::tests::{errors, GOOD};
    use crate::scenario::Plan;
    use std::path::Path;

    const REQUESTS: &str = "duration_ms = 10\n[topology.fat_tree]\nk = 4\n[[traffic]]\n\
        pattern = \"requests\"\nsize = { fixed = 1000 }\nload = 0.1\n";

    #[test]
    fn requests_tables_are_checked() {
        let ok = REQUESTS.to_string()
            + "requests = { clients = [0], servers = [1, 2], background_above_bytes = 500 }\n";
        let p = Plan::from_toml(&ok, Path::new(".")).unwrap();
        let r = p.traffic[0].requests.as_ref().unwrap();
        assert_eq!((r.connections, r.background_class), (5, 1));
        assert_eq!(p.classes, ["default", "background"]);
        let e = errors(&(REQUESTS.to_string() + "requests = { clients = [0], servers = [0] }\n"));
        assert!(
            e.contains("traffic[0].requests.servers: needs a server other than the one client"),
            "{e}"
        );
        let e = errors(
            &(REQUESTS.to_string()
                + "requests = { clients = [0], servers = [99], background_class = \"bg\" }\n"),
        );
        assert!(
            e.contains("traffic[0].requests.servers: host 99 does not exist (hosts are 0..15)"),
            "{e}"
        );
        assert!(
            e.contains("traffic[0].requests.background_above_bytes: is needed for"),
            "{e}"
        );
    }

    #[test]
    fn an_idle_pick_is_checked() {
        let ok = REQUESTS.to_string()
            + "requests = { clients = [0], servers = [1, 2], pick = \"idle\" }\n";
        let p = Plan::from_toml(&ok, Path::new(".")).unwrap();
        let r = p.traffic[0].requests.as_ref().unwrap();
        assert_eq!(r.pick, crate::workload::ConnPick::Idle);
        let e = errors(
            &(REQUESTS.to_string()
                + "requests = { clients = [0], servers = [1, 2], pick = \"idle\", fanout = 2 }\n"),
        );
        assert!(
            e.contains("traffic[0].requests.pick: \"idle\" applies to requests without fanout"),
            "{e}"
        );
        let e = errors(
            &(REQUESTS.to_string()
                + "transport = \"rep\"\n"
                + "requests = { clients = [0], servers = [1], pick = \"idle\" }\n"
                + "[transports.rep]\ncc = \"dctcp\"\nreplicas = 2\n"),
        );
        assert!(
            e.contains("traffic[0].requests.pick: \"idle\" picks one connection per response: transports.rep.replicas must be 1, got 2"),
            "{e}"
        );
        let e = errors(
            &(REQUESTS.to_string()
                + "requests = { clients = [0], servers = [1], pick = \"any\" }\n"),
        );
        assert!(e.contains("traffic[0].requests.pick"), "{e}");
        let none =
            REQUESTS.to_string() + "requests = { clients = [0], servers = [1], connections = 0";
        assert!(Plan::from_toml(&(none.clone() + ", pick = \"idle\" }\n"), Path::new(".")).is_ok());
        let e = errors(&(none + " }\n"));
        assert!(
            e.contains("traffic[0].requests.connections: must be at least 1 (0 only with pick = \"idle\"), got 0"),
            "{e}"
        );
    }

    #[test]
    fn jobs_tables_are_checked() {
        let jobs = GOOD
            .replace("\"permutation\"", "\"jobs\"")
            .replace("\"long_lived\"", "{ fixed = 1000 }");
        let p = Plan::from_toml(
            &(jobs.clone() + "jobs = { fanout = 3, request_bytes = 100 }\n"),
            Path::new("."),
        )
        .unwrap();
        let j = p.traffic[0].jobs.unwrap();
        assert_eq!((j.parallel, j.fanout, j.request_bytes), (1, 3, 100));
        assert_eq!(p.classes, ["default", "request"]);
        let e = errors(&(jobs + "jobs = { fanout = 0, request_class = \"r\" }\n"));
        assert!(
            e.contains("traffic[0].jobs.fanout: must be at least 1, got 0"),
            "{e}"
        );
        assert!(
            e.contains("traffic[0].jobs.request_class: applies only with request_bytes > 0"),
            "{e}"
        );
    }
}
