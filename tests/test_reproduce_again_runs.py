"""`airlab reproduce-again` around the runs it leaves: which finished runs it names for
pooling, and what it says when its own measurement was stopped before the end (the command's
whole workflow is tested with real smoke runs in tests/test_workflow_smoke.py)."""
import os
import signal
import subprocess
import sys
import time

import pytest

from airbase.paths import ROOT
from test_pooled import _run


def test_reproduce_again_finds_the_runs_to_pool(tmp_path):
    """`make reproduce-again` names the command that pools every finished run of the scale:
    the current one and those it set aside, not an unfinished one nor another scale's."""
    from workflows.reproduce_again import finished_runs
    results = tmp_path / "results"
    for name in ("quick", "quick-20261130T0738Z", "quick-20261130T0900Z", "smoke"):
        _run(results, name, [1.0, 1.0])
    (results / "quick-20261130T1000Z" / "trials").mkdir(parents=True)  # interrupted: no summary
    assert [p.name for p in finished_runs(results, "quick")] == ["quick", "quick-20261130T0738Z",
                                                                 "quick-20261130T0900Z"]


def test_reproduce_again_after_its_own_run_was_stopped_says_how_to_finish(tmp_path):
    """A measurement stopped half-way (a hang-up, Ctrl-C) leaves results/<scale> unfinished
    and the earlier run at results/<scale>-<time>: the command says how to finish and compare,
    instead of 'run make reproduce first'."""
    from airbase.errors import UsageError
    from workflows.reproduce_again import reproduce_again
    results = tmp_path / "results"
    _run(results, "quick-20261130T0853Z", [1.0, 1.0])
    (results / "quick" / "trials").mkdir(parents=True)
    with pytest.raises(UsageError) as e:
        reproduce_again(tmp_path, ["scale=quick"])
    assert "has not finished" in str(e.value)
    assert "finish this one with `snakemake --cores all --config scale=quick -- reproduce_figures`" in str(e.value)
    assert f"analysis.reproducibility {results / 'quick-20261130T0853Z'} {results / 'quick'}" in str(e.value)
    (results / "quick" / "trials").rmdir()
    (results / "quick").rmdir()
    with pytest.raises(UsageError, match="no finished run at"):
        reproduce_again(tmp_path, ["scale=quick"])


# A stand-in for Snakemake that says which signal it got: what is tested is this command's
# handling of the signals, with a real child process.
CHILD = ("import sys, time\n"
         "print('ready', flush=True)\n"
         "try:\n"
         "    time.sleep(30)\n"
         "except KeyboardInterrupt:\n"  # Python's own SIGINT handling, as Snakemake relies on
         "    sys.exit(7)\n")
PARENT = ("import sys\n"
          "from workflows.reproduce_again import run_workflow\n"
          "print(run_workflow([sys.executable, '-c', sys.argv[1]]), flush=True)\n")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_kill_or_hang_up_of_the_command_stops_the_workflow_and_waits_for_it(sig):
    """SIGTERM or a hang-up that reaches `airlab reproduce-again` alone is passed on to
    Snakemake as SIGINT (which cancels its jobs; its own SIGTERM would wait for the running
    trial), and the command waits for it to end rather than killing it half-way: exit 130,
    the signal named. Started as a shell starts a background job (SIGINT ignored, which a
    Python child would otherwise keep ignoring)."""
    p = subprocess.Popen([sys.executable, "-c", PARENT, CHILD], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    assert p.stdout.readline().strip() == "ready"
    p.send_signal(sig)
    out, _ = p.communicate(timeout=20)
    assert out.strip() == f"(130, '{sig.name}')"


def test_ctrl_c_is_left_to_the_workflow_which_got_it_too():
    """At a terminal Ctrl-C reaches the whole process group, Snakemake included: the command
    waits for it to end (here the stand-in ends on the group's SIGINT) and names the signal,
    where subprocess.call let KeyboardInterrupt out and killed the child."""
    p = subprocess.Popen([sys.executable, "-c", PARENT, CHILD], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                         start_new_session=True)
    assert p.stdout.readline().strip() == "ready"
    t0 = time.monotonic()
    os.killpg(p.pid, signal.SIGINT)
    out, _ = p.communicate(timeout=20)
    assert out.strip() == "(130, 'SIGINT')" and time.monotonic() - t0 < 10
