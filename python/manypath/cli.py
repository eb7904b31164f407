"""The ``manypath`` command line.

Exit codes: 0 success, 1 failure (missing file, invalid scenario, failed run),
2 usage error.
"""

import json
import sys
from pathlib import Path
from typing import Any, NoReturn, Optional

import typer

from . import report, runner, sweeps
from .results import jsonable
from .scenario import ScenarioNotFound, default_scenario_path
from .sweeps import SweepError

app = typer.Typer(
    name="manypath",
    help="Packet-level data-center network simulator.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
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


def _guarded(what: str, action: Any, interrupted: str = "interrupted") -> Any:
    """Run ``action``, turning expected failures into one-line errors without a traceback."""
    try:
        return action()
    except ScenarioNotFound as e:
        _fail(str(e))
    except FileNotFoundError as e:
        _fail(f"{e.strerror or 'file not found'}: {e.filename or e}")
    except SweepError as e:
        _fail(f"invalid sweep {what}:\n{e}")
    except ValueError as e:
        _fail(f"invalid scenario {what}:\n{e}")
    except KeyboardInterrupt:
        _fail(interrupted)
    except Exception as e:  # a failed run is reported, not dumped as a traceback
        _fail(f"{what} failed: {type(e).__name__}: {e}")


@app.command()
def run(
    file: Optional[Path] = typer.Argument(
        None, help="Scenario TOML file. Without it, runs the built-in default scenario."
    ),
    seed: Optional[int] = typer.Option(None, "--seed", help="Override the scenario's seed."),
    as_json: bool = typer.Option(
        False, "--json", help="Print {summary, counters} as JSON on stdout and nothing else."
    ),
    out: Optional[Path] = typer.Option(
        None, "--out", help="Write flows.parquet, queues.parquet and counters.json here."
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print no summary or status lines."),
    level: Optional[str] = typer.Option(
        None, "--level", help="Run at 'packet' or 'flow' level, replacing the scenario's level."
    ),
) -> None:
    """Run a scenario and print a summary of its results."""
    path = file if file is not None else default_scenario_path()
    bar = _sim_progress(path, quiet or as_json or level == "flow")
    try:
        res = _guarded(
            str(path),
            lambda: runner.run(path, seed=seed, progress=bar.update if bar else None, level=level),
        )
    finally:
        if bar:
            bar.close()
    if res.counters.get("partial"):
        _note("interrupted: the results cover the simulated time reached", quiet and not as_json)
    if out is not None:
        _guarded("writing results", lambda: res.to_parquet(out))
        _note(f"wrote {out}", quiet or as_json)
    summary = res.summary()
    if as_json:
        _print_json({"summary": summary, "counters": res.counters})
    elif not quiet:
        typer.echo(report.run_summary(summary, res.counters))


class _SimProgress:
    """A progress bar over simulated time with the event rate, on an interactive stderr."""

    def __init__(self, duration_s: float) -> None:
        from tqdm import tqdm

        self._bar = tqdm(total=duration_s * 1e3, unit="ms", unit_scale=False, file=sys.stderr,
                         bar_format="{l_bar}{bar}| {n:.1f}/{total:.1f} sim ms [{elapsed}<{remaining}{postfix}]")
        self._last_events = 0

    def update(self, sim_time_s: float, events: int) -> bool:
        self._bar.n = min(sim_time_s * 1e3, self._bar.total)
        rate = self._bar.format_dict.get("elapsed") or 0.0
        self._bar.set_postfix_str(f"{events / rate / 1e6:.1f} M events/s" if rate > 0 else "")
        self._bar.refresh()
        return True

    def close(self) -> None:
        self._bar.close()


def _sim_progress(path: Path, silent: bool) -> Optional[_SimProgress]:
    """A progress bar for a run, unless output is quiet or stderr is not a terminal."""
    if silent or not sys.stderr.isatty():
        return None
    try:
        import tomllib

        duration_ms = float(tomllib.loads(Path(path).read_text()).get("duration_ms", 0))
    except Exception:  # the run itself reports a bad file
        return None
    return _SimProgress(duration_ms / 1e3) if duration_ms > 0 else None


@app.command()
def validate(
    file: Path = typer.Argument(..., help="Scenario TOML file."),
    as_json: bool = typer.Option(
        False, "--json", help='Print {"file", "ok", "problems"} as JSON on stdout.'
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print nothing; the exit code tells."),
) -> None:
    """Check a scenario file; list every problem, one per line, with its field path."""
    if as_json:
        try:
            runner.validate(file)
            problems: list[str] = []
        except ValueError as e:
            problems = [line for line in str(e).splitlines() if line.strip()]
        except (FileNotFoundError, ScenarioNotFound) as e:
            problems = [str(e)]
        _print_json({"file": str(file), "ok": not problems, "problems": problems})
        if problems:
            raise typer.Exit(1)
        return
    if quiet:
        try:
            runner.validate(file)
        except (ValueError, FileNotFoundError, ScenarioNotFound):
            raise typer.Exit(1) from None
        return
    _guarded(str(file), lambda: runner.validate(file))
    typer.echo(f"ok: {file}")


@app.command()
def schema() -> None:
    """Print the scenario file JSON Schema."""
    from . import _core

    typer.echo(_core.schema())


@app.command()
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


@app.command("report")
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

    if not directory.is_dir():
        _fail(f"not a directory: {directory}")
    path = _guarded("report", lambda: report_html.write_report(directory, out, allow_mixed=allow_mixed))
    if as_json:
        _print_json({"report": str(path)})
    elif not quiet:
        typer.echo(str(path))


@app.command()
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
            return sweeps.sweep(file, out=out, jobs=jobs, ray=ray, progress=bar.update, on_start=bar.start,
                                on_interrupt=lambda m: _sweep_note(m, quiet))
        except sweeps.SweepInterrupted as e:
            return e.summary
        except KeyboardInterrupt:  # before any run started
            return None

    try:
        summary = _guarded(str(file), action)
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
    plan = _guarded(str(file), lambda: sweeps.expand(file))
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

    A bar redrawn in place on a terminal; one line per run otherwise (CI logs, files).
    """

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.bar: Any = None
        self.total = 0

    def start(self, total: int, skipped: int) -> None:
        if not self.enabled:
            return
        self.total = total
        if sys.stderr.isatty():
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
        else:
            finished = self.total - remaining
            typer.echo(f"[{finished}/{self.total}] {self._counts(done, failed, remaining)}", err=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(app())
