"""airbase.bounded_run: a helper command never holds the runner past an interrupt or its
timeout, and is killed and reaped on either."""
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from airbase import bounded_run


class Interrupt(BaseException):
    """As the trial runner's stop signals become (workflows/trial.py's Interrupted)."""


def gone(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_output_and_exit_status_as_subprocess_run():
    r = bounded_run.run(["sh", "-c", "echo out; echo err >&2; exit 3"], timeout=10, text=True)
    assert (r.returncode, r.stdout, r.stderr) == (3, "out\n", "err\n")


def test_timeout_kills_and_reaps_the_child(tmp_path):
    pidfile = tmp_path / "pid"
    t0 = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        bounded_run.run(["sh", "-c", f"echo $$ > {pidfile}; exec sleep 30"], timeout=0.5)
    assert time.monotonic() - t0 < 5
    assert gone(int(pidfile.read_text())), "the child outlived its timeout"


def test_an_interrupt_during_the_wait_kills_the_child_and_goes_on_at_once(tmp_path):
    pidfile = tmp_path / "pid"

    def interrupted(signum, frame):
        raise Interrupt()
    old = signal.signal(signal.SIGALRM, interrupted)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.5)
        t0 = time.monotonic()
        with pytest.raises(Interrupt):
            bounded_run.run(["sh", "-c", f"echo $$ > {pidfile}; exec sleep 60"], timeout=120)
        took = time.monotonic() - t0
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert took < 5, took
    assert gone(int(pidfile.read_text())), "the child outlived the interrupt"


FREEZER_V1 = "/sys/fs/cgroup/freezer"


def test_a_child_that_cannot_die_yet_holds_the_caller_at_most_kill_wait_s(tmp_path, monkeypatch):
    """The cap itself: a child the kernel does not let die at once (here frozen by a cgroup-v1
    freezer, where SIGKILL waits for the thaw) is waited for KILL_WAIT_S, then left to the
    trial's sweep, and the exception goes on. Pure cgroup v2 kills frozen tasks, so there is
    no such child to make: skipped, saying why."""
    root = Path(FREEZER_V1)
    if not (root / "cgroup.procs").exists() or not os.access(root, os.W_OK):
        pytest.skip(f"no writable cgroup-v1 freezer at {FREEZER_V1}: cannot make a child that SIGKILL does not end")
    monkeypatch.setattr(bounded_run, "KILL_WAIT_S", 1.0)
    cg = root / f"airlab-test-bounded-{os.getpid()}"
    cg.mkdir()
    pidfile = tmp_path / "pid"

    def freeze_child():  # as soon as the child has said who it is
        deadline = time.monotonic() + 5
        while not pidfile.exists() or not pidfile.read_text().strip():
            if time.monotonic() > deadline:
                return
            time.sleep(0.01)
        (cg / "cgroup.procs").write_text(pidfile.read_text().strip())
        (cg / "freezer.state").write_text("FROZEN")
        while (cg / "freezer.state").read_text().strip() != "FROZEN" and time.monotonic() < deadline:
            time.sleep(0.01)

    freezer = threading.Thread(target=freeze_child)
    pid = None
    try:
        freezer.start()
        t0 = time.monotonic()
        with pytest.raises(subprocess.TimeoutExpired):
            bounded_run.run(["sh", "-c", f"echo $$ > {pidfile}; exec sleep 60"], timeout=1.5)
        took = time.monotonic() - t0
        freezer.join()
        pid = int(pidfile.read_text())
        assert (cg / "freezer.state").read_text().strip() == "FROZEN"
        assert not gone(pid), "the frozen child died: the cap was not what ended the wait"
        assert 1.5 + 0.9 <= took < 1.5 + 1.0 + 1.5, took  # the timeout, then the cap, then on
    finally:
        freezer.join()
        (cg / "freezer.state").write_text("THAWED")  # the pending SIGKILL ends it now
        if pid is None and pidfile.exists() and pidfile.read_text().strip():
            pid = int(pidfile.read_text())
        if pid is not None:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
        cg.rmdir()
