//! The simulator's side of packet capture and event traces (`crate::capture`): which
//! ports, connections and flows they cover, and the hooks the packet path calls behind
//! the one `Sim::observe` flag. The hooks are out of line, so a run without capture or
//! trace pays only the flag test.

use super::events::Event;
use super::{Conn, Sim, NO_FLOW};
use crate::capture::headers::{self, tcp_flags, Frame, Mptcp, Tcp, Transport};
use crate::capture::trace::{Trace, TraceEvent, TraceKind, NO_FLOW as TRACE_NO_FLOW};
use crate::capture::{Capture, DropReason, EventKey, Observed, MAX_DEPTH};
use crate::connection::Endpoints;
use crate::net::network::Network;
use crate::net::packet::{flags, Desc, Ecn, PacketArena, NDP, TO_SERVER};
use crate::net::queue::{Admission, Fate};
use crate::scenario::capture::PortRef;
use crate::scenario::Plan;
use crate::time::SimTime;
use crate::transport::homa::RESEND;
use crate::transport::ndp::flags as ndp_flags;
use crate::transport::roce::flags as roce_flags;

/// What the capture and the trace record (`observe`).
pub(super) struct Observers {
    pub capture: Option<Box<Capture>>,
    pub trace: Option<Box<Trace>>,
    /// Each connection's first flow (`NO_FLOW`: none), for the trace; empty unless
    /// `observe`.
    pub conn_flow: Vec<u32>,
}

/// How a packet came to start onto the wire at a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Join {
    /// It found the link idle (or, an NDP header, passes through without waiting).
    Idle,
    /// It joined a committed queue now, which fixed its start.
    Committed,
    /// It waited in the queue and leaves it now.
    Queued,
}

/// The network ports `refs` name, with their interface names (`NODE->PEER`, and
/// `#k` after the peer for the k-th of parallel links).
pub(super) fn ports_of(net: &Network, refs: &[PortRef]) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    for r in refs {
        let mut k = 0;
        for (i, p) in net.ports.iter().enumerate() {
            if p.owner == r.node && p.peer == r.peer {
                let mut name = format!(
                    "{}->{}",
                    net.names[p.owner as usize], net.names[p.peer as usize]
                );
                if k > 0 {
                    name.push_str(&format!("#{k}"));
                }
                out.push((i as u32, name));
                k += 1;
            }
        }
    }
    out
}

/// The capture and trace a plan asks for, and each connection's (first) flow.
pub(super) fn observers(
    plan: &Plan,
    net: &Network,
    conn_flows: &[Vec<u32>],
    flow_class: &[u16],
) -> (Option<Box<Capture>>, Option<Box<Trace>>) {
    let n = net.ports.len();
    let capture = plan.pcap.as_ref().map(|c| {
        let ports = ports_of(net, &c.select.ports);
        let filtered = c.flows.is_some() || c.classes.is_some();
        let conn_ok = if filtered {
            conn_flows
                .iter()
                .map(|fs| {
                    fs.iter().any(|&f| {
                        c.flows.as_ref().is_none_or(|l| l.contains(&f))
                            && c.classes
                                .as_ref()
                                .is_none_or(|l| l.contains(&flow_class[f as usize]))
                    })
                })
                .collect()
        } else {
            Vec::new()
        };
        let s = &c.select;
        Box::new(Capture::new(
            n,
            &ports,
            c.drops,
            conn_ok,
            (s.from, s.until, s.cap),
        ))
    });
    let trace = plan.trace.as_ref().map(|t| {
        let ports: Vec<u32> = ports_of(net, &t.ports)
            .into_iter()
            .map(|(p, _)| p)
            .collect();
        Box::new(Trace::new(n, &ports, (t.from, t.until, t.cap)))
    });
    (capture, trace)
}

/// A stand-in key or token of a connection's MPTCP handshake, derived from its number
/// (splitmix64), so a capture names each connection consistently.
fn mptcp_key(conn: u32, salt: u64) -> u64 {
    let mut z = (conn as u64) << 8 ^ salt;
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The frame a packet is on the wire of `port` (from its owner to its peer).
fn frame_of(net: &Network, conns: &[Conn], pkts: &PacketArena, port: u32, d: &Desc) -> Frame {
    let p = pkts.get(d.pkt);
    let c = &conns[p.conn as usize];
    let port = &net.ports[port as usize];
    let to_server = p.dir == TO_SERVER;
    let (src_host, dst_host) = if to_server {
        (c.src, c.dst)
    } else {
        (c.dst, c.src)
    };
    let (client, server) = (headers::client_port(p.conn, p.sub), headers::SERVER_PORT);
    let (sport, dport) = if to_server {
        (client, server)
    } else {
        (server, client)
    };
    // A packet shorter on the wire than its header and payload was trimmed.
    let trimmed =
        d.class & NDP != 0 && p.payload > 0 && (d.wire as u32) < p.payload + c.wire.header;
    let payload = if trimmed { 0 } else { p.payload };
    let mtu = c.wire.max_wire.saturating_sub(c.wire.header).max(1) as u64;
    let transport = match &c.ep {
        Endpoints::Tcp(_) | Endpoints::Mptcp(_) => {
            let syn = p.has(flags::SYN);
            let mut f = 0;
            for (sim, wire) in [
                (flags::SYN, tcp_flags::SYN),
                (flags::FIN, tcp_flags::FIN),
                (flags::RST, tcp_flags::RST),
                (flags::ACK, tcp_flags::ACK),
                (flags::ECE, tcp_flags::ECE),
                (flags::CWR, tcp_flags::CWR),
            ] {
                if p.has(sim) {
                    f |= wire;
                }
            }
            if payload > 0 {
                f |= tcp_flags::PSH;
            }
            // ISN 0: the SYN takes sequence number 0, data byte i is i + 1.
            let seq = if syn {
                0
            } else {
                (p.seq as u32).wrapping_add(1)
            };
            let ack = if p.has(flags::ACK) {
                (p.ack as u32).wrapping_add(1)
            } else {
                0
            };
            let window = if syn {
                p.rwnd.min(u16::MAX as u32) as u16
            } else {
                (p.rwnd >> headers::WINDOW_SHIFT).min(u16::MAX as u32) as u16
            };
            let mut sack = [(0, 0); 3];
            let mut sack_n = 0;
            if p.has(flags::SACK) {
                let ext = pkts.ext(d.pkt);
                // Blocks are offsets from the cumulative ACK (`Segment::sack_blocks`).
                for (k, &(l, r)) in ext.sack[..ext.sack_n as usize].iter().enumerate() {
                    sack[k] = (ack.wrapping_add(l), ack.wrapping_add(r));
                }
                sack_n = ext.sack_n;
            }
            let mptcp = match &c.ep {
                Endpoints::Mptcp(pair) => {
                    let key = mptcp_key(p.conn, 1);
                    let nonce = mptcp_key(p.conn, 2 + p.sub as u64 * 2 + p.dir as u64) as u32;
                    // The data stream's end (`u64::MAX`: it has none). The sender closes
                    // its subflows once the data ACK covers every byte, which is what a
                    // DATA_FIN on the last byte's segment, acknowledged, brings about.
                    let end = pair.client.size;
                    match (syn, to_server, p.sub) {
                        (true, true, 0) => Some(Mptcp::Capable {
                            key: None,
                            peer_key: None,
                            data_len: None,
                        }),
                        (true, false, 0) => Some(Mptcp::Capable {
                            key: Some(key),
                            peer_key: None,
                            data_len: None,
                        }),
                        (true, true, s) => Some(Mptcp::JoinSyn {
                            addr_id: s,
                            token: (key >> 32) as u32,
                            nonce,
                        }),
                        (true, false, s) => Some(Mptcp::JoinSynAck {
                            addr_id: s,
                            hmac: mptcp_key(p.conn, 3),
                            nonce,
                        }),
                        // The client sends no ACK of its own after the SYN-ACK: its first
                        // data segment is the third ACK, and carries MP_CAPABLE with both
                        // keys and its data-level length (RFC 8684 §3.1), as do its
                        // retransmissions.
                        (false, true, 0) if p.payload > 0 && p.seq == 0 && p.dsn == 0 => {
                            Some(Mptcp::Capable {
                                key: Some(mptcp_key(p.conn, 0)),
                                peer_key: Some(key),
                                data_len: Some(p.payload as u16),
                            })
                        }
                        (false, true, _) if p.payload > 0 => {
                            let data_fin = p.dsn + p.payload as u64 == end;
                            Some(Mptcp::Dss {
                                data_ack: None,
                                map: Some((
                                    p.dsn,
                                    (p.seq as u32).wrapping_add(1),
                                    p.payload as u16 + data_fin as u16,
                                )),
                                data_fin,
                            })
                        }
                        // Every byte received: the DATA_FIN too, one octet past them.
                        (false, false, _) if p.has(flags::ACK) => Some(Mptcp::Dss {
                            data_ack: Some(p.data_ack + (p.data_ack == end) as u64),
                            map: None,
                            data_fin: false,
                        }),
                        (false, _, _) => None,
                    }
                }
                Endpoints::Tcp(_) | Endpoints::Roce(_) | Endpoints::Ndp(_) | Endpoints::Homa(_) => {
                    None
                }
            };
            Transport::Tcp(Tcp {
                sport,
                dport,
                seq,
                ack,
                flags: f,
                window,
                mss: syn.then_some(mtu.min(u16::MAX as u64) as u16),
                ts: Some(((p.ts / 1_000_000) as u32, (p.ts_echo / 1_000_000) as u32)),
                sack,
                sack_n,
                mptcp,
            })
        }
        Endpoints::Roce(_) => {
            let (opcode, psn, aeth) = if p.has(roce_flags::CNP) {
                (headers::BTH_CNP, 0, None)
            } else if p.payload > 0 {
                (headers::BTH_SEND_ONLY, p.seq / mtu, None)
            } else {
                let msn = (p.ack / mtu) as u32 & 0xFF_FFFF;
                let syndrome = if p.has(roce_flags::NAK) {
                    headers::AETH_NAK_SEQ
                } else {
                    headers::AETH_ACK
                };
                (
                    headers::BTH_ACK,
                    (p.ack / mtu).saturating_sub(1),
                    Some((syndrome, msn)),
                )
            };
            Transport::Roce {
                sport: 49152 + (p.conn & 0x3FFF) as u16,
                opcode,
                qp: p.conn & 0xFF_FFFF,
                psn: psn as u32 & 0xFF_FFFF,
                aeth,
            }
        }
        Endpoints::Ndp(_) => {
            // An ACK or NACK that carries a PULL keeps its type, with flag bit 2.
            let kind = if p.payload > 0 {
                0
            } else if p.has(ndp_flags::NACK) {
                2
            } else if p.has(ndp_flags::ACK) {
                1
            } else {
                3
            };
            let returned = p.has(ndp_flags::RETURNED) as u8;
            let pull = (kind != 3 && p.has(ndp_flags::PULL)) as u8;
            Transport::Shim {
                port: headers::NDP_PORT,
                kind,
                flags: trimmed as u8 | returned << 1 | pull << 2,
                conn: p.conn,
                seq: p.seq,
                ack: p.ack,
                payload: p.payload,
            }
        }
        Endpoints::Homa(_) => {
            let kind = if p.payload > 0 {
                0
            } else if p.has(RESEND) {
                2
            } else {
                1
            };
            Transport::Shim {
                port: headers::HOMA_PORT,
                kind,
                flags: d.priority(),
                conn: p.conn,
                seq: p.seq,
                ack: p.ack,
                payload: p.payload,
            }
        }
    };
    Frame {
        src_node: port.owner,
        dst_node: port.peer,
        src_host,
        dst_host,
        ecn: d.ecn,
        transport,
        payload,
    }
}

impl Sim {
    /// What the capture and trace recorded, up to the run's end (`None`: neither on).
    pub fn observed(&self) -> Option<Observed> {
        if !self.observe {
            return None;
        }
        let end = self.now;
        let cap = self.observers.capture.as_deref();
        let trace = self.observers.trace.as_deref();
        Some(Observed {
            pcap: cap.map(|c| c.file(end)),
            capture_packets: cap.map_or(0, |c| c.count(end) as u64),
            capture_missed: cap.map_or(0, |c| c.missed),
            trace: trace.map(|t| t.events(end)),
            trace_missed: trace.map_or(0, |t| t.missed),
        })
    }

    /// The flow and subflow of a packet, for the trace.
    fn flow_of(&self, d: &Desc) -> (u32, u8) {
        let p = self.pkts.get(d.pkt);
        let f = self.observers.conn_flow[p.conn as usize];
        (if f == NO_FLOW { TRACE_NO_FLOW } else { f }, p.sub)
    }

    fn trace_event(
        &self,
        port: u32,
        time: SimTime,
        kind: TraceKind,
        queued: bool,
        d: &Desc,
    ) -> TraceEvent {
        let (flow, subflow) = self.flow_of(d);
        TraceEvent {
            time,
            port,
            kind,
            queued,
            flow,
            subflow,
            class: d.priority(),
            bytes: d.wire as u32,
            queue_packets: 0,
            queue_bytes: 0,
        }
    }

    /// A packet starts onto the wire of `port` at `start`, having joined as `how` says.
    #[cold]
    #[inline(never)]
    pub(super) fn observe_tx(&mut self, port: u32, d: &Desc, start: SimTime, how: Join) {
        let marks = self.net.ports[port as usize].queue.stats.marks;
        let key = self.record_key();
        if self
            .observers
            .trace
            .as_deref()
            .is_some_and(|t| t.covers(port))
        {
            let now = self.now;
            let enqueue = (how != Join::Queued).then(|| {
                self.trace_event(port, now, TraceKind::Enqueue, how == Join::Committed, d)
            });
            let mark = self.trace_event(port, now, TraceKind::Mark, false, d);
            let dequeue = self.trace_event(port, start, TraceKind::Dequeue, how != Join::Idle, d);
            let t = self.observers.trace.as_deref_mut().expect("on");
            // The port's mark counter moved since it was last seen: this packet's mark.
            let marked = t.marked(port, marks) && d.ecn == Ecn::Ce;
            if let Some(e) = enqueue {
                t.push(e, key);
            }
            if marked {
                t.push(mark, key);
            }
            t.push(dequeue, key);
        }
        let Some(cap) = self.observers.capture.as_deref_mut() else {
            return;
        };
        if !cap.covers(port) {
            return;
        }
        let marked = cap.marked(port, marks) && d.ecn == Ecn::Ce;
        let conn = self.pkts.get(d.pkt).conn;
        if let Some(iface) = cap.interface(port, conn, start, false) {
            let frame = frame_of(&self.net, &self.conns, &self.pkts, port, d);
            let trimmed = matches!(
                frame.transport,
                Transport::Shim { flags, port: headers::NDP_PORT, .. } if flags & 1 != 0
            );
            let comment = match (marked, trimmed) {
                (true, _) => "CE marked at this port",
                (false, true) => "trimmed to its header",
                (false, false) => "",
            };
            cap.record(iface, start, &frame, comment, key);
        }
    }

    /// What port `port`'s queue did with an arrival (`Sim::settle_admission`), for the
    /// capture and the trace.
    #[cold]
    #[inline(never)]
    pub(super) fn observe_admission(&mut self, port: u32, a: &Admission) {
        if self.net.ports[port as usize].queue.trims() {
            // Trims, header drops and returns have events of their own.
            self.observe_trimming(port, a.arriving, None);
            if let Some(e) = a.evicted {
                self.observe_trimming(port, e, Some(a.evicted_wire));
            }
            return;
        }
        let (d, fate) = a.arriving;
        match fate {
            Fate::Queued | Fate::Header => self.observe_queued(port, &d),
            Fate::Dropped | Fate::Returned => self.observe_drop(port, &d, DropReason::Queue),
        }
        if let Some((x, fate)) = a.evicted {
            match fate {
                Fate::Dropped | Fate::Returned => self.observe_drop_waiting(port, &x),
                // It stays, changed (only a trimming queue changes one, above).
                Fate::Queued | Fate::Header => {}
            }
        }
    }

    /// A packet joins the queue of a port that does not fix departures at enqueue.
    #[cold]
    #[inline(never)]
    pub(super) fn observe_queued(&mut self, port: u32, d: &Desc) {
        let marks = self.net.ports[port as usize].queue.stats.marks;
        let key = self.record_key();
        if self
            .observers
            .trace
            .as_deref()
            .is_some_and(|t| t.covers(port))
        {
            let e = self.trace_event(port, self.now, TraceKind::Enqueue, true, d);
            let m = self.trace_event(port, self.now, TraceKind::Mark, false, d);
            let t = self.observers.trace.as_deref_mut().expect("on");
            t.push(e, key);
            if t.marked(port, marks) && d.ecn == Ecn::Ce {
                t.push(m, key);
            }
        }
        if let Some(cap) = self.observers.capture.as_deref_mut() {
            if cap.covers(port) {
                // A mark made as the packet joins shows in its header as it leaves; it
                // is not this port's mark of the packet that leaves next.
                cap.marked(port, marks);
            }
        }
    }

    /// Port `port` drops a packet (before freeing it).
    #[cold]
    #[inline(never)]
    pub(super) fn observe_drop(&mut self, port: u32, d: &Desc, why: DropReason) {
        if self
            .observers
            .trace
            .as_deref()
            .is_some_and(|t| t.covers(port))
        {
            let e = self.trace_event(port, self.now, TraceKind::Drop, false, d);
            let key = self.record_key();
            self.observers
                .trace
                .as_deref_mut()
                .expect("on")
                .push(e, key);
        }
        self.capture_drop(port, d, why);
    }

    /// Port `port` drops a packet that waited in its queue (a pFabric queue making room
    /// for a more urgent arrival), before freeing it.
    #[cold]
    #[inline(never)]
    pub(super) fn observe_drop_waiting(&mut self, port: u32, d: &Desc) {
        if self
            .observers
            .trace
            .as_deref()
            .is_some_and(|t| t.covers(port))
        {
            let e = self.trace_event(port, self.now, TraceKind::Drop, true, d);
            let key = self.record_key();
            self.observers
                .trace
                .as_deref_mut()
                .expect("on")
                .push(e, key);
        }
        self.capture_drop(port, d, DropReason::Queue);
    }

    /// A drop at `port` onto its drop interface, if captured.
    fn capture_drop(&mut self, port: u32, d: &Desc, why: DropReason) {
        let key = self.record_key();
        let Some(cap) = self.observers.capture.as_deref_mut() else {
            return;
        };
        let conn = self.pkts.get(d.pkt).conn;
        if let Some(iface) = cap.interface(port, conn, self.now, true) {
            let frame = frame_of(&self.net, &self.conns, &self.pkts, port, d);
            cap.record(iface, self.now, &frame, why.comment(), key);
        }
    }

    /// What a trimming port did with a packet: `evicted_wire` is, for the packet
    /// trimmed off the data queue's tail to make room, its size while it waited.
    #[cold]
    #[inline(never)]
    pub(super) fn observe_trimming(
        &mut self,
        port: u32,
        (d, fate): (Desc, Fate),
        evicted_wire: Option<u16>,
    ) {
        let p = self.pkts.get(d.pkt);
        let full = p.payload + self.conns[p.conn as usize].wire.header;
        let now = self.now;
        let mut events = [None; 3];
        let waited = evicted_wire.is_some();
        let cut = match evicted_wire {
            Some(w) => w as u32 > d.wire as u32,
            None => (d.wire as u32) < full && p.payload > 0,
        };
        if !waited && fate.waits() {
            events[0] = Some(self.trace_event(port, now, TraceKind::Enqueue, true, &d));
        }
        if cut {
            let mut e = self.trace_event(port, now, TraceKind::Trim, waited, &d);
            // A packet trimmed while it waited leaves these bytes of the queue.
            e.bytes = evicted_wire.map_or(full, |w| w as u32) - d.wire as u32;
            events[1] = Some(e);
        }
        if matches!(fate, Fate::Dropped | Fate::Returned) {
            events[2] = Some(self.trace_event(port, now, TraceKind::Drop, waited, &d));
        }
        let key = self.record_key();
        if let Some(t) = self.observers.trace.as_deref_mut() {
            for e in events.into_iter().flatten() {
                t.push(e, key);
            }
        }
        match fate {
            Fate::Dropped => self.capture_drop(port, &d, DropReason::Header),
            Fate::Returned => self.capture_drop(port, &d, DropReason::Returned),
            Fate::Queued | Fate::Header => {}
        }
    }

    /// Port `port` sends a PFC PAUSE (`on`) or RESUME for `class`, starting onto its
    /// wire at `start`: the frame on the port's interface, if captured.
    #[cold]
    #[inline(never)]
    pub(super) fn observe_pfc_sent(&mut self, port: u32, class: u8, on: bool, start: SimTime) {
        let key = self.record_key();
        let owner = self.net.ports[port as usize].owner;
        let Some(cap) = self.observers.capture.as_deref_mut() else {
            return;
        };
        if let Some(iface) = cap.pfc_interface(port, start) {
            cap.record_pfc(iface, start, (owner, class, on), key);
        }
    }

    /// Port `port`'s class `class` is paused (or resumed) by its peer.
    #[cold]
    #[inline(never)]
    pub(super) fn observe_pause(&mut self, port: u32, class: u8, on: bool) {
        let key = self.record_key();
        if let Some(t) = self.observers.trace.as_deref_mut() {
            t.push(
                TraceEvent {
                    time: self.now,
                    port,
                    kind: if on {
                        TraceKind::Pause
                    } else {
                        TraceKind::Resume
                    },
                    queued: false,
                    flow: TRACE_NO_FLOW,
                    subflow: 0,
                    class,
                    bytes: 0,
                    queue_packets: 0,
                    queue_bytes: 0,
                },
                key,
            );
        }
    }
}

/// The one-thread order of the events a partition runs (`EventKey`), to key the
/// records they make: the time being run, how many events were due when it began, and
/// the keys of those scheduled for it since, in the order scheduled.
#[derive(Default)]
pub(super) struct EventKeys {
    /// The key of the event being run.
    pub current: EventKey,
    time: Option<SimTime>,
    due_at_start: usize,
    scheduled: Vec<EventKey>,
}

impl EventKeys {
    /// Keys `ev`, just popped at `place` of the `due` events of its time.
    fn begin(&mut self, ev: &Event, (place, due): (usize, usize)) {
        if self.time != Some(ev.time) {
            self.time = Some(ev.time);
            self.due_at_start = due;
            self.scheduled.clear();
        }
        self.current = match place.checked_sub(self.due_at_start) {
            None => EventKey {
                time: ev.time,
                depth: 0,
                root: ev.order(),
                path: 0,
            },
            Some(k) => self.scheduled[k],
        };
    }

    /// The event being run scheduled `n` events for its own time.
    fn scheduled(&mut self, n: usize) {
        for place in 0..n {
            let Some(key) = self.current.child(place) else {
                panic!(
                    "a packet capture or event trace over several threads orders at most \
                     {MAX_DEPTH} generations of events scheduled for their own instant, \
                     and at most 65,536 per event; time {} ps has more: run it on one \
                     thread (parallel.threads = 1)",
                    self.current.time
                );
            };
            self.scheduled.push(key);
        }
    }
}

impl Sim {
    /// In a run over several threads, the key of the event being run (`None`: one
    /// thread, whose records are made in order).
    #[inline]
    fn record_key(&self) -> Option<EventKey> {
        self.part.as_deref().map(|p| p.keys.current)
    }

    /// `run_until` of a partition that captures or traces: each event keyed as it runs,
    /// with those it schedules for its own time (`EventKeys`).
    #[cold]
    #[inline(never)]
    pub(super) fn run_until_keyed(&mut self, until: SimTime) -> bool {
        while self.events.peek_time_before(until).is_some() {
            let ev = self.events.pop().expect("peeked");
            let (place, due) = self.events.due_place();
            let part = self.part.as_deref_mut().expect("a partition");
            part.keys.begin(&ev, (place, due));
            let going = self.dispatch(ev);
            let scheduled = self.events.due_place().1 - due;
            let part = self.part.as_deref_mut().expect("a partition");
            part.keys.scheduled(scheduled);
            if !going {
                return false;
            }
        }
        true
    }

    /// Takes the other partitions' captures and traces into this replica's, merged
    /// into the one-thread run's (`Capture::merge`, `Trace::merge`).
    pub(super) fn merge_observers(&mut self, others: &mut [Sim]) {
        if let Some(mine) = self.observers.capture.take() {
            let rest = others.iter_mut().filter_map(|s| s.observers.capture.take());
            let parts = std::iter::once(mine).chain(rest).map(|c| *c).collect();
            self.observers.capture = Some(Box::new(Capture::merge(parts)));
        }
        if let Some(mine) = self.observers.trace.take() {
            let rest = others.iter_mut().filter_map(|s| s.observers.trace.take());
            let parts = std::iter::once(mine).chain(rest).map(|t| *t).collect();
            self.observers.trace = Some(Box::new(Trace::merge(parts)));
        }
    }
}
