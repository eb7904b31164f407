//! A host's Homa receiver: the messages arriving at the host, and the grants it hands
//! out among them (Homa paper §3.3–3.5).
//!
//! The incoming messages are kept in order of the bytes they still miss (SRPT), fewest
//! first; each data packet moves its message forward at most a few places, so the order
//! is kept by moving one entry rather than by sorting. After each data packet the
//! receiver grants to the first `overcommit` messages that still need grants: each may
//! have `rtt_bytes` beyond what has arrived. With n such messages, the one with the
//! fewest bytes left gets the nth-lowest scheduled level and the others the levels below
//! it, so the higher scheduled levels stay free for a shorter message that may come
//! (§3.4, "the receiver uses the lowest priority levels").

use super::{HomaConfig, RESEND};
use crate::time::SimTime;
use crate::transport::tcp::Segment;
use std::collections::VecDeque;

/// A packet the receiver sends to a message's sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    /// The sender may send message `msg` up to byte `offset`, in level `level`.
    Grant { msg: u32, offset: u64, level: u8 },
    /// The sender should send bytes `[from, to)` of message `msg` again.
    Resend { msg: u32, from: u64, to: u64 },
}

impl Control {
    /// The message the packet is about.
    pub fn msg(&self) -> u32 {
        match *self {
            Control::Grant { msg, .. } | Control::Resend { msg, .. } => msg,
        }
    }

    /// The packet as a segment (see the module comment of `transport::homa`).
    pub fn segment(&self) -> Segment {
        match *self {
            Control::Grant { offset, level, .. } => Segment {
                seq: offset,
                ack: level as u64,
                ..Segment::default()
            },
            Control::Resend { from, to, .. } => Segment {
                seq: from,
                ack: to,
                flags: RESEND,
                ..Segment::default()
            },
        }
    }

    /// Reads a GRANT or RESEND that arrived for message `msg`.
    pub fn of_segment(msg: u32, seg: &Segment) -> Control {
        if seg.has(RESEND) {
            Control::Resend {
                msg,
                from: seg.seq,
                to: seg.ack,
            }
        } else {
            Control::Grant {
                msg,
                offset: seg.seq,
                level: seg.ack as u8,
            }
        }
    }
}

#[derive(Clone, Debug)]
struct InMsg {
    id: u32,
    len: u64,
    /// Distinct payload bytes arrived.
    received: u64,
    /// Bytes the sender may send: the unscheduled ones, then as granted.
    granted: u64,
    /// One bit per packet (offset / mss) that has arrived.
    got: Vec<u64>,
    /// When the message last made progress (or its last RESEND went out).
    last_heard: SimTime,
}

impl InMsg {
    fn left(&self) -> u64 {
        self.len - self.received
    }

    /// The first byte not arrived (the message's length when all have).
    fn first_missing(&self, mss: u32) -> u64 {
        let words = self.got.iter().position(|&w| w != u64::MAX);
        let packet = match words {
            Some(i) => i as u64 * 64 + self.got[i].trailing_ones() as u64,
            None => self.got.len() as u64 * 64,
        };
        (packet * mss as u64).min(self.len)
    }
}

/// One host's incoming Homa messages and the grants and RESENDs it has to send.
#[derive(Clone, Debug, Default)]
pub struct HostReceiver {
    /// Incomplete messages, fewest bytes left first (ties: first heard of first).
    msgs: Vec<InMsg>,
    out: VecDeque<Control>,
}

/// What a data packet did to its message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// The message still misses bytes.
    Partial,
    /// The packet completed the message (it is forgotten; later copies of its packets
    /// must not be handed in again).
    Complete,
    /// A copy of a packet that had arrived.
    Duplicate,
}

impl HostReceiver {
    /// Incomplete messages.
    pub fn messages(&self) -> usize {
        self.msgs.len()
    }

    /// A data packet of message `msg` (`len` bytes in all): `payload` bytes at `offset`.
    /// Grants follow, to be taken by `poll_control`.
    pub fn on_data(
        &mut self,
        now: SimTime,
        cfg: &HomaConfig,
        msg: u32,
        len: u64,
        offset: u64,
        payload: u32,
    ) -> Arrival {
        let i = match self.msgs.iter().position(|m| m.id == msg) {
            Some(i) => i,
            None => {
                let packets = len.div_ceil(cfg.mss as u64).max(1);
                let m = InMsg {
                    id: msg,
                    len,
                    received: 0,
                    granted: len.min(cfg.rtt_bytes),
                    got: vec![0; packets.div_ceil(64) as usize],
                    last_heard: now,
                };
                let at = self.msgs.partition_point(|x| x.left() <= len);
                self.msgs.insert(at, m);
                at
            }
        };
        let m = &mut self.msgs[i];
        let packet = (offset / cfg.mss as u64) as usize;
        let (word, bit) = (packet / 64, 1u64 << (packet % 64));
        if m.got[word] & bit != 0 {
            return Arrival::Duplicate;
        }
        m.got[word] |= bit;
        m.received += payload as u64;
        m.last_heard = now;
        if m.received >= m.len {
            self.msgs.remove(i);
            self.grant(cfg);
            return Arrival::Complete;
        }
        // Fewer bytes left: the message moves towards the front.
        let mut j = i;
        while j > 0 && self.msgs[j - 1].left() > self.msgs[j].left() {
            self.msgs.swap(j - 1, j);
            j -= 1;
        }
        self.grant(cfg);
        Arrival::Partial
    }

    /// Grants to the first `overcommit` messages that need grants, each up to
    /// `rtt_bytes` beyond what has arrived, when that moves its grant on.
    fn grant(&mut self, cfg: &HomaConfig) {
        let needs = |m: &InMsg| m.granted < m.len;
        let n = self
            .msgs
            .iter()
            .filter(|m| needs(m))
            .take(cfg.overcommit as usize)
            .count() as i32;
        let sched = cfg.priorities.scheduled();
        let (first, end) = (sched.start as i32, sched.end as i32);
        for (rank, m) in self
            .msgs
            .iter_mut()
            .filter(|m| m.granted < m.len)
            .take(n as usize)
            .enumerate()
        {
            let offset = (m.received + cfg.rtt_bytes).min(m.len);
            if offset > m.granted {
                m.granted = offset;
                let level = (end - n + rank as i32).max(first) as u8;
                self.out.push_back(Control::Grant {
                    msg: m.id,
                    offset,
                    level,
                });
            }
        }
    }

    /// The next GRANT or RESEND to send.
    pub fn poll_control(&mut self) -> Option<Control> {
        self.out.pop_front()
    }

    /// When message `msg` times out if nothing arrives for it (`None`: complete or
    /// unknown).
    pub fn deadline(&self, cfg: &HomaConfig, msg: u32) -> Option<SimTime> {
        self.msgs
            .iter()
            .find(|m| m.id == msg)
            .map(|m| m.last_heard + cfg.resend_timeout)
    }

    /// Message `msg`'s timer: if nothing arrived for `resend_timeout`, a RESEND for its
    /// first missing byte up to what it was granted. Returns when to look again.
    pub fn on_timer(&mut self, now: SimTime, cfg: &HomaConfig, msg: u32) -> Option<SimTime> {
        let m = self.msgs.iter_mut().find(|m| m.id == msg)?;
        if now >= m.last_heard + cfg.resend_timeout {
            let from = m.first_missing(cfg.mss);
            self.out.push_back(Control::Resend {
                msg,
                from,
                to: m.granted.max(from + 1),
            });
            m.last_heard = now;
        }
        Some(m.last_heard + cfg.resend_timeout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::homa::Priorities;

    /// 1,000-byte packets, RTTbytes 3,000, two messages granted at once, 8 levels of
    /// which 2 unscheduled (scheduled levels 2..8).
    fn cfg() -> HomaConfig {
        HomaConfig {
            mss: 1000,
            rtt_bytes: 3000,
            overcommit: 2,
            priorities: Priorities {
                levels: 8,
                unscheduled: 2,
                cutoffs: vec![500],
            },
            resend_timeout: 1000,
        }
    }

    fn drain(r: &mut HostReceiver) -> Vec<Control> {
        std::iter::from_fn(|| r.poll_control()).collect()
    }

    #[test]
    fn a_message_within_the_unscheduled_bytes_needs_no_grant() {
        let (c, mut r) = (cfg(), HostReceiver::default());
        assert_eq!(r.on_data(0, &c, 1, 2500, 0, 1000), Arrival::Partial);
        assert_eq!(r.on_data(1, &c, 1, 2500, 1000, 1000), Arrival::Partial);
        assert_eq!(r.on_data(2, &c, 1, 2500, 2000, 500), Arrival::Complete);
        assert!(drain(&mut r).is_empty());
        assert_eq!(r.messages(), 0);
    }

    #[test]
    fn each_packet_moves_the_grant_to_rtt_bytes_beyond_what_arrived() {
        let (c, mut r) = (cfg(), HostReceiver::default());
        r.on_data(0, &c, 1, 10_000, 0, 1000);
        // Alone: the lowest scheduled level (7).
        assert_eq!(
            drain(&mut r),
            vec![Control::Grant {
                msg: 1,
                offset: 4000,
                level: 7
            }]
        );
        assert_eq!(r.on_data(1, &c, 1, 10_000, 0, 1000), Arrival::Duplicate);
        assert!(drain(&mut r).is_empty());
        r.on_data(2, &c, 1, 10_000, 1000, 1000);
        assert_eq!(
            drain(&mut r),
            vec![Control::Grant {
                msg: 1,
                offset: 5000,
                level: 7
            }]
        );
    }

    #[test]
    fn grants_go_to_the_messages_with_fewest_bytes_left_up_to_the_overcommitment() {
        let (c, mut r) = (cfg(), HostReceiver::default());
        r.on_data(0, &c, 1, 50_000, 0, 1000); // 49,000 left
        r.on_data(0, &c, 2, 30_000, 0, 1000); // 29,000 left
        drain(&mut r);
        // A third, shorter message: it and message 2 are the two granted; message 1
        // gets nothing more. The shortest takes the higher of the two lowest levels.
        r.on_data(1, &c, 3, 10_000, 0, 1000);
        assert_eq!(
            drain(&mut r),
            vec![Control::Grant {
                msg: 3,
                offset: 4000,
                level: 6
            }]
        );
        r.on_data(2, &c, 1, 50_000, 1000, 1000);
        assert_eq!(
            drain(&mut r),
            vec![],
            "message 1 is third in line: no grant"
        );
        r.on_data(3, &c, 2, 30_000, 1000, 1000);
        assert_eq!(
            drain(&mut r),
            vec![Control::Grant {
                msg: 2,
                offset: 5000,
                level: 7
            }]
        );
    }

    #[test]
    fn silence_brings_a_resend_of_the_first_missing_range() {
        let (c, mut r) = (cfg(), HostReceiver::default());
        r.on_data(0, &c, 1, 10_000, 0, 1000);
        r.on_data(10, &c, 1, 10_000, 2000, 1000);
        drain(&mut r);
        assert_eq!(r.deadline(&c, 1), Some(1010));
        assert_eq!(r.on_timer(500, &c, 1), Some(1010), "not yet");
        assert!(drain(&mut r).is_empty());
        assert_eq!(r.on_timer(1010, &c, 1), Some(2010));
        // Two packets arrived: granted up to 2,000 + 3,000.
        assert_eq!(
            drain(&mut r),
            vec![Control::Resend {
                msg: 1,
                from: 1000,
                to: 5000
            }]
        );
        let seg = Control::Resend {
            msg: 1,
            from: 1000,
            to: 4000,
        }
        .segment();
        assert_eq!(
            Control::of_segment(1, &seg),
            Control::Resend {
                msg: 1,
                from: 1000,
                to: 4000
            }
        );
    }
}
