"""The ``manypath`` command line.

Exit codes: 0 success, 1 failure (missing file, invalid scenario, failed run),
2 usage error.
"""

import json
import sys
from pathlib import Path
from typing import Any, NoReturn, Optional

import typer

from . import report
from .results import jsonable
from .scenario import ScenarioNotFound, default_scenario_path

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


def _guarded(what: str, action: Any) -> Any:
    """Run ``action``, turning expected failures into one-line errors without a traceback."""
    try:
        return action()
    except ScenarioNotFound as e:
        _fail(str(e))
    except FileNotFoundError as e:
        _fail(f"file not found: {e.filename or e}")
    except ValueError as e:
        _fail(f"invalid scenario {what}:\n{e}")
    except KeyboardInterrupt:
        _fail("interrupted")
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
) -> None:
    """Run a scenario and print a summary of its results."""
    import manypath

    path = file if file is not None else default_scenario_path()
    res = _guarded(str(path), lambda: manypath.run(path, seed=seed))
    if out is not None:
        _guarded("writing results", lambda: res.to_parquet(out))
        _note(f"wrote {out}", quiet or as_json)
    summary = res.summary()
    if as_json:
        _print_json({"summary": summary, "counters": res.counters})
    elif not quiet:
        typer.echo(report.run_summary(summary, res.counters))


@app.command()
def validate(file: Path = typer.Argument(..., help="Scenario TOML file.")) -> None:
    """Check a scenario file; list every problem, one per line, with its field path."""
    import manypath

    _guarded(str(file), lambda: manypath.validate(file))
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
) -> None:
    """List the reproducible experiments, or run one and print its table."""
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
    _note(f"running {exp.name} ({scale}, est. {exp.full_time if full else exp.reduced_time})")
    df = _guarded(exp.name, lambda: exp.run(full=full, seed=seed))
    if as_json:
        _print_json(df.to_dict(orient="records"))
    else:
        typer.echo(report.frame(df))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(app())
