//! pcapng blocks (draft-ietf-opsawg-pcapng): the section header, one interface
//! description per capture point (Ethernet, nanosecond timestamps) and enhanced packet
//! blocks. Little-endian; every block appended to a caller's buffer.

/// Block types.
const SHB: u32 = 0x0A0D_0D0A;
const IDB: u32 = 0x0000_0001;
const EPB: u32 = 0x0000_0006;
const BYTE_ORDER_MAGIC: u32 = 0x1A2B_3C4D;
/// LINKTYPE_ETHERNET.
const LINKTYPE_ETHERNET: u16 = 1;
/// Option codes.
const OPT_ENDOFOPT: u16 = 0;
const OPT_COMMENT: u16 = 1;
const IF_NAME: u16 = 2;
const IF_DESCRIPTION: u16 = 3;
const IF_TSRESOL: u16 = 9;
const EPB_FLAGS: u16 = 2;
/// if_tsresol = 9: timestamps count nanoseconds (10^-9 s).
const TSRESOL_NS: u8 = 9;
/// The bytes an interface keeps of each packet (headers; payloads are truncated).
pub const SNAPLEN: u32 = 256;

/// epb_flags' direction bits (bits 0–1): outbound.
pub const OUTBOUND: u32 = 0b10;
/// epb_flags' FCS length (bits 5–8): the frame ends in its 4-byte FCS. Frames without
/// the flag have none.
pub const FCS_4: u32 = 4 << 5;

fn put_u16(b: &mut Vec<u8>, v: u16) {
    b.extend_from_slice(&v.to_le_bytes());
}

fn put_u32(b: &mut Vec<u8>, v: u32) {
    b.extend_from_slice(&v.to_le_bytes());
}

fn pad4(b: &mut Vec<u8>, start: usize) {
    while !(b.len() - start).is_multiple_of(4) {
        b.push(0);
    }
}

fn option(b: &mut Vec<u8>, code: u16, value: &[u8]) {
    put_u16(b, code);
    put_u16(b, value.len() as u16);
    let start = b.len();
    b.extend_from_slice(value);
    pad4(b, start);
}

/// Writes the block's total length at `start + 4` and again at its end.
fn close_block(b: &mut Vec<u8>, start: usize) {
    let total = (b.len() - start + 4) as u32;
    put_u32(b, total);
    b[start + 4..start + 8].copy_from_slice(&total.to_le_bytes());
}

/// The section header block that opens the file.
pub fn section_header(b: &mut Vec<u8>) {
    let start = b.len();
    put_u32(b, SHB);
    put_u32(b, 0);
    put_u32(b, BYTE_ORDER_MAGIC);
    put_u16(b, 1);
    put_u16(b, 0);
    // Section length unknown.
    b.extend_from_slice(&(-1i64).to_le_bytes());
    close_block(b, start);
}

/// An Ethernet interface named `name` with nanosecond timestamps.
pub fn interface(b: &mut Vec<u8>, name: &str, description: &str) {
    let start = b.len();
    put_u32(b, IDB);
    put_u32(b, 0);
    put_u16(b, LINKTYPE_ETHERNET);
    put_u16(b, 0);
    put_u32(b, SNAPLEN);
    option(b, IF_NAME, name.as_bytes());
    option(b, IF_DESCRIPTION, description.as_bytes());
    option(b, IF_TSRESOL, &[TSRESOL_NS]);
    option(b, OPT_ENDOFOPT, &[]);
    close_block(b, start);
}

/// An enhanced packet block: `data` captured of a frame `orig_len` bytes long on
/// interface `iface` at `ts_ns`, with the direction flags and an optional comment.
pub fn packet(
    b: &mut Vec<u8>,
    iface: u32,
    ts_ns: u64,
    data: &[u8],
    orig_len: u32,
    flags: u32,
    comment: &str,
) {
    let start = b.len();
    put_u32(b, EPB);
    put_u32(b, 0);
    put_u32(b, iface);
    put_u32(b, (ts_ns >> 32) as u32);
    put_u32(b, ts_ns as u32);
    put_u32(b, data.len() as u32);
    put_u32(b, orig_len);
    let data_start = b.len();
    b.extend_from_slice(data);
    pad4(b, data_start);
    if !comment.is_empty() {
        option(b, OPT_COMMENT, comment.as_bytes());
    }
    option(b, EPB_FLAGS, &flags.to_le_bytes());
    option(b, OPT_ENDOFOPT, &[]);
    close_block(b, start);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u32_at(b: &[u8], i: usize) -> u32 {
        u32::from_le_bytes(b[i..i + 4].try_into().unwrap())
    }

    #[test]
    fn blocks_carry_their_length_at_both_ends_and_are_word_aligned() {
        let mut b = Vec::new();
        section_header(&mut b);
        interface(&mut b, "edge0->agg0", "a port");
        packet(
            &mut b,
            0,
            1_234_567_890_123,
            &[1, 2, 3, 4, 5],
            1500,
            OUTBOUND,
            "x",
        );
        let mut i = 0;
        let mut types = Vec::new();
        while i < b.len() {
            let len = u32_at(&b, i + 4) as usize;
            assert_eq!(len % 4, 0);
            assert_eq!(u32_at(&b, i + len - 4) as usize, len);
            types.push(u32_at(&b, i));
            i += len;
        }
        assert_eq!(i, b.len());
        assert_eq!(types, [SHB, IDB, EPB]);
    }

    #[test]
    fn a_packet_block_splits_its_nanosecond_timestamp() {
        let mut b = Vec::new();
        let ts: u64 = (7 << 32) | 99;
        packet(&mut b, 3, ts, &[0; 6], 60, OUTBOUND, "");
        assert_eq!(u32_at(&b, 8), 3);
        assert_eq!(u32_at(&b, 12), 7);
        assert_eq!(u32_at(&b, 16), 99);
        assert_eq!(u32_at(&b, 20), 6);
        assert_eq!(u32_at(&b, 24), 60);
    }
}
