//! DCM (AMP document §2.1): MPTCP's LIA increase (eq. 1) with DCTCP's per-subflow
//! response to ECN (eq. 2): on the first marked ACK of a window, w_s ← w_s(1 − α_s/2),
//! α_s the subflow's EWMA of the marked fraction with weight g; losses halve.
//! The increase is `lia::increase`; the response is `EcnResponse::Dctcp`.

use super::{Coupled, EcnResponse};

pub fn subflow_cc(g: f64, loss_floor: f64) -> Coupled {
    Coupled::new(EcnResponse::Dctcp { g }, loss_floor)
}
