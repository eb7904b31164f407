//! Seeing inside a run: packet capture (`output.pcap`: the frames leaving selected ports,
//! with real header bytes, as one pcapng file) and event traces (`output.trace`: every
//! queue event at selected ports, as a table). Both are off unless the scenario asks;
//! the simulator then tests one flag per transmission (`sim/capture.rs`).
//!
//! A capture keeps its blocks in one buffer that grows to the cap and is reused for
//! every packet (a frame's headers are built in a scratch buffer, then appended as an
//! enhanced packet block); the file is assembled at the end, in time order, leaving out
//! packets a committed queue had scheduled after the run's end.
//!
//! A run over several threads records each partition's ports in that partition, every
//! record keyed by where the event that made it stands in a one-thread run's order
//! (`EventKey`); the partitions' records are merged in key order and capped once at the
//! end (`Capture::merge`, `Trace::merge`), which gives the one-thread run's records, in
//! its order, and so its file byte for byte.

pub mod headers;
pub mod pcapng;
pub mod trace;

use crate::time::SimTime;
use headers::Frame;
use trace::TraceEvent;

/// What a run's capture and trace recorded.
#[derive(Clone, Debug, Default)]
pub struct Observed {
    /// The pcapng file (`None`: no capture).
    pub pcap: Option<Vec<u8>>,
    /// Packets in the file, and those left out by the cap.
    pub capture_packets: u64,
    pub capture_missed: u64,
    /// The trace's events in time order (`None`: no trace), and those left out by the
    /// cap.
    pub trace: Option<Vec<TraceEvent>>,
    pub trace_missed: u64,
}

/// Where a record stands in a one-thread run's order: the event that made it, as one
/// thread runs events. By time; at one time, first the events due when it began, in
/// content order (`Event::order`), then those their handlers scheduled for that same
/// time, in the order scheduled (`engine::queue`): every event scheduled by one of
/// depth d (0: due when the time began) has depth d + 1, and the events of one depth run
/// in the order of the events that scheduled them, each one's in the order it scheduled
/// them. Hence the fields, compared in turn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct EventKey {
    pub time: SimTime,
    pub depth: u32,
    /// The content order of the event, or of its ancestor of depth 0.
    pub root: (u64, u64),
    /// From the ancestor of depth 0 down: each event's place among those its parent
    /// scheduled for the same time, `PLACE_BITS` bits each, the first highest.
    pub path: u128,
}

/// Bits per place in `EventKey::path`, and so the deepest chain of events scheduled for
/// their own time that a key orders (`MAX_DEPTH`) and the most one event schedules so.
const PLACE_BITS: u32 = 16;
pub const MAX_DEPTH: u32 = u128::BITS / PLACE_BITS;

impl EventKey {
    /// The key of the `place`-th event that the event keyed `self` scheduled for its own
    /// time (`None`: deeper than `MAX_DEPTH` or past the places a key holds).
    pub fn child(&self, place: usize) -> Option<EventKey> {
        (self.depth < MAX_DEPTH && place < 1 << PLACE_BITS).then(|| EventKey {
            time: self.time,
            depth: self.depth + 1,
            root: self.root,
            path: self.path << PLACE_BITS | place as u128,
        })
    }
}

/// The records of a run over several threads from its partitions' (`records[p]`, keyed
/// by `keys[p]`, each in key order), as one thread records them: in key order (at equal
/// keys, which only one partition's records share, in its order), the first `cap` of
/// them. Returns (partition, index) of each record kept.
fn merge_order(keys: &[&[EventKey]], cap: u64) -> Vec<(usize, usize)> {
    let mut order: Vec<(EventKey, usize, usize)> = keys
        .iter()
        .enumerate()
        .flat_map(|(p, ks)| ks.iter().enumerate().map(move |(i, &k)| (k, p, i)))
        .collect();
    order.sort_unstable();
    order.truncate(cap.min(usize::MAX as u64) as usize);
    order.into_iter().map(|(_, p, i)| (p, i)).collect()
}

/// A port that is not captured.
pub const NOT_CAPTURED: u32 = u32::MAX;

/// The comments of captured PFC frames (a display filter finds them by "PFC").
pub const PFC_PAUSE: &str = "PFC PAUSE (IEEE 802.1Qbb priority-based flow control)";
pub const PFC_RESUME: &str = "PFC RESUME (IEEE 802.1Qbb priority-based flow control)";

/// One capture: its interfaces (per port, the transmit and the drop interface), the
/// filters, and the enhanced packet blocks written so far.
pub struct Capture {
    /// Per network port, its interface number (`NOT_CAPTURED`: none) and that of its
    /// drops.
    iface: Vec<u32>,
    drop_iface: Vec<u32>,
    /// Each interface's name and description, in number order.
    names: Vec<(String, String)>,
    /// Per connection, whether its packets pass the flow and class filters (empty: all).
    conn_ok: Vec<bool>,
    from: SimTime,
    until: SimTime,
    cap: u64,
    /// Enhanced packet blocks, and per block its time, offset and length.
    blocks: Vec<u8>,
    index: Vec<(SimTime, u32, u32)>,
    /// In a run over several threads, each block's key (`EventKey`); empty on one
    /// thread, whose blocks are in the order recorded.
    keys: Vec<EventKey>,
    scratch: Vec<u8>,
    /// Packets that passed the filters after the cap was reached.
    pub missed: u64,
    /// Per port, its ECN mark counter when last seen (to tell which packet it marked).
    marks_seen: Vec<u64>,
}

/// Why a captured port dropped a packet (its pcapng comment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// The queue (or RED) refused it.
    Queue,
    /// The link lost it (loss model, black hole, link down).
    Link,
    /// The switch's shared buffer or PFC headroom refused it.
    Buffer,
    /// A trimming queue dropped a header (its header queue full).
    Header,
    /// A trimming queue sent a header back to its sender (its header queue full).
    Returned,
}

impl DropReason {
    pub fn comment(self) -> &'static str {
        match self {
            DropReason::Queue => "dropped: queue full",
            DropReason::Link => "dropped: lost on the link",
            DropReason::Buffer => "dropped: shared buffer or PFC headroom",
            DropReason::Header => "dropped: trimming queue's header queue full",
            DropReason::Returned => "returned to its sender: header queue full",
        }
    }
}

impl Capture {
    /// A capture of `ports` (network port numbers with their interface names), with
    /// drop interfaces if `drops`, keeping packets of connections for which `conn_ok`
    /// is true (empty: all) that start in [from, until), at most `cap` of them.
    pub fn new(
        n_ports: usize,
        ports: &[(u32, String)],
        drops: bool,
        conn_ok: Vec<bool>,
        (from, until, cap): (SimTime, SimTime, u64),
    ) -> Capture {
        let mut iface = vec![NOT_CAPTURED; n_ports];
        let mut drop_iface = vec![NOT_CAPTURED; n_ports];
        let mut names = Vec::new();
        for (p, name) in ports {
            iface[*p as usize] = names.len() as u32;
            names.push((name.clone(), format!("packets {name} sends (port {p})")));
        }
        if drops {
            for (p, name) in ports {
                drop_iface[*p as usize] = names.len() as u32;
                names.push((
                    format!("{name} drops"),
                    format!("packets port {p} ({name}) dropped"),
                ));
            }
        }
        let first = cap.min(1 << 16) as usize;
        Capture {
            iface,
            drop_iface,
            names,
            conn_ok,
            from,
            until,
            cap,
            blocks: Vec::with_capacity(first * 128),
            index: Vec::with_capacity(first),
            keys: Vec::new(),
            scratch: Vec::with_capacity(pcapng::SNAPLEN as usize),
            missed: 0,
            marks_seen: vec![0; n_ports],
        }
    }

    /// The interface that captures what `port` sends (or drops, with `drop`), if the
    /// port is captured and a packet of connection `conn` at time `t` passes the filters.
    #[inline]
    pub fn interface(&self, port: u32, conn: u32, t: SimTime, drop: bool) -> Option<u32> {
        let i = if drop {
            self.drop_iface[port as usize]
        } else {
            self.iface[port as usize]
        };
        let conn_ok = self.conn_ok.is_empty() || self.conn_ok[conn as usize];
        (i != NOT_CAPTURED && conn_ok && t >= self.from && t < self.until).then_some(i)
    }

    /// Whether `port` is captured at all (sends or drops).
    pub fn covers(&self, port: u32) -> bool {
        self.iface[port as usize] != NOT_CAPTURED || self.drop_iface[port as usize] != NOT_CAPTURED
    }

    /// True once per new ECN mark of `port` (its counter now `marks`).
    pub fn marked(&mut self, port: u32, marks: u64) -> bool {
        let seen = &mut self.marks_seen[port as usize];
        let new = marks > *seen;
        *seen = marks;
        new
    }

    /// Records a frame on interface `iface` at time `t`, made by the event keyed `key`
    /// in a run over several threads (`None`: one thread).
    pub fn record(
        &mut self,
        iface: u32,
        t: SimTime,
        frame: &Frame,
        comment: &str,
        key: Option<EventKey>,
    ) {
        if self.full() {
            return;
        }
        let orig = headers::write(&mut self.scratch, frame);
        self.append(iface, t, orig, pcapng::OUTBOUND, comment, key);
    }

    /// The interface that captures the PFC frames `port` sends at time `t`, if the port
    /// is captured and `t` is in the window. PFC frames belong to no flow: the flow and
    /// class filters do not apply to them.
    pub fn pfc_interface(&self, port: u32, t: SimTime) -> Option<u32> {
        let i = self.iface[port as usize];
        (i != NOT_CAPTURED && t >= self.from && t < self.until).then_some(i)
    }

    /// Records on interface `iface` the PFC frame node `src_node` sends at time `t`
    /// for `class`: a PAUSE (`pause`) or a RESUME (`headers::write_pfc`), with its FCS.
    pub fn record_pfc(
        &mut self,
        iface: u32,
        t: SimTime,
        (src_node, class, pause): (u32, u8, bool),
        key: Option<EventKey>,
    ) {
        if self.full() {
            return;
        }
        let orig = headers::write_pfc(&mut self.scratch, src_node, class, pause);
        let comment = if pause { PFC_PAUSE } else { PFC_RESUME };
        self.append(
            iface,
            t,
            orig,
            pcapng::OUTBOUND | pcapng::FCS_4,
            comment,
            key,
        );
    }

    /// True (and the packet counted as missed) once the cap is reached.
    fn full(&mut self) -> bool {
        let full = self.index.len() as u64 >= self.cap;
        self.missed += full as u64;
        full
    }

    /// Appends the frame in `scratch`, `orig` bytes long on the wire, as a block.
    fn append(
        &mut self,
        iface: u32,
        t: SimTime,
        orig: u32,
        flags: u32,
        comment: &str,
        key: Option<EventKey>,
    ) {
        let at = self.blocks.len();
        pcapng::packet(
            &mut self.blocks,
            iface,
            t / 1000,
            &self.scratch,
            orig,
            flags,
            comment,
        );
        self.index
            .push((t, at as u32, (self.blocks.len() - at) as u32));
        if let Some(key) = key {
            self.keys.push(key);
        }
    }

    /// The capture of a run over several threads, from its partitions' (each recorded
    /// its own ports, keyed): the records one thread makes, in its order, and the
    /// packets it leaves out by the cap.
    pub fn merge(mut parts: Vec<Capture>) -> Capture {
        let seen: u64 = parts.iter().map(|c| c.index.len() as u64 + c.missed).sum();
        let keys: Vec<&[EventKey]> = parts.iter().map(|c| &c.keys[..]).collect();
        let kept = merge_order(&keys, parts[0].cap);
        let (mut blocks, mut index) = (Vec::new(), Vec::with_capacity(kept.len()));
        for (p, i) in kept {
            let (t, at, len) = parts[p].index[i];
            index.push((t, blocks.len() as u32, len));
            blocks.extend_from_slice(&parts[p].blocks[at as usize..(at + len) as usize]);
        }
        let mut merged = parts.swap_remove(0);
        merged.missed = seen - index.len() as u64;
        (merged.blocks, merged.index) = (blocks, index);
        merged.keys.clear();
        merged
    }

    /// Packets recorded (all interfaces) that started by `end`.
    pub fn count(&self, end: SimTime) -> usize {
        self.index.iter().filter(|&&(t, _, _)| t <= end).count()
    }

    /// The pcapng file: its section, interfaces and the packets that started by `end`,
    /// in time order (equal times in the order recorded).
    pub fn file(&self, end: SimTime) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.blocks.len() + 256 * (self.names.len() + 1));
        pcapng::section_header(&mut out);
        for (name, description) in &self.names {
            pcapng::interface(&mut out, name, description);
        }
        let mut order: Vec<&(SimTime, u32, u32)> =
            self.index.iter().filter(|&&(t, _, _)| t <= end).collect();
        order.sort_by_key(|&&(t, _, _)| t);
        for &&(_, at, len) in &order {
            out.extend_from_slice(&self.blocks[at as usize..(at + len) as usize]);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(time: SimTime, order: u64) -> EventKey {
        EventKey {
            time,
            depth: 0,
            root: (order, 0),
            path: 0,
        }
    }

    #[test]
    fn keys_order_events_as_one_thread_runs_them() {
        // At one time, events a and b due as it began (a first in content order); a
        // schedules a0 and a1 for that time, b schedules b0, a0 schedules a00. One
        // thread runs the due ones, then the scheduled ones in the order scheduled:
        // a, b, a0, a1, b0, a00; then the next time's.
        let (a, b) = (batch(5, 1), batch(5, 2));
        let child = |k: EventKey, i| k.child(i).expect("room");
        let (a0, a1, b0) = (child(a, 0), child(a, 1), child(b, 0));
        let a00 = child(a0, 0);
        let later = batch(6, 0);
        let mut keys = vec![later, a00, b0, a1, a0, b, a];
        keys.sort();
        assert_eq!(keys, [a, b, a0, a1, b0, a00, later]);
    }

    #[test]
    fn a_key_holds_max_depth_generations_and_then_none() {
        let mut k = batch(0, 0);
        for _ in 0..MAX_DEPTH {
            k = k.child(7).expect("room");
        }
        assert_eq!(k.child(0), None);
        assert_eq!(batch(0, 0).child(1 << PLACE_BITS), None);
    }

    #[test]
    fn merge_order_keeps_the_first_records_by_key_up_to_the_cap() {
        let (a, b, c) = (batch(1, 1), batch(1, 2), batch(2, 0));
        // Partition 0 made two records at a and one at c; partition 1 one at b.
        let kept = merge_order(&[&[a, a, c], &[b]], 3);
        assert_eq!(kept, [(0, 0), (0, 1), (1, 0)]);
    }
}
