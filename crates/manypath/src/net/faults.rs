//! Link faults, per port (one direction of a link): random loss (Bernoulli), bursty loss
//! (a Gilbert–Elliott chain), black holes (all packets, or the flows whose hash falls in
//! a fraction of the hash space) and links that are down.
//!
//! A port without faults carries `NO_FAULT` and costs one comparison per packet. A
//! faulty port owns a `PortFault` with its own random stream, so adding a fault to one
//! link never changes the draws of another. Every model is stepped once per packet that
//! starts onto the link while it is up; a down link loses every packet without drawing.

use crate::engine::rng::{mix64, Rng};

/// The `fault` index of a port without faults.
pub const NO_FAULT: u32 = u32::MAX;

/// A two-state Markov chain stepped once per packet: a lossless good state and a bad
/// state that loses each packet with probability `bad_loss`.
///
/// From a long-run loss rate ρ and a mean burst length L (in packets, a burst being a
/// maximal run of consecutive lost packets), with loss probability h in the bad state:
/// each packet is first lost or not in the current state, then the chain moves. After a
/// lost packet (necessarily in the bad state) the next one is lost with probability
/// q = (1 − r)·h, r = P(bad → good), so burst lengths are geometric with mean
/// L = 1 / (1 − (1 − r)·h), hence r = 1 − (1 − 1/L) / h (r = 1/L when h = 1). The
/// stationary share of the bad state is π = p / (p + r), p = P(good → bad), and the loss
/// rate is ρ = h·π, hence p = r·π / (1 − π) with π = ρ / h.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GilbertElliott {
    /// P(good → bad) per packet.
    pub p_gb: f64,
    /// P(bad → good) per packet.
    pub p_bg: f64,
    /// Loss probability in the bad state.
    pub bad_loss: f64,
}

impl GilbertElliott {
    /// The chain with long-run loss rate `rate` and mean burst length `burst` packets, or
    /// why no chain with this bad-state loss probability has them.
    pub fn from_rate_and_burst(rate: f64, burst: f64, bad_loss: f64) -> Result<Self, String> {
        if !(bad_loss > 0.0 && bad_loss <= 1.0) {
            return Err(format!("bad_loss must be in (0, 1], got {bad_loss}"));
        }
        if !(rate > 0.0 && rate < bad_loss) {
            return Err(format!(
                "the loss rate must be in (0, {bad_loss}) (below bad_loss), got {rate}"
            ));
        }
        if !(burst >= 1.0 && burst.is_finite()) {
            return Err(format!(
                "the burst length must be at least 1 packet, got {burst}"
            ));
        }
        let stay_lost = 1.0 - 1.0 / burst;
        if stay_lost > bad_loss {
            return Err(format!(
                "a mean burst of {burst} packets needs bad_loss ≥ {stay_lost} (1 − 1/burst), got {bad_loss}"
            ));
        }
        let p_bg = 1.0 - stay_lost / bad_loss;
        let pi = rate / bad_loss;
        let p_gb = p_bg * pi / (1.0 - pi);
        if p_gb > 1.0 {
            return Err(format!(
                "a loss rate of {rate} with bursts of {burst} packets is out of reach: \
                 it needs the good state to last less than one packet (at most a rate of {} for this burst length)",
                bad_loss / (1.0 + p_bg)
            ));
        }
        Ok(GilbertElliott {
            p_gb,
            p_bg,
            bad_loss,
        })
    }

    /// Long-run fraction of packets lost.
    pub fn loss_rate(&self) -> f64 {
        self.bad_loss * self.p_gb / (self.p_gb + self.p_bg)
    }

    /// Mean length of a run of consecutive losses, in packets.
    pub fn mean_burst(&self) -> f64 {
        1.0 / (1.0 - (1.0 - self.p_bg) * self.bad_loss)
    }
}

/// What a fault does to the packets crossing a link direction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LossModel {
    /// Each packet is lost with probability `p`, independently.
    Bernoulli {
        p: f64,
    },
    GilbertElliott(GilbertElliott),
    /// Every packet of the flows whose hash, mixed with the port's own salt, falls in
    /// the lowest `fraction` of the 64-bit hash space (`fraction = 1`: every packet).
    /// The salt keeps the chosen flows independent of the ECMP choices that brought
    /// them here and of the black holes on other links.
    Blackhole {
        fraction: f64,
    },
}

impl LossModel {
    /// The long-run share of packets a random model loses (0 for black holes, whose
    /// share depends on the flows).
    pub fn random_loss_rate(&self) -> f64 {
        match self {
            LossModel::Bernoulli { p } => *p,
            LossModel::GilbertElliott(ge) => ge.loss_rate(),
            LossModel::Blackhole { .. } => 0.0,
        }
    }
}

#[derive(Clone, Debug)]
struct ModelState {
    model: LossModel,
    /// The Gilbert–Elliott chain is in its bad state.
    bad: bool,
    /// Black hole: packets whose mixed hash is below this are lost.
    threshold: u64,
    salt: u64,
}

impl ModelState {
    #[inline]
    fn loses(&mut self, rng: &mut Rng, hash: u32) -> bool {
        match self.model {
            LossModel::Bernoulli { p } => rng.uniform() < p,
            LossModel::GilbertElliott(ge) => {
                let lost = self.bad && (ge.bad_loss >= 1.0 || rng.uniform() < ge.bad_loss);
                let u = rng.uniform();
                self.bad = if self.bad { u >= ge.p_bg } else { u < ge.p_gb };
                lost
            }
            LossModel::Blackhole { .. } => {
                self.threshold == u64::MAX || mix64(hash as u64 ^ self.salt) < self.threshold
            }
        }
    }
}

/// The faults of one port.
#[derive(Clone, Debug)]
pub struct PortFault {
    models: Vec<ModelState>,
    /// The link is down: every packet sent into it is lost.
    pub down: bool,
    rng: Rng,
    last_lost: bool,
    /// Runs of consecutive packets lost on this link (for mean burst lengths).
    pub bursts: u64,
}

impl PortFault {
    /// `rng` is the port's own stream; black-hole salts are drawn from it here.
    pub fn new(rng: Rng) -> PortFault {
        PortFault {
            models: Vec::new(),
            down: false,
            rng,
            last_lost: false,
            bursts: 0,
        }
    }

    /// Adds a model; with several, a packet is lost when any of them loses it.
    pub fn add(&mut self, model: LossModel) {
        let (mut bad, mut threshold, mut salt) = (false, 0, 0);
        match model {
            // Start in the stationary distribution, so a short run is not biased
            // towards the good state.
            LossModel::GilbertElliott(ge) => {
                bad = self.rng.uniform() < ge.p_gb / (ge.p_gb + ge.p_bg);
            }
            LossModel::Blackhole { fraction } => {
                salt = self.rng.next_u64();
                threshold = if fraction >= 1.0 {
                    u64::MAX
                } else {
                    (fraction * 2f64.powi(64)) as u64
                };
            }
            LossModel::Bernoulli { .. } => {}
        }
        self.models.push(ModelState {
            model,
            bad,
            threshold,
            salt,
        });
    }

    /// Whether the packet with flow hash `hash` now starting onto the link is lost.
    #[inline]
    pub fn loses(&mut self, hash: u32) -> bool {
        let mut lost = self.down;
        if !lost {
            for m in &mut self.models {
                // Every chain steps on every packet, also after another model lost it.
                lost |= m.loses(&mut self.rng, hash);
            }
        }
        if lost && !self.last_lost {
            self.bursts += 1;
        }
        self.last_lost = lost;
        lost
    }

    /// The configured long-run loss probability of the random models together.
    pub fn random_loss_rate(&self) -> f64 {
        // P(any) = a + b − ab, folded so one model reports its own rate exactly.
        self.models
            .iter()
            .map(|m| m.model.random_loss_rate())
            .fold(0.0, |acc, r| acc + r - acc * r)
    }

    /// The share of the hash space the black holes take together.
    pub fn blackhole_fraction(&self) -> f64 {
        self.models
            .iter()
            .map(|m| match m.model {
                LossModel::Blackhole { fraction } => fraction,
                LossModel::Bernoulli { .. } | LossModel::GilbertElliott(_) => 0.0,
            })
            .fold(0.0, |acc, f| acc + f - acc * f)
    }
}

/// A scheduled change of a link (both directions).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkAction {
    /// The link stops carrying packets.
    Down,
    Up,
    /// Routing has detected the failure: it stops using the link.
    Unroute,
    /// Routing has detected the repair: it uses the link again.
    Reroute,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkEvent {
    pub at: crate::time::SimTime,
    /// The link's two ports.
    pub ports: [u32; 2],
    pub action: LinkAction,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `n` packets through a port with `model`; returns (loss rate, mean burst).
    fn measure(model: LossModel, n: u64, seed: u64) -> (f64, f64) {
        let mut f = PortFault::new(Rng::new(seed, 99, 0));
        f.add(model);
        let mut hash_rng = Rng::new(seed, 98, 0);
        let mut lost = 0u64;
        for _ in 0..n {
            lost += f.loses(hash_rng.next_u64() as u32) as u64;
        }
        (lost as f64 / n as f64, lost as f64 / f.bursts.max(1) as f64)
    }

    #[test]
    fn gilbert_elliott_parameters_round_trip() {
        for &(rate, burst, h) in &[(0.01, 1.0, 1.0), (0.05, 4.0, 1.0), (0.2, 10.0, 0.95)] {
            let ge = GilbertElliott::from_rate_and_burst(rate, burst, h).unwrap();
            assert!((ge.loss_rate() - rate).abs() < 1e-12, "{ge:?}");
            assert!((ge.mean_burst() - burst).abs() < 1e-9, "{ge:?}");
        }
        let ge = GilbertElliott::from_rate_and_burst(0.05, 4.0, 1.0).unwrap();
        assert!((ge.p_bg - 0.25).abs() < 1e-12);
        assert!((ge.p_gb - 0.25 * 0.05 / 0.95).abs() < 1e-12);
    }

    #[test]
    fn gilbert_elliott_rejects_unreachable_settings() {
        assert!(GilbertElliott::from_rate_and_burst(0.6, 1.0, 1.0).is_err());
        assert!(GilbertElliott::from_rate_and_burst(0.05, 0.5, 1.0).is_err());
        assert!(GilbertElliott::from_rate_and_burst(0.05, 20.0, 0.5).is_err());
        assert!(GilbertElliott::from_rate_and_burst(0.5, 4.0, 0.5).is_err());
        assert!(GilbertElliott::from_rate_and_burst(-0.1, 4.0, 1.0).is_err());
    }

    #[test]
    fn gilbert_elliott_chain_gives_its_rate_and_bursts() {
        for &(rate, burst, h) in &[(0.05, 4.0, 1.0), (0.01, 2.0, 1.0), (0.1, 3.0, 0.8)] {
            let ge = GilbertElliott::from_rate_and_burst(rate, burst, h).unwrap();
            let (r, b) = measure(LossModel::GilbertElliott(ge), 2_000_000, 3);
            assert!((r - rate).abs() < 0.05 * rate, "rate {r} vs {rate}");
            assert!((b - burst).abs() < 0.05 * burst, "burst {b} vs {burst}");
        }
    }

    #[test]
    fn bernoulli_losses_are_isolated() {
        let (r, b) = measure(LossModel::Bernoulli { p: 0.2 }, 1_000_000, 5);
        assert!((r - 0.2).abs() < 0.005, "{r}");
        // Independent losses: bursts are geometric with mean 1/(1 − p).
        assert!((b - 1.25).abs() < 0.02, "{b}");
    }

    #[test]
    fn blackhole_takes_its_share_of_flows_and_all_their_packets() {
        let mut f = PortFault::new(Rng::new(1, 99, 0));
        f.add(LossModel::Blackhole { fraction: 0.25 });
        let mut hashes = Rng::new(1, 98, 0);
        let mut lost_flows = 0;
        for _ in 0..20_000 {
            let h = hashes.next_u64() as u32;
            let first = f.loses(h);
            for _ in 0..5 {
                assert_eq!(f.loses(h), first, "a flow is either black-holed or not");
            }
            lost_flows += first as u32;
        }
        let share = lost_flows as f64 / 20_000.0;
        assert!((share - 0.25).abs() < 0.015, "{share}");
        let mut all = PortFault::new(Rng::new(1, 99, 1));
        all.add(LossModel::Blackhole { fraction: 1.0 });
        assert!((0..1000).all(|h| all.loses(h)));
    }

    #[test]
    fn down_link_loses_everything_and_models_compose() {
        let mut f = PortFault::new(Rng::new(1, 99, 0));
        f.add(LossModel::Bernoulli { p: 0.1 });
        f.add(LossModel::Bernoulli { p: 0.1 });
        assert!((f.random_loss_rate() - 0.19).abs() < 1e-12);
        f.down = true;
        assert!((0..100).all(|h| f.loses(h)));
        assert_eq!(f.bursts, 1);
    }
}
