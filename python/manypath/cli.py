"""The ``manypath`` command line.

Exit codes: 0 success, 1 failure (missing file, invalid scenario, failed run),
2 usage error, 130 interrupted (Ctrl-C).

Start-up stays fast (``--version``, ``validate`` and ``schema`` well under a second): this
module imports no pandas, pyarrow or matplotlib; the commands that need the results,
figures or reports import them when they run.
"""

import difflib
import json
import math
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Callable, NoReturn, Optional, Union

import typer
from typer.core import TyperCommand, TyperGroup

from . import report, run_dir, runner, sweeps
from ._json import jsonable
from .scenario import (
    SEED_MAX,
    SEED_RANGE,
    ScenarioFileError,
    ScenarioNotFound,
    default_scenario_path,
    prepare,
    resolve,
)
from .sweeps import SweepError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def _close_options(typo: str, options: list[str]) -> list[str]:
    """The long options spelt like ``typo``, compared without their dashes: with them,
    every option shares two characters with any typo (``--bogus`` came out like ``--out``)."""
    bare = {o[2:]: o for o in options if o.startswith("--")}
    return [bare[m] for m in difflib.get_close_matches(typo.lstrip("-"), list(bare), n=3, cutoff=0.6)]


def _suggest_close(command: Any, ctx: Any, error: Exception) -> None:
    """An unknown option's error (click's NoSuchOption, duck-typed: typer ships its own
    copy of click) suggests only the options spelt like it, or none."""
    if getattr(error, "possibilities", None) is not None and hasattr(error, "option_name"):
        options = [o for p in command.get_params(ctx) for o in (*p.opts, *p.secondary_opts)]
        setattr(error, "possibilities", _close_options(error.option_name, options))


class _Command(TyperCommand):
    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except Exception as e:
            _suggest_close(self, ctx, e)
            raise


class _Group(TyperGroup):
    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except Exception as e:
            _suggest_close(self, ctx, e)
            raise


# Plain help (no rich): flags show as plain flags (`--json`, not `--json <bool>`), errors
# are plain lines, and `--help` does not import rich.
app = typer.Typer(
    name="manypath",
    help="Packet-level data-center network simulator.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    cls=_Group,
)


def _fail(message: str) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(1)


def _note(message: str, quiet: bool = False) -> None:
    # Status lines go to stderr so stdout stays a clean table or JSON document.
    if not quiet:
        typer.echo(message, err=True)


def _print_json(doc: Any) -> None:
    typer.echo(json.dumps(jsonable(doc), indent=2, allow_nan=False))


def _version(value: bool) -> None:
    if value:
        from . import __version__

        typer.echo(f"manypath {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Packet-level data-center network simulator."""


def _guarded(
    what: str, action: Any, interrupted: str = "interrupted", hint: Callable[[], str] = lambda: ""
) -> Any:
    """Run ``action``, turning expected failures into one-line errors without a traceback.

    ``hint()`` is appended to the message of an invalid file (a "did you mean" for a sweep
    file given as a scenario or the reverse). Ctrl-C exits with 130, as shells report
    SIGINT.
    """
    try:
        return action()
    except (ScenarioNotFound, ScenarioFileError) as e:
        _fail(str(e))
    except FileNotFoundError as e:
        _fail(f"{e.strerror or 'file not found'}: {e.filename or e}")
    except SweepError as e:
        _fail(f"invalid sweep {what}:\n{e}{hint()}")
    except sweeps.BackendUnavailable as e:
        _fail(str(e))
    except run_dir.RunDirError as e:
        _fail(str(e))
    except ValueError as e:
        _fail(f"invalid scenario {what}:\n{e}{hint()}")
    except KeyboardInterrupt:
        typer.echo(f"error: {interrupted}", err=True)
        raise typer.Exit(INTERRUPTED) from None
    except Exception as e:  # a failed run is reported, not dumped as a traceback
        _fail(f"{what} failed: {type(e).__name__}: {e}")


#: The exit code of an interrupted command (128 + SIGINT, what shells report).
INTERRUPTED = 130
#: `manypath run`'s exit code when the run stopped at a detected PFC deadlock: not an
#: interruption by the user (130), not a failure to run (1).
DEADLOCK = 3

#: Seconds between progress lines when stderr is not a terminal.
PROGRESS_INTERVAL_S = 5.0

#: Top-level keys that only one kind of file has, to tell a sweep from a scenario.
_SWEEP_ONLY = ("grid", "points", "seeds", "scenario", "results")
_SCENARIO_ONLY = ("topology", "traffic", "network", "duration_ms")


def _did_you_mean(file: Path, command: str) -> str:
    """A hint when ``file`` looks like the other kind of file: a sweep given to ``run``
    (``command="sweep"``) or a scenario given to ``sweep`` (``command="run"``)."""
    try:
        doc = tomllib.loads(file.read_text(encoding="utf-8"))
    except Exception:  # unreadable or not TOML: the error itself says so
        return ""
    sweep_keys = [k for k in _SWEEP_ONLY if k in doc]
    scenario_keys = [k for k in _SCENARIO_ONLY if k in doc]
    if command == "sweep" and sweep_keys and not scenario_keys:
        found, kind = sweep_keys, "a sweep file"
    elif command == "run" and scenario_keys and not sweep_keys:
        found, kind = scenario_keys, "a scenario"
    else:
        return ""
    return (f"\nhint: {file} looks like {kind} (it has {', '.join(found)}); "
            f"did you mean `manypath {command} {file}`?")


def _check_seed(value: Optional[int]) -> Optional[int]:
    if value is not None and not 0 <= value <= SEED_MAX:
        raise typer.BadParameter(f"--seed must be {SEED_RANGE}")
    return value


def _check_threads(value: Optional[str]) -> Optional[str]:
    # The simulator checks it too (as parallel.threads, against the partitions); this
    # names the option for what is wrong on its own.
    if value is None or value == "auto":
        return value
    if not value.isdigit() or int(value) < 1:
        raise typer.BadParameter(f"--threads must be a whole number ≥ 1 or 'auto', got {value!r}")
    return value


def _threads_value(value: Optional[str]) -> Optional[Union[int, str]]:
    """A checked ``--threads`` as a sweep takes it: a number of threads, "auto" or None."""
    return int(value) if value is not None and value.isdigit() else value


def _parse_sets(items: list[str], names: Optional[dict[str, str]] = None) -> dict[str, Any]:
    """``--set PATH=VALUE`` options as overrides; VALUE is read as a TOML value, and taken
    as a string when it is none (so ``--set traffic.0.transport=dctcp`` works). ``names``
    gets how each was given (``--set PATH=VALUE``), for errors to name it."""
    overrides: dict[str, Any] = {}
    for item in items:
        path, eq, raw = item.partition("=")
        path = path.strip()
        if not eq or not path:
            raise typer.BadParameter(f"expected PATH=VALUE, got {item!r}", param_hint="--set")
        try:
            overrides[path] = tomllib.loads(f"v = {raw.strip()}")["v"]
        except tomllib.TOMLDecodeError:
            overrides[path] = raw.strip()
        if names is not None:
            names[path] = f"--set {path}={raw.strip()}"
    return overrides


def _capture_points(option: str, table: str, items: list[str]) -> dict[str, Any]:
    """``--pcap``/``--trace`` values as overrides of ``table``'s ports and hosts."""
    ports: list[dict[str, str]] = []
    hosts: list[int] = []
    for item in items:
        node, colon, peer = item.partition(":")
        if colon and node.strip() and peer.strip():
            ports.append({"node": node.strip(), "peer": peer.strip()})
        elif not colon and item.strip().isdigit():
            hosts.append(int(item))
        else:
            raise typer.BadParameter(
                f"expected NODE:PEER (a port, e.g. edge0:agg0) or a host number, got {item!r}",
                param_hint=option,
            )
    return {f"{table}.ports": ports, f"{table}.hosts": hosts}


@app.command(cls=_Command)
def run(
    file: Optional[Path] = typer.Argument(
        None, help="Scenario TOML file. Without it, runs the built-in default scenario."
    ),
    seed: Optional[int] = typer.Option(
        None, "--seed", callback=_check_seed, help="Override the scenario's seed (0 to 2^63-1)."
    ),
    sets: list[str] = typer.Option(
        [], "--set", metavar="PATH=VALUE",
        help="Set a field by its dotted path, as in sweeps (traffic.0.load=0.5); repeatable. "
             "VALUE is a TOML value.",
    ),
    as_json: bool = typer.Option(
        False, "--json", help="Print {summary, counters} as JSON on stdout and nothing else."
    ),
    out: Optional[Path] = typer.Option(
        None, "--out",
        help="Write the tables, counters.json, the scenario as run (scenario.toml) and "
             "provenance.json here.",
    ),
    quiet: bool = typer.Option(
        False, "--quiet", "-q", help="Print no summary, progress or status lines."
    ),
    level: Optional[str] = typer.Option(
        None, "--level", help="Run at 'packet' or 'flow' level, replacing the scenario's level."
    ),
    threads: Optional[str] = typer.Option(
        None, "--threads", metavar="N|auto", callback=_check_threads,
        help="Threads of the run, replacing parallel.threads: a whole number ≥ 1 or 'auto' "
             "(1 below 512 hosts, else every core). Results are the same for any count.",
    ),
    progress_interval: float = typer.Option(
        PROGRESS_INTERVAL_S, "--progress-interval", min=0.0, metavar="SECONDS",
        help="Seconds between progress lines when stderr is not a terminal.",
    ),
    pcap: list[str] = typer.Option(
        [], "--pcap", metavar="NODE:PEER|HOST",
        help="Capture the packets NODE sends to PEER (a port), or host number HOST's "
             "interfaces both ways, into capture.pcapng in --out; repeatable. Replaces "
             "output.pcap's ports and hosts (its other fields stay).",
    ),
    trace: list[str] = typer.Option(
        [], "--trace", metavar="NODE:PEER|HOST",
        help="Trace the queue events of a port (or a host's interfaces) into trace.parquet "
             "in --out; repeatable. Replaces output.trace's ports and hosts.",
    ),
) -> None:
    """Run a scenario and print a summary of its results.

    Exits 130 if interrupted (Ctrl-C): the results up to then are printed and written,
    marked partial.
    """
    from .results import COUNTERS_FILE, RUN_FILES

    path = file if file is not None else default_scenario_path()
    names: dict[str, str] = {}
    overrides = _parse_sets(sets, names)
    for option, table, given in (("--pcap", "output.pcap", pcap), ("--trace", "output.trace", trace)):
        if given and out is None:
            raise typer.BadParameter(f"{option} writes into the run's directory: give --out", param_hint=option)
        if given:
            points = _capture_points(option, table, given)
            overrides.update(points)
            names.update({key: " ".join(f"{option} {g}" for g in given) for key in points})
    if out is not None:
        # Before simulating: a run that cannot be written is refused at once.
        _guarded("--out", lambda: run_dir.check(out, RUN_FILES, COUNTERS_FILE))
    bar = None if quiet else _sim_progress(path, overrides, level, progress_interval)
    with warnings.catch_warnings(record=True) as caught:
        for category in _RUN_WARNINGS:
            warnings.simplefilter("always", category)
        try:
            res = _guarded(
                str(path),
                lambda: runner.run(path, seed=seed, overrides=overrides,
                                   progress=bar.update if bar else None, level=level,
                                   threads=threads, override_names=names),
                hint=lambda: _did_you_mean(path, "sweep"),
            )
        finally:
            if bar:
                bar.close()
    for w in caught:
        if issubclass(w.category, _RUN_WARNINGS):
            _note(f"warning: {w.message}", quiet)
    for line in _capture_warnings(res.counters):
        _note(f"warning: {line}", quiet)
    partial = bool(res.counters.get("partial"))
    deadlocked = bool(res.counters.get("deadlocks"))
    if partial and not deadlocked:
        _note("interrupted: the results cover the simulated time reached", quiet and not as_json)
    if out is not None:
        _guarded("writing results", lambda: res.to_parquet(out))
        _note(f"wrote {out}", quiet or as_json)
    summary = res.summary()
    if as_json:
        _print_json({"summary": summary, "counters": res.counters})
    elif not quiet:
        text = report.run_summary(summary, res.counters)
        if deadlocked:
            text += "\n\n" + _deadlock_line(res)
        elif partial:
            text += "\n\n" + _partial_line(res)
        typer.echo(text)
    if deadlocked:
        raise typer.Exit(DEADLOCK)
    if partial:
        raise typer.Exit(INTERRUPTED)


#: The warnings a run reports on stderr.
_RUN_WARNINGS = (
    runner.NotConvergedWarning,
    runner.ScenarioWarning,
    runner.MemoryWarning,
    runner.DeadlockWarning,
)


def _capture_warnings(counters: dict[str, Any]) -> list[str]:
    """What a capture or trace left out, or that it recorded nothing, in words."""
    lines = []
    for key, missed_key, what, unit, cap in (
        ("capture_packets", "capture_missed", "the packet capture (capture.pcapng)", "packet",
         "output.pcap.max_packets"),
        ("trace_events", "trace_missed", "the event trace (trace.parquet)", "event",
         "output.trace.max_events"),
    ):
        if key not in counters:
            continue
        recorded, missed = int(counters[key]), int(counters.get(missed_key, 0))
        if recorded == 0 and missed == 0:
            lines.append(f"{what} recorded no {unit}: nothing matched its ports, hosts, flows, "
                         "classes and time window during the run")
        elif missed:
            lines.append(f"{what} stopped at {cap} ({recorded:,}): {missed:,} more {unit}s "
                         "were left out")
    return lines


def _reached(res: Any) -> str:
    reached = float(res.counters.get("sim_time_s", math.nan)) * 1e3
    duration = res.scenario.get("duration_ms")
    of = f" of {duration:g}" if isinstance(duration, (int, float)) else ""
    return f"{reached:.3f}{of} ms simulated"


def _partial_line(res: Any) -> str:
    return f"PARTIAL: interrupted at {_reached(res)}; the numbers cover only that time"


def _deadlock_line(res: Any) -> str:
    return (f"STOPPED: a PFC deadlock was detected at {_reached(res)} (exit code {DEADLOCK}); "
            "the numbers cover only that time")


def _span(seconds: float) -> str:
    """A wall-clock span for progress lines: 45s, 3m05s, 2h07m."""
    if not math.isfinite(seconds):
        return "?"
    s = int(round(max(seconds, 0.0)))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def _rate(per_s: float) -> str:
    return report.si(per_s).strip() if math.isfinite(per_s) else "?"


class _SimProgress:
    """Progress of one run on stderr, so stdout stays the summary or JSON.

    On a terminal a bar redrawn in place; otherwise (a log file, a batch job) one line
    every ``interval_s`` of wall time. At packet level it follows simulated time
    (``progress(sim_time_s, events)`` against the duration); at flow level the fixed
    point's iterations (``progress(iteration, iteration)`` against
    ``flow_model.max_iterations``, an upper bound: it may converge sooner).
    """

    def __init__(self, total: Optional[float], *, flow: bool = False, tty: Optional[bool] = None,
                 interval_s: float = PROGRESS_INTERVAL_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.total = total
        self.flow = flow
        self.interval_s = interval_s
        self._clock = clock
        self._start = self._last = clock()
        self._last_count = 0
        self._bar: Any = None
        if sys.stderr.isatty() if tty is None else tty:
            from tqdm import tqdm

            unit = "iterations" if flow else "sim ms"
            scale = 1.0 if flow else 1e3
            self._scale = scale
            self._bar = tqdm(total=None if total is None else total * scale,
                             unit="it" if flow else "ms", unit_scale=False,
                             file=sys.stderr,
                             bar_format="{l_bar}{bar}| {n:.1f}/{total:.1f} " + unit
                             + " [{elapsed}<{remaining}{postfix}]")

    def update(self, value: float, count: int) -> bool:
        if self._bar is not None:
            self._bar.n = min(value * self._scale, self._bar.total or math.inf)
            elapsed = self._bar.format_dict.get("elapsed") or 0.0
            what = "iterations" if self.flow else "M events"
            per_s = count / elapsed / (1.0 if self.flow else 1e6) if elapsed > 0 else 0.0
            self._bar.set_postfix_str(f"{per_s:.1f} {what}/s" if elapsed > 0 else "")
            self._bar.refresh()
            return True
        now = self._clock()
        if now - self._last < self.interval_s:
            return True
        rate = (count - self._last_count) / (now - self._last) if now > self._last else math.nan
        self._last, self._last_count = now, count
        fraction = min(value / self.total, 1.0) if self.total else math.nan
        elapsed = now - self._start
        eta = elapsed * (1 - fraction) / fraction if fraction > 0 else math.inf
        if self.flow and self.total is None:  # the iteration limit is the simulator's default
            line = f"progress: iteration {count}, {_rate(rate)} iterations/s"
        elif self.flow:
            line = (f"progress: iteration {count} of at most {self.total:.0f} ({fraction:.0%}), "
                    f"{_rate(rate)} iterations/s, ETA at most {_span(eta)}")
        else:
            line = (f"progress: {value * 1e3:.3f} of {self.total * 1e3:g} ms simulated "
                    f"({fraction:.1%}), {_rate(rate)} events/s, ETA {_span(eta)}")
        typer.echo(line, err=True)
        return True

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def _sim_progress(
    path: Path, overrides: dict[str, Any], level: Optional[str], interval_s: float
) -> Optional[_SimProgress]:
    """Progress for a run over its duration (packet level) or iteration limit (flow level)."""
    try:
        ready = prepare(resolve(path), overrides)
    except Exception:  # the run itself reports a bad file
        return None
    doc = ready.doc or {}
    if (level or doc.get("level", "packet")) == "flow":
        model = doc.get("flow_model", {})
        limit = model.get("max_iterations") if isinstance(model, dict) else None
        total = limit if limit is not None else runner.default("flow_model", "max_iterations")
        if not isinstance(total, (int, float)) or total <= 0:
            return _SimProgress(None, flow=True, interval_s=interval_s)
        return _SimProgress(float(total), flow=True, interval_s=interval_s)
    total = doc.get("duration_ms", 0)
    if not isinstance(total, (int, float)) or total <= 0:
        return None
    return _SimProgress(total / 1e3, interval_s=interval_s)


@app.command(cls=_Command)
def validate(
    file: Path = typer.Argument(..., help="Scenario TOML file."),
    as_json: bool = typer.Option(
        False, "--json", help='Print {"file", "ok", "problems", "warnings"} as JSON on stdout.'
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print nothing; the exit code tells."),
) -> None:
    """Check a scenario file; list every problem, one per line, with its field path."""
    if as_json:
        warned: list[str] = []
        try:
            warned = [f"{p}: {m}" if p else m for p, m in runner.validate(file)]
            problems: list[str] = []
        except ValueError as e:
            problems = [line for line in str(e).splitlines() if line.strip()]
        except (FileNotFoundError, ScenarioNotFound) as e:
            problems = [str(e)]
        _print_json({"file": str(file), "ok": not problems, "problems": problems, "warnings": warned})
        if problems:
            raise typer.Exit(1)
        return
    if quiet:
        try:
            runner.validate(file)
        except (ValueError, FileNotFoundError, ScenarioNotFound):
            raise typer.Exit(1) from None
        return
    found = _guarded(str(file), lambda: runner.validate(file), hint=lambda: _did_you_mean(file, "sweep"))
    for path, message in found:
        _note(f"warning: {path}: {message}" if path else f"warning: {message}")
    typer.echo(f"ok: {file}")


topology_app = typer.Typer(
    help="Topologies as files: write any topology in the custom format.", rich_markup_mode=None, cls=_Group
)
app.add_typer(topology_app, name="topology")


@topology_app.command("export", cls=_Command)
def topology_export(
    file: Path = typer.Argument(..., help="Scenario TOML file whose topology to write."),
    out: Optional[Path] = typer.Option(
        None, "--out", "-o",
        help="Write here, in the format its suffix names: .toml (the custom format), .json "
             "(networkx node-link JSON) or .graphml (GraphML); default: stdout as TOML.",
    ),
) -> None:
    """Write a scenario's topology as a [topology.custom] file (tiers, nodes, links)."""
    from . import topology_files

    try:
        fmt = "toml" if out is None else topology_files.format_of(out.suffix)
    except topology_files.TopologyFileError as e:
        typer.echo(f"error: --out {out}: {e}", err=True)
        raise typer.Exit(2) from None  # a usage error
    text = _guarded(str(file), lambda: runner.export_topology(file, format="toml" if fmt == "toml" else "json"))
    if fmt != "toml":
        try:
            text = topology_files.write(text, fmt)
        except topology_files.TopologyFileError as e:
            _fail(f"{out}: {e}")
    if out is None:
        typer.echo(text, nl=False)
        return
    out.write_text(text, encoding="utf-8")
    _note(f"wrote {out}")


@app.command("matrix", cls=_Command)
def matrix_cmd(
    file: Path = typer.Argument(..., help="Scenario TOML file with a collective (or connection-matrix) entry."),
    entry: Optional[int] = typer.Option(
        None, "--entry", "-e", min=0,
        help="The traffic entry to write, by index (default: the scenario's only collective or matrix entry).",
    ),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Write here (default: stdout)."),
) -> None:
    """Write a collective (or connection-matrix) traffic entry as htsim's connection matrix."""
    text = _guarded(str(file), lambda: runner.matrix_text(file, entry=entry))
    if out is None:
        typer.echo(text, nl=False)
        return
    out.write_text(text, encoding="utf-8")
    _note(f"wrote {out}")


@app.command(cls=_Command)
def schema() -> None:
    """Print the scenario file JSON Schema."""
    from . import _core

    typer.echo(_core.schema())


@app.command(cls=_Command)
def reproduce(
    name: Optional[str] = typer.Argument(
        None, help="Experiment to run. Without it, lists the experiments."
    ),
    full: bool = typer.Option(False, "--full", help="Run at full scale instead of reduced."),
    seed: int = typer.Option(1, "--seed", help="Seed of every run in the experiment."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
    out: Optional[Path] = typer.Option(
        None, "--out", "-o", help="Where to write the figure and table. Default: results/reproduce/NAME/."
    ),
    no_plot: bool = typer.Option(False, "--no-plot", help="Print the table only; write no files."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No status lines and no table."),
) -> None:
    """List the reproducible experiments, or run one, print its table and write its figure
    (NAME.png, NAME.svg) and table (NAME.csv)."""
    from . import experiments

    if name is None:
        items = experiments.all_experiments()
        if as_json:
            _print_json(
                [
                    {
                        "name": e.name,
                        "document": e.document,
                        "figure": e.figure,
                        "compares": e.compares,
                        "reduced_time": e.reduced_time,
                        "full_time": e.full_time,
                    }
                    for e in items
                ]
            )
        else:
            typer.echo(report.experiment_list(items))
        return
    try:
        exp = experiments.get(name)
    except KeyError as e:
        raise typer.BadParameter(str(e.args[0]), param_hint="NAME") from None
    scale = "full" if full else "reduced"
    _note(f"running {exp.name} ({scale}, est. {exp.full_time if full else exp.reduced_time})", quiet)
    df = _guarded(exp.name, lambda: exp.run(full=full, seed=seed))
    if as_json:
        _print_json(df.to_dict(orient="records"))
    elif not quiet:
        typer.echo(report.frame(df))
    if not no_plot:
        target = out if out is not None else Path("results") / "reproduce" / exp.name
        written = _guarded("writing the figure", lambda: _write_experiment(exp, df, target))
        _note("wrote " + ", ".join(str(p) for p in written), quiet or as_json)


def _write_experiment(exp: Any, df: Any, target: Path) -> list[Path]:
    from . import plots

    target.mkdir(parents=True, exist_ok=True)
    csv = target / f"{exp.name}.csv"
    tmp = target / f".{exp.name}.csv.tmp"
    df.to_csv(tmp, index=False)
    tmp.replace(csv)
    fig = exp.plot(df)
    return [csv, *(plots.save(fig, target, exp.name) if fig is not None else [])]


def _check_directory(directory: Path, wanted: str) -> None:
    """Fails unless ``directory`` is a directory, saying what it is instead."""
    if not directory.exists():
        _fail(f"{directory}: no such directory")
    if not directory.is_dir():
        _fail(f"{directory}: is a file, not a directory (give {wanted})")


@app.command("trace", cls=_Command)
def trace_cmd(
    directory: Path = typer.Argument(..., help="A run directory written with an event trace (output.trace)."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON records."),
) -> None:
    """Summarise a run's event trace: events by kind per port, peak occupancy."""
    from . import traces
    from .results import TRACE_FILE, load_run

    _check_directory(directory, "a run's directory")
    if not (directory / TRACE_FILE).is_file():
        _fail(f"{directory}: no {TRACE_FILE} (run a scenario with [output.trace], or --trace, and --out)")
    res = _guarded(str(directory), lambda: load_run(directory))
    assert res.trace is not None
    summary = traces.summarise(res.trace, res.queues)
    if as_json:
        _print_json(summary.to_dict(orient="records"))
        return
    missed = res.counters.get("trace_missed", 0)
    typer.echo(f"{len(res.trace):,} events at {len(summary)} port(s)"
               + (f"; {missed:,} more left out by output.trace.max_events" if missed else ""))
    typer.echo(report.frame(summary))


@app.command("report", cls=_Command)
def report_cmd(
    directory: Path = typer.Argument(..., help="A run directory (run --out, a sweep's run) or a sweep directory."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="HTML file to write. Default: DIRECTORY/report.html."),
    as_json: bool = typer.Option(False, "--json", help='Print {"report": PATH} as JSON.'),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print nothing."),
    allow_mixed: bool = typer.Option(
        False, "--allow-mixed", help="Of a sweep, pool every generation (marked) instead of the newest."
    ),
) -> None:
    """Write a self-contained HTML report (tables and figures) of a run or a sweep."""
    from . import report_html

    _check_directory(directory, "a run's or a sweep's directory")
    path = _guarded("report", lambda: report_html.write_report(directory, out, allow_mixed=allow_mixed))
    if as_json:
        _print_json({"report": str(path)})
    elif not quiet:
        typer.echo(str(path))


@app.command(cls=_Command)
def sweep(
    file: Path = typer.Argument(..., help="Sweep TOML file (see docs/toolkit.md)."),
    out: Optional[Path] = typer.Option(
        None, "--out", "-o", help="Results directory. Default: the file's `results`, else results/NAME."
    ),
    jobs: Optional[int] = typer.Option(
        None, "--jobs", "-j", min=1, help="Local worker processes. Default: one per core."
    ),
    ray: Optional[str] = typer.Option(
        None,
        "--ray",
        metavar="ADDRESS",
        help="Run on Ray: a cluster address, 'auto' (the running cluster) or 'local' (start one).",
    ),
    threads: Optional[str] = typer.Option(
        None, "--threads", metavar="N|auto", callback=_check_threads,
        help="Threads of each run, replacing the sweep file's `threads`: a whole number ≥ 1 or 'auto'. "
             "Default: 1 when several runs go at once, else the scenario's parallel.threads.",
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="List the runs and whether each is stored; run nothing."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON summary on stdout."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar or summary."),
) -> None:
    """Run a parameter sweep; each run is stored once, so rerunning completes what is missing.

    Exits 1 if any run failed (its error is in RESULTS/<run-id>/error.txt), 130 if Ctrl-C
    stopped it (the first Ctrl-C lets the runs in progress finish, a second stops them);
    rerun the same command to retry or complete it. If the base scenario changed since
    the runs stored in RESULTS, the runs start a new generation there: reports and
    manypath.load show the newest generation only.
    """
    if dry_run:
        _sweep_plan(file, out, as_json, quiet)
        return
    bar = _ProgressBar(enabled=not quiet)

    def action() -> Optional[sweeps.SweepSummary]:
        try:
            return sweeps.sweep(file, out=out, jobs=jobs, ray=ray, threads=_threads_value(threads),
                                progress=bar.update, on_start=bar.start,
                                on_interrupt=lambda m: _sweep_note(m, quiet))
        except sweeps.SweepInterrupted as e:
            return e.summary
        except KeyboardInterrupt:  # before any run started
            return None

    try:
        summary = _guarded(str(file), action, hint=lambda: _did_you_mean(file, "run"))
    finally:
        bar.close()
    if summary is None:
        _note("interrupted before any run started", quiet)
        raise typer.Exit(130)
    doc = summary.to_dict()
    if as_json:
        _print_json(doc)
    elif not quiet:
        state = "interrupted: " if summary.interrupted else ""
        typer.echo(
            f"{summary.name}: {state}{doc['completed']} of {summary.total} runs stored "
            f"({summary.ran} run now, {summary.skipped} already), {len(summary.failed)} failed, "
            f"{summary.wall_s:.1f} s -> {summary.results_dir}"
        )
    for f in summary.failed:
        _note(f"failed {f['run_id']} (seed {f['seed']}, {_params(f['params'])}): {f['error']}", quiet)
    if summary.new_generation and summary.previous_generation is not None:
        _note(_generation_note(summary.generation, summary.previous_generation, summary.base_changes,
                               summary.results_dir), quiet)
    if summary.interrupted:
        dropped = f"; {summary.dropped} run(s) in progress were stopped and not stored" if summary.dropped else ""
        _note(f"interrupted{dropped}: {summary.not_run} of {summary.total} runs not run; "
              "rerun the same command to complete the sweep", quiet)
        raise typer.Exit(130)
    if not summary.ok:
        raise typer.Exit(1)


def _sweep_note(message: str, quiet: bool) -> None:
    # Through tqdm, so a progress bar on the terminal is redrawn below the message.
    if not quiet:
        from tqdm import tqdm

        tqdm.write(message, file=sys.stderr)


def _generation_note(generation: int, previous: int, changes: Optional[list[str]], results_dir: Path,
                     would: bool = False) -> str:
    if changes is None:
        what = f"the runs stored before in {results_dir} record no base scenario"
    else:
        shown = "; ".join(changes[:5]) + (f"; and {len(changes) - 5} more" if len(changes) > 5 else "")
        what = f"the base scenario changed since generation {previous} ({shown or 'no field differs'})"
    are = "would be" if would else "are"
    return (f"{what}: these runs {are} generation {generation} of {results_dir}; manypath.load and "
            f"manypath report show generation {generation} only, generation {previous} stays stored "
            "(--allow-mixed shows every generation)")


def _params(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items()) or "base scenario"


def _sweep_plan(file: Path, out: Optional[Path], as_json: bool, quiet: bool) -> None:
    plan = _guarded(str(file), lambda: sweeps.expand(file), hint=lambda: _did_you_mean(file, "run"))
    results_dir = out if out is not None else plan.results_dir
    gen = _guarded(str(results_dir), lambda: sweeps.plan_generation(results_dir, plan))
    rows = [
        {
            "run_id": r.run_id,
            "seed": r.seed,
            "params": r.params,
            "status": sweeps.run_status(results_dir / r.run_id) or "todo",
        }
        for r in plan.runs
    ]
    if as_json:
        _print_json({"name": plan.name, "results_dir": str(results_dir), "generation": gen.number,
                     "new_generation": gen.new, "previous_generation": gen.previous,
                     "base_changes": gen.changes, "runs": rows})
    elif not quiet:
        typer.echo(
            report.table(
                ["run", "seed", *plan.params, "status"],
                [[r["run_id"], str(r["seed"]), *(str(r["params"].get(p, "")) for p in plan.params), r["status"]]
                 for r in rows],
            )
        )
        if gen.new and gen.previous is not None:
            _note(_generation_note(gen.number, gen.previous, gen.changes, results_dir, would=True))


class _ProgressBar:
    """Runs done / failed / remaining on stderr, so stdout stays the summary or JSON.

    A bar redrawn in place on a terminal; otherwise (CI logs, files) a line with an ETA
    when a run finishes: the first and the last always, in between at most one every
    ``interval_s`` of wall time, so a long sweep shows it is alive without flooding a log.
    """

    def __init__(self, enabled: bool, *, tty: Optional[bool] = None,
                 interval_s: float = PROGRESS_INTERVAL_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.enabled = enabled
        self.bar: Any = None
        self.total = 0
        self.tty = sys.stderr.isatty() if tty is None else tty
        self.interval_s = interval_s
        self._clock = clock
        self._start = self._last = clock()
        self._todo = 0
        self._printed = False

    def start(self, total: int, skipped: int) -> None:
        if not self.enabled:
            return
        self.total = total
        self._todo = total - skipped
        self._start = self._last = self._clock()
        if self.tty:
            from tqdm import tqdm

            self.bar = tqdm(
                total=total,
                initial=skipped,
                unit="run",
                file=sys.stderr,
                dynamic_ncols=True,
                bar_format="{bar} {n_fmt}/{total_fmt} runs{postfix} [{elapsed}<{remaining}]",
            )
            self.bar.set_postfix_str(self._counts(skipped, 0, total - skipped))
        elif skipped:
            typer.echo(f"{skipped} of {total} runs already stored", err=True)

    @staticmethod
    def _counts(done: int, failed: int, remaining: int) -> str:
        return f"done {done}, failed {failed}, remaining {remaining}"

    def update(self, done: int, failed: int, remaining: int) -> None:
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.set_postfix_str(self._counts(done, failed, remaining), refresh=False)
            self.bar.update(1)
            return
        now = self._clock()
        if self._printed and now - self._last < self.interval_s and remaining > 0:
            return
        self._last, self._printed = now, True
        finished = self.total - remaining
        ran = self._todo - remaining  # runs finished by this invocation: the pace so far
        eta = (now - self._start) / ran * remaining if ran > 0 else math.inf
        typer.echo(f"[{finished}/{self.total}] {self._counts(done, failed, remaining)}, "
                   f"ETA {_span(eta)}", err=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(app())
