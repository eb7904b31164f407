//! RED-style ECN marking on the instantaneous queue length, as DCQCN deployments
//! configure their switches (Y. Zhu et al., "Congestion Control for Large-Scale RDMA
//! Deployments", SIGCOMM 2015, §3.1: the congestion point marks with RED's probability
//! curve on the instantaneous, not averaged, queue).
//!
//! With K the queue length when the packet is marked (bytes, or packets if the caller
//! counts packets), the probability is
//!
//! ```text
//! 0                              K ≤ Kmin
//! Pmax · (K − Kmin)/(Kmax − Kmin)  Kmin < K ≤ Kmax
//! 1                              K > Kmax
//! ```
//!
//! Unlike `net/red.rs` there is no average, no count since the last mark and no drop:
//! the marker has no state besides its counter, and the random draw comes from the
//! caller's stream (one draw only between Kmin and Kmax), so a run stays a pure function
//! of scenario and seed.

use crate::engine::Rng;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EcnRedConfig {
    /// At or below this queue length nothing is marked.
    pub kmin: u64,
    /// Above this queue length everything is marked.
    pub kmax: u64,
    /// The probability at K = Kmax.
    pub pmax: f64,
}

impl EcnRedConfig {
    /// Checks Kmin ≤ Kmax and 0 ≤ Pmax ≤ 1, naming the offending setting.
    pub fn validate(&self) -> Result<(), String> {
        if self.kmin > self.kmax {
            return Err(format!(
                "kmin ({}) must not exceed kmax ({})",
                self.kmin, self.kmax
            ));
        }
        if !(0.0..=1.0).contains(&self.pmax) {
            return Err(format!("pmax ({}) must be within [0, 1]", self.pmax));
        }
        Ok(())
    }

    /// The marking probability at queue length `k`.
    #[inline]
    pub fn probability(&self, k: u64) -> f64 {
        if k <= self.kmin {
            0.0
        } else if k > self.kmax {
            1.0
        } else {
            self.pmax * (k - self.kmin) as f64 / (self.kmax - self.kmin) as f64
        }
    }
}

/// The marker of one queue: its settings and how many packets it marked.
#[derive(Clone, Debug)]
pub struct EcnRed {
    pub cfg: EcnRedConfig,
    pub marks: u64,
}

impl EcnRed {
    /// Panics on settings `EcnRedConfig::validate` refuses.
    pub fn new(cfg: EcnRedConfig) -> EcnRed {
        if let Err(e) = cfg.validate() {
            panic!("ECN RED marking: {e}");
        }
        EcnRed { cfg, marks: 0 }
    }

    /// Whether to mark an ECT packet seen at queue length `k`, drawing from `rng` only
    /// when the probability is strictly between the ends of the curve.
    #[inline]
    pub fn mark(&mut self, k: u64, rng: &mut Rng) -> bool {
        let m = if k <= self.cfg.kmin {
            false
        } else if k > self.cfg.kmax {
            true
        } else {
            rng.uniform() < self.cfg.probability(k)
        };
        self.marks += m as u64;
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CFG: EcnRedConfig = EcnRedConfig {
        kmin: 20_000,
        kmax: 100_000,
        pmax: 0.2,
    };

    fn rate(k: u64, draws: u64) -> f64 {
        let mut m = EcnRed::new(CFG);
        let mut rng = Rng::new(5, 0, k);
        let marked = (0..draws).filter(|_| m.mark(k, &mut rng)).count() as u64;
        assert_eq!(marked, m.marks);
        marked as f64 / draws as f64
    }

    #[test]
    fn the_marking_curve() {
        let n = 200_000;
        // σ of a rate near 0.1 over 200 000 draws is about 0.0007: a tolerance of 0.004
        // is over five σ, while a slope off by a tenth moves the midpoint by 0.01.
        assert_eq!(rate(0, n), 0.0);
        assert_eq!(rate(CFG.kmin, n), 0.0);
        let mid = rate((CFG.kmin + CFG.kmax) / 2, n);
        assert!((mid - CFG.pmax / 2.0).abs() < 0.004, "midway: {mid}");
        let quarter = rate(CFG.kmin + (CFG.kmax - CFG.kmin) / 4, n);
        assert!(
            (quarter - CFG.pmax / 4.0).abs() < 0.004,
            "a quarter: {quarter}"
        );
        let top = rate(CFG.kmax, n);
        assert!((top - CFG.pmax).abs() < 0.004, "at kmax: {top}");
        assert_eq!(rate(CFG.kmax + 1, n), 1.0);
    }

    #[test]
    fn probabilities_and_checks() {
        assert_eq!(CFG.probability(CFG.kmin), 0.0);
        assert!((CFG.probability(60_000) - 0.1).abs() < 1e-12);
        assert!((CFG.probability(CFG.kmax) - 0.2).abs() < 1e-12);
        assert_eq!(CFG.probability(CFG.kmax + 1), 1.0);
        // Kmin = Kmax: a step at K.
        let step = EcnRedConfig {
            kmin: 50,
            kmax: 50,
            pmax: 1.0,
        };
        assert_eq!(step.validate(), Ok(()));
        assert_eq!(step.probability(50), 0.0);
        assert_eq!(step.probability(51), 1.0);
        let ramp = EcnRedConfig { kmin: 10, ..step };
        assert_eq!(ramp.validate(), Ok(()));
        let bad = EcnRedConfig { kmin: 60, ..step };
        assert!(bad.validate().unwrap_err().contains("kmin"));
        let bad = EcnRedConfig { pmax: 1.5, ..step };
        assert!(bad.validate().unwrap_err().contains("pmax"));
    }

    #[test]
    fn the_same_stream_marks_the_same_packets() {
        let run = || {
            let mut m = EcnRed::new(CFG);
            let mut rng = Rng::new(9, 7, 1);
            (0..1000u64)
                .map(|i| m.mark(20_000 + i * 80, &mut rng))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(), run());
    }
}
