//! pFabric's engine glue: an arrival at a pFabric queue (`net::pfabric`) reads the
//! packet's priority and flow from its body (pFabric's senders stamp the priority in the
//! data-sequence slot, which single-path connections do not use otherwise; ACKs carry 0),
//! and settles the packet the queue dropped, the arrival or a less urgent one that
//! waited. Nothing here runs without a pFabric queue: the per-packet path tests one flag
//! (`OutQueue::holds_aside`), shared with NDP's trimming queues.

use super::Sim;
use crate::net::packet::Desc;
use crate::net::pfabric::Slot;

impl Sim {
    /// A packet reaches port `port_id`'s pFabric queue (the link is busy or packets wait).
    #[inline(never)]
    pub(super) fn enqueue_pfabric(&mut self, port_id: u32, d: Desc) {
        let p = self.pkts.get(d.pkt);
        let slot = Slot {
            d,
            priority: p.dsn,
            flow: p.conn << 1 | p.dir as u32,
        };
        let now = self.now;
        let a = self.net.ports[port_id as usize]
            .queue
            .arrive_pfabric(now, slot);
        self.settle_admission(port_id, a);
    }
}
