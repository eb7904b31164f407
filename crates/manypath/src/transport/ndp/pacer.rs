//! The pull pacer of a receiving host's NIC (NDP, §3.2): every data packet or trimmed
//! header that arrives for any NDP flow to the host asks for one PULL; the pacer sends
//! them in the order asked, one per serialisation time of a full data packet at the
//! NIC's line rate, so the data they call for arrives at no more than the link's rate
//! however many senders there are.

use crate::time::SimTime;
use std::collections::VecDeque;

/// One host NIC's pull pacer: the connections waiting for a PULL (one entry per PULL
/// asked for) and when the next may go.
#[derive(Clone, Debug, Default)]
pub struct PullPacer {
    waiting: VecDeque<u32>,
    /// The earliest time of the next PULL.
    free_at: SimTime,
    /// The simulator has an event pending for this pacer.
    armed: bool,
}

impl PullPacer {
    /// Connection `conn` asks for one PULL.
    pub fn request(&mut self, conn: u32) {
        self.waiting.push_back(conn);
    }

    /// The connection whose PULL may go now, if any (taken from the queue).
    pub fn next(&mut self, now: SimTime) -> Option<u32> {
        if now < self.free_at {
            return None;
        }
        self.waiting.pop_front()
    }

    /// A PULL went at `now`; the next waits `interval` (the time the data packet it
    /// calls for takes on the NIC's link).
    pub fn sent(&mut self, now: SimTime, interval: SimTime) {
        self.free_at = now + interval;
    }

    /// When the pacer must be woken, if it has requests and no wake-up pending (it then
    /// counts one as pending until `woken`).
    pub fn wake_at(&mut self, now: SimTime) -> Option<SimTime> {
        if self.armed || self.waiting.is_empty() {
            return None;
        }
        self.armed = true;
        Some(self.free_at.max(now))
    }

    /// The wake-up came.
    pub fn woken(&mut self) {
        self.armed = false;
    }

    pub fn waiting(&self) -> usize {
        self.waiting.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Requests of several flows go out one per interval, in the order asked, and the
    /// pacer asks for one wake-up at a time.
    #[test]
    fn pulls_go_one_per_interval_in_order() {
        let mut p = PullPacer::default();
        for c in [3, 5, 3] {
            p.request(c);
        }
        assert_eq!(p.wake_at(0), Some(0));
        assert_eq!(p.wake_at(0), None, "one wake-up pending");
        let mut sent = Vec::new();
        let mut now = 0;
        while let Some(at) = {
            p.woken();
            p.wake_at(now)
        } {
            now = at;
            p.woken();
            if let Some(c) = p.next(now) {
                sent.push((now, c));
                p.sent(now, 100);
            }
            assert_eq!(p.next(now), None, "one per interval");
        }
        assert_eq!(sent, vec![(0, 3), (100, 5), (200, 3)]);
        assert_eq!(p.waiting(), 0);
    }

    #[test]
    fn an_idle_pacer_sends_at_once() {
        let mut p = PullPacer::default();
        p.request(1);
        p.next(0);
        p.sent(0, 100);
        p.woken();
        // Long after, a new request goes immediately.
        p.request(2);
        assert_eq!(p.wake_at(1000), Some(1000));
        assert_eq!(p.next(1000), Some(2));
    }
}
