//! A flow's ideal completion time: the FCT the packet-level model gives the flow alone
//! on an idle network along its path, for FCT slowdown (FCT / ideal). Computed when the
//! results are collected, from the routes; nothing here runs per packet.
//!
//! The model's timing, which this follows: a packet crossing a link takes its
//! serialisation at the link's rate (wire bytes: payload plus header) and then the
//! link's propagation delay; a switch forwards a packet once it has all of it (store and
//! forward); a sender whose window covers the flow hands every segment to its NIC at
//! once. So, for a flow that opens its own connection:
//!
//! - the handshake: the SYN (a header) along the data path, the SYN-ACK back along the
//!   ACK path;
//! - the data: n segments (all full but the last) through the tandem of links. The last
//!   one arrives after the longest chain of serialisations in the (segment, hop) grid,
//!   plus the path's propagation: on a path of equal rates, every segment's wire bytes
//!   at that rate plus one full segment's store-and-forward per further hop (the last
//!   segment waits behind the one before it); in general about the first segment's
//!   serialisation up to the bottleneck, every segment at the bottleneck and the last
//!   ones after it (the exact maximum is taken below);
//! - the ACK of the last segment (a header) back along the ACK path.
//!
//! A flow on a persistent connection has no handshake (unless it opened that connection:
//! `requests.pick = "idle"` with no idle connection in its pool).

use crate::time::{Rate, SimTime};

/// One link of a path: its rate and propagation delay.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hop {
    pub rate: Rate,
    pub delay: SimTime,
}

/// Segment sizes and header of the flow's transport, in bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Segments {
    pub mss: u32,
    pub header: u32,
}

/// The ideal FCT of a flow of `size` bytes (≥ 1) whose data crosses `data` and whose
/// ACKs come back across `ack`; `handshake`: the flow opens its own connection.
/// The time from a message's first byte leaving to its last arriving on an idle path
/// (`data`), with no handshake before and no acknowledgment after: the ideal completion
/// of a receiver-completed message (Homa).
pub fn ideal_delivery(size: u64, seg: Segments, data: &[Hop]) -> SimTime {
    data_time(size.max(1), seg, data)
}

pub fn ideal_fct(size: u64, seg: Segments, data: &[Hop], ack: &[Hop], handshake: bool) -> SimTime {
    ideal_received(size, seg, data, ack, handshake) + one_way(ack, seg.header)
}

/// The time from a flow's start to its last byte's arrival (its receive-done) alone
/// on an idle path: `ideal_fct` without the last acknowledgment's trip back.
pub fn ideal_received(
    size: u64,
    seg: Segments,
    data: &[Hop],
    ack: &[Hop],
    handshake: bool,
) -> SimTime {
    let opening = if handshake {
        one_way(data, seg.header) + one_way(ack, seg.header)
    } else {
        0
    };
    opening + data_time(size.max(1), seg, data)
}

/// A packet of `bytes` across `path`.
fn one_way(path: &[Hop], bytes: u32) -> SimTime {
    path.iter()
        .map(|h| h.rate.serialization(bytes) + h.delay)
        .sum()
}

/// From handing every segment to the NIC to the last one's arrival at the destination.
fn data_time(size: u64, seg: Segments, data: &[Hop]) -> SimTime {
    let mss = seg.mss.max(1) as u64;
    let n = size.div_ceil(mss);
    let full = (mss as u32).saturating_add(seg.header);
    let last = (size - (n - 1) * mss) as u32 + seg.header;
    let propagation: SimTime = data.iter().map(|h| h.delay).sum();
    let m: Vec<SimTime> = data.iter().map(|h| h.rate.serialization(full)).collect();
    let l: Vec<SimTime> = data.iter().map(|h| h.rate.serialization(last)).collect();
    if n == 1 {
        return l.iter().sum::<SimTime>() + propagation;
    }
    // The departure of the last segment from the last link is the heaviest monotone
    // chain through the grid of (segment, hop) serialisation times. With segments
    // 1..n−1 alike, a heaviest chain takes segment 1 up to some hop j, segments 1..n−1
    // at j, segment n−1 on to some hop k ≥ j, and segment n from k on.
    let h = data.len();
    let mut best = 0;
    for j in 0..h {
        let before: SimTime = m[..j].iter().sum();
        let at_j = (n - 1) * m[j];
        let mut between = 0;
        for k in j..h {
            if k > j {
                between += m[k];
            }
            let after: SimTime = l[k..].iter().sum();
            best = best.max(before + at_j + between + after);
        }
    }
    best + propagation
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hops(gbps: &[f64], delay_us: f64) -> Vec<Hop> {
        gbps.iter()
            .map(|&g| Hop {
                rate: Rate::from_gbps(g),
                delay: crate::time::from_us(delay_us),
            })
            .collect()
    }

    const SEG: Segments = Segments {
        mss: 1460,
        header: 40,
    };

    #[test]
    fn equal_rates_take_every_byte_once_and_a_full_segment_per_further_hop() {
        let p = hops(&[10.0, 10.0, 10.0], 1.0);
        // 3 segments: 1500 + 1500 + 620 wire bytes; 0.8 ns per byte at 10 Gbit/s. The
        // last segment waits behind the one before it at every further hop.
        let data = (1500 + 1500 + 620 + 2 * 1500) as u64 * 800 + 3_000_000;
        let header_trip = 3 * (40 * 800 + 1_000_000);
        assert_eq!(data_time(3500, SEG, &p), data);
        assert_eq!(
            ideal_fct(3500, SEG, &p, &p, true),
            2 * header_trip + data + header_trip
        );
        assert_eq!(ideal_fct(3500, SEG, &p, &p, false), data + header_trip);
    }

    #[test]
    fn a_slow_middle_link_carries_every_segment() {
        // 10, 1, 10 Gbit/s: the first segment reaches the bottleneck, all of them cross
        // it, the last goes on.
        let p = hops(&[10.0, 1.0, 10.0], 0.0);
        let expect = 1500 * 800 + (1500 + 1500 + 620) * 8000 + 620 * 800;
        assert_eq!(data_time(3500, SEG, &p), expect as u64);
        // A single segment: its serialisation at every hop.
        assert_eq!(data_time(100, SEG, &p), (140 * 800 * 2 + 140 * 8000) as u64);
    }

    #[test]
    fn the_grid_maximum_matches_a_packet_by_packet_pipeline() {
        // Departure recursion D[j][i] = max(D[j][i-1], D[j-1][i] + delay) + ser.
        for rates in [
            [10.0, 40.0, 1.0, 10.0],
            [1.0, 10.0, 10.0, 2.5],
            [5.0, 5.0, 5.0, 5.0],
        ] {
            let p = hops(&rates, 0.5);
            for size in [1u64, 1460, 1461, 20_000, 100_000] {
                let n = size.div_ceil(1460) as usize;
                let mut prev = vec![0u64; n];
                for (j, hop) in p.iter().enumerate() {
                    let mut free = 0;
                    for (i, d) in prev.iter_mut().enumerate() {
                        let bytes = if i + 1 == n {
                            (size - 1460 * (n as u64 - 1)) as u32
                        } else {
                            1460
                        };
                        let ready = if j == 0 { 0 } else { *d + p[j - 1].delay };
                        free = free.max(ready) + hop.rate.serialization(bytes + 40);
                        *d = free;
                    }
                }
                let pipeline = prev[n - 1] + p.last().unwrap().delay;
                assert_eq!(data_time(size, SEG, &p), pipeline, "{rates:?} {size}");
            }
        }
    }
}
