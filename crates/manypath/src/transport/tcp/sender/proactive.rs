//! Proactive, on when `LossRecovery::proactive` is: every data segment is sent twice,
//! back to back, so that a single loss costs nothing. The copy goes out at the next
//! `poll_transmit` after its original; it is counted apart (`proactive_copies`), not as
//! a data packet.

use crate::transport::tcp::Segment;

/// The copy waiting to follow its original.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Proactive {
    copy: Option<Segment>,
}

impl Proactive {
    /// The segment just sent: its copy is next.
    pub(super) fn keep(&mut self, seg: Segment) {
        self.copy = Some(seg);
    }

    /// The copy to send now, if any.
    pub(super) fn take(&mut self) -> Option<Segment> {
        self.copy.take()
    }
}

#[cfg(test)]
mod tests {
    use crate::time::{SimTime, PS_PER_US};
    use crate::transport::tcp::{LossRecovery, TcpConfig};
    use crate::transport::testing;

    /// The one-way delay of the bench's links.
    const D: SimTime = 10 * PS_PER_US;

    #[test]
    fn proactive_sends_every_segment_twice_without_spurious_recovery() {
        let c = TcpConfig {
            init_cwnd: 4,
            recovery: LossRecovery {
                proactive: true,
                sack: true,
                ..LossRecovery::default()
            },
            ..testing::cfg()
        };
        let mut p = testing::tcp(c, 20_000, D);
        p.finish();
        let data: Vec<_> = p.up.data().collect();
        assert_eq!(data.len(), 40);
        for pair in data.chunks(2) {
            let (a, b) = (pair[0], pair[1]);
            assert_eq!((a.seg.seq, a.at), (b.seg.seq, b.at), "back-to-back copies");
            assert_eq!(b.n, a.n + 1);
        }
        let st = p.client.stats();
        assert_eq!(st.proactive_copies, 20);
        assert_eq!(
            st.packets_sent, 20,
            "copies are not counted as data packets"
        );
        assert_eq!((st.fast_retx, st.timeouts), (0, 0));
    }
}
