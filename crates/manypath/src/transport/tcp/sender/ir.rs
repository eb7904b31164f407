//! TCP Instant Recovery (TCP-IR), on when `LossRecovery::tcp_ir` is: new segments are
//! grouped into coding blocks of up to `MAX_BLOCK` segments; a block closes half an RTT
//! after its first segment (or at a gap in the sequence, or when full), and a quarter
//! RTT later an XOR-coded packet of it goes out, from which the receiver rebuilds one
//! lost segment of the block (`receiver.rs`). Blocks acknowledged meanwhile need none.

use std::collections::VecDeque;

use super::{earliest, SenderState, TcpSender, NO_TIMER};
use crate::net::packet::flags;
use crate::time::SimTime;
use crate::transport::tcp::Segment;

/// The largest coding block, in segments.
const MAX_BLOCK: u32 = 16;

/// The coding block open for new segments.
#[derive(Clone, Copy, Debug)]
struct Open {
    start: u64,
    end: u64,
    segs: u32,
    /// The block closes at this time (half an RTT after its first segment).
    close_at: SimTime,
}

/// A closed block whose coded packet goes out at `due`.
#[derive(Clone, Copy, Debug)]
struct Block {
    start: u64,
    end: u64,
    due: SimTime,
}

/// The open block and the closed ones waiting for their coded packet.
#[derive(Clone, Debug, Default)]
pub(super) struct Ir {
    open: Option<Open>,
    pending: VecDeque<Block>,
    /// The first pending block's coded packet is due: `poll_transmit` sends it (the
    /// timer no longer reports its deadline, which has passed).
    due: bool,
}

impl Ir {
    /// The coder's state; `on`: TCP-IR is in use (room is made for a few blocks).
    pub(super) fn new(on: bool) -> Ir {
        Ir {
            open: None,
            pending: if on {
                VecDeque::with_capacity(8)
            } else {
                VecDeque::new()
            },
            due: false,
        }
    }

    /// The earliest of the open block's closing and the next coded packet, unless that
    /// one is already due (`NO_TIMER`: neither).
    pub(super) fn deadline(&self) -> SimTime {
        let mut d = NO_TIMER;
        if let Some(b) = &self.open {
            d = earliest(d, b.close_at);
        }
        if let Some(b) = self.pending.front() {
            if !self.due {
                d = earliest(d, b.due);
            }
        }
        d
    }

    /// Adds the new segment [seq, end), sent at `now`, to the open block, closing the
    /// block at its time limit, at a gap, or when it is full. `srtt` sets the times.
    pub(super) fn add(&mut self, now: SimTime, seq: u64, end: u64, srtt: SimTime) {
        if let Some(b) = self.open {
            if now >= b.close_at {
                self.close(b.close_at, srtt);
            } else if b.end != seq {
                self.close(now, srtt);
            }
        }
        let b = self.open.get_or_insert(Open {
            start: seq,
            end: seq,
            segs: 0,
            close_at: now + srtt / 2,
        });
        b.end = end;
        b.segs += 1;
        if b.segs >= MAX_BLOCK {
            self.close(now, srtt);
        }
    }

    /// Closes the open block at `at`; its coded packet is due a quarter RTT later.
    fn close(&mut self, at: SimTime, srtt: SimTime) {
        if let Some(b) = self.open.take() {
            self.pending.push_back(Block {
                start: b.start,
                end: b.end,
                due: at + srtt / 4,
            });
        }
    }

    /// The range [start, end) of a block whose coded packet is due at `now` and that is
    /// not wholly acknowledged (below `una`); the block is then done.
    pub(super) fn next_due(&mut self, now: SimTime, una: u64, srtt: SimTime) -> Option<(u64, u64)> {
        if let Some(b) = self.open {
            if now >= b.close_at {
                self.close(b.close_at, srtt);
            }
        }
        while let Some(&b) = self.pending.front() {
            if b.due > now {
                self.due = false;
                return None;
            }
            self.pending.pop_front();
            if una >= b.end {
                continue;
            }
            return Some((b.start, b.end));
        }
        self.due = false;
        None
    }

    /// The timer at `now`: closes the open block at its time and notes a due coded
    /// packet (forgetting everything once the connection is no longer established).
    pub(super) fn on_timer(&mut self, now: SimTime, established: bool, una: u64, srtt: SimTime) {
        if !established {
            self.open = None;
            self.pending.clear();
        }
        if let Some(b) = self.open {
            if now >= b.close_at {
                self.close(b.close_at, srtt);
            }
        }
        // Coded packets are sent by `poll_transmit`; blocks acknowledged meanwhile need none.
        while let Some(b) = self.pending.front() {
            if una >= b.end {
                self.pending.pop_front();
            } else {
                self.due = b.due <= now;
                break;
            }
        }
    }
}

/// The coder as the sender runs it.
impl TcpSender {
    /// The RTT that times the blocks: the smoothed one, or the initial RTO before any.
    fn ir_srtt(&self) -> SimTime {
        self.rtt.srtt().unwrap_or(self.x.cfg.rto_initial)
    }

    /// The new segment [seq, end) is being sent.
    pub(super) fn ir_add(&mut self, now: SimTime, seq: u64, end: u64) {
        let srtt = self.ir_srtt();
        self.x.ir.add(now, seq, end, srtt);
    }

    pub(super) fn ir_timer(&mut self, now: SimTime) {
        let srtt = self.ir_srtt();
        let established = self.state == SenderState::Established;
        self.x.ir.on_timer(now, established, self.snd_una, srtt);
    }

    /// A coded packet whose time has come, for a block not yet wholly acknowledged.
    pub(super) fn ir_coded_due(&mut self, now: SimTime) -> Option<Segment> {
        let srtt = self.ir_srtt();
        let (start, end) = self.x.ir.next_due(now, self.snd_una, srtt)?;
        self.x.stats.ir_coded += 1;
        // A FIN riding on the block's last segment is protected too.
        let fin = if self.fin_rides(start, end - start) {
            flags::FIN
        } else {
            0
        };
        Some(Segment {
            seq: start,
            len: self.mss,
            flags: flags::ACK | flags::CODED | fin,
            ecn: self.ecn,
            ts: now,
            rwnd: self.rcv_wnd,
            coded_len: (end - start) as u32,
            ..Segment::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::PS_PER_US;
    use crate::transport::tcp::{LossRecovery, TcpConfig};
    use crate::transport::testing::{self, first_sends};

    /// The one-way delay of the bench's links.
    const D: SimTime = 10 * PS_PER_US;

    #[test]
    fn blocks_close_at_a_gap_when_full_or_in_time() {
        let mut ir = Ir::new(true);
        let srtt = 40;
        ir.add(0, 0, 1000, srtt);
        ir.add(5, 1000, 2000, srtt);
        assert_eq!(
            ir.deadline(),
            20,
            "the open block closes half an RTT after it opened"
        );
        ir.add(6, 5000, 6000, srtt);
        assert_eq!(
            ir.deadline(),
            16,
            "the gap closed it: coded a quarter RTT later"
        );
        assert_eq!(ir.next_due(15, 0, srtt), None);
        assert_eq!(ir.next_due(16, 0, srtt), Some((0, 2000)));
        for k in 0..MAX_BLOCK as u64 {
            ir.add(7, 6000 + 1000 * k, 7000 + 1000 * k, srtt);
        }
        // The open block took fifteen of them: full, closed at once; the last opened one.
        assert_eq!(ir.deadline(), 17);
        assert_eq!(ir.next_due(30, 0, srtt), Some((5000, 21_000)));
        ir.add(50, 22_000, 23_000, srtt);
        ir.on_timer(70, true, 0, srtt);
        assert!(ir.due);
        assert_eq!(
            ir.deadline(),
            NO_TIMER,
            "the due packet waits for the next poll"
        );
        assert_eq!(ir.next_due(80, 23_000, srtt), None, "acknowledged: no need");
    }

    /// A block of eight segments, coded RTT/2 + RTT/4 after its first one. With one
    /// segment lost the receiver rebuilds it; with two it cannot. (Segment 5 is lost, so
    /// that only two dupacks come back before the coded packet arrives.)
    #[test]
    fn tcp_ir_recovers_one_lost_segment_per_block_but_not_two() {
        for lost in [vec![5000], vec![5000, 7000]] {
            let c = TcpConfig {
                recovery: LossRecovery {
                    tcp_ir: true,
                    sack: true,
                    ..LossRecovery::default()
                },
                ..testing::cfg()
            };
            let mut p = testing::tcp(c, 8000, D);
            p.up.lose(first_sends(&lost));
            p.establish();
            let srtt = p.client.rtt.srtt().unwrap();
            p.flush();
            assert_eq!(p.up.seqs(..).len(), 8);
            let close = p.client.timer_deadline().unwrap();
            assert_eq!(close, 2 * D + srtt / 2, "the block closes half an RTT on");
            let due = close + srtt / 4;
            p.run_until(due + D);
            let coded: Vec<_> =
                p.up.log
                    .iter()
                    .filter(|s| s.seg.has(flags::CODED))
                    .collect();
            assert_eq!(coded.len(), 1);
            assert_eq!(coded[0].at, due);
            assert_eq!((coded[0].seg.seq, coded[0].seg.coded_len), (0, 8000));
            assert_eq!(p.client.stats().ir_coded, 1);
            assert_eq!(
                p.down.log.last().unwrap().at,
                due + D,
                "acknowledged at once"
            );
            if lost.len() == 1 {
                assert_eq!(p.server.ir_recovered, 1);
                assert_eq!(p.server.bytes_received(), 8000);
                assert_eq!(p.finish(), due + 2 * D);
                let retx = p.client.stats().packets_retx;
                assert_eq!(retx, 0, "recovered without retransmission");
            } else {
                assert_eq!(p.server.ir_recovered, 0);
                assert_eq!(p.server.bytes_received(), 5000);
            }
        }
    }
}
