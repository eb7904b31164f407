//! Homa (Montazeri et al., "Homa: A Receiver-Driven Low-Latency Transport Protocol Using
//! Network Priorities", SIGCOMM 2018) as two sans-IO agents per host: the host's
//! [`HostSender`] (its outgoing messages, one packet at a time to the NIC, the message
//! with the fewest bytes left first) and its [`HostReceiver`] (its incoming messages, and
//! the grants it hands out among them: SRPT over at most `overcommit` messages at a
//! time, each allowed `rtt_bytes` beyond what has arrived).
//!
//! Every flow is one message. Its first `rtt_bytes` are *unscheduled*: sent at once, in
//! the priority level its size falls in (`Priorities::unscheduled_level`, cut from the
//! workload's size distribution so each unscheduled level carries as many bytes). The
//! rest is *scheduled*: sent as the receiver's grants allow, in the level each grant
//! names. Level 0 is the highest priority; unscheduled levels come first, scheduled
//! ones after them. Lost packets are found by timeouts: a receiver that expects data
//! and has heard nothing for `resend_timeout` sends a RESEND for the first missing
//! range; a sender whose message has had no word from its receiver for as long sends
//! the message's first packet again, so a receiver that never heard of it learns it.
//!
//! Packets are [`Segment`](crate::transport::tcp::Segment)s, which the engine maps onto
//! packets as it does TCP's: DATA goes to the receiver (`seq`: offset, `len`: payload,
//! `dsn`: message length); GRANT and RESEND come back (`seq`: the granted offset or the
//! first byte to send again, `ack`: the grant's priority level or the end of the range
//! to send again, `flags`: [`RESEND`] on a RESEND).

pub mod pair;
pub mod receiver;
pub mod sender;

pub use receiver::HostReceiver;
pub use sender::HostSender;

use crate::time::{SimTime, PS_PER_US};

/// Priority levels of Homa's switches: 8 (Homa paper §5.1, "the switches support 8
/// priority levels"; HomaSimulation's `prioLevels` in its experiments).
pub const DEFAULT_PRIORITY_LEVELS: u8 = 8;
/// Homa's RTTbytes at 10 Gbit/s in the paper's simulations: 9,700 bytes
/// (HomaSimulation `homaTransportConfig.ini`, `maxOutstandingRecvBytes = 9700B`, "the
/// RTT in bytes"). Unset, a transport computes it from the network's base RTT instead.
pub const PAPER_RTT_BYTES: u64 = 9_700;
/// The time without progress after which a receiver asks for missing data again, and a
/// sender repeats its message's first packet: 1 ms. (Homa's Linux module uses a few
/// milliseconds, `resend_ticks`; this is a backstop, and the paper's configurations lose
/// almost nothing.)
pub const DEFAULT_RESEND_TIMEOUT: SimTime = 1_000 * PS_PER_US;

/// A RESEND's flag (on packets to the sender; a GRANT has no flag). The bit is TCP's
/// CWR, which RWNDQ switches do not read.
pub const RESEND: u8 = crate::net::packet::flags::CWR;

/// A Homa transport's settings, resolved for one run.
#[derive(Clone, Debug, PartialEq)]
pub struct HomaConfig {
    /// Payload bytes per full packet.
    pub mss: u32,
    /// Unscheduled bytes per message and the bytes a grant allows beyond what arrived.
    pub rtt_bytes: u64,
    /// Messages a receiver grants to at once.
    pub overcommit: u32,
    /// Switch priority levels Homa uses, and the unscheduled levels' size cutoffs.
    pub priorities: Priorities,
    pub resend_timeout: SimTime,
}

/// How Homa uses the switches' priority levels: the first `unscheduled` levels for
/// unscheduled packets, by message size, and the rest for scheduled ones.
#[derive(Clone, Debug, PartialEq)]
pub struct Priorities {
    pub levels: u8,
    pub unscheduled: u8,
    /// The largest message size of each unscheduled level but the last, ascending.
    pub cutoffs: Vec<u64>,
}

impl Priorities {
    /// The unscheduled level of a message of `size` bytes: the smallest messages get
    /// the highest level (0).
    pub fn unscheduled_level(&self, size: u64) -> u8 {
        self.cutoffs.partition_point(|&c| c < size) as u8
    }

    /// The scheduled levels: `unscheduled..levels` (with one level in all, that one).
    pub fn scheduled(&self) -> std::ops::Range<u8> {
        if self.levels > self.unscheduled {
            self.unscheduled..self.levels
        } else {
            self.levels - 1..self.levels
        }
    }

    /// The levels for message sizes `sizes` (a sample of the workload, sorted in place)
    /// with unscheduled messages cut at `rtt_bytes` (Homa paper §3.4): the share of
    /// unscheduled bytes in the workload sets how many of the `levels` are unscheduled
    /// (at least one, and one left for scheduled packets when there are two or more;
    /// `unscheduled` overrides it), and the cutoffs split the unscheduled bytes evenly
    /// between them, smaller messages in higher levels.
    pub fn from_sizes(
        sizes: &mut [u64],
        rtt_bytes: u64,
        levels: u8,
        unscheduled: Option<u8>,
    ) -> Priorities {
        sizes.sort_unstable();
        let total: f64 = sizes.iter().map(|&s| s as f64).sum();
        let unsched_bytes = |s: u64| s.min(rtt_bytes) as f64;
        let unsched_total: f64 = sizes.iter().map(|&s| unsched_bytes(s)).sum();
        let most = if levels > 1 { levels - 1 } else { 1 };
        let n = unscheduled.unwrap_or_else(|| {
            let share = if total > 0.0 {
                unsched_total / total
            } else {
                1.0
            };
            ((share * levels as f64).round() as u8).clamp(1, most)
        });
        let mut cutoffs = Vec::with_capacity(n as usize);
        let mut seen = 0.0;
        let mut next = 1;
        for (i, &s) in sizes.iter().enumerate() {
            seen += unsched_bytes(s);
            // A cutoff falls after the last message of its size that fills its share.
            while next < n && seen >= unsched_total * next as f64 / n as f64 {
                if sizes.get(i + 1) != Some(&s) {
                    cutoffs.push(s);
                    next += 1;
                } else {
                    break;
                }
            }
        }
        cutoffs.dedup();
        Priorities {
            levels,
            unscheduled: n,
            cutoffs,
        }
    }
}

/// A Homa transport's settings as its scenario gives them; `config` resolves them for a
/// run (its network's base RTT, its hosts' line rate, its workload's sizes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HomaSettings {
    pub rtt_bytes: Option<u64>,
    pub overcommit: Option<u32>,
    pub levels: u8,
    pub unscheduled: Option<u8>,
    pub resend_timeout: SimTime,
}

impl HomaSettings {
    /// The settings for packets of `mss` payload bytes, on a network whose base RTT is
    /// `base_rtt` with hosts at `line_bps`, for messages whose sizes `sizes` sample (sorted
    /// in place): RTTbytes one base RTT at line rate unless set, the overcommitment the
    /// number of scheduled levels unless set.
    pub fn config(
        &self,
        mss: u32,
        base_rtt: SimTime,
        line_bps: f64,
        sizes: &mut [u64],
    ) -> HomaConfig {
        let rtt_bytes = self
            .rtt_bytes
            .unwrap_or_else(|| ((base_rtt as f64 * 1e-12 * line_bps / 8.0).round() as u64).max(1));
        let priorities = Priorities::from_sizes(sizes, rtt_bytes, self.levels, self.unscheduled);
        let scheduled = priorities.scheduled().len() as u32;
        HomaConfig {
            mss,
            rtt_bytes,
            overcommit: self.overcommit.unwrap_or(scheduled.max(1)),
            priorities,
            resend_timeout: self.resend_timeout,
        }
    }
}

/// A message as its flow's records see it; its protocol state is in its hosts' agents.
/// Its sender's host keeps `stats` and `release`, its receiver's `finish`: each host's
/// events touch only its own part (a run over several threads gathers them).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HomaMessage {
    pub len: u64,
    /// When its receiver had all of it.
    pub finish: Option<SimTime>,
    /// When its sender learns that the receiver has all of it (a synchronisation step
    /// after `finish`, as news from another host): from then on it has forgotten the
    /// message and ignores the GRANTs, RESENDs and timers that still come for it.
    pub release: Option<SimTime>,
    pub stats: HomaStats,
}

impl HomaMessage {
    /// Whether its sender has forgotten it by `now`.
    pub fn released(&self, now: SimTime) -> bool {
        self.release.is_some_and(|at| at <= now)
    }
}

/// A message's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HomaStats {
    pub packets_sent: u64,
    pub packets_retx: u64,
    pub bytes_sent: u64,
    pub bytes_retx: u64,
    /// GRANTs and RESENDs its sender received.
    pub grants: u32,
    pub resends: u32,
    /// Times its sender repeated its first packet after a silence.
    pub timeouts: u32,
}

impl HomaMessage {
    pub fn new(len: u64) -> HomaMessage {
        HomaMessage {
            len,
            ..HomaMessage::default()
        }
    }

    /// Swaps the receiver's part (`finish`) with another copy of the record.
    pub fn swap_receiver(&mut self, other: &mut HomaMessage) {
        std::mem::swap(&mut self.finish, &mut other.finish);
    }

    /// Bytes delivered: all of them once the receiver had the whole message.
    pub fn delivered(&self) -> u64 {
        if self.finish.is_some() {
            self.len
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unscheduled_levels_split_the_unscheduled_bytes_evenly() {
        // 1,000 messages of 100 B and 100 of 10,000 B with RTTbytes 1,000: unscheduled
        // bytes 100,000 + 100,000 of 1,100,000 in all (18%): 1 of 8 levels rounds to 1;
        // with two unscheduled levels, the cutoff falls at 100 B (half the bytes).
        let mut sizes: Vec<u64> = (0..1000)
            .map(|_| 100)
            .chain((0..100).map(|_| 10_000))
            .collect();
        let p = Priorities::from_sizes(&mut sizes, 1_000, 8, None);
        assert_eq!((p.unscheduled, p.cutoffs.clone()), (1, vec![]));
        assert_eq!(p.scheduled(), 1..8);
        let p = Priorities::from_sizes(&mut sizes, 1_000, 8, Some(2));
        assert_eq!(p.cutoffs, vec![100]);
        assert_eq!(p.unscheduled_level(100), 0);
        assert_eq!(p.unscheduled_level(101), 1);
        assert_eq!(p.unscheduled_level(1 << 40), 1);
    }

    #[test]
    fn small_messages_take_most_levels_and_leave_one_for_grants() {
        // Every byte unscheduled: 7 of 8 levels, cut at equal byte shares of 1..=700.
        let mut sizes: Vec<u64> = (1..=700).collect();
        let p = Priorities::from_sizes(&mut sizes, 10_000, 8, None);
        assert_eq!(p.unscheduled, 7);
        assert_eq!(p.cutoffs.len(), 6);
        assert_eq!(p.scheduled(), 7..8);
        // Bytes of sizes ≤ the first cutoff are about a seventh of all.
        let c = p.cutoffs[0];
        let below: u64 = (1..=c).sum();
        let all: u64 = (1..=700).sum();
        assert!((below as f64 / all as f64 - 1.0 / 7.0).abs() < 0.01, "{c}");
        assert!(p.cutoffs.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn one_level_serves_both_kinds() {
        let mut sizes = vec![100, 100_000];
        let p = Priorities::from_sizes(&mut sizes, 10_000, 1, None);
        assert_eq!((p.unscheduled, p.scheduled()), (1, 0..1));
        assert_eq!(p.unscheduled_level(100_000), 0);
    }
}
