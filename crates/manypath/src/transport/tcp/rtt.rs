//! RTT estimation and the retransmission timeout (Jacobson/Karels, RFC 6298):
//! srtt ← 7/8·srtt + 1/8·r, rttvar ← 3/4·rttvar + 1/4·|srtt − r|,
//! RTO = clamp(srtt + 4·rttvar, min, max), doubled per back-off.

use crate::time::SimTime;

#[derive(Clone, Copy, Debug)]
pub struct RttEstimator {
    srtt: f64,
    rttvar: f64,
    has_sample: bool,
    /// The smallest RTT measured (CUBIC's delay floor).
    min_rtt: SimTime,
    initial: SimTime,
    min: SimTime,
    max: SimTime,
}

impl RttEstimator {
    pub fn new(initial: SimTime, min: SimTime, max: SimTime) -> RttEstimator {
        RttEstimator {
            srtt: 0.0,
            rttvar: 0.0,
            has_sample: false,
            min_rtt: SimTime::MAX,
            initial,
            min,
            max,
        }
    }

    pub fn sample(&mut self, rtt: SimTime) {
        let r = rtt as f64;
        self.min_rtt = self.min_rtt.min(rtt);
        if !self.has_sample {
            self.srtt = r;
            self.rttvar = r / 2.0;
            self.has_sample = true;
        } else {
            self.rttvar = 0.75 * self.rttvar + 0.25 * (self.srtt - r).abs();
            self.srtt = 0.875 * self.srtt + 0.125 * r;
        }
    }

    /// The smallest RTT measured, in ps (0 before the first sample).
    pub fn min_rtt(&self) -> SimTime {
        if self.has_sample {
            self.min_rtt
        } else {
            0
        }
    }

    /// Smoothed RTT in ps, if measured.
    pub fn srtt(&self) -> Option<SimTime> {
        self.has_sample.then_some(self.srtt as SimTime)
    }

    /// The timeout after `backoff` consecutive expirations.
    pub fn rto(&self, backoff: u32) -> SimTime {
        let base = if self.has_sample {
            ((self.srtt + 4.0 * self.rttvar) as SimTime).clamp(self.min, self.max)
        } else {
            self.initial.clamp(self.min, self.max)
        };
        base.saturating_mul(1u64 << backoff.min(30)).min(self.max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rto_follows_rfc6298_and_clamps() {
        let mut r = RttEstimator::new(1_000_000, 100, 1_000_000);
        assert_eq!(r.rto(0), 1_000_000);
        r.sample(1000);
        assert_eq!(r.rto(0), 1000 + 4 * 500);
        r.sample(1000);
        // rttvar = 0.75*500 = 375, srtt = 1000
        assert_eq!(r.rto(0), 1000 + 1500);
        assert_eq!(r.rto(2), 4 * 2500);
        assert_eq!(r.rto(20), 1_000_000);
        let mut r = RttEstimator::new(1_000_000, 50_000, 1_000_000);
        r.sample(1000);
        assert_eq!(r.rto(0), 50_000);
    }
}
