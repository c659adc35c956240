"""Run one program as a SLURM batch job of the lab's private cluster and behave like the
program itself: wait for it, relay its output, exit with its exit code, and pass SIGTERM /
SIGINT on to it (scancel --signal; a hang-up, SIGHUP, goes on as SIGTERM, which every
program stops on). Used by the gang setup for the engine and every load.

Why a batch job and not `srun`: under gang scheduling a new job is often suspended the
moment it is allocated, and srun then fails to create its job step ("Job/step already
completing"); a batch job's program is launched by SLURM itself and simply waits.

    python -m workflows.setups.slurm_job --conf SLURM_CONF --name airlab-load-cpu.0 --cpus 2 -- argv...
"""
import argparse
import os
import re
import shlex
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from airbase import proctags
from airbase.stop_signals import STOP_SIGNALS

FINAL = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY",
         "BOOT_FAIL", "DEADLINE"}


def job_state(jobid, env):
    out = subprocess.run(["scontrol", "-o", "show", "job", jobid], capture_output=True, text=True,
                         env=env, timeout=30).stdout
    state = re.search(r"JobState=(\S+)", out)
    code = re.search(r"ExitCode=(\d+):(\d+)", out)
    return (state.group(1) if state else None,
            (int(code.group(1)) if int(code.group(2)) == 0 else 128 + int(code.group(2))) if code else None)


def outcome(state, code, stopped):
    """The wrapper's exit code for a job that reached a final state, and the line that says
    why when the state alone is the news. A job that ended other than COMPLETED without our
    asking (NODE_FAIL, a cancel by someone else, a job cancelled before it ran) can carry
    exit code 0; passed on as is, it reads as a clean run. The gang test failed once so in a
    fresh-clone suite at 8c25ed4 ("the engine failed (exit 0): no message"); the job's state
    then is not known, which this line now tells."""
    if code is None:
        return 1, f"ended in state {state} without an exit code"
    if state == "COMPLETED" or stopped:
        return code, None
    return code or 1, f"ended in state {state} (exit code {code})"


def job_processes(jobid, conf):
    """The job's program and its children: the cluster is private and single-node, so they
    run here and carry the job's id and our slurm.conf in their environment (slurmstepd,
    which may too, is SLURM's own and left alone)."""
    pids = set(proctags.find("SLURM_JOB_ID", jobid)) & set(proctags.find("SLURM_CONF", conf))
    out = []
    for pid in pids - {os.getpid()}:
        try:
            if Path(f"/proc/{pid}/comm").read_text().strip() != "slurmstepd":
                out.append(pid)
        except OSError:
            pass
    return out


def _append_target(fd):
    """The path of the regular file fd writes to, reopened in append mode (so our own lines
    and the job's never overwrite each other), or None for a pipe or terminal."""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        path = os.readlink(f"/proc/self/fd/{fd}")
        appended = os.open(path, os.O_WRONLY | os.O_APPEND)
    except OSError:
        return None
    os.dup2(appended, fd)
    os.close(appended)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--conf", required=True)
    ap.add_argument("--name", required=True)
    ap.add_argument("--cpus", type=int, required=True)
    ap.add_argument("argv", nargs="+")
    a = ap.parse_args()
    env = {**os.environ, "SLURM_CONF": a.conf}
    # Beside the cluster's slurm.conf: in the trial's work folder, removed with it (and by
    # the sweep if the runner is killed), never a stray folder in /tmp per job.
    work = tempfile.mkdtemp(prefix="job-", dir=os.path.dirname(os.path.abspath(a.conf)))
    script, out, err = (os.path.join(work, n) for n in ("job.sh", "stdout", "stderr"))
    # Where our own output already goes to a file (a load's stdout/stderr in the launcher's
    # folder), the job appends to that file itself: what the program prints as it stops (a
    # load's figures) is there even if we are killed before the job's end reaches SLURM.
    direct = {fd: _append_target(fd) for fd in (1, 2)}
    out, err = direct[1] or out, direct[2] or err
    with open(script, "w") as f:  # argv quoted item by item: no shell string from config
        f.write("#!/bin/sh\nexec " + shlex.join(a.argv) + "\n")
    os.chmod(script, 0o755)
    sub = subprocess.run(["sbatch", "--parsable", f"--job-name={a.name}", "-N1", "-n1", f"-c{a.cpus}",
                          "--oversubscribe", f"--chdir={os.getcwd()}", f"--output={out}", f"--error={err}",
                          "--open-mode=append",
                          "--export=ALL", script], capture_output=True, text=True, env=env, timeout=60)
    if sub.returncode != 0:
        print(f"slurm_job: sbatch failed: {sub.stderr.strip()}", file=sys.stderr)
        return 1
    jobid = sub.stdout.strip().split(";")[0]
    stopping = []

    def forward(signum, frame):
        if stopping:
            return
        stopping.append(signum)
        signum = signal.SIGTERM if signum == signal.SIGHUP else signum
        # Signal and wake the job's program ourselves first: SLURM holds a signal for a job
        # gang has suspended until its next turn, which never comes while the other jobs
        # keep the CPUs (the trial stops its loads one after another), and `scancel` for a
        # suspended job can itself take longer than the launcher's grace. The measurement is
        # over, so the job may run outside its turn; it stops at once (a load prints its
        # figures on SIGTERM). scancel then covers what we cannot see (a remote node).
        for pid in job_processes(jobid, a.conf):
            for sig in (signum, signal.SIGCONT):
                try:
                    os.kill(pid, sig)
                except OSError:  # ended meanwhile
                    pass
        subprocess.Popen(["scancel", f"--signal={signal.Signals(signum).name[3:]}", "--full", jobid],
                         env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for s in STOP_SIGNALS:
        signal.signal(s, forward)
    code, deadline, unknown_since = None, None, None
    while True:
        try:
            state, code = job_state(jobid, env)
        except subprocess.TimeoutExpired:
            state, code = None, None
        if state in FINAL:
            break
        if state is None:  # scontrol failed (a busy slurmctld): retry for a while before giving up
            unknown_since = unknown_since or time.monotonic()
            if time.monotonic() - unknown_since > 60:
                print(f"slurm_job: lost track of job {jobid} (scontrol shows no state for 60 s)", file=sys.stderr)
                subprocess.run(["scancel", jobid], env=env, capture_output=True, timeout=30)
                code = None
                break
            time.sleep(0.5)
            continue
        unknown_since = None
        if stopping and deadline is None:
            deadline = time.monotonic() + 5
        if deadline and time.monotonic() > deadline:  # it ignored the signal: cancel outright
            subprocess.run(["scancel", jobid], env=env, capture_output=True, timeout=30)
            deadline = time.monotonic() + 30
        time.sleep(0.1)
    for path, stream in ((out, sys.stdout), (err, sys.stderr)):
        if path in direct.values():  # the job wrote there itself
            continue
        try:
            with open(path) as f:
                stream.write(f.read())
        except OSError:
            pass
    sys.stdout.flush()
    rc, why = outcome(state, code, bool(stopping))
    if why:
        print(f"slurm_job: job {jobid} {why}", file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main())
