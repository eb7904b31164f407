//! The stream a sender sends: the bytes handed to it so far (all of a single-path flow
//! at once; a multipath subflow's chunk by chunk, `offer_chunk`), where its segments
//! end (one MSS, the bytes available, the end of a multipath chunk, whose data sequence
//! mapping no segment may span), and its end (`close`).

use super::TcpSender;

/// A multipath chunk: where it ends in the subflow's sequence space and in the data
/// sequence space (a chunk is contiguous in both).
#[derive(Clone, Copy, Debug)]
pub(super) struct Chunk {
    end: u64,
    dsn_end: u64,
}

impl TcpSender {
    /// Hands the sender `bytes` more of its stream (multipath subflows).
    pub fn offer(&mut self, bytes: u64) {
        self.avail += bytes;
    }

    /// Hands the sender a chunk of `bytes` that segments must not merge with the chunks
    /// before or after it: a multipath subflow's data, mapped to the data sequence space
    /// from `dsn` on.
    pub fn offer_chunk(&mut self, bytes: u64, dsn: u64) {
        self.avail += bytes;
        if self.chunks.len() == self.chunks.capacity() {
            // Forget the acknowledged chunks only when the deque is full, and keep it at
            // most half full after: an ACK then need not read the deque's oldest entry
            // (a cache line of its own, cold by the time the ACK comes).
            while self.chunks.front().is_some_and(|c| c.end <= self.snd_una) {
                self.chunks.pop_front();
            }
            self.chunks.reserve(self.chunks.len().max(4));
        }
        self.chunks.push_back(Chunk {
            end: self.avail,
            dsn_end: dsn + bytes,
        });
    }

    /// Multipath: the chunk holding byte `seq` (at or above `snd_una`): where it ends,
    /// and the data sequence number that `seq` maps to.
    #[inline]
    pub fn chunk_of(&self, seq: u64) -> Option<(u64, u64)> {
        let n = self.chunks.len();
        // New data is in the last chunk: look there before searching.
        let i =
            if n > 0 && self.chunks[n - 1].end > seq && (n == 1 || self.chunks[n - 2].end <= seq) {
                n - 1
            } else {
                self.chunk_search(seq)
            };
        self.chunks
            .get(i)
            .map(|c| (c.end, c.dsn_end - (c.end - seq)))
    }

    /// Multipath: whether a byte sent and not yet acknowledged maps to data byte `dsn`.
    /// Chunks are contiguous from sequence 0 and only those ending at or below
    /// `snd_una` are forgotten, so the first chunk kept starts at or below `snd_una`.
    pub fn carries_dsn(&self, dsn: u64) -> bool {
        let mut start = 0;
        for c in &self.chunks {
            let (lo, hi) = (start.max(self.snd_una), c.end.min(self.snd_max));
            start = c.end;
            if lo < hi && (c.dsn_end - (c.end - lo)..c.dsn_end - (c.end - hi)).contains(&dsn) {
                return true;
            }
        }
        false
    }

    /// The index of the chunk holding `seq`, a retransmission's mostly the first.
    #[inline(never)]
    fn chunk_search(&self, seq: u64) -> usize {
        if self.chunks.front().is_some_and(|c| c.end > seq) {
            0
        } else {
            self.chunks.partition_point(|c| c.end <= seq)
        }
    }

    /// Where the segment starting at data byte `seq` must end: the stream's available
    /// end, the end of its chunk, or one MSS on.
    #[inline]
    pub(super) fn segment_end(&self, seq: u64) -> u64 {
        let mut end = self.size.min(self.avail).min(seq + self.mss as u64);
        if !self.chunks.is_empty() {
            if let Some((e, _)) = self.chunk_of(seq) {
                end = end.min(e);
            }
        }
        end
    }

    /// Ends the stream after the bytes offered so far: the FIN follows them.
    pub fn close(&mut self) {
        self.size = self.avail;
    }

    /// Everything offered has been sent at least once.
    pub fn all_sent(&self) -> bool {
        self.snd_max >= self.avail.min(self.size)
    }

    /// The bytes offered that the receiver does not hold yet, as far as the sender
    /// knows: neither cumulatively acknowledged nor SACKed (pFabric's priority; close to
    /// `u64::MAX` for a long-lived flow).
    #[inline(never)]
    pub fn unacked_bytes(&self) -> u64 {
        let end = self.size.min(self.avail);
        end.saturating_sub(self.snd_una)
            .saturating_sub(self.x.sack.sacked_bytes())
    }
}
