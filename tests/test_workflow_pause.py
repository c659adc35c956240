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


# A calibration pilot under the busy workflow above: the real pilot (calibration._pilot) in a
# child of BUSY_WORKFLOW, which configures the pause as `airlab trial --pause-workflow` does
# and records each settle_workflow call (not made: against a workflow busy all the time it
# would take its 5-s limit) and whether the pause stopped the workflow.
PILOT_UNDER_WORKFLOW = ("import json, sys\n"
                        "from workflows import calibration, workflow_pause\n"
                        "settles, stopped = [], []\n"
                        "real_start = workflow_pause.Pause.start\n"
                        "def settle(*a, **k):\n"
                        "    settles.append(0.0)\n"
                        "    return 0.0\n"
                        "def start(self):\n"
                        "    real_start(self)\n"
                        "    stopped.append(self.paused)\n"
                        "from workflows import noise\n"
                        "noise.settle_workflow = workflow_pause.settle_workflow = settle  # either way it is called\n"
                        "workflow_pause.Pause.start = start\n"
                        "workflow_pause.configure(int(sys.argv[1]) if sys.argv[1] != 'none' else None)\n"
                        "work = calibration.work_of(calibration.parse_options(\n"
                        "    ['--mode', 'fm', '--threads', '2', '--lps-per-pe', '300', '--remote', '0.2']))\n"
                        "wall, events, _, _ = calibration._pilot(work, 1500.0, 60)\n"
                        "print(json.dumps({'settles': settles, 'stopped': stopped, 'events': events}))\n")


def _pilot_under_busy_workflow(pause):
    r = subprocess.run([sys.executable, "-c", BUSY_WORKFLOW, sys.executable, "-c", PILOT_UNDER_WORKFLOW,
                        "WORKFLOW_PID" if pause else "none"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.splitlines()[-1])


def test_a_calibration_pilot_stops_the_workflow_and_does_not_wait_for_it():
    """As a trial's run: the pilot stops the workflow above and makes no settle (busy all the
    time, the workflow would hold it for the settle's 5-s limit). Without a workflow to stop
    the pilot settles, once."""
    paused = _pilot_under_busy_workflow(pause=True)
    assert paused["stopped"] == [True] and paused["settles"] == [] and paused["events"] > 0, paused
    unpaused = _pilot_under_busy_workflow(pause=False)
    assert unpaused["stopped"] == [False] and len(unpaused["settles"]) == 1, unpaused
