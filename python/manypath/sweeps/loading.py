"""Reading a sweep directory back: the stored runs of one generation (or, asked for, of all),
their tables combined with a column per sweep parameter."""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import pandas as pd

from ..results import Results, jsonable, load_run
from .spec import PathLike
from .store import RUN_FILE, SWEEP_FILE, read_manifest, stored_runs


@dataclass
class SweepResults:
    """The stored runs of one generation of a sweep directory (or of all, when mixed), combined.

    ``flows`` and ``queues`` are the runs' tables stacked, each row with its run_id,
    seed and one column per sweep parameter (named by its dotted path); ``runs`` has one
    row per run (status, seed, parameters, wall time, error). ``generation`` is the
    generation these runs belong to; ``generations`` lists every generation of the
    directory (number, base scenario digest, runs listed and stored, when it was created
    and last run, whether it is the current one). When ``mixed``, the tables pool every
    generation and carry a ``generation`` column after ``run_id``, and ``generation`` is None.
    """

    flows: pd.DataFrame
    queues: pd.DataFrame
    runs: pd.DataFrame
    params: list[str]
    name: str = ""
    directory: Path = Path(".")
    generation: Optional[int] = None
    generations: pd.DataFrame = field(default_factory=pd.DataFrame)
    mixed: bool = False

    def __repr__(self) -> str:
        # One line, as Results: the tables are a print away (sw.runs, sw.flows).
        status = self.runs["status"] if "status" in self.runs else pd.Series([], dtype=object)
        ok, failed = int((status == "ok").sum()), int((status == "failed").sum())
        if self.mixed:
            which = "every generation (mixed)"
        else:
            which = f"generation {self.generation}" if self.generation is not None else "no generation"
        over = ", ".join(self.params) if self.params else "no parameters"
        return (
            f"<SweepResults {self.name or 'sweep'!r}, {which}: {len(self.runs)} runs ({ok} ok, "
            f"{failed} failed) over {over}; {len(self.flows):,} flows>"
        )

    def results(self, run_id: str) -> Results:
        """The tables of one run alone."""
        return load_run(self.directory / run_id)


def is_sweep_dir(directory: Path) -> bool:
    """Whether ``directory`` holds a sweep: its manifest, or at least one stored run."""
    return (directory / SWEEP_FILE).is_file() or bool(stored_runs(directory))


def param_value(value: Any) -> Any:
    """A parameter as a DataFrame cell: tables and arrays become their JSON text, so the
    column can be grouped on."""
    if isinstance(value, (Mapping, list)):
        return json.dumps(jsonable(value), sort_keys=True)
    return value


def load_sweep(directory: PathLike, *, generation: Optional[int] = None, allow_mixed: bool = False) -> SweepResults:
    """The stored runs of a sweep directory's current generation (the runs of the latest
    sweep's base scenario), in grid order; see :class:`SweepResults`.

    ``generation=N`` reads an earlier generation instead. ``allow_mixed=True`` pools the
    runs of every generation, each row marked with its generation: runs of different base
    scenarios then share parameter values, so group by ``generation`` too.
    """
    src = Path(directory)
    doc = read_manifest(src)
    gens: list[dict[str, Any]] = doc["generations"]
    numbers = [g["generation"] for g in gens]
    if allow_mixed and generation is not None:
        raise ValueError("give either generation= or allow_mixed=True, not both")
    if allow_mixed:
        chosen = gens
    else:
        wanted = generation if generation is not None else doc.get("current")
        chosen = [g for g in gens if g["generation"] == wanted]
        if generation is not None and not chosen:
            raise ValueError(f"generation {generation}: {src} has generation(s) "
                             f"{', '.join(map(str, numbers)) or 'none'}")

    # Each run once: under the newest chosen generation that lists it, with that one's labels.
    entries: dict[str, tuple[int, dict[str, Any]]] = {}
    for g in sorted(chosen, key=lambda g: g["generation"]):
        for r in g["runs"]:
            entries.pop(r["run_id"], None)
            entries[r["run_id"]] = (g["generation"], r.get("params", {}))
    params: list[str] = []
    for g in sorted(chosen, key=lambda g: g["generation"] != doc.get("current")):
        params.extend(p for p in g.get("params", []) if p not in params)

    stored = {d.name for d in stored_runs(src)}
    metas = [(json.loads((src / k / RUN_FILE).read_text(encoding="utf-8")), gen, labels)
             for k, (gen, labels) in entries.items() if k in stored]
    mixed = allow_mixed
    flows, queues, rows = [], [], []
    for m, gen, labels in metas:
        run_id = m["run_id"]
        values = {p: param_value(labels.get(p)) for p in params}
        marks = {"generation": gen} if mixed else {}
        row = {"run_id": run_id, **marks, "status": m.get("status"), "seed": m.get("seed"), **values,
               "wall_s": m.get("wall_s"), "error": m.get("error")}
        if m.get("status") == "ok":
            res = load_run(src / run_id)
            for frame, acc in ((res.flows, flows), (res.queues, queues)):
                acc.append(frame.assign(run_id=run_id, **marks, seed=m.get("seed"), **values))
            row["sim_time_s"] = res.counters.get("sim_time_s")
            row["flows"] = len(res.flows)
            row["completed"] = int(res.flows["completed"].sum()) if len(res.flows) else 0
        rows.append(row)
    marks_col = ["generation"] if mixed else []
    key = ["run_id", *marks_col, "seed", *params]
    runs = pd.DataFrame(rows, columns=["run_id", *marks_col, "status", "seed", *params, "wall_s", "error",
                                       "sim_time_s", "flows", "completed"])
    if not mixed:
        _warn_if_pooled(runs, params, src)
    current = doc.get("current")
    return SweepResults(
        flows=_stack(flows, key),
        queues=_stack(queues, key),
        runs=runs,
        params=params,
        name=str(doc.get("name") or src.name),
        directory=src,
        generation=None if mixed else (chosen[0]["generation"] if chosen else None),
        generations=pd.DataFrame(
            [{"generation": g["generation"], "base_sha256": g.get("base_sha256"),
              "runs": len(g["runs"]), "stored": sum(r["run_id"] in stored for r in g["runs"]),
              "name": g.get("name"), "created_at": g.get("created_at"), "last_run_at": g.get("last_run_at"),
              "current": g["generation"] == current} for g in gens],
            columns=["generation", "base_sha256", "runs", "stored", "name", "created_at", "last_run_at", "current"],
        ),
        mixed=mixed,
    )


def _warn_if_pooled(runs: pd.DataFrame, params: list[str], src: Path) -> None:
    # Within one generation, equal parameter values and seed mean one scenario. Only a
    # directory written before generations were recorded can break that: say so.
    if runs.empty:
        return
    labels = runs[["seed", *params]].astype(str)
    clash = labels.duplicated(keep=False)
    if clash.any():
        warnings.warn(
            f"{src}: {int(clash.sum())} runs share their parameter values and seed with a run of a "
            "different scenario (sweeps of different base scenarios stored here before sweep "
            "generations were recorded); their tables are pooled",
            stacklevel=3,
        )


def _stack(frames: list[pd.DataFrame], key: list[str]) -> pd.DataFrame:
    if not frames:
        return pd.DataFrame(columns=key)
    out = pd.concat(frames, ignore_index=True)
    # The identifying columns first, so a printed table reads run by run.
    return out[key + [c for c in out.columns if c not in key]]
