//! The `[[faults]]` entries of a scenario: validation into a `FaultPlan`, and, for a
//! seed, its resolution into loss models per port and scheduled link changes.
//!
//! Randomly placed lossy links are drawn when the run starts (not at validation), so a
//! seed given at run time places them anew; each generator entry has its own stream.

use super::checker::Checker;
use super::schema::{FaultKind, FaultSpec, RateDistSpec};
use crate::engine::rng::{stream, Rng};
use crate::net::faults::{GilbertElliott, LinkAction, LinkEvent, LossModel};
use crate::net::network::Network;
use crate::net::topology::Topology;
use crate::time::SimTime;

/// One direction of a topology link: an index into `Topology::links` and 0 for a → b,
/// 1 for b → a.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DirectedLink {
    pub link: u32,
    pub dir: u8,
}

/// The share of lossy links per level of the FUSO document's measurements (§2.1):
/// server–ToR, ToR–Agg, Agg–Spine, Spine–Core.
pub const MEASURED_TIER_WEIGHTS: [f64; 4] = [0.22, 0.24, 0.25, 0.29];

/// The document's weights mapped onto a topology's `n` tiers, taken in order from the
/// hosts up: tier i gets level i's weight, and the topmost tier also takes the weights
/// of the levels the topology lacks, so the host tier keeps its 22% (the edge/network
/// split the measurements stress) whatever the number of tiers.
pub fn default_tier_weights(n: usize) -> Vec<f64> {
    let m = MEASURED_TIER_WEIGHTS.len();
    (0..n)
        .map(|i| match i {
            _ if i + 1 == n && i < m => MEASURED_TIER_WEIGHTS[i..].iter().sum(),
            _ if i < m => MEASURED_TIER_WEIGHTS[i],
            _ => 0.0,
        })
        .collect()
}

/// A distribution of loss rates.
#[derive(Clone, Debug, PartialEq)]
pub enum RateDist {
    Fixed(f64),
    Uniform {
        min: f64,
        max: f64,
    },
    /// Density ∝ x^(−shape−1) on [min, max].
    BoundedPareto {
        min: f64,
        max: f64,
        shape: f64,
    },
    Values(Vec<f64>),
}

/// The mean of the bounded Pareto with this shape on [min, max]:
/// shape/(shape−1) · (min^(1−shape) − max^(1−shape)) / (min^(−shape) − max^(−shape)),
/// and ln(max/min) / (1/min − 1/max) at shape 1.
pub fn bounded_pareto_mean(min: f64, max: f64, shape: f64) -> f64 {
    if (shape - 1.0).abs() < 1e-9 {
        (max / min).ln() / (1.0 / min - 1.0 / max)
    } else {
        shape / (shape - 1.0) * (min.powf(1.0 - shape) - max.powf(1.0 - shape))
            / (min.powf(-shape) - max.powf(-shape))
    }
}

/// Shapes searched for a bounded Pareto's mean: the mean falls from about the
/// log-uniform mean (shape → 0) towards `min` (shape → ∞) as the shape grows.
const SHAPE_RANGE: (f64, f64) = (1e-6, 50.0);

/// The shape whose bounded Pareto on [min, max] has mean `mean`, found by bisection
/// (the mean is decreasing in the shape).
pub fn bounded_pareto_shape(min: f64, max: f64, mean: f64) -> Result<f64, String> {
    let (mut lo, mut hi) = SHAPE_RANGE;
    let (top, bottom) = (
        bounded_pareto_mean(min, max, lo),
        bounded_pareto_mean(min, max, hi),
    );
    if !(mean < top && mean > bottom) {
        return Err(format!(
            "a bounded Pareto on [{min}, {max}] has a mean between {bottom:.4} and {top:.4} \
             (use uniform for a flatter distribution), got {mean}"
        ));
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if bounded_pareto_mean(min, max, mid) > mean {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(0.5 * (lo + hi))
}

impl RateDist {
    /// The document's loss rates: 1% to 60% (the measured tail above 60% left out, as
    /// the document does), mean 4%, as a bounded Pareto (most lossy links lose a few
    /// percent, a few lose tens of percent).
    pub fn measured() -> RateDist {
        let (min, max, mean) = (0.01, 0.6, 0.04);
        RateDist::BoundedPareto {
            min,
            max,
            shape: bounded_pareto_shape(min, max, mean).expect("the mean is reachable"),
        }
    }

    pub fn sample(&self, rng: &mut Rng) -> f64 {
        match self {
            RateDist::Fixed(p) => *p,
            RateDist::Uniform { min, max } => min + (max - min) * rng.uniform(),
            RateDist::BoundedPareto { min, max, shape } => {
                // Inverse of F(x) = (1 − (min/x)^shape) / (1 − (min/max)^shape).
                let r = (min / max).powf(*shape);
                let x = min * (1.0 - rng.uniform() * (1.0 - r)).powf(-1.0 / shape);
                x.min(*max)
            }
            RateDist::Values(v) => v[rng.below(v.len() as u64) as usize],
        }
    }

    pub fn max(&self) -> f64 {
        match self {
            RateDist::Fixed(p) => *p,
            RateDist::Uniform { max, .. } | RateDist::BoundedPareto { max, .. } => *max,
            RateDist::Values(v) => v.iter().cloned().fold(0.0, f64::max),
        }
    }

    pub fn mean(&self) -> f64 {
        match self {
            RateDist::Fixed(p) => *p,
            RateDist::Uniform { min, max } => 0.5 * (min + max),
            RateDist::BoundedPareto { min, max, shape } => bounded_pareto_mean(*min, *max, *shape),
            RateDist::Values(v) => v.iter().sum::<f64>() / v.len() as f64,
        }
    }
}

/// A generator of randomly placed lossy links.
#[derive(Clone, Debug)]
pub struct RandomLossy {
    /// Index of the generator's random stream.
    pub stream: u64,
    /// Share of all links made lossy.
    pub fraction: f64,
    /// Relative placement weight of each tier.
    pub weights: Vec<f64>,
    pub rates: RateDist,
    /// Mean burst length and bad-state loss: lossy links are Gilbert–Elliott, not
    /// Bernoulli.
    pub burst: Option<(f64, f64)>,
}

impl RandomLossy {
    /// Chooses round(fraction × links) links (rounded up with probability equal to the
    /// fractional part, so the expected count is exact): each time a tier by weight
    /// among the tiers with links left, then one of its links uniformly. Both directions
    /// of a chosen link get the same drawn rate, each with its own loss process.
    pub fn place(&self, seed: u64, topo: &Topology) -> Vec<(DirectedLink, LossModel)> {
        let mut rng = Rng::new(seed, stream::FAULT, self.stream);
        let mut candidates: Vec<Vec<u32>> = vec![Vec::new(); topo.tiers.len()];
        for (i, &(_, _, t)) in topo.links.iter().enumerate() {
            candidates[t as usize].push(i as u32);
        }
        let want = self.fraction * topo.links.len() as f64;
        let mut count = want.floor() as usize;
        if rng.uniform() < want - want.floor() {
            count += 1;
        }
        let mut out = Vec::new();
        for _ in 0..count {
            let weight = |t: usize| {
                if candidates[t].is_empty() {
                    0.0
                } else {
                    self.weights[t]
                }
            };
            let total: f64 = (0..candidates.len()).map(weight).sum();
            if total <= 0.0 {
                break;
            }
            let mut x = rng.uniform() * total;
            let mut tier = (0..candidates.len())
                .rev()
                .find(|&t| weight(t) > 0.0)
                .expect("a tier has weight");
            for t in 0..candidates.len() {
                if x < weight(t) {
                    tier = t;
                    break;
                }
                x -= weight(t);
            }
            let j = rng.below(candidates[tier].len() as u64) as usize;
            let link = candidates[tier].swap_remove(j);
            let rate = self.rates.sample(&mut rng);
            let model = match self.burst {
                None => LossModel::Bernoulli { p: rate },
                Some((burst, bad_loss)) => LossModel::GilbertElliott(
                    GilbertElliott::from_rate_and_burst(rate, burst, bad_loss)
                        .expect("validated against the distribution's maximum"),
                ),
            };
            for dir in 0..2 {
                out.push((DirectedLink { link, dir }, model));
            }
        }
        out
    }
}

/// A link (or several parallel ones) going down and, optionally, up again.
#[derive(Clone, Debug)]
pub struct Outage {
    pub links: Vec<u32>,
    pub down: SimTime,
    pub up: Option<SimTime>,
    pub detection: SimTime,
}

#[derive(Clone, Debug)]
pub enum FaultEntry {
    Loss {
        links: Vec<DirectedLink>,
        model: LossModel,
    },
    Outage(Outage),
    RandomLossy(RandomLossy),
}

/// Every fault of a scenario, validated.
#[derive(Clone, Debug, Default)]
pub struct FaultPlan {
    pub entries: Vec<FaultEntry>,
}

impl FaultPlan {
    /// The loss models of each directed link for this seed, in entry order.
    pub fn losses(&self, seed: u64, topo: &Topology) -> Vec<(DirectedLink, LossModel)> {
        let mut out = Vec::new();
        for e in &self.entries {
            match e {
                FaultEntry::Loss { links, model } => {
                    out.extend(links.iter().map(|&l| (l, *model)));
                }
                FaultEntry::RandomLossy(g) => out.extend(g.place(seed, topo)),
                FaultEntry::Outage(_) => {}
            }
        }
        out
    }

    /// Installs the faults in `net` and returns the link changes to schedule.
    pub fn install(&self, seed: u64, topo: &Topology, net: &mut Network) -> Vec<LinkEvent> {
        let ports = net.link_ports(&topo.links);
        for (l, model) in self.losses(seed, topo) {
            let port = ports[l.link as usize][l.dir as usize];
            net.port_fault(port).add(model);
        }
        let mut events = Vec::new();
        for e in &self.entries {
            let o = match e {
                FaultEntry::Outage(o) => o,
                FaultEntry::Loss { .. } | FaultEntry::RandomLossy(_) => continue,
            };
            for &link in &o.links {
                let ports = ports[link as usize];
                for p in ports {
                    net.port_fault(p);
                }
                let mut at =
                    |at: SimTime, action: LinkAction| events.push(LinkEvent { at, ports, action });
                at(o.down, LinkAction::Down);
                at(o.down + o.detection, LinkAction::Unroute);
                if let Some(up) = o.up {
                    at(up, LinkAction::Up);
                    at(up + o.detection, LinkAction::Reroute);
                }
            }
        }
        events
    }
}

/// The kind as a scenario names it.
pub(super) fn kind_name(k: FaultKind) -> &'static str {
    match k {
        FaultKind::Loss => "loss",
        FaultKind::BurstyLoss => "bursty_loss",
        FaultKind::Blackhole => "blackhole",
        FaultKind::LinkDown => "link_down",
        FaultKind::RandomLossyLinks => "random_lossy_links",
    }
}

/// Rejects the fields that do not apply to the entry's kind.
fn check_applicable(f: &FaultSpec, path: &str, c: &mut Checker) {
    use FaultKind::*;
    let targeted = [Loss, BurstyLoss, Blackhole, LinkDown];
    let fields: [(&str, bool, &[FaultKind]); 15] = [
        ("tier", f.tier.is_some(), &[Loss, BurstyLoss, Blackhole]),
        ("from", f.from.is_some(), &targeted),
        ("to", f.to.is_some(), &targeted),
        ("parallel", f.parallel.is_some(), &targeted),
        ("probability", f.probability.is_some(), &[Loss]),
        ("loss_rate", f.loss_rate.is_some(), &[BurstyLoss]),
        (
            "burst_length",
            f.burst_length.is_some(),
            &[BurstyLoss, RandomLossyLinks],
        ),
        (
            "bad_loss",
            f.bad_loss.is_some(),
            &[BurstyLoss, RandomLossyLinks],
        ),
        ("hash_fraction", f.hash_fraction.is_some(), &[Blackhole]),
        ("down_us", f.down_us.is_some(), &[LinkDown]),
        ("up_us", f.up_us.is_some(), &[LinkDown]),
        (
            "detection_delay_us",
            f.detection_delay_us.is_some(),
            &[LinkDown],
        ),
        ("fraction", f.fraction.is_some(), &[RandomLossyLinks]),
        (
            "tier_weights",
            f.tier_weights.is_some(),
            &[RandomLossyLinks],
        ),
        ("loss_rates", f.loss_rates.is_some(), &[RandomLossyLinks]),
    ];
    for (field, set, kinds) in fields {
        let names: Vec<&str> = kinds.iter().map(|&k| kind_name(k)).collect();
        c.applies_only(
            &format!("{path}.{field}"),
            set,
            "kind",
            kind_name(f.kind),
            &names,
        );
    }
}

/// A required field, or an error naming it.
fn required(v: Option<f64>, path: &str, field: &str, kind: FaultKind, c: &mut Checker) -> f64 {
    match v {
        Some(x) => x,
        None => {
            c.err(
                &format!("{path}.{field}"),
                format!("is required for kind = {}", kind_name(kind)),
            );
            f64::NAN
        }
    }
}

/// Checks that `v` is in the interval [lo, hi] (with open ends as asked).
#[allow(clippy::too_many_arguments)]
fn in_range(
    c: &mut Checker,
    path: &str,
    v: f64,
    lo: f64,
    lo_open: bool,
    hi: f64,
    hi_open: bool,
) -> bool {
    let ok = v.is_finite()
        && (if lo_open { v > lo } else { v >= lo })
        && (if hi_open { v < hi } else { v <= hi });
    // NaN stands for a missing required field, already reported.
    if !ok && !v.is_nan() {
        c.err(
            path,
            format!(
                "must be in {}{lo}, {hi}{}, got {v}",
                if lo_open { "(" } else { "[" },
                if hi_open { ")" } else { "]" }
            ),
        );
    }
    ok
}

/// The undirected links an entry names with `from`, `to` and `parallel`, each with the
/// direction from `from` to `to`.
fn named_links(f: &FaultSpec, path: &str, topo: &Topology, c: &mut Checker) -> Vec<DirectedLink> {
    let (Some(from), Some(to)) = (&f.from, &f.to) else {
        return Vec::new();
    };
    let node = |name: &str, field: &str, c: &mut Checker| -> Option<u32> {
        let id = topo.names.iter().position(|n| n == name).map(|i| i as u32);
        if id.is_none() {
            c.err(
                &format!("{path}.{field}"),
                format!("no node named {name:?} (names look like host0, switch, edge0.1, tor0)"),
            );
        }
        id
    };
    let (Some(a), Some(b)) = (node(from, "from", c), node(to, "to", c)) else {
        return Vec::new();
    };
    let links: Vec<DirectedLink> = topo
        .links
        .iter()
        .enumerate()
        .filter_map(|(i, &(x, y, _))| {
            if (x, y) == (a, b) {
                Some(DirectedLink {
                    link: i as u32,
                    dir: 0,
                })
            } else if (x, y) == (b, a) {
                Some(DirectedLink {
                    link: i as u32,
                    dir: 1,
                })
            } else {
                None
            }
        })
        .collect();
    if links.is_empty() {
        c.err(path, format!("there is no link from {from} to {to}"));
        return links;
    }
    match f.parallel {
        None => links,
        Some(k) if (k as usize) < links.len() => vec![links[k as usize]],
        Some(k) => {
            c.err(
                &format!("{path}.parallel"),
                format!(
                    "there are {} links between {from} and {to}, numbered from 0; got {k}",
                    links.len()
                ),
            );
            Vec::new()
        }
    }
}

/// The directed links of a loss entry: both directions of every link of `tier`, or the
/// direction from `from` to `to`.
fn loss_targets(f: &FaultSpec, path: &str, topo: &Topology, c: &mut Checker) -> Vec<DirectedLink> {
    match (&f.tier, &f.from, &f.to) {
        (Some(tier), None, None) => match topo.tiers.iter().position(|t| t == tier) {
            Some(t) => topo
                .links
                .iter()
                .enumerate()
                .filter(|(_, l)| l.2 as usize == t)
                .flat_map(|(i, _)| {
                    (0..2).map(move |dir| DirectedLink {
                        link: i as u32,
                        dir,
                    })
                })
                .collect(),
            None => {
                c.err(
                    &format!("{path}.tier"),
                    format!(
                        "not a tier of this topology (its tiers: {})",
                        topo.tiers.join(", ")
                    ),
                );
                Vec::new()
            }
        },
        (None, Some(_), Some(_)) => named_links(f, path, topo, c),
        _ => {
            c.err(path, "give either tier, or both from and to".into());
            Vec::new()
        }
    }
}

fn rate_dist(spec: &Option<RateDistSpec>, path: &str, c: &mut Checker) -> Option<RateDist> {
    let path = format!("{path}.loss_rates");
    let Some(spec) = spec else {
        return Some(RateDist::measured());
    };
    let before = c.problems.len();
    let dist = match spec {
        RateDistSpec::Fixed(p) => {
            in_range(c, &format!("{path}.fixed"), *p, 0.0, true, 1.0, false);
            RateDist::Fixed(*p)
        }
        RateDistSpec::Uniform { min, max } => {
            in_range(
                c,
                &format!("{path}.uniform.min"),
                *min,
                0.0,
                false,
                1.0,
                false,
            );
            in_range(
                c,
                &format!("{path}.uniform.max"),
                *max,
                0.0,
                true,
                1.0,
                false,
            );
            if max < min {
                c.err(
                    &format!("{path}.uniform.max"),
                    format!("must be at least min ({min}), got {max}"),
                );
            }
            RateDist::Uniform {
                min: *min,
                max: *max,
            }
        }
        RateDistSpec::BoundedPareto { min, max, mean } => {
            let p = format!("{path}.bounded_pareto");
            in_range(c, &format!("{p}.min"), *min, 0.0, true, 1.0, true);
            in_range(c, &format!("{p}.max"), *max, 0.0, true, 1.0, false);
            if c.problems.len() == before && max <= min {
                c.err(
                    &format!("{p}.max"),
                    format!("must be greater than min ({min}), got {max}"),
                );
            }
            if c.problems.len() == before {
                match bounded_pareto_shape(*min, *max, *mean) {
                    Ok(shape) => RateDist::BoundedPareto {
                        min: *min,
                        max: *max,
                        shape,
                    },
                    Err(e) => {
                        c.err(&format!("{p}.mean"), e);
                        RateDist::Fixed(0.0)
                    }
                }
            } else {
                RateDist::Fixed(0.0)
            }
        }
        RateDistSpec::Values(v) => {
            if v.is_empty() {
                c.err(&format!("{path}.values"), "needs at least one rate".into());
            }
            for (i, &x) in v.iter().enumerate() {
                in_range(c, &format!("{path}.values[{i}]"), x, 0.0, true, 1.0, false);
            }
            RateDist::Values(v.clone())
        }
    };
    (c.problems.len() == before).then_some(dist)
}

/// Validates the `[[faults]]` entries against the topology.
pub(super) fn fault_plan(specs: &[FaultSpec], topo: &Topology, c: &mut Checker) -> FaultPlan {
    let mut plan = FaultPlan::default();
    // Per link: the interval from going down to routing using it again, with its entry.
    let mut outages: Vec<(u32, SimTime, SimTime, usize)> = Vec::new();
    for (i, f) in specs.iter().enumerate() {
        let path = format!("faults[{i}]");
        let before = c.problems.len();
        check_applicable(f, &path, c);
        let field = |name: &str| format!("{path}.{name}");
        match f.kind {
            FaultKind::Loss => {
                let p = required(f.probability, &path, "probability", f.kind, c);
                in_range(c, &field("probability"), p, 0.0, false, 1.0, false);
                let links = loss_targets(f, &path, topo, c);
                if c.problems.len() == before && p > 0.0 {
                    plan.entries.push(FaultEntry::Loss {
                        links,
                        model: LossModel::Bernoulli { p },
                    });
                }
            }
            FaultKind::BurstyLoss => {
                let rate = required(f.loss_rate, &path, "loss_rate", f.kind, c);
                let burst = required(f.burst_length, &path, "burst_length", f.kind, c);
                let h = f.bad_loss.unwrap_or(1.0);
                in_range(c, &field("loss_rate"), rate, 0.0, true, 1.0, true);
                if burst.is_infinite() || burst < 1.0 {
                    c.err(
                        &field("burst_length"),
                        format!("must be at least 1 (packets), got {burst}"),
                    );
                }
                in_range(c, &field("bad_loss"), h, 0.0, true, 1.0, false);
                let links = loss_targets(f, &path, topo, c);
                if c.problems.len() == before {
                    match GilbertElliott::from_rate_and_burst(rate, burst, h) {
                        Ok(ge) => plan.entries.push(FaultEntry::Loss {
                            links,
                            model: LossModel::GilbertElliott(ge),
                        }),
                        Err(e) => c.err(&field("loss_rate"), e),
                    }
                }
            }
            FaultKind::Blackhole => {
                let fraction = f.hash_fraction.unwrap_or(1.0);
                in_range(c, &field("hash_fraction"), fraction, 0.0, true, 1.0, false);
                let links = loss_targets(f, &path, topo, c);
                if c.problems.len() == before {
                    plan.entries.push(FaultEntry::Loss {
                        links,
                        model: LossModel::Blackhole { fraction },
                    });
                }
            }
            FaultKind::LinkDown => {
                if f.from.is_none() || f.to.is_none() {
                    c.err(
                        &path,
                        "kind = link_down needs from and to (the link's two ends)".into(),
                    );
                }
                let down_us = required(f.down_us, &path, "down_us", f.kind, c);
                let down = c.time(&field("down_us"), Some(down_us), 0, false);
                let up = f.up_us.map(|u| {
                    let t = c.time(&field("up_us"), Some(u), 0, false);
                    if u.is_finite() && down_us.is_finite() && u <= down_us {
                        c.err(
                            &field("up_us"),
                            format!("must be after down_us ({down_us}), got {u}"),
                        );
                    }
                    t
                });
                let detection =
                    c.time(&field("detection_delay_us"), f.detection_delay_us, 0, false);
                let links: Vec<u32> = named_links(f, &path, topo, c)
                    .iter()
                    .map(|l| l.link)
                    .collect();
                if c.problems.len() == before {
                    let until = up.map_or(SimTime::MAX, |u| u + detection);
                    for &l in &links {
                        for &(other, from, to, entry) in &outages {
                            if other == l && from < until && down < to {
                                c.err(
                                    &field("down_us"),
                                    format!(
                                        "overlaps faults[{entry}] on the same link (a link's \
                                         outages, detection delays included, must not overlap)"
                                    ),
                                );
                            }
                        }
                        outages.push((l, down, until, i));
                    }
                    plan.entries.push(FaultEntry::Outage(Outage {
                        links,
                        down,
                        up,
                        detection,
                    }));
                }
            }
            FaultKind::RandomLossyLinks => {
                let fraction = required(f.fraction, &path, "fraction", f.kind, c);
                in_range(c, &field("fraction"), fraction, 0.0, false, 1.0, false);
                let weights = match &f.tier_weights {
                    None => default_tier_weights(topo.tiers.len()),
                    Some(map) => {
                        let mut w = vec![0.0; topo.tiers.len()];
                        for (name, &x) in map {
                            let p = format!("{path}.tier_weights.{name}");
                            match topo.tiers.iter().position(|t| t == name) {
                                Some(t) => {
                                    c.non_negative(&p, x);
                                    w[t] = x;
                                }
                                None => c.err(
                                    &p,
                                    format!(
                                        "not a tier of this topology (its tiers: {})",
                                        topo.tiers.join(", ")
                                    ),
                                ),
                            }
                        }
                        if w.iter().all(|&x| x.is_finite() && x <= 0.0) {
                            c.err(
                                &field("tier_weights"),
                                "needs a positive weight on at least one tier".into(),
                            );
                        }
                        w
                    }
                };
                let rates = rate_dist(&f.loss_rates, &path, c);
                let burst = match f.burst_length {
                    None => {
                        if f.bad_loss.is_some() {
                            c.err(&field("bad_loss"), "applies only with burst_length".into());
                        }
                        None
                    }
                    Some(b) => {
                        let h = f.bad_loss.unwrap_or(1.0);
                        if !(b >= 1.0 && b.is_finite()) {
                            c.err(
                                &field("burst_length"),
                                format!("must be at least 1 (packets), got {b}"),
                            );
                        } else if in_range(c, &field("bad_loss"), h, 0.0, true, 1.0, false) {
                            if let Some(r) = &rates {
                                if let Err(e) = GilbertElliott::from_rate_and_burst(r.max(), b, h) {
                                    c.err(
                                        &field("loss_rates"),
                                        format!("its largest rate does not fit: {e}"),
                                    );
                                }
                            }
                        }
                        Some((b, h))
                    }
                };
                if c.problems.len() == before {
                    plan.entries.push(FaultEntry::RandomLossy(RandomLossy {
                        stream: i as u64,
                        fraction,
                        weights,
                        rates: rates.expect("validated"),
                        burst,
                    }));
                }
            }
        }
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::topology::TopologyKind;

    #[test]
    fn measured_distribution_has_the_documented_mean_and_support() {
        let d = RateDist::measured();
        assert!((d.mean() - 0.04).abs() < 1e-9, "{}", d.mean());
        let mut rng = Rng::new(1, 0, 0);
        let n = 1_000_000;
        let (mut sum, mut lo, mut hi, mut below_10) = (0.0, 1.0f64, 0.0f64, 0);
        for _ in 0..n {
            let x = d.sample(&mut rng);
            sum += x;
            lo = lo.min(x);
            hi = hi.max(x);
            below_10 += (x < 0.1) as u32;
        }
        let mean = sum / n as f64;
        assert!((mean - 0.04).abs() < 0.02 * 0.04, "sample mean {mean}");
        assert!(lo >= 0.01 && hi <= 0.6 && hi > 0.4, "[{lo}, {hi}]");
        // Heavy near the minimum, as the measurements: most lossy links lose < 10%.
        assert!(below_10 as f64 / n as f64 > 0.85);
    }

    #[test]
    fn bounded_pareto_shape_inverts_the_mean() {
        for &(min, max, mean) in &[(0.01, 0.6, 0.04), (0.01, 0.6, 0.1), (0.001, 0.5, 0.002)] {
            let s = bounded_pareto_shape(min, max, mean).unwrap();
            assert!((bounded_pareto_mean(min, max, s) - mean).abs() < 1e-9 * mean.max(1.0));
        }
        assert!(bounded_pareto_shape(0.01, 0.6, 0.3).is_err());
        assert!(bounded_pareto_shape(0.01, 0.6, 0.005).is_err());
    }

    #[test]
    fn default_weights_map_levels_onto_tiers() {
        assert_eq!(default_tier_weights(1), vec![1.0]);
        let two = default_tier_weights(2);
        assert!((two[0] - 0.22).abs() < 1e-12 && (two[1] - 0.78).abs() < 1e-12);
        let three = default_tier_weights(3);
        assert!((three[2] - 0.54).abs() < 1e-12);
        assert_eq!(default_tier_weights(4), MEASURED_TIER_WEIGHTS.to_vec());
    }

    #[test]
    fn generator_places_the_fraction_by_tier_weight() {
        let topo = TopologyKind::FusoFabric {
            pods: 4,
            spines: 4,
            aggs_per_pod: 2,
            tors_per_pod: 2,
            hosts_per_tor: 8,
        }
        .build();
        let g = RandomLossy {
            stream: 0,
            fraction: 0.1,
            weights: default_tier_weights(3),
            rates: RateDist::measured(),
            burst: None,
        };
        let mut per_tier = [0usize; 3];
        let seeds = 2000;
        let mut total = 0;
        for seed in 0..seeds {
            let placed = g.place(seed, &topo);
            assert_eq!(placed, g.place(seed, &topo), "deterministic");
            let links: Vec<u32> = placed.iter().map(|(l, _)| l.link).collect();
            let mut distinct = links.clone();
            distinct.dedup();
            assert_eq!(
                distinct.len() * 2,
                links.len(),
                "both directions, no repeats"
            );
            for l in distinct {
                per_tier[topo.links[l as usize].2 as usize] += 1;
                total += 1;
            }
        }
        let per_run = total as f64 / seeds as f64;
        assert!((per_run - 9.6).abs() < 0.1, "{per_run} links per run");
        let w = default_tier_weights(3);
        for t in 0..3 {
            let share = per_tier[t] as f64 / total as f64;
            assert!((share - w[t]).abs() < 0.02, "tier {t}: {share} vs {}", w[t]);
        }
    }
}
