//! Packets and the arena they live in. A packet is a plain value of fixed size; it travels
//! through the simulation as a `PacketId` (an index), so nothing is allocated per packet
//! once the arena has grown to the run's peak number of packets in flight.

use super::int::IntStack;
use crate::engine::queue::Payload;

pub type PacketId = u32;

pub mod flags {
    pub const SYN: u8 = 0x01;
    pub const FIN: u8 = 0x02;
    pub const RST: u8 = 0x04;
    pub const ACK: u8 = 0x08;
    pub const ECE: u8 = 0x10;
    pub const CWR: u8 = 0x20;
    /// The packet carries SACK blocks (in the arena's extension slot).
    pub const SACK: u8 = 0x40;
    /// A TCP-IR coded packet; its protected range is in the extension slot.
    pub const CODED: u8 = 0x80;
}

/// The rarely used part of a packet's header, kept beside the arena's packets so the
/// common packet stays small: only packets flagged `SACK` or `CODED` write or read it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacketExt {
    pub sack: [(u32, u32); 3],
    pub sack_n: u8,
    pub coded_len: u32,
}

/// The ECN codepoint of the IP header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(u8)]
pub enum Ecn {
    #[default]
    NotEct = 0,
    Ect = 1,
    Ce = 3,
}

/// Direction of a packet within its connection: data from the client (the flow's
/// source) to the server, or back.
pub const TO_SERVER: u8 = 0;
pub const TO_CLIENT: u8 = 1;

/// A packet's body: what the destination host reads (and RWNDQ switches rewrite). What
/// the fabric reads (destination, flow hash, wire size, ECN codepoint, class) travels in
/// its descriptor (`Desc`), and its addresses and ports are its connection's. One cache
/// line (aligned), so a delivery reads one line.
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(64))]
pub struct Packet {
    /// Byte sequence number of the first payload byte (or of the FIN).
    pub seq: u64,
    /// Cumulative acknowledgment: the next byte expected.
    pub ack: u64,
    /// Sender's timestamp (ps), echoed back for RTT measurement.
    pub ts: u64,
    pub ts_echo: u64,
    /// Multipath: data sequence number and data-level acknowledgment (0 for TCP).
    pub dsn: u64,
    pub data_ack: u64,
    /// Connection index: the simulator's stand-in for 5-tuple demultiplexing.
    pub conn: u32,
    /// Advertised receive window in bytes.
    pub rwnd: u32,
    pub payload: u32,
    pub flags: u8,
    /// `TO_SERVER` or `TO_CLIENT`.
    pub dir: u8,
    /// Subflow of a multipath connection (0 for TCP).
    pub sub: u8,
}

impl Packet {
    #[inline]
    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
}

/// A bit of `Desc::class`: the packet follows a pinned route, whose id
/// (`Network::pinned_port`) it carries in `hash` instead of the flow hash. The priority is
/// the low bits of the byte (`Desc::priority`).
pub const PINNED: u8 = 0x80;

/// A bit of `Desc::class`: switch ports stamp an in-band telemetry record on the packet as
/// it leaves them (`PacketArena::int_mut`; HPCC's data packets).
pub const INT: u8 = 0x40;

/// A bit of `Desc::class`: the packet is NDP's (`transport/ndp/`), so a trimming queue
/// (`net::trim`) cuts its data to the header instead of dropping it, and puts its headers
/// and control packets in the header queue.
pub const NDP: u8 = 0x20;

/// The bits of `Desc::class` that hold the priority.
pub const PRIORITY_MASK: u8 = !(PINNED | INT | NDP);

/// The most strict-priority levels a queue can have: the priorities the class byte's
/// five priority bits name (0–31). Homa's levels are switch levels, so the same bound.
pub const MAX_PRIORITY_LEVELS: u8 = PRIORITY_MASK + 1;

/// What switches read of a packet, carried in its events and queue slots so that a hop
/// through the fabric never touches the packet body (which stays cold in the arena until
/// the destination host reads it). 16 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Desc {
    pub pkt: PacketId,
    pub dst: u32,
    /// The flow hash ECMP reads or, with `PINNED` set in `class`, the pinned route's id.
    pub hash: u32,
    pub wire: u16,
    pub ecn: Ecn,
    /// Strict-priority class, with the `PINNED` bit.
    pub class: u8,
}

impl Desc {
    /// The strict-priority class without the `PINNED`, `INT` and `NDP` bits.
    #[inline]
    pub fn priority(&self) -> u8 {
        self.class & PRIORITY_MASK
    }

    /// Switch ports stamp an INT record on this packet.
    #[inline]
    pub fn has_int(&self) -> bool {
        self.class & INT != 0
    }

    #[inline]
    pub fn pinned(&self) -> bool {
        self.class & PINNED != 0
    }
}

const _: () = assert!(std::mem::size_of::<Desc>() == 16);

/// Events carry a packet's descriptor, or their second operand in its `pkt`.
impl Payload for Desc {
    #[inline]
    fn operand(b: u32) -> Desc {
        Desc {
            pkt: b,
            ..Desc::default()
        }
    }

    #[inline]
    fn b(&self) -> u32 {
        self.pkt
    }
}

/// A slab of packets with a free list.
#[derive(Default)]
pub struct PacketArena {
    slots: Vec<Packet>,
    /// Extension slots, index for index with `slots`.
    exts: Vec<PacketExt>,
    /// INT records, index for index with `slots`; grown only when a packet with INT is
    /// sent.
    ints: Vec<IntStack>,
    free: Vec<PacketId>,
    live: u64,
    created: u64,
}

impl PacketArena {
    pub fn new() -> PacketArena {
        PacketArena {
            slots: Vec::with_capacity(1 << 14),
            exts: Vec::new(),
            ints: Vec::new(),
            free: Vec::with_capacity(1 << 14),
            live: 0,
            created: 0,
        }
    }

    /// Takes in a packet another arena created (a run over several threads hands a
    /// packet crossing between partitions to the receiving one's arena): alive here,
    /// but not created again.
    pub fn adopt(&mut self, p: Packet) -> PacketId {
        let id = self.alloc(p);
        self.created -= 1;
        id
    }

    #[inline]
    pub fn alloc(&mut self, p: Packet) -> PacketId {
        self.live += 1;
        self.created += 1;
        match self.free.pop() {
            Some(id) => {
                self.slots[id as usize] = p;
                id
            }
            None => {
                self.slots.push(p);
                (self.slots.len() - 1) as PacketId
            }
        }
    }

    /// Sets packet `id`'s extension (for packets flagged `SACK` or `CODED`).
    pub fn set_ext(&mut self, id: PacketId, ext: PacketExt) {
        let i = id as usize;
        if self.exts.len() <= i {
            self.exts.resize(self.slots.len(), PacketExt::default());
        }
        self.exts[i] = ext;
    }

    /// Packet `id`'s extension, as last set.
    pub fn ext(&self, id: PacketId) -> PacketExt {
        self.exts.get(id as usize).copied().unwrap_or_default()
    }

    /// Clears packet `id`'s INT records (when a packet with INT is sent).
    pub fn clear_int(&mut self, id: PacketId) {
        let i = id as usize;
        if self.ints.len() <= i {
            self.ints.resize(self.slots.len(), IntStack::default());
        }
        self.ints[i].n = 0;
    }

    /// Packet `id`'s INT records, for a switch port to stamp one (packets whose
    /// descriptor has `INT`, after `clear_int`).
    #[inline]
    pub fn int_mut(&mut self, id: PacketId) -> &mut IntStack {
        &mut self.ints[id as usize]
    }

    /// Packet `id`'s INT records (packets whose descriptor has `INT`).
    pub fn int(&self, id: PacketId) -> &IntStack {
        &self.ints[id as usize]
    }

    #[inline]
    pub fn free(&mut self, id: PacketId) {
        self.live -= 1;
        self.free.push(id);
    }

    #[inline]
    pub fn get(&self, id: PacketId) -> &Packet {
        &self.slots[id as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.slots[id as usize]
    }

    /// Packets allocated and not yet freed.
    pub fn live(&self) -> u64 {
        self.live
    }

    /// Packets ever allocated.
    pub fn created(&self) -> u64 {
        self.created
    }

    /// The arena's high-water mark in packets.
    pub fn capacity_used(&self) -> usize {
        self.slots.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_stays_small() {
        assert_eq!(std::mem::size_of::<Packet>(), 64, "one cache line");
        assert_eq!(std::mem::align_of::<Packet>(), 64, "aligned to its line");
    }

    #[test]
    fn arena_reuses_slots() {
        let mut a = PacketArena::new();
        let x = a.alloc(Packet::default());
        a.free(x);
        let y = a.alloc(Packet {
            seq: 9,
            ..Packet::default()
        });
        assert_eq!(x, y);
        assert_eq!(a.get(y).seq, 9);
        assert_eq!(a.live(), 1);
        assert_eq!(a.created(), 2);
    }
}
