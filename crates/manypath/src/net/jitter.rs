//! Send jitter at the hosts' interfaces (`network.host_jitter_us`).
//!
//! The simulator is deterministic and hosts add no randomness of their own, so at a
//! drop-tail queue the same source can take every slot that frees, and a competitor's
//! lone packet can find the queue full every time (Floyd and Jacobson's phase effects).
//! ns-2's remedy is a random `overhead_` before a TCP sender sends; here a host's
//! interface stays idle for an independent uniform time in [0, width) before it starts
//! serialising each packet. It stays FIFO, so TCP sees no reordering.
//!
//! The hold is idle time of the interface: one that is backlogged sends a packet every
//! S + width/2 on average (S its serialisation time), i.e. at S/(S + width/2) of its
//! line rate (2/3 for width = S). One that is idle between packets (an ACK-clocked
//! sender below its line rate) only delays each packet, by width/2 on average.
//!
//! Each interface draws from its own stream (`stream::NIC`, by port), so the option
//! shifts no other component's random numbers and runs stay deterministic.

use crate::engine::rng::{stream, Rng};
use crate::time::SimTime;

pub struct NicJitter {
    /// Width of the uniform hold in picoseconds (0: off).
    width: SimTime,
    /// Per host port: its stream.
    rng: Vec<Rng>,
}

impl NicJitter {
    /// Jitter of `width` on the first `host_ports` ports (the hosts' interfaces).
    pub fn new(width: SimTime, seed: u64, host_ports: usize) -> NicJitter {
        let ports = if width > 0 { host_ports as u64 } else { 0 };
        NicJitter {
            width,
            rng: (0..ports).map(|p| Rng::new(seed, stream::NIC, p)).collect(),
        }
    }

    #[inline]
    pub fn is_on(&self) -> bool {
        self.width > 0
    }

    /// The hold before host port `port` starts its next packet: uniform in [0, width).
    #[inline]
    pub fn draw(&mut self, port: u32) -> SimTime {
        self.rng[port as usize].below(self.width)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_are_uniform_in_the_width_and_per_port() {
        let width = 1_200_000; // 1.2 µs
        let mut j = NicJitter::new(width, 7, 3);
        assert!(j.is_on());
        let n = 100_000u64;
        let holds: Vec<SimTime> = (0..n).map(|_| j.draw(1)).collect();
        let (lo, hi) = (*holds.iter().min().unwrap(), *holds.iter().max().unwrap());
        assert!(hi < width && lo < width / 100 && hi > width - width / 100);
        let mean = holds.iter().sum::<u64>() as f64 / n as f64;
        assert!((mean / (width as f64 / 2.0) - 1.0).abs() < 0.01, "{mean}");
        // A tenth of the draws in each tenth of the width.
        let mut bins = [0u32; 10];
        for h in &holds {
            bins[(h * 10 / width) as usize] += 1;
        }
        assert!(
            bins.iter().all(|&b| (b as f64 - 10_000.0).abs() < 500.0),
            "{bins:?}"
        );
        // Ports draw from their own streams; the same seed repeats them.
        let mut a = NicJitter::new(width, 7, 3);
        let mut b = NicJitter::new(width, 7, 3);
        let xs: Vec<_> = (0..8).map(|_| a.draw(0)).collect();
        let ys: Vec<_> = (0..8).map(|_| b.draw(0)).collect();
        let zs: Vec<_> = (0..8).map(|_| b.draw(2)).collect();
        assert_eq!(xs, ys);
        assert_ne!(xs, zs);
    }

    #[test]
    fn off_keeps_no_state() {
        let j = NicJitter::new(0, 1, 100);
        assert!(!j.is_on());
        assert!(j.rng.is_empty());
    }
}
