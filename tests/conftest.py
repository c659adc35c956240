"""Fixtures shared by every test area, and the suite-wide leak check.

The suite runs real programs (engine, loads, SLURM daemons). Whatever a test starts, it
must stop: at the end of the session any lab process that was started during the session
and is still alive fails the run, so a leak cannot hide behind a green suite.
"""
import os
import sys
import time
from pathlib import Path

import pytest

from workflows import paths

LAB_PROCESS_NAMES = {
    "airload", "airpdes", "stress-ng", "x264", "vips", "slurmctld", "slurmd",
    "slurmstepd", "munged", "perf",
}


def _lab_processes():
    """PID -> (name, start time in clock ticks since boot) of running lab processes."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # comm is in parentheses and may contain spaces; fields after it are positional.
        name = stat[stat.index("(") + 1: stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        state, start_ticks = fields[0], int(fields[19])
        if state == "Z":
            continue
        if name in LAB_PROCESS_NAMES or name.startswith("stress-ng"):
            found[int(entry.name)] = (name, start_ticks)
    return found


@pytest.fixture(scope="session", autouse=True)
def no_lab_process_outlives_the_suite():
    from loads.launcher import processes_tagged
    before = set(_lab_processes())
    before_tagged = set(processes_tagged())
    yield
    deadline = time.monotonic() + 5.0  # let killed processes finish exiting
    while True:
        leaked = {p: v for p, v in _lab_processes().items() if p not in before}
        if not leaked or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    from loads.launcher import processes_tagged  # anything a LoadSet started, whatever its name
    leaked.update({p: ("tagged AIRLAB_LOAD_SET", 0) for p in processes_tagged() if p not in before_tagged})
    for pid in leaked:  # clean up so one leak does not poison the next run
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
    assert not leaked, f"lab processes left running by the tests: {sorted(leaked.items())}"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return paths.ROOT


@pytest.fixture(scope="session")
def airpdes() -> Path:
    if not paths.AIRPDES.exists():
        pytest.fail(f"{paths.AIRPDES} is missing: build the engine first (make build)")
    return paths.AIRPDES


@pytest.fixture(scope="session")
def airload() -> Path:
    if not paths.AIRLOAD.exists():
        pytest.fail(f"{paths.AIRLOAD} is missing: build the engine first (make build)")
    return paths.AIRLOAD


@pytest.fixture(scope="session")
def airlab_cmd() -> str:
    """The `airlab` command of the environment running the tests."""
    cmd = Path(sys.executable).parent / "airlab"
    if not cmd.exists():
        pytest.fail(f"{cmd} is missing: run scripts/setup.sh (it installs the airlab command)")
    return str(cmd)


@pytest.fixture(autouse=True)
def run_from_repo_root(monkeypatch):
    """Tests name files relative to the repository root, whatever pytest's working directory."""
    monkeypatch.chdir(paths.ROOT)
