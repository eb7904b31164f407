"""The tables and counters of one run, their summary, and their Parquet form."""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

import pandas as pd

from . import _toml, analysis, collectives, run_dir, totals
from ._json import jsonable as jsonable
from .provenance import PROVENANCE_FILE, RESOLVED_FILE, SCENARIO_FILE
from .run_dir import RunDirError as RunDirError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PathLike = Union[str, "os.PathLike[str]"]

FLOWS_FILE = "flows.parquet"
QUEUES_FILE = "queues.parquet"
SUBFLOWS_FILE = "subflows.parquet"
SUBFLOW_COLUMNS = ["flow_id", "subflow", "bytes_sent", "bytes_retx", "bytes_acked", "timeouts", "fast_retx"]
FLOW_SAMPLES_FILE = "flow_samples.parquet"
FLOW_SAMPLE_COLUMNS = ["time_s", "flow_id", "subflow", "bytes_acked", "cwnd_bytes", "srtt_us"]
QUEUE_SAMPLES_FILE = "queue_samples.parquet"
QUEUE_SAMPLE_COLUMNS = ["time_s", "port", "packets", "bytes", "rwndq_window"]
COUNTERS_FILE = "counters.json"
#: The event trace (``output.trace``) and the packet capture (``output.pcap``), written
#: only by runs that have them.
TRACE_FILE = "trace.parquet"
TRACE_COLUMNS = [
    "time_s", "time_ps", "port", "event", "queued", "flow_id", "subflow", "class", "bytes",
    "queue_packets", "queue_bytes",
]
CAPTURE_FILE = "capture.pcapng"

#: The tables beside flows and queues (attribute, file, columns); older result
#: directories may lack them.
_OPTIONAL_TABLES = (
    ("subflows", SUBFLOWS_FILE, SUBFLOW_COLUMNS),
    ("flow_samples", FLOW_SAMPLES_FILE, FLOW_SAMPLE_COLUMNS),
    ("queue_samples", QUEUE_SAMPLES_FILE, QUEUE_SAMPLE_COLUMNS),
)
#: The collectives' tables (``pattern = "collective"``): written only by runs that
#: have collectives (attribute, file, columns).
_COLLECTIVE_TABLES = (
    ("collectives", collectives.COLLECTIVES_FILE, collectives.COLLECTIVE_COLUMNS),
    ("collective_steps", collectives.COLLECTIVE_STEPS_FILE, collectives.COLLECTIVE_STEP_COLUMNS),
)
#: A run's HTML report, written into its directory by default (`manypath report`).
REPORT_FILE = "report.html"
#: Every file a run's directory may hold: a new run replaces such a directory whole.
RUN_FILES = frozenset({
    FLOWS_FILE, QUEUES_FILE, *(file for _, file, _ in _OPTIONAL_TABLES), COUNTERS_FILE,
    *(file for _, file, _ in _COLLECTIVE_TABLES),
    TRACE_FILE, CAPTURE_FILE, SCENARIO_FILE, RESOLVED_FILE, PROVENANCE_FILE, REPORT_FILE,
})


def _table(raw: Any, columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame(raw or {c: [] for c in columns})


@dataclass
class Results:
    """Everything a run reports: one row per flow, one row per output port, counters."""

    flows: pd.DataFrame
    queues: pd.DataFrame
    counters: dict[str, Any] = field(default_factory=dict)
    name: str = ""
    #: Per-subflow counters of the multipath flows (empty when there are none).
    subflows: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=SUBFLOW_COLUMNS))
    #: Time series of each running flow's subflows (``output.flow_sample_us``).
    flow_samples: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=FLOW_SAMPLE_COLUMNS)
    )
    #: Time series of the switch queues (``output.queue_sample_us``).
    queue_samples: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=QUEUE_SAMPLE_COLUMNS)
    )
    #: One row per run (iteration) of each collective job, and one per step of each
    #: (``collectives``); empty without collectives.
    collectives: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=collectives.COLLECTIVE_COLUMNS)
    )
    collective_steps: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=collectives.COLLECTIVE_STEP_COLUMNS)
    )
    #: The scenario exactly as run (overrides applied, seed included), as a dict; empty
    #: for results read from a directory written before scenarios were kept.
    scenario: dict[str, Any] = field(default_factory=dict)
    #: The same scenario as the TOML text the simulator read (``scenario.toml``).
    scenario_text: str = ""
    #: The scenario with every default written out (``resolved.toml``): what each field
    #: was, whether the scenario gave it or not.
    resolved_text: str = ""
    #: Where the results came from: manypath version, source revision, seed, time, the
    #: scenario's digest (``provenance.json``); empty when unknown.
    provenance: dict[str, Any] = field(default_factory=dict)
    #: What the scenario check found valid but likely not meant, as (field, message)
    #: pairs (e.g. an offered load above 1).
    scenario_warnings: list[tuple[str, str]] = field(default_factory=list)
    #: The event trace (``output.trace``): one row per queue event at the traced ports;
    #: None when the run had no trace.
    trace: pd.DataFrame | None = None
    #: The packet capture (``output.pcap``) as pcapng bytes; None without a capture.
    pcap: bytes | None = None

    def __repr__(self) -> str:
        flows = self.flows
        done = int(flows["completed"].sum()) if "completed" in flows and len(flows) else 0
        duration = self.duration_s
        level = self.counters.get("level") or self.scenario.get("level") or "packet"
        sim = f"{duration * 1e3:g} ms simulated" if duration == duration else "no simulated time"
        partial = ", partial" if self.counters.get("partial") else ""
        return (
            f"<Results {self.name or 'scenario'!r}: {done}/{len(flows)} flows completed, "
            f"{sim}, {level} level{partial}>"
        )

    @classmethod
    def from_native(cls, raw: Mapping[str, Any]) -> Results:
        """Wrap the dict returned by ``manypath._core.run``."""
        return cls(
            flows=pd.DataFrame(raw["flows"]),
            queues=pd.DataFrame(raw["queues"]),
            counters=dict(raw.get("counters", {})),
            name=str(raw.get("name", "")),
            **{attr: _table(raw.get(attr), cols) for attr, _, cols in _OPTIONAL_TABLES},
            **{attr: _table(raw.get(attr), cols) for attr, _, cols in _COLLECTIVE_TABLES},
            scenario_warnings=[(str(p), str(m)) for p, m in raw.get("warnings", [])],
            trace=_trace_frame(raw["trace"]) if "trace" in raw else None,
            pcap=bytes(raw["pcap"]) if "pcap" in raw else None,
        )

    @property
    def duration_s(self) -> float:
        """Simulated time the run covered, the denominator of aggregate goodput."""
        for key in ("sim_time_s", "duration_s"):
            value = self.counters.get(key)
            if value is not None and float(value) > 0:
                return float(value)
        return math.nan

    def summary(self, size_edges: Sequence[float] = analysis.DEFAULT_SIZE_EDGES) -> dict[str, Any]:
        """Headline numbers as plain JSON-ready Python values (NaN becomes None).

        Per class and per size bucket (``size_edges``, bytes): the flows generated,
        started, left out as started in the warm-up (``unmeasured``), completed and still
        running at the end (``censored``), with FCT and slowdown statistics over the
        completed measured flows; ``warnings`` names each class whose percentiles the
        unfinished flows bias (:func:`analysis.censoring_warnings`). Long-lived flows,
        which never finish, are in ``long_lived_goodput``: per class, the bytes delivered
        in the measurement window, their goodput and share (``None`` without long-lived
        flows; :func:`totals.long_lived_summary`). ``congestion_signals`` holds the PFC
        frames, CNPs, trims and NACKs the run counted, those above zero only;
        ``collectives`` each collective job's completion times against the α–β bound
        (``None`` without collectives; :func:`collectives.job_summary`).
        """
        flows = self.flows
        classes: dict[str, dict[str, Any]] = {}
        buckets: dict[str, dict[str, Any]] = {}
        warnings: list[str] = []
        if len(flows):
            for name, row in analysis.fct_stats(flows, by="class").iterrows():
                classes[str(name)] = _stat_row(row)
            if "size" in flows.columns and (flows["size"] >= 0).any():  # not all long-lived
                for name, row in analysis.bucket_stats(flows, size_edges).iterrows():
                    buckets[str(name)] = _stat_row(row)
            warnings = analysis.censoring_warnings(flows, by="class", edges=size_edges)
        counts = analysis.flow_counts(flows) if len(flows) else {}
        duration = self.duration_s
        goodput = analysis.goodput(flows, duration) if len(flows) and duration > 0 else math.nan
        warmup = float(self.counters.get("warmup_s") or 0.0)
        long_lived = totals.long_lived_summary(
            flows, duration, 0.0 if math.isnan(warmup) else warmup,
            flow_level=self.counters.get("level") == "flow",
        )
        return {
            "name": self.name,
            "flows": int(len(flows)),
            "generated": int(self.counters.get("flows_generated", len(flows))),
            "started": int(self.counters.get("flows_started", counts.get("started", 0))),
            "unmeasured": int(counts.get("unmeasured", 0)),
            "completed": int(flows["completed"].sum()) if len(flows) else 0,
            "censored": int(counts.get("censored", 0)),
            "long_lived": int(counts.get("long_lived", 0)),
            "classes": classes,
            "size_buckets": buckets,
            "warnings": warnings,
            "goodput_gbps": _finite(goodput),
            "drops": analysis.port_totals(self.queues, "drops"),
            "link_losses": int(self.queues["fault_drops"].sum())
            if "fault_drops" in self.queues
            else 0,
            "ecn_marks": analysis.port_totals(self.queues, "ecn_marks"),
            "timeouts": int(flows["timeouts"].sum()) if len(flows) else 0,
            "long_lived_goodput": long_lived,
            "congestion_signals": totals.congestion_signals(flows, self.queues, self.counters),
            "collectives": collectives.job_summary(self.collectives),
        }

    def summary_frame(self) -> pd.DataFrame:
        """The per-class part of :meth:`summary` as a DataFrame, one row per class."""
        classes = self.summary()["classes"]
        # None (no finished flow) becomes NaN so the statistics columns stay numeric.
        frame = pd.DataFrame.from_dict(classes, orient="index").astype(object)
        frame = frame.where(frame.notna(), math.nan).infer_objects()
        frame.index.name = "class"
        return frame

    def to_parquet(self, directory: PathLike) -> Path:
        """Write flows.parquet, queues.parquet and counters.json into ``directory``, with the
        scenario as run (scenario.toml) and its provenance (provenance.json) when known.

        ``directory`` holds this run alone (``run_dir``): it must be new, empty or a
        previous run's, which is replaced whole, so none of that run's files (a capture, a
        trace, a report) stays. The run is written beside it and renamed into place, so a
        reader never sees a half-written run and an interrupted write leaves the old one.
        Raises ``RunDirError`` (a ``ValueError``) for any other directory, or a file.
        """
        out = Path(directory)
        with run_dir.replacing(out, RUN_FILES, COUNTERS_FILE) as tmp:
            self.write_into(tmp)
        return out

    def write_into(self, directory: Path) -> None:
        """Write the run's files into ``directory``, an existing directory its caller is
        assembling (a sweep's run directory before it is renamed into place), beside
        whatever is there; :meth:`to_parquet` is the way to store a run."""
        for frame, name in (
            (self.flows, FLOWS_FILE),
            (self.queues, QUEUES_FILE),
            *((getattr(self, attr), file) for attr, file, _ in _OPTIONAL_TABLES),
        ):
            frame.to_parquet(directory / name, index=False, engine="pyarrow")
        for attr, file, _ in _COLLECTIVE_TABLES:
            if len(getattr(self, attr)):
                getattr(self, attr).to_parquet(directory / file, index=False, engine="pyarrow")
        if self.trace is not None:
            self.trace.to_parquet(directory / TRACE_FILE, index=False, engine="pyarrow")
        if self.pcap is not None:
            (directory / CAPTURE_FILE).write_bytes(self.pcap)
        meta = {"name": self.name, "counters": jsonable(self.counters)}
        doc = json.dumps(meta, indent=2, allow_nan=False)
        (directory / COUNTERS_FILE).write_text(doc + "\n", encoding="utf-8")
        text = self.scenario_text or (_toml.dumps(self.scenario) if self.scenario else "")
        if text:
            (directory / SCENARIO_FILE).write_text(text, encoding="utf-8")
        if self.resolved_text:
            (directory / RESOLVED_FILE).write_text(self.resolved_text, encoding="utf-8")
        if self.provenance:
            doc = json.dumps(jsonable(self.provenance), indent=2, allow_nan=False)
            (directory / PROVENANCE_FILE).write_text(doc + "\n", encoding="utf-8")


def load_run(directory: PathLike) -> Results:
    """Read back what :meth:`Results.to_parquet` wrote."""
    src = Path(directory)
    missing = [n for n in (FLOWS_FILE, QUEUES_FILE, COUNTERS_FILE) if not (src / n).is_file()]
    if missing:
        raise FileNotFoundError(f"{src}: not a results directory, missing {', '.join(missing)}")
    meta = json.loads((src / COUNTERS_FILE).read_text(encoding="utf-8"))
    counters = {k: (math.nan if v is None else v) for k, v in meta.get("counters", {}).items()}
    # Directories written before scenarios and provenance were kept have neither.
    text = (src / SCENARIO_FILE).read_text(encoding="utf-8") if (src / SCENARIO_FILE).is_file() else ""
    prov = src / PROVENANCE_FILE
    resolved = src / RESOLVED_FILE
    return Results(
        flows=pd.read_parquet(src / FLOWS_FILE, engine="pyarrow"),
        queues=pd.read_parquet(src / QUEUES_FILE, engine="pyarrow"),
        counters=counters,
        name=str(meta.get("name", "")),
        scenario=tomllib.loads(text) if text else {},
        scenario_text=text,
        resolved_text=resolved.read_text(encoding="utf-8") if resolved.is_file() else "",
        provenance=json.loads(prov.read_text(encoding="utf-8")) if prov.is_file() else {},
        **{
            attr: pd.read_parquet(src / file, engine="pyarrow")
            if (src / file).is_file()
            else pd.DataFrame(columns=cols)
            for attr, file, cols in (*_OPTIONAL_TABLES, *_COLLECTIVE_TABLES)
        },
        trace=pd.read_parquet(src / TRACE_FILE, engine="pyarrow") if (src / TRACE_FILE).is_file() else None,
        pcap=(src / CAPTURE_FILE).read_bytes() if (src / CAPTURE_FILE).is_file() else None,
    )


def _trace_frame(raw: Mapping[str, Any]) -> pd.DataFrame:
    """The trace's columns with their types: integers as given, the event kind as a
    category (it takes seven values over many rows)."""
    frame = pd.DataFrame(raw or {c: [] for c in TRACE_COLUMNS})
    types = {
        "time_s": "float64", "time_ps": "uint64", "port": "uint32", "queued": "bool",
        "flow_id": "int64", "subflow": "uint8", "class": "uint8", "bytes": "uint32",
        "queue_packets": "uint64", "queue_bytes": "uint64",
    }
    frame = frame.astype(types)
    frame["event"] = pd.Categorical(
        frame["event"], categories=["enqueue", "dequeue", "drop", "mark", "trim", "pause", "resume"]
    )
    return frame


def _stat_row(row: pd.Series) -> dict[str, Any]:
    ints = analysis.COUNT_COLUMNS[:-1]
    out: dict[str, Any] = {c: int(row[c]) for c in ints}
    for c in ("censored_pct", *analysis.FCT_COLUMNS[:-1], *analysis.SLOWDOWN_COLUMNS):
        out[c] = _finite(row[c])
    return out


def _finite(x: Any) -> float | None:
    x = float(x)
    return None if math.isnan(x) or math.isinf(x) else x
