"""airbase.bounded_run: a helper command never holds the runner past an interrupt or its
timeout, and is killed and reaped on either."""
import os
import signal
import subprocess
import time

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
