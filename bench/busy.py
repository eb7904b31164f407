"""Two threads against one, on an idle machine and beside two busy loops.

Usage: python bench/busy.py [--rounds N] [BINARY]   (also the last part of bench/run.py)

fattree8-dctcp for 10 ms runs on 1 thread and on 2, in turns (1, 2, 1, 2, ...), N rounds
(default 5) idle, then N rounds while two busy loops (`python -c "while True: pass"`)
take both cores of a 2-core machine; each prints its median wall time with the fastest
and slowest, and the 2-thread runs' barrier waits that slept. Then what `threads =
"auto"` gives a 1,024-host fabric (fattree16-dctcp for 10 µs) in each condition: every
free core idle, one thread beside the busy loops.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
BINARY = HERE.parent / "target" / "perf" / "manypath-sim"
#: The scenario timed, and the simulated time it is cut to (its 20 ms take up to ten
#: seconds on 2 threads beside busy loops).
TIMED, TIMED_MS = "fattree8-dctcp", 10
#: The fabric "auto" is asked about (1,024 hosts: large enough to be split), and its
#: simulated time: only the decision matters.
AUTO, AUTO_MS = "fattree16-dctcp", 0.01
BUSY_LOOPS = 2


def cut(name: str, duration_ms: float) -> Path:
    """bench/NAME.toml with `duration_ms` replaced, written to bench/out/."""
    text = (HERE / f"{name}.toml").read_text()
    lines = [f"duration_ms = {duration_ms}" if line.startswith("duration_ms") else line
             for line in text.splitlines()]
    if lines == text.splitlines():
        sys.exit(f"bench/{name}.toml has no duration_ms line to cut")
    out = HERE / "out" / f"{name}-{duration_ms}ms.toml"
    out.parent.mkdir(exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    return out


def run(binary: Path, path: Path, threads: str) -> dict:
    out = subprocess.run([str(binary), str(path), "--threads", threads], check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout)


@contextmanager
def busy_loops(n: int) -> Iterator[None]:
    """`n` processes spinning in Python for the block's duration."""
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        time.sleep(0.5)  # let them start spinning
        yield
    finally:
        for p in loops:
            p.kill()
        for p in loops:
            p.wait()


def spread(walls: list[float]) -> str:
    return f"{statistics.median(walls):.3f} s [{min(walls):.3f}–{max(walls):.3f}]"


def measure(binary: Path, rounds: int) -> dict:
    """The comparison's numbers: per condition, the wall times of each thread count and
    the 2-thread runs' sleeping waits, and the threads "auto" gave the large fabric."""
    timed, auto = cut(TIMED, TIMED_MS), cut(AUTO, AUTO_MS)
    result: dict = {}
    for condition, loops in (("idle", 0), (f"{BUSY_LOOPS} busy loops", BUSY_LOOPS)):
        with busy_loops(loops):
            walls: dict[str, list[float]] = {"1": [], "2": []}
            sleeps: list[int] = []
            for _ in range(rounds):
                for threads in ("1", "2"):
                    r = run(binary, timed, threads)
                    walls[threads].append(r["wall_s"])
                    if threads == "2":
                        sleeps.append(sum(r.get("barrier_sleeps", [])))
            result[condition] = {"walls": walls, "sleeps": sleeps,
                                 "auto_threads": run(binary, auto, "auto")["threads"]}
    return result


def report(result: dict, rounds: int) -> None:
    print(f"\n{TIMED} ({TIMED_MS} ms) on 1 and 2 threads, {rounds} interleaved rounds: "
          "median wall time [fastest–slowest]\n")
    print(f"{'':<16}{'1 thread':>26}{'2 threads':>26}{'2 vs 1':>9}{'sleeps':>10}{'auto at k=16':>14}")
    for condition, r in result.items():
        one, two = r["walls"]["1"], r["walls"]["2"]
        ratio = statistics.median(two) / statistics.median(one)
        print(f"{condition:<16}{spread(one):>26}{spread(two):>26}{ratio:>8.2f}x"
              f"{statistics.median(r['sleeps']) if r['sleeps'] else 0:>10.0f}{r['auto_threads']:>14}")
    print("(sleeps: the 2-thread runs' barrier waits that slept, median; auto at k=16: the threads "
          f"`threads = \"auto\"` gave {AUTO})")


def main() -> None:
    args = sys.argv[1:]
    rounds = 5
    if args[:1] == ["--rounds"]:
        if len(args) < 2 or not args[1].isdigit() or int(args[1]) < 1:
            sys.exit("--rounds: expected a positive whole number")
        rounds, args = int(args[1]), args[2:]
    binary = Path(args[0]) if args else BINARY
    if not binary.exists():
        sys.exit(f"{binary} is missing: run `cargo build --profile perf -p manypath --bin manypath-sim`")
    result = measure(binary, rounds)
    report(result, rounds)
    (HERE / "out").mkdir(exist_ok=True)
    (HERE / "out" / "busy.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
