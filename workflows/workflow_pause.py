"""Pausing the workflow above a trial while its engine runs (`airlab trial --pause-workflow PID`).

Snakemake re-evaluates its ready jobs after each job and on its job-rate timer (every 10 s,
profiles/default): every ready job's params and resources, then the selection. With the
quick scale's ~300 ready trials one evaluation took 0.1-0.6 s of CPU, and it lands in the
middle of some trial's engine run (the 18c78ef run: `runner_parts_cpu_s.workflow` a median
7.5% of a core during the engine runs, up to 0.66 s in one run). On a machine with as many
cores as engine threads that is a competitor, and the adaptive modes rightly deactivated a
thread for it: all 15 no-load trials of that run that deactivated one had 0.19-0.66 s of
workflow CPU in their engine run. `settle_workflow` (workflows/noise.py) only waits for the
evaluation that follows the previous job.

So the runner stops the Snakemake process (SIGSTOP) from just before it probes the machine
and starts the engine until the engine has been reaped and the machine probed after it, and
continues it (SIGCONT) then; the same around each calibration pilot. Stopped, the workflow
cannot compete, so the runner does not first wait for it to go quiet (settle_workflow):
that wait cost a median 0.2 s a trial (a mean 0.36-0.39 s with re-runs), 1.7-1.9 min of
each 39-min run of the c8baa61 pair. The
probe after the run is inside the pause because the work Snakemake had left when stopped
runs as soon as it continues, and beside it the ping-pong would look far. Only the process
itself is stopped (not its group: the runner is in it), and only a process that is an
ancestor of the runner.

Whatever happens to the runner, the workflow continues: a guard process (`sh`, a session of
its own so a terminal's Ctrl-C does not reach it) blocks reading a pipe only the runner can
write. When the runner closes it, or dies however it dies (the kernel closes its end even
after SIGKILL), the read returns and the guard sends SIGCONT. A signal sent to a stopped
Snakemake (Ctrl-C, SIGTERM) waits until then: at most the engine run, which the trial's
--timeout bounds.
"""
import os
import signal
import subprocess

from airbase.errors import UsageError
from workflows.noise import ancestors, settle_workflow

_pid = None  # the workflow process to pause, set by configure(); None: pause nothing


def configure(pid):
    """Pause `pid` during each engine run from now on (None: none). It must be an ancestor of
    this process: the runner stops only the workflow that started it."""
    global _pid
    if pid is not None and pid not in ancestors(os.getpid()):
        raise UsageError(f"--pause-workflow {pid}: not a process above this runner "
                         "(give the PID of the Snakemake process that runs the trial)")
    _pid = pid


class Pause:
    """start() stops the configured workflow, end() continues it (idempotent; also from a
    `finally`). `paused` says whether this run had it stopped, for the trial's record."""

    def __init__(self):
        self.pid, self.paused, self._guard = _pid, False, None

    def start(self):
        if self.pid is None or self._guard is not None:
            return
        if self.pid not in ancestors(os.getpid()):  # it ended, and the PID may be another's now
            return
        self._guard = subprocess.Popen(["sh", "-c", f"read _; kill -CONT {self.pid}"], stdin=subprocess.PIPE,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                       start_new_session=True)
        try:
            os.kill(self.pid, signal.SIGSTOP)
            self.paused = True
        except ProcessLookupError:  # the workflow is gone: nothing to keep quiet
            self.end()

    def start_or_settle(self):
        """start(); where the workflow could not be stopped (no --pause-workflow, or it has
        ended), wait for it to go quiet instead (settle_workflow). Returns the seconds waited."""
        self.start()
        return 0.0 if self.paused else settle_workflow()

    def end(self):
        if self._guard is None:
            return
        try:
            os.kill(self.pid, signal.SIGCONT)
        except ProcessLookupError:
            pass
        self._guard.stdin.close()  # the guard continues it again and exits
        self._guard.wait()
        self._guard = None
