//! Flow-size distributions.

use super::EmpiricalCdf;
use crate::engine::Rng;

#[derive(Clone, Debug, PartialEq)]
pub enum SizeDist {
    Fixed(u64),
    /// Uniform integer bytes in [min, max].
    Uniform {
        min: u64,
        max: u64,
    },
    /// Pareto with the given mean and shape (> 1); scale = mean·(shape−1)/shape.
    Pareto {
        mean: f64,
        shape: f64,
    },
    Cdf(EmpiricalCdf),
    /// Never finishes: sends until the end of the run.
    LongLived,
}

impl SizeDist {
    /// A size in bytes, or `None` for a long-lived flow.
    pub fn sample(&self, rng: &mut Rng) -> Option<u64> {
        match self {
            SizeDist::Fixed(b) => Some(*b),
            SizeDist::Uniform { min, max } => Some(min + rng.below(max - min + 1)),
            SizeDist::Pareto { mean, shape } => {
                let scale = mean * (shape - 1.0) / shape;
                let u = 1.0 - rng.uniform();
                Some(((scale / u.powf(1.0 / shape)).ceil() as u64).max(1))
            }
            SizeDist::Cdf(c) => Some(c.sample(rng)),
            SizeDist::LongLived => None,
        }
    }

    /// The mean size in bytes (`None` for long-lived flows).
    pub fn mean(&self) -> Option<f64> {
        match self {
            SizeDist::Fixed(b) => Some(*b as f64),
            SizeDist::Uniform { min, max } => Some((*min + *max) as f64 / 2.0),
            SizeDist::Pareto { mean, .. } => Some(*mean),
            SizeDist::Cdf(c) => Some(c.mean()),
            SizeDist::LongLived => None,
        }
    }
}

impl SizeDist {
    /// The mean size of the draws below `bound` (the distribution conditioned on it),
    /// estimated from a fixed sample so that it is the same in every run; `None` for
    /// long-lived flows or when (almost) no draw falls below the bound.
    pub fn mean_below(&self, bound: u64) -> Option<f64> {
        let mut rng = Rng::new(0x5eed, 0, 0);
        let (mut sum, mut n) = (0.0, 0u32);
        for _ in 0..200_000 {
            match self.sample(&mut rng) {
                Some(s) if s < bound => {
                    sum += s as f64;
                    n += 1;
                }
                Some(_) => {}
                None => return None,
            }
        }
        (n >= 100).then(|| sum / n as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pareto_and_uniform_means() {
        let mut r = Rng::new(5, 0, 0);
        let n = 400_000;
        let d = SizeDist::Uniform {
            min: 1000,
            max: 3000,
        };
        let m = (0..n)
            .map(|_| d.sample(&mut r).unwrap() as f64)
            .sum::<f64>()
            / n as f64;
        assert!((m - 2000.0).abs() < 10.0);
        // Shape 2.5 has a finite variance, so the sample mean converges quickly.
        let d = SizeDist::Pareto {
            mean: 100_000.0,
            shape: 2.5,
        };
        let m = (0..n)
            .map(|_| d.sample(&mut r).unwrap() as f64)
            .sum::<f64>()
            / n as f64;
        assert!((m / 100_000.0 - 1.0).abs() < 0.03, "{m}");
    }
}
