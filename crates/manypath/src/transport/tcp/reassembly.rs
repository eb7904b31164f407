//! A byte stream received out of order: the contiguous prefix and the ranges held beyond
//! it. Used for a TCP receiver's sequence space and a multipath connection's data space.

/// Ranges are kept sorted and disjoint; nothing is allocated once the vector has grown to
/// the largest number of holes seen.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reassembly {
    /// Next in-order byte expected.
    pub next: u64,
    ooo: Vec<(u64, u64)>,
    ooo_bytes: u64,
}

impl Reassembly {
    /// Bytes held beyond the in-order prefix.
    pub fn held(&self) -> u64 {
        self.ooo_bytes
    }

    /// The range held beyond the in-order prefix that contains `seq`.
    pub fn range_containing(&self, seq: u64) -> Option<(u64, u64)> {
        let i = self.ooo.partition_point(|&(s, _)| s <= seq);
        (i > 0 && self.ooo[i - 1].1 > seq).then(|| self.ooo[i - 1])
    }

    /// The missing parts of [start, end): how many separate holes and the first one.
    pub fn holes_in(&self, start: u64, end: u64) -> (usize, Option<(u64, u64)>) {
        let mut at = start.max(self.next);
        let mut n = 0;
        let mut first = None;
        let i = self.ooo.partition_point(|&(_, e)| e <= at);
        for &(s, e) in &self.ooo[i..] {
            if at >= end {
                break;
            }
            if s > at {
                n += 1;
                first.get_or_insert((at, s.min(end)));
            }
            at = at.max(e);
        }
        if at < end {
            n += 1;
            first.get_or_insert((at, end));
        }
        (n, first)
    }

    /// Adds [start, end); returns true if any of it was new.
    pub fn accept(&mut self, start: u64, end: u64) -> bool {
        if end <= self.next {
            return false;
        }
        if start <= self.next {
            self.next = end;
            // Pull in out-of-order ranges now contiguous.
            while let Some(&(s, e)) = self.ooo.first() {
                if s > self.next {
                    break;
                }
                self.ooo_bytes -= e - s;
                self.next = self.next.max(e);
                self.ooo.remove(0);
            }
            return true;
        }
        let i = self.ooo.partition_point(|&(s, _)| s < start);
        if i > 0 && self.ooo[i - 1].1 >= end
            || i < self.ooo.len() && self.ooo[i].0 == start && self.ooo[i].1 >= end
        {
            return false; // already held
        }
        self.ooo.insert(i, (start, end));
        self.ooo_bytes += end - start;
        let mut j = i.saturating_sub(1);
        while j + 1 < self.ooo.len() {
            let (s0, e0) = self.ooo[j];
            let (s1, e1) = self.ooo[j + 1];
            if s1 <= e0 {
                let overlap = e0.min(e1) - s1;
                self.ooo_bytes -= overlap;
                self.ooo[j] = (s0, e0.max(e1));
                self.ooo.remove(j + 1);
            } else {
                j += 1;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_holes_and_counts_held_bytes() {
        let mut r = Reassembly::default();
        assert!(r.accept(20, 30));
        assert!(r.accept(40, 50));
        assert_eq!(r.held(), 20);
        assert!(!r.accept(42, 48), "duplicate inside a held range");
        assert!(r.accept(25, 45));
        assert_eq!(r.held(), 30);
        assert!(r.accept(0, 20));
        assert_eq!(r.next, 50);
        assert_eq!(r.held(), 0);
        assert!(!r.accept(0, 50));
    }

    #[test]
    fn finds_ranges_and_holes() {
        let mut r = Reassembly::default();
        r.accept(0, 10);
        r.accept(20, 30);
        r.accept(40, 50);
        assert_eq!(r.range_containing(25), Some((20, 30)));
        assert_eq!(r.range_containing(30), None);
        assert_eq!(r.holes_in(0, 30), (1, Some((10, 20))));
        assert_eq!(r.holes_in(0, 60), (3, Some((10, 20))));
        assert_eq!(r.holes_in(20, 30), (0, None));
        assert_eq!(r.holes_in(25, 45), (1, Some((30, 40))));
    }
}
