//! GOAL schedules (`pattern = "goal"`), in the text format of LogGOPSim's `txt2bin`
//! that Schedgen and ATLAHS's generators write (`docs/scenarios.md` describes it):
//! `num_ranks N`, then per rank a block `rank R { ... }` of labelled operations (`l1:
//! send 100b to 1 tag 5`, `recv ... from ...`, `calc N`) and dependencies (`l2 requires
//! l1`, `l2 irequires l1`). Read, matched and checked whole before the run: a malformed
//! line, an unknown label, a rank or peer beyond `num_ranks`, a send or receive that
//! nothing matches, or a cycle of dependencies is an error naming the file (and the line
//! where there is one). Then each operation becomes two triggers, its start and its
//! completion, and each message between hosts a flow (`workload::generate::goal`).

pub(super) use super::placement::Placement;
#[cfg(test)]
use crate::engine::Rng;
use crate::time::SimTime;
use crate::workload::generate::{GoalFlow, GoalGen};
use crate::workload::{Trigger, TriggerKind, TriggerLink};
use std::collections::HashMap;
use std::path::Path;

/// What the traffic entry gives the schedule.
pub(super) struct Entry<'a> {
    /// The entry's hosts, where the ranks run.
    pub hosts: &'a [u32],
    pub placement: Placement,
    pub rendezvous_bytes: Option<u64>,
    /// The run's triggers before this entry's.
    pub trigger_base: u32,
}

/// Reads schedule `file` (relative to `base_dir`) for traffic entry `entry`. The error
/// names the file, and the line where there is one.
pub(super) fn read(file: &str, base_dir: &Path, entry: &Entry) -> Result<GoalGen, String> {
    let text = std::fs::read_to_string(base_dir.join(file))
        .map_err(|e| format!("cannot read GOAL schedule {file}: {e}"))?;
    let schedule = parse(&text, file)?;
    build(&schedule, file, entry)
}

/// What an operation does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OpKind {
    Send {
        peer: u32,
        size: u64,
        tag: u32,
    },
    Recv {
        peer: u32,
        size: u64,
        tag: u32,
    },
    /// A computation of `ns` nanoseconds.
    Calc {
        ns: u64,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Op {
    rank: u32,
    label: Option<String>,
    line: usize,
    kind: OpKind,
}

impl Op {
    /// As messages name it: `rank 0's send l3 (to rank 1, tag 5)`.
    fn name(&self) -> String {
        let label = match &self.label {
            Some(l) => l.clone(),
            None => format!("on line {}", self.line),
        };
        let (what, detail) = match self.kind {
            OpKind::Send { peer, tag, .. } => ("send", format!(" (to rank {peer}, tag {tag})")),
            OpKind::Recv { peer, tag, .. } => ("recv", format!(" (from rank {peer}, tag {tag})")),
            OpKind::Calc { .. } => ("calc", String::new()),
        };
        format!("rank {}'s {what} {label}{detail}", self.rank)
    }
}

/// Operation `op` waits for operation `on`'s completion (`requires`) or start
/// (`irequires`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Dep {
    op: u32,
    on: u32,
    start: bool,
}

/// A schedule as its file gives it, its labels resolved.
#[derive(Debug)]
struct Schedule {
    ranks: u32,
    ops: Vec<Op>,
    deps: Vec<Dep>,
}

/// The rank block being read.
struct Block {
    rank: u32,
    line: usize,
    labels: HashMap<String, u32>,
    /// (waiting label, label waited for, irequires, line)
    deps: Vec<(String, String, bool, usize)>,
}

/// The tokens of a line: words, and `{`, `}` and `:` alone.
fn tokens(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, ch) in line.char_indices() {
        let single = matches!(ch, '{' | '}' | ':');
        if ch.is_whitespace() || single {
            if let Some(s) = start.take() {
                out.push(&line[s..i]);
            }
            if single {
                out.push(&line[i..i + 1]);
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        out.push(&line[s..]);
    }
    out
}

/// `line` without its comments (`// ...` to the end of the line, `/* ... */` over any
/// number of lines): `open` says whether a block comment is open when it starts and
/// ends.
fn strip_comments(line: &str, open: &mut bool) -> String {
    let mut out = String::new();
    let mut rest = line;
    loop {
        if *open {
            match rest.find("*/") {
                Some(i) => {
                    *open = false;
                    rest = &rest[i + 2..];
                    out.push(' ');
                }
                None => return out,
            }
        } else {
            let block = rest.find("/*");
            let to_end = rest.find("//");
            match (block, to_end) {
                (Some(b), e) if e.is_none_or(|e| b < e) => {
                    out.push_str(&rest[..b]);
                    *open = true;
                    rest = &rest[b + 2..];
                }
                (_, Some(e)) => {
                    out.push_str(&rest[..e]);
                    return out;
                }
                (_, None) => {
                    out.push_str(rest);
                    return out;
                }
            }
        }
    }
}

fn is_label(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !matches!(s, "send" | "recv" | "calc" | "rank" | "num_ranks")
}

fn number<T: std::str::FromStr>(tokens: &[&str], i: usize, what: &str) -> Result<T, String> {
    let key = tokens[i - 1];
    let v = tokens.get(i).ok_or_else(|| format!("{key} needs {what}"))?;
    v.parse::<T>()
        .map_err(|_| format!("{key} needs {what}, got {v:?}"))
}

/// A message's size, `100b` or `100 b`, from `tokens[*i]` on; `*i` moves past it.
fn size(tokens: &[&str], i: &mut usize, op: &str) -> Result<u64, String> {
    let Some(&t) = tokens.get(*i) else {
        return Err(format!("{op} needs a size in bytes, e.g. 100b"));
    };
    let digits = match t.strip_suffix('b') {
        Some(d) => d,
        None if tokens.get(*i + 1) == Some(&"b") => {
            *i += 1;
            t
        }
        None => t,
    };
    *i += 1;
    match digits.parse::<i128>() {
        Ok(n) if n > 0 && n <= u64::MAX as i128 => Ok(n as u64),
        Ok(_) => Err(format!(
            "size must be a positive number of bytes, got {t:?}"
        )),
        Err(_) => Err(format!(
            "{op} needs a size in bytes such as 100b, got {t:?}"
        )),
    }
}

/// `send SIZE to PEER [tag T] [cpu C] [nic N]`, `recv SIZE from PEER [...]`,
/// `calc N [cpu C]`, from `tokens` (the operation's name first).
fn operation(tokens: &[&str], ranks: u32) -> Result<OpKind, String> {
    let op = tokens[0];
    let peer_rank = |v: &str, word: &str| -> Result<u32, String> {
        if v == "-1" && op == "recv" {
            return Err(
                "recv from -1 (any source) is not supported: messages are matched to \
                 receives before the run, by source, destination and tag"
                    .into(),
            );
        }
        let p = v
            .parse::<u32>()
            .map_err(|_| format!("{op} needs a rank after \"{word}\", got {v:?}"))?;
        if p >= ranks {
            return Err(format!(
                "rank {p} does not exist: num_ranks is {ranks} (ranks 0..{})",
                ranks - 1
            ));
        }
        Ok(p)
    };
    let attributes = |tokens: &[&str], allowed: &[&str]| -> Result<u32, String> {
        let mut tag = 0;
        let mut seen: Vec<&str> = Vec::new();
        let mut i = 0;
        while i < tokens.len() {
            let key = tokens[i];
            if !allowed.contains(&key) {
                return Err(format!(
                    "unknown {op} attribute {key:?} (expected {})",
                    allowed.join(", ")
                ));
            }
            if seen.contains(&key) {
                return Err(format!("{key} is given twice"));
            }
            seen.push(key);
            let v = tokens
                .get(i + 1)
                .ok_or_else(|| format!("{key} needs a value"))?;
            match key {
                "tag" if *v == "-1" => {
                    return Err(
                        "tag -1 (any tag) is not supported: messages are matched to \
                         receives before the run, by source, destination and tag"
                            .into(),
                    )
                }
                "tag" => {
                    tag = v
                        .parse::<u32>()
                        .map_err(|_| format!("tag needs a number, got {v:?}"))?
                }
                // Which CPU and NIC of the rank's host: read, without effect here.
                _ => {
                    v.parse::<u32>()
                        .map_err(|_| format!("{key} needs a number, got {v:?}"))?;
                }
            }
            i += 2;
        }
        Ok(tag)
    };
    match op {
        "send" | "recv" => {
            let mut i = 1;
            let size = size(tokens, &mut i, op)?;
            let word = if op == "send" { "to" } else { "from" };
            if tokens.get(i) != Some(&word) {
                return Err(format!(
                    "expected \"{word}\" after the size, got {:?}",
                    tokens.get(i).copied().unwrap_or("the end of the line")
                ));
            }
            let v = tokens
                .get(i + 1)
                .ok_or_else(|| format!("{op} needs a rank after \"{word}\""))?;
            let peer = peer_rank(v, word)?;
            let tag = attributes(&tokens[i + 2..], &["tag", "cpu", "nic"])?;
            Ok(if op == "send" {
                OpKind::Send { peer, size, tag }
            } else {
                OpKind::Recv { peer, size, tag }
            })
        }
        _ => {
            let ns = number::<u64>(tokens, 1, "a time in nanoseconds")?;
            attributes(&tokens[2..], &["cpu"])?;
            Ok(OpKind::Calc { ns })
        }
    }
}

/// Parses schedule text `text` (from file `name`).
fn parse(text: &str, name: &str) -> Result<Schedule, String> {
    let at = |line: usize, msg: String| format!("{name} line {line}: {msg}");
    let mut ranks: Option<u32> = None;
    let mut seen: HashMap<u32, usize> = HashMap::new();
    let mut block: Option<Block> = None;
    let mut ops: Vec<Op> = Vec::new();
    let mut deps: Vec<Dep> = Vec::new();
    let mut comment = false;
    let mut comment_line = 0;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if !comment {
            comment_line = line;
        }
        let clean = strip_comments(raw, &mut comment);
        let toks = tokens(&clean);
        let mut k = 0;
        while k < toks.len() {
            let rest = &toks[k..];
            let Some(b) = block.as_mut() else {
                match rest {
                    ["num_ranks", tail @ ..] => {
                        if let Some(n) = ranks {
                            return Err(at(line, format!("num_ranks is given twice (first {n})")));
                        }
                        let n =
                            number::<u32>(rest, 1, "a count of ranks").map_err(|e| at(line, e))?;
                        if n == 0 {
                            return Err(at(line, "num_ranks must be at least 1".into()));
                        }
                        ranks = Some(n);
                        k += 2;
                        if tail.len() > 1 {
                            return Err(at(
                                line,
                                format!(
                                    "expected the end of the line after num_ranks {n}, got {:?}",
                                    tail[1]
                                ),
                            ));
                        }
                    }
                    ["rank", ..] => {
                        let r = number::<u32>(rest, 1, "a rank number").map_err(|e| at(line, e))?;
                        let Some(n) = ranks else {
                            return Err(at(
                                line,
                                "rank blocks come after num_ranks N (the file declares its ranks first)"
                                    .into(),
                            ));
                        };
                        if r >= n {
                            return Err(at(
                                line,
                                format!(
                                    "rank {r} does not exist: num_ranks is {n} (ranks 0..{})",
                                    n - 1
                                ),
                            ));
                        }
                        if rest.get(2) != Some(&"{") {
                            return Err(at(line, format!("expected \"{{\" after rank {r}")));
                        }
                        if let Some(first) = seen.insert(r, line) {
                            return Err(at(
                                line,
                                format!(
                                    "rank {r} has a second block (the first is on line {first})"
                                ),
                            ));
                        }
                        block = Some(Block {
                            rank: r,
                            line,
                            labels: HashMap::new(),
                            deps: Vec::new(),
                        });
                        k += 3;
                    }
                    [other, ..] => {
                        return Err(at(
                            line,
                            format!(
                                "expected num_ranks N or a rank block (rank R {{), got {other:?}"
                            ),
                        ))
                    }
                    [] => unreachable!("k < len"),
                }
                continue;
            };
            let n = ranks.expect("a block opens after num_ranks");
            match rest {
                ["}", ..] => {
                    let b = block.take().expect("in a block");
                    for (op, on, start, line) in b.deps {
                        let find = |l: &str| {
                            b.labels.get(l).copied().ok_or_else(|| {
                                at(
                                    line,
                                    format!("rank {} has no operation labelled {l}", b.rank),
                                )
                            })
                        };
                        deps.push(Dep {
                            op: find(&op)?,
                            on: find(&on)?,
                            start,
                        });
                    }
                    k += 1;
                    continue;
                }
                [a, dep @ ("requires" | "irequires"), tail @ ..] if is_label(a) => {
                    let on = match tail {
                        [] => return Err(at(line, format!("{dep} needs a label"))),
                        [on, rest @ ..] => {
                            if !is_label(on) {
                                return Err(at(line, format!("{dep} needs a label, got {on:?}")));
                            }
                            if let Some(extra) = rest.first() {
                                return Err(at(
                                    line,
                                    format!(
                                        "expected the end of the line after the dependency, got {extra:?}"
                                    ),
                                ));
                            }
                            on
                        }
                    };
                    b.deps
                        .push((a.to_string(), on.to_string(), *dep == "irequires", line));
                }
                [label, ":", op @ ..]
                    if is_label(label)
                        && matches!(op.first(), Some(&("send" | "recv" | "calc"))) =>
                {
                    let kind = operation(op, n).map_err(|e| at(line, e))?;
                    if let Some(&first) = b.labels.get(*label) {
                        return Err(at(
                            line,
                            format!(
                                "label {label} is used twice in rank {} (first on line {})",
                                b.rank, ops[first as usize].line
                            ),
                        ));
                    }
                    b.labels.insert(label.to_string(), ops.len() as u32);
                    ops.push(Op {
                        rank: b.rank,
                        label: Some(label.to_string()),
                        line,
                        kind,
                    });
                }
                [op, ..] if matches!(*op, "send" | "recv" | "calc") => {
                    let kind = operation(rest, n).map_err(|e| at(line, e))?;
                    ops.push(Op {
                        rank: b.rank,
                        label: None,
                        line,
                        kind,
                    });
                }
                ["rank" | "num_ranks", ..] => {
                    let (r, opened) = (b.rank, b.line);
                    let msg = format!(
                        "rank {r}'s block (opened on line {opened}) is not closed: \
                         a \"}}\" comes first"
                    );
                    return Err(at(line, msg));
                }
                [label, ":", other, ..] if is_label(label) => {
                    return Err(at(
                        line,
                        format!("expected send, recv or calc after {label}:, got {other:?}"),
                    ))
                }
                [first, ..] => {
                    return Err(at(
                        line,
                        format!(
                            "expected an operation (LABEL: send, recv or calc), a dependency \
                             (A requires B, A irequires B) or \"}}\", got {first:?}"
                        ),
                    ))
                }
                [] => unreachable!("k < len"),
            }
            // An operation or a dependency takes the rest of its line.
            break;
        }
    }
    if comment {
        return Err(at(comment_line, "a /* comment is not closed".into()));
    }
    if let Some(b) = block {
        return Err(at(
            b.line,
            format!("rank {}'s block is not closed (no \"}}\")", b.rank),
        ));
    }
    let Some(ranks) = ranks else {
        return Err(format!(
            "{name}: no num_ranks line (num_ranks N comes first)"
        ));
    };
    Ok(Schedule { ranks, ops, deps })
}

/// The host of each rank.
fn place(ranks: u32, name: &str, entry: &Entry) -> Result<Vec<u32>, String> {
    let hosts = entry.hosts;
    let n = ranks as usize;
    if n > hosts.len() {
        return Err(format!(
            "{name}: num_ranks is {ranks} but the entry has {} host(s) to place the ranks on \
             (its hosts, host_range or the topology's)",
            hosts.len()
        ));
    }
    let distinct = |how: &str| -> Result<(), String> {
        let mut seen = HashMap::new();
        for (i, &h) in hosts.iter().enumerate() {
            if let Some(first) = seen.insert(h, i) {
                return Err(format!(
                    "{name}: placement \"{how}\" needs distinct hosts; host {h} is the entry's \
                     host {first} and {i} (several ranks on one host: list them in hosts, \
                     placement \"contiguous\")"
                ));
            }
        }
        Ok(())
    };
    match &entry.placement {
        Placement::Contiguous => {}
        Placement::Strided => distinct("strided")?,
        Placement::Random(_) => distinct("random")?,
    }
    Ok(entry.placement.hosts(hosts, n))
}

/// Messages from a rank to a rank with a tag: (source, destination, tag).
type Channel = (u32, u32, u32);

/// A channel's sends and receives (operation indices), in file order.
type Queues = (Vec<u32>, Vec<u32>);

/// Each send's matching receive, in the order they were posted (MPI's non-overtaking
/// rule: the k-th send from rank a to rank b with tag t, in a's file order, matches the
/// k-th receive on b from a with tag t, in b's); an error names the first operation in
/// file order that nothing matches.
fn match_messages(s: &Schedule, name: &str) -> Result<Vec<Option<u32>>, String> {
    // (source, destination, tag) → (sends, receives), in file order.
    let mut queues: HashMap<Channel, Queues> = HashMap::new();
    for (i, op) in s.ops.iter().enumerate() {
        match op.kind {
            OpKind::Send { peer, tag, .. } => queues
                .entry((op.rank, peer, tag))
                .or_default()
                .0
                .push(i as u32),
            OpKind::Recv { peer, tag, .. } => queues
                .entry((peer, op.rank, tag))
                .or_default()
                .1
                .push(i as u32),
            OpKind::Calc { .. } => {}
        }
    }
    let mut matched = vec![None; s.ops.len()];
    // The first operation nothing matches, its channel and the sends and receives there.
    let mut unmatched: Option<(u32, Channel, usize, usize)> = None;
    for (&key, (sends, recvs)) in &queues {
        for (&a, &b) in sends.iter().zip(recvs) {
            matched[a as usize] = Some(b);
            matched[b as usize] = Some(a);
        }
        let first = match sends.len().cmp(&recvs.len()) {
            std::cmp::Ordering::Greater => sends[recvs.len()],
            std::cmp::Ordering::Less => recvs[sends.len()],
            std::cmp::Ordering::Equal => continue,
        };
        if unmatched.is_none_or(|u| first < u.0) {
            unmatched = Some((first, key, sends.len(), recvs.len()));
        }
    }
    let Some((first, (src, dst, tag), sends, recvs)) = unmatched else {
        return Ok(matched);
    };
    let op = &s.ops[first as usize];
    let counts = format!(
        "rank {src} sends {sends} message(s) to rank {dst} with tag {tag}, rank {dst} posts \
         {recvs} recv(s) from rank {src} with tag {tag}"
    );
    let what = match op.kind {
        OpKind::Send { .. } => "recv",
        _ => "send",
    };
    Err(format!(
        "{name} line {}: {} has no matching {what}: {counts}",
        op.line,
        op.name()
    ))
}

/// The triggers of operation `i`: its start and its completion.
fn start_of(i: u32) -> u32 {
    2 * i
}
fn done_of(i: u32) -> u32 {
    2 * i + 1
}

/// The schedule as flows and triggers (`GoalGen`), for traffic entry `entry`.
fn build(s: &Schedule, name: &str, entry: &Entry) -> Result<GoalGen, String> {
    let hosts = place(s.ranks, name, entry)?;
    let same_host = |a: u32, b: u32| hosts[a as usize] == hosts[b as usize];
    let matched = match_messages(s, name)?;
    let n = s.ops.len() as u32;
    let mut count = vec![0u32; 2 * n as usize];
    let mut links = Vec::new();
    let mut link = |from: u32, to: u32, delay: SimTime, count: &mut Vec<u32>| {
        count[to as usize] += 1;
        links.push(TriggerLink { from, to, delay });
    };
    let mut waits = vec![false; n as usize];
    for d in &s.deps {
        waits[d.op as usize] = true;
        let from = if d.start {
            start_of(d.on)
        } else {
            done_of(d.on)
        };
        link(from, start_of(d.op), 0, &mut count);
    }
    let mut starts = Vec::new();
    let mut flows = Vec::new();
    // Per send (in file order), the flow edges: the send's start to both completions.
    let mut flow_edges = Vec::new();
    let mut sends = 0u32;
    for i in 0..n {
        let op = &s.ops[i as usize];
        if !waits[i as usize] {
            starts.push(start_of(i));
            count[start_of(i) as usize] += 1;
        }
        match op.kind {
            OpKind::Calc { ns } => {
                let ps = ns.checked_mul(1000).filter(|&ps| ps < SimTime::MAX / 4);
                let ps = ps.ok_or_else(|| {
                    format!(
                        "{name} line {}: calc {ns} (nanoseconds) is too long",
                        op.line
                    )
                })?;
                link(start_of(i), done_of(i), ps, &mut count);
            }
            // Posted at its start; complete when its message is in too.
            OpKind::Recv { .. } => link(start_of(i), done_of(i), 0, &mut count),
            OpKind::Send { peer, size, .. } => {
                sends += 1;
                let r = matched[i as usize].expect("every send is matched");
                if entry.rendezvous_bytes.is_some_and(|b| size >= b) {
                    link(start_of(r), start_of(i), 0, &mut count);
                }
                if same_host(op.rank, peer) {
                    // Not carried by the fabric: done as it starts.
                    link(start_of(i), done_of(i), 0, &mut count);
                    link(start_of(i), done_of(r), 0, &mut count);
                } else {
                    count[done_of(i) as usize] += 1;
                    count[done_of(r) as usize] += 1;
                    flow_edges.push((start_of(i), [done_of(i), done_of(r)]));
                    flows.push(GoalFlow {
                        src_rank: op.rank,
                        dst_rank: peer,
                        size,
                        send: sends,
                        wait: start_of(i),
                        on_send_done: done_of(i),
                        on_recv_done: done_of(r),
                    });
                }
            }
        }
    }
    if let Some(cycle) = find_cycle(s, 2 * n, &links, &flow_edges) {
        return Err(format!(
            "{name}: the dependencies form a cycle, so these operations can never run \
             (each waits for the one before): {cycle}"
        ));
    }
    Ok(GoalGen {
        ranks: s.ranks,
        hosts,
        flows,
        triggers: count
            .iter()
            .enumerate()
            .map(|(t, &count)| Trigger {
                kind: TriggerKind::Barrier { count },
                id: t as u32,
            })
            .collect(),
        links,
        starts,
        trigger_base: entry.trigger_base,
    })
}

/// A cycle among the `n` triggers, if any (a link or a flow from a send's start to
/// its completions is an edge), named by the operations it goes through: `rank 0's recv
/// l1 (from rank 1, tag 0) → rank 0's send l2 (to rank 1, tag 0) → ... → rank 0's recv
/// l1 (from rank 1, tag 0)`.
fn find_cycle(
    s: &Schedule,
    n: u32,
    links: &[TriggerLink],
    flows: &[(u32, [u32; 2])],
) -> Option<String> {
    let mut next: Vec<Vec<u32>> = vec![Vec::new(); n as usize];
    for l in links {
        next[l.from as usize].push(l.to);
    }
    for &(from, to) in flows {
        next[from as usize].extend(to);
    }
    // Depth-first, iteratively: 0 unseen, 1 on the current path, 2 done.
    let mut state = vec![0u8; n as usize];
    for root in 0..n as usize {
        if state[root] != 0 {
            continue;
        }
        let mut path: Vec<(usize, usize)> = vec![(root, 0)];
        state[root] = 1;
        while let Some(&mut (t, ref mut k)) = path.last_mut() {
            let Some(&to) = next[t].get(*k) else {
                state[t] = 2;
                path.pop();
                continue;
            };
            *k += 1;
            let to = to as usize;
            match state[to] {
                0 => {
                    state[to] = 1;
                    path.push((to, 0));
                }
                1 => {
                    let from = path.iter().position(|p| p.0 == to).expect("on the path");
                    let mut ops: Vec<usize> = Vec::new();
                    for &(t, _) in &path[from..] {
                        if ops.last() != Some(&(t / 2)) {
                            ops.push(t / 2);
                        }
                    }
                    if ops.first() != ops.last() || ops.len() == 1 {
                        ops.push(to / 2);
                    }
                    let names: Vec<String> = ops.iter().map(|&i| s.ops[i].name()).collect();
                    return Some(names.join(" → "));
                }
                _ => {}
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOSTS: [u32; 8] = [0, 1, 2, 3, 4, 5, 6, 7];

    fn entry(hosts: &[u32]) -> Entry<'_> {
        Entry {
            hosts,
            placement: Placement::Contiguous,
            rendezvous_bytes: None,
            trigger_base: 0,
        }
    }

    fn read(text: &str) -> Result<GoalGen, String> {
        build(&parse(text, "x.goal")?, "x.goal", &entry(&HOSTS))
    }

    const PING_PONG: &str = "\
// a ping-pong with a computation in between
num_ranks 2

rank 0 {
  l1: send 100b to 1 tag 5
  l2: recv 200b from 1 tag 6
}

rank 1 {
  l1: recv 100b from 0 tag 5
  l2: calc 1500 cpu 0
  l3: send 200 b to 0 tag 6 cpu 0 nic 0   /* a comment
  spanning lines */ l2 requires l1
  l3 requires l2
}
";

    #[test]
    fn a_schedule_reads_as_operations_and_dependencies() {
        let s = parse(PING_PONG, "x.goal").unwrap();
        assert_eq!(s.ranks, 2);
        let kinds: Vec<_> = s
            .ops
            .iter()
            .map(|o| (o.rank, o.label.clone(), o.kind))
            .collect();
        let l = |s: &str| Some(s.to_string());
        assert_eq!(
            kinds,
            [
                (
                    0,
                    l("l1"),
                    OpKind::Send {
                        peer: 1,
                        size: 100,
                        tag: 5
                    }
                ),
                (
                    0,
                    l("l2"),
                    OpKind::Recv {
                        peer: 1,
                        size: 200,
                        tag: 6
                    }
                ),
                (
                    1,
                    l("l1"),
                    OpKind::Recv {
                        peer: 0,
                        size: 100,
                        tag: 5
                    }
                ),
                (1, l("l2"), OpKind::Calc { ns: 1500 }),
                (
                    1,
                    l("l3"),
                    OpKind::Send {
                        peer: 0,
                        size: 200,
                        tag: 6
                    }
                ),
            ]
        );
        assert_eq!(
            s.deps,
            [
                Dep {
                    op: 3,
                    on: 2,
                    start: false
                },
                Dep {
                    op: 4,
                    on: 3,
                    start: false
                }
            ]
        );
        // Schedgen's style: no spaces to spare, operations without labels, irequires.
        let s = parse(
            "num_ranks 2\nrank 0{\nsend 1b to 1\nl2: calc 0\n}\nrank 1 {\nl1: recv 1b from 0\nl2: calc 7\nl2 irequires l1\n}\n",
            "x.goal",
        )
        .unwrap();
        assert_eq!(s.ops[0].label, None);
        assert_eq!(
            s.ops[0].kind,
            OpKind::Send {
                peer: 1,
                size: 1,
                tag: 0
            }
        );
        assert_eq!(
            s.deps,
            [Dep {
                op: 3,
                on: 2,
                start: true
            }]
        );
    }

    /// The ping-pong as triggers: operation i's start is trigger 2i, its completion
    /// 2i + 1.
    #[test]
    fn a_schedule_becomes_flows_and_linked_triggers() {
        let g = read(PING_PONG).unwrap();
        assert_eq!(g.hosts, [0, 1]);
        let flows: Vec<_> = g
            .flows
            .iter()
            .map(|f| {
                (
                    f.src_rank,
                    f.dst_rank,
                    f.size,
                    f.send,
                    f.wait,
                    f.on_send_done,
                    f.on_recv_done,
                )
            })
            .collect();
        // Rank 0's send l1 (op 0) to rank 1's recv l1 (op 2); rank 1's send l3 (op 4) to
        // rank 0's recv l2 (op 1).
        assert_eq!(flows, [(0, 1, 100, 1, 0, 1, 5), (1, 0, 200, 2, 8, 9, 3)]);
        let links: Vec<_> = g.links.iter().map(|l| (l.from, l.to, l.delay)).collect();
        assert_eq!(
            links,
            [
                (5, 6, 0),         // l2 requires l1 (rank 1): recv's completion → calc's start
                (7, 8, 0),         // l3 requires l2: calc's completion → send's start
                (2, 3, 0),         // rank 0's recv posted
                (4, 5, 0),         // rank 1's recv posted
                (6, 7, 1_500_000), // the calc: 1,500 ns
            ]
        );
        // Operations with nothing to wait for start with the entry.
        assert_eq!(g.starts, [0, 2, 4]);
        let counts: Vec<_> = g
            .triggers
            .iter()
            .map(|t| match t.kind {
                TriggerKind::Barrier { count } => count,
                _ => panic!("a barrier"),
            })
            .collect();
        // A receive completes when posted and in: two activations.
        assert_eq!(counts, [1, 1, 1, 2, 1, 2, 1, 1, 1, 1]);
    }

    #[test]
    fn messages_match_in_order_by_source_destination_and_tag() {
        let g = read(
            "num_ranks 2\nrank 0 {\na: send 10b to 1 tag 1\nb: send 20b to 1 tag 2\nc: send 30b to 1 tag 1\n}\n\
             rank 1 {\nx: recv 20b from 0 tag 2\ny: recv 10b from 0 tag 1\nz: recv 30b from 0 tag 1\n}\n",
        )
        .unwrap();
        // a (op 0) → y (op 4), b (op 1) → x (op 3), c (op 2) → z (op 5).
        let recv_done: Vec<_> = g.flows.iter().map(|f| (f.size, f.on_recv_done)).collect();
        assert_eq!(recv_done, [(10, 9), (20, 7), (30, 11)]);
    }

    #[test]
    fn ranks_on_one_host_exchange_without_a_flow_and_placements_spread_the_ranks() {
        let text = "num_ranks 3\nrank 0 {\nl1: send 10b to 1\nl2: send 10b to 2\n}\n\
                    rank 1 {\nl1: recv 10b from 0\n}\nrank 2 {\nl1: recv 10b from 0\n}\n";
        let s = parse(text, "x.goal").unwrap();
        let g = build(&s, "x.goal", &entry(&[4, 4, 6])).unwrap();
        // Ranks 0 and 1 share host 4: only the message to rank 2 is a flow, and the
        // send to rank 1 completes both ends as it starts.
        assert_eq!(g.flows.len(), 1);
        assert_eq!((g.flows[0].dst_rank, g.flows[0].send), (2, 2));
        assert!(g.links.iter().any(|l| (l.from, l.to) == (0, 1)));
        assert!(g.links.iter().any(|l| (l.from, l.to) == (0, 5)));
        let strided = Entry {
            placement: Placement::Strided,
            ..entry(&HOSTS)
        };
        assert_eq!(build(&s, "x.goal", &strided).unwrap().hosts, [0, 2, 4]);
        let drawn = |seed| {
            let random = Entry {
                placement: Placement::Random(Rng::new(seed, 0, 0)),
                ..entry(&HOSTS)
            };
            build(&s, "x.goal", &random).unwrap().hosts
        };
        let a = drawn(1);
        assert!(a[0] != a[1] && a[1] != a[2] && a[0] != a[2], "{a:?}");
        assert_eq!(a, drawn(1));
        assert!((2..20).any(|seed| drawn(seed) != a));
        let random = Entry {
            placement: Placement::Random(Rng::new(1, 0, 0)),
            ..entry(&[4, 4, 6])
        };
        assert_eq!(
            build(&s, "x.goal", &random).unwrap_err(),
            "x.goal: placement \"random\" needs distinct hosts; host 4 is the entry's host 0 \
             and 1 (several ranks on one host: list them in hosts, placement \"contiguous\")"
        );
        assert_eq!(
            build(&s, "x.goal", &entry(&[1, 2])).unwrap_err(),
            "x.goal: num_ranks is 3 but the entry has 2 host(s) to place the ranks on (its \
             hosts, host_range or the topology's)"
        );
    }

    #[test]
    fn a_rendezvous_send_waits_for_its_receive_to_be_posted() {
        let text = "num_ranks 2\nrank 0 {\nl1: send 100b to 1\nl2: send 10b to 1 tag 1\n}\n\
                    rank 1 {\nl1: calc 50\nl2: recv 100b from 0\nl3: recv 10b from 0 tag 1\nl2 requires l1\n}\n";
        let s = parse(text, "x.goal").unwrap();
        let e = Entry {
            rendezvous_bytes: Some(100),
            ..entry(&HOSTS)
        };
        let g = build(&s, "x.goal", &e).unwrap();
        // The 100-byte send (op 0) waits for rank 1's l2 (op 3) to start; the 10-byte
        // one does not.
        assert!(g.links.iter().any(|l| (l.from, l.to) == (6, 0)));
        assert!(!g.links.iter().any(|l| l.to == 2));
        assert_eq!(g.triggers[0].kind, TriggerKind::Barrier { count: 2 });
    }

    #[test]
    fn bad_input_is_named_by_file_and_line() {
        let two =
            |a: &str, b: &str| format!("num_ranks 2\nrank 0 {{\n{a}\n}}\nrank 1 {{\n{b}\n}}\n");
        let cases = [
            (
                two("l1: send 10b to 1", "l1: recv 10b from 0\nl2: jump 5"),
                "x.goal line 7: expected send, recv or calc after l2:, got \"jump\"",
            ),
            (
                two("l1: send 10b to 1", "l1: recv 10b from 0\n!!"),
                "x.goal line 7: expected an operation (LABEL: send, recv or calc), a dependency \
                 (A requires B, A irequires B) or \"}\", got \"!!\"",
            ),
            (
                two("l1: send 10b to 1", "l1: recv 10b from 0\nl1 requires l9"),
                "x.goal line 7: rank 1 has no operation labelled l9",
            ),
            (
                two("l1: send 10b to 2", "l1: recv 10b from 0"),
                "x.goal line 3: rank 2 does not exist: num_ranks is 2 (ranks 0..1)",
            ),
            (
                "num_ranks 2\nrank 2 {\n}\n".into(),
                "x.goal line 2: rank 2 does not exist: num_ranks is 2 (ranks 0..1)",
            ),
            (
                two("l1: send 0b to 1", "l1: recv 10b from 0"),
                "x.goal line 3: size must be a positive number of bytes, got \"0b\"",
            ),
            (
                two("l1: send -5b to 1", "l1: recv 10b from 0"),
                "x.goal line 3: size must be a positive number of bytes, got \"-5b\"",
            ),
            (
                two("l1: send tenb to 1", "l1: recv 10b from 0"),
                "x.goal line 3: send needs a size in bytes such as 100b, got \"tenb\"",
            ),
            (
                two("l1: send 10b to 1 tag 3", "l1: recv 10b from 0 tag 4"),
                "x.goal line 3: rank 0's send l1 (to rank 1, tag 3) has no matching recv: rank 0 \
                 sends 1 message(s) to rank 1 with tag 3, rank 1 posts 0 recv(s) from rank 0 \
                 with tag 3",
            ),
            (
                two("l1: send 10b to 1", "l1: recv 10b from 0\nl2: recv 10b from 0"),
                "x.goal line 7: rank 1's recv l2 (from rank 0, tag 0) has no matching send: \
                 rank 0 sends 1 message(s) to rank 1 with tag 0, rank 1 posts 2 recv(s) from \
                 rank 0 with tag 0",
            ),
            (
                two(
                    "l1: recv 10b from 1\nl2: send 10b to 1\nl2 requires l1",
                    "l1: recv 10b from 0\nl2: send 10b to 0\nl2 requires l1",
                ),
                "x.goal: the dependencies form a cycle, so these operations can never run \
                 (each waits for the one before): rank 0's recv l1 (from rank 1, tag 0) → \
                 rank 0's send l2 (to rank 1, tag 0) → rank 1's recv l1 (from rank 0, tag 0) → \
                 rank 1's send l2 (to rank 0, tag 0) → rank 0's recv l1 (from rank 1, tag 0)",
            ),
            (
                two("l1: calc 5\nl1 requires l1", ""),
                "x.goal: the dependencies form a cycle, so these operations can never run \
                 (each waits for the one before): rank 0's calc l1 → rank 0's calc l1",
            ),
            (
                two("l1: send 10b to 1", "l1: recv 10b from -1"),
                "x.goal line 6: recv from -1 (any source) is not supported: messages are \
                 matched to receives before the run, by source, destination and tag",
            ),
            (
                two("l1: send 10b to 1 colour 3", "l1: recv 10b from 0"),
                "x.goal line 3: unknown send attribute \"colour\" (expected tag, cpu, nic)",
            ),
            (
                two("l1: calc 5\nl1: calc 6", ""),
                "x.goal line 4: label l1 is used twice in rank 0 (first on line 3)",
            ),
            (
                "num_ranks 2\nrank 0 {\nl1: calc 5\n".into(),
                "x.goal line 2: rank 0's block is not closed (no \"}\")",
            ),
            (
                "num_ranks 2\nrank 0 {\nl1: calc 5\nrank 1 {\n}\n".into(),
                "x.goal line 4: rank 0's block (opened on line 2) is not closed: a \"}\" comes first",
            ),
            ("rank 0 {\n}\n".into(), "x.goal line 1: rank blocks come after num_ranks N (the file declares its ranks first)"),
            ("\n".into(), "x.goal: no num_ranks line (num_ranks N comes first)"),
            (
                "num_ranks 1\n/* open\n".into(),
                "x.goal line 2: a /* comment is not closed",
            ),
            (
                "num_ranks 2\nrank 0 {\n}\nrank 0 {\n}\n".into(),
                "x.goal line 4: rank 0 has a second block (the first is on line 2)",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(read(&text).err().as_deref(), Some(want), "{text}");
        }
    }
}
