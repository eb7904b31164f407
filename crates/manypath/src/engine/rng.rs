//! Seeded random streams: xoshiro256++ seeded through SplitMix64.
//!
//! Every component draws from its own stream, derived from (scenario seed, component tag,
//! component index). Adding a component or drawing more numbers in one place therefore
//! never shifts the numbers another component sees.

#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

#[inline]
pub fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A strong 64-bit mixer (SplitMix64's finaliser), used for ECMP hashing.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Tags that name the kind of component a stream belongs to.
pub mod stream {
    pub const SWITCH: u64 = 1;
    pub const TRAFFIC: u64 = 2;
    pub const TOPOLOGY: u64 = 3;
    pub const LINK: u64 = 4;
    pub const HOST: u64 = 5;
    pub const FAULT: u64 = 6;
    pub const QUEUE: u64 = 7;
    /// Hosts' interfaces (send jitter), by port.
    pub const NIC: u64 = 8;
    /// Homa's sample of its workload's sizes (where its unscheduled levels are cut).
    pub const HOMA: u64 = 9;
    /// A collective's random placement of its ranks, by traffic entry.
    pub const PLACEMENT: u64 = 10;
}

impl Rng {
    pub fn new(seed: u64, tag: u64, index: u64) -> Rng {
        let mut x =
            seed ^ mix64(tag.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ mix64(index.wrapping_add(1)));
        let s = [
            splitmix64(&mut x),
            splitmix64(&mut x),
            splitmix64(&mut x),
            splitmix64(&mut x),
        ];
        Rng { s }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let result = (self.s[0].wrapping_add(self.s[3]))
            .rotate_left(23)
            .wrapping_add(self.s[0]);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1) with 53 bits of precision.
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform integer in [0, n), by multiply-high (bias below 2^-64 * n).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Exponential with the given mean.
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.uniform()).ln()
    }

    /// Fisher-Yates shuffle.
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            v.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::new(7, stream::SWITCH, 3);
                move |_| r.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::new(7, stream::SWITCH, 3);
                move |_| r.next_u64()
            })
            .collect();
        let c: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::new(7, stream::SWITCH, 4);
                move |_| r.next_u64()
            })
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn uniform_mean_and_below_range() {
        let mut r = Rng::new(1, 0, 0);
        let n = 100_000;
        let mean: f64 = (0..n).map(|_| r.uniform()).sum::<f64>() / n as f64;
        assert!((mean - 0.5).abs() < 0.01);
        let mut counts = [0u32; 5];
        for _ in 0..n {
            counts[r.below(5) as usize] += 1;
        }
        for c in counts {
            assert!((c as f64 - n as f64 / 5.0).abs() < 0.05 * n as f64 / 5.0);
        }
    }
}
