//! AMP (AMP document §4, Algorithm 1): the RTT-agnostic increase w_s += 1/w_total per
//! ACK (one segment per RTT for the whole connection), the constant-factor cut
//! w_s ← max(w_s(1 − 1/β), cwnd_min) on the first marked ACK of a window (β = 4), losses
//! w_s ← max(w_s/2, cwnd_min), and subflow suppression/release (SSR): after γ
//! consecutive rounds in which every subflow's window equals cwnd_min (and none is
//! recovering),
//! only the first subflow carries new data and the coupled window counts it alone;
//! after τ consecutive rounds in which the first subflow saw no mark, is above cwnd_min
//! and is not recovering, all subflows carry data again. A round is one window of data
//! of the first subflow.

use super::{total_window, Coupled, EcnResponse, SubflowView};

pub fn increase(i: usize, subs: &[SubflowView], mss: f64) -> f64 {
    mss / total_window(subs).max(subs[i].cwnd)
}

pub fn subflow_cc(beta: f64, cwnd_min: f64) -> Coupled {
    Coupled::new(EcnResponse::Beta { beta }, cwnd_min)
}

/// Subflow suppression/release state.
#[derive(Clone, Debug, PartialEq)]
pub struct Ssr {
    pub gamma: u32,
    pub tau: u32,
    pub suppressed: bool,
    /// Consecutive qualifying rounds towards suppression (or release when suppressed).
    rounds: u32,
    /// A mark was seen on the first subflow during the current round.
    marked: bool,
    round_end: u64,
    pub suppressions: u32,
    pub releases: u32,
}

/// What SSR needs to know of a subflow at the end of a round.
#[derive(Clone, Copy, Debug)]
pub struct SsrView {
    pub cwnd: f64,
    pub in_recovery: bool,
}

impl Ssr {
    pub fn new(gamma: u32, tau: u32) -> Ssr {
        Ssr {
            gamma,
            tau,
            suppressed: false,
            rounds: 0,
            marked: false,
            round_end: 0,
            suppressions: 0,
            releases: 0,
        }
    }

    /// Called on every ACK of the first subflow, with its send state and every
    /// subflow's window. Returns true when the suppression state changed.
    pub fn on_first_subflow_ack(
        &mut self,
        ece: bool,
        snd_una: u64,
        snd_nxt: u64,
        subs: &[SsrView],
        cwnd_min: f64,
    ) -> bool {
        self.marked |= ece;
        if snd_una < self.round_end {
            return false;
        }
        // A round (one window of the first subflow) ended.
        self.round_end = snd_nxt.max(snd_una + 1);
        // Algorithm 1, line 5: w_s = cwnd_min (where ECN cuts leave it), not merely below
        // it (as a subflow still in slow start from a smaller initial window is).
        let at_min = |s: &SsrView| (s.cwnd - cwnd_min).abs() <= cwnd_min * 1e-9 && !s.in_recovery;
        let changed = if !self.suppressed {
            if subs.iter().all(at_min) {
                self.rounds += 1;
            } else {
                self.rounds = 0;
            }
            if self.rounds >= self.gamma {
                self.suppressed = true;
                self.suppressions += 1;
                self.rounds = 0;
                true
            } else {
                false
            }
        } else {
            let first = &subs[0];
            if !self.marked && first.cwnd > cwnd_min * (1.0 + 1e-9) && !first.in_recovery {
                self.rounds += 1;
            } else {
                self.rounds = 0;
            }
            if self.rounds >= self.tau {
                self.suppressed = false;
                self.releases += 1;
                self.rounds = 0;
                true
            } else {
                false
            }
        };
        self.marked = false;
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(cwnd: f64, n: usize) -> Vec<SsrView> {
        vec![
            SsrView {
                cwnd,
                in_recovery: false
            };
            n
        ]
    }

    #[test]
    fn suppresses_after_gamma_rounds_at_min_and_releases_after_tau_clean_rounds() {
        let mut s = Ssr::new(2, 8);
        let min = 2000.0;
        let mut una = 0;
        let mut round = |s: &mut Ssr, ece: bool, subs: &[SsrView]| {
            una += 10_000;
            s.on_first_subflow_ack(ece, una, una + 10_000, subs, min)
        };
        assert!(!round(&mut s, true, &all(min, 4)));
        assert!(
            round(&mut s, true, &all(min, 4)),
            "second round at cwnd_min suppresses"
        );
        assert!(s.suppressed);
        assert_eq!(s.suppressions, 1);
        // Marks keep it suppressed; then 8 clean rounds above cwnd_min release it.
        for _ in 0..5 {
            assert!(!round(&mut s, true, &all(4000.0, 4)));
        }
        for i in 0..8 {
            let changed = round(&mut s, false, &all(4000.0, 4));
            assert_eq!(changed, i == 7);
        }
        assert!(!s.suppressed);
        assert_eq!(s.releases, 1);
    }

    #[test]
    fn a_subflow_above_min_resets_the_count() {
        let mut s = Ssr::new(2, 8);
        let mut subs = all(2000.0, 3);
        s.on_first_subflow_ack(true, 10, 20, &subs, 2000.0);
        subs[2].cwnd = 3000.0;
        s.on_first_subflow_ack(true, 20, 30, &subs, 2000.0);
        subs[2].cwnd = 2000.0;
        assert!(!s.on_first_subflow_ack(true, 30, 40, &subs, 2000.0));
        assert!(!s.suppressed);
    }
}
