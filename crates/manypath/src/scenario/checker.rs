//! The field checker every step of a scenario's validation reports to. Problems are
//! collected, not just the first, each as `(dotted path of the field, what was expected,
//! got what)`.

use crate::time::{from_us, SimTime};

/// The longest time a scenario may name, in µs: 10^6 s, so sums of times stay far
/// below the 2^64 ps (≈ 213 days) the clock holds.
pub(super) const MAX_TIME_US: f64 = 1e12;

#[derive(Default)]
pub(super) struct Checker {
    pub(super) problems: Vec<(String, String)>,
    /// What is valid but likely not meant (overload, ...), as `(path, message)`.
    pub(super) warnings: Vec<(String, String)>,
}

/// A number as a message shows it: plainly, or in exponent form when it is very large
/// or very small (1e300, not 301 digits).
pub(super) fn show(v: f64) -> String {
    if v != 0.0 && v.is_finite() && !(1e-6..1e15).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

impl Checker {
    pub(super) fn err(&mut self, path: &str, msg: String) {
        self.problems.push((path.to_string(), msg));
    }
    /// Each field of `fields` that is given (`true`) is an error under `path`: `why`
    /// (the fields a pattern or kind does not take).
    pub(super) fn not_given(&mut self, path: &str, fields: &[(&str, bool)], why: &str) {
        for &(field, given) in fields {
            if given {
                self.err(&format!("{path}.{field}"), why.to_string());
            }
        }
    }

    pub(super) fn warn(&mut self, path: &str, msg: String) {
        self.warnings.push((path.to_string(), msg));
    }
    /// A number of strict-priority levels: from `least` to `MAX_PRIORITY_LEVELS`, the
    /// one rule for a queue's `priority_levels` and Homa's `homa_priority_levels`.
    /// Whether it is in range.
    pub(super) fn priority_levels(&mut self, path: &str, n: u8, least: u8) -> bool {
        let most = crate::net::packet::MAX_PRIORITY_LEVELS;
        let ok = (least..=most).contains(&n);
        if !ok {
            self.err(
                path,
                format!(
                    "must be from {least} to {most} (a switch queue has at most {most} \
                     priority levels), got {n}"
                ),
            );
        }
        ok
    }
    pub(super) fn positive(&mut self, path: &str, v: f64) {
        if !(v.is_finite() && v > 0.0) {
            self.err(path, format!("must be a positive number, got {}", show(v)));
        }
    }
    /// A rate in Gbit/s the simulator can represent: 1 kbit/s to 100 Tbit/s.
    pub(super) fn rate_gbps(&mut self, path: &str, v: f64) {
        if !(v.is_finite() && (1e-6..=1e5).contains(&v)) {
            self.err(
                path,
                format!(
                    "must be a rate between 0.000001 and 100000 Gbps, got {}",
                    show(v)
                ),
            );
        }
    }
    /// A time the picosecond clock can hold with room to add to it: at most 10^6 s.
    pub(super) fn time_us(&mut self, path: &str, v: f64) {
        if v.is_finite() && v > MAX_TIME_US {
            self.err(
                path,
                format!(
                    "must be at most {MAX_TIME_US:e} µs (about 11 days), got {}",
                    show(v)
                ),
            );
        }
    }
    /// A time in ms the picosecond clock can hold with room to add to it.
    pub(super) fn time_ms(&mut self, path: &str, v: f64) {
        if v.is_finite() && v * 1e3 > MAX_TIME_US {
            self.err(
                path,
                format!(
                    "must be at most {:e} ms (about 11 days), got {}",
                    MAX_TIME_US / 1e3,
                    show(v)
                ),
            );
        }
    }
    pub(super) fn non_negative(&mut self, path: &str, v: f64) {
        if !(v.is_finite() && v >= 0.0) {
            self.err(path, format!("must be zero or positive, got {}", show(v)));
        }
    }
    pub(super) fn at_least(&mut self, path: &str, v: u64, min: u64) {
        if v < min {
            self.err(path, format!("must be at least {min}, got {v}"));
        }
    }
    pub(super) fn at_most(&mut self, path: &str, v: u64, max: u64) {
        if v > max {
            self.err(path, format!("must be at most {max}, got {v}"));
        }
    }

    /// An optional time in µs, checked (positive, or zero or positive, and representable)
    /// and converted; `default` when unset, and in place of a value that cannot be
    /// converted (already reported), so validation can go on.
    pub(super) fn time(
        &mut self,
        path: &str,
        v: Option<f64>,
        default: SimTime,
        positive: bool,
    ) -> SimTime {
        match v {
            None => default,
            Some(x) => {
                if positive {
                    self.positive(path, x);
                } else {
                    self.non_negative(path, x);
                }
                self.time_us(path, x);
                if x.is_finite() && (0.0..=MAX_TIME_US).contains(&x) {
                    from_us(x)
                } else {
                    default
                }
            }
        }
    }

    /// The rule of fields that only some kinds of an entry take (a controller's
    /// parameters, a fault kind's fields): a field `set` on an entry of kind `kind`,
    /// which is not among `takers`, is an error naming the kinds that take it. `key` is
    /// the field that gives the kind (`cc`, `kind`).
    pub(super) fn applies_only(
        &mut self,
        path: &str,
        set: bool,
        key: &str,
        kind: &str,
        takers: &[&str],
    ) {
        if set && !takers.contains(&kind) {
            self.err(
                path,
                format!(
                    "applies only to {key} = {}, not {kind}",
                    takers.join(" or ")
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_of_another_kind_names_the_kinds_that_take_it() {
        let mut c = Checker::default();
        c.applies_only("x.beta", true, "cc", "olia", &["lia", "xmp"]);
        c.applies_only("x.beta", true, "cc", "xmp", &["lia", "xmp"]);
        c.applies_only("x.beta", false, "cc", "olia", &["lia", "xmp"]);
        assert_eq!(
            c.problems,
            [(
                "x.beta".to_string(),
                "applies only to cc = lia or xmp, not olia".to_string()
            )]
        );
    }

    #[test]
    fn times_are_checked_and_converted() {
        let mut c = Checker::default();
        assert_eq!(c.time("a", None, 7, true), 7);
        assert_eq!(c.time("a", Some(2.0), 7, true), from_us(2.0));
        assert!(c.problems.is_empty());
        assert_eq!(c.time("b", Some(0.0), 7, true), 0);
        assert_eq!(c.time("c", Some(-1.0), 7, false), 7);
        assert_eq!(c.time("d", Some(1e13), 7, false), 7);
        let paths: Vec<&str> = c.problems.iter().map(|p| p.0.as_str()).collect();
        assert_eq!(paths, ["b", "c", "d"]);
    }
}
