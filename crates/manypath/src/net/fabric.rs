//! The network's side of a lossless fabric: each switch's shared buffer
//! (`net::shared_buffer`) and PFC ingress accounting (`net::pfc`), and per port what
//! they need: its queues' numbers in its switch's buffer, whether PFC runs on its link,
//! the ingress port of each packet waiting in it, and its PFC counters.
//!
//! Built only when `network.buffer` or `network.pfc` is set; the simulator then sends
//! every packet through `Sim::enqueue_fabric` and `Sim::tx_done_fabric`, and no switch
//! port fixes departures at enqueue (a departure must release buffer and ingress bytes
//! as it happens).

use super::network::{Network, NodeKind};
use super::pfc::{default_headroom, PfcConfig, PfcIngress, CLASSES};
use super::shared_buffer::SharedBuffer;
use crate::time::SimTime;
use std::collections::VecDeque;

/// No port: a packet that came from a host's own transport, or in over a link without
/// PFC.
pub const NO_PORT: u32 = u32::MAX;

/// A switch's shared buffer with its occupancy integral.
pub struct SwitchBuffer {
    pub sb: SharedBuffer,
    /// Integral of the occupancy over time (byte·ps) up to `last`.
    pub area: u128,
    last: SimTime,
}

impl SwitchBuffer {
    /// Brings the occupancy integral up to `now`; call before each change.
    #[inline]
    pub fn account(&mut self, now: SimTime) {
        self.area += self.sb.total() as u128 * (now - self.last) as u128;
        self.last = now;
    }
}

/// What a port needs of the fabric, and its PFC counters.
#[derive(Default)]
pub struct FabricPort {
    /// This port's number among its owner's ports: its ingress number there and, times
    /// `CLASSES`, its first queue in its owner's shared buffer.
    pub local: u32,
    /// PFC runs on this port's link: its owner pauses the peer through it, and it
    /// obeys the peer's pauses.
    pub pfc: bool,
    /// Per FIFO of the port's queue, the ingress port (`NO_PORT`: none charged) of each
    /// waiting packet, in order.
    pub ingress: [VecDeque<u32>; CLASSES],
    /// PAUSE (XOFF) and RESUME (XON) frames this port's owner sent on it, per class.
    pub xoff_sent: [u64; CLASSES],
    pub xon_sent: [u64; CLASSES],
    /// PAUSE frames the port received, per class.
    pub xoff_received: [u64; CLASSES],
    /// Since when each class has been paused, and for how long it was in all.
    pub paused_since: [SimTime; CLASSES],
    pub paused_time: [SimTime; CLASSES],
    /// When the last PFC frame sent on this port has left it: the next one starts no
    /// earlier, so frames on a link arrive in the order they were sent.
    pub frame_free: SimTime,
}

#[derive(Default)]
pub struct Fabric {
    /// Per node: the switch's shared buffer (`None`: hosts, or no `network.buffer`).
    pub buffers: Vec<Option<SwitchBuffer>>,
    /// Per node: the switch's PFC ingress accounting.
    pub pfc: Vec<Option<PfcIngress>>,
    pub ports: Vec<FabricPort>,
    /// PFC runs on some link.
    pub pfc_on: bool,
}

/// PFC's settings, headroom (`None`: per port from its link) and the largest packet.
pub struct PfcSetup {
    pub cfg: PfcConfig,
    pub headroom: Option<u64>,
    pub mtu: u64,
}

impl Fabric {
    /// The fabric of `net`: per node (`node_buffers`) its buffer, (bytes, α per class) (`None`: hosts, and
    /// switches without one), and PFC on the links of the tiers `pfc_tiers` names.
    pub fn build(
        net: &Network,
        node_buffers: &[Option<(u64, [f64; CLASSES])>],
        pfc: Option<PfcSetup>,
        pfc_tiers: &[bool],
    ) -> Fabric {
        if node_buffers.iter().all(|b| b.is_none()) && pfc.is_none() {
            return Fabric::default();
        }
        let n = net.kinds.len();
        let mut ports: Vec<FabricPort> = Vec::with_capacity(net.ports.len());
        for node in 0..n as u32 {
            for (k, p) in net.ports_of(node).enumerate() {
                let tier = net.ports[p as usize].tier as usize;
                ports.push(FabricPort {
                    local: k as u32,
                    pfc: pfc.is_some() && pfc_tiers[tier],
                    ..FabricPort::default()
                });
            }
        }
        let switch = |node: usize| net.kinds[node] == NodeKind::Switch;
        let buffers = (0..n)
            .map(|node| {
                let (bytes, alpha) = node_buffers[node]?;
                if !switch(node) {
                    return None;
                }
                let queues = net.ports_of(node as u32).len() * CLASSES;
                let classes = (0..queues).map(|q| (q % CLASSES) as u8).collect();
                Some(SwitchBuffer {
                    sb: SharedBuffer::new(bytes, alpha.to_vec(), classes),
                    area: 0,
                    last: 0,
                })
            })
            .collect();
        let pfc_on = pfc.is_some() && ports.iter().any(|p| p.pfc);
        let pfc = (0..n)
            .map(|node| {
                let s = pfc.as_ref()?;
                let (bytes, _) = node_buffers[node]?;
                if !switch(node) {
                    return None;
                }
                let headroom = net
                    .ports_of(node as u32)
                    .map(|p| {
                        let port = &net.ports[p as usize];
                        s.headroom.unwrap_or_else(|| {
                            default_headroom(port.rate.bits_per_sec(), port.delay, s.mtu)
                        })
                    })
                    .collect();
                Some(PfcIngress::new(s.cfg, bytes, headroom))
            })
            .collect();
        Fabric {
            buffers,
            pfc,
            ports,
            pfc_on,
        }
    }

    /// Closes the buffers' occupancy integrals and the time paused of the classes still
    /// paused at the end of the run.
    pub fn finish(&mut self, net: &Network, now: SimTime) {
        for b in self.buffers.iter_mut().flatten() {
            b.account(now);
        }
        for (p, f) in self.ports.iter_mut().enumerate() {
            for c in 0..CLASSES {
                if net.ports[p].paused & (1 << c) != 0 {
                    f.paused_time[c] += now - f.paused_since[c];
                    f.paused_since[c] = now;
                }
            }
        }
    }
}
