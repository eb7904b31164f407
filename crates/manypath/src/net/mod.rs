//! The network: packets and their arena, output queues, ports (queue + link), nodes,
//! routing, and topology builders.
pub mod admission;
pub mod bcube;
pub mod custom;
pub mod ecn_red;
pub mod fabric;
pub mod faults;
pub mod hash;
pub mod int;
pub mod jitter;
pub mod links;
pub mod network;
pub mod packet;
pub mod pfabric;
pub mod pfc;
pub mod queue;
pub mod red;
pub mod rwndq;
pub mod shared_buffer;
pub mod topology;
pub mod trim;

pub use network::{Network, NodeKind, Port};
pub use packet::{Ecn, Packet, PacketArena, PacketId};
pub use queue::{OutQueue, QueueConfig};
pub use topology::{Topology, TopologyKind};
