//! A host's Homa sender: its outgoing messages, and which one the NIC gets a packet of
//! next: the one with the fewest bytes left to send among those that may send (SRPT at
//! the sender, Homa paper §3.6). The engine asks for one packet at a time, as the NIC
//! frees, so the NIC's queue stays short and a new short message waits behind at most a
//! packet or two.
//!
//! A message may send its unscheduled bytes (`rtt_bytes`) at once and the rest as its
//! receiver grants it, in whole packets (a grant that ends inside a packet lets the whole
//! packet go). A RESEND asks for a range again; a message that has sent all it may and
//! has heard nothing from its receiver for `resend_timeout` sends its first packet
//! again.

use super::receiver::Control;
use super::HomaConfig;
use crate::time::SimTime;

#[derive(Clone, Debug)]
struct OutMsg {
    id: u32,
    len: u64,
    /// The next byte not sent yet.
    next: u64,
    /// Bytes it may send (unscheduled, then granted).
    granted: u64,
    unscheduled_level: u8,
    /// The level of the latest grant.
    scheduled_level: u8,
    /// A range to send again `[from, to)`, from a RESEND or a timeout.
    again: Option<(u64, u64)>,
    /// When the receiver was last heard from (or the message last sent a packet).
    last_heard: SimTime,
    /// The receiver has sent a GRANT or RESEND: it knows the message, and its own timer
    /// asks for what goes missing, so the sender's stops.
    heard: bool,
}

impl OutMsg {
    fn can_send(&self) -> bool {
        self.again.is_some() || self.next < self.granted
    }
}

/// A data packet to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataPacket {
    pub msg: u32,
    /// The message's length (carried in every data packet).
    pub msg_len: u64,
    pub offset: u64,
    pub len: u32,
    /// The switch priority level.
    pub level: u8,
    /// A packet sent again.
    pub retx: bool,
    /// The message has nothing more to send for now (its timer starts).
    pub idle_after: bool,
}

/// What a message's sender timer found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SenderTimer {
    /// Its receiver has not been silent long enough: look again then.
    Later(SimTime),
    /// Its first packet goes again.
    Repeat,
    /// Nothing to watch: the message is gone, or it has packets to send (which start
    /// the timer again when it has none).
    Off,
}

/// One host's outgoing Homa messages.
#[derive(Clone, Debug, Default)]
pub struct HostSender {
    /// In the order they were added.
    msgs: Vec<OutMsg>,
}

impl HostSender {
    /// Messages not yet forgotten.
    pub fn messages(&self) -> usize {
        self.msgs.len()
    }

    /// A new message `msg` of `len` bytes: its unscheduled bytes may go at once.
    pub fn add(&mut self, now: SimTime, cfg: &HomaConfig, msg: u32, len: u64) {
        self.msgs.push(OutMsg {
            id: msg,
            len,
            next: 0,
            granted: len.min(cfg.rtt_bytes),
            unscheduled_level: cfg.priorities.unscheduled_level(len),
            scheduled_level: cfg.priorities.scheduled().end - 1,
            again: None,
            last_heard: now,
            heard: false,
        });
    }

    /// Forgets message `msg` (its receiver has all of it).
    pub fn remove(&mut self, msg: u32) {
        if let Some(i) = self.msgs.iter().position(|m| m.id == msg) {
            self.msgs.remove(i);
        }
    }

    /// A GRANT or RESEND from message `msg`'s receiver.
    pub fn on_control(&mut self, now: SimTime, c: Control) {
        let Some(m) = self.msgs.iter_mut().find(|m| m.id == c.msg()) else {
            return;
        };
        m.last_heard = now;
        m.heard = true;
        match c {
            Control::Grant { offset, level, .. } => {
                m.granted = m.granted.max(offset.min(m.len));
                m.scheduled_level = level;
            }
            Control::Resend { from, to, .. } => {
                // A RESEND also grants what it names, bytes not sent yet included: the
                // GRANT that gave them may have been lost, and the receiver, which
                // counts them as granted, will not grant them again.
                m.granted = m.granted.max(to.min(m.len));
                // Bytes not sent yet go in their turn; only sent ones go again.
                // The receiver's word replaces a range pending (a first packet repeated
                // after a silence, or an older RESEND): joining two far-apart ranges
                // would send everything between them again. A range left out is asked
                // for again after the next silence.
                let sent = to.min(m.next);
                if from < sent {
                    m.again = Some(match m.again {
                        Some((a, b)) if a <= sent && from <= b => (a.min(from), b.max(sent)),
                        Some(_) | None => (from, sent),
                    });
                }
            }
        }
    }

    /// The next packet for the NIC: of the message with the fewest bytes left to send
    /// among those that may send (ties: the first added).
    pub fn poll_transmit(&mut self, now: SimTime, cfg: &HomaConfig) -> Option<DataPacket> {
        let m = self
            .msgs
            .iter_mut()
            .filter(|m| m.can_send())
            .min_by_key(|m| m.len - m.next)?;
        let mss = cfg.mss as u64;
        let unscheduled = m.len.min(cfg.rtt_bytes);
        let (offset, retx) = match m.again {
            Some((from, to)) => {
                let next = from + mss;
                m.again = (next < to).then_some((next, to));
                (from, true)
            }
            None => {
                let offset = m.next;
                m.next = (offset + mss).min(m.len);
                (offset, false)
            }
        };
        m.last_heard = now;
        Some(DataPacket {
            msg: m.id,
            msg_len: m.len,
            offset,
            len: (m.len - offset).min(mss) as u32,
            level: if offset < unscheduled {
                m.unscheduled_level
            } else {
                m.scheduled_level
            },
            retx,
            idle_after: !m.can_send(),
        })
    }

    /// Message `msg`'s timer: if it may send nothing and its receiver has never been
    /// heard from for `resend_timeout`, its first packet goes again (so a receiver that
    /// lost every packet it was sent learns of the message).
    pub fn on_timer(&mut self, now: SimTime, cfg: &HomaConfig, msg: u32) -> SenderTimer {
        let Some(m) = self.msgs.iter_mut().find(|m| m.id == msg) else {
            return SenderTimer::Off;
        };
        if m.can_send() || m.heard {
            return SenderTimer::Off;
        }
        if now >= m.last_heard + cfg.resend_timeout {
            m.again = Some((0, (cfg.mss as u64).min(m.len)));
            // (`can_send` was false: no range was pending.)
            m.last_heard = now;
            return SenderTimer::Repeat;
        }
        SenderTimer::Later(m.last_heard + cfg.resend_timeout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::homa::Priorities;

    fn cfg() -> HomaConfig {
        HomaConfig {
            mss: 1000,
            rtt_bytes: 2500,
            overcommit: 2,
            priorities: Priorities {
                levels: 8,
                unscheduled: 2,
                cutoffs: vec![1500],
            },
            resend_timeout: 1000,
        }
    }

    fn drain(s: &mut HostSender, c: &HomaConfig) -> Vec<(u32, u64, u8)> {
        std::iter::from_fn(|| s.poll_transmit(0, c).map(|p| (p.msg, p.offset, p.level))).collect()
    }

    #[test]
    fn unscheduled_bytes_go_at_once_in_whole_packets_then_wait_for_grants() {
        let (c, mut s) = (cfg(), HostSender::default());
        s.add(0, &c, 1, 10_000);
        // 2,500 unscheduled bytes: three packets (the third ends past the limit), in the
        // unscheduled level of a 10,000-byte message (1).
        assert_eq!(
            drain(&mut s, &c),
            vec![(1, 0, 1), (1, 1000, 1), (1, 2000, 1)]
        );
        s.on_control(
            5,
            Control::Grant {
                msg: 1,
                offset: 4000,
                level: 5,
            },
        );
        assert_eq!(drain(&mut s, &c), vec![(1, 3000, 5)]);
    }

    #[test]
    fn the_message_with_fewest_bytes_left_goes_first() {
        let (c, mut s) = (cfg(), HostSender::default());
        s.add(0, &c, 1, 10_000);
        assert_eq!(s.poll_transmit(0, &c).map(|p| p.msg), Some(1));
        // A shorter message added later takes the NIC at once.
        s.add(1, &c, 2, 1200);
        let p = s.poll_transmit(1, &c).unwrap();
        assert_eq!((p.msg, p.offset, p.level, p.len), (2, 0, 0, 1000));
        let p = s.poll_transmit(1, &c).unwrap();
        assert_eq!((p.msg, p.offset, p.len, p.idle_after), (2, 1000, 200, true));
        assert_eq!(s.poll_transmit(1, &c).map(|p| p.msg), Some(1));
    }

    #[test]
    fn silence_repeats_the_first_packet_until_the_receiver_is_heard_from() {
        let (c, mut s) = (cfg(), HostSender::default());
        s.add(0, &c, 1, 2000);
        assert_eq!(drain(&mut s, &c).len(), 2);
        assert_eq!(s.on_timer(500, &c, 1), SenderTimer::Later(1000));
        assert_eq!(s.on_timer(1000, &c, 1), SenderTimer::Repeat);
        let p = s.poll_transmit(1000, &c).unwrap();
        assert_eq!((p.offset, p.retx, p.idle_after), (0, true, true));
        // The receiver asks for the second packet: it knows the message, so the
        // sender's timer stops.
        s.on_control(
            1010,
            Control::Resend {
                msg: 1,
                from: 1000,
                to: 2000,
            },
        );
        let p = s.poll_transmit(1010, &c).unwrap();
        assert_eq!(
            (p.offset, p.len, p.retx, p.idle_after),
            (1000, 1000, true, true)
        );
        assert_eq!(s.on_timer(5000, &c, 1), SenderTimer::Off);
        s.remove(1);
        assert_eq!(s.messages(), 0);
    }

    #[test]
    fn a_resend_grants_the_unsent_bytes_it_names_when_their_grant_was_lost() {
        let (c, mut s) = (cfg(), HostSender::default());
        s.add(0, &c, 1, 10_000);
        assert_eq!(drain(&mut s, &c).len(), 3, "bytes 0..3000");
        // The receiver granted up to 5,000 bytes; that GRANT was lost. Having all of
        // bytes 0..3000, it asks for [3000, 5000) after its timeout: the sender has not
        // sent them, so nothing goes again, but they are granted now (in the highest
        // scheduled level, no GRANT having said another).
        s.on_control(
            1000,
            Control::Resend {
                msg: 1,
                from: 3000,
                to: 5000,
            },
        );
        assert_eq!(drain(&mut s, &c), vec![(1, 3000, 7), (1, 4000, 7)]);
        // Bytes sent and unsent in one RESEND: the sent ones again, then the new ones.
        s.on_control(
            2000,
            Control::Resend {
                msg: 1,
                from: 4000,
                to: 7000,
            },
        );
        let got: Vec<_> =
            std::iter::from_fn(|| s.poll_transmit(2000, &c).map(|p| (p.offset, p.retx))).collect();
        assert_eq!(got, vec![(4000, true), (5000, false), (6000, false)]);
    }

    #[test]
    fn a_resend_far_from_a_pending_range_replaces_it() {
        let (c, mut s) = (cfg(), HostSender::default());
        s.add(0, &c, 1, 5000);
        assert_eq!(drain(&mut s, &c).len(), 3, "bytes 0..3000");
        assert_eq!(s.on_timer(1000, &c, 1), SenderTimer::Repeat);
        // Joined with the repeat of bytes 0..1000, bytes 0..3000 would all go again.
        let far = Control::Resend {
            msg: 1,
            from: 2000,
            to: 3000,
        };
        s.on_control(1001, far);
        assert_eq!(drain(&mut s, &c), vec![(1, 2000, 1)]);
    }
}
