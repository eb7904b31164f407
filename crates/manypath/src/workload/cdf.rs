//! Empirical flow-size CDFs (`<size_bytes> <cdf>` per line, `#` comments), sampled by
//! inverting the piecewise-linear CDF, or, `stepwise`, as a step function (each listed
//! size has the probability of the CDF's step at it, as Homa's simulator draws its
//! workloads). A repeated size is a vertical step, i.e. a point mass; a first row with
//! cdf > 0 is a point mass at that size.

use crate::engine::Rng;

#[derive(Clone, Debug, PartialEq)]
pub struct EmpiricalCdf {
    points: Vec<(f64, f64)>,
    /// Sample the listed sizes only (a step function), not between them.
    step: bool,
}

/// The distributions shipped with the project, by name.
pub const BUILTIN: &[(&str, &str)] = &[
    (
        "websearch",
        include_str!("../../../../workloads/websearch.cdf"),
    ),
    (
        "datamining",
        include_str!("../../../../workloads/datamining.cdf"),
    ),
];

impl EmpiricalCdf {
    pub fn builtin(name: &str) -> Option<EmpiricalCdf> {
        BUILTIN
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, text)| EmpiricalCdf::parse(text).expect("shipped CDF is valid"))
    }

    /// Parses the text of a CDF file; the error names the line.
    pub fn parse(text: &str) -> Result<EmpiricalCdf, String> {
        let mut points: Vec<(f64, f64)> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let cols: Vec<&str> = line.split_whitespace().collect();
            if cols.len() != 2 {
                return Err(format!(
                    "line {}: expected '<size_bytes> <cdf>', got {line:?}",
                    i + 1
                ));
            }
            let x: f64 = cols[0]
                .parse()
                .map_err(|_| format!("line {}: size {:?} is not a number", i + 1, cols[0]))?;
            let f: f64 = cols[1]
                .parse()
                .map_err(|_| format!("line {}: cdf {:?} is not a number", i + 1, cols[1]))?;
            if !(x >= 0.0 && x.is_finite()) {
                return Err(format!(
                    "line {}: size must be a non-negative number, got {x}",
                    i + 1
                ));
            }
            if !(0.0..=1.0).contains(&f) {
                return Err(format!("line {}: cdf must be in [0, 1], got {f}", i + 1));
            }
            if let Some(&(px, pf)) = points.last() {
                if x < px || f < pf {
                    return Err(format!(
                        "line {}: sizes and cdf values must not decrease",
                        i + 1
                    ));
                }
            }
            points.push((x, f));
        }
        match points.last() {
            None => Err("no data points".into()),
            Some(&(_, f)) if (f - 1.0).abs() > 1e-9 => {
                Err(format!("the last cdf value must be 1, got {f}"))
            }
            _ => Ok(EmpiricalCdf {
                points,
                step: false,
            }),
        }
    }

    /// The same distribution sampled as a step function.
    pub fn stepwise(self) -> EmpiricalCdf {
        EmpiricalCdf { step: true, ..self }
    }

    /// Inverse-CDF sample with linear interpolation (or, stepwise, the first listed size
    /// whose cdf exceeds the draw), rounded up to whole bytes (≥ 1).
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        let u = rng.uniform();
        let i = self.points.partition_point(|&(_, f)| f <= u);
        let x = if self.step {
            self.points[i.min(self.points.len() - 1)].0
        } else if i == 0 {
            self.points[0].0
        } else if i >= self.points.len() {
            self.points[self.points.len() - 1].0
        } else {
            let (x0, f0) = self.points[i - 1];
            let (x1, f1) = self.points[i];
            x0 + (x1 - x0) * (u - f0) / (f1 - f0)
        };
        (x.ceil() as u64).max(1)
    }

    /// Mean under linear interpolation (a point mass at the first size if its cdf > 0),
    /// or of the step function (each size with its step).
    pub fn mean(&self) -> f64 {
        let (x0, f0) = self.points[0];
        let mut m = x0 * f0;
        for w in self.points.windows(2) {
            let x = if self.step {
                w[1].0
            } else {
                (w[0].0 + w[1].0) / 2.0
            };
            m += (w[1].1 - w[0].1) * x;
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_means_match_their_headers() {
        assert!((EmpiricalCdf::builtin("websearch").unwrap().mean() - 1_711_250.0).abs() < 1.0);
        assert!((EmpiricalCdf::builtin("datamining").unwrap().mean() - 7_470_236.0).abs() < 1.0);
    }

    #[test]
    fn sampling_matches_the_mean_and_point_masses() {
        let cdf = EmpiricalCdf::builtin("datamining").unwrap();
        let mut r = Rng::new(3, 0, 0);
        let n = 200_000;
        let one_packet = (0..n).filter(|_| cdf.sample(&mut r) == 1460).count();
        assert!(
            (one_packet as f64 / n as f64 - 0.5).abs() < 0.01,
            "50% of flows are one packet"
        );
        let cdf = EmpiricalCdf::parse("0 0\n100 0.5\n200 1\n").unwrap();
        let mean = (0..n).map(|_| cdf.sample(&mut r) as f64).sum::<f64>() / n as f64;
        assert!((mean - cdf.mean()).abs() < 1.5, "{mean}");
    }

    #[test]
    fn stepwise_draws_only_listed_sizes_with_their_steps() {
        let cdf = EmpiricalCdf::parse("100 0.25\n200 0.5\n1000 1\n")
            .unwrap()
            .stepwise();
        assert_eq!(cdf.mean(), 100.0 * 0.25 + 200.0 * 0.25 + 1000.0 * 0.5);
        let mut r = Rng::new(5, 0, 0);
        let n = 100_000;
        let draws: Vec<u64> = (0..n).map(|_| cdf.sample(&mut r)).collect();
        assert!(draws.iter().all(|d| [100, 200, 1000].contains(d)));
        let share = |x| draws.iter().filter(|&&d| d == x).count() as f64 / n as f64;
        assert!((share(100) - 0.25).abs() < 0.01 && (share(1000) - 0.5).abs() < 0.01);
        // The shipped Homa W4 file's step mean is its header's (127,796.6 B).
        let text = include_str!("../../../../workloads/homa_w4_fb_hadoop.cdf");
        let w4 = EmpiricalCdf::parse(text).unwrap().stepwise();
        assert!((w4.mean() - 127_796.6).abs() < 1.0, "{}", w4.mean());
    }

    #[test]
    fn rejects_bad_files() {
        assert!(EmpiricalCdf::parse("").is_err());
        assert!(EmpiricalCdf::parse("10 0.5\n5 1\n")
            .unwrap_err()
            .contains("line 2"));
        assert!(EmpiricalCdf::parse("10 0.5\n")
            .unwrap_err()
            .contains("last cdf"));
        assert!(EmpiricalCdf::parse("10 abc\n")
            .unwrap_err()
            .contains("not a number"));
    }
}
