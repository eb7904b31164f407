//! The flow-size distributions of traffic entries (`size`).

use crate::scenario::checker::Checker;
use crate::scenario::schema::SizeSpec;
use crate::workload::{EmpiricalCdf, SizeDist};
use std::path::Path;

/// The size distribution `s` (at `path`), checked; a CDF file is read from `base_dir`.
/// `None` when it cannot be drawn from.
pub(super) fn size_dist(
    s: &SizeSpec,
    path: &str,
    base_dir: &Path,
    c: &mut Checker,
) -> Option<SizeDist> {
    match s {
        SizeSpec::Fixed(b) => {
            c.at_least(path, *b, 1);
            Some(SizeDist::Fixed(*b))
        }
        SizeSpec::Uniform { min, max } => {
            c.at_least(&format!("{path}.min"), *min, 1);
            if max < min {
                c.err(
                    &format!("{path}.max"),
                    format!("must be at least min ({min}), got {max}"),
                );
            }
            Some(SizeDist::Uniform {
                min: *min,
                max: (*max).max(*min),
            })
        }
        SizeSpec::Pareto { mean, shape } => {
            c.positive(&format!("{path}.mean"), *mean);
            if !(shape.is_finite() && *shape > 1.0) {
                c.err(
                    &format!("{path}.shape"),
                    format!("must be greater than 1 (for a finite mean), got {shape}"),
                );
            }
            Some(SizeDist::Pareto {
                mean: *mean,
                shape: *shape,
            })
        }
        SizeSpec::Cdf(name) => cdf(name, path, base_dir, c).map(SizeDist::Cdf),
        SizeSpec::CdfStep(name) => {
            cdf(name, path, base_dir, c).map(|cdf| SizeDist::Cdf(cdf.stepwise()))
        }
        SizeSpec::LongLived => Some(SizeDist::LongLived),
    }
}

/// The CDF `name`: a built-in one or a file read from `base_dir`.
fn cdf(name: &str, path: &str, base_dir: &Path, c: &mut Checker) -> Option<EmpiricalCdf> {
    if let Some(cdf) = EmpiricalCdf::builtin(name) {
        return Some(cdf);
    }
    let file = base_dir.join(name);
    match std::fs::read_to_string(&file) {
        Err(e) => {
            c.err(path, format!("{name:?} is neither a built-in distribution (websearch, datamining) nor a readable file: {} ({e})", file.display()));
            None
        }
        Ok(text) => match EmpiricalCdf::parse(&text) {
            Ok(cdf) => Some(cdf),
            Err(e) => {
                c.err(path, format!("{}: {e}", file.display()));
                None
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::plan::tests::{errors, GOOD};

    #[test]
    fn missing_cdf_file() {
        let e = errors(&GOOD.replace("\"long_lived\"", "{ cdf = \"nope.cdf\" }"));
        assert!(
            e.contains("traffic[0].size") && e.contains("nope.cdf"),
            "{e}"
        );
    }

    #[test]
    fn distributions_are_checked() {
        let mut c = Checker::default();
        let dir = Path::new(".");
        let uniform = SizeSpec::Uniform { min: 10, max: 5 };
        assert_eq!(
            size_dist(&uniform, "s", dir, &mut c),
            Some(SizeDist::Uniform { min: 10, max: 10 })
        );
        let pareto = SizeSpec::Pareto {
            mean: 1e4,
            shape: 1.0,
        };
        assert!(size_dist(&pareto, "p", dir, &mut c).is_some());
        let builtin = SizeSpec::Cdf("websearch".into());
        assert!(size_dist(&builtin, "w", dir, &mut c).is_some());
        let paths: Vec<&str> = c.problems.iter().map(|p| p.0.as_str()).collect();
        assert_eq!(paths, ["s.max", "p.shape"]);
    }
}
