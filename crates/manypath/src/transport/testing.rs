//! A bench for transport tests: a client and a server joined by two one-way links with a
//! fixed delay (`up`, client to server, and `down`), each of which can lose chosen
//! segments or hold them back (reordering). Time moves as the simulator moves it,
//! sans-IO: a step first puts on the links whatever the two ends have to send now
//! (polling each until it yields nothing), then advances to the next arrival or timer
//! deadline and handles that one event. A test builds a pair, sets the links' rules,
//! runs it, and reads the ends' state and the links' logs:
//!
//! ```ignore
//! let mut p = testing::tcp(testing::cfg(), 10_000, D);
//! p.up.lose(testing::first_sends(&[2000]));
//! p.run();
//! assert_eq!(p.client.stats().fast_retx, 1);
//! ```

use std::ops::RangeBounds;

use crate::net::packet::flags;
use crate::time::SimTime;
use crate::transport::cc::Reno;
use crate::transport::mpcc::{Coupled, Coupling, EcnResponse};
use crate::transport::mptcp::{MptcpReceiver, MptcpSender, Scheduler};
use crate::transport::protocol::Cc;
use crate::transport::roce::{RoceReceiver, RoceSender};
use crate::transport::tcp::{Segment, TcpConfig, TcpReceiver, TcpSender};

/// One end of a connection as the bench drives it; `sub` is the subflow (0 for TCP).
pub(crate) trait End {
    fn deliver(&mut self, now: SimTime, sub: usize, seg: &Segment);
    /// The next segment to send now, and its subflow.
    fn poll(&mut self, now: SimTime) -> Option<(usize, Segment)>;
    fn fire(&mut self, now: SimTime);
    fn deadline(&self) -> Option<SimTime>;
}

/// `End` for the state machines, whose methods have the same names: a TCP end's
/// segments are on subflow 0, a multipath end's on the subflow it names.
macro_rules! end {
    (tcp $($t:ty),*) => {$(
        impl End for $t {
            fn deliver(&mut self, now: SimTime, _: usize, seg: &Segment) {
                self.on_segment(now, seg);
            }
            fn poll(&mut self, now: SimTime) -> Option<(usize, Segment)> {
                self.poll_transmit(now).map(|s| (0, s))
            }
            end!(timers);
        }
    )*};
    (mptcp $($t:ty),*) => {$(
        impl End for $t {
            fn deliver(&mut self, now: SimTime, sub: usize, seg: &Segment) {
                self.on_segment(now, sub, seg);
            }
            fn poll(&mut self, now: SimTime) -> Option<(usize, Segment)> {
                self.poll_transmit(now)
            }
            end!(timers);
        }
    )*};
    (timers) => {
        fn fire(&mut self, now: SimTime) {
            self.on_timer(now);
        }
        fn deadline(&self) -> Option<SimTime> {
            self.timer_deadline()
        }
    };
}

end!(tcp TcpSender, TcpReceiver, RoceSender, RoceReceiver);
end!(mptcp MptcpSender, MptcpReceiver);

/// What a link does with a segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fate {
    Deliver,
    Lose,
    /// Deliver this much later than the link's delay (later segments overtake it).
    Hold(SimTime),
}

/// A segment put on a link.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sent {
    /// Its place among the segments put on the link, from 0.
    pub n: usize,
    /// When it was put on the link.
    pub at: SimTime,
    pub sub: usize,
    pub seg: Segment,
    pub fate: Fate,
}

/// One direction: a fixed delay, a rule that decides each segment's fate, and the log
/// of everything put on it.
pub(crate) struct Link {
    pub delay: SimTime,
    rule: Box<dyn FnMut(&Sent) -> Fate>,
    /// Every segment put on the link, in order, with its fate.
    pub log: Vec<Sent>,
    /// The segments on their way: arrival time and place in `log`.
    flight: Vec<(SimTime, usize)>,
}

impl Link {
    fn new(delay: SimTime) -> Link {
        Link {
            delay,
            rule: Box::new(|_| Fate::Deliver),
            log: Vec::new(),
            flight: Vec::new(),
        }
    }

    /// Decides the fate of each segment put on the link from now on (the rule sees the
    /// segment with `fate: Deliver`). By default every one is delivered.
    pub fn set_rule(&mut self, rule: impl FnMut(&Sent) -> Fate + 'static) {
        self.rule = Box::new(rule);
    }

    /// Loses the segments `pick` picks, delivers the others.
    pub fn lose(&mut self, mut pick: impl FnMut(&Sent) -> bool + 'static) {
        self.set_rule(move |s| if pick(s) { Fate::Lose } else { Fate::Deliver });
    }

    fn send(&mut self, at: SimTime, sub: usize, seg: Segment) {
        let mut s = Sent {
            n: self.log.len(),
            at,
            sub,
            seg,
            fate: Fate::Deliver,
        };
        s.fate = (self.rule)(&s);
        match s.fate {
            Fate::Deliver => self.flight.push((at + self.delay, s.n)),
            Fate::Hold(extra) => self.flight.push((at + self.delay + extra, s.n)),
            Fate::Lose => {}
        }
        self.log.push(s);
    }

    /// The next arrival: its time and its place in `flight` (equal times in the order
    /// sent).
    fn next_arrival(&self) -> Option<(SimTime, usize)> {
        let (i, &(t, _)) = self
            .flight
            .iter()
            .enumerate()
            .min_by_key(|(_, &(t, n))| (t, n))?;
        Some((t, i))
    }

    fn arrive(&mut self, i: usize) -> Sent {
        let (_, n) = self.flight.swap_remove(i);
        self.log[n]
    }

    /// The segments with a payload put on the link, lost ones included.
    pub fn data(&self) -> impl Iterator<Item = &Sent> {
        self.log.iter().filter(|s| s.seg.len > 0)
    }

    /// When the data segment at `seq` was put on the link, each time.
    pub fn times_of(&self, seq: u64) -> Vec<SimTime> {
        self.data()
            .filter(|s| s.seg.seq == seq)
            .map(|s| s.at)
            .collect()
    }

    /// The sequence numbers of the segments with a payload put on the link at times in
    /// `when`, in order.
    pub fn seqs(&self, when: impl RangeBounds<SimTime>) -> Vec<u64> {
        self.data()
            .filter(|s| when.contains(&s.at))
            .map(|s| s.seg.seq)
            .collect()
    }
}

/// A rule for `Link::lose`: the first transmission of each data segment that starts at
/// one of `seqs` (of one listed twice, the first two; coded packets aside).
pub(crate) fn first_sends(seqs: &[u64]) -> impl FnMut(&Sent) -> bool + 'static {
    let mut left = seqs.to_vec();
    move |s| {
        if s.seg.len == 0 || s.seg.has(flags::CODED) {
            return false;
        }
        match left.iter().position(|&q| q == s.seg.seq) {
            Some(i) => {
                left.swap_remove(i);
                true
            }
            None => false,
        }
    }
}

/// What happens next.
#[derive(Clone, Copy, Debug)]
enum Event {
    /// An arrival on `up`, `down` (its place in the link's `flight`).
    Up(usize),
    Down(usize),
    ClientTimer,
    ServerTimer,
}

/// Steps a run may take: a run that takes more is stuck (a timer that does not move).
const MAX_STEPS: usize = 1_000_000;

/// A client and a server over two links.
pub(crate) struct Pair<C, S> {
    pub client: C,
    pub server: S,
    /// The time reached.
    pub now: SimTime,
    /// Client to server.
    pub up: Link,
    /// Server to client.
    pub down: Link,
}

impl<C: End, S: End> Pair<C, S> {
    /// The two ends over links of one-way `delay` that deliver everything, at time 0.
    pub fn new(client: C, server: S, delay: SimTime) -> Pair<C, S> {
        Pair {
            client,
            server,
            now: 0,
            up: Link::new(delay),
            down: Link::new(delay),
        }
    }

    /// Puts on the links what either end has to send now, polling each until it
    /// yields nothing.
    pub fn flush(&mut self) {
        let now = self.now;
        while let Some((sub, seg)) = self.client.poll(now) {
            self.up.send(now, sub, seg);
        }
        while let Some((sub, seg)) = self.server.poll(now) {
            self.down.send(now, sub, seg);
        }
    }

    /// The next event and its time: the earliest arrival or deadline, equal times in
    /// the order arrivals up, down, the client's timer, the server's.
    fn next(&self) -> Option<(SimTime, Event)> {
        let up = self.up.next_arrival().map(|(t, i)| (t, Event::Up(i)));
        let down = self.down.next_arrival().map(|(t, i)| (t, Event::Down(i)));
        let client = self.client.deadline().map(|t| (t, Event::ClientTimer));
        let server = self.server.deadline().map(|t| (t, Event::ServerTimer));
        [up, down, client, server]
            .into_iter()
            .flatten()
            .reduce(|a, b| if b.0 < a.0 { b } else { a })
    }

    fn handle(&mut self, at: SimTime, e: Event) {
        // A deadline already passed is handled now.
        self.now = self.now.max(at);
        let now = self.now;
        match e {
            Event::Up(i) => {
                let s = self.up.arrive(i);
                self.server.deliver(now, s.sub, &s.seg);
            }
            Event::Down(i) => {
                let s = self.down.arrive(i);
                self.client.deliver(now, s.sub, &s.seg);
            }
            Event::ClientTimer => self.client.fire(now),
            Event::ServerTimer => self.server.fire(now),
        }
    }

    /// Flushes, then handles the next arrival or timer. Returns its time, or `None`
    /// when nothing is left to happen.
    pub fn step(&mut self) -> Option<SimTime> {
        self.flush();
        let (at, e) = self.next()?;
        self.handle(at, e);
        Some(self.now)
    }

    /// Steps while `go` holds and something is left to happen.
    pub fn run_while(&mut self, mut go: impl FnMut(&Self) -> bool) {
        for _ in 0..MAX_STEPS {
            if !go(self) || self.step().is_none() {
                return;
            }
        }
        panic!("no end after {MAX_STEPS} steps, at {} ps", self.now);
    }

    /// Runs until nothing is left to happen.
    pub fn run(&mut self) {
        self.run_while(|_| true);
    }

    /// Handles everything that happens up to `t` and sends what follows from it; the
    /// clock then reads `t`.
    pub fn run_until(&mut self, t: SimTime) {
        for _ in 0..MAX_STEPS {
            self.flush();
            match self.next() {
                Some((at, e)) if at <= t => self.handle(at, e),
                _ => {
                    self.now = self.now.max(t);
                    return;
                }
            }
        }
        panic!("no end after {MAX_STEPS} steps, at {} ps", self.now);
    }
}

/// The bench's TCP settings: the defaults with a 1000-byte MSS, so that sequence
/// numbers are round.
pub(crate) fn cfg() -> TcpConfig {
    TcpConfig {
        mss: 1000,
        ..TcpConfig::default()
    }
}

/// A TCP flow of `size` bytes under Reno over links of one-way `delay`; the SYN goes
/// out at the first step.
pub(crate) fn tcp(cfg: TcpConfig, size: u64, delay: SimTime) -> Pair<TcpSender, TcpReceiver> {
    let mut client = TcpSender::new(cfg, Cc::Reno(Reno::default()), size);
    client.open();
    Pair::new(client, TcpReceiver::new(cfg), delay)
}

impl Pair<TcpSender, TcpReceiver> {
    /// Runs until the handshake is done; the client's first data goes out at the next
    /// step (or `flush`).
    pub fn establish(&mut self) {
        self.run_while(|p| !p.client.is_established());
    }

    /// Runs until every data byte is acknowledged, and returns that time.
    pub fn finish(&mut self) -> SimTime {
        self.run_while(|p| p.client.finish().is_none());
        self.client.finish().expect("the flow finishes")
    }
}

/// A multipath flow of `size` bytes over `n` subflows, round robin, with subflow
/// controllers that halve on ECN (the coupled ones) or Reno (`Coupling::Uncoupled`),
/// over links of one-way `delay`; the first SYN goes out at the first step.
pub(crate) fn mptcp(
    cfg: TcpConfig,
    n: usize,
    size: u64,
    coupling: Coupling,
    delay: SimTime,
) -> Pair<MptcpSender, MptcpReceiver> {
    let floor = cfg.cwnd_min as f64 * cfg.mss as f64;
    let subs = (0..n)
        .map(|_| {
            let cc = match coupling {
                Coupling::Uncoupled => Cc::Reno(Reno::default()),
                Coupling::Lia
                | Coupling::Olia
                | Coupling::Dcm
                | Coupling::Xmp
                | Coupling::Amp(_) => Cc::Coupled(Coupled::new(EcnResponse::Halve, floor)),
            };
            TcpSender::new(cfg, cc, 0)
        })
        .collect();
    let mut client = MptcpSender::new(subs, size, coupling, Scheduler::RoundRobin, 0);
    client.open();
    Pair::new(client, MptcpReceiver::new(cfg, n), delay)
}

impl Pair<MptcpSender, MptcpReceiver> {
    /// Runs until the data-level ACK covers every byte, and returns that time.
    pub fn finish(&mut self) -> SimTime {
        self.run_while(|p| p.client.finish.is_none());
        self.client.finish.expect("the flow finishes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::PS_PER_US;

    const D: SimTime = 10 * PS_PER_US;

    #[test]
    fn segments_arrive_one_delay_later_and_timers_fire_at_their_deadline() {
        let mut p = tcp(cfg(), 3000, D);
        p.establish();
        assert_eq!(p.now, 2 * D, "the SYN-ACK is in after one round trip");
        assert_eq!(
            p.finish(),
            4 * D,
            "the data is acknowledged one round trip later"
        );
        assert_eq!(p.up.seqs(2 * D..=2 * D), vec![0, 1000, 2000]);
        p.run();
        assert!(p.client.is_closed());

        // The SYN lost: it goes again when the retransmission timer runs out (1 s).
        let mut p = tcp(cfg(), 3000, D);
        p.up.lose(|s| s.n == 0);
        p.establish();
        let rto = cfg().rto_initial;
        assert_eq!(p.up.log[1].at, rto);
        assert!(p.up.log[1].seg.is_syn());
        assert_eq!(p.now, rto + 2 * D);
    }

    #[test]
    fn a_held_segment_is_overtaken_and_a_lost_one_never_arrives() {
        let mut p = tcp(cfg(), 4000, D);
        p.up.set_rule(|s| match s.seg.seq {
            1000 if s.seg.len > 0 && s.n < 5 => Fate::Hold(D / 2),
            3000 => Fate::Lose,
            _ => Fate::Deliver,
        });
        p.establish();
        p.run_until(3 * D + D / 2);
        // 0, 2000 and the FIN in the order sent, 1000 half a delay later; 3000 never.
        assert_eq!(p.server.bytes_received(), 3000);
        let acks: Vec<u64> = p.down.log.iter().skip(1).map(|s| s.seg.ack).collect();
        assert_eq!(acks, vec![1000, 1000, 1000, 3000]);
        assert_eq!(p.now, 3 * D + D / 2);
    }
}
