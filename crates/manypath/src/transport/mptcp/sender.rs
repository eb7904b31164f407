//! The sending side of a multipath connection.
//!
//! Subflow 0 opens first; the others open once its handshake completes (after an
//! optional gap). The scheduler hands a subflow one segment's worth of data (a chunk
//! with its data sequence number) whenever the subflow has sent everything it was given
//! and its window has room: round robin over such subflows, or lowest RTT first. Each
//! subflow recovers its own losses. The flow is complete when the data-level ACK covers
//! every byte; the subflows then close.

use crate::net::packet::flags;
use crate::time::SimTime;
use crate::transport::cc::Cc;
use crate::transport::mpcc::amp::SsrView;
use crate::transport::mpcc::{Coupling, SubflowView};
use crate::transport::tcp::{Segment, SenderStats, TcpSender};
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheduler {
    RoundRobin,
    LowestRtt,
}

/// A chunk of a subflow's sequence space mapped to the data sequence space.
#[derive(Clone, Copy, Debug)]
struct Mapping {
    sub_seq: u64,
    dsn: u64,
}

#[derive(Clone, Debug)]
pub struct MptcpSender {
    /// Data bytes to send (`u64::MAX`: long-lived).
    pub size: u64,
    pub subs: Vec<TcpSender>,
    maps: Vec<VecDeque<Mapping>>,
    pub coupling: Coupling,
    scheduler: Scheduler,
    /// Highest data-level cumulative ACK received.
    pub data_una: u64,
    /// Next data byte not yet handed to a subflow.
    data_nxt: u64,
    rr: usize,
    opened: Vec<bool>,
    /// When the other subflows open (0: not scheduled).
    open_at: SimTime,
    gap: SimTime,
    mss: u64,
    cwnd_min: f64,
    pub finish: Option<SimTime>,
    /// MMPTCP: subflow 0 scatters its packets over random paths until this many data
    /// bytes have been handed out, then the other subflows open and take the new data
    /// (0: no scatter phase).
    scatter_until: u64,
    /// Reused per ACK so the coupling allocates nothing.
    views: Vec<SubflowView>,
    ssr_views: Vec<SsrView>,
}

impl MptcpSender {
    /// `subs` are the subflow senders (their `size` is ignored: the connection feeds
    /// them); `gap` delays the extra subflows after the first handshake.
    pub fn new(
        mut subs: Vec<TcpSender>,
        size: u64,
        coupling: Coupling,
        scheduler: Scheduler,
        gap: SimTime,
    ) -> MptcpSender {
        let mss = subs[0].cfg.mss as u64;
        let cwnd_min = subs[0].cfg.cwnd_min as f64 * mss as f64;
        for s in &mut subs {
            s.size = u64::MAX;
            s.avail = 0;
        }
        let n = subs.len();
        MptcpSender {
            size,
            subs,
            maps: vec![VecDeque::new(); n],
            coupling,
            scheduler,
            data_una: 0,
            data_nxt: 0,
            rr: 0,
            opened: vec![false; n],
            open_at: 0,
            gap,
            mss,
            cwnd_min,
            finish: None,
            scatter_until: 0,
            views: Vec::with_capacity(n),
            ssr_views: Vec::with_capacity(n),
        }
    }

    pub fn open(&mut self) {
        self.subs[0].open();
        self.opened[0] = true;
    }

    /// MMPTCP: scatter subflow 0's packets over random paths, with `dupack_threshold`
    /// for the reordering that causes, until `bytes` of data have been handed out; then
    /// switch to the other subflows.
    pub fn scatter_first(&mut self, bytes: u64, dupack_threshold: u32) {
        self.scatter_until = bytes.max(1);
        self.subs[0].cfg.dupack_threshold = dupack_threshold;
    }

    /// In the scatter phase (subflow 0 alone, on random paths).
    fn scattering(&self) -> bool {
        self.scatter_until > 0 && self.data_nxt < self.scatter_until
    }

    /// AMP's subflow suppression: only the first subflow takes new data.
    fn suppressed(&self) -> bool {
        matches!(&self.coupling, Coupling::Amp(ssr) if ssr.suppressed)
    }

    /// Refreshes `self.views`, what the coupling sees of every subflow.
    fn fill_views(&mut self) {
        let suppressed = self.suppressed();
        let fallback = self
            .subs
            .iter()
            .filter_map(|s| s.rtt.srtt())
            .min()
            .unwrap_or(100_000_000);
        let opened = &self.opened;
        // After MMPTCP's switch the scatter subflow only finishes its retransmissions.
        let switched = self.scatter_until > 0 && !self.scattering();
        self.views.clear();
        self.views
            .extend(self.subs.iter().enumerate().map(|(i, s)| SubflowView {
                cwnd: s.win.cwnd,
                rtt: s.rtt.srtt().unwrap_or(fallback).max(1) as f64 / 1e12,
                active: opened[i]
                    && s.is_established()
                    && (i == 0 || !suppressed)
                    && !(i == 0 && switched),
                ell: match &s.cc {
                    Cc::Coupled(c) => c.ell(),
                    _ => 0.0,
                },
            }));
    }

    fn dsn_of(&self, sub: usize, seq: u64) -> u64 {
        let maps = &self.maps[sub];
        let i = maps.partition_point(|m| m.sub_seq <= seq);
        let m = maps[i.checked_sub(1).expect("segment has a mapping")];
        m.dsn + (seq - m.sub_seq)
    }

    /// Gives subflow `i` one more chunk of data if it can send it now.
    fn feed(&mut self, i: usize) {
        let s = &self.subs[i];
        if self.data_nxt >= self.size || !s.is_established() || (i > 0 && self.suppressed()) {
            return;
        }
        if self.scatter_until > 0 && (i == 0) != self.scattering() {
            // MMPTCP: subflow 0 takes data only while scattering, the others only after.
            return;
        }
        if !s.all_sent() || !s.has_window_room() {
            return;
        }
        let chunk = (self.size - self.data_nxt).min(self.mss);
        self.maps[i].push_back(Mapping {
            sub_seq: s.avail,
            dsn: self.data_nxt,
        });
        self.subs[i].offer(chunk);
        self.data_nxt += chunk;
        if self.scatter_until > 0 && !self.scattering() && self.subs.len() > 1 && !self.opened[1] {
            // The scatter volume is out: open the MPTCP subflows.
            self.open_others();
        }
    }

    /// The `k`-th subflow to offer new data to: round robin from `rr`, or by RTT.
    #[inline]
    fn nth(&self, k: usize) -> usize {
        let n = self.subs.len();
        match self.scheduler {
            Scheduler::RoundRobin => (self.rr + k) % n,
            Scheduler::LowestRtt => {
                // k-th smallest smoothed RTT (n is small; ties by index).
                let key = |i: usize| (self.subs[i].rtt.srtt().unwrap_or(u64::MAX), i);
                let mut chosen = usize::MAX;
                let mut prev: Option<(u64, usize)> = None;
                for _ in 0..=k {
                    chosen = (0..n)
                        .filter(|&i| prev.is_none_or(|p| key(i) > p))
                        .min_by_key(|&i| key(i))
                        .expect("k < n");
                    prev = Some(key(chosen));
                }
                chosen
            }
        }
    }

    /// The next segment to send and its subflow. Call until it returns `None`.
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<(usize, Segment)> {
        if self.open_at != 0 && now >= self.open_at {
            self.open_others();
        }
        for k in 0..self.subs.len() {
            let i = self.nth(k);
            if !self.opened[i] {
                continue;
            }
            self.feed(i);
            if let Some(mut seg) = self.subs[i].poll_transmit(now) {
                if seg.len > 0 {
                    seg.dsn = self.dsn_of(i, seg.seq);
                    seg.scatter = i == 0 && self.scatter_until > 0;
                }
                self.rr = (i + 1) % self.subs.len();
                return Some((i, seg));
            }
        }
        None
    }

    fn open_others(&mut self) {
        self.open_at = 0;
        for i in 1..self.subs.len() {
            if !self.opened[i] && self.finish.is_none() {
                self.subs[i].open();
                self.opened[i] = true;
            }
        }
    }

    pub fn on_segment(&mut self, now: SimTime, sub: usize, seg: &Segment) {
        let was_established = self.subs[sub].is_established();
        if let Coupling::Uncoupled = self.coupling {
        } else if !seg.has(flags::SYN) {
            self.fill_views();
            let inc = self.coupling.increase(sub, &self.views, self.mss as f64);
            if let Cc::Coupled(c) = &mut self.subs[sub].cc {
                c.increase = inc;
            }
        }
        self.subs[sub].on_segment(now, seg);
        if sub == 0
            && !was_established
            && self.subs[0].is_established()
            && self.subs.len() > 1
            && self.scatter_until == 0
        {
            // The first handshake is done: the other subflows follow.
            self.open_at = now + self.gap;
            if self.gap == 0 {
                self.open_others();
            }
        }
        if seg.data_ack > self.data_una {
            self.data_una = seg.data_ack.min(self.size);
        }
        let acked_to = self.subs[sub].snd_una;
        let maps = &mut self.maps[sub];
        while maps.len() > 1 && maps[1].sub_seq <= acked_to {
            maps.pop_front();
        }
        if sub == 0 {
            if let Coupling::Amp(ssr) = &mut self.coupling {
                let opened = &self.opened;
                self.ssr_views.clear();
                self.ssr_views.extend(
                    self.subs
                        .iter()
                        .enumerate()
                        .filter(|(i, s)| opened[*i] && s.is_established())
                        .map(|(_, s)| SsrView {
                            cwnd: s.win.cwnd,
                            in_recovery: s.in_recovery(),
                        }),
                );
                let s0 = &self.subs[0];
                ssr.on_first_subflow_ack(
                    seg.ecn,
                    s0.snd_una,
                    s0.snd_nxt,
                    &self.ssr_views,
                    self.cwnd_min,
                );
            }
        }
        if self.data_una >= self.size && self.finish.is_none() {
            self.finish = Some(now);
            for (i, s) in self.subs.iter_mut().enumerate() {
                if self.opened[i] {
                    s.close();
                }
            }
        }
    }

    pub fn on_timer(&mut self, now: SimTime) {
        if self.open_at != 0 && now >= self.open_at {
            self.open_others();
        }
        for s in &mut self.subs {
            s.on_timer(now);
        }
    }

    pub fn timer_deadline(&self) -> Option<SimTime> {
        let subs = self.subs.iter().filter_map(|s| s.timer_deadline()).min();
        match (subs, self.open_at) {
            (d, 0) => d,
            (Some(d), t) => Some(d.min(t)),
            (None, t) => Some(t),
        }
    }

    /// Counters summed over the subflows; `bytes_acked` is data-level.
    pub fn stats(&self) -> SenderStats {
        let mut st = SenderStats {
            finish: self.finish,
            bytes_acked: self.data_una,
            ..SenderStats::default()
        };
        for s in &self.subs {
            st.bytes_sent += s.stats.bytes_sent;
            st.bytes_retx += s.stats.bytes_retx;
            st.timeouts += s.stats.timeouts;
            st.fast_retx += s.stats.fast_retx;
        }
        st
    }

    pub fn subflows_opened(&self) -> usize {
        self.opened.iter().filter(|&&o| o).count()
    }
}

#[cfg(test)]
mod tests {
    use super::super::MptcpReceiver;
    use super::*;
    use crate::transport::cc::Reno;
    use crate::transport::mpcc::amp;
    use crate::transport::tcp::TcpConfig;

    fn cfg() -> TcpConfig {
        TcpConfig {
            mss: 1000,
            init_cwnd: 2,
            rto_min: 1_000_000,
            ..TcpConfig::default()
        }
    }

    fn sender(n: usize, size: u64, coupling: Coupling) -> MptcpSender {
        let subs = (0..n)
            .map(|_| {
                let cc = match coupling {
                    Coupling::Uncoupled => Cc::Reno(Reno::default()),
                    _ => Cc::Coupled(lia_like()),
                };
                TcpSender::new(cfg(), cc, 0)
            })
            .collect();
        MptcpSender::new(subs, size, coupling, Scheduler::RoundRobin, 0)
    }

    /// Runs a connection over a lossless, zero-delay "network" by hand: every segment is
    /// delivered at once, in order; `on_send(subflow, segment)` sees each one sent.
    fn exchange(
        tx: &mut MptcpSender,
        rx: &mut MptcpReceiver,
        mut on_send: impl FnMut(usize, &Segment),
    ) {
        tx.open();
        let mut now = 1;
        for _ in 0..10_000 {
            let mut progressed = false;
            while let Some((i, seg)) = tx.poll_transmit(now) {
                on_send(i, &seg);
                rx.on_segment(now, i, &seg);
                progressed = true;
            }
            now += 10;
            while let Some((i, seg)) = rx.poll_transmit(now) {
                tx.on_segment(now, i, &seg);
                progressed = true;
            }
            if !progressed {
                break;
            }
        }
    }

    /// Returns (sender, receiver, data segments per subflow).
    fn run(n: usize, size: u64, coupling: Coupling) -> (MptcpSender, MptcpReceiver, Vec<u64>) {
        let mut tx = sender(n, size, coupling);
        let mut rx = MptcpReceiver::new(cfg(), n);
        let mut per_sub = vec![0u64; n];
        exchange(&mut tx, &mut rx, |i, seg| {
            if seg.len > 0 {
                per_sub[i] += 1;
            }
        });
        (tx, rx, per_sub)
    }

    fn lia_like() -> crate::transport::mpcc::Coupled {
        crate::transport::mpcc::Coupled::new(crate::transport::mpcc::EcnResponse::Halve, 2000.0)
    }

    #[test]
    fn data_arrives_complete_over_all_subflows() {
        let (tx, rx, per_sub) = run(4, 200_000, Coupling::Lia);
        assert_eq!(rx.bytes_received(), 200_000);
        assert_eq!(tx.data_una, 200_000);
        assert!(tx.finish.is_some());
        assert!(
            per_sub.iter().all(|&c| c > 10),
            "every subflow carried data: {per_sub:?}"
        );
        assert_eq!(per_sub.iter().sum::<u64>(), 200);
    }

    #[test]
    fn uncoupled_and_amp_complete_too() {
        let (tx, rx, _) = run(2, 50_500, Coupling::Uncoupled);
        assert_eq!(rx.bytes_received(), 50_500);
        assert!(tx.finish.is_some());
        let (tx, rx, _) = run(3, 50_000, Coupling::Amp(amp::Ssr::new(2, 8)));
        assert_eq!(rx.bytes_received(), 50_000);
        assert!(tx.finish.is_some());
    }

    #[test]
    fn mmptcp_scatters_then_switches_to_the_other_subflows() {
        let mut tx = sender(3, 30_000, Coupling::Lia);
        tx.scatter_first(10_000, 7);
        assert_eq!(tx.subs[0].cfg.dupack_threshold, 7);
        let mut rx = MptcpReceiver::new(cfg(), 3);
        let mut scattered = 0;
        let mut on_others = 0;
        exchange(&mut tx, &mut rx, |i, seg| {
            if seg.len > 0 {
                assert_eq!(seg.scatter, i == 0, "only subflow 0 scatters");
                if i == 0 {
                    scattered += seg.len as u64;
                } else {
                    on_others += seg.len as u64;
                }
            }
        });
        assert_eq!(rx.bytes_received(), 30_000);
        assert_eq!(
            scattered, 10_000,
            "subflow 0 carried exactly the scatter volume"
        );
        assert_eq!(on_others, 20_000);
    }

    #[test]
    fn subflows_open_after_the_first_handshake_and_close_at_the_end() {
        let (tx, _, _) = run(3, 10_000, Coupling::Lia);
        assert_eq!(tx.subflows_opened(), 3);
        assert!(
            tx.subs.iter().all(|s| s.is_closed()),
            "every subflow sent and got its FIN acked"
        );
    }
}
