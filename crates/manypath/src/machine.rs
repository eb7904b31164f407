//! The cores this process may use, and how much of them other work leaves free: what
//! `threads = "auto"` is decided from (`scenario::parallel::resolve_threads`).
//!
//! Threads of a parallel run meet at a barrier twice per synchronisation window (a
//! microsecond of simulated time, tens of microseconds of work), so a run goes at the
//! pace of its slowest thread: one whose core is shared with other work runs at a
//! fraction of its speed and the others wait for it. A run is therefore given no more
//! threads than there are cores left free.

use std::time::Duration;

/// How long `free` watches the machine. /proc/stat counts in ticks of 10 ms, so on 2
/// cores this is 20 ticks: a busy core shows as 10 of them, give or take one.
pub const SAMPLE: Duration = Duration::from_millis(100);

/// The cores the operating system lets this process use: its affinity mask
/// (`sched_getaffinity`) and its cgroup's CPU quota (cgroup v2 `cpu.max`, or v1's
/// `cpu.cfs_quota_us` over `cpu.cfs_period_us`, rounded down, at least 1), as
/// `std::thread::available_parallelism` reads them on Linux; 1 when it cannot tell.
pub fn usable() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// How many of the CPUs this process may run on (its affinity set) were idle over
/// `interval`, in cores' worth, this process's own CPU time counted as idle: the cores
/// left by other work. Read from `/proc/stat` and `/proc/self/stat` before and after a
/// sleep of `interval`; `None` where they cannot be read (not Linux) or no time passed.
pub fn free(interval: Duration) -> Option<f64> {
    let allowed = allowed_cpus();
    let before = sample(allowed.as_deref())?;
    std::thread::sleep(interval);
    let after = sample(allowed.as_deref())?;
    free_between(&before, &after)
}

/// CPU time in clock ticks (`USER_HZ`), over the CPUs of one set.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Sample {
    /// CPUs counted.
    cpus: usize,
    /// All their time: user, nice, system, idle, iowait, irq, softirq, steal.
    total: u64,
    /// Their time not idle (idle and iowait aside).
    busy: u64,
    /// This process's own CPU time (user and system, all its threads).
    own: u64,
}

/// The cores of two samples' CPUs left free between them (see `free`).
fn free_between(before: &Sample, after: &Sample) -> Option<f64> {
    let total = after.total.checked_sub(before.total)?;
    if total == 0 || after.cpus == 0 {
        return None;
    }
    let busy = after.busy.saturating_sub(before.busy);
    let own = after.own.saturating_sub(before.own);
    let others = busy.saturating_sub(own) as f64 / total as f64;
    Some(after.cpus as f64 * (1.0 - others).clamp(0.0, 1.0))
}

fn sample(allowed: Option<&[usize]>) -> Option<Sample> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let own = own_ticks(&std::fs::read_to_string("/proc/self/stat").ok()?)?;
    let mut s = cpu_times(&stat, allowed)?;
    s.own = own;
    Some(s)
}

/// The per-CPU lines of `/proc/stat` (`cpuN user nice system idle iowait irq softirq
/// steal ...`), added up over `allowed` (every CPU when `None`).
fn cpu_times(stat: &str, allowed: Option<&[usize]>) -> Option<Sample> {
    let mut s = Sample::default();
    for line in stat.lines() {
        let mut fields = line.split_whitespace();
        let Some(cpu) = fields
            .next()
            .and_then(|f| f.strip_prefix("cpu"))
            .and_then(|n| n.parse::<usize>().ok())
        else {
            continue;
        };
        if allowed.is_some_and(|a| !a.contains(&cpu)) {
            continue;
        }
        // Guest time is already in user time: the first eight fields are all of it.
        let times: Vec<u64> = fields.take(8).map_while(|f| f.parse().ok()).collect();
        if times.len() < 5 {
            return None;
        }
        let total: u64 = times.iter().sum();
        s.cpus += 1;
        s.total += total;
        s.busy += total - times[3] - times[4];
    }
    (s.cpus > 0).then_some(s)
}

/// User and system ticks of a `/proc/<pid>/stat` line (its 14th and 15th fields, after
/// the command name in parentheses, which may hold spaces).
fn own_ticks(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let user: u64 = fields.next()?.parse().ok()?;
    let system: u64 = fields.next()?.parse().ok()?;
    Some(user + system)
}

/// The CPUs this process may run on (`Cpus_allowed_list` of `/proc/self/status`).
fn allowed_cpus() -> Option<Vec<usize>> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?;
    cpu_list(list.trim())
}

/// A CPU list as Linux writes them: `0-3,8,10-11`.
fn cpu_list(list: &str) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for part in list.split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => cpus.extend(a.parse::<usize>().ok()?..=b.parse::<usize>().ok()?),
            None => cpus.push(part.parse().ok()?),
        }
    }
    (!cpus.is_empty()).then_some(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  300 0 100 500 100 0 0 0 0 0\n\
                        cpu0 100 0 50 300 50 0 0 0 0 0\n\
                        cpu1 200 0 50 200 50 0 0 0 0 0\n\
                        intr 5 0 0\n\
                        ctxt 12\n";

    #[test]
    fn cpu_times_add_up_the_allowed_cpus() {
        let all = cpu_times(STAT, None).unwrap();
        assert_eq!((all.cpus, all.total, all.busy), (2, 1000, 400));
        let one = cpu_times(STAT, Some(&[1])).unwrap();
        assert_eq!((one.cpus, one.total, one.busy), (1, 500, 250));
        assert_eq!(cpu_times(STAT, Some(&[7])), None);
    }

    #[test]
    fn free_cores_leave_out_this_process_own_time() {
        let before = Sample {
            cpus: 2,
            total: 1000,
            busy: 400,
            own: 50,
        };
        // 200 ticks of two CPUs: 100 busy, 60 of them this process's.
        let after = Sample {
            cpus: 2,
            total: 1200,
            busy: 500,
            own: 110,
        };
        let free = free_between(&before, &after).unwrap();
        assert!((free - 1.6).abs() < 1e-9, "{free}");
        // Two busy loops elsewhere: nothing free.
        let busy = Sample {
            busy: 600,
            own: 50,
            ..after
        };
        assert_eq!(free_between(&before, &busy), Some(0.0));
        assert_eq!(free_between(&before, &before), None);
    }

    #[test]
    fn a_process_stat_line_gives_its_user_and_system_ticks() {
        let line = "4242 (a (strange) name) S 1 4242 4242 0 -1 4194560 500 0 0 0 \
                    123 45 0 0 20 0 3 0 100 1000 200";
        assert_eq!(own_ticks(line), Some(168));
    }

    #[test]
    fn cpu_lists_read_ranges_and_single_cpus() {
        assert_eq!(cpu_list("0-1"), Some(vec![0, 1]));
        assert_eq!(cpu_list("0,2-4,7"), Some(vec![0, 2, 3, 4, 7]));
        assert_eq!(cpu_list(""), None);
        assert_eq!(cpu_list("x"), None);
    }

    #[test]
    fn this_machine_reads_as_some_free_share_of_its_cpus() {
        // Linux only: elsewhere there is no /proc to read.
        if let Some(free) = free(Duration::from_millis(30)) {
            let cpus = allowed_cpus().map_or(usize::MAX, |c| c.len());
            assert!((0.0..=cpus as f64).contains(&free), "{free} of {cpus}");
        }
        assert!(usable() >= 1);
    }
}
