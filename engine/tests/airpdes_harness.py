"""Shared by the engine's Python test drivers: run airpdes, read its JSON, compare runs with the
sequential reference, and start real competing processes (CPU-bound, on-off)."""
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

AIRPDES = sys.argv[1] if len(sys.argv) > 1 else "engine/build/airpdes"
RUN_TIMEOUT_S = 30
failures = []
unchecked = []  # cases whose premise the machine broke (a busy machine, no competitor found)


def run(*args, expect_rc=0, timeline=False):
    """Run airpdes with args (strings) plus --json; return (parsed JSON or None, stderr).
    With timeline=True the JSON also carries the parsed --timeline rows under "_timeline"."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "out.json")
        argv = [AIRPDES, *map(str, args), "--quiet", "--json", out]
        if timeline:
            argv += ["--timeline", os.path.join(d, "timeline.csv")]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            stdout, stderr = proc.communicate(timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            fail(f"{' '.join(argv[1:])}: did not finish in {RUN_TIMEOUT_S} s (hang?)\n"
                 + describe_stuck_process(proc.pid))
            proc.kill()
            proc.communicate()
            return None, ""
        except BaseException:  # interrupted: the run must not outlive the driver
            proc.kill()
            proc.wait()
            raise
        p = subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr)
        if p.returncode != expect_rc:
            fail(f"{' '.join(argv[1:])}: exit {p.returncode}, wanted {expect_rc}; stderr: {p.stderr.strip()}")
            return None, p.stderr
        if expect_rc != 0:
            if os.listdir(d):
                fail(f"{' '.join(argv[1:])}: failed run left files behind: {os.listdir(d)}")
            return None, p.stderr
        with open(out) as f:
            j = json.load(f)
        if timeline:
            j["_timeline"] = read_timeline(os.path.join(d, "timeline.csv"))
        return j, p.stderr


def describe_stuck_process(pid):
    """What each thread of a run that did not finish was doing, read before it is killed, so
    a hang seen once (on CI, say) can be told from a slow run: per thread its state, kernel
    wait channel and CPU ticks, twice 0.5 s apart (spinning threads gain ticks, blocked ones
    do not), then every thread's stack when gdb is installed."""
    def threads():
        rows = {}
        for tid in sorted(os.listdir(f"/proc/{pid}/task"), key=int):
            try:
                with open(f"/proc/{pid}/task/{tid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                with open(f"/proc/{pid}/task/{tid}/wchan") as f:
                    wchan = f.read().strip() or "-"
            except OSError:
                continue
            rows[tid] = (fields[0], wchan, int(fields[11]) + int(fields[12]))
        return rows
    try:
        before = threads()
        time.sleep(0.5)
        after = threads()
    except OSError as e:
        return f"  (could not read /proc/{pid}: {e})"
    lines = [f"  thread {tid}: state {st}, wchan {wchan}, +{ticks - before.get(tid, (0, 0, ticks))[2]} "
             f"CPU ticks in 0.5 s" for tid, (st, wchan, ticks) in after.items()]
    if shutil.which("gdb"):
        try:
            g = subprocess.run(["gdb", "-p", str(pid), "-batch", "-nx", "-ex", "thread apply all bt"],
                               capture_output=True, text=True, timeout=30)
            stacks = ["  " + ln for ln in g.stdout.splitlines() if ln.startswith(("#", "Thread"))]
            # A machine may refuse the attach (ptrace restricted: a container, Yama): say why.
            why = (g.stderr.strip().splitlines() or [f"exit {g.returncode}"])[-1]
            lines += stacks or [f"  (gdb could not attach: {why})"]
        except subprocess.TimeoutExpired:
            lines.append("  (gdb did not attach within 30 s)")
    else:
        lines.append("  (no gdb here: no stacks)")
    return "\n".join(lines)


def registry(kind):
    """The entries airpdes --describe lists under `kind` (e.g. "modes"): name, help and the
    kind's own fields (a mode's adapts_threads, ...)."""
    p = subprocess.run([AIRPDES, "--describe"], capture_output=True, text=True, check=True, timeout=RUN_TIMEOUT_S)
    return json.loads(p.stdout)[kind]


def registry_names(kind):
    """The names airpdes --describe lists under `kind` (e.g. "barrier_waits"), so a policy
    added to the engine's registry is tested without editing the test."""
    return [x["name"] for x in registry(kind)]


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg, flush=True)


def not_checked(msg):
    """A case that could not be judged here: printed, and counted, so that a driver whose
    every check passed but some were not made ends as skipped (77), not as passed."""
    unchecked.append(msg)
    print("NOT CHECKED", msg, flush=True)


def check(cond, msg):
    if not cond:
        fail(msg)
    return cond


def outcome(j):
    """What the determinism contract fixes: committed events, checksum, model figures."""
    return (j["committed_events"], j["checksum"], json.dumps(j["model"], sort_keys=True))


def assert_same(ref, j, label):
    if ref is None or j is None:
        return
    if check(outcome(ref) == outcome(j), f"{label}: result differs from seq: "
             f"{outcome(j)[:2]} vs {outcome(ref)[:2]}"):
        print(f"ok   {label}: {j['committed_events']} committed, {j['rollbacks']} rollbacks, checksum {j['checksum']}", flush=True)


def assert_no_rollback(j, label):
    if j is None:
        return
    check(j["rollbacks"] == 0 and j["rolled_back_events"] == 0,
          f"{label}: conservative run rolled back ({j['rollbacks']} rollbacks)")
    check(j["processed_events"] == j["committed_events"],
          f"{label}: processed {j['processed_events']} != committed {j['committed_events']}")


# A competitor is a real process: engine/build/airload when the loads are built, otherwise a
# Python busy loop, so the engine tests do not depend on the loads being there.
AIRLOAD = os.path.join(os.path.dirname(os.path.abspath(AIRPDES)), "airload")
BUSY_LOOP = "while True: pass"
# Busy for on_s, idle for off_s, forever: the paper's on-off (CTP) competitor.
ON_OFF_LOOP = """
import sys, time
on_s, off_s = float(sys.argv[1]), float(sys.argv[2])
while True:
    end = time.monotonic() + on_s
    while time.monotonic() < end: pass
    time.sleep(off_s)
"""


@contextlib.contextmanager
def competitor(argv, cpus=None):
    """Run argv as a competing process during the block, and check it competed to the end:
    a competitor that died early would leave the block's runs without the interference
    they claim to have been checked under. Killed and reaped afterwards (one process).
    With cpus the process is confined to them before it execs, so every thread it starts
    inherits the mask: airload's busy loop runs in a worker thread, and setting the mask
    on its pid after the start confined only the main thread whenever the worker was
    already there (the loop then ran on the other CPU: CI, 6 Dec)."""
    confine = (lambda: os.sched_setaffinity(0, cpus)) if cpus is not None else None
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, preexec_fn=confine)
    try:
        yield p
    finally:
        # A block may stop its competitor itself (p.kill(): "the load leaves"); any other end
        # means it died on its own.
        check(p.poll() is None or p.returncode == -signal.SIGKILL,
              f"competitor {' '.join(map(str, argv))} exited early (status {p.returncode}): "
              f"the runs beside it had no competition")
        p.kill()
        p.wait()


def cpu_competitor(cpus=None):
    """One real CPU-bound process competing for the cores during the block (on cpus only,
    when given)."""
    if os.access(AIRLOAD, os.X_OK):
        return competitor([AIRLOAD, "cpu"], cpus)
    return competitor([sys.executable, "-c", BUSY_LOOP], cpus)


def on_off_competitor(on_s=0.05, off_s=0.05):
    """A competitor that is busy for on_s and idle for off_s, repeatedly: it comes and goes
    many times during a run."""
    return competitor([sys.executable, "-c", ON_OFF_LOOP, str(on_s), str(off_s)])


def read_timeline(path):
    """The --timeline CSV as a list of (t_s, gvt, committed_events, active_threads)."""
    with open(path) as f:
        header = f.readline().strip()
        check(header == "t_s,gvt,committed_events,active_threads", f"timeline header {header!r}")
        rows = []
        for line in f:
            t, g, c, a = line.strip().split(",")
            rows.append((float(t), float(g), int(c), int(a)))
        return rows


def finish():
    if failures:
        print(f"{len(failures)} failure(s)")
        sys.exit(1)
    if unchecked:  # CTest's SKIP_RETURN_CODE: the summary lists the driver as skipped
        print(f"every check made passed, but {len(unchecked)} case(s) were NOT CHECKED (above): "
              "reported as skipped")
        sys.exit(77)
    print("all passed")
