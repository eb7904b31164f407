//! pFabric's switch queue (Alizadeh et al., SIGCOMM 2013, §4.1), as a sans-IO state
//! machine. Every packet carries a priority, its flow's remaining bytes (lower is more
//! urgent; pFabric's senders stamp it, ACKs carry 0). The queue is small and:
//!
//! - **dequeues by priority**: it finds the most urgent packet (the first in arrival
//!   order on a tie) and sends the *earliest* waiting packet of that packet's flow, so a
//!   flow's packets keep their order (the paper's starvation prevention);
//! - **drops by priority**: an arrival that would overflow the buffer joins it, and the
//!   least urgent packet whose removal brings the buffer back within its limit is
//!   dropped (the last in arrival order on a tie; the arrival itself if no packet
//!   qualifies).
//!
//! These are the rules of the pFabric ns-2 queue as the Homa authors ran it (`Queue/
//! DropTail` with `drop_prio_`, `deque_prio_` and `keep_order_`, HomaSimulation's
//! `ns2_Simulations`, `docs/references.md`). Packets are held in arrival order; the
//! queue is a buffer of a few packets, so a scan per decision is the whole cost.

use super::admission::{Admission, Fate};
use super::packet::Desc;

/// A waiting packet: its descriptor, its priority (lower first) and its flow (a
/// connection and direction: the packets that must keep their order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    pub d: Desc,
    pub priority: u64,
    pub flow: u32,
}

/// The queue's packets, in arrival order.
#[derive(Clone, Debug, Default)]
pub struct PfabricQueue {
    slots: Vec<Slot>,
}

impl PfabricQueue {
    pub fn new() -> PfabricQueue {
        PfabricQueue::default()
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// An arrival, with the queue's occupancy before it (`packets`, `bytes`) and its
    /// limits: whether it waits, and which packet is dropped to keep within the limits,
    /// if any (the arrival, or a waiting packet less urgent than it).
    pub fn arrive(
        &mut self,
        s: Slot,
        (packets, bytes): (u64, u64),
        (limit_packets, limit_bytes): (u64, u64),
    ) -> Admission {
        self.slots.push(s);
        let packets = packets + 1;
        let bytes = bytes + s.d.wire as u64;
        if packets <= limit_packets && bytes <= limit_bytes {
            return Admission::of(s.d, Fate::Queued);
        }
        // The least urgent packet whose departure brings the buffer within its limits
        // (the later on a tie); the arrival if none does.
        let fits =
            |x: &Slot| packets - 1 <= limit_packets && bytes - x.d.wire as u64 <= limit_bytes;
        let mut victim = self.slots.len() - 1;
        let mut worst = None;
        for (i, x) in self.slots.iter().enumerate() {
            if fits(x) && worst.is_none_or(|w| x.priority >= w) {
                victim = i;
                worst = Some(x.priority);
            }
        }
        let dropped = self.slots.remove(victim).d;
        if dropped.pkt == s.d.pkt {
            Admission::of(s.d, Fate::Dropped)
        } else {
            Admission::evicting(s.d, (dropped, Fate::Dropped), dropped.wire)
        }
    }

    /// The next packet to send: the earliest of the flow of the most urgent packet.
    pub fn dequeue(&mut self) -> Option<Desc> {
        let (first, urgent) = self
            .slots
            .iter()
            .enumerate()
            .min_by_key(|&(i, x)| (x.priority, i))?;
        let flow = urgent.flow;
        let at = self.slots[..first]
            .iter()
            .position(|x| x.flow == flow)
            .unwrap_or(first);
        Some(self.slots.remove(at).d)
    }

    /// The ids of the waiting packets.
    pub fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.slots.iter().map(|x| x.d.pkt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot(pkt: u32, wire: u16, priority: u64, flow: u32) -> Slot {
        Slot {
            d: Desc {
                pkt,
                wire,
                ..Desc::default()
            },
            priority,
            flow,
        }
    }

    /// Feeds arrivals into a queue of `limits` (packets, bytes), tracking occupancy as
    /// `OutQueue` does; returns the ids dropped.
    fn feed(q: &mut PfabricQueue, limits: (u64, u64), arrivals: &[Slot]) -> Vec<u32> {
        let mut dropped = Vec::new();
        for &s in arrivals {
            let bytes = q.slots.iter().map(|x| x.d.wire as u64).sum();
            let a = q.arrive(s, (q.len() as u64, bytes), limits);
            if !a.arriving.1.waits() {
                dropped.push(a.arriving.0.pkt);
            }
            if let Some((d, _)) = a.evicted {
                dropped.push(d.pkt);
            }
        }
        dropped
    }

    fn drain(q: &mut PfabricQueue) -> Vec<u32> {
        std::iter::from_fn(|| q.dequeue()).map(|d| d.pkt).collect()
    }

    #[test]
    fn the_most_urgent_flow_goes_first_and_the_first_on_a_tie() {
        let mut q = PfabricQueue::new();
        let none = feed(
            &mut q,
            (100, u64::MAX),
            &[
                slot(1, 1500, 900, 1),
                slot(2, 1500, 300, 2),
                slot(3, 1500, 300, 3),
                slot(4, 40, 0, 4),
            ],
        );
        assert!(none.is_empty());
        // The ACK (0), then the two flows of 300 in arrival order, then 900.
        assert_eq!(drain(&mut q), vec![4, 2, 3, 1]);
    }

    #[test]
    fn a_flow_keeps_its_order_even_when_a_later_packet_is_more_urgent() {
        // A flow's retransmission carries a lower priority than the packets it sent
        // before (fewer bytes remain); the queue still sends that flow's earliest packet.
        let mut q = PfabricQueue::new();
        feed(
            &mut q,
            (100, u64::MAX),
            &[
                slot(1, 1500, 5000, 7),
                slot(2, 1500, 800, 8),
                slot(3, 1500, 4000, 7),
                slot(4, 1500, 100, 7),
            ],
        );
        // Flow 7 holds the most urgent packet (100): its earliest (1) goes, then 3, then
        // 4 (each time flow 7 still has the most urgent), then flow 8's.
        assert_eq!(drain(&mut q), vec![1, 3, 4, 2]);
    }

    #[test]
    fn an_urgent_arrival_at_a_full_buffer_drops_the_least_urgent_packet() {
        let mut q = PfabricQueue::new();
        let limits = (u64::MAX, 4500);
        let dropped = feed(
            &mut q,
            limits,
            &[
                slot(1, 1500, 700, 1),
                slot(2, 1500, 9000, 2),
                slot(3, 1500, 500, 3),
                slot(4, 1500, 100, 4),
            ],
        );
        assert_eq!(dropped, vec![2]);
        assert_eq!(drain(&mut q), vec![4, 3, 1]);
    }

    #[test]
    fn a_least_urgent_arrival_at_a_full_buffer_is_itself_dropped() {
        let mut q = PfabricQueue::new();
        let dropped = feed(
            &mut q,
            (3, u64::MAX),
            &[
                slot(1, 1500, 700, 1),
                slot(2, 1500, 800, 2),
                slot(3, 1500, 500, 3),
                slot(4, 1500, 900, 4),
            ],
        );
        assert_eq!(dropped, vec![4]);
        // On a tie with a waiting packet the later one, the arrival, goes.
        let dropped = feed(&mut q, (3, u64::MAX), &[slot(5, 1500, 800, 5)]);
        assert_eq!(dropped, vec![5]);
        assert_eq!(drain(&mut q), vec![3, 1, 2]);
    }

    #[test]
    fn only_a_packet_whose_removal_makes_room_is_dropped() {
        // A 1,500-byte arrival at 1,540 bytes of a 2,999-byte buffer: the least urgent
        // packet is a 40-byte one whose removal would not make room, so the least urgent
        // full-sized packet goes.
        let mut q = PfabricQueue::new();
        let dropped = feed(
            &mut q,
            (u64::MAX, 2999),
            &[
                slot(1, 1500, 100, 1),
                slot(2, 40, 9999, 2),
                slot(3, 1500, 50, 3),
            ],
        );
        assert_eq!(dropped, vec![1]);
        // No waiting packet's removal makes room for this one: it goes itself, urgent
        // as it is.
        let mut q = PfabricQueue::new();
        let dropped = feed(
            &mut q,
            (u64::MAX, 1000),
            &[
                slot(1, 40, 9999, 1),
                slot(2, 40, 9999, 2),
                slot(3, 1500, 1, 3),
            ],
        );
        assert_eq!(dropped, vec![3]);
        assert_eq!(drain(&mut q), vec![1, 2]);
    }
}
