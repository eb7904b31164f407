//! pFabric's checks: its queues (`queue.pfabric`) schedule and drop by the priority
//! pFabric's senders stamp on their data, so they carry the traffic of `cc = "pfabric"`
//! transports only, and they keep their own buffer, outside a shared buffer or PFC.

use super::checker::Checker;
use super::schema::Scenario;
use super::transports::TransportPlan;
use crate::transport::protocol::CcKind;

/// `pfabric_queues`: some switch port or host NIC has a pFabric queue.
pub(super) fn check(
    s: &Scenario,
    pfabric_queues: bool,
    transports: &[TransportPlan],
    c: &mut Checker,
) {
    if !pfabric_queues {
        return;
    }
    let is_pfabric = |name: &str| {
        transports
            .iter()
            .find(|p| p.name == name)
            .is_none_or(|p| p.cc == CcKind::Pfabric)
    };
    for (i, t) in s.traffic.iter().enumerate() {
        let split = t.size_split.as_ref().map(|x| x.transport.as_str());
        for (field, name) in [
            ("transport", Some(t.transport.as_str())),
            ("size_split.transport", split),
        ] {
            match name {
                Some(name) if !is_pfabric(name) => c.err(
                    &format!("traffic[{i}].{field}"),
                    format!(
                        "the network has pFabric queues (queue.pfabric), which schedule and \
                         drop by the priority pFabric's senders stamp: use a transport with \
                         cc = \"pfabric\", got {name:?}"
                    ),
                ),
                Some(_) | None => {}
            }
        }
    }
    if let Some(field) = super::fabric::lossless_field(s) {
        c.err(
            &field,
            "a pFabric queue (queue.pfabric) keeps its own small buffer and drops from it; it \
             does not take part in a shared buffer or PFC: turn one of them off"
                .into(),
        );
    }
}
