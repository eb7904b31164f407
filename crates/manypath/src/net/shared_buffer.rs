//! A switch's shared packet buffer: one pool of B bytes for all its output queues, with
//! per-queue admission by dynamic threshold.
//!
//! Dynamic threshold (A. K. Choudhury and E. L. Hahne, "Dynamic queue length thresholds
//! for shared-memory packet switches", IEEE/ACM Transactions on Networking 6(2), 1998):
//! a queue of class c may hold at most α_c times the buffer still free, so a packet of
//! s bytes joins queue q iff
//!
//! ```text
//! occupancy(q) + s ≤ α_c · (B − total occupancy)   and   total occupancy + s ≤ B.
//! ```
//!
//! The threshold falls as the buffer fills, which leaves some space free for queues that
//! become active later. With N queues kept busy, each settles at α·B / (1 + α·N): the
//! fixed point of Q = α·(B − N·Q). An optional static per-queue limit (in bytes) applies
//! on top, as a drop-tail queue limit does.
//!
//! The state machine is sans-IO and allocates only at construction: queues are numbered
//! 0..n, and the caller reports each packet it enqueues (after `admit` accepted it) and
//! each packet that leaves the queue.

/// Why a packet was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The buffer has fewer than s bytes free.
    BufferFull,
    /// The queue would exceed α_c times the free buffer.
    OverThreshold,
    /// The queue would exceed its static limit.
    QueueLimit,
}

/// Counters of one queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueCounters {
    pub admitted_packets: u64,
    pub admitted_bytes: u64,
    pub departed_packets: u64,
    pub departed_bytes: u64,
    pub drops_buffer_full: u64,
    pub drops_threshold: u64,
    pub drops_queue_limit: u64,
    /// The largest occupancy the queue has reached (bytes).
    pub peak_bytes: u64,
}

impl QueueCounters {
    pub fn drops(&self) -> u64 {
        self.drops_buffer_full + self.drops_threshold + self.drops_queue_limit
    }
}

#[derive(Clone, Debug)]
pub struct SharedBuffer {
    /// B, in bytes.
    capacity: u64,
    /// α per class.
    alpha: Vec<f64>,
    /// Each queue's class (an index into `alpha`).
    class: Vec<u8>,
    /// A static limit per queue (bytes), applied to every queue.
    queue_limit: Option<u64>,
    occupancy: Vec<u64>,
    total: u64,
    peak_total: u64,
    counters: Vec<QueueCounters>,
}

impl SharedBuffer {
    /// A buffer of `capacity` bytes shared by `classes.len()` queues, queue q being of
    /// class `classes[q]` and limited to `alpha[classes[q]]` times the free buffer.
    ///
    /// Panics if an α is not finite and positive or a queue names a class without one
    /// (the scenario's checks refuse these first).
    pub fn new(capacity: u64, alpha: Vec<f64>, classes: Vec<u8>) -> SharedBuffer {
        for (c, a) in alpha.iter().enumerate() {
            assert!(
                a.is_finite() && *a > 0.0,
                "shared buffer: alpha of class {c} must be positive and finite, got {a}"
            );
        }
        for (q, &c) in classes.iter().enumerate() {
            assert!(
                (c as usize) < alpha.len(),
                "shared buffer: queue {q} is of class {c}, which has no alpha"
            );
        }
        let n = classes.len();
        SharedBuffer {
            capacity,
            alpha,
            class: classes,
            queue_limit: None,
            occupancy: vec![0; n],
            total: 0,
            peak_total: 0,
            counters: vec![QueueCounters::default(); n],
        }
    }

    /// Also limit every queue to `bytes`, whatever the free buffer.
    pub fn with_queue_limit(mut self, bytes: u64) -> SharedBuffer {
        self.queue_limit = Some(bytes);
        self
    }

    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    pub fn n_queues(&self) -> usize {
        self.occupancy.len()
    }

    /// Bytes held by all queues.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The largest total occupancy so far.
    pub fn peak_total(&self) -> u64 {
        self.peak_total
    }

    /// Bytes free: B − total occupancy.
    pub fn free(&self) -> u64 {
        self.capacity - self.total
    }

    /// Bytes held by queue `q`.
    pub fn occupancy(&self, q: usize) -> u64 {
        self.occupancy[q]
    }

    pub fn counters(&self, q: usize) -> &QueueCounters {
        &self.counters[q]
    }

    /// Queue `q`'s current dynamic threshold, α_c · (B − total occupancy), in bytes.
    pub fn threshold(&self, q: usize) -> f64 {
        self.alpha[self.class[q] as usize] * self.free() as f64
    }

    /// Whether the buffer has room for `size` more bytes, whatever the queue's threshold
    /// (a lossless packet's only limit). Changes nothing.
    #[inline]
    pub fn check_space(&self, size: u64) -> Result<(), Refusal> {
        if self.total + size > self.capacity {
            Err(Refusal::BufferFull)
        } else {
            Ok(())
        }
    }

    /// Whether a packet of `size` bytes may join queue `q` now. Changes nothing.
    #[inline]
    pub fn check(&self, q: usize, size: u64) -> Result<(), Refusal> {
        let after = self.occupancy[q] + size;
        if let Err(r) = self.check_space(size) {
            Err(r)
        } else if self.queue_limit.is_some_and(|l| after > l) {
            Err(Refusal::QueueLimit)
        } else if after as f64 > self.threshold(q) {
            Err(Refusal::OverThreshold)
        } else {
            Ok(())
        }
    }

    /// Admission of a packet of `size` bytes to queue `q`: on success its bytes are
    /// accounted to the queue and the buffer; on refusal the drop is counted by reason.
    #[inline]
    pub fn admit(&mut self, q: usize, size: u64) -> Result<(), Refusal> {
        match self.check(q, size) {
            Ok(()) => {
                self.enqueue(q, size);
                Ok(())
            }
            Err(r) => {
                self.count_refusal(q, r);
                Err(r)
            }
        }
    }

    /// Counts a packet refused for reason `r` (after `check`).
    #[inline]
    pub fn count_refusal(&mut self, q: usize, r: Refusal) {
        let c = &mut self.counters[q];
        match r {
            Refusal::BufferFull => c.drops_buffer_full += 1,
            Refusal::OverThreshold => c.drops_threshold += 1,
            Refusal::QueueLimit => c.drops_queue_limit += 1,
        }
    }

    /// Accounts `size` bytes to queue `q` without a check (a packet `check` accepted).
    #[inline]
    pub fn enqueue(&mut self, q: usize, size: u64) {
        debug_assert!(self.total + size <= self.capacity);
        self.occupancy[q] += size;
        self.total += size;
        self.peak_total = self.peak_total.max(self.total);
        let c = &mut self.counters[q];
        c.admitted_packets += 1;
        c.admitted_bytes += size;
        c.peak_bytes = c.peak_bytes.max(self.occupancy[q]);
    }

    /// A packet of `size` bytes leaves queue `q` (its departure): its bytes are free again.
    ///
    /// Panics if the queue holds fewer bytes.
    #[inline]
    pub fn dequeue(&mut self, q: usize, size: u64) {
        assert!(
            self.occupancy[q] >= size,
            "shared buffer: queue {q} holds {} bytes, cannot release {size}",
            self.occupancy[q]
        );
        self.occupancy[q] -= size;
        self.total -= size;
        let c = &mut self.counters[q];
        c.departed_packets += 1;
        c.departed_bytes += size;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Rng;
    use std::collections::VecDeque;

    const MTU: u64 = 1500;

    fn buffer(capacity: u64, alpha: f64, n: usize) -> SharedBuffer {
        SharedBuffer::new(capacity, vec![alpha], vec![0; n])
    }

    /// Fills queue `q` with `size`-byte packets until one is refused.
    fn fill(b: &mut SharedBuffer, q: usize, size: u64) -> Refusal {
        loop {
            if let Err(r) = b.admit(q, size) {
                return r;
            }
        }
    }

    #[test]
    fn one_queue_with_alpha_one_takes_half_the_free_buffer() {
        let cap = 1_000_000;
        let mut b = buffer(cap, 1.0, 4);
        assert_eq!(fill(&mut b, 2, 1000), Refusal::OverThreshold);
        let q = b.occupancy(2);
        // Q ≤ B − Q, and one more packet would break it.
        assert!(q <= cap / 2 && q + 1000 > cap / 2, "{q}");
        assert_eq!(b.total(), q);
        assert_eq!(b.counters(2).drops_threshold, 1);
        assert_eq!(b.counters(2).admitted_bytes, q);
    }

    /// N queues offered more than they drain, departures at equal rates: each settles at
    /// α·B/(1 + α·N). Its occupancy over the steady state is within one MTU of that, on
    /// average and in mean absolute deviation (single samples swing by a few MTU at
    /// α = 2, N = 8, as departures and the other queues' arrivals move the threshold).
    #[test]
    fn busy_queues_settle_at_the_analytic_steady_state() {
        let cap: u64 = 2_000_000;
        for &alpha in &[0.5, 1.0, 2.0] {
            for &n in &[1usize, 2, 4, 8] {
                let mut rng = Rng::new(11, 0, (n as u64) << 8 | (alpha * 4.0) as u64);
                let mut b = buffer(cap, alpha, n + 2); // two queues stay idle
                let mut fifo: Vec<VecDeque<u64>> = vec![VecDeque::new(); n];
                let mut credit = vec![0u64; n];
                let mut order: Vec<usize> = (0..n).collect();
                let expect = alpha * cap as f64 / (1.0 + alpha * n as f64);
                let (warmup, steps) = (5_000, 20_000);
                let mut sum = vec![0f64; n];
                let mut abs_dev = vec![0f64; n];
                for step in 0..warmup + steps {
                    // Each queue drains 600 B per step and is offered two packets of
                    // 1000–1500 B (about 2500 B): more than drains.
                    rng.shuffle(&mut order);
                    for &q in &order {
                        credit[q] += 600;
                        while let Some(&s) = fifo[q].front() {
                            if s > credit[q] {
                                break;
                            }
                            credit[q] -= s;
                            fifo[q].pop_front();
                            b.dequeue(q, s);
                        }
                        if fifo[q].is_empty() {
                            credit[q] = 0;
                        }
                    }
                    rng.shuffle(&mut order);
                    for _ in 0..2 {
                        for &q in &order {
                            let s = 1000 + rng.below(501);
                            if b.admit(q, s).is_ok() {
                                fifo[q].push_back(s);
                            }
                            assert!(b.total() <= cap);
                        }
                    }
                    if step >= warmup {
                        for q in 0..n {
                            let occ = b.occupancy(q) as f64;
                            sum[q] += occ;
                            abs_dev[q] += (occ - expect).abs();
                        }
                    }
                }
                for q in 0..n {
                    let mean = sum[q] / steps as f64;
                    let dev = abs_dev[q] / steps as f64;
                    assert!(
                        (mean - expect).abs() <= MTU as f64 && dev <= MTU as f64,
                        "alpha {alpha}, N {n}: queue {q} averages {mean} (mean absolute \
                         deviation {dev}), expected {expect}"
                    );
                    assert!(b.counters(q).drops_threshold > 0);
                }
                assert_eq!(b.occupancy(n), 0);
                assert_eq!(b.occupancy(n + 1), 0);
            }
        }
    }

    #[test]
    fn a_departure_frees_space_another_queue_can_take() {
        let mut b = buffer(100_000, 1.0, 2);
        fill(&mut b, 0, 1000);
        assert_eq!(b.occupancy(0), 50_000);
        // Queue 1 may hold as much as the free buffer: 25 000 of the 50 000 left.
        fill(&mut b, 1, 1000);
        assert_eq!(b.occupancy(1), 25_000);
        assert_eq!(b.admit(1, 1000), Err(Refusal::OverThreshold));
        for _ in 0..10 {
            b.dequeue(0, 1000);
        }
        assert_eq!(b.total(), 65_000);
        assert_eq!(b.counters(0).departed_bytes, 10_000);
        // Now 35 000 are free: queue 1 grows while 26 000 + … ≤ free.
        assert_eq!(b.admit(1, 1000), Ok(()));
        assert_eq!(b.occupancy(1), 26_000);
        fill(&mut b, 1, 1000);
        // Q1 ≤ 100 000 − 40 000 − Q1: 30 000.
        assert_eq!(b.occupancy(1), 30_000);
    }

    #[test]
    fn the_total_never_exceeds_the_buffer() {
        // With α > 1 the threshold alone would let the buffer overflow.
        let cap = 64_000;
        let mut b = buffer(cap, 8.0, 4);
        let mut rng = Rng::new(3, 0, 0);
        let mut held: Vec<VecDeque<u64>> = vec![VecDeque::new(); 4];
        let mut full = 0;
        for _ in 0..200_000 {
            let q = rng.below(4) as usize;
            if rng.below(3) == 0 {
                if let Some(s) = held[q].pop_front() {
                    b.dequeue(q, s);
                }
            } else {
                let s = 64 + rng.below(1437);
                match b.admit(q, s) {
                    Ok(()) => held[q].push_back(s),
                    Err(Refusal::BufferFull) => full += 1,
                    Err(_) => {}
                }
            }
            assert!(b.total() <= cap);
            let sum: u64 = (0..4).map(|q| b.occupancy(q)).sum();
            assert_eq!(sum, b.total());
        }
        assert!(full > 0, "the buffer never filled");
        assert!(b.peak_total() <= cap);
        let drops: u64 = (0..4).map(|q| b.counters(q).drops_buffer_full).sum();
        assert_eq!(drops, full);
    }

    #[test]
    fn alpha_per_class_and_static_limit() {
        // Class 0 with α = 2, class 1 with α = 0.5; queue 0 alone: 2·(B − Q) → 2B/3.
        let mut b = SharedBuffer::new(90_000, vec![2.0, 0.5], vec![0, 1]);
        fill(&mut b, 0, 1000);
        assert_eq!(b.occupancy(0), 60_000);
        fill(&mut b, 1, 1000);
        // Q1 ≤ 0.5·(30 000 − Q1): 10 000.
        assert_eq!(b.occupancy(1), 10_000);
        let mut b = buffer(90_000, 1.0, 2).with_queue_limit(20_000);
        assert_eq!(fill(&mut b, 0, 1000), Refusal::QueueLimit);
        assert_eq!(b.occupancy(0), 20_000);
        assert_eq!(b.counters(0).drops_queue_limit, 1);
        assert_eq!(b.counters(0).drops(), 1);
    }

    #[test]
    #[should_panic(expected = "alpha of class 0")]
    fn a_non_positive_alpha_is_refused() {
        buffer(1000, 0.0, 1);
    }
}
