"""Runs the benchmark scenarios with the standalone simulator binary and prints, for
each, events/s, packet-hops/s (a packet crossing one link, ACKs included), wall time,
peak memory and the aggregate goodput as a fraction of host capacity. Flow-level
scenarios (`level = "flow"`) report wall time, peak memory, goodput and the fixed
point's iterations.

Usage: python bench/run.py [--repeat N] [NAME ...]   (default: every bench/*.toml, N = 3)

Each packet-level scenario also runs on 2 threads (the same tables; the speedup, the
synchronisation windows, the packets crossing between partitions and each thread's
wait at the barriers are printed).

The machine's speed drifts from minute to minute, so the packet-level scenarios run N
times in turn (one round over all of them, then the next) and each reports its fastest
run; ratios between scenarios (MPTCP against DCTCP) then compare runs made under the
same conditions (and the lossless fabric's DCQCN and HPCC runs, NDP's and Homa's W4 run
against DCTCP, and the 1,024-host collectives against fattree16-dctcp, where at least 0.7
is wanted). Flow-level scenarios run once. Results are also written to
bench/out/results.json.

A full run (no names given) ends with `bench/busy.py`: fattree8-dctcp on 1 and 2 threads
in interleaved rounds on the idle machine and beside two busy loops, median and spread,
and the threads `threads = "auto"` gives a 1,024-host fabric in each case.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: The lossless fabric's RoCE benchmarks, NDP's and Homa's should keep this share of
#: fattree8-dctcp's hops/s.
LOSSLESS_RATIO_WANTED = 0.7
BINARY = HERE.parent / "target" / "perf" / "manypath-sim"
ORDER = [
    "fattree8-dctcp",
    "fattree16-dctcp",
    "fattree16-websearch",
    "fattree24-dctcp",
    "fattree8-mptcp8",
    "fattree8-dcqcn-pfc",
    "fattree8-hpcc-pfc",
    "fattree8-ndp",
    "fattree8-homa-w4",
    "fattree16-ring-allreduce",
    "fattree16-alltoall",
    "flow-fattree16-mptcp8",
    "flow-fattree32-mptcp8",
    "flow-fattree48-mptcp8",
    "flow-vl2-14-mptcp4",
]
#: Run by name only (`make bench` skips it): 101,306 servers, minutes and gigabytes.
MANUAL = {"flow-fattree74-mptcp8"}
#: Every packet-level benchmark also runs on this many threads (the machine has 2 cores).
PARALLEL_THREADS = 2


def scenarios(names: list[str]) -> list[Path]:
    found = {p.stem: p for p in sorted(HERE.glob("*.toml"))}
    wanted = names or [n for n in ORDER if n in found] + [
        n for n in found if n not in ORDER and n not in MANUAL
    ]
    missing = [n for n in wanted if n not in found]
    if missing:
        sys.exit(f"unknown benchmark(s): {', '.join(missing)}; known: {', '.join(found)}")
    return [found[n] for n in wanted]


def run(path: Path, threads: int = 1) -> dict:
    out = subprocess.run([str(BINARY), str(path), "--threads", str(threads)], check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout)


def run_parallel(path: Path) -> dict | None:
    """The scenario on `PARALLEL_THREADS` threads, or None when the parallel engine does
    not run one of its features yet (the simulator says which)."""
    try:
        return run(path, PARALLEL_THREADS)
    except subprocess.CalledProcessError as e:
        if "parallel.threads" in e.stderr:
            return None
        raise


def parse_args(argv: list[str]) -> tuple[int, list[str]]:
    repeat, names = 3, []
    args = iter(argv)
    for a in args:
        if a == "--repeat":
            value = next(args, None)
            if value is None or not value.isdigit() or int(value) < 1:
                sys.exit(f"--repeat: expected a positive whole number of runs, got {value!r}")
            repeat = int(value)
        else:
            names.append(a)
    return repeat, names


def main() -> None:
    repeat, names = parse_args(sys.argv[1:])
    if not BINARY.exists():
        sys.exit(f"{BINARY} is missing: run `cargo build --profile perf -p manypath --bin manypath-sim`")
    paths = scenarios(names)
    flow_level = {p for p in paths if tomllib.loads(p.read_text()).get("level") == "flow"}
    best: dict[Path, dict] = {}
    best_parallel: dict[Path, dict | None] = {}
    for _ in range(repeat):
        for path in paths:
            if path in flow_level:
                continue
            r = run(path)
            if path not in best or r["wall_s"] < best[path]["wall_s"]:
                best[path] = r
            p = run_parallel(path)
            if p is None:
                best_parallel[path] = None
            elif best_parallel.get(path) is None or p["wall_s"] < best_parallel[path]["wall_s"]:
                best_parallel[path] = p
    rows = []
    header = f"{'scenario':<22}{'events/s':>12}{'hops/s':>12}{'wall s':>9}{'peak MiB':>10}{'goodput':>9}{'hops':>13}"
    print(f"packet level: fastest of {repeat} interleaved runs each\n")
    print(header)
    for path in paths:
        r = run(path) if path in flow_level else best[path]
        rows.append(r)
        if r.get("level") == "flow":
            converged = "converged" if r["converged"] else "NOT converged"
            print(
                f"{r['name']:<22}{'flow level':>24}{r['wall_s']:>9.2f}{r['peak_rss_mib']:>10.1f}"
                f"{r['goodput_fraction']:>9.3f}   {r['flows']:,} connections, {r['iterations']:,} iterations, {converged}"
            )
            continue
        print(
            f"{r['name']:<22}{r['events_per_s'] / 1e6:>10.2f} M{r['hops_per_s'] / 1e6:>10.2f} M"
            f"{r['wall_s']:>9.2f}{r['peak_rss_mib']:>10.1f}{r['goodput_fraction']:>9.3f}{r['packet_hops']:>13,}"
        )
    print(f"\npacket level on {PARALLEL_THREADS} threads (same tables as on one): fastest of {repeat}\n")
    print(f"{'scenario':<22}{'hops/s':>12}{'speedup':>9}{'windows':>12}{'messages':>13}{'barrier wait s':>16}"
          f"{'work split':>12}")
    for path in paths:
        if path in flow_level:
            continue
        one, p = best[path], best_parallel.get(path)
        if p is None:
            print(f"{one['name']:<22}{'not run over threads yet':>30}")
            continue
        assert p["events"] == one["events"] and p["packet_hops"] == one["packet_hops"], p["name"]
        one["parallel"] = p
        waits = ", ".join(f"{w:.2f}" for w in p["barrier_wait_s"])
        # The busiest partition's events over the mean: 1.00 is a perfectly even split.
        events = p["partition_events"]
        split = max(events) * len(events) / max(sum(events), 1)
        print(f"{p['name']:<22}{p['hops_per_s'] / 1e6:>10.2f} M{one['wall_s'] / p['wall_s']:>8.2f}x"
              f"{p['windows']:>12,}{p['messages']:>13,}{waits:>16}{split:>12.2f}")
    by_name = {r["name"]: r for r in rows}
    if "fattree8-dctcp" in by_name and "fattree16-dctcp" in by_name:
        drop = by_name["fattree8-dctcp"]["hops_per_s"] / by_name["fattree16-dctcp"]["hops_per_s"]
        print(f"\nhops/s drop from k=8 to k=16: {drop:.2f}x")
    if "fattree8-dctcp" in by_name and "fattree8-mptcp8" in by_name:
        ratio = by_name["fattree8-mptcp8"]["hops_per_s"] / by_name["fattree8-dctcp"]["hops_per_s"]
        print(f"hops/s of 8-subflow MPTCP relative to single-path DCTCP at k=8: {ratio:.2f}")
    for name, what in (("fattree8-dcqcn-pfc", "DCQCN with PFC"), ("fattree8-hpcc-pfc", "HPCC with PFC"),
                       ("fattree8-ndp", "NDP with trimming"), ("fattree8-homa-w4", "Homa W4")):
        if "fattree8-dctcp" in by_name and name in by_name:
            ratio = by_name[name]["hops_per_s"] / by_name["fattree8-dctcp"]["hops_per_s"]
            verdict = "ok" if ratio >= LOSSLESS_RATIO_WANTED else "BELOW"
            print(f"hops/s of {what} relative to DCTCP at k=8: {ratio:.3f} "
                  f"({verdict}: at least {LOSSLESS_RATIO_WANTED} wanted)")
    for name, what in (("fattree16-ring-allreduce", "the ring all-reduce"),
                       ("fattree16-alltoall", "the pairwise all-to-all")):
        if "fattree16-dctcp" in by_name and name in by_name:
            ratio = by_name[name]["hops_per_s"] / by_name["fattree16-dctcp"]["hops_per_s"]
            verdict = "ok" if ratio >= LOSSLESS_RATIO_WANTED else "BELOW"
            print(f"hops/s of {what} relative to DCTCP at k=16: {ratio:.3f} "
                  f"({verdict}: at least {LOSSLESS_RATIO_WANTED} wanted)")
    (HERE / "out").mkdir(exist_ok=True)
    (HERE / "out" / "results.json").write_text(json.dumps(rows, indent=2))
    if not names:
        import busy  # beside this file

        rounds = max(repeat, 5)
        measured = busy.measure(BINARY, rounds)
        busy.report(measured, rounds)
        (HERE / "out" / "busy.json").write_text(json.dumps(measured, indent=2))


if __name__ == "__main__":
    main()
