"""`airlab trial --pause-workflow PID`: the workflow above the runner is stopped while the
engine runs and continued after it, whatever happens to the runner (workflows/workflow_pause.py).

Real processes: a Python "workflow" whose thread keeps a core busy starts a real trial and
passes its own PID, as Snakemake's shell passes $PPID."""
import json
import os
import signal
import subprocess
import sys
import time

from trial_helpers import AIRLAB
from workflows.noise_check import ENGINE as BESIDE_HOG
from workflows.setups import leftovers

# A workflow that is busy all the time (Snakemake evaluating its ready jobs, without end),
# then starts the trial with its own PID; it prints the runner's PID for the kill test.
BUSY_WORKFLOW = ("import os, subprocess, sys, threading\n"
                 "stop = False\n"
                 "def spin():\n"
                 "    while not stop: pass\n"
                 "threading.Thread(target=spin, daemon=True).start()\n"
                 "argv = [a.replace('WORKFLOW_PID', str(os.getpid())) for a in sys.argv[1:]]\n"
                 "p = subprocess.Popen(argv, stdin=subprocess.DEVNULL)\n"
                 "print(p.pid, flush=True)\n"
                 "r = p.wait()\n"
                 "stop = True\n"
                 "sys.exit(r if r >= 0 else 128 - r)\n")  # killed by signal N: 128 + N, as a shell says


def _state(pid):
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def test_the_workflow_is_stopped_during_the_run_and_continued_after(tmp_path):
    """Without the pause a workflow busy the whole run has ~the whole window of CPU in
    runner_parts_cpu_s.workflow (tests/test_trial_clock_noise.py); paused, none: its
    thread cannot run while the process is stopped. The workflow goes on afterwards (it
    exits with the runner's status). Stopped, it is not first waited for to go quiet (busy
    all the time, it would hold the trial for the settle's 5-s limit)."""
    out = tmp_path / "t.json"
    r = subprocess.run([sys.executable, "-c", BUSY_WORKFLOW, AIRLAB, "trial", "--profile", "none",
                        "--out", str(out), "--pause-workflow", "WORKFLOW_PID", "--", *BESIDE_HOG,
                        "--end-time", "3000"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    nz = json.loads(out.read_text())["noise"]
    assert nz["workflow_paused"] is True, nz
    assert nz["runner_parts_cpu_s"]["workflow"] < 0.05 * nz["window_s"], nz
    assert nz["workflow_settle_s"] == 0, nz


def test_without_the_option_nothing_is_paused(tmp_path):
    out = tmp_path / "t.json"
    r = subprocess.run([AIRLAB, "trial", "--profile", "none", "--out", str(out), "--",
                        *BESIDE_HOG, "--end-time", "1000"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())["noise"]["workflow_paused"] is False


def test_a_pid_that_is_not_above_the_runner_is_refused(tmp_path):
    """Only the workflow that started the runner may be stopped: any other PID (here a
    sleeping process beside it) is bad input, exit 2 with one line, and it is not stopped."""
    other = subprocess.Popen(["sleep", "30"])
    try:
        out = tmp_path / "t.json"
        r = subprocess.run([AIRLAB, "trial", "--profile", "none", "--out", str(out), "--pause-workflow",
                            str(other.pid), "--", *BESIDE_HOG, "--end-time", "1000"],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 2, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert f"--pause-workflow {other.pid}: not a process above this runner" in r.stderr
        assert not out.exists()
        assert _state(other.pid) == "S"
    finally:
        other.kill()
        other.wait()


def test_a_runner_killed_while_the_workflow_is_stopped_leaves_it_running(tmp_path):
    """SIGKILL gives the runner no chance to continue the workflow: the guard does (it reads
    a pipe only the runner held, and the kernel closes it when the runner dies)."""
    out = tmp_path / "t.json"
    wf = subprocess.Popen([sys.executable, "-c", BUSY_WORKFLOW, AIRLAB, "trial", "--profile", "none",
                           "--out", str(out), "--pause-workflow", "WORKFLOW_PID", "--", *BESIDE_HOG,
                           "--end-time", "100000"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    runner = int(wf.stdout.readline())
    try:
        deadline = time.monotonic() + 60
        while _state(wf.pid) != "T":  # stopped: the engine is about to start or running
            assert time.monotonic() < deadline, "the workflow was never stopped"
            assert wf.poll() is None, "the workflow ended before it was stopped"
            time.sleep(0.02)
        os.kill(runner, signal.SIGKILL)
        deadline = time.monotonic() + 5
        while _state(wf.pid) == "T":
            assert time.monotonic() < deadline, "the workflow stayed stopped after the runner died"
            time.sleep(0.02)
        assert wf.wait(timeout=30) == 128 + signal.SIGKILL  # it went on: reaped its runner, exited
    finally:
        leftovers.sweep_runner(runner)  # the engine the killed runner left
        if wf.poll() is None:
            os.kill(wf.pid, signal.SIGCONT)
            wf.kill()
        wf.wait()
    assert not out.exists()
