//! Linux's host timers, for the `timers = "linux"` preset: its RTT estimator and RTO,
//! timer granularity in jiffies, and the constants of its tail loss probe and delayed
//! ACKs (docs/references.md gives the sources).
//!
//! The estimator is Linux's variant of Jacobson/Karels: srtt ← 7/8·srtt + 1/8·m as in
//! RFC 6298, but the deviation `mdev` (4× the mean deviation) is fed a sample below srtt
//! with a weight of 1/32 instead of 1/4, so a falling RTT does not inflate the RTO; its
//! largest value over a round trip (`mdev_max`, never below rto_min) raises `rttvar` at
//! once and lowers it by a quarter of the gap once per round trip. RTO = srtt + rttvar,
//! that is srtt + max(4·deviation, rto_min), rounded up to whole jiffies. A timer armed
//! for J jiffies fires on the J-th tick after the current one, so it waits between J−1
//! and J jiffies.
//!
//! rto_min is itself a number of jiffies: a route's `rto_min` (`ip route ... rto_min`,
//! given in ms) is converted with `msecs_to_jiffies`, which rounds up, and the estimator
//! floors the deviation at that many jiffies. At HZ 250 an rto_min of 5 ms is 2 jiffies
//! (8 ms), so an RTO of srtt + 8 ms on a short path is 3 jiffies: the 12 ms that
//! `ss -i` (`tcpi_rto`) shows. At HZ 1000 the rounding changes nothing for whole ms.

use crate::time::{SimTime, PS_PER_MS, PS_PER_S};

/// The delayed-ACK timeout Linux starts a connection with (`TCP_ATO_MIN`, HZ/25, which
/// is also the smallest delayed-ACK timeout, `TCP_DELACK_MIN`): 40 ms.
pub const DELACK_MIN: SimTime = 40 * PS_PER_MS;
/// Segments acknowledged at once at the start of a connection (quick-ACK mode,
/// `TCP_MAX_QUICKACKS`).
pub const QUICKACKS: u8 = 16;
/// The loss probe's allowance with several segments outstanding, in jiffies
/// (`TCP_TIMEOUT_MIN`, "2 ticks" in the change that set Linux's probe timeout to
/// 2·srtt plus this): 2 ms at HZ 1000, 8 ms at HZ 250. (Later kernels add 2 ms before
/// rounding to jiffies instead; at HZ 250 that probes 114 times in linux-timers-64k
/// where Linux's measurement shows 15: the measured kernel had the 2 ticks.)
pub const PTO_MIN_EXTRA_JIFFIES: SimTime = 2;

/// One jiffy at `hz` ticks per second.
pub fn jiffy(hz: u32) -> SimTime {
    PS_PER_S / hz as SimTime
}

/// When a timer of `timeout` armed at `now` fires: rounded up to whole jiffies
/// (`usecs_to_jiffies`), counted from the current tick.
pub fn tick_deadline(now: SimTime, timeout: SimTime, jiffy: SimTime) -> SimTime {
    (now / jiffy + timeout.div_ceil(jiffy).max(1)) * jiffy
}

/// rto_min as Linux holds it: rounded up to whole jiffies (`msecs_to_jiffies`).
pub fn rto_min_in_jiffies(rto_min: SimTime, jiffy: SimTime) -> SimTime {
    rto_min.div_ceil(jiffy) * jiffy
}

/// Linux's RTT estimator (`tcp_rtt_estimator`, `tcp_set_rto`), in picoseconds.
#[derive(Clone, Copy, Debug, Default)]
pub struct LinuxRtt {
    /// 8·srtt (0: no sample yet).
    srtt8: i64,
    /// 4·mean deviation.
    mdev4: i64,
    /// The largest `mdev4` of the current round trip, at least rto_min.
    mdev_max: i64,
    /// What the RTO adds to srtt.
    rttvar: i64,
    /// The round trip ends when `snd_una` passes this.
    rtt_seq: u64,
}

impl LinuxRtt {
    /// Takes RTT sample `m` (ps), acknowledged up to `snd_una`, with `snd_nxt` sent.
    pub fn sample(&mut self, m: SimTime, snd_una: u64, snd_nxt: u64, rto_min: SimTime) {
        let rto_min = rto_min as i64;
        let mut m = (m as i64).max(1);
        if self.srtt8 == 0 {
            self.srtt8 = m << 3;
            self.mdev4 = m << 1;
            self.rttvar = self.mdev4.max(rto_min);
            self.mdev_max = self.rttvar;
            self.rtt_seq = snd_nxt;
            return;
        }
        m -= self.srtt8 >> 3;
        self.srtt8 += m;
        if m < 0 {
            m = -m - (self.mdev4 >> 2);
            if m > 0 {
                m >>= 3;
            }
        } else {
            m -= self.mdev4 >> 2;
        }
        self.mdev4 += m;
        if self.mdev4 > self.mdev_max {
            self.mdev_max = self.mdev4;
            if self.mdev_max > self.rttvar {
                self.rttvar = self.mdev_max;
            }
        }
        if snd_una > self.rtt_seq {
            if self.mdev_max < self.rttvar {
                self.rttvar -= (self.rttvar - self.mdev_max) >> 2;
            }
            self.rtt_seq = snd_nxt;
            self.mdev_max = rto_min;
        }
    }

    /// The smoothed RTT, if measured.
    pub fn srtt(&self) -> Option<SimTime> {
        (self.srtt8 > 0).then_some((self.srtt8 >> 3) as SimTime)
    }

    /// The RTO (before rounding to jiffies), if measured: srtt + rttvar.
    pub fn rto(&self) -> Option<SimTime> {
        self.srtt().map(|s| s + self.rttvar as SimTime)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::PS_PER_US;

    const US: SimTime = PS_PER_US;

    #[test]
    fn the_rto_is_srtt_plus_the_larger_of_four_deviations_and_rto_min() {
        let mut r = LinuxRtt::default();
        assert_eq!(r.rto(), None);
        // First sample 60 µs: rttvar = max(2·60 µs, rto_min).
        r.sample(60 * US, 0, 10, 5 * PS_PER_MS);
        assert_eq!(r.rto(), Some(60 * US + 5 * PS_PER_MS));
        let mut r = LinuxRtt::default();
        r.sample(60 * US, 0, 10, 10 * US);
        assert_eq!(
            r.rto(),
            Some(60 * US + 120 * US),
            "2·m above a small rto_min"
        );
        // A larger sample in the same round trip: srtt = 60 + 40/8 = 65 µs;
        // mdev4 = 120 + (40 − 30) = 130 µs, which raises rttvar at once.
        r.sample(100 * US, 5, 10, 10 * US);
        assert_eq!(r.srtt(), Some(65 * US));
        assert_eq!(r.rto(), Some(65 * US + 130 * US));
        // A smaller sample: the deviation grows by only an eighth of the excess.
        // err = 40 − 65 = −25 µs: m = 25 − 130/4 = −7.5 µs ≤ 0, so mdev4 −= 7.5 µs.
        // The round trip ended (snd_una 11 > 10): rttvar stays (mdev_max = 130 =
        // rttvar), and mdev_max falls back to rto_min.
        r.sample(40 * US, 11, 20, 10 * US);
        assert_eq!(r.srtt(), Some(65 * US - 25 * US / 8));
        assert_eq!(r.mdev4, 130 * US as i64 - 7_500_000);
        assert_eq!(r.mdev_max, 10 * US as i64);
        // Next round trip, steady samples: rttvar decays by a quarter of the gap.
        let before = r.rttvar;
        let srtt = r.srtt().unwrap();
        r.sample(srtt, 21, 30, 10 * US);
        assert!(r.rttvar < before);
        assert_eq!(r.rttvar, before - (before - r.mdev_max.max(r.mdev4)) / 4);
    }

    /// A sample far below srtt feeds the deviation an eighth of what exceeds it (gain
    /// 1/32 in all), where RFC 6298 would take a quarter of the whole difference.
    #[test]
    fn a_falling_rtt_barely_raises_the_deviation() {
        let mut r = LinuxRtt::default();
        r.sample(60 * US, 0, 10, 10 * US);
        r.sample(100 * US, 5, 10, 10 * US);
        assert_eq!((r.srtt(), r.mdev4), (Some(65 * US), 130 * US as i64));
        // err = 5 − 65 = −60 µs: (60 − 130/4)/8 = 3.4375 µs more deviation.
        r.sample(5 * US, 6, 10, 10 * US);
        assert_eq!(r.mdev4, 130 * US as i64 + 3_437_500);
        assert_eq!(r.rto(), Some(r.srtt().unwrap() + r.mdev4 as SimTime));
    }

    #[test]
    fn timers_fire_on_jiffy_ticks() {
        let j = jiffy(1000);
        assert_eq!(j, PS_PER_MS);
        // 5.06 ms armed 0.3 ms into a tick: 6 jiffies from the current tick.
        assert_eq!(tick_deadline(300 * US, 5060 * US, j), 6 * PS_PER_MS);
        // Exactly 2 ms: 2 jiffies.
        assert_eq!(tick_deadline(999 * US, 2 * PS_PER_MS, j), 2 * PS_PER_MS);
        // Anything below a jiffy waits for the next tick at least.
        assert_eq!(tick_deadline(10 * PS_PER_MS, US, j), 11 * PS_PER_MS);
        assert_eq!(jiffy(250), 4 * PS_PER_MS);
    }

    /// rto_min 5 ms is 2 jiffies at HZ 250: on a 60 µs path the RTO is 8.06 ms, which
    /// is 3 jiffies (12 ms) — what Linux reports there — where 5 ms unrounded would
    /// give 5.06 ms, 2 jiffies (8 ms).
    #[test]
    fn rto_min_is_whole_jiffies_so_five_ms_at_hz_250_makes_a_12_ms_rto() {
        let j = jiffy(250);
        let rto_min = rto_min_in_jiffies(5 * PS_PER_MS, j);
        assert_eq!(rto_min, 8 * PS_PER_MS);
        assert_eq!(
            rto_min_in_jiffies(5 * PS_PER_MS, jiffy(1000)),
            5 * PS_PER_MS
        );
        assert_eq!(rto_min_in_jiffies(8 * PS_PER_MS, j), 8 * PS_PER_MS);
        let mut r = LinuxRtt::default();
        r.sample(60 * US, 0, 10, rto_min);
        let rto = r.rto().unwrap();
        assert_eq!(rto, 8060 * US);
        assert_eq!(tick_deadline(0, rto, j), 12 * PS_PER_MS);
        // Armed anywhere within a tick, it fires after more than 2 jiffies.
        assert_eq!(tick_deadline(3999 * US, rto, j) - 3999 * US, 8001 * US);
    }
}
