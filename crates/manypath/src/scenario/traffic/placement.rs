//! `placement`: which of a traffic entry's hosts the ranks of a collective or a GOAL
//! schedule run on, one rank per host.

use crate::engine::rng::stream;
use crate::engine::Rng;
use crate::scenario::checker::Checker;

/// Which of the entry's hosts the ranks take (`placement`).
pub(super) enum Placement {
    /// Rank r on the entry's r-th host.
    Contiguous,
    /// Rank r on the entry's (r·⌊H/R⌋)-th host, for H hosts and R ranks.
    Strided,
    /// On R distinct hosts of the entry drawn from this stream (the entry's own).
    Random(Rng),
}

impl Placement {
    /// Field `field` (default `contiguous`) of traffic entry `entry` of a run of `seed`;
    /// `None` after naming an unknown placement.
    pub(super) fn of(
        name: Option<&str>,
        seed: u64,
        entry: usize,
        field: &str,
        c: &mut Checker,
    ) -> Option<Placement> {
        match name.unwrap_or("contiguous") {
            "contiguous" => Some(Placement::Contiguous),
            "strided" => Some(Placement::Strided),
            "random" => Some(Placement::Random(Rng::new(
                seed,
                stream::PLACEMENT,
                entry as u64,
            ))),
            other => {
                c.err(
                    field,
                    format!(
                        "unknown placement {other:?} (known: \"contiguous\", \"strided\", \"random\")"
                    ),
                );
                None
            }
        }
    }

    /// The hosts of `n` ranks (at most `hosts.len()`) among `hosts`.
    pub(super) fn hosts(&self, hosts: &[u32], n: usize) -> Vec<u32> {
        match self {
            Placement::Contiguous => hosts[..n].to_vec(),
            Placement::Strided => {
                let stride = hosts.len() / n.max(1);
                (0..n).map(|r| hosts[r * stride]).collect()
            }
            Placement::Random(rng) => {
                let mut rng = rng.clone();
                let mut pool = hosts.to_vec();
                // A partial Fisher–Yates shuffle: the first n are a uniform draw.
                for i in 0..n {
                    let j = i + rng.below((pool.len() - i) as u64) as usize;
                    pool.swap(i, j);
                }
                pool.truncate(n);
                pool
            }
        }
    }
}
