"""Run a resolved profile's processes next to an engine run, and guarantee that none of
them outlives it.

    with LoadSet(resolve_profile("cpu-1"), hooks=ProcessHooks(...), workdir=d) as loads:
        loads.start(t0=time.monotonic())   # offsets count from t0 (the engine's start)
        ...                                # the engine runs
        records = loads.stop()             # each load's figures and real start/stop times

Each load is its own process group (stopped with SIGTERM to the group, then SIGKILL after
a grace period), carries AIRLAB_LOAD_SET in its environment (so a test or a clean-up can
find every process a set started, grandchildren included), and dies with its parent
(PR_SET_PDEATHSIG) if the launcher itself is killed; a watchdog process (loads.watchdog)
then kills whatever the loads started themselves. One scheduler thread starts and stops
the processes at their offsets; it is also the thread that forks them, which is what
PR_SET_PDEATHSIG watches, so it lives until every process is gone."""
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from airbase import cpus, proctags, threads
from loads import kinds

STOP_GRACE_S = 3.0
# How long start() and stop() wait for the scheduler thread. It never should take this
# long; if it does (a runner once ignored signals for 180 s after SIGINT in a test, cause
# unknown), the set kills what it started by its tag and says so instead of hanging.
START_WAIT_S = 60.0
STOP_SLACK_S = 15.0
_libc = ctypes.CDLL(None, use_errno=True)
PR_SET_PDEATHSIG = 1


@dataclass
class ProcessHooks:
    """How a setup changes every load process: wrap_argv(argv, load) -> argv (e.g. an srun
    prefix), preexec() in the child before exec (join a cgroup, SCHED_IDLE, nice), and
    on_started(pid, load) in the parent after each start, and ran_since(load): the monotonic
    instant the load first really ran when that is later than its launch (a gang job's first
    turn), or None to keep its launch time."""
    wrap_argv: Optional[Callable] = None
    preexec: Optional[Callable] = None
    on_started: Optional[Callable] = None
    ran_since: Optional[Callable] = None


class SchedulerStuck(RuntimeError):
    """The scheduler thread did not start or stop the loads in time; what it had started
    was killed by the set's tag."""


class _Load:
    def __init__(self, index, proc, workdir):
        self.proc = proc
        self.index = index
        self.id = None
        self.dir = Path(workdir) / f"{index:02d}-{proc['name']}"
        self.popen = None
        self.argv = None
        self.started = None   # monotonic times
        self.stopped = None
        self.exited = None    # when its process ended, even on its own before its stop time
        self.error = None
        self.cpu_s = None
        self.lingered = False  # its process group outlived SIGKILL (should never happen)
        self.ended_early = False  # its process had ended on its own when it was to be stopped


class LoadSet:
    def __init__(self, profile, hooks=None, workdir=None):
        self.profile = profile
        self.hooks = hooks or ProcessHooks()
        self.workdir = Path(workdir or f"/tmp/airlab-loads-{os.getpid()}")
        self.tag = uuid.uuid4().hex
        self.loads = [_Load(i, p, self.workdir) for i, p in enumerate(profile["processes"])]
        for ld in self.loads:
            ld.id = f"{self.tag}.{ld.index}"
        for ld in self.loads:
            if ld.proc.get("available", True):
                kinds.prepare(ld.proc, ld.dir)
        self._cv = threading.Condition()
        self._stop_requested = False
        self._thread = None
        self._watchdog = None
        self._watchdog_pipe = None
        self.t0 = None
        self.records = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            self.stop()
        except SchedulerStuck:
            if exc_type is None:
                raise
            # already leaving with an exception (an interrupt, a failed run): that one is
            # what the caller must see; the loads are gone either way
        return False

    def start(self, t0=None):
        """Start the scheduler: loads with start_s = 0 start now, the others at t0 + start_s."""
        if self._thread:
            raise RuntimeError("LoadSet.start() called twice")
        self.t0 = time.monotonic() if t0 is None else t0
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._start_watchdog()
        ready = threading.Event()
        self._thread = threads.start(threading.Thread(target=self._schedule, args=(ready,), name="loads",
                                                      daemon=True))
        if not ready.wait(START_WAIT_S):  # loads due at once are running when start() returns
            raise SchedulerStuck(f"the load scheduler did not start the loads within {START_WAIT_S:g} s")

    def stop(self):
        """Stop every load still running, wait until each process group is gone, and return
        the load records (docs/interfaces.md). Safe to call more than once."""
        if self.records is not None:
            return self.records
        # The scheduler holds the condition's lock while it starts and stops loads, so a
        # stuck one would hold stop() here too: bounded like the join.
        deadline = time.monotonic() + self.stop_budget_s()
        stuck = not self._cv.acquire(timeout=self.stop_budget_s())
        if not stuck:
            try:
                self._stop_requested = True
                self._cv.notify_all()
            finally:
                self._cv.release()
        if self._thread is None:
            self.t0 = time.monotonic()
        elif not stuck:
            try:
                self._thread.join(max(0.0, deadline - time.monotonic()))
                stuck = self._thread.is_alive()
            except RuntimeError:
                # An interrupt landed inside start(), before the thread had started: it
                # may still start, but then finds the stop request and starts nothing.
                pass
        if stuck:
            self._kill_by_tag()
        self._end_watchdog()
        self.records = [self._record(ld) for ld in self.loads]
        if stuck:
            raise SchedulerStuck(f"the load scheduler did not stop the loads within "
                                 f"{self.stop_budget_s():g} s; killed what it had started by its tag")
        return self.records

    def stop_budget_s(self):
        """Time the scheduler may take to stop every load: a grace period and a kill each."""
        return STOP_SLACK_S + 2 * STOP_GRACE_S * len(self.loads)

    def _kill_by_tag(self):
        """Without the scheduler thread: SIGKILL every process of this set (its groups, and
        whatever carries its tag), and mark the loads it had not stopped as lingering."""
        for ld in self.loads:
            if ld.popen is not None and ld.stopped is None:
                _signal_group(ld.popen.pid, signal.SIGKILL)
                ld.lingered = True
        for pid in processes_tagged(self.tag):
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        # Reap them: they are this process's children, and a caller that lives on (a test
        # session, a long-lived tool) would otherwise keep their zombies until it exits.
        deadline = time.monotonic() + STOP_GRACE_S
        for ld in self.loads:
            if ld.popen is not None:
                try:
                    ld.popen.wait(timeout=max(0.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    pass

    def _start_watchdog(self):
        """Kills this set's processes if the launcher dies before stop() (loads.watchdog)."""
        r, w = os.pipe()
        env = {k: v for k, v in os.environ.items() if not k.startswith("AIRLAB_")}
        try:
            self._watchdog = subprocess.Popen([sys.executable, "-m", "loads.watchdog", self.tag],
                                              stdin=r, stdout=subprocess.DEVNULL, env=env,
                                              start_new_session=True)
        finally:
            os.close(r)
        self._watchdog_pipe = w

    def _end_watchdog(self):
        if self._watchdog_pipe is not None:
            os.close(self._watchdog_pipe)  # end of file: it checks that nothing is left, exits
            self._watchdog_pipe = None
        if self._watchdog is not None:
            try:
                self._watchdog.wait(15)
            except subprocess.TimeoutExpired:
                self._watchdog.kill()
                self._watchdog.wait()

    # The scheduler thread: every fork and every kill happens here.
    def _schedule(self, ready):
        try:
            with self._cv:
                if self._stop_requested:  # stopped while start() was still starting us
                    return
            self._start_due()
            ready.set()
            with self._cv:
                while not self._stop_requested:
                    due = [t for t in self._pending_times() if t is not None]
                    timeout = max(0.0, min(due) - (time.monotonic() - self.t0)) if due else None
                    self._cv.wait(timeout)
                    if self._stop_requested:
                        break
                    self._start_due()
                    self._stop_due()
        finally:
            ready.set()
            for ld in self.loads:
                self._terminate(ld)

    def _pending_times(self):
        for ld in self.loads:
            if not ld.proc.get("available", True):
                continue
            if ld.popen is None and ld.error is None:
                yield ld.proc["start_s"]
            elif ld.popen is not None and ld.stopped is None and ld.proc.get("stop_s") is not None:
                yield ld.proc["stop_s"]

    def _start_due(self):
        now = time.monotonic() - self.t0
        for ld in self.loads:
            if ld.popen is None and ld.error is None and ld.proc.get("available", True) \
                    and ld.proc["start_s"] <= now + 1e-3:
                self._spawn(ld)

    def _stop_due(self):
        now = time.monotonic() - self.t0
        for ld in self.loads:
            stop_s = ld.proc.get("stop_s")
            if ld.popen is not None and ld.stopped is None and stop_s is not None and stop_s <= now + 1e-3:
                self._terminate(ld)

    def _spawn(self, ld):
        try:
            ld.dir.mkdir(parents=True, exist_ok=True)
            argv, extra_env = kinds.command_for(ld.proc, ld.dir)
            if self.hooks.wrap_argv:
                argv = list(self.hooks.wrap_argv(argv, ld.proc))
            ld.argv = argv
            env = {**os.environ, **extra_env, "AIRLAB_LOAD_SET": self.tag, "AIRLAB_LOAD_ID": ld.id}
            user_preexec = self.hooks.preexec

            def preexec():
                threads.unblock_in_child()  # started from the scheduler thread (airbase/threads.py)
                _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
                if ld.proc.get("cpus"):
                    os.sched_setaffinity(0, cpus.cpu_list(ld.proc["cpus"]))
                if user_preexec:
                    user_preexec()
            with open(ld.dir / "stdout", "wb") as out, open(ld.dir / "stderr", "wb") as err:
                # A process group, not a session: sessions are scheduling groups under
                # sched_autogroup, and the engine must compete with its loads task by task
                # (workflows/trial.py).
                ld.popen = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                            env=env, cwd=ld.dir, process_group=0,
                                            preexec_fn=preexec)
            ld.started = time.monotonic()
            threads.start(threading.Thread(target=_note_exit, args=(ld,), name=f"exit-{ld.id}", daemon=True))
            if self.hooks.on_started:
                self.hooks.on_started(ld.popen.pid, ld.proc)
        except Exception as e:  # a load that cannot start is recorded, the others go on
            ld.error = f"could not start: {e}"

    def _terminate(self, ld):
        p = ld.popen
        if p is None or ld.stopped is not None:
            return
        # Before it is stopped: the CPU time of every process of this load (wrappers, srun
        # jobs), with the children each has waited for. find() skips zombies, so the leader
        # is read by its PID: if it ended on its own it is a zombie that only the poll()
        # below reaps, and its /proc entry still holds its CPU time.
        ld.cpu_s = proctags.cpu_seconds(proctags.with_groups({*proctags.find("AIRLAB_LOAD_ID", ld.id), p.pid}))
        ld.ended_early = p.poll() is not None
        if not ld.ended_early:
            _signal_group(p.pid, signal.SIGTERM)
            try:
                p.wait(STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                _signal_group(p.pid, signal.SIGKILL)
                p.wait()
        ld.stopped = time.monotonic()
        if ld.exited is not None:  # when it really ended: maybe on its own, long before now
            ld.stopped = min(ld.stopped, ld.exited)
        # The leader is gone; make sure nothing else of its group lingers.
        deadline = time.monotonic() + STOP_GRACE_S
        while _group_alive(p.pid) and time.monotonic() < deadline:
            _signal_group(p.pid, signal.SIGKILL)
            time.sleep(0.01)
        # Anything of this load that left the group (setsid, a daemon) still carries its tag.
        for pid in proctags.find("AIRLAB_LOAD_ID", ld.id):
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        ld.lingered = _group_alive(p.pid)

    def _record(self, ld):
        proc = ld.proc
        rec = {
            "name": proc["name"], "kind": proc["kind"], "argv": ld.argv, "threads": proc["threads"],
            "planned_start_s": proc["start_s"], "planned_stop_s": proc.get("stop_s"),
            "start_s": None if ld.started is None else ld.started - self.t0,
            "stop_s": None if ld.stopped is None else ld.stopped - self.t0,
            "exit_code": None if ld.popen is None else ld.popen.returncode,
            "pid": None if ld.popen is None else ld.popen.pid,
            "cpu_s": ld.cpu_s,
            "stopped_cleanly": not ld.lingered,
            "stand_in": proc.get("stand_in", False), "stand_in_for": proc.get("stand_in_for"),
            "replaces_unavailable": proc.get("replaces_unavailable"),
            "available": proc.get("available", True) and ld.error is None,
            "reason": proc.get("reason") or ld.error,
            "figures": {"throughput": None, "unit": None},
            "ended_early": ld.ended_early,
        }
        if self.hooks.ran_since and ld.started is not None:  # gang: its job's first turn, not its submission
            first = self.hooks.ran_since(proc)
            if first is not None:
                rec["launched_s"] = rec["start_s"]
                rec["start_s"] = max(first, ld.started) - self.t0
        if proc.get("parsec"):  # a PARSEC load: what really ran, chosen here
            res = proc["parsec"]
            rec["parsec"] = {k: res[k] for k in ("benchmark", "input", "build_config", "binary", "home")}
        if ld.popen is not None:
            out = _read(ld.dir / "stdout")
            err = _read(ld.dir / "stderr")
            rec["figures"] = kinds.figures_of(proc, out, err, ld.dir)
            if err.strip():
                rec["stderr_tail"] = err.strip()[-500:]
        return rec


def _note_exit(ld):
    """Blocks (no polling) until the load's process ends and notes when. WNOWAIT leaves the
    reaping to Popen, so the scheduler's poll() and wait() see the exit as usual (and the
    zombie keeps its CPU time in /proc until then)."""
    try:
        os.waitid(os.P_PID, ld.popen.pid, os.WEXITED | os.WNOWAIT)
        ld.exited = time.monotonic()
    except ChildProcessError:  # already reaped by the scheduler: it noted the time itself
        pass


def _read(path):
    try:
        return Path(path).read_text(errors="replace")
    except OSError:
        return ""


def _signal_group(pgid, sig):
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _group_alive(pgid):
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def processes_tagged(tag=None):
    """PIDs of live processes started by a LoadSet (any set, or the one with this tag)."""
    return proctags.find("AIRLAB_LOAD_SET", tag)


def load_problem(rec):
    """Why a load that could run did not do its work (its program failed, it died on its
    own, it could not start), or None. A failed run is never a throughput: the trial warns
    and `airlab load` exits 1."""
    if str(rec.get("reason") or "").startswith("could not start"):
        return f"{rec['name']}: {rec['reason']}"
    if not rec.get("available", True):  # this machine lacks it: refused before (exit 3)
        return None
    fig = rec.get("figures") or {}
    last = (rec.get("stderr_tail") or "").strip().splitlines()[-1:] or [""]
    if fig.get("program_exit_code") not in (None, 0):
        return f"{rec['name']}: its program failed ({fig.get('error') or 'exit code ' + str(fig['program_exit_code'])})"
    if rec.get("ended_early") and rec.get("exit_code") not in (0, None):
        return (f"{rec['name']}: exited with code {rec['exit_code']} at {rec['stop_s']:.2f} s"
                + (f": {last[0]}" if last[0] else ""))
    if fig.get("error"):
        return f"{rec['name']}: {fig['error']}"
    return None


def load_problems(records):
    """load_problem() of every record that has one (for the trial's warnings)."""
    return [p for p in map(load_problem, records) if p]
