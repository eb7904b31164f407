//! RWNDQ: switch-assisted congestion control through the TCP receive window
//! (Abdelmoniem and Bensaou). The switch keeps, per output port, a count of the TCP
//! connections crossing it (from the SYN-ACK and FIN/RST it forwards) and a local window:
//! every `interval` it adds (target − queue) to an accumulator, every `updates` ticks it
//! moves the local window by the accumulator's average, and each connection's fair share
//! is the local window divided by the count. ACKs that advertise a larger receive window
//! than the fair share of the port they arrive on (the port whose queue holds the data
//! they acknowledge) get it rewritten downward. Senders are plain TCP; they just honour
//! the receive window.
//!
//! This is the per-port state machine, driven by the simulator (sans-IO): it never sees
//! a packet, only the events the switch extracts from one.
//!
//! The arithmetic is the kernel module's: integer bytes, C's truncating division. The
//! counts come only from packets, as in the module, so a retransmitted SYN-ACK or FIN is
//! counted again; counts are kept from going below zero.

use crate::time::SimTime;

/// Parameters of one RWNDQ port.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RwndqConfig {
    /// Period of the window-update timer (T).
    pub interval: SimTime,
    /// Timer ticks per local-window update (M).
    pub updates: u32,
    /// Queue occupancy the port steers to, in bytes.
    pub target_bytes: u64,
    /// Segment size: slow start adds 2 MSS per tick; the fair share is at least 1 MSS.
    pub mss: u32,
}

/// The largest receive window without window scaling (the module ignores scaling).
pub const MAX_WINDOW: i64 = 65_535;

#[derive(Clone, Debug)]
pub struct RwndqPort {
    pub cfg: RwndqConfig,
    /// Connections counted on this port.
    pub conns: u32,
    /// The port's local window (all its connections together), in bytes.
    pub local_wnd: i64,
    /// Per-connection fair share written into ACKs, in bytes.
    pub wnd: u32,
    /// Accumulated (target − queue) since the last update.
    incr: i64,
    ticks: u32,
    /// Until the queue first reaches the target, the window grows by 2 MSS per tick.
    pub slow_start: bool,
    /// A timer event for this port is pending.
    pub timer_armed: bool,
    /// ACKs whose window was lowered.
    pub rewrites: u64,
    /// Most connections counted at once.
    pub peak_conns: u32,
}

impl RwndqPort {
    pub fn new(cfg: RwndqConfig) -> RwndqPort {
        RwndqPort {
            cfg,
            conns: 0,
            local_wnd: cfg.target_bytes as i64,
            wnd: cfg.target_bytes.min(MAX_WINDOW as u64) as u32,
            incr: 0,
            ticks: 0,
            slow_start: true,
            timer_armed: false,
            rewrites: 0,
            peak_conns: 0,
        }
    }

    /// A SYN-ACK crossed this port (in either direction). Returns true when the port's
    /// timer has to be started.
    pub fn on_syn_ack(&mut self) -> bool {
        self.conns += 1;
        self.peak_conns = self.peak_conns.max(self.conns);
        if self.conns == 1 {
            // The first flow: the switch knows nothing of the path's bandwidth-delay
            // product, so it starts from the target and probes in slow start.
            self.local_wnd = self.cfg.target_bytes as i64;
            self.wnd = self.local_wnd.clamp(0, MAX_WINDOW) as u32;
            self.slow_start = true;
            self.incr = 0;
            self.ticks = 0;
        } else {
            // The current share is spread over one more flow.
            let n = self.conns as u64;
            self.wnd = (self.wnd as u64 * (n - 1) / n) as u32;
        }
        !self.timer_armed
    }

    /// A FIN or RST arrived on this port.
    pub fn on_fin(&mut self) {
        if self.conns == 0 {
            return;
        }
        self.conns -= 1;
        if self.conns >= 1 {
            let n = self.conns as u64;
            self.wnd = ((self.wnd as u64 * (n + 1)) / n).min(MAX_WINDOW as u64) as u32;
        }
    }

    /// The receive window an ACK arriving on this port leaves with.
    #[inline]
    pub fn rewrite(&mut self, rwnd: u32) -> u32 {
        if self.wnd < rwnd {
            self.rewrites += 1;
            self.wnd
        } else {
            rwnd
        }
    }

    /// One timer tick with the port's queue holding `backlog` bytes. Returns whether the
    /// timer goes on (it stops while the port has no connections).
    pub fn on_tick(&mut self, backlog: u64) -> bool {
        if self.conns == 0 {
            self.timer_armed = false;
            return false;
        }
        let target = self.cfg.target_bytes as i64;
        let backlog = backlog as i64;
        if self.slow_start && backlog >= target {
            self.slow_start = false;
        }
        if self.slow_start {
            self.incr += 2 * self.cfg.mss as i64;
        } else {
            self.incr += target - backlog;
        }
        self.ticks += 1;
        if self.ticks == self.cfg.updates {
            let n = self.conns as i64;
            self.local_wnd += self.incr / self.cfg.updates as i64;
            self.local_wnd = self.local_wnd.min(MAX_WINDOW * n);
            self.local_wnd = self.local_wnd.max(self.cfg.mss as i64 * n);
            self.wnd = (self.local_wnd / n) as u32;
            self.incr = 0;
            self.ticks = 0;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn port() -> RwndqPort {
        RwndqPort::new(RwndqConfig {
            interval: 1_000_000,
            updates: 4,
            target_bytes: 20_000,
            mss: 1460,
        })
    }

    #[test]
    fn first_flow_starts_from_the_target_in_slow_start() {
        let mut p = port();
        assert!(p.on_syn_ack());
        assert_eq!(p.conns, 1);
        assert_eq!(p.wnd, 20_000);
        assert!(p.slow_start);
        // Slow start: +2 MSS per tick, applied every 4 ticks as the average.
        for _ in 0..4 {
            assert!(p.on_tick(0));
        }
        assert_eq!(p.local_wnd, 20_000 + 2 * 1460);
        assert_eq!(p.wnd, 20_000 + 2 * 1460);
    }

    #[test]
    fn share_follows_the_flow_count() {
        let mut p = port();
        p.on_syn_ack();
        p.timer_armed = true;
        assert!(!p.on_syn_ack(), "timer already running");
        assert_eq!(p.wnd, 10_000);
        p.on_syn_ack();
        assert_eq!(p.wnd, 6_666);
        p.on_fin();
        assert_eq!(p.wnd, 9_999);
        p.on_fin();
        p.on_fin();
        p.on_fin(); // a duplicate FIN does not take the count below zero
        assert_eq!(p.conns, 0);
        assert!(!p.on_tick(0), "an idle port stops its timer");
        assert!(!p.timer_armed);
    }

    #[test]
    fn queue_above_target_shrinks_the_window_and_below_grows_it() {
        let mut p = port();
        p.on_syn_ack();
        p.on_syn_ack();
        // Leaves slow start at once: the queue is above the target.
        for _ in 0..4 {
            p.on_tick(30_000);
        }
        assert!(!p.slow_start);
        assert_eq!(p.local_wnd, 20_000 - 10_000);
        assert_eq!(p.wnd, 5_000);
        for _ in 0..4 {
            p.on_tick(16_000);
        }
        assert_eq!(p.local_wnd, 14_000);
        // Slow start does not come back when the queue drains.
        for _ in 0..4 {
            p.on_tick(0);
        }
        assert_eq!(p.local_wnd, 34_000);
    }

    #[test]
    fn window_is_clamped_per_flow() {
        let mut p = port();
        p.on_syn_ack();
        for _ in 0..4 {
            p.on_tick(1_000_000);
        }
        assert_eq!(p.local_wnd, 1460, "at least one MSS per flow");
        assert_eq!(p.wnd, 1460);
        for _ in 0..400 {
            p.on_tick(0);
        }
        assert_eq!(p.local_wnd, MAX_WINDOW, "at most 65535 per flow");
    }

    #[test]
    fn only_larger_windows_are_rewritten() {
        let mut p = port();
        p.on_syn_ack();
        assert_eq!(p.rewrite(4 << 20), 20_000);
        assert_eq!(p.rewrite(10_000), 10_000);
        assert_eq!(p.rewrites, 1);
    }
}
