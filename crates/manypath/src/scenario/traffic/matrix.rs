//! Connection-matrix files (`pattern = "matrix"`), in the format htsim reads
//! (`docs/scenarios.md` describes it): header lines (`Nodes`, `Connections`, `Triggers`,
//! `Failures`), one line per connection (`src->dst` and its attributes) and one per
//! trigger. Read and checked whole before the run: a malformed line, an unknown trigger,
//! a host the fabric lacks or a cycle of triggers is an error naming the file and line.

use crate::time::SimTime;
use crate::workload::generate::{MatrixConn, MatrixGen};
use crate::workload::{Trigger, TriggerKind};
use std::collections::HashMap;
use std::path::Path;

/// Reads matrix `file` (relative to `base_dir`) for a fabric of `n_hosts` hosts; its
/// triggers are the run's from `trigger_base` on, and start their flows `delay` after
/// firing. The error names the file and line.
pub(super) fn read(
    file: &str,
    base_dir: &Path,
    n_hosts: u32,
    trigger_base: u32,
    delay: SimTime,
) -> Result<MatrixGen, String> {
    let text = std::fs::read_to_string(base_dir.join(file))
        .map_err(|e| format!("cannot read connection matrix {file}: {e}"))?;
    parse(&text, file, n_hosts, trigger_base, delay)
}

/// Matrix `m` as htsim's connection-matrix text, for a fabric of `n_hosts` hosts, its
/// timed connections starting at `start` plus their own: the file `read` gives `m` back
/// from. A connection that starts some time after its trigger fires (a compute gap) has
/// no equivalent in the format; the error says what does.
pub fn write(m: &MatrixGen, n_hosts: u32, start: SimTime) -> Result<String, String> {
    use std::fmt::Write;
    if let Some(c) = m.conns.iter().find(|c| c.wait.is_some() && c.delay > 0) {
        return Err(format!(
            "connection {} starts {} µs after its trigger fires: htsim's connection matrices \
             start a triggered connection when its trigger fires, so a delay (a collective's \
             gap_us between iterations, a matrix's trigger_delay_us) cannot be written",
            c.id,
            crate::time::to_secs(c.delay) * 1e6
        ));
    }
    let id = |t: Option<u32>| t.map(|t| m.triggers[t as usize].id);
    let mut out = String::new();
    let _ = writeln!(out, "Nodes {n_hosts}");
    let _ = writeln!(out, "Connections {}", m.conns.len());
    let _ = writeln!(out, "Triggers {}", m.triggers.len());
    for c in &m.conns {
        let _ = write!(out, "{}->{}", c.src, c.dst);
        if c.id > 0 {
            let _ = write!(out, " id {}", c.id);
        }
        match (c.start, id(c.wait)) {
            (Some(s), _) => {
                let _ = write!(out, " start {}", start.saturating_add(s));
            }
            (None, Some(t)) => {
                let _ = write!(out, " trigger {t}");
            }
            (None, None) => {}
        }
        let _ = write!(out, " size {}", c.size);
        if let Some(t) = id(c.on_send_done) {
            let _ = write!(out, " send_done_trigger {t}");
        }
        if let Some(t) = id(c.on_recv_done) {
            let _ = write!(out, " recv_done_trigger {t}");
        }
        out.push('\n');
    }
    for t in &m.triggers {
        let _ = match t.kind {
            TriggerKind::Oneshot => writeln!(out, "trigger id {} oneshot", t.id),
            TriggerKind::Multishot => writeln!(out, "trigger id {} multishot", t.id),
            TriggerKind::Barrier { count } => {
                writeln!(out, "trigger id {} barrier count {count}", t.id)
            }
        };
    }
    Ok(out)
}

/// A trigger as its line defines it.
struct TriggerLine {
    kind: TriggerKind,
    line: usize,
}

/// A connection as its line gives it, with trigger ids (0: none) yet to resolve.
struct ConnLine {
    conn: MatrixConn,
    line: usize,
    wait: u32,
    send_done: u32,
    recv_done: u32,
}

/// The header's counts, when given.
#[derive(Default)]
struct Header {
    connections: Option<(u64, usize)>,
    triggers: Option<(u64, usize)>,
}

/// Parses matrix text `text` (from file `name`).
pub(super) fn parse(
    text: &str,
    name: &str,
    n_hosts: u32,
    trigger_base: u32,
    delay: SimTime,
) -> Result<MatrixGen, String> {
    let at = |line: usize, msg: String| format!("{name} line {line}: {msg}");
    let mut header = Header::default();
    let mut conns: Vec<ConnLine> = Vec::new();
    let mut triggers: Vec<(u32, TriggerLine)> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let tokens: Vec<&str> = raw.split_whitespace().collect();
        let Some(&first) = tokens.first() else {
            continue;
        };
        if first.starts_with('#') {
            continue;
        }
        let count = |tokens: &[&str]| -> Result<u64, String> {
            match tokens {
                [_, n] => n
                    .parse::<u64>()
                    .map_err(|_| at(line, format!("{first} needs a count, got {n:?}"))),
                _ => Err(at(line, format!("expected \"{first} N\""))),
            }
        };
        match first {
            "Nodes" | "Failures" => {
                count(&tokens)?;
            }
            "Connections" => header.connections = Some((count(&tokens)?, line)),
            "Triggers" => header.triggers = Some((count(&tokens)?, line)),
            "trigger" => {
                let (id, t) = trigger_line(&tokens).map_err(|e| at(line, e))?;
                if let Some((_, old)) = triggers.iter().find(|(i, _)| *i == id) {
                    return Err(at(
                        line,
                        format!("trigger {id} is defined twice (first on line {})", old.line),
                    ));
                }
                triggers.push((id, TriggerLine { kind: t, line }));
            }
            "failure" => {
                return Err(at(
                    line,
                    "failure lines are not supported: htsim numbers the failed link by its \
                     switch type, switch and link number and fails it at a time given on its \
                     command line, which have no equivalent here; give the failure as a \
                     [[faults]] entry (kind = \"link_down\") instead"
                        .into(),
                ))
            }
            _ if first.contains("->") => {
                let c = conn_line(&tokens, n_hosts).map_err(|e| at(line, e))?;
                conns.push(ConnLine { line, ..c });
            }
            _ => {
                return Err(at(
                    line,
                    format!(
                        "expected a header line (Nodes, Connections, Triggers, Failures), a \
                         connection (src->dst ...), a trigger or a failure line, got {first:?}"
                    ),
                ))
            }
        }
    }
    if let Some((n, line)) = header.connections {
        if n != conns.len() as u64 {
            return Err(at(
                line,
                format!("declares {n} connections, the file has {}", conns.len()),
            ));
        }
    }
    if let Some((n, line)) = header.triggers {
        if n != triggers.len() as u64 {
            return Err(at(
                line,
                format!("declares {n} triggers, the file has {}", triggers.len()),
            ));
        }
    }
    let index: HashMap<u32, u32> = triggers
        .iter()
        .enumerate()
        .map(|(i, (id, _))| (*id, i as u32))
        .collect();
    let resolve = |c: &ConnLine, id: u32, what: &str| -> Result<Option<u32>, String> {
        if id == 0 {
            return Ok(None);
        }
        index.get(&id).copied().map(Some).ok_or_else(|| {
            at(
                c.line,
                format!("{what} {id} is not defined (no \"trigger id {id} ...\" line)"),
            )
        })
    };
    let mut out = Vec::with_capacity(conns.len());
    for c in &conns {
        let mut conn = c.conn;
        conn.delay = delay;
        conn.wait = resolve(c, c.wait, "trigger")?;
        conn.on_send_done = resolve(c, c.send_done, "send_done_trigger")?;
        conn.on_recv_done = resolve(c, c.recv_done, "recv_done_trigger")?;
        out.push(conn);
    }
    let ids: Vec<u32> = triggers.iter().map(|(id, _)| *id).collect();
    if let Some(cycle) = find_cycle(&out, &ids) {
        return Err(format!(
            "{name}: the triggers form a cycle, so its flows can never start: {cycle}"
        ));
    }
    Ok(MatrixGen {
        conns: out,
        triggers: triggers
            .iter()
            .map(|(id, t)| Trigger {
                kind: t.kind,
                id: *id,
            })
            .collect(),
        trigger_base,
        collective: None,
    })
}

/// The value after attribute `key` at `tokens[i]`, parsed.
fn value<T: std::str::FromStr>(tokens: &[&str], i: usize, what: &str) -> Result<T, String> {
    let key = tokens[i];
    let v = tokens
        .get(i + 1)
        .ok_or_else(|| format!("{key} needs a value"))?;
    v.parse::<T>()
        .map_err(|_| format!("{key} must be {what}, got {v:?}"))
}

/// `trigger id K oneshot|multishot|barrier [count N]`.
fn trigger_line(tokens: &[&str]) -> Result<(u32, TriggerKind), String> {
    let (mut id, mut count, mut kind) = (None, None, None);
    let mut i = 1;
    while i < tokens.len() {
        match tokens[i] {
            "id" => {
                id = Some(value::<u32>(tokens, i, "a positive integer")?);
                i += 1;
            }
            "count" => {
                count = Some(value::<u32>(tokens, i, "a positive integer")?);
                i += 1;
            }
            k @ ("oneshot" | "multishot" | "barrier") => {
                if let Some(old) = kind.replace(k) {
                    return Err(format!("a trigger has one type, got {old} and {k}"));
                }
            }
            other => {
                return Err(format!(
                    "unknown trigger attribute {other:?} (expected id, count, oneshot, \
                     multishot or barrier)"
                ))
            }
        }
        i += 1;
    }
    let id = match id {
        Some(0) => return Err("trigger id 0 is not allowed (ids start at 1)".into()),
        Some(id) => id,
        None => return Err("a trigger needs an id (trigger id K ...)".into()),
    };
    let kind = match (kind, count) {
        (Some("oneshot"), _) => TriggerKind::Oneshot,
        (Some("multishot"), _) => TriggerKind::Multishot,
        (Some(_), Some(n)) if n > 0 => TriggerKind::Barrier { count: n },
        (Some(_), _) => return Err(format!("barrier trigger {id} needs a count of at least 1")),
        (None, _) => {
            return Err(format!(
                "trigger {id} needs a type: oneshot, multishot or barrier"
            ))
        }
    };
    Ok((id, kind))
}

/// `src->dst` and its attributes.
fn conn_line(tokens: &[&str], n_hosts: u32) -> Result<ConnLine, String> {
    let ends = tokens[0];
    let (a, b) = ends.split_once("->").expect("a connection");
    let host = |s: &str| -> Result<u32, String> {
        let h = s.parse::<u32>().map_err(|_| {
            format!("malformed connection {ends:?}: expected src->dst, two host numbers")
        })?;
        if h >= n_hosts {
            return Err(format!(
                "host {h} does not exist: the fabric has {n_hosts} hosts, 0..{}",
                n_hosts.saturating_sub(1)
            ));
        }
        Ok(h)
    };
    let (src, dst) = (host(a)?, host(b)?);
    if src == dst {
        return Err(format!("connection {ends} goes from host {src} to itself"));
    }
    let mut c = ConnLine {
        conn: MatrixConn {
            src,
            dst,
            id: 0,
            start: None,
            size: 0,
            delay: 0,
            wait: None,
            on_send_done: None,
            on_recv_done: None,
            tag: None,
        },
        line: 0,
        wait: 0,
        send_done: 0,
        recv_done: 0,
    };
    let mut size = None;
    let mut i = 1;
    while i < tokens.len() {
        match tokens[i] {
            // Picoseconds, possibly with a fraction, as htsim reads it.
            "start" => {
                let ps = value::<f64>(tokens, i, "a time in picoseconds")?;
                if !(ps.is_finite() && ps >= 0.0) {
                    return Err(format!("start must be a time in picoseconds ≥ 0, got {ps}"));
                }
                c.conn.start = Some(ps as SimTime);
            }
            "size" => {
                let v = tokens.get(i + 1).ok_or("size needs a value")?;
                match v.parse::<i64>() {
                    Ok(n) if n > 0 => size = Some(n as u64),
                    _ => {
                        return Err(format!(
                            "size must be a positive number of bytes, got {v:?}"
                        ))
                    }
                }
            }
            "id" => {
                c.conn.id = value::<u32>(tokens, i, "a positive integer")?;
                if c.conn.id == 0 {
                    return Err("connection id 0 is not allowed (ids start at 1)".into());
                }
            }
            "trigger" => {
                c.wait = value::<u32>(tokens, i, "a trigger id")?;
                if c.wait == 0 {
                    return Err("trigger id 0 is not allowed (ids start at 1)".into());
                }
            }
            "send_done_trigger" => c.send_done = value::<u32>(tokens, i, "a trigger id")?,
            "recv_done_trigger" => c.recv_done = value::<u32>(tokens, i, "a trigger id")?,
            // htsim's priority and message number: read, not used here (the entry's
            // `priority` gives the flows' class).
            "prio" | "msg" => {
                value::<i64>(tokens, i, "an integer")?;
            }
            // A flag of htsim's own (no value).
            "addon" => {
                i += 1;
                continue;
            }
            other => {
                return Err(format!(
                    "unknown connection attribute {other:?} (expected start, size, id, \
                     trigger, send_done_trigger, recv_done_trigger, prio or msg)"
                ))
            }
        }
        i += 2;
    }
    c.conn.size = size.ok_or("a connection needs a size (size N, in bytes)")?;
    match (c.conn.start.is_some(), c.wait != 0) {
        (false, false) => {
            return Err(format!(
            "connection {ends} has neither a start time nor a trigger (give start T or trigger K)"
        ))
        }
        (true, true) => {
            return Err(format!(
                "connection {ends} has both a start time and a trigger (give one)"
            ))
        }
        (true, false) | (false, true) => {}
    }
    if c.wait != 0 && c.conn.id == 0 {
        return Err(format!(
            "connection {ends} is started by a trigger, so it needs an id (id N)"
        ));
    }
    Ok(c)
}

/// A cycle of triggers, if any: trigger t starts a connection whose completion
/// activates trigger u, and so on back to t. Named as `trigger 1 → connection 2 →
/// trigger 1` (ids as in the file).
fn find_cycle(conns: &[MatrixConn], ids: &[u32]) -> Option<String> {
    // Per trigger, (connection, trigger it activates) for each connection it starts.
    let mut next: Vec<Vec<(u32, u32)>> = vec![Vec::new(); ids.len()];
    for c in conns {
        if let Some(w) = c.wait {
            for to in [c.on_send_done, c.on_recv_done].into_iter().flatten() {
                if !next[w as usize].contains(&(c.id, to)) {
                    next[w as usize].push((c.id, to));
                }
            }
        }
    }
    // Depth-first, iteratively: 0 unseen, 1 on the current path, 2 done.
    let mut state = vec![0u8; ids.len()];
    for root in 0..ids.len() {
        if state[root] != 0 {
            continue;
        }
        // (trigger, next edge to follow, connection that led here)
        let mut path: Vec<(usize, usize, u32)> = vec![(root, 0, 0)];
        state[root] = 1;
        while let Some(&mut (t, ref mut k, _)) = path.last_mut() {
            if let Some(&(conn, to)) = next[t].get(*k) {
                *k += 1;
                let to = to as usize;
                match state[to] {
                    0 => {
                        state[to] = 1;
                        path.push((to, 0, conn));
                    }
                    1 => {
                        let from = path.iter().position(|p| p.0 == to).expect("on the path");
                        let mut s = format!("trigger {}", ids[to]);
                        for p in &path[from + 1..] {
                            s += &format!(" → connection {} → trigger {}", p.2, ids[p.0]);
                        }
                        s += &format!(" → connection {conn} → trigger {}", ids[to]);
                        return Some(s);
                    }
                    _ => {}
                }
            } else {
                state[t] = 2;
                path.pop();
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<MatrixGen, String> {
        parse(text, "x.cm", 16, 0, 0)
    }

    #[test]
    fn htsims_permutation_file_reads_as_it_is() {
        let m = read(
            "Nodes 16\nConnections 2\n7->5 id 1 start 0 size 2000000\n15->1 id 2 start 1500000 size 2000000\n",
        )
        .unwrap();
        assert_eq!(m.conns.len(), 2);
        assert_eq!(
            (
                m.conns[1].src,
                m.conns[1].dst,
                m.conns[1].start,
                m.conns[1].size
            ),
            (15, 1, Some(1_500_000), 2_000_000)
        );
        // Without ids (htsim's incast file).
        let m = read("Nodes 16\nConnections 1\n0->15 start 0 size 2000000").unwrap();
        assert_eq!(m.conns[0].id, 0);
    }

    #[test]
    fn triggers_resolve_to_their_index_in_the_file() {
        let m = read(
            "Nodes 16\nConnections 3\nTriggers 2\n\
             0->1 id 1 start 0 size 100 send_done_trigger 5\n\
             1->2 id 2 trigger 5 size 100 recv_done_trigger 3\n\
             2->3 id 3 trigger 3 size 100\n\
             trigger id 5 oneshot\ntrigger id 3 barrier count 1\n",
        )
        .unwrap();
        let t: Vec<_> = m
            .conns
            .iter()
            .map(|c| (c.wait, c.on_send_done, c.on_recv_done))
            .collect();
        assert_eq!(
            t,
            [
                (None, Some(0), None),
                (Some(0), None, Some(1)),
                (Some(1), None, None)
            ]
        );
        assert_eq!(m.triggers[1].kind, TriggerKind::Barrier { count: 1 });
    }

    #[test]
    fn bad_input_is_named_by_file_and_line() {
        let cases = [
            (
                "Connections 2\n0->1 id 1 start 0 size 10 send_done_trigger 1\n\
                 1->2 id 2 trigger 1 size 10 send_done_trigger 2\n\
                 2->3 id 3 trigger 2 size 10 recv_done_trigger 1\n\
                 trigger id 1 oneshot\ntrigger id 2 oneshot\n",
                "x.cm line 1: declares 2 connections, the file has 3",
            ),
            (
                "0->1 id 1 start 0 size 10 send_done_trigger 1\n\
                 1->2 id 2 trigger 1 size 10 send_done_trigger 2\n\
                 2->3 id 3 trigger 2 size 10 recv_done_trigger 1\n\
                 trigger id 1 oneshot\ntrigger id 2 oneshot\n",
                "x.cm: the triggers form a cycle, so its flows can never start: \
                 trigger 1 → connection 2 → trigger 2 → connection 3 → trigger 1",
            ),
            (
                "0->1 id 1 start 0 size 10 send_done_trigger 4\n",
                "x.cm line 1: send_done_trigger 4 is not defined (no \"trigger id 4 ...\" line)",
            ),
            (
                "\n0->16 id 1 start 0 size 10\n",
                "x.cm line 2: host 16 does not exist: the fabric has 16 hosts, 0..15",
            ),
            (
                "0->1 id 1 start 0 size -5\n",
                "x.cm line 1: size must be a positive number of bytes, got \"-5\"",
            ),
            (
                "0->1 id 1 start 0 size 0\n",
                "x.cm line 1: size must be a positive number of bytes, got \"0\"",
            ),
            (
                "Nodes 16\n0-1 id 1 start 0 size 10\n",
                "x.cm line 2: expected a header line (Nodes, Connections, Triggers, \
                 Failures), a connection (src->dst ...), a trigger or a failure line, got \"0-1\"",
            ),
            (
                "0->x start 0 size 10\n",
                "x.cm line 1: malformed connection \"0->x\": expected src->dst, two host numbers",
            ),
            (
                "0->1 id 1 size 10\n",
                "x.cm line 1: connection 0->1 has neither a start time nor a trigger \
                 (give start T or trigger K)",
            ),
            (
                "0->1 id 1 start 0 size 10 colour 3\n",
                "x.cm line 1: unknown connection attribute \"colour\" (expected start, size, \
                 id, trigger, send_done_trigger, recv_done_trigger, prio or msg)",
            ),
            (
                "trigger id 1 barrier\n",
                "x.cm line 1: barrier trigger 1 needs a count of at least 1",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(read(text).err().as_deref(), Some(want), "{text}");
        }
        let e = read("failure switch_type TOR switch_id 0 link_id 1\n").unwrap_err();
        assert!(
            e.starts_with("x.cm line 1: failure lines are not supported"),
            "{e}"
        );
    }
}
