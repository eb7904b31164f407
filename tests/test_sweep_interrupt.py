"""Ctrl-C on a running ``manypath sweep``: the first lets the runs in progress finish and
stores them, the second stops them at once; either way the command exits 130, every stored
run is whole and a rerun completes the sweep.

The signal goes to the sweep's whole process group, as a terminal sends it, so the local
pool's workers receive it too. Every wait polls for a state with a bound; none sleeps a
fixed time.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from manypath.cli import app

from test_sweeps import assert_no_partial_results, run_dirs, snapshot, write_sweep

runner = CliRunner()

TOLD = "interrupted: starting no more runs, finishing the runs in progress (Ctrl-C again to stop them now)"

# A short run, then one of 20 simulated seconds (well over a minute of wall time): only a
# second Ctrl-C that really stops the run in progress lets the command end soon.
SHORT_THEN_LONG = """\
name = "short-then-long"
scenario = "ft4.toml"

[grid]
duration_ms = [2, 20000]
"""


class Sweep:
    """``manypath sweep`` in its own session, stderr to a file that can be read any time."""

    def __init__(self, tmp_path: Path, sweep_file: Path, out: Path, *args: str) -> None:
        self.out = out
        self.err_path = tmp_path / "stderr.txt"
        # A throwaway local Ray: no token written to the home directory, no cluster joined.
        env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
        env["RAY_AUTH_MODE"] = "disabled"
        with self.err_path.open("w") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "manypath", "sweep", str(sweep_file), "--out", str(out), *args],
                stdout=subprocess.PIPE, stderr=err, start_new_session=True, text=True, env=env,
            )

    @property
    def stderr(self) -> str:
        return self.err_path.read_text()

    def wait_for(self, what: str, ready: Callable[[], bool], timeout: float = 120) -> bool:
        """Poll until ``ready()``; False if the command ended first or ``timeout`` passed
        (the command is then killed)."""
        deadline = time.monotonic() + timeout
        while not ready():
            if self.proc.poll() is not None:
                return False
            if time.monotonic() > deadline:
                self.kill()
                return False
            time.sleep(0.01)
        return True

    def stored(self) -> bool:
        return self.out.is_dir() and bool(run_dirs(self.out))

    def interrupt(self) -> None:
        os.killpg(self.proc.pid, signal.SIGINT)  # as Ctrl-C in a terminal: the whole group

    def finish(self, timeout: float) -> tuple[int, str]:
        try:
            stdout, _ = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f"the sweep did not exit within {timeout} s of Ctrl-C; stderr: {self.stderr}")
        return self.proc.returncode, stdout

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.communicate()

    def group_ends(self, timeout: float = 30) -> None:
        """No process of the sweep's group is left running (workers included)."""
        deadline = time.monotonic() + timeout
        while live_members(self.proc.pid):
            assert time.monotonic() < deadline, f"processes left running: {live_members(self.proc.pid)}"
            time.sleep(0.05)


def live_members(pgid: int) -> list[str]:
    """Command lines of the processes of group ``pgid`` that are not zombies."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            found.append((stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
    return found


def assert_whole_runs(out: Path) -> None:
    assert_no_partial_results(out)
    for d in run_dirs(out):
        assert json.loads((d / "run.json").read_text())["status"] == "ok"
        assert json.loads((d / "counters.json").read_text()).get("partial") is not True


def rerun_completes(path: Path, out: Path, kept: dict[str, bytes], total: int) -> None:
    stored = len(run_dirs(out))
    res = runner.invoke(app, ["sweep", str(path), "--out", str(out), "--jobs", "2", "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert (doc["skipped"], doc["ran"], doc["completed"]) == (stored, total - stored, total)
    after = snapshot(out)
    assert {k: after.get(k) for k in kept} == kept  # the kept runs were not run again
    assert_whole_runs(out)


@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="reads process groups from /proc")
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_one_ctrl_c_finishes_the_runs_in_progress_and_stops(tmp_path: Path, jobs: str) -> None:
    path = write_sweep(tmp_path, duration_ms=60)  # 8 runs of ~0.3 s
    out = tmp_path / "out"
    sweep = Sweep(tmp_path, path, out, "--jobs", jobs)
    assert sweep.wait_for("stored run", sweep.stored), f"no run stored before Ctrl-C: {sweep.stderr}"
    sweep.interrupt()
    code, stdout = sweep.finish(timeout=120)
    assert code == 130, sweep.stderr
    assert TOLD in sweep.stderr
    assert "Traceback" not in sweep.stderr
    stored = len(run_dirs(out))
    assert stored < 8  # no run was started after the Ctrl-C
    # With two workers, the second run was in progress (or done) when the first was stored:
    # it finished and was kept.
    assert stored >= int(jobs)
    assert f"ft4-sweep: interrupted: {stored} of 8 runs stored ({stored} run now, 0 already)" in stdout
    assert f"interrupted: {8 - stored} of 8 runs not run; rerun the same command" in sweep.stderr
    assert_whole_runs(out)
    sweep.group_ends()
    rerun_completes(path, out, snapshot(out), 8)


@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="reads process groups from /proc")
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_second_ctrl_c_stops_the_runs_in_progress_at_once(tmp_path: Path, jobs: str) -> None:
    path = write_sweep(tmp_path, grid=SHORT_THEN_LONG)
    out = tmp_path / "out"
    sweep = Sweep(tmp_path, path, out, "--jobs", jobs)
    # The line written once the short run is stored: with one job, the long run starts
    # right after it (microseconds, against this poll's milliseconds).
    assert sweep.wait_for("stored run", lambda: "[1/2] done 1" in sweep.stderr), f"no run stored: {sweep.stderr}"
    sweep.interrupt()
    assert sweep.wait_for("message", lambda: TOLD in sweep.stderr), f"no message after one Ctrl-C: {sweep.stderr}"
    sweep.interrupt()
    code, stdout = sweep.finish(timeout=30)
    assert code == 130, sweep.stderr
    assert "short-then-long: interrupted: 1 of 2 runs stored" in stdout
    assert "1 run(s) in progress were stopped and not stored" in sweep.stderr
    assert "Traceback" not in sweep.stderr
    assert_whole_runs(out)
    sweep.group_ends()  # the worker of the long run is gone too
    [short] = run_dirs(out)
    assert "duration_ms = 2\n" in (short / "scenario.toml").read_text()
    plan = runner.invoke(app, ["sweep", str(path), "--out", str(out), "--dry-run", "--json"])
    assert [r["status"] for r in json.loads(plan.stdout)["runs"]] == ["ok", "todo"]


def test_one_ctrl_c_stops_a_ray_sweep(tmp_path: Path) -> None:
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'manypath[ray]')")
    path = write_sweep(tmp_path, duration_ms=60)
    out = tmp_path / "out"
    sweep = Sweep(tmp_path, path, out, "--ray", "local")
    if not sweep.wait_for("stored run", sweep.stored, timeout=180):
        sweep.kill()
        if "Started a local Ray instance" not in sweep.stderr:
            pytest.skip(f"Ray could not start here: {' '.join(sweep.stderr.strip().splitlines()[-1:])}")
        pytest.fail(f"the Ray sweep stored no run before Ctrl-C: {sweep.stderr}")
    sweep.interrupt()
    code, stdout = sweep.finish(timeout=120)
    assert code == 130, sweep.stderr
    assert TOLD in sweep.stderr
    stored = len(run_dirs(out))
    assert 1 <= stored < 8
    assert f"ft4-sweep: interrupted: {stored} of 8 runs stored" in stdout
    assert_whole_runs(out)
    rerun_completes(path, out, snapshot(out), 8)

