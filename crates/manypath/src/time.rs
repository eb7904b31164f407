//! Simulated time in integer picoseconds, and link rates.
//!
//! Integer time keeps runs bit-for-bit reproducible and lets a 10 Gbps link serialise a
//! byte in an exact 800 ps.

/// A point in simulated time, in picoseconds since the start of the run.
pub type SimTime = u64;

pub const PS_PER_NS: u64 = 1_000;
pub const PS_PER_US: u64 = 1_000_000;
pub const PS_PER_MS: u64 = 1_000_000_000;
pub const PS_PER_S: u64 = 1_000_000_000_000;

/// Converts microseconds (as written in a scenario) to picoseconds, rounding to nearest.
pub fn from_us(us: f64) -> SimTime {
    (us * PS_PER_US as f64).round() as SimTime
}

pub fn from_ms(ms: f64) -> SimTime {
    (ms * PS_PER_MS as f64).round() as SimTime
}

pub fn to_secs(t: SimTime) -> f64 {
    t as f64 / PS_PER_S as f64
}

pub fn to_us(t: SimTime) -> f64 {
    t as f64 / PS_PER_US as f64
}

/// A link rate, with the serialisation time per byte precomputed in 32.32 fixed point so
/// the per-packet cost is one multiply and one shift, with an error below 1 ps per packet (rounded to nearest).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rate {
    bits_per_sec: u64,
    ps_per_byte_q32: u64,
}

impl Rate {
    pub fn from_bps(bits_per_sec: u64) -> Rate {
        assert!(bits_per_sec > 0, "rate must be positive");
        let q = ((8u128 * PS_PER_S as u128) << 32) / bits_per_sec as u128;
        Rate {
            bits_per_sec,
            ps_per_byte_q32: q as u64,
        }
    }

    pub fn from_gbps(gbps: f64) -> Rate {
        Rate::from_bps((gbps * 1e9).round() as u64)
    }

    pub fn bits_per_sec(&self) -> u64 {
        self.bits_per_sec
    }

    /// Time to put `bytes` on the wire.
    #[inline]
    pub fn serialization(&self, bytes: u32) -> SimTime {
        ((bytes as u64 as u128 * self.ps_per_byte_q32 as u128 + (1u128 << 31)) >> 32) as SimTime
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialization_is_exact_for_round_rates() {
        assert_eq!(Rate::from_gbps(10.0).serialization(1500), 1_200_000);
        assert_eq!(Rate::from_gbps(1.0).serialization(1500), 12_000_000);
        assert_eq!(Rate::from_gbps(40.0).serialization(1500), 300_000);
        assert_eq!(Rate::from_gbps(0.1).serialization(1500), 120_000_000);
    }

    #[test]
    fn serialization_error_is_below_a_picosecond_for_odd_rates() {
        let r = Rate::from_bps(3_000_000_000);
        let exact = 1500.0 * 8.0 / 3e9 * 1e12;
        assert!((r.serialization(1500) as f64 - exact).abs() < 1.0);
    }
}
