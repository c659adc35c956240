"""Helpers for the trial, setup, doctor and workflow tests: run `airlab trial` (or a
Snakemake workflow) as a user would, and check that nothing it started survived it.

Other engineers' tests run on the same machine at the same time, so "nothing left" must
mean "nothing of *this* run": every runner we start carries a unique AIRLAB_TEST_RUN tag in
its environment, which its engine, its loads and even its SLURM daemons and jobs inherit,
and its cgroups are named after its PID (airlab-<pid>-...)."""
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

from airbase import proctags
from airbase.paths import SCHEMAS
from workflows.setups import cgroups

SHORT_ENGINE = ["--mode", "fm", "--threads", "2", "--lps-per-pe", "300", "--remote", "0.2", "--end-time", "3000"]
# The `airlab` command of the environment running the tests (as tests/conftest.py's fixture,
# so these tests also run with --noconftest beside other people's lab processes).
AIRLAB = str(Path(sys.executable).parent / "airlab")
SCHEMA = json.loads((SCHEMAS / "trial.schema.json").read_text())


class Runner:
    """One `airlab trial` process with its own tag."""

    def __init__(self, out, profile="cpu-1", setup="cfs", engine=SHORT_ENGINE, extra=(), env=None):
        self.tag = uuid.uuid4().hex
        self.out = Path(out)
        argv = [AIRLAB, "trial", "--profile", profile, "--setup", setup, "--out", str(out), *extra, "--", *engine]
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     stdin=subprocess.DEVNULL,
                                     env={**(env if env is not None else os.environ), "AIRLAB_TEST_RUN": self.tag})
        self.stdout = self.stderr = None

    def wait(self, timeout=300):
        try:
            self.stdout, self.stderr = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            states = self.process_states()  # what its children were doing, before anything is stopped
            self.proc.send_signal(signal.SIGUSR1)  # the runner prints where every thread is
            time.sleep(1.0)
            self.proc.terminate()  # then stop it the way a user would, so it cleans up
            try:
                self.stdout, self.stderr = self.proc.communicate(timeout=30)
            except subprocess.TimeoutExpired:  # it ignores that too: kill it, keep what it said
                self.proc.kill()
                self.stdout, self.stderr = self.proc.communicate()
            raise AssertionError(f"the trial did not end within {timeout} s; its processes then: {states}; "
                                 f"its threads' stacks at the end of stderr: {self.stderr}") from None
        return self.proc.returncode

    def process_states(self):
        """'pid state wchan command' of every live process of this run, for a hang's report."""
        states = []
        for pid in proctags.find("AIRLAB_TEST_RUN", self.tag):
            try:
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
                wchan = Path(f"/proc/{pid}/wchan").read_text() or "-"
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:120]
            except OSError:
                continue
            states.append(f"{pid} {state} {wchan} {cmd.strip()}")
        return states

    @property
    def returncode(self):
        return self.proc.returncode

    def left_behind(self):
        """Processes and cgroups of this run that still exist (should be empty)."""
        procs = proctags.find("AIRLAB_TEST_RUN", self.tag)
        groups = [g for g in cgroups.leftover_lab_groups() if Path(g).name.startswith(f"airlab-{self.proc.pid}-")]
        return procs + groups


def run(out, **kw):
    r = Runner(out, **kw)
    r.wait()
    return r


def wait_until_gone(runner, seconds=10.0):
    """What is still left after up to `seconds` (killed processes take a moment to exit)."""
    deadline = time.monotonic() + seconds
    while True:
        left = runner.left_behind()
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)


# A workflow's limit in the tests catches a hang, not a slow machine: the smoke target takes
# 1-1.5 min quiet, about 3 beside a busy core and 277-327 s beside two (29 Nov).
WORKFLOW_TIMEOUT_S = 900


def run_workflow(argv, timeout=WORKFLOW_TIMEOUT_S, **kw):
    """subprocess.run for a Snakemake workflow (argv, capture_output, text), whose timeout
    stops the whole workflow: Snakemake runs in its own session and a workflow still going at
    `timeout` gets SIGTERM on its process group (the runners stop their engines and loads),
    then SIGKILL; the test fails with the output's tail. subprocess.run's own timeout kills
    Snakemake alone and leaves its running trial to the tests after it."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL, start_new_session=True, **kw)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            out, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
        raise AssertionError(f"the workflow did not finish within {timeout} s (stopped): "
                             f"{(out + err)[-3000:]}") from None
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)
