//! The sending side of a multipath connection.
//!
//! Subflow 0 opens first; the others open once its handshake completes (after an
//! optional gap). The scheduler hands a subflow one segment's worth of data (a chunk
//! with its data sequence number) whenever the subflow has sent everything it was given
//! and its window has room: round robin over such subflows, or lowest RTT first. Each
//! subflow recovers its own losses. The flow is complete when the data-level ACK covers
//! every byte; the subflows then close.

use super::fuso::{self, Candidate, FusoConfig, SubflowLoss};
use super::SubflowDeadlines;
use crate::net::packet::flags;
use crate::time::SimTime;
use crate::transport::cc::CongestionControl;
use crate::transport::mpcc::amp::SsrView;
use crate::transport::mpcc::{Coupling, SubflowView};
use crate::transport::protocol::Cc;
use crate::transport::tcp::{Segment, SenderStats, TcpSender};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheduler {
    RoundRobin,
    LowestRtt,
}

/// Laid out by hand (`repr(C)`, from a cache line): what every delivery reads (the ready
/// bits and deadlines, to poll and arm timers) fills the first line and the first half
/// of the second, what an ACK reads the next two, the rest follows.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct MptcpSender {
    // Line 0.
    /// Bit i: subflow i may have a segment to send (bits n and up stay clear). Set
    /// whenever something changes the subflow or what it may be handed (a segment or
    /// timer, opening, new data, AMP's suppression), cleared when polling it yields
    /// nothing or, right after it sent, when it cannot have more. A subflow that had
    /// nothing to send has nothing until one of those happens (TCP-IR, whose coded
    /// packets fall due with time alone, is single-path only), so the scheduler skips it:
    /// an ACK polls its own subflow, not all n.
    ready: u128,
    /// Each subflow's timer deadline, updated whenever the subflow changes, so that the
    /// connection's deadline reads one small array instead of n senders.
    deadlines: SubflowDeadlines,
    // Line 1.
    /// When the other subflows open (0: not scheduled).
    open_at: SimTime,
    /// The subflows; each keeps its chunks' data sequence mapping (`offer_chunk`).
    pub subs: Vec<TcpSender>,
    /// What the coupling sees of each subflow, kept from ACK to ACK: a view depends on
    /// its own subflow only (see `refresh_views`), so an ACK recomputes the views of the
    /// subflows that changed since the last one, not all n.
    views: Vec<SubflowView>,
    rr: u32,
    scheduler: Scheduler,
    /// Some view holds a guessed RTT (its subflow has no sample yet).
    rtt_guessed: bool,
    /// `fuso` is set.
    fuso_on: bool,
    // Line 2.
    /// Bit i: subflow i has been opened.
    opened: u128,
    /// Data bytes to send (`u64::MAX`: long-lived, or a persistent connection).
    pub size: u64,
    /// Data bytes handed over by the application so far (all of them for a flow of its
    /// own; a persistent connection gets them message by message).
    avail: u64,
    /// Highest data-level cumulative ACK received.
    pub data_una: u64,
    /// Next data byte not yet handed to a subflow.
    data_nxt: u64,
    /// MMPTCP: subflow 0 scatters its packets over random paths until this many data
    /// bytes have been handed out, then the other subflows open and take the new data
    /// (0: no scatter phase).
    scatter_until: u64,
    mss: u64,
    // Line 3.
    /// Bit i: subflow i changed since `views[i]` was computed.
    stale: u128,
    pub finish: Option<SimTime>,
    pub coupling: Coupling,
    // The rest.
    gap: SimTime,
    cwnd_min: f64,
    ssr_views: Vec<SsrView>,
    /// FUSO's proactive multipath loss recovery, when enabled.
    fuso: Option<FusoConfig>,
    /// Per subflow: FUSO's loss accounting and protection state.
    loss: Vec<SubflowLoss>,
    candidates: Vec<Candidate>,
    pub counters: MptcpCounters,
    /// The receive window of the latest ACK not older than the last (its free buffer
    /// space: the buffer less the data it holds out of order). Each subflow's window
    /// is limited by it too; when it has no room for a segment, the receiver's buffer
    /// is full and no subflow gets new data, even one with nothing in flight (which
    /// TCP's own window check would let send a segment).
    peer_wnd: u64,
    /// Some subflow could have sent new data but for a full receive buffer: an ACK on
    /// any subflow may open it, so the next one marks every subflow ready.
    window_blocked: bool,
    /// Opportunistic retransmission: the data byte found holding up the full buffer
    /// (`NO_DSN`: none yet), and the subflows that carry it, the copies' included.
    blocking_dsn: u64,
    carried: u128,
    /// Copies sent by opportunistic retransmission.
    pub reinjections: u64,
}

/// No data byte (`blocking_dsn`).
const NO_DSN: u64 = u64::MAX;

/// Connection-level counters of a multipath sender.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MptcpCounters {
    /// FUSO recovery copies sent, and their payload bytes.
    pub recovery_packets: u64,
    pub recovery_bytes: u64,
    /// Sends of new subflow data beyond the subflow's congestion window (FUSO's
    /// guarantee is that there are none; counted when FUSO is on).
    pub window_violations: u64,
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
        let mss = subs[0].config().mss as u64;
        let rcv_wnd = subs[0].config().rcv_wnd as u64;
        let cwnd_min = subs[0].config().cwnd_min as f64 * mss as f64;
        for s in &mut subs {
            s.size = u64::MAX;
            s.avail = 0;
        }
        let n = subs.len();
        assert!(n <= 128, "at most 128 subflows");
        debug_assert!(!subs[0].recovery().tcp_ir, "TCP-IR is single-path only");
        MptcpSender {
            size,
            avail: size,
            subs,
            coupling,
            scheduler,
            data_una: 0,
            data_nxt: 0,
            rr: 0,
            opened: 0,
            ready: 0,
            deadlines: SubflowDeadlines::new(n),
            open_at: 0,
            gap,
            mss,
            cwnd_min,
            finish: None,
            scatter_until: 0,
            views: Vec::with_capacity(n),
            stale: u128::MAX >> (128 - n),
            rtt_guessed: true,
            ssr_views: Vec::with_capacity(n),
            fuso: None,
            fuso_on: false,
            loss: vec![SubflowLoss::default(); n],
            candidates: Vec::with_capacity(n),
            counters: MptcpCounters::default(),
            peer_wnd: rcv_wnd,
            window_blocked: false,
            blocking_dsn: NO_DSN,
            carried: 0,
            reinjections: 0,
        }
    }

    #[inline]
    fn is_open(&self, i: usize) -> bool {
        self.opened >> i & 1 != 0
    }

    /// Turns on FUSO's proactive multipath loss recovery.
    pub fn enable_fuso(&mut self, cfg: FusoConfig) {
        self.fuso = Some(cfg);
        self.fuso_on = true;
    }

    /// A persistent connection: no data until the application offers some.
    pub fn make_idle(&mut self) {
        self.size = u64::MAX;
        self.avail = 0;
    }

    /// The application hands over `bytes` more data.
    pub fn offer(&mut self, bytes: u64) {
        self.avail = self.avail.saturating_add(bytes);
        self.mark_all();
    }

    /// Subflow `i` changed: it may have something to send, and its view is stale.
    #[inline]
    fn mark(&mut self, i: usize) {
        self.ready |= 1 << i;
        self.stale |= 1 << i;
    }

    fn mark_all(&mut self) {
        let all = u128::MAX >> (128 - self.subs.len());
        self.ready = all;
        self.stale = all;
    }

    /// The end of the data the application has handed over.
    fn data_end(&self) -> u64 {
        self.size.min(self.avail)
    }

    pub fn open(&mut self) {
        self.subs[0].open();
        self.opened |= 1;
        self.mark(0);
    }

    /// MMPTCP: scatter subflow 0's packets over random paths, with `dupack_threshold`
    /// for the reordering that causes, until `bytes` of data have been handed out; then
    /// switch to the other subflows.
    pub fn scatter_first(&mut self, bytes: u64, dupack_threshold: u32) {
        self.scatter_until = bytes.max(1);
        self.subs[0].set_dupack_threshold(dupack_threshold);
    }

    /// In the scatter phase (subflow 0 alone, on random paths).
    fn scattering(&self) -> bool {
        self.scatter_until > 0 && self.data_nxt < self.scatter_until
    }

    /// AMP's subflow suppression: only the first subflow takes new data.
    fn suppressed(&self) -> bool {
        matches!(&self.coupling, Coupling::Amp(ssr) if ssr.suppressed)
    }

    /// Brings `self.views`, what the coupling sees of every subflow, up to date. A view
    /// is a function of its subflow's state, except for the RTT guessed for a subflow
    /// without a sample (the smallest measured one) and the activity that AMP's
    /// suppression and MMPTCP's switch decide: while a guess is in use or MMPTCP runs,
    /// every view is recomputed; AMP marks all stale when its suppression changes.
    fn refresh_views(&mut self) {
        let n = self.subs.len();
        if self.rtt_guessed || self.scatter_until > 0 {
            self.stale = u128::MAX >> (128 - n);
        }
        if self.stale == 0 {
            return;
        }
        let suppressed = self.suppressed();
        let fallback = if self.rtt_guessed {
            self.subs
                .iter()
                .filter_map(|s| s.rtt.srtt())
                .min()
                .unwrap_or(100_000_000)
        } else {
            0
        };
        // After MMPTCP's switch the scatter subflow only finishes its retransmissions.
        let switched = self.scatter_until > 0 && !self.scattering();
        if self.views.len() != n {
            self.views.resize(n, SubflowView::new(0.0, 1.0, false, 0.0));
        }
        let mut guessed = false;
        while self.stale != 0 {
            let i = self.stale.trailing_zeros() as usize;
            self.stale &= !(1 << i);
            let s = &self.subs[i];
            let srtt = s.rtt.srtt();
            guessed |= srtt.is_none();
            self.views[i] = SubflowView::new(
                s.win.cwnd,
                srtt.unwrap_or(fallback).max(1) as f64 / 1e12,
                self.is_open(i)
                    && s.is_established()
                    && (i == 0 || !suppressed)
                    && !(i == 0 && switched),
                s.cc.ell(),
            );
        }
        if self.rtt_guessed {
            // Every view was recomputed: is any still a guess? (Samples are never lost.)
            self.rtt_guessed = guessed;
        }
    }

    fn dsn_of(&self, sub: usize, seq: u64) -> u64 {
        self.subs[sub]
            .chunk_of(seq)
            .expect("segment has a mapping")
            .1
    }

    /// Whether `feed` would give subflow `i` a chunk now.
    fn can_feed(&self, i: usize) -> bool {
        self.may_take_data(i) && self.next_chunk_fits()
    }

    /// The receiver's buffer has room for the next chunk of new data.
    fn next_chunk_fits(&self) -> bool {
        let chunk = (self.data_end() - self.data_nxt).min(self.mss);
        chunk <= self.peer_wnd
    }

    /// Whether subflow `i` would take a chunk of new data now, were the receiver's
    /// buffer not full.
    fn may_take_data(&self, i: usize) -> bool {
        let s = &self.subs[i];
        if self.data_nxt >= self.data_end() || !s.is_established() || (i > 0 && self.suppressed()) {
            return false;
        }
        if self.scatter_until > 0 && (i == 0) != self.scattering() {
            // MMPTCP: subflow 0 takes data only while scattering, the others only after.
            return false;
        }
        s.all_sent() && s.has_window_room()
    }

    /// Gives subflow `i` one more chunk of data if it can send it now.
    fn feed(&mut self, i: usize) {
        if !self.may_take_data(i) {
            return;
        }
        if !self.next_chunk_fits() {
            self.window_blocked = true;
            self.reinject_blocking(i);
            return;
        }
        let chunk = (self.data_end() - self.data_nxt).min(self.mss);
        self.subs[i].offer_chunk(chunk, self.data_nxt);
        self.data_nxt += chunk;
        if self.scatter_until > 0 && !self.scattering() && self.subs.len() > 1 && !self.is_open(1) {
            // The scatter volume is out: open the MPTCP subflows.
            self.open_others();
        }
    }

    /// Opportunistic retransmission (Raiciu et al., NSDI 2012, §4.2; the Linux
    /// implementation's `mptcp_rcv_buf_optimization`): subflow `i` has room in its
    /// window but the receiver's buffer is full of data held behind the data-level ACK,
    /// so what holds the connection up is the data at that ACK, not yet delivered by the
    /// subflow that carries it (lost there, and waiting for that subflow's recovery, a
    /// timeout perhaps). Subflow `i` sends a copy of that segment, unless it carries it
    /// already; each subflow does so at most once per data-level ACK. Without it, one
    /// subflow waiting for a timeout stalls the whole connection until then, whatever
    /// the other subflows could carry.
    fn reinject_blocking(&mut self, i: usize) {
        let head = self.data_una;
        if head >= self.data_nxt {
            return;
        }
        if head != self.blocking_dsn {
            // A new left edge: which subflows hold it (searched only when the window is
            // full, never per packet otherwise).
            self.blocking_dsn = head;
            self.carried = 0;
            for (j, s) in self.subs.iter().enumerate() {
                self.carried |= (s.carries_dsn(head) as u128) << j;
            }
        }
        if self.carried >> i & 1 != 0 {
            return;
        }
        self.carried |= 1 << i;
        let len = (self.data_nxt - head).min(self.mss);
        self.subs[i].offer_chunk(len, head);
        self.reinjections += 1;
    }

    /// The subflow with the `k`-th smallest smoothed RTT (n is small; ties by index).
    fn kth_lowest_rtt(&self, k: usize) -> usize {
        let n = self.subs.len();
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

    /// The next segment to send and its subflow. Call until it returns `None`.
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<(usize, Segment)> {
        if self.open_at != 0 && now >= self.open_at {
            self.open_others();
        }
        for k in 0..self.subs.len() {
            if self.ready == 0 {
                break;
            }
            let i = match self.scheduler {
                // The first ready subflow from `rr` on, wrapping around.
                Scheduler::RoundRobin => {
                    let from_rr = self.ready & (u128::MAX << self.rr);
                    let m = if from_rr != 0 { from_rr } else { self.ready };
                    m.trailing_zeros() as usize
                }
                Scheduler::LowestRtt => self.kth_lowest_rtt(k),
            };
            if self.ready & (1 << i) == 0 {
                continue;
            }
            if self.is_open(i) {
                self.feed(i);
                if let Some(seg) = self.transmit_on(now, i) {
                    self.rr = ((i + 1) % self.subs.len()) as u32;
                    if self.subs[i].is_drained() && !self.can_feed(i) {
                        // Polling it again would yield nothing: spare the next call that.
                        self.ready &= !(1 << i);
                    }
                    return Some((i, seg));
                }
            }
            self.ready &= !(1 << i);
        }
        if self.fuso_on {
            return self.send_a_recovery(now);
        }
        None
    }

    /// Polls subflow `i` for a segment, labels its payload with its data sequence
    /// number, and keeps FUSO's per-subflow accounting.
    fn transmit_on(&mut self, now: SimTime, i: usize) -> Option<Segment> {
        let s = &self.subs[i];
        let (flight, cwnd, snd_max) = (s.in_flight(), s.win.cwnd, s.snd_max);
        let polled = self.subs[i].poll_transmit(now);
        self.stale |= 1 << i;
        self.deadlines.set(i, self.subs[i].timer_deadline());
        let mut seg = polled?;
        if seg.len > 0 {
            seg.dsn = self.dsn_of(i, seg.seq);
            seg.scatter = i == 0 && self.scatter_until > 0;
            if self.fuso.is_some() {
                let retransmission = seg.seq < snd_max;
                self.loss[i].on_sent(retransmission);
                // Limited transmit (RFC 3042) lets two segments beyond cwnd out on dupacks.
                let lt = if self.subs[i].recovery().limited_transmit {
                    2.0 * self.mss as f64
                } else {
                    0.0
                };
                if !retransmission && flight > 0 && (flight + seg.len as u64) as f64 > cwnd + lt {
                    self.counters.window_violations += 1;
                }
            }
        }
        Some(seg)
    }

    /// FUSO (Algorithm 1): with no new data to send and room in the connection's
    /// window, sends a copy of the worst subflow's oldest un-ACKed, unprotected packet on
    /// the best subflow. Returns the copy's segment, or `None` when there is nothing to
    /// protect or nowhere to send it.
    fn send_a_recovery(&mut self, now: SimTime) -> Option<(usize, Segment)> {
        let cfg = self.fuso?;
        if self.finish.is_some() || self.data_nxt < self.data_end() {
            return None;
        }
        let (mut flight, mut cwnd) = (0u64, 0.0);
        for (i, s) in self.subs.iter().enumerate() {
            if !self.is_open(i) || !s.is_established() {
                continue;
            }
            if !s.all_sent() {
                return None; // New data is still waiting in a subflow.
            }
            flight += s.in_flight();
            cwnd += s.win.cwnd;
        }
        if flight as f64 >= cwnd {
            return None;
        }
        self.candidates.clear();
        for i in 0..self.subs.len() {
            let live = self.is_open(i) && self.subs[i].is_established();
            let eligible = live && self.unprotected(i).is_some();
            self.candidates.push(Candidate {
                cost: self.loss[i].cost(&cfg),
                srtt: self.subs[i].rtt.srtt().unwrap_or(SimTime::MAX),
                eligible,
            });
        }
        let worst = fuso::worst(&self.candidates)?;
        for (i, c) in self.candidates.iter_mut().enumerate() {
            let s = &self.subs[i];
            c.eligible = self.opened >> i & 1 != 0 && s.is_established() && s.has_window_room();
        }
        let best = fuso::best(&self.candidates)?;
        let (seq, end) = self.unprotected(worst)?;
        let dsn = self.dsn_of(worst, seq);
        let len = end - seq;
        self.loss[worst].protected_to = end;
        let b = &self.subs[best];
        let (at, flight_b, cwnd_b) = (b.avail, b.in_flight(), b.win.cwnd);
        self.loss[best].copies.push_back((at, at + len));
        self.subs[best].offer_chunk(len, dsn);
        self.mark(best);
        if flight_b > 0 && (flight_b + len) as f64 > cwnd_b {
            self.counters.window_violations += 1;
        }
        self.counters.recovery_packets += 1;
        self.counters.recovery_bytes += len;
        let seg = self.transmit_on(now, best)?;
        Some((best, seg))
    }

    /// Subflow `i`'s oldest packet that is sent, not acknowledged (at the subflow or the
    /// data level), not protected yet and not itself a recovery copy: (seq, end).
    fn unprotected(&mut self, i: usize) -> Option<(u64, u64)> {
        let s = &self.subs[i];
        let top = s.snd_max.min(s.avail);
        let loss = &mut self.loss[i];
        loss.forget_below(s.snd_una);
        let mut seq = s.snd_una.max(loss.protected_to);
        while seq < top {
            if let Some(e) = loss.copy_end(seq) {
                seq = e;
                continue;
            }
            // A SACKed packet has arrived: nothing to protect there.
            match s.next_unsacked(seq) {
                Some(n) if n > seq => {
                    seq = n;
                    continue;
                }
                None => return None,
                _ => {}
            }
            let (chunk_end, dsn) = s.chunk_of(seq)?;
            let end = chunk_end.min(top).min(seq + self.mss);
            if dsn + (end - seq) <= self.data_una {
                // Already delivered through another subflow.
                seq = end;
                loss.protected_to = end;
                continue;
            }
            return Some((seq, end));
        }
        None
    }

    fn open_others(&mut self) {
        self.open_at = 0;
        for i in 1..self.subs.len() {
            if !self.is_open(i) && self.finish.is_none() {
                self.subs[i].open();
                self.opened |= 1 << i;
                self.mark(i);
            }
        }
    }

    pub fn on_segment(&mut self, now: SimTime, sub: usize, seg: &Segment) {
        let was_established = self.subs[sub].is_established();
        if let Coupling::Uncoupled = self.coupling {
        } else if !seg.has(flags::SYN) {
            self.refresh_views();
            let inc = self.coupling.increase(sub, &self.views, self.mss as f64);
            if let Cc::Coupled(c) = &mut self.subs[sub].cc {
                c.increase = inc;
            }
        }
        self.subs[sub].on_segment(now, seg);
        self.mark(sub);
        self.deadlines.set(sub, self.subs[sub].timer_deadline());
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
        if seg.data_ack >= self.data_una {
            // ACKs come back over several subflows: an older one's window is stale.
            self.peer_wnd = seg.rwnd as u64;
        }
        if seg.data_ack > self.data_una {
            self.data_una = seg.data_ack.min(self.data_end());
        }
        if self.window_blocked {
            // The buffer may have room again: every subflow may send again.
            self.window_blocked = false;
            self.mark_all();
        }
        if sub == 0 {
            if let Coupling::Amp(ssr) = &mut self.coupling {
                let opened = self.opened;
                self.ssr_views.clear();
                self.ssr_views.extend(
                    self.subs
                        .iter()
                        .enumerate()
                        .filter(|(i, s)| opened >> *i & 1 != 0 && s.is_established())
                        .map(|(_, s)| SsrView {
                            cwnd: s.win.cwnd,
                            in_recovery: s.in_recovery(),
                        }),
                );
                let was_suppressed = ssr.suppressed;
                let s0 = &self.subs[0];
                ssr.on_first_subflow_ack(
                    seg.ecn,
                    s0.snd_una,
                    s0.snd_nxt,
                    &self.ssr_views,
                    self.cwnd_min,
                );
                if ssr.suppressed != was_suppressed {
                    self.mark_all();
                }
            }
        }
        if self.size != u64::MAX && self.data_una >= self.size && self.finish.is_none() {
            self.finish = Some(now);
            self.mark_all();
            for (i, s) in self.subs.iter_mut().enumerate() {
                if self.opened >> i & 1 != 0 {
                    s.close();
                }
            }
        }
    }

    pub fn on_timer(&mut self, now: SimTime) {
        if self.open_at != 0 && now >= self.open_at {
            self.open_others();
        }
        for (i, s) in self.subs.iter_mut().enumerate() {
            s.on_timer(now);
            self.deadlines.set(i, s.timer_deadline());
        }
        self.mark_all();
    }

    pub fn timer_deadline(&self) -> Option<SimTime> {
        let subs = self.deadlines.earliest();
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
            let s = s.stats();
            st.bytes_sent += s.bytes_sent;
            st.bytes_retx += s.bytes_retx;
            st.timeouts += s.timeouts;
            st.fast_retx += s.fast_retx;
        }
        st
    }

    pub fn subflows_opened(&self) -> usize {
        self.opened.count_ones() as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::PS_PER_US;
    use crate::transport::mpcc::amp;
    use crate::transport::mptcp::MptcpReceiver;
    use crate::transport::tcp::TcpConfig;
    use crate::transport::testing::{self, Pair, Sent};

    /// The one-way delay of the bench's links.
    const D: SimTime = 10 * PS_PER_US;

    /// A connection of `n` subflows over the bench's links, with windows of two
    /// segments at first.
    fn pair(n: usize, size: u64, coupling: Coupling) -> Pair<MptcpSender, MptcpReceiver> {
        let cfg = TcpConfig {
            init_cwnd: 2,
            ..testing::cfg()
        };
        testing::mptcp(cfg, n, size, coupling, D)
    }

    /// Data segments per subflow.
    fn per_subflow(p: &Pair<MptcpSender, MptcpReceiver>) -> Vec<u64> {
        let mut n = vec![0; p.client.subs.len()];
        for s in p.up.data() {
            n[s.sub] += 1;
        }
        n
    }

    /// What every delivery reads fills the first line and the first half of the
    /// second; what an ACK reads, lines 2 and 3; the rest follows.
    #[test]
    fn layout() {
        use std::mem::{align_of, offset_of, size_of};
        assert_eq!(align_of::<MptcpSender>(), 64);
        // Line 0 and the first half of line 1.
        assert_eq!(offset_of!(MptcpSender, ready), 0);
        assert_eq!(offset_of!(MptcpSender, deadlines), 16);
        assert_eq!(offset_of!(MptcpSender, open_at), 64);
        assert_eq!(
            offset_of!(MptcpSender, subs) + size_of::<Vec<TcpSender>>(),
            96
        );
        // Line 2.
        assert_eq!(offset_of!(MptcpSender, opened), 128);
        // Line 3.
        assert_eq!(offset_of!(MptcpSender, stale), 192);
        assert!(offset_of!(MptcpSender, coupling) + size_of::<Coupling>() <= 256);
        // The rest.
        assert_eq!(offset_of!(MptcpSender, gap), 256);
    }

    #[test]
    fn fuso_recovers_a_black_holed_subflow_through_the_other() {
        // Subflow 1's path loses every data packet. MPTCP alone waits for subflow 1's
        // timeout; FUSO copies subflow 1's packets onto subflow 0 and finishes.
        let black_hole = |s: &Sent| s.sub == 1 && s.seg.len > 0;
        let before_rto = testing::cfg().rto_min / 2;
        let mut plain = pair(2, 20_000, Coupling::Lia);
        plain.up.lose(black_hole);
        plain.run_until(before_rto);
        assert!(plain.client.finish.is_none(), "MPTCP needs a timeout here");
        assert!(plain.server.bytes_received() < 20_000);

        let mut p = pair(2, 20_000, Coupling::Lia);
        p.client.enable_fuso(FusoConfig::default());
        p.up.lose(black_hole);
        p.run_until(before_rto);
        assert_eq!(p.server.bytes_received(), 20_000);
        assert!(p.client.finish.is_some(), "finished without any timeout");
        assert_eq!(p.client.stats().timeouts, 0);
        let tx = &p.client;
        let c = tx.counters;
        assert!(c.recovery_packets > 0);
        assert_eq!(c.recovery_bytes % 1000, 0, "copies are whole packets");
        assert_eq!(c.window_violations, 0);
        // Each packet is protected at most once: no more copies than original packets.
        let originals: u64 = tx.loss.iter().map(|l| l.sent).sum::<u64>() - c.recovery_packets;
        assert!(c.recovery_packets <= originals, "{c:?}");
        assert_eq!(
            tx.loss[1].protected_to, tx.subs[1].avail,
            "every lost packet of subflow 1 was protected"
        );
    }

    /// Subflow 1's path loses every data packet and its timeout is far off. The
    /// receiver's buffer (20 segments) fills with data held behind subflow 1's lost
    /// segments; subflow 0 then resends each segment at the data-level ACK
    /// (opportunistic retransmission) and the transfer finishes long before subflow 1's
    /// timeout. Without it, the connection delivers nothing past the first lost segment
    /// until then, and subflow 0, with nothing in flight, sends one new segment after
    /// another into the full buffer, which holds ever more.
    #[test]
    fn a_full_data_window_resends_what_a_stalled_subflow_holds() {
        let cfg = TcpConfig {
            init_cwnd: 2,
            rcv_wnd: 20_000,
            ..testing::cfg()
        };
        let mut p = testing::mptcp(cfg, 2, 300_000, Coupling::Lia, D);
        p.up.lose(|s: &Sent| s.sub == 1 && s.seg.len > 0);
        let (mut t, mut held) = (0, 0);
        while t < cfg.rto_min / 2 {
            t += D;
            p.run_until(t);
            held = held.max(p.server.bytes_held());
        }
        assert_eq!(p.server.bytes_received(), 300_000);
        assert!(p.client.finish.is_some(), "finished without subflow 1");
        assert_eq!(p.client.stats().timeouts, 0);
        // One copy per data segment subflow 1 lost (each a distinct data range).
        let mut lost: Vec<u64> =
            p.up.data()
                .filter(|s| s.sub == 1)
                .map(|s| s.seg.dsn)
                .collect();
        lost.sort_unstable();
        lost.dedup();
        assert!(!lost.is_empty());
        assert_eq!(p.client.reinjections, lost.len() as u64);
        // The buffer bounds what the receiver holds out of order, but for what the
        // subflows had in flight when it filled (each subflow's window is checked on its
        // own): at most a window's worth per subflow.
        assert!(held <= 2 * 20_000, "held {held}");
    }

    #[test]
    fn fuso_sends_nothing_extra_while_new_data_waits() {
        // Lossless: copies go out only at the tail, once every byte has been sent.
        let mut p = pair(2, 50_000, Coupling::Lia);
        p.client.enable_fuso(FusoConfig::default());
        p.run();
        assert_eq!(p.server.bytes_received(), 50_000);
        let mut copies_before_all_sent = 0;
        let mut new_bytes = 0u64;
        for s in p.up.data() {
            if new_bytes < 50_000 && s.seg.dsn < new_bytes {
                copies_before_all_sent += 1;
            }
            new_bytes = new_bytes.max(s.seg.dsn + s.seg.len as u64);
        }
        assert_eq!(copies_before_all_sent, 0);
        assert_eq!(p.client.counters.window_violations, 0);
    }

    #[test]
    fn persistent_connection_carries_messages_as_they_are_offered() {
        let mut p = pair(2, 0, Coupling::Lia);
        p.client.make_idle();
        p.run();
        assert_eq!(p.server.bytes_received(), 0);
        assert_eq!(p.client.subflows_opened(), 2);
        for bytes in [2_500u64, 7_300] {
            p.client.offer(bytes);
            p.run();
        }
        assert_eq!(p.server.bytes_received(), 9_800);
        assert_eq!(p.client.data_una, 9_800);
        assert!(
            p.client.finish.is_none(),
            "a persistent connection stays open"
        );
    }

    #[test]
    fn data_arrives_complete_over_all_subflows() {
        let mut p = pair(4, 200_000, Coupling::Lia);
        p.run();
        assert_eq!(p.server.bytes_received(), 200_000);
        assert_eq!(p.client.data_una, 200_000);
        assert!(p.client.finish.is_some());
        let per_sub = per_subflow(&p);
        assert!(
            per_sub.iter().all(|&c| c > 10),
            "every subflow carried data: {per_sub:?}"
        );
        assert_eq!(per_sub.iter().sum::<u64>(), 200);
    }

    #[test]
    fn uncoupled_and_amp_complete_too() {
        for (n, size, coupling) in [
            (2, 50_500, Coupling::Uncoupled),
            (3, 50_000, Coupling::Amp(amp::Ssr::new(2, 8))),
        ] {
            let mut p = pair(n, size, coupling);
            p.run();
            assert_eq!(p.server.bytes_received(), size);
            assert!(p.client.finish.is_some());
        }
    }

    /// Subflow 1 loses every fifth data segment it sends, retransmissions included:
    /// it repairs its own losses, each retransmission carries the data sequence numbers
    /// of the original, and the data arrives complete.
    #[test]
    fn a_transfer_finishes_over_two_subflows_with_one_lossy() {
        let mut p = pair(2, 100_000, Coupling::Lia);
        let mut k = 0;
        p.up.lose(move |s| {
            k += (s.sub == 1 && s.seg.len > 0) as u32;
            s.sub == 1 && s.seg.len > 0 && k % 5 == 0
        });
        p.finish();
        assert_eq!(p.server.bytes_received(), 100_000);
        let (lossy, clean) = (p.client.subs[1].stats(), p.client.subs[0].stats());
        assert!(lossy.packets_retx > 0 && clean.packets_retx == 0);
        for s in p.up.data() {
            let first =
                p.up.data()
                    .find(|o| o.sub == s.sub && o.seg.seq == s.seg.seq);
            assert_eq!(s.seg.dsn, first.unwrap().seg.dsn, "{s:?}");
        }
    }

    #[test]
    fn mmptcp_scatters_then_switches_to_the_other_subflows() {
        let mut p = pair(3, 30_000, Coupling::Lia);
        p.client.scatter_first(10_000, 7);
        assert_eq!(p.client.subs[0].config().dupack_threshold, 7);
        p.run();
        assert_eq!(p.server.bytes_received(), 30_000);
        let (mut scattered, mut on_others) = (0, 0);
        for s in p.up.data() {
            assert_eq!(s.seg.scatter, s.sub == 0, "only subflow 0 scatters");
            if s.sub == 0 {
                scattered += s.seg.len as u64;
            } else {
                on_others += s.seg.len as u64;
            }
        }
        assert_eq!(
            scattered, 10_000,
            "subflow 0 carried exactly the scatter volume"
        );
        assert_eq!(on_others, 20_000);
    }

    #[test]
    fn subflows_open_after_the_first_handshake_and_close_at_the_end() {
        let mut p = pair(3, 10_000, Coupling::Lia);
        p.run();
        assert_eq!(p.client.subflows_opened(), 3);
        let syns: Vec<(usize, SimTime)> =
            p.up.log
                .iter()
                .filter(|s| s.seg.is_syn())
                .map(|s| (s.sub, s.at))
                .collect();
        assert_eq!(syns, vec![(0, 0), (1, 2 * D), (2, 2 * D)]);
        assert!(
            p.client.subs.iter().all(|s| s.is_closed()),
            "every subflow sent and got its FIN acked"
        );
    }
}
