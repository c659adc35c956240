"""Fixtures shared by every test area, and the suite-wide leak check.

The suite runs real programs (engine, loads, SLURM daemons). Whatever a test starts, it
must stop: at the end of the session any process started by this session that is still
alive fails the run, so a leak cannot hide behind a green suite.
"""
import os
import signal
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from airbase import paths

# Every process this test session starts inherits this tag (set before any test runs), so
# the leak check finds exactly this session's processes, grandchildren and SLURM jobs
# included, and never touches anyone else's runs on a shared machine.
SESSION_TAG = "AIRLAB_TEST_SESSION"
os.environ[SESSION_TAG] = uuid.uuid4().hex
# The runners keep the near placement levels they measure in a file of the machine's
# (workflows/placement.py, shared_level_file); the suite keeps its own, so its trials
# neither start from the lab's levels nor change them.
PLACEMENT_FILE = Path(tempfile.gettempdir()) / f"airlab-test-placement-{os.environ[SESSION_TAG]}.json"
os.environ["AIRLAB_PLACEMENT_FILE"] = str(PLACEMENT_FILE)

# A suite started in the background by a non-interactive shell (`nohup make test &`, some
# CI runners) inherits SIGINT ignored, and so would every runner, load and Snakemake it
# starts: the interrupt tests would then wait for a Ctrl-C that can never arrive. Handled
# here, SIGINT is back to its default in every program the tests start.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
# Under nohup SIGHUP is ignored too, and a runner keeps an inherited SIG_IGN until it installs
# its own handler: a hang-up the tests send in its first instants was lost and the trial ran to
# its end (four interrupt tests timed out in a `setsid nohup` suite at e6270b2). A handler
# here, not SIG_DFL, so the suite itself still survives the hang-up nohup was asked for, and
# every program it starts gets SIGHUP's default back at exec.
if signal.getsignal(signal.SIGHUP) == signal.SIG_IGN:
    signal.signal(signal.SIGHUP, lambda signum, frame: None)


def _session_processes():
    """PID -> command name of this session's live processes, except pytest itself."""
    from airbase import proctags
    found = {}
    for pid in proctags.find(SESSION_TAG, os.environ[SESSION_TAG]):
        if pid == os.getpid():
            continue
        try:
            found[pid] = Path(f"/proc/{pid}/comm").read_text().strip()
        except OSError:
            pass
    return found


@pytest.fixture(scope="session", autouse=True)
def no_lab_process_outlives_the_suite():
    yield
    deadline = time.monotonic() + 5.0  # let killed processes finish exiting
    while True:
        leaked = _session_processes()
        if not leaked or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    for pid in leaked:  # clean up so one leak does not poison the next run
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
    assert not leaked, f"processes left running by the tests: {sorted(leaked.items())}"


@pytest.fixture(scope="session", autouse=True)
def the_suites_placement_file_goes():
    yield
    PLACEMENT_FILE.unlink(missing_ok=True)


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
