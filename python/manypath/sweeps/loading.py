"""Reading a sweep directory back: every stored run's tables combined, with a column per
sweep parameter."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ..results import Results, jsonable, load_run
from .spec import PathLike
from .store import RUN_FILE, SWEEP_FILE


@dataclass
class SweepResults:
    """Every stored run of a sweep directory, combined.

    ``flows`` and ``queues`` are the runs' tables stacked, each row with its run_id,
    seed and one column per sweep parameter (named by its dotted path); ``runs`` has one
    row per run (status, seed, parameters, wall time, error).
    """

    flows: pd.DataFrame
    queues: pd.DataFrame
    runs: pd.DataFrame
    params: list[str]
    name: str = ""
    directory: Path = Path(".")

    def results(self, run_id: str) -> Results:
        """The tables of one run alone."""
        return load_run(self.directory / run_id)


def is_sweep_dir(directory: Path) -> bool:
    """Whether ``directory`` holds a sweep: its manifest, or at least one stored run."""
    return (directory / SWEEP_FILE).is_file() or any(
        (d / RUN_FILE).is_file() for d in _run_dirs(directory)
    )


def _run_dirs(directory: Path) -> Iterable[Path]:
    if not directory.is_dir():
        return []
    return sorted(d for d in directory.iterdir() if d.is_dir() and not d.name.startswith("."))


def param_value(value: Any) -> Any:
    """A parameter as a DataFrame cell: tables and arrays become their JSON text, so the
    column can be grouped on."""
    if isinstance(value, (Mapping, list)):
        return json.dumps(jsonable(value), sort_keys=True)
    return value


def load_sweep(directory: PathLike) -> SweepResults:
    """Every stored run of a sweep directory, in grid order; see :class:`SweepResults`."""
    src = Path(directory)
    manifest: dict[str, Any] = {}
    if (src / SWEEP_FILE).is_file():
        manifest = json.loads((src / SWEEP_FILE).read_text(encoding="utf-8"))
    metas = []
    for d in _run_dirs(src):
        if (d / RUN_FILE).is_file():
            metas.append(json.loads((d / RUN_FILE).read_text(encoding="utf-8")))
    # Grid order when the manifest knows it (the order a reader expects a table in),
    # then any runs stored by other sweeps into the same directory.
    order = {r["run_id"]: i for i, r in enumerate(manifest.get("runs", []))}
    metas.sort(key=lambda m: (order.get(m["run_id"], len(order)), m["run_id"]))
    params = list(manifest.get("params", []))
    for m in metas:
        params.extend(p for p in m.get("params", {}) if p not in params)

    flows, queues, rows = [], [], []
    for m in metas:
        run_id = m["run_id"]
        values = {p: param_value(m.get("params", {}).get(p)) for p in params}
        row = {"run_id": run_id, "status": m.get("status"), "seed": m.get("seed"), **values,
               "wall_s": m.get("wall_s"), "error": m.get("error")}
        if m.get("status") == "ok":
            res = load_run(src / run_id)
            for frame, acc in ((res.flows, flows), (res.queues, queues)):
                acc.append(frame.assign(run_id=run_id, seed=m.get("seed"), **values))
            row["sim_time_s"] = res.counters.get("sim_time_s")
            row["flows"] = len(res.flows)
            row["completed"] = int(res.flows["completed"].sum()) if len(res.flows) else 0
        rows.append(row)
    key = ["run_id", "seed", *params]
    return SweepResults(
        flows=_stack(flows, key),
        queues=_stack(queues, key),
        runs=pd.DataFrame(rows, columns=["run_id", "status", "seed", *params, "wall_s", "error",
                                         "sim_time_s", "flows", "completed"]),
        params=params,
        name=str(manifest.get("name", src.name)),
        directory=src,
    )


def _stack(frames: list[pd.DataFrame], key: list[str]) -> pd.DataFrame:
    if not frames:
        return pd.DataFrame(columns=key)
    out = pd.concat(frames, ignore_index=True)
    # The identifying columns first, so a printed table reads run by run.
    return out[key + [c for c in out.columns if c not in key]]
