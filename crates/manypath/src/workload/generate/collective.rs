//! The `collective` pattern: a collective operation (all-reduce, all-gather,
//! reduce-scatter, all-to-all, broadcast) over a set of ranks, by one of the usual
//! algorithms, as a graph of transfers and triggers: a rank's next send waits for the
//! data it needs (the receives since its last send; or, having received nothing since,
//! its own previous sends), as MPI's and NCCL's implementations proceed. It is built
//! once, in rank space (`Shape`), then placed on hosts and repeated for each iteration
//! as a connection matrix (`MatrixGen`), so it runs, and is written out, as htsim's
//! files are.
//!
//! The algorithms are those of Thakur, Rabenseifner and Gropp, "Optimization of
//! Collective Communication Operations in MPICH" (IJHPCA 2005: ring, recursive
//! doubling, recursive halving and doubling, Bruck, pairwise exchange), Patarasuk and
//! Yuan 2009 (the bandwidth-optimal ring all-reduce), NCCL's double binary tree (Sanders,
//! Speck and Träff 2009: two binary trees, each carrying half the data, so every rank
//! is a leaf in one of them) and the hierarchical (two-level) ring all-reduce;
//! `docs/scenarios.md` gives each one's steps and sizes.

use crate::workload::TriggerKind;

/// The operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Collective {
    AllReduce,
    AllGather,
    ReduceScatter,
    AllToAll,
    Broadcast,
}

/// Every collective, in the order messages list them.
pub const COLLECTIVES: [Collective; 5] = [
    Collective::AllReduce,
    Collective::AllGather,
    Collective::ReduceScatter,
    Collective::AllToAll,
    Collective::Broadcast,
];

impl Collective {
    pub fn name(self) -> &'static str {
        match self {
            Collective::AllReduce => "allreduce",
            Collective::AllGather => "allgather",
            Collective::ReduceScatter => "reduce_scatter",
            Collective::AllToAll => "alltoall",
            Collective::Broadcast => "broadcast",
        }
    }

    /// The algorithms this collective has here, in the order messages list them.
    pub fn algorithms(self) -> &'static [Algorithm] {
        use Algorithm::*;
        match self {
            Collective::AllReduce => &[
                Ring,
                RecursiveDoubling,
                HalvingDoubling,
                Butterfly,
                DoubleBinaryTree,
                Hierarchical,
            ],
            Collective::AllGather => &[Ring, RecursiveDoubling, Bruck],
            Collective::ReduceScatter => &[Ring, HalvingDoubling, Pairwise],
            Collective::AllToAll => &[Pairwise, Bruck, Direct],
            Collective::Broadcast => &[Ring, RecursiveDoubling],
        }
    }
}

/// How the collective is carried out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    Ring,
    RecursiveDoubling,
    HalvingDoubling,
    /// htsim's name (its `gen_allreduce_butterfly.py`) for the pairwise exchange of the
    /// whole buffer at distances 1, 2, 4, ...: recursive doubling's steps.
    Butterfly,
    DoubleBinaryTree,
    Bruck,
    Pairwise,
    Hierarchical,
    /// Every transfer at once (an all-to-all as NCCL posts it: all sends in one group).
    Direct,
}

/// Every algorithm, in the order messages list them.
pub const ALGORITHMS: [Algorithm; 9] = [
    Algorithm::Ring,
    Algorithm::RecursiveDoubling,
    Algorithm::HalvingDoubling,
    Algorithm::Butterfly,
    Algorithm::DoubleBinaryTree,
    Algorithm::Bruck,
    Algorithm::Pairwise,
    Algorithm::Hierarchical,
    Algorithm::Direct,
];

impl Algorithm {
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Ring => "ring",
            Algorithm::RecursiveDoubling => "recursive_doubling",
            Algorithm::HalvingDoubling => "halving_doubling",
            Algorithm::Butterfly => "butterfly",
            Algorithm::DoubleBinaryTree => "double_binary_tree",
            Algorithm::Bruck => "bruck",
            Algorithm::Pairwise => "pairwise",
            Algorithm::Hierarchical => "hierarchical",
            Algorithm::Direct => "direct",
        }
    }

    /// Pairs ranks at distances 1, 2, 4, ...: the number of ranks must be a power of two.
    pub fn needs_power_of_two(self) -> bool {
        match self {
            Algorithm::RecursiveDoubling | Algorithm::HalvingDoubling | Algorithm::Butterfly => {
                true
            }
            Algorithm::Ring
            | Algorithm::DoubleBinaryTree
            | Algorithm::Bruck
            | Algorithm::Pairwise
            | Algorithm::Hierarchical
            | Algorithm::Direct => false,
        }
    }
}

/// A collective as a scenario gives it, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct CollectiveSpec {
    pub collective: Collective,
    pub algorithm: Algorithm,
    /// The buffer, in bytes: each rank's data for all-reduce, reduce-scatter's input and
    /// all-gather's output (the whole vector), each rank's send buffer for all-to-all
    /// (one N-th to each rank), the root's message for broadcast.
    pub bytes: u64,
    pub ranks: u32,
    /// Pipelined algorithms (double binary tree, ring broadcast): pieces per tree.
    pub chunks: u32,
    /// Hierarchical: ranks per group (consecutive ranks).
    pub group: u32,
}

/// One transfer between two ranks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transfer {
    pub src: u32,
    pub dst: u32,
    pub bytes: u64,
    /// The algorithm's step (a pipelined tree's: the chunk plus the sender's height).
    pub step: u16,
    /// Its channel between the two ranks (the double binary tree's tree; else 0).
    pub channel: u8,
    /// Indices in `Shape::triggers`.
    pub wait: Option<u32>,
    pub on_send_done: Option<u32>,
    pub on_recv_done: Option<u32>,
}

/// A collective in rank space: its transfers and the triggers that order them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Shape {
    pub transfers: Vec<Transfer>,
    pub triggers: Vec<TriggerKind>,
}

impl Shape {
    fn transfer(&mut self, src: u32, dst: u32, bytes: u64, step: usize) -> usize {
        self.transfers.push(Transfer {
            src,
            dst,
            bytes: bytes.max(1),
            step: step.min(u16::MAX as usize) as u16,
            channel: 0,
            wait: None,
            on_send_done: None,
            on_recv_done: None,
        });
        self.transfers.len() - 1
    }

    /// A trigger that `feeders`' receive-done (`recv`) or send-done activate, which
    /// starts `waiters`: a oneshot for one feeder, else a barrier over all.
    fn after(&mut self, feeders: &[usize], recv: bool, waiters: &[usize]) {
        if feeders.is_empty() || waiters.is_empty() {
            return;
        }
        let t = self.triggers.len() as u32;
        self.triggers.push(match feeders.len() {
            1 => TriggerKind::Oneshot,
            n => TriggerKind::Barrier { count: n as u32 },
        });
        for &f in feeders {
            let slot = if recv {
                &mut self.transfers[f].on_recv_done
            } else {
                &mut self.transfers[f].on_send_done
            };
            debug_assert!(slot.is_none(), "a transfer activates one trigger per event");
            *slot = Some(t);
        }
        for &w in waiters {
            self.transfers[w].wait = Some(t);
        }
    }

    /// The transfers whose receive-done nothing waits for: the ends of the collective.
    pub fn sinks(&self) -> Vec<usize> {
        (0..self.transfers.len())
            .filter(|&i| self.transfers[i].on_recv_done.is_none())
            .collect()
    }

    /// Steps of (src, dst, bytes), each rank's sends in a step waiting for what it
    /// received since its last send (or, having received nothing since, for its last
    /// sends to complete).
    fn from_steps(n: u32, steps: &[Vec<(u32, u32, u64)>]) -> Shape {
        let mut s = Shape::default();
        let mut recvs: Vec<Vec<usize>> = vec![Vec::new(); n as usize];
        let mut sends: Vec<Vec<usize>> = vec![Vec::new(); n as usize];
        // This step's sends, by rank.
        let mut mine: Vec<Vec<usize>> = vec![Vec::new(); n as usize];
        for (k, step) in steps.iter().enumerate() {
            let first = s.transfers.len();
            for &(src, dst, bytes) in step {
                let i = s.transfer(src, dst, bytes, k);
                mine[src as usize].push(i);
            }
            for r in 0..n as usize {
                if mine[r].is_empty() {
                    continue;
                }
                let got = std::mem::take(&mut recvs[r]);
                if got.is_empty() {
                    let sent = std::mem::take(&mut sends[r]);
                    s.after(&sent, false, &mine[r]);
                } else {
                    s.after(&got, true, &mine[r]);
                }
                sends[r] = std::mem::take(&mut mine[r]);
            }
            for i in first..s.transfers.len() {
                recvs[s.transfers[i].dst as usize].push(i);
            }
        }
        s
    }
}

/// Byte `i`'s share when `bytes` are cut into `n` near-equal blocks: the size of block `i`.
fn block(bytes: u64, n: u64, i: u64) -> u64 {
    let edge = |j: u64| (bytes as u128 * j as u128 / n as u128) as u64;
    edge(i + 1) - edge(i)
}

/// `log2(n)` for a power of two, else the number of doublings to reach `n`.
fn doublings(n: u32) -> u32 {
    32 - (n - 1).leading_zeros()
}

impl CollectiveSpec {
    /// The collective's transfers and triggers, in rank space. Validation has checked
    /// that the algorithm applies, the ranks (at least two; a power of two where needed;
    /// a multiple of the group) and the bytes (at least one per rank).
    pub fn shape(&self) -> Shape {
        let n = self.ranks;
        let s = self.bytes;
        let nn = n as u64;
        let ring_rs = |k: u32| -> Vec<(u32, u32, u64)> {
            (0..n)
                .map(|r| (r, (r + 1) % n, block(s, nn, ((r + n - k) % n) as u64)))
                .collect()
        };
        let ring_ag = |k: u32| -> Vec<(u32, u32, u64)> {
            (0..n)
                .map(|r| (r, (r + 1) % n, block(s, nn, ((r + 1 + n - k) % n) as u64)))
                .collect()
        };
        let exchange = |d: u32, bytes: u64| -> Vec<(u32, u32, u64)> {
            (0..n).map(|r| (r, r ^ d, bytes)).collect()
        };
        let levels = doublings(n);
        let steps: Vec<Vec<(u32, u32, u64)>> = match (self.collective, self.algorithm) {
            (Collective::AllReduce, Algorithm::Ring) => (0..n - 1)
                .map(ring_rs)
                .chain((0..n - 1).map(ring_ag))
                .collect(),
            (Collective::AllReduce, Algorithm::RecursiveDoubling | Algorithm::Butterfly) => {
                (0..levels).map(|k| exchange(1 << k, s)).collect()
            }
            (Collective::AllReduce, Algorithm::HalvingDoubling) => (0..levels)
                .map(|k| exchange(n >> (k + 1), s >> (k + 1)))
                .chain((0..levels).map(|k| exchange(1 << k, (s << k) / nn)))
                .collect(),
            (Collective::AllReduce, Algorithm::DoubleBinaryTree) => return self.double_tree(),
            (Collective::AllReduce, Algorithm::Hierarchical) => self.hierarchical(),
            (Collective::AllGather, Algorithm::Ring) => (0..n - 1).map(ring_ag).collect(),
            (Collective::AllGather, Algorithm::RecursiveDoubling) => (0..levels)
                .map(|k| exchange(1 << k, (s << k) / nn))
                .collect(),
            (Collective::AllGather, Algorithm::Bruck) => (0..levels)
                .map(|k| {
                    let d = 1u32 << k;
                    let blocks = d.min(n - d) as u64;
                    (0..n)
                        .map(|r| (r, (r + n - d) % n, blocks * s / nn))
                        .collect()
                })
                .collect(),
            (Collective::ReduceScatter, Algorithm::Ring) => (0..n - 1).map(ring_rs).collect(),
            (Collective::ReduceScatter, Algorithm::HalvingDoubling) => (0..levels)
                .map(|k| exchange(n >> (k + 1), s >> (k + 1)))
                .collect(),
            (Collective::ReduceScatter | Collective::AllToAll, Algorithm::Pairwise) => (1..n)
                .map(|k| {
                    (0..n)
                        .map(|r| (r, (r + k) % n, block(s, nn, ((r + k) % n) as u64)))
                        .collect()
                })
                .collect(),
            (Collective::AllToAll, Algorithm::Bruck) => (0..levels)
                .map(|k| {
                    let d = 1u32 << k;
                    let blocks = (0..n).filter(|j| j & d != 0).count() as u64;
                    (0..n).map(|r| (r, (r + d) % n, blocks * s / nn)).collect()
                })
                .collect(),
            (Collective::AllToAll, Algorithm::Direct) => vec![(0..n)
                .flat_map(|r| {
                    (1..n).map(move |k| (r, (r + k) % n, block(s, nn, ((r + k) % n) as u64)))
                })
                .collect()],
            (Collective::Broadcast, Algorithm::Ring) => {
                let c = self.chunks;
                (0..n - 1 + c - 1)
                    .map(|t| {
                        (0..n - 1)
                            .filter(|&r| t >= r && t - r < c)
                            .map(|r| (r, r + 1, block(s, c as u64, (t - r) as u64)))
                            .collect()
                    })
                    .collect()
            }
            (Collective::Broadcast, Algorithm::RecursiveDoubling) => (0..levels)
                .map(|k| {
                    let d = 1u32 << k;
                    (0..d.min(n))
                        .filter(|r| r + d < n)
                        .map(|r| (r, r + d, s))
                        .collect()
                })
                .collect(),
            (Collective::AllReduce, Algorithm::Bruck | Algorithm::Pairwise | Algorithm::Direct)
            | (
                Collective::AllGather,
                Algorithm::HalvingDoubling
                | Algorithm::Butterfly
                | Algorithm::DoubleBinaryTree
                | Algorithm::Pairwise
                | Algorithm::Hierarchical
                | Algorithm::Direct,
            )
            | (
                Collective::ReduceScatter,
                Algorithm::RecursiveDoubling
                | Algorithm::Butterfly
                | Algorithm::DoubleBinaryTree
                | Algorithm::Bruck
                | Algorithm::Hierarchical
                | Algorithm::Direct,
            )
            | (
                Collective::AllToAll,
                Algorithm::Ring
                | Algorithm::RecursiveDoubling
                | Algorithm::HalvingDoubling
                | Algorithm::Butterfly
                | Algorithm::DoubleBinaryTree
                | Algorithm::Hierarchical,
            )
            | (
                Collective::Broadcast,
                Algorithm::HalvingDoubling
                | Algorithm::Butterfly
                | Algorithm::DoubleBinaryTree
                | Algorithm::Bruck
                | Algorithm::Pairwise
                | Algorithm::Hierarchical
                | Algorithm::Direct,
            ) => unreachable!("validation refuses {self:?}"),
        };
        Shape::from_steps(n, &steps)
    }

    /// Ring reduce-scatter within each group of consecutive ranks, ring all-reduce of
    /// each rank's 1/g across the groups (between the ranks of the same place in their
    /// groups), ring all-gather within each group.
    fn hierarchical(&self) -> Vec<Vec<(u32, u32, u64)>> {
        let (n, g, s) = (self.ranks, self.group, self.bytes);
        let groups = n / g;
        let within = |r: u32, shift: u32| r / g * g + (r % g + shift) % g;
        let across = |r: u32| (r + g) % n;
        let mut steps = Vec::new();
        for k in 0..g - 1 {
            steps.push(
                (0..n)
                    .map(|r| {
                        (
                            r,
                            within(r, 1),
                            block(s, g as u64, ((r % g + g - k) % g) as u64),
                        )
                    })
                    .collect(),
            );
        }
        // After the reduce-scatter, rank l of a group holds block l + 1 of the group's g.
        let part = |r: u32| block(s, g as u64, ((r % g + 1) % g) as u64);
        for k in 0..2 * (groups - 1) {
            let idx = |r: u32| {
                let me = r / g;
                if k < groups - 1 {
                    (me + groups - k) % groups
                } else {
                    (me + 1 + groups - (k - (groups - 1))) % groups
                }
            };
            steps.push(
                (0..n)
                    .map(|r| (r, across(r), block(part(r), groups as u64, idx(r) as u64)))
                    .collect(),
            );
        }
        for k in 0..g - 1 {
            steps.push(
                (0..n)
                    .map(|r| {
                        let i = (r % g + 1 + g - k) % g;
                        (r, within(r, 1), block(s, g as u64, i as u64))
                    })
                    .collect(),
            );
        }
        steps
    }

    /// Two binary trees, the second over the ranks shifted by one, each reducing half
    /// the buffer to its root and broadcasting it back, pipelined in `chunks` pieces:
    /// a node sends a piece up once its children's pieces have arrived (a leaf, once
    /// its previous piece is sent), and down once it has it from its parent.
    fn double_tree(&self) -> Shape {
        let n = self.ranks;
        let c = self.chunks as u64;
        let mut s = Shape::default();
        for tree in 0..2u32 {
            let half = block(self.bytes, 2, tree as u64);
            let parent = in_order_tree(n, tree);
            let children: Vec<Vec<u32>> = (0..n)
                .map(|x| (0..n).filter(|&y| parent[y as usize] == Some(x)).collect())
                .collect();
            let height = heights(&children, &parent);
            let depth = depths(&parent);
            let top = *height.iter().max().unwrap_or(&0) as usize;
            let mut prev_up: Vec<Option<usize>> = vec![None; n as usize];
            for k in 0..c {
                let bytes = block(half, c, k);
                // Up, leaves first.
                let mut up: Vec<Option<usize>> = vec![None; n as usize];
                let mut order: Vec<u32> = (0..n).collect();
                order.sort_by_key(|&x| height[x as usize]);
                for &x in &order {
                    let Some(p) = parent[x as usize] else {
                        continue;
                    };
                    let i = s.transfer(x, p, bytes, k as usize + height[x as usize] as usize);
                    s.transfers[i].channel = tree as u8;
                    up[x as usize] = Some(i);
                    let kids: Vec<usize> = children[x as usize]
                        .iter()
                        .filter_map(|&y| up[y as usize])
                        .collect();
                    if kids.is_empty() {
                        if let Some(prev) = prev_up[x as usize] {
                            s.after(&[prev], false, &[i]);
                        }
                    } else {
                        s.after(&kids, true, &[i]);
                    }
                }
                // Down, from the root.
                let mut down: Vec<Option<usize>> = vec![None; n as usize];
                let mut order: Vec<u32> = (0..n).collect();
                order.sort_by_key(|&x| depth[x as usize]);
                for &x in &order {
                    if children[x as usize].is_empty() {
                        continue;
                    }
                    let sends: Vec<usize> = children[x as usize]
                        .iter()
                        .map(|&y| {
                            let step = k as usize + top + 1 + depth[x as usize] as usize;
                            let i = s.transfer(x, y, bytes, step);
                            s.transfers[i].channel = tree as u8;
                            down[y as usize] = Some(i);
                            i
                        })
                        .collect();
                    match down[x as usize] {
                        Some(from_parent) => s.after(&[from_parent], true, &sends),
                        None => {
                            let kids: Vec<usize> = children[x as usize]
                                .iter()
                                .filter_map(|&y| up[y as usize])
                                .collect();
                            s.after(&kids, true, &sends);
                        }
                    }
                }
                prev_up = up;
            }
        }
        s
    }
}

/// The parent of each rank in a balanced in-order binary tree over ranks 0..n (the
/// middle rank of a range is the root of its subtree); tree 1 is the same over the
/// ranks shifted by one, so a rank inner in one tree is mostly a leaf of the other.
fn in_order_tree(n: u32, tree: u32) -> Vec<Option<u32>> {
    let mut parent = vec![None; n as usize];
    let label = |i: u32| (i + tree) % n;
    // (lo, hi, parent position)
    let mut stack = vec![(0u32, n, None::<u32>)];
    while let Some((lo, hi, up)) = stack.pop() {
        if lo >= hi {
            continue;
        }
        let mid = lo + (hi - lo) / 2;
        parent[label(mid) as usize] = up.map(label);
        stack.push((lo, mid, Some(mid)));
        stack.push((mid + 1, hi, Some(mid)));
    }
    parent
}

fn heights(children: &[Vec<u32>], parent: &[Option<u32>]) -> Vec<u32> {
    let n = parent.len();
    let mut h = vec![0u32; n];
    // Repeated relaxation: a tree of n nodes is at most n deep.
    for _ in 0..n {
        let mut changed = false;
        for x in 0..n {
            let v = children[x]
                .iter()
                .map(|&y| h[y as usize] + 1)
                .max()
                .unwrap_or(0);
            if v != h[x] {
                h[x] = v;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    h
}

fn depths(parent: &[Option<u32>]) -> Vec<u32> {
    (0..parent.len())
        .map(|mut x| {
            let mut d = 0;
            while let Some(p) = parent[x] {
                x = p as usize;
                d += 1;
            }
            d
        })
        .collect()
}

/// One run (iteration) of a collective job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CollectiveRun {
    pub job: u32,
    pub iteration: u32,
    pub collective: Collective,
    pub algorithm: Algorithm,
    /// Rank r runs on `hosts[r]`.
    pub hosts: Vec<u32>,
    pub bytes: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(collective: Collective, algorithm: Algorithm, ranks: u32) -> CollectiveSpec {
        CollectiveSpec {
            collective,
            algorithm,
            bytes: 1 << 20,
            ranks,
            chunks: 1,
            group: 4,
        }
    }

    /// Bytes each rank sends and receives, over the whole collective.
    fn volumes(s: &Shape, n: u32) -> (Vec<u64>, Vec<u64>) {
        let mut out = vec![0; n as usize];
        let mut inn = vec![0; n as usize];
        for t in &s.transfers {
            out[t.src as usize] += t.bytes;
            inn[t.dst as usize] += t.bytes;
        }
        (out, inn)
    }

    #[test]
    fn each_algorithm_moves_the_textbook_volume_in_the_textbook_steps() {
        let n = 8u32;
        let s = 1u64 << 20;
        let per = s / n as u64;
        // (collective, algorithm, steps, bytes each rank sends)
        let cases = [
            (Collective::AllReduce, Algorithm::Ring, 14, 2 * 7 * per),
            (
                Collective::AllReduce,
                Algorithm::RecursiveDoubling,
                3,
                3 * s,
            ),
            (Collective::AllReduce, Algorithm::Butterfly, 3, 3 * s),
            (
                Collective::AllReduce,
                Algorithm::HalvingDoubling,
                6,
                2 * 7 * per,
            ),
            (Collective::AllReduce, Algorithm::Hierarchical, 3 + 2 + 3, 0),
            (Collective::AllGather, Algorithm::Ring, 7, 7 * per),
            (
                Collective::AllGather,
                Algorithm::RecursiveDoubling,
                3,
                7 * per,
            ),
            (Collective::AllGather, Algorithm::Bruck, 3, 7 * per),
            (Collective::ReduceScatter, Algorithm::Ring, 7, 7 * per),
            (
                Collective::ReduceScatter,
                Algorithm::HalvingDoubling,
                3,
                7 * per,
            ),
            (Collective::ReduceScatter, Algorithm::Pairwise, 7, 7 * per),
            (Collective::AllToAll, Algorithm::Pairwise, 7, 7 * per),
            (Collective::AllToAll, Algorithm::Bruck, 3, 3 * 4 * per),
            (Collective::AllToAll, Algorithm::Direct, 1, 7 * per),
        ];
        for (c, a, steps, sent) in cases {
            let shape = spec(c, a, n).shape();
            let got_steps = shape.transfers.iter().map(|t| t.step).max().unwrap() + 1;
            assert_eq!(got_steps as u32, steps, "{c:?} {a:?}");
            let (out, inn) = volumes(&shape, n);
            if sent > 0 {
                assert!(out.iter().all(|&b| b == sent), "{c:?} {a:?} {out:?}");
            }
            assert_eq!(out.iter().sum::<u64>(), inn.iter().sum::<u64>());
            assert!(shape.transfers.iter().all(|t| t.src != t.dst && t.dst < n));
        }
    }

    #[test]
    fn a_ring_step_waits_for_the_piece_it_forwards() {
        let shape = spec(Collective::AllReduce, Algorithm::Ring, 4).shape();
        assert_eq!(shape.transfers.len(), 4 * 6);
        for t in &shape.transfers[4..] {
            // The trigger it waits for is activated by the receive into its sender.
            let w = t.wait.unwrap();
            let feeders: Vec<&Transfer> = shape
                .transfers
                .iter()
                .filter(|u| u.on_recv_done == Some(w))
                .collect();
            assert_eq!(feeders.len(), 1);
            assert_eq!(feeders[0].dst, t.src);
            assert_eq!(feeders[0].step + 1, t.step);
        }
        assert!(shape.transfers[..4].iter().all(|t| t.wait.is_none()));
        assert_eq!(shape.triggers, vec![TriggerKind::Oneshot; 4 * 5]);
        assert_eq!(shape.sinks().len(), 4);
    }

    #[test]
    fn binomial_broadcast_reaches_every_rank_once_and_chains_the_roots_sends() {
        let shape = spec(Collective::Broadcast, Algorithm::RecursiveDoubling, 6).shape();
        let mut dsts: Vec<u32> = shape.transfers.iter().map(|t| t.dst).collect();
        dsts.sort();
        assert_eq!(dsts, [1, 2, 3, 4, 5]);
        let root: Vec<&Transfer> = shape.transfers.iter().filter(|t| t.src == 0).collect();
        assert_eq!(root.len(), 3);
        assert!(root[0].wait.is_none());
        assert_eq!(root[1].wait, root[0].on_send_done);
        assert_eq!(root[2].wait, root[1].on_send_done);
    }

    #[test]
    fn the_double_tree_reduces_each_half_to_a_root_and_sends_it_back() {
        for n in [2u32, 3, 7, 8, 16] {
            for chunks in [1u32, 4] {
                let sp = CollectiveSpec {
                    chunks,
                    ..spec(Collective::AllReduce, Algorithm::DoubleBinaryTree, n)
                };
                let shape = sp.shape();
                // Per tree and piece: n − 1 transfers up and n − 1 down.
                assert_eq!(shape.transfers.len() as u32, 2 * chunks * 2 * (n - 1));
                let (out, inn) = volumes(&shape, n);
                assert_eq!(out.iter().sum::<u64>(), 2 * (n as u64 - 1) * sp.bytes);
                assert_eq!(out.iter().sum::<u64>(), inn.iter().sum::<u64>());
                // Every rank receives the whole result: its two halves come down to it
                // unless it is that tree's root.
                assert!(inn.iter().all(|&b| b >= sp.bytes / 2), "{n} {inn:?}");
            }
        }
        let trees: Vec<Vec<Option<u32>>> = (0..2).map(|t| in_order_tree(8, t)).collect();
        assert_eq!(trees[0].iter().filter(|p| p.is_none()).count(), 1);
        let inner = |t: &Vec<Option<u32>>, x: u32| t.contains(&Some(x));
        let both = (0..8)
            .filter(|&x| inner(&trees[0], x) && inner(&trees[1], x))
            .count();
        assert!(both <= 2, "most ranks are inner in one tree only: {both}");
    }
}
