"""One trial: one engine run with one interference profile under one scheduling setup,
measured and written to one JSON file (docs/interfaces.md, "Trial JSON").

The order of events: check everything that can be checked before anything starts (engine
options via `airpdes --check`, profile, setup, output path); apply the setup; start the
engine under perf and, at the same instant t0, the profile's loads (their offsets count
from t0); wait for the engine (bounded by the timeout); stop the loads; undo the setup;
write the result atomically. On an error, a timeout or SIGINT/SIGTERM/SIGHUP every process,
cgroup and SLURM job is removed and no result file is written."""
import errno
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import jsonschema

from airbase import bounded_run, child_wait, early_signals, proctags, threads
from airbase.atomic import write_json
from airbase.stop_signals import STOP_SIGNALS
from airbase.paths import AIRPDES, SCHEMAS
from loads.launcher import LoadSet, SchedulerStuck, load_problems
from loads.profiles import ProfileError, resolve_profile
from workflows import calibration as calib, machine, machine_speed, noise, perf, placement, workflow_pause
from workflows.setups import SetupError, leftovers, open_setup

SCHEMA_ID = "airlab.trial/1"
RUNNER_OWNED = ("--json", "--timeline", "--help", "--check", "--describe")


class TrialError(Exception):
    """The trial ran but failed (engine error, timeout): exit 1, no result file."""


class TrialTimeout(TrialError):
    """The engine outlived --timeout: everything stopped, exit 124 (as timeout(1))."""


class TrialInterrupted(Exception):
    """SIGINT/SIGTERM/SIGHUP: everything stopped, nothing written, exit 130."""


class TrialUnavailable(Exception):
    """This machine cannot run the trial (a setup or load kind it lacks): exit 3."""


class UsageProblem(Exception):
    """Bad input: exit 2."""


class Interrupted(BaseException):
    """Raised by the handler of the stop signals (airbase/stop_signals.py). A BaseException,
    as KeyboardInterrupt is: an `except Exception` anywhere on the way (ours or a library's)
    must not swallow it, or the runner, its signals now ignored, runs the whole engine before
    it notices (a CI run saw one SIGINT at 0.45 s leave a trial running past 120 s)."""


def _say(msg):
    print(f"airlab trial: {msg}", file=sys.stderr, flush=True)


def check_inputs(profile, setup, out, engine_opts, load_count=None):
    """Everything that can be refused before anything starts. Returns (profile, setup)."""
    for opt in engine_opts:
        if opt.split("=")[0] in RUNNER_OWNED:
            raise UsageProblem(f"engine option {opt} is set by the trial runner; leave it out")
    if not os.access(AIRPDES, os.X_OK):
        raise UsageProblem(f"{AIRPDES} is missing: build the engine (make build)")
    chk = bounded_run.run([str(AIRPDES), *engine_opts, "--check"], timeout=60, text=True)
    if chk.returncode != 0:
        raise UsageProblem(f"engine options: {chk.stderr.strip() or 'rejected'}")
    out = Path(out)
    if out.is_dir():
        raise UsageProblem(f"--out {out} is a directory")
    why = _unwritable(out.parent)
    if why:
        raise UsageProblem(f"--out {out}: cannot write in {out.parent}: {why}")
    try:
        prof = resolve_profile(profile, load_count=load_count)
    except ProfileError as e:
        raise UsageProblem(e.errors[0])
    try:
        st = open_setup(setup)
    except SetupError as e:
        raise UsageProblem(str(e))
    return prof, st


def _unwritable(d):
    """None if a file can be created in folder d (made when the result is written), else why.
    Probed with a real file: as root os.access() says yes even where nothing can be created
    (/proc), and bad input must leave no folder behind, so a missing one is not made here."""
    d = Path(d).absolute()
    while not d.exists():
        d = d.parent
    if not d.is_dir():
        return f"{d} is not a folder"
    try:  # an unnamed file: an interrupt at any moment leaves no probe behind
        os.close(os.open(d, os.O_TMPFILE | os.O_WRONLY, 0o600))
        return None
    except OSError as e:
        if e.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):  # else: fs without O_TMPFILE
            return e.strerror
    try:
        fd, probe = tempfile.mkstemp(dir=d, prefix=".airlab-probe-")
        try:
            os.close(fd)
        finally:
            os.unlink(probe)
    except OSError as e:
        return e.strerror
    return None


def _status_field(pid, field):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        return None


def _observe(pid):
    """What the kernel says about a process right now: the evidence a setup took effect."""
    if pid is None:
        return None
    try:
        cg = Path(f"/proc/{pid}/cgroup").read_text().split()
        stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return {"gone": True}
    return {"cpus_allowed": _status_field(pid, "Cpus_allowed_list"),
            "nice": int(stat[16]), "policy": int(stat[38]),
            "cgroups": [c for c in cg if "airlab-" in c]}


def _engine_pid(tag):
    """The airpdes process of this trial (found by its tag: under perf, srun or slurmstepd)."""
    for pid in proctags.find("AIRLAB_TRIAL", tag):
        try:
            if Path(f"/proc/{pid}/comm").read_text().strip() == "airpdes":
                return pid
        except OSError:
            pass
    return None


def _kill_group(p, wait=True):
    """Stop a process group: SIGTERM, then SIGKILL after 3 s (or at once when not waiting)."""
    if p is None:
        return
    if p.returncode is None and wait:
        try:
            os.killpg(p.pid, signal.SIGTERM)
            p.wait(3)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    if wait:
        p.wait()


def _read_timeline(path):
    rows = []
    try:
        with open(path) as f:
            next(f)
            for line in f:
                t, g, c, a = line.strip().split(",")
                rows.append({"t_s": float(t), "gvt": float(g), "committed_events": int(c),
                             "active_threads": int(a)})
    except (OSError, StopIteration):
        pass
    return rows


def run_trial(profile, setup, out, engine_opts, rep=0, timeout=600.0, labels=None,
              allow_unavailable=False, load_count=None, target_s=None, calibration_dir=None,
              reruns=0, noise_threshold=noise.DEFAULT_THRESHOLD, wait_near=None, rerun_far_loaded=False):
    """Run one trial and write its JSON to `out`. Returns the trial dict. With load_count,
    the profile's one process runs that many times (recorded as profile NAME-xN). With
    target_s the engine's end time is the one calibrated for its configuration (cached in
    calibration_dir; workflows/calibration.py). A run that other work on the machine
    disturbed (workflows/noise.py) is run again up to `reruns` times; when they run out, the
    nearest undisturbed run is kept (kept_attempt).
    With wait_near (at most that many seconds) the run starts when the host runs the CPUs
    near each other, and a no-load run that ran far is run again within the same
    `reruns` (workflows/placement.py); with rerun_far_loaded a loaded one too.

    SIGINT/SIGTERM/SIGHUP are caught from the first moment (even while the inputs are checked) and
    turned into TrialInterrupted once every `finally` below has removed what was started.
    The handlers are installed inside the `try`, so an interrupt cannot fall between them and
    it; one noted before (airbase/early_signals.py) interrupts at once; one that cuts the
    last clean-up short is still TrialInterrupted (a CI run saw Interrupted escape, exit 1)."""
    def interrupted(signum, frame):
        for s in STOP_SIGNALS:  # one is enough; let clean-up finish
            signal.signal(s, signal.SIG_IGN)
        raise Interrupted(signal.Signals(signum).name)
    old = {s: signal.getsignal(s) for s in STOP_SIGNALS}
    old_env = os.environ.get(leftovers.KEY)
    done = False
    try:
        for s in old:
            signal.signal(s, interrupted)
        if early := early_signals.first():
            raise Interrupted(early)
        # Inherited by everything the trial starts, so a later trial can sweep it if this
        # runner is killed outright (workflows/setups/leftovers.py).
        os.environ[leftovers.KEY] = str(os.getpid())
        record = _run_trial(profile, setup, out, engine_opts, rep, timeout, labels, allow_unavailable,
                            load_count, target_s, calibration_dir, reruns, noise_threshold, wait_near,
                            rerun_far_loaded)
        done = True
        return record
    except Interrupted as e:
        raise TrialInterrupted(f"interrupted by {e}; nothing was written") from None
    finally:
        late = _end_of_trial(done, old, old_env)
        if late and not done:  # it came during the clean-up after another error: it wins
            raise TrialInterrupted(f"interrupted by {late}; nothing was written") from None


def _end_of_trial(done, old, old_env):
    """run_trial's last clean-up: unless the trial finished, sweep whatever of this runner
    still exists (it carries our PID); then give back the signal handlers and the
    environment. Returns the name of an interrupt that came during it (at most one: the
    handler then ignores the stop signals until the old handlers are back), after doing it all."""
    late = None
    while True:
        try:
            if not done:
                # The interrupt's exception may have cut a clean-up short; no second one
                # may cut this sweep.
                for s in old:
                    signal.signal(s, signal.SIG_IGN)
                for item in leftovers.sweep_runner(os.getpid()):
                    _say(f"removed what the clean-up missed: {item}")
            for s, h in old.items():
                signal.signal(s, h)
            if old_env is None:
                os.environ.pop(leftovers.KEY, None)
            else:
                os.environ[leftovers.KEY] = old_env
            return late
        except Interrupted as e:
            late, done = str(e), False


def _run_trial(profile, setup, out, engine_opts, rep, timeout, labels, allow_unavailable, load_count=None,
               target_s=None, calibration_dir=None, reruns=0, noise_threshold=noise.DEFAULT_THRESHOLD,
               wait_near=None, rerun_far_loaded=False):
    engine_opts = list(engine_opts)
    if wait_near is not None and not calibration_dir:
        raise UsageProblem("--wait-near needs --calibration-dir (where the near ping-pong level is kept)")
    if target_s is not None:
        if any(o.split("=")[0] == "--end-time" for o in engine_opts):
            raise UsageProblem("give either --target-s or the engine's --end-time, not both")
        if not calibration_dir:
            raise UsageProblem("--target-s needs --calibration-dir (where calibrations are cached)")
    prof, st = check_inputs(profile, setup, out, engine_opts, load_count)
    for item in leftovers.sweep():
        _say(f"removed what a killed runner left: {item}")
    started_unix = time.time()
    started_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    trial_id = Path(out).stem
    reasons = list(prof["reasons"])
    ok, why = st.availability()
    if not ok:
        reasons.append(f"setup {st.name}: {why}")
    if reasons:
        if not allow_unavailable:
            raise TrialUnavailable("; ".join(reasons))
        record = {"schema": SCHEMA_ID, "status": "unavailable", "reasons": reasons,
                  "trial": {"id": trial_id, "rep": rep, "profile": prof["name"], "setup": st.name,
                            "timeout_s": timeout, "started_at": started_at,
                            "finished_at": started_at, "labels": labels or {}},
                  "engine_argv": [str(AIRPDES), *engine_opts], "profile": prof,
                  "machine": machine.facts(), "runner": _runner()}
        validate(record)
        _write_atomic(out, record)
        _say(f"{trial_id}: unavailable here: {'; '.join(reasons)}")
        return record

    level = (placement.NearLevel(Path(calibration_dir) / placement.LEVEL_FILE, shared=placement.shared_level_file())
             if wait_near is not None else None)
    calibration = None
    if target_s is not None:
        try:
            calibration = calib.calibrate(engine_opts, target_s, calibration_dir, timeout=timeout,
                                          near=None if level is None else (level, wait_near))
        except (calib.CalibrationError, subprocess.TimeoutExpired, OSError) as e:
            raise TrialError(f"calibration of the end time failed: {e}") from None
        _say(f"{trial_id}: end time {calibration['end_time']:g} for a {target_s:g} s no-load run "
             f"({'cached' if calibration['cached'] else 'calibrated now'}: {calibration['key']})")
        engine_opts = [*engine_opts, "--end-time", f"{calibration['end_time']:g}"]
        if calibration["pilot"].get("disturbed"):
            _say(f"warning: the end time was calibrated while other work used the CPUs or they ran far "
                 f"apart (every pilot disturbed): delete {calibration_dir} to recalibrate on a quiet machine")

    attempts, runs = [], []
    while True:
        m = _measure(prof, st, engine_opts, timeout, trial_id, rep, noise_threshold, level, wait_near)
        runs.append(m)
        attempt = {k: m["noise"][k] for k in ("foreign_cpu_s", "window_s", "disturbed")}
        ms = m["machine_speed"]
        # What this run waited for before it started (analysis/time_spent.py: where the time went)
        attempt["waited_s"] = (ms.get("wait") or {}).get("waited_s", 0.0)
        attempt["settle_s"] = m["noise"]["workflow_settle_s"]
        # measured during the run, whatever the probes before and after said
        handoff = m["engine"].get("barrier_handoff")
        if level is None:
            ms["far_share"] = attempt["far_share"] = placement.far_share(handoff)
        else:
            judged = level.judge(handoff, ms["after"], _placement_config(m["engine"], prof, st),
                                 started_far=bool((ms.get("wait") or {}).get("far")))
            ms["far_share"] = attempt["far_share"] = judged["far_share"]
            ms["near_handoff_ns"] = judged["near_handoff_ns"]
            ms["usual_far_share"] = judged["usual_far_share"]
            ms["far_after"] = attempt["far_after"] = judged["far_after"]
            ms["ran_far"] = attempt["ran_far"] = judged["ran_far"]
            if ms["wait"]["far"]:
                _say(f"{trial_id}: the host still ran the CPUs far apart after {ms['wait']['waited_s']:.0f} s "
                     f"of waiting (ping-pong {placement.pingpong_ns(ms['before'])} ns, near "
                     f"{ms['wait']['near_ns']} ns): running anyway")
        attempts.append(attempt)
        # The baselines are re-run for far placement: they are short (~2.5 s) and every
        # slowdown is divided by one. A loaded run (5-47 s) only where its experiment asks
        # (rerun_far_loaded): re-running every far one would cost 8-12 min of a quick run,
        # and the trial after a far loaded one started far in 36% of cases (workflows/
        # placement.py). Far: measured during the run by the engine's barrier waits, the
        # probe after it only where those are too few (ran_far above).
        far_again = attempt.get("ran_far") and (rerun_far_loaded or not prof["processes"])
        if not (m["noise"]["disturbed"] or far_again) or len(attempts) > reruns:
            break
        where = (f"{ms['far_share']:.0%} of its barrier waits far" if ms["far_share"] is not None
                 else f"ping-pong {placement.pingpong_ns(ms['after'])} ns at its end")
        who = noise.named(m["noise"]["foreign_processes"])
        why = (f"disturbed ({m['noise']['foreign_cpu_s']:.2f} s of CPU by other work{': ' + who if who else ''})"
               if m["noise"]["disturbed"]
               else f"the host ran the CPUs far apart ({where})")
        _say(f"{trial_id}: {why}: running it again ({len(attempts)} of {reruns})")
        if m["noise"]["disturbed"]:
            time.sleep(1.0)  # let a passing disturbance pass
    kept = kept_attempt(attempts)
    if kept != len(attempts) - 1:
        share, disturbed = attempts[kept].get("far_share"), attempts[kept]["disturbed"]
        _say(f"{trial_id}: keeping run {kept + 1} of {len(attempts)}, the nearest{' (disturbed)' if disturbed else ''} "
             f"({'?' if share is None else f'{share:.0%}'} of its barrier waits far)")
    m = runs[kept]
    engine_result, records, nz = m["engine"], m["records"], m["noise"]
    nz["reruns"] = len(attempts) - 1
    nz["attempts"] = attempts
    nz["kept_attempt"] = kept

    warnings = []
    if st.kind == "gang":
        slice_s = st.spec.get("time_slice_s", 5)
        if engine_result["wall_s"] < 2 * slice_s:
            warnings.append(f"gang: the engine ran {engine_result['wall_s']:.1f} s, less than two "
                            f"{slice_s} s time slices, so SLURM may never have switched jobs; use a longer run")
    if nz["disturbed"]:
        warnings.append(f"disturbed: other work on the machine used {nz['foreign_cpu_s']:.2f} s of CPU during "
                        f"the {nz['window_s']:.2f} s run (more than {nz['threshold']:.0%} of one core)"
                        + (f", after {nz['reruns']} re-run(s)" if nz["reruns"] else "")
                        + (f"; most by {noise.named(nz['foreign_processes'])}" if nz["foreign_processes"] else ""))
    for r in records:
        if r["available"] and r["figures"].get("throughput") is None and not r["cpu_s"]:
            r["figures"]["error"] = "the load never ran during the trial (pending or suspended throughout)"
    warnings += [f"load {p}" for p in load_problems(records)]  # a failed load is no throughput
    for w in warnings:
        _say(f"warning: {w}")
    pes = engine_result.get("pes", [])
    iters = sum(p.get("iterations", 0) for p in pes)
    record = {
        "schema": SCHEMA_ID, "status": "ok",
        "trial": {"id": trial_id, "rep": rep, "profile": prof["name"], "setup": st.name,
                  "timeout_s": timeout, "started_at": started_at,
                  "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                  "started_unix": started_unix, "finished_unix": time.time(), "labels": labels or {}},
        "engine": engine_result, "engine_argv": m["bare"], "timeline": m["timeline"], "loads": records,
        "profile": prof, "perf": m["perf"],
        "locality": {"non_primary_iteration_share":
                     (sum(p.get("non_primary_iterations", 0) for p in pes) / iters) if iters else None,
                     "source": "engine",
                     "note": "iterations run on a PE by a thread other than its primary; stands in "
                             "for cache-miss counters where the machine has none"},
        "setup": m["setup"], "machine": machine.facts(),
        "commands": [m["argv"]] + [r["argv"] for r in records if r["argv"]],
        "runner": _runner(), "wall_s": engine_result["wall_s"], "warnings": warnings,
        "clock": m["clock"], "noise": nz, "machine_speed": m["machine_speed"],
    }
    if calibration is not None:
        record["calibration"] = calibration
    validate(record)
    _write_atomic(out, record)
    _say(f"{trial_id}: done in {record['wall_s']:.2f} s, {engine_result['committed_events']} events "
         f"committed, efficiency {engine_result['efficiency']:.3f} -> {out}")
    return record


def _placement_config(engine, prof, st):
    """What a run's usual share of far hand-offs belongs to (placement.NearLevel.usual_share):
    the engine's options but its output paths, the profile and the setup, hashed."""
    cfg = {k: v for k, v in (engine.get("config") or {}).items() if k not in ("json", "timeline")}
    text = json.dumps([cfg, prof["name"], st.name], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def kept_attempt(attempts):
    """Which of a trial's runs it keeps (an index into its noise.attempts): the last, unless
    the re-runs ran out while every run was disturbed or far, then the undisturbed run with the
    smallest share of far barrier waits. Every run simulates the same events; the choice is by
    where the host placed the CPUs (measured during the run), not by speed. Until 31fbfef the
    last run was kept: in the bad5e86 pair 17 and 27 no-load trials ran out of re-runs with
    every run far, and those kept third runs made Fig. 7's widest points (LADM/FM per
    repetition 0.59-1.23 in run B)."""
    def rank(i):
        a = attempts[i]
        far = bool(a.get("ran_far"))
        share = a.get("far_share")
        # among far runs the least far (unmeasured: as far as can be); otherwise the latest
        return (bool(a["disturbed"]), far, (1.0 if share is None else share) if far else 0.0, -i)
    return min(range(len(attempts)), key=rank)


def _measure(prof, st, engine_opts, timeout, trial_id, rep, noise_threshold, level=None, wait_max_s=None):
    """One run of the engine beside the profile's loads under the setup: its figures, the
    loads' records on the engine's clock and the noise of the run. With a near level
    (workflows/placement.py) the run waits for the host to run the CPUs near each other."""
    engine = None
    pause = workflow_pause.Pause()
    try:
        with tempfile.TemporaryDirectory(prefix=f"{leftovers.WORKDIR_PREFIX}{os.getpid()}-") as wd:
            wd = Path(wd)
            with st.applied(wd, prof) as applied:
                eng_json, eng_tl, perf_out = wd / "engine.json", wd / "timeline.csv", wd / "perf.csv"
                bare = [str(AIRPDES), *engine_opts, "--quiet", "--json", str(eng_json), "--timeline", str(eng_tl)]
                argv, perf_missing = perf.wrap(bare, perf_out)
                if applied.engine_hooks.wrap_argv:
                    argv = list(applied.engine_hooks.wrap_argv(argv))
                with LoadSet(prof, hooks=applied.load_hooks, workdir=wd / "loads") as loads:
                    _say(f"{trial_id}: profile {prof['name']}, setup {st.name}, rep {rep}: "
                         f"running {' '.join(engine_opts)}")
                    tag = f"{trial_id}.{os.getpid()}.{time.monotonic_ns()}"
                    with open(wd / "engine.stderr", "wb") as err:
                        # Snakemake stopped until the machine is probed after the run; a
                        # stopped workflow cannot compete, so only one that could not be
                        # stopped (no --pause-workflow) is waited for until it is quiet.
                        settle_s = pause.start_or_settle()
                        # Before the loads: the bare machine, just before the run.
                        if level is not None:
                            speed_before, wait = placement.wait_until_near(level, max_wait_s=wait_max_s)
                        else:
                            speed_before, wait = machine_speed.probe(), None
                        window = noise.Window()
                        t0 = time.monotonic()
                        # Loads first: a whole-run load is then running when the engine's
                        # clock starts (start_s <= 0), so Eq. 1/2 see the whole run loaded.
                        loads.start(t0)
                        # Its own process group (killpg), but the runner's session: with
                        # sched_autogroup each session is a scheduling group of its own, and
                        # a competitor in another group is invisible to sched_yield(), which
                        # is how the PI detector and RAP see it (loads/launcher.py likewise).
                        engine = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err,
                                                  env={**os.environ, "AIRLAB_TRIAL": tag},
                                                  stdin=subprocess.DEVNULL, process_group=0,
                                                  preexec_fn=applied.engine_hooks.preexec)
                    # The evidence that the setup took effect, read once from the processes
                    # we started (the engine inherits perf's cgroup, affinity and priority).
                    # Cheap on purpose: any CPU the runner burns now is interference with
                    # the run it measures. Under gang the job states are the evidence.
                    observed = {"engine": None if st.kind == "gang" else _observe(engine.pid),
                                "loads": [_observe(ld.popen.pid if ld.popen else None) for ld in loads.loads]}
                    # Block until the engine ends (no periodic wake-ups; a signal at any
                    # instant ends the wait: airbase/child_wait.py), then wait4() returns the
                    # CPU of the tree it reaps: perf and the engine. A timer enforces the timeout.
                    timed_out = threading.Event()
                    timer = threading.Timer(timeout, lambda: (timed_out.set(), _kill_group(engine, wait=False)))
                    timer.daemon = True
                    try:  # the timer inside: an interrupt as it starts must still cancel it
                        threads.start(timer)  # the stop signals go to the main thread
                        _, status, usage = child_wait.wait4(engine.pid)
                        engine.returncode = rc = os.waitstatus_to_exitcode(status)
                        window.close()
                    finally:
                        timer.cancel()
                    if timed_out.is_set():
                        raise TrialTimeout(f"the engine did not finish within --timeout {timeout:g} s")
                    tree_s = usage.ru_utime + usage.ru_stime
                    counters = perf.read(perf_out, perf_missing)
                    tc = counters.get("task-clock", {})
                    task_clock_s = tc["value"] / 1000 if tc.get("status") == "ok" and tc.get("unit") == "msec" else None
                    gang = st.kind == "gang"  # the engine ran as a SLURM job: what we waited for is its wrapper
                    # A load stopped during the run (a profile's stop_s) is reaped: its CPU is
                    # what the launcher read just before stopping it.
                    stopped = [ld for ld in loads.loads if ld.stopped is not None]
                    nz = window.account(None if gang else tree_s, task_clock_s,
                                        [ld.popen.pid for ld in loads.loads if ld.popen and ld.stopped is None],
                                        loads.tag, loads._watchdog.pid if loads._watchdog else None, tag,
                                        threshold=noise_threshold, wrapper_s=tree_s if gang else 0.0,
                                        stopped_loads_s=sum(ld.cpu_s or 0.0 for ld in stopped))
                    nz["workflow_settle_s"] = settle_s
                    nz["workflow_paused"] = pause.paused
                    records = loads.stop()
                    # The probe after still with Snakemake stopped: the work it had left when
                    # it was stopped would make the ping-pong look far.
                    speed = {"before": speed_before, "after": machine_speed.probe()}
                    pause.end()
                    if wait:
                        speed["wait"] = wait
                applied.applied["observed"] = observed
            setup_record = applied.record()  # after the setup is undone: includes what it saw
            if rc != 0 or not eng_json.exists():
                for line in applied.engine_job_log:  # gang: what SLURM said of the engine's job
                    _say(f"the engine's job, {line}")
                tail = (wd / "engine.stderr").read_text(errors="replace").strip().splitlines()[-3:]
                raise TrialError(f"the engine failed (exit {rc}): {' | '.join(tail) or 'no message'}"
                                 f"{_engine_job_evidence(setup_record)}")
            engine_result = json.loads(eng_json.read_text())
            timeline = _read_timeline(eng_tl)
    except SetupError as e:  # could not be applied here (exit 3), or not undone (a failure)
        if engine is None:
            raise TrialUnavailable(str(e)) from None
        raise TrialError(str(e)) from None
    except SchedulerStuck as e:  # nothing of the loads is left, but their records are not to be trusted
        raise TrialError(str(e)) from None
    finally:
        pause.end()
        _kill_group(engine)
    return {"engine": engine_result, "records": records, "timeline": timeline, "perf": counters,
            "setup": setup_record, "argv": argv, "bare": bare, "noise": nz, "machine_speed": speed,
            "clock": _engine_clock(engine_result, t0, records)}


def _engine_job_evidence(setup_record):
    """Under gang the engine was a SLURM job: the job's last sampled states, for a failure
    whose own message says nothing (the gang test once saw 'exit 0: no message', cause
    unknown; the trial's record, and with it the states, is not written on failure)."""
    states = (setup_record or {}).get("applied", {}).get("job_states") or []
    if not states:  # not a gang trial, or the cluster never sampled
        return ""
    seen = [f"{t:g} s {snap['airlab-engine']}" for t, snap in states if "airlab-engine" in snap]
    return f"; the engine's job, as sampled: {', '.join(seen[-4:]) or 'never in the queue'}"


def _engine_clock(engine_result, t0, records):
    """Put the loads on the engine's clock: the launcher counts from t0 (taken just before
    the engine was started), the engine's wall_s and timeline from its own start, which it
    reports on CLOCK_MONOTONIC (the clock of time.monotonic()). A load started before the
    engine's clock then has start_s <= 0, and Eq. 1/2 see exactly the overlap there was."""
    start = engine_result.get("start_monotonic_s")
    shift = (t0 - start) if isinstance(start, (int, float)) else 0.0
    for r in records:
        for k in ("start_s", "stop_s", "launched_s"):
            if r.get(k) is not None:
                r[k] = r[k] + shift
    return {"zero": "engine" if start is not None else "runner (the engine did not report start_monotonic_s)",
            "engine_start_monotonic_s": start, "runner_t0_monotonic_s": t0, "loads_shift_s": shift}


def write_failure(out, profile, setup, engine_opts, rep, reason, labels=None):
    """A clearly marked failed record (status "failed", no measurements), so a workflow can
    report the failure and go on; never mistaken for a result."""
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    record = {"schema": SCHEMA_ID, "status": "failed", "reasons": [reason],
              "trial": {"id": Path(out).stem, "rep": rep, "profile": profile, "setup": setup,
                        "started_at": now, "finished_at": now, "labels": labels or {}},
              "engine_argv": [str(AIRPDES), *engine_opts],
              "profile": {"name": profile, "processes": [], "available": False},  # schema: all three
              "machine": machine.facts(), "runner": _runner()}
    validate(record)
    _write_atomic(out, record)


def _runner():
    return {"version": machine.lab_version(), "python": sys.version.split()[0]}


_validator = None


def validate(record):
    # The schema itself is checked by the tests; jsonschema.validate would check it again
    # on every trial (~50 ms of the workflow's time per trial).
    global _validator
    if _validator is None:
        schema = json.loads((SCHEMAS / "trial.schema.json").read_text())
        _validator = jsonschema.validators.validator_for(schema)(schema)
    _validator.validate(record)


def _write_atomic(path, data):
    try:
        write_json(path, data, fsync=True)
    except OSError as e:  # checked before the run, but a disk can fill or a folder go
        raise TrialError(f"cannot write {path}: {e.strerror}") from None


