//! Closed-loop partition–aggregate jobs: each job's client, servers, request flows and
//! answers, chained job after job in each slot.

use super::{FlowSpec, TrafficGen};
use crate::engine::Rng;

/// Closed-loop partition–aggregate jobs, as a client reading a striped file does: each of
/// `parallel` job slots runs `repeat` jobs one after another. A job picks a random client
/// and `fanout` distinct random servers among the entry's hosts; the client sends each
/// server a request of `request_bytes` (a flow of its own), and each server answers with
/// a flow of the entry's size when its request flow has finished (every byte
/// acknowledged). The job ends when
/// every answer has arrived; the slot's next job starts `interval` later. All flows of a
/// job carry its number, so its completion time is its last finish minus its first start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobsGen {
    pub parallel: u32,
    pub fanout: u32,
    /// 0: no request flows; the answers start at the job's start.
    pub request_bytes: u64,
    pub request_class: u16,
}

impl TrafficGen {
    /// `parallel` closed loops of `repeat` jobs each (see `JobsGen`). Jobs are numbered
    /// slot by slot; the first job of every slot starts at the entry's start (plus the
    /// stagger times the slot's index), each later one `interval` after its predecessor's
    /// end.
    pub(super) fn generate_jobs(
        &self,
        j: &JobsGen,
        rng: &mut Rng,
        next_job: &mut i64,
        out: &mut Vec<FlowSpec>,
    ) {
        let mut pool = self.hosts.clone();
        for slot in 0..j.parallel {
            let mut prev: Option<i64> = None;
            for _ in 0..self.repeat {
                let job = *next_job;
                *next_job += 1;
                // A partial Fisher–Yates shuffle: the client, then `fanout` servers.
                let n = pool.len();
                for k in 0..=(j.fanout as usize).min(n - 1) {
                    let pick = k + rng.below((n - k) as u64) as usize;
                    pool.swap(k, pick);
                }
                let client = pool[0];
                let (start, after_job) = match prev {
                    None => (self.staggered(self.start, slot as u64), None),
                    Some(p) => (self.interval, Some(p)),
                };
                for &server in &pool[1..=j.fanout as usize] {
                    if j.request_bytes == 0 {
                        let mut answer = self.flow(server, client, start, job, rng);
                        answer.after_job = after_job;
                        out.push(answer);
                        continue;
                    }
                    out.push(FlowSpec {
                        src: client,
                        dst: server,
                        size: Some(j.request_bytes),
                        start,
                        transport: self.transport,
                        class: j.request_class,
                        priority: self.priority,
                        job,
                        after: None,
                        conn: None,
                        after_job,
                        deps: Default::default(),
                    });
                    // The answer follows its request's delivery at once.
                    let mut answer = self.flow(server, client, 0, job, rng);
                    answer.after = Some(out.len() as u32 - 1);
                    out.push(answer);
                }
                prev = Some(job);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::gen;
    use super::super::Pattern;
    use super::*;

    #[test]
    fn jobs_pick_distinct_servers_and_chain_requests_answers_and_jobs() {
        let g = TrafficGen {
            repeat: 3,
            interval: 7,
            stagger: 5,
            hosts: (0..12).collect(),
            jobs: Some(JobsGen {
                parallel: 2,
                fanout: 4,
                request_bytes: 2048,
                request_class: 9,
            }),
            ..gen(Pattern::Jobs)
        };
        let mut out = Vec::new();
        let mut job = 10;
        g.generate(&mut Rng::new(3, 0, 0), &mut job, &mut out, &mut Vec::new());
        assert_eq!(job, 16, "2 slots × 3 jobs");
        assert_eq!(out.len(), 6 * 4 * 2);
        for (k, chunk) in out.chunks(8).enumerate() {
            let job = 10 + k as i64;
            assert!(chunk.iter().all(|f| f.job == job));
            let (requests, answers): (Vec<&FlowSpec>, Vec<&FlowSpec>) =
                chunk.iter().partition(|f| f.class == 9);
            assert_eq!((requests.len(), answers.len()), (4, 4));
            let client = requests[0].src;
            let mut servers: Vec<u32> = requests.iter().map(|f| f.dst).collect();
            servers.sort();
            servers.dedup();
            assert_eq!(servers.len(), 4, "distinct servers");
            assert!(!servers.contains(&client));
            for (i, r) in requests.iter().enumerate() {
                assert_eq!((r.src, r.size, r.after), (client, Some(2048), None));
                // Each answer follows its own request, from that server to the client.
                let a = chunk[2 * i + 1];
                assert_eq!(a.after, Some((8 * k + 2 * i) as u32));
                assert_eq!(
                    (a.src, a.dst, a.size, a.start),
                    (r.dst, client, Some(1000), 0)
                );
                match k % 3 {
                    // A slot's first job starts at once (slot 1 staggered), the others
                    // wait for the slot's job before, `interval` after its end.
                    0 => assert_eq!((r.after_job, r.start), (None, 5 * (k / 3) as u64)),
                    _ => assert_eq!((r.after_job, r.start), (Some(job - 1), 7)),
                }
            }
        }
        // Without requests, the answers themselves wait for the job before.
        let g = TrafficGen {
            jobs: Some(JobsGen {
                request_bytes: 0,
                ..g.jobs.unwrap()
            }),
            ..g
        };
        let mut out = Vec::new();
        g.generate(&mut Rng::new(3, 0, 0), &mut 0, &mut out, &mut Vec::new());
        assert_eq!(out.len(), 6 * 4);
        assert!(out[4..8]
            .iter()
            .all(|f| f.after_job == Some(0) && f.after.is_none()));
    }
}
