"""The instants where an interrupt used to be lost or to escape (CI, 29 Nov: one runner
ignored a SIGINT for 120 s, another ended with an uncaught Interrupted, exit 1):

- a signal whose handler is pending while the runner is blocked waiting for the engine
  (delivered to another thread, or just before the wait began): the wait must end at once;
- a SIGINT that Python turned into KeyboardInterrupt before the trial runner held the
  signals, and that something swallowed: the trial must still stop before it starts.
tests/test_setups_interrupts.py interrupts real trials at fixed instants under every setup."""
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from airbase import child_wait
from airbase.paths import ROOT
from trial_helpers import SHORT_ENGINE


class _Woken(Exception):
    pass


def test_a_signal_taken_by_another_thread_still_ends_the_wait_for_a_child():
    """The kernel may hand a signal to any thread that does not block it; its Python handler
    then waits for the main thread, which a plain os.wait4() keeps asleep until the child
    exits. Here the signal goes to a helper thread on purpose (pthread_kill)."""
    def woken(signum, frame):
        raise _Woken()

    old = signal.signal(signal.SIGUSR2, woken)
    child = subprocess.Popen(["sleep", "60"])
    helper = threading.Thread(target=lambda: (time.sleep(0.3), signal.pthread_kill(threading.get_ident(), signal.SIGUSR2)))
    try:
        t0 = time.monotonic()
        helper.start()
        with pytest.raises(_Woken):
            child_wait.wait4(child.pid)
        assert time.monotonic() - t0 < 30, "the wait ended only when the child did"
        assert child.poll() is None
    finally:
        helper.join()
        signal.signal(signal.SIGUSR2, old)
        child.kill()
        child.wait()


def test_the_wait_returns_the_child_status_and_its_cpu():
    child = subprocess.Popen([sys.executable, "-c", "import sys; sum(range(3_000_000)); sys.exit(3)"])
    pid, status, usage = child_wait.wait4(child.pid)
    assert pid == child.pid and os.waitstatus_to_exitcode(status) == 3
    assert usage.ru_utime + usage.ru_stime > 0


def test_a_sigint_swallowed_before_the_runner_holds_the_signals_still_stops_the_trial(tmp_path):
    """As the `airlab` command does first (workflows/cli.py), then a SIGINT whose
    KeyboardInterrupt Python raises inside a weakref callback, which it reports as "Exception
    ignored" and goes on (how importlib's module-lock callback swallowed it in the start-up:
    airbase/early_signals.py); then the trial."""
    out = tmp_path / "t.json"
    script = textwrap.dedent(f"""
        import os, signal, sys, time, weakref
        from airbase import early_signals
        early_signals.note_from_now()
        class Thing:
            pass
        def callback(ref):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)  # the handler runs here: KeyboardInterrupt inside the callback
        thing = Thing()
        ref = weakref.ref(thing, callback)
        del thing
        print("went on", file=sys.stderr)
        from workflows.trial import TrialInterrupted, run_trial
        try:
            run_trial("cpu-1", "cfs", {str(out)!r}, {SHORT_ENGINE!r})
        except TrialInterrupted as e:
            print(e, file=sys.stderr)
            sys.exit(130)
        """)
    r = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120,
                       stdin=subprocess.DEVNULL)
    assert "Exception ignored" in r.stderr and "went on" in r.stderr  # swallowed, as in the start-up
    assert r.returncode == 130, r.stderr
    assert "interrupted by SIGINT; nothing was written" in r.stderr
    assert "running" not in r.stderr  # stopped before the engine or a load started
    assert not out.exists()


def test_the_wait_works_from_a_helper_thread_too():
    """Signal handlers (and set_wakeup_fd) belong to the main thread: elsewhere a plain wait."""
    child = subprocess.Popen(["true"])
    got = []
    t = threading.Thread(target=lambda: got.append(child_wait.wait4(child.pid)))
    t.start()
    t.join(30)
    assert got and got[0][0] == child.pid and os.waitstatus_to_exitcode(got[0][1]) == 0
