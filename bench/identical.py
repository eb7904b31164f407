"""Digests of every shipped scenario's tables and every registered experiment's reduced
table, for checking that a change leaves results bit-identical.

    python bench/identical.py digest OUT.json     # run everything with the importable manypath
    python bench/identical.py compare A.json B.json

``make identical BASE=<rev>`` (bench/identical.sh) builds BASE and the working tree, digests
both and compares them. Wall-clock columns and counters are left out; everything else,
floats included, is hashed from its exact bytes.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
# Columns and counters that measure the machine, not the model.
WALL = ("wall_s", "wall_secs", "wall_time_s", "events_per_s", "hops_per_s")


def frame_digest(df: pd.DataFrame) -> str:
    h = hashlib.sha256()
    h.update(repr(list(df.index)).encode() if not isinstance(df.index, pd.RangeIndex) else b"range")
    for col in df.columns:
        if str(col) in WALL:
            continue
        h.update(repr(col).encode())
        values = df[col].to_numpy()
        if values.dtype.kind in "biufc":
            h.update(str(values.dtype).encode())
            h.update(np.ascontiguousarray(values).tobytes())
        else:
            h.update(repr([repr(v) for v in values]).encode())
    return h.hexdigest()[:16]


def counters_digest(counters: dict[str, Any]) -> str:
    kept = {k: v for k, v in sorted(counters.items()) if k not in WALL}
    return hashlib.sha256(repr(kept).encode()).hexdigest()[:16]


def scenario_files() -> list[Path]:
    return sorted((ROOT / "scenarios").glob("*.toml")) + sorted(
        (ROOT / "python" / "manypath" / "scenarios").glob("*.toml")
    )


# Every built-in transport on a small fat tree with web-search flows and an ECN-marking
# drop-tail queue, so each controller's code path is covered whatever the experiments use.
TRANSPORTS = ("tcp", "cubic", "dctcp", "mptcp", "olia", "dcm", "xmp", "mmptcp", "amp", "fuso", "repflow")


def transport_scenario(transport: str) -> dict[str, Any]:
    return {
        "name": f"transport-{transport}",
        "seed": 3,
        "duration_ms": 20,
        "stop_when_done": False,
        "topology": {"fat_tree": {"k": 4}},
        "network": {
            "link": {"rate_gbps": 10, "delay_us": 2},
            "queue": {"limit_packets": 60, "ecn_k_packets": 15},
        },
        "tcp": {"rto_min_us": 2000},
        "output": {"flow_sample_us": 500},
        "traffic": [
            {
                "pattern": "random_pairs",
                "transport": transport,
                "arrival": "poisson",
                "load": 0.7,
                "size": {"cdf": "websearch"},
            }
        ],
    }


def digest(out: Path) -> None:
    import manypath
    from manypath.experiments import all_experiments

    result: dict[str, Any] = {"scenarios": {}, "experiments": {}}
    for path in scenario_files():
        t0 = time.perf_counter()
        try:
            res = manypath.run(str(path))
        except ValueError as e:  # a scenario newer than this build: not comparable
            result["scenarios"][path.name] = {"error": str(e).splitlines()[0]}
            continue
        tables = {
            name: frame_digest(getattr(res, name))
            for name in ("flows", "subflows", "queues", "flow_samples", "queue_samples")
        }
        tables["counters"] = counters_digest(res.counters)
        result["scenarios"][path.name] = tables
        print(f"scenario {path.name}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    for transport in TRANSPORTS:
        res = manypath.run(transport_scenario(transport))
        tables = {
            name: frame_digest(getattr(res, name))
            for name in ("flows", "subflows", "queues", "flow_samples")
        }
        tables["counters"] = counters_digest(res.counters)
        result["scenarios"][f"transport-{transport}"] = tables
        print(f"transport {transport}: {res.counters.get('flows')} flows", file=sys.stderr)
    for exp in all_experiments():
        t0 = time.perf_counter()
        try:
            table = exp.run(False, 1)
        except ValueError as e:  # an experiment needing features this build lacks: not comparable
            result["experiments"][exp.name] = {"error": str(e).splitlines()[0]}
            continue
        result["experiments"][exp.name] = frame_digest(table)
        print(f"experiment {exp.name}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    out.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def compare(a_path: Path, b_path: Path) -> int:
    a = json.loads(a_path.read_text(encoding="utf-8"))
    b = json.loads(b_path.read_text(encoding="utf-8"))
    same = differ = new = 0
    for group in ("scenarios", "experiments"):
        for name in sorted(set(a[group]) | set(b[group])):
            x, y = a[group].get(name), b[group].get(name)
            if x == y:
                same += 1
            elif (x is None or "error" in str(x)) and y is not None and "error" not in str(y):
                # Only the newer tree runs it (a new scenario, or a field the base lacks).
                new += 1
                print(f"new {group[:-1]} {name} (not at the base: {x})")
            elif x is None and y is not None and "error" in str(y):
                # New here, but this build cannot run it either (it needs features still to come).
                new += 1
                print(f"new {group[:-1]} {name}, not runnable here: {y['error'] if isinstance(y, dict) else y}")
            else:
                differ += 1
                print(f"DIFFERS {group[:-1]} {name}: {x} != {y}")
    print(f"{same} identical, {differ} differ" + (f", {new} new (not compared)" if new else ""))
    return 1 if differ else 0


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "digest":
        digest(Path(argv[1]))
        return 0
    if len(argv) == 3 and argv[0] == "compare":
        return compare(Path(argv[1]), Path(argv[2]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
