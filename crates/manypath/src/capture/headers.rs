//! The bytes of a captured frame's headers: Ethernet, IPv4 (with the ECN codepoint) and
//! the transport's header — TCP with its options (MSS, window scale, SACK, timestamps,
//! MPTCP's MP_CAPABLE, MP_JOIN and DSS), RoCEv2's BTH over UDP 4791, or NDP's and
//! Homa's headers over UDP as `docs/traces.md` describes them. Payloads are zeros and
//! are not written: the frame's full length is returned for the pcapng block. PFC's
//! PAUSE and RESUME are IEEE 802.1Qbb MAC control frames (`write_pfc`), written whole
//! with their FCS.
//!
//! The address plan: host h is 10.0.0.0 + h + 1 (host 0: 10.0.0.1), node n's MAC is
//! 02:00 followed by n in four bytes; a TCP connection's client port is
//! `CLIENT_PORT_BASE` + (connection × `MAX_SUBFLOW_PORTS` + subflow) mod
//! `CLIENT_PORT_SPAN`, its server port `SERVER_PORT`.

use crate::net::packet::Ecn;

pub const SERVER_PORT: u16 = 5001;
pub const CLIENT_PORT_BASE: u16 = 1024;
pub const CLIENT_PORT_SPAN: u32 = 64_000;
/// Client ports a connection's subflows take (consecutive, as `transport::mptcp` says).
pub const MAX_SUBFLOW_PORTS: u32 = 16;
/// RoCEv2's UDP destination port (IANA).
pub const ROCE_PORT: u16 = 4791;
/// UDP ports of NDP's and Homa's headers (no IANA assignment; in the dynamic range, where Wireshark
/// has no dissector (7000–7009 are AFS), see `docs/traces.md`),
/// source and destination both: a client port such as 1024 would make Wireshark pick
/// that port's dissector (it tries the lower port first).
pub const NDP_PORT: u16 = 61000;
pub const HOMA_PORT: u16 = 61001;
/// The window scale shift of every TCP connection's SYN and SYN-ACK (the advertised
/// window is rwnd >> 7 after the handshake).
pub const WINDOW_SHIFT: u8 = 7;

const ETH_HEADER: usize = 14;
const IPV4_HEADER: usize = 20;
const ETHERTYPE_IPV4: u16 = 0x0800;
const PROTO_TCP: u8 = 6;
const PROTO_UDP: u8 = 17;
const TTL: u8 = 64;
/// TCP option kinds.
const OPT_NOP: u8 = 1;
const OPT_MSS: u8 = 2;
const OPT_WSCALE: u8 = 3;
const OPT_SACK_OK: u8 = 4;
const OPT_SACK: u8 = 5;
const OPT_TIMESTAMP: u8 = 8;
const OPT_MPTCP: u8 = 30;
const MAX_TCP_OPTIONS: usize = 40;

/// TCP's header flags on the wire.
pub mod tcp_flags {
    pub const FIN: u8 = 0x01;
    pub const SYN: u8 = 0x02;
    pub const RST: u8 = 0x04;
    pub const PSH: u8 = 0x08;
    pub const ACK: u8 = 0x10;
    pub const ECE: u8 = 0x40;
    pub const CWR: u8 = 0x80;
}

/// Host h's IPv4 address.
pub fn host_ip(h: u32) -> u32 {
    0x0A00_0000 + h + 1
}

/// Node n's MAC address (locally administered).
pub fn node_mac(n: u32) -> [u8; 6] {
    let b = n.to_be_bytes();
    [0x02, 0x00, b[0], b[1], b[2], b[3]]
}

/// A connection's client port for subflow `sub`.
pub fn client_port(conn: u32, sub: u8) -> u16 {
    let i = (conn as u64 * MAX_SUBFLOW_PORTS as u64 + sub as u64) % CLIENT_PORT_SPAN as u64;
    CLIENT_PORT_BASE + i as u16
}

/// An MPTCP option (RFC 8684) on a subflow's segment.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mptcp {
    /// MP_CAPABLE (version 1, RFC 8684 §3.1): on the first subflow's SYN (no key), its
    /// SYN-ACK (the server's key as `key`), and the client's third ACK (its own key as
    /// `key`, the server's as `peer_key`) — which, when it carries the connection's first
    /// data, adds that data's data-level length (`data_len`), the implicit mapping of the
    /// first data sequence number.
    Capable {
        key: Option<u64>,
        peer_key: Option<u64>,
        data_len: Option<u16>,
    },
    /// MP_JOIN on another subflow's SYN (the receiver's token, a nonce) or SYN-ACK (a
    /// truncated HMAC, a nonce).
    JoinSyn {
        addr_id: u8,
        token: u32,
        nonce: u32,
    },
    JoinSynAck {
        addr_id: u8,
        hmac: u64,
        nonce: u32,
    },
    /// DSS: the data ACK and the mapping (data sequence number, relative subflow
    /// sequence number, length), each optional; 8-byte data numbers. `data_fin` sets
    /// the F flag: the mapping's length then counts the DATA_FIN's one octet of data
    /// sequence space (RFC 8684 §3.3.3).
    Dss {
        data_ack: Option<u64>,
        map: Option<(u64, u32, u16)>,
        data_fin: bool,
    },
}

/// A TCP segment's header fields as they go on the wire.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tcp {
    pub sport: u16,
    pub dport: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    /// The window field (already scaled down after the handshake).
    pub window: u16,
    /// SYN and SYN-ACK: the MSS option's value.
    pub mss: Option<u16>,
    /// TSval, TSecr.
    pub ts: Option<(u32, u32)>,
    pub sack: [(u32, u32); 3],
    pub sack_n: u8,
    pub mptcp: Option<Mptcp>,
}

/// What a captured frame carries above IPv4.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Transport {
    Tcp(Tcp),
    /// RoCEv2: UDP source port, BTH opcode, destination QP, PSN, and the AETH's
    /// syndrome and MSN for ACK and NAK opcodes.
    Roce {
        sport: u16,
        opcode: u8,
        qp: u32,
        psn: u32,
        aeth: Option<(u8, u32)>,
    },
    /// NDP's or Homa's header over UDP from and to `port` (`docs/traces.md`).
    Shim {
        port: u16,
        kind: u8,
        flags: u8,
        conn: u32,
        seq: u64,
        ack: u64,
        payload: u32,
    },
}

/// One frame: link and IP addresses, ECN codepoint, transport header, payload length.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frame {
    pub src_node: u32,
    pub dst_node: u32,
    pub src_host: u32,
    pub dst_host: u32,
    pub ecn: Ecn,
    pub transport: Transport,
    pub payload: u32,
}

/// RoCE BTH opcodes (InfiniBand RC) and the CNP's.
pub const BTH_SEND_ONLY: u8 = 0x04;
pub const BTH_ACK: u8 = 0x11;
pub const BTH_CNP: u8 = 0x81;
/// AETH syndromes: ACK (no credit count), NAK with a PSN sequence error.
pub const AETH_ACK: u8 = 0x1F;
pub const AETH_NAK_SEQ: u8 = 0x60;
/// The ICRC after a RoCE payload.
const ICRC: usize = 4;
/// NDP's and Homa's header over UDP, and its first byte ('m'): a type of 1 there made
/// Wireshark's E100 heuristic claim GRANTs (it takes a first byte of 1 for its version).
pub const SHIM_HEADER: usize = 32;
const SHIM_MAGIC: u8 = b'm';

fn checksum_add(mut sum: u32, bytes: &[u8]) -> u32 {
    let mut chunks = bytes.chunks_exact(2);
    for c in &mut chunks {
        sum += u16::from_be_bytes([c[0], c[1]]) as u32;
    }
    if let [last] = chunks.remainder() {
        sum += (*last as u32) << 8;
    }
    sum
}

fn checksum_fold(mut sum: u32) -> u16 {
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Appends the frame's header bytes to `b` (cleared first) and returns the frame's full
/// length on the wire (headers, zero payload, RoCE's ICRC; no FCS).
pub fn write(b: &mut Vec<u8>, f: &Frame) -> u32 {
    b.clear();
    b.extend_from_slice(&node_mac(f.dst_node));
    b.extend_from_slice(&node_mac(f.src_node));
    b.extend_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
    let ip = b.len();
    b.extend_from_slice(&[0; IPV4_HEADER]);
    let l4 = b.len();
    let (proto, trailer) = match &f.transport {
        Transport::Tcp(t) => {
            write_tcp(b, t);
            (PROTO_TCP, 0)
        }
        Transport::Roce {
            sport,
            opcode,
            qp,
            psn,
            aeth,
        } => {
            write_udp_header(b, *sport, ROCE_PORT);
            b.push(*opcode);
            b.push(0);
            b.extend_from_slice(&0xFFFFu16.to_be_bytes());
            b.push(0);
            b.extend_from_slice(&qp.to_be_bytes()[1..]);
            // AckReq on data.
            b.push(if *opcode == BTH_SEND_ONLY { 0x80 } else { 0 });
            b.extend_from_slice(&psn.to_be_bytes()[1..]);
            match (opcode, aeth) {
                (&BTH_CNP, _) => b.extend_from_slice(&[0; 16]),
                (_, Some((syndrome, msn))) => {
                    b.push(*syndrome);
                    b.extend_from_slice(&msn.to_be_bytes()[1..]);
                }
                (_, None) => {}
            }
            (PROTO_UDP, ICRC)
        }
        Transport::Shim {
            port,
            kind,
            flags,
            conn,
            seq,
            ack,
            payload,
        } => {
            write_udp_header(b, *port, *port);
            b.push(SHIM_MAGIC);
            b.push(*kind);
            b.push(*flags);
            b.push(0);
            b.extend_from_slice(&conn.to_be_bytes());
            b.extend_from_slice(&seq.to_be_bytes());
            b.extend_from_slice(&ack.to_be_bytes());
            b.extend_from_slice(&payload.to_be_bytes());
            b.extend_from_slice(&[0; 4]);
            (PROTO_UDP, 0)
        }
    };
    let l4_len = b.len() - l4 + f.payload as usize + trailer;
    let total = IPV4_HEADER + l4_len;
    // IPv4 header.
    let (src, dst) = (host_ip(f.src_host), host_ip(f.dst_host));
    {
        let h = &mut b[ip..ip + IPV4_HEADER];
        h[0] = 0x45;
        h[1] = f.ecn as u8;
        h[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        // Don't fragment.
        h[6] = 0x40;
        h[8] = TTL;
        h[9] = proto;
        h[12..16].copy_from_slice(&src.to_be_bytes());
        h[16..20].copy_from_slice(&dst.to_be_bytes());
        let c = checksum_fold(checksum_add(0, h));
        h[10..12].copy_from_slice(&c.to_be_bytes());
    }
    if proto == PROTO_UDP {
        b[l4 + 4..l4 + 6].copy_from_slice(&(l4_len as u16).to_be_bytes());
    } else {
        // The zero payload adds nothing to the sum but its length.
        let mut sum = checksum_add(0, &src.to_be_bytes());
        sum = checksum_add(sum, &dst.to_be_bytes());
        sum += PROTO_TCP as u32 + l4_len as u32;
        sum = checksum_add(sum, &b[l4..]);
        let c = checksum_fold(sum);
        b[l4 + 16..l4 + 18].copy_from_slice(&c.to_be_bytes());
    }
    (ETH_HEADER + total) as u32
}

/// PFC (IEEE 802.1Qbb priority-based flow control): a MAC control frame to the
/// reserved multicast address, opcode 0x0101, the class-enable vector and eight pause
/// times in quanta (512 bit times each).
pub const PFC_DESTINATION: [u8; 6] = [0x01, 0x80, 0xC2, 0x00, 0x00, 0x01];
pub const ETHERTYPE_MAC_CONTROL: u16 = 0x8808;
pub const PFC_OPCODE: u16 = 0x0101;
/// The pause time a PAUSE asks for: the longest. The simulator's pause holds until the
/// RESUME, which is what a switch refreshing 0xFFFF while congested brings about.
pub const PFC_PAUSE_QUANTA: u16 = 0xFFFF;
/// The shortest Ethernet frame, its frame check sequence included; a PFC frame is
/// padded to it.
pub const MIN_FRAME: usize = 64;
pub const FCS: usize = 4;

/// Writes into `b` (cleared first) the PFC frame node `src_node` sends for `class`: a
/// PAUSE (`pause`: the class's time 0xFFFF) or a RESUME (its time 0), its class enabled
/// either way, padded to the minimum frame and ending in its FCS. Returns its length.
pub fn write_pfc(b: &mut Vec<u8>, src_node: u32, class: u8, pause: bool) -> u32 {
    b.clear();
    b.extend_from_slice(&PFC_DESTINATION);
    b.extend_from_slice(&node_mac(src_node));
    b.extend_from_slice(&ETHERTYPE_MAC_CONTROL.to_be_bytes());
    b.extend_from_slice(&PFC_OPCODE.to_be_bytes());
    b.extend_from_slice(&(1u16 << class).to_be_bytes());
    for c in 0..8u8 {
        let quanta = if c == class && pause {
            PFC_PAUSE_QUANTA
        } else {
            0
        };
        b.extend_from_slice(&quanta.to_be_bytes());
    }
    b.resize(MIN_FRAME - FCS, 0);
    let fcs = crc32(b);
    b.extend_from_slice(&fcs.to_le_bytes());
    b.len() as u32
}

/// Ethernet's frame check sequence: CRC-32 (IEEE 802.3, reflected polynomial
/// 0xEDB88320), sent least significant byte first. Bit by bit: PFC frames are few.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = u32::MAX;
    for &byte in bytes {
        crc ^= byte as u32;
        for _ in 0..8 {
            crc = (crc >> 1) ^ (0xEDB8_8320 & (crc & 1).wrapping_neg());
        }
    }
    !crc
}

fn write_udp_header(b: &mut Vec<u8>, sport: u16, dport: u16) {
    b.extend_from_slice(&sport.to_be_bytes());
    b.extend_from_slice(&dport.to_be_bytes());
    // Length filled in by `write`; checksum 0 (none, allowed over IPv4).
    b.extend_from_slice(&[0, 0, 0, 0]);
}

fn write_tcp(b: &mut Vec<u8>, t: &Tcp) {
    let start = b.len();
    b.extend_from_slice(&t.sport.to_be_bytes());
    b.extend_from_slice(&t.dport.to_be_bytes());
    b.extend_from_slice(&t.seq.to_be_bytes());
    b.extend_from_slice(&t.ack.to_be_bytes());
    b.extend_from_slice(&[0, t.flags]);
    b.extend_from_slice(&t.window.to_be_bytes());
    b.extend_from_slice(&[0, 0, 0, 0]);
    let opts = b.len();
    if let Some(mss) = t.mss {
        b.extend_from_slice(&[OPT_MSS, 4]);
        b.extend_from_slice(&mss.to_be_bytes());
        b.extend_from_slice(&[OPT_NOP, OPT_WSCALE, 3, WINDOW_SHIFT]);
        b.extend_from_slice(&[OPT_NOP, OPT_NOP, OPT_SACK_OK, 2]);
    }
    if let Some((val, ecr)) = t.ts {
        b.extend_from_slice(&[OPT_NOP, OPT_NOP, OPT_TIMESTAMP, 10]);
        b.extend_from_slice(&val.to_be_bytes());
        b.extend_from_slice(&ecr.to_be_bytes());
    }
    if let Some(m) = &t.mptcp {
        write_mptcp(b, m);
    }
    // SACK blocks, as many as fit (as a stack sending timestamps and MPTCP options does).
    let room = MAX_TCP_OPTIONS.saturating_sub(b.len() - opts + 4);
    let n = (t.sack_n as usize).min(room / 8);
    if n > 0 {
        b.extend_from_slice(&[OPT_NOP, OPT_NOP, OPT_SACK, 2 + 8 * n as u8]);
        for &(l, r) in &t.sack[..n] {
            b.extend_from_slice(&l.to_be_bytes());
            b.extend_from_slice(&r.to_be_bytes());
        }
    }
    while !(b.len() - opts).is_multiple_of(4) {
        b.push(OPT_NOP);
    }
    let offset = ((b.len() - start) / 4) as u8;
    b[start + 12] = offset << 4;
}

fn write_mptcp(b: &mut Vec<u8>, m: &Mptcp) {
    match *m {
        Mptcp::Capable {
            key,
            peer_key,
            data_len,
        } => {
            // Length 4 (SYN), 12 (SYN-ACK), 20 (third ACK), 22 (third ACK with data, no
            // checksum).
            let len = 4
                + 8 * (key.is_some() as u8 + peer_key.is_some() as u8)
                + 2 * data_len.is_some() as u8;
            // Subtype 0, version 1; flags: H (HMAC-SHA256), no checksums.
            b.extend_from_slice(&[OPT_MPTCP, len, 0x01, 0x01]);
            for k in [key, peer_key].into_iter().flatten() {
                b.extend_from_slice(&k.to_be_bytes());
            }
            if let Some(l) = data_len {
                b.extend_from_slice(&l.to_be_bytes());
            }
        }
        Mptcp::JoinSyn {
            addr_id,
            token,
            nonce,
        } => {
            b.extend_from_slice(&[OPT_MPTCP, 12, 0x10, addr_id]);
            b.extend_from_slice(&token.to_be_bytes());
            b.extend_from_slice(&nonce.to_be_bytes());
        }
        Mptcp::JoinSynAck {
            addr_id,
            hmac,
            nonce,
        } => {
            b.extend_from_slice(&[OPT_MPTCP, 16, 0x10, addr_id]);
            b.extend_from_slice(&hmac.to_be_bytes());
            b.extend_from_slice(&nonce.to_be_bytes());
        }
        Mptcp::Dss {
            data_ack,
            map,
            data_fin,
        } => {
            // F: DATA_FIN.
            let mut flags = if data_fin { 0x10 } else { 0 };
            let mut len = 4u8;
            if data_ack.is_some() {
                // A: data ACK present; a: 8 bytes.
                flags |= 0x01 | 0x02;
                len += 8;
            }
            if map.is_some() {
                // M: mapping present; m: 8-byte DSN.
                flags |= 0x04 | 0x08;
                len += 8 + 4 + 2;
            }
            b.extend_from_slice(&[OPT_MPTCP, len, 0x20, flags]);
            if let Some(a) = data_ack {
                b.extend_from_slice(&a.to_be_bytes());
            }
            if let Some((dsn, ssn, dlen)) = map {
                b.extend_from_slice(&dsn.to_be_bytes());
                b.extend_from_slice(&ssn.to_be_bytes());
                b.extend_from_slice(&dlen.to_be_bytes());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tcp() -> Tcp {
        Tcp {
            sport: 1024,
            dport: SERVER_PORT,
            seq: 1,
            ack: 1,
            flags: tcp_flags::ACK,
            window: 512,
            mss: None,
            ts: Some((5, 3)),
            sack: [(100, 200), (300, 400), (500, 600)],
            sack_n: 3,
            mptcp: None,
        }
    }

    fn frame(t: Transport, payload: u32) -> Frame {
        Frame {
            src_node: 1,
            dst_node: 2,
            src_host: 0,
            dst_host: 1,
            ecn: Ecn::Ce,
            transport: t,
            payload,
        }
    }

    #[test]
    fn ip_header_has_the_ecn_codepoint_length_and_a_valid_checksum() {
        let mut b = Vec::new();
        let len = write(&mut b, &frame(Transport::Tcp(tcp()), 1000));
        let ip = &b[14..34];
        assert_eq!(ip[1], 3, "CE");
        let total = u16::from_be_bytes([ip[2], ip[3]]) as u32;
        assert_eq!(len, 14 + total);
        assert_eq!(checksum_fold(checksum_add(0, ip)), 0);
        assert_eq!(&ip[12..16], &[10, 0, 0, 1]);
        assert_eq!(&ip[16..20], &[10, 0, 0, 2]);
    }

    #[test]
    fn options_never_exceed_forty_bytes_and_sack_blocks_give_way() {
        let mut b = Vec::new();
        let mut t = tcp();
        write(&mut b, &frame(Transport::Tcp(t), 0));
        let opts = (b[14 + 20 + 12] >> 4) as usize * 4 - 20;
        assert_eq!(opts, 40, "timestamps and three SACK blocks fill the space");
        t.mptcp = Some(Mptcp::Dss {
            data_ack: Some(7),
            map: None,
            data_fin: false,
        });
        write(&mut b, &frame(Transport::Tcp(t), 0));
        let opts = (b[14 + 20 + 12] >> 4) as usize * 4 - 20;
        assert!(opts <= 40);
        // Timestamps 12, DSS 12, then room for one SACK block (4 + 8).
        assert_eq!(opts, 36);
    }

    /// The MPTCP option's bytes in a written frame (the first option of kind 30).
    fn mptcp_option(b: &[u8]) -> &[u8] {
        let end = 14 + 20 + (b[14 + 20 + 12] >> 4) as usize * 4;
        let mut i = 14 + 20 + 20;
        while b[i] != OPT_MPTCP {
            i += if b[i] == OPT_NOP {
                1
            } else {
                b[i + 1] as usize
            };
            assert!(i < end, "no MPTCP option");
        }
        &b[i..i + b[i + 1] as usize]
    }

    #[test]
    fn the_third_ack_with_data_carries_both_keys_and_the_data_level_length() {
        let mut b = Vec::new();
        let mut t = tcp();
        t.sack_n = 0;
        t.mptcp = Some(Mptcp::Capable {
            key: Some(0x1111),
            peer_key: Some(0x2222),
            data_len: Some(1400),
        });
        write(&mut b, &frame(Transport::Tcp(t), 1400));
        let o = mptcp_option(&b);
        assert_eq!(o.len(), 22);
        assert_eq!(&o[2..4], &[0x01, 0x01], "subtype 0, version 1, H");
        assert_eq!(u64::from_be_bytes(o[4..12].try_into().unwrap()), 0x1111);
        assert_eq!(u64::from_be_bytes(o[12..20].try_into().unwrap()), 0x2222);
        assert_eq!(u16::from_be_bytes([o[20], o[21]]), 1400);
    }

    #[test]
    fn a_data_fin_sets_the_f_flag() {
        let mut b = Vec::new();
        let mut t = tcp();
        t.mptcp = Some(Mptcp::Dss {
            data_ack: None,
            map: Some((10, 11, 101)),
            data_fin: true,
        });
        write(&mut b, &frame(Transport::Tcp(t), 100));
        let o = mptcp_option(&b);
        assert_eq!(o.len(), 18);
        assert_eq!(o[3], 0x10 | 0x08 | 0x04, "F, m, M");
        assert_eq!(u16::from_be_bytes([o[16], o[17]]), 101);
    }

    #[test]
    fn tcp_checksum_covers_the_zero_payload() {
        let mut b = Vec::new();
        let len = write(&mut b, &frame(Transport::Tcp(tcp()), 1000)) as usize;
        // With the payload's zeros appended, the checksum over pseudo-header and
        // segment must verify.
        let mut full = b.clone();
        full.resize(len, 0);
        let seg = &full[34..];
        let mut sum = checksum_add(0, &b[26..34]);
        sum += PROTO_TCP as u32 + seg.len() as u32;
        sum = checksum_add(sum, seg);
        assert_eq!(checksum_fold(sum), 0);
    }

    #[test]
    fn roce_cnp_is_bth_opcode_0x81_over_udp_4791() {
        let mut b = Vec::new();
        let t = Transport::Roce {
            sport: 49152,
            opcode: BTH_CNP,
            qp: 5,
            psn: 0,
            aeth: None,
        };
        let len = write(&mut b, &frame(t, 0));
        assert_eq!(u16::from_be_bytes([b[36], b[37]]), ROCE_PORT);
        assert_eq!(b[42], BTH_CNP);
        assert_eq!(len as usize, b.len() + ICRC);
    }

    #[test]
    fn the_crc_is_ethernets() {
        // The standard check value of CRC-32/ISO-HDLC.
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }

    #[test]
    fn a_pfc_pause_and_resume_are_802_1qbb_frames_of_64_bytes() {
        let mut b = Vec::new();
        for (class, pause) in [(1u8, true), (1, false), (0, true)] {
            let len = write_pfc(&mut b, 5, class, pause);
            assert_eq!(len as usize, MIN_FRAME);
            assert_eq!(b.len(), MIN_FRAME);
            assert_eq!(&b[0..6], &PFC_DESTINATION);
            assert_eq!(&b[6..12], &node_mac(5));
            assert_eq!(u16::from_be_bytes([b[12], b[13]]), 0x8808);
            assert_eq!(u16::from_be_bytes([b[14], b[15]]), 0x0101);
            assert_eq!(u16::from_be_bytes([b[16], b[17]]), 1 << class);
            let quanta: Vec<u16> = (0..8)
                .map(|c| u16::from_be_bytes([b[18 + 2 * c], b[19 + 2 * c]]))
                .collect();
            for (c, &q) in quanta.iter().enumerate() {
                let want = if c == class as usize && pause {
                    0xFFFF
                } else {
                    0
                };
                assert_eq!(q, want, "class {c}");
            }
            assert!(b[34..60].iter().all(|&x| x == 0), "padding");
            let fcs = u32::from_le_bytes(b[60..64].try_into().unwrap());
            assert_eq!(fcs, crc32(&b[..60]));
        }
    }
}
