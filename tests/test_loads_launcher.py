"""The launcher starts loads at their offsets, stops them at their ends, records real
start/stop times and each load's own figures, applies the setup hooks to every process,
and never leaves a process behind: not at a normal end, not when a load fails, not when
its parent is interrupted (SIGINT, SIGTERM) or killed (SIGKILL) at a random moment."""
import os
import random
from pathlib import Path
import signal
import subprocess
import sys
import threading
import time

import pytest

from airbase import proctags
from loads import launcher
from loads.launcher import LoadSet, ProcessHooks, SchedulerStuck, processes_tagged
from loads.profiles import resolve_profile


def test_offsets_times_and_figures(tmp_path):
    profile = resolve_profile("cpu-timevarying")
    with LoadSet(profile, workdir=tmp_path) as loads:
        loads.start()
        time.sleep(2.0)
        records = loads.stop()
    early, late = records
    # Starts and stops happen within 0.3 s of the plan (generous: a busy machine).
    assert abs(early["start_s"] - 0.5) < 0.3 and abs(early["stop_s"] - 1.5) < 0.3
    assert abs(late["start_s"] - 1.0) < 0.3 and abs(late["stop_s"] - 2.0) < 0.3
    for r in records:
        assert r["figures"]["throughput"] > 0 and r["figures"]["unit"] == "work units/s"
        assert r["available"] and r["exit_code"] == 0  # airload exits 0 on SIGTERM
    assert processes_tagged(loads.tag) == []


def _comm(pid):
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return None


def test_hooks_apply_to_every_process(tmp_path):
    seen = []
    hooks = ProcessHooks(
        wrap_argv=lambda argv, load: ["nice", "-n", "5", *argv],
        preexec=lambda: os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0)),  # in the child
        on_started=lambda pid, load: seen.append((pid, load["name"])))
    with LoadSet(resolve_profile("onoff-ctp1000-x2"), hooks=hooks, workdir=tmp_path) as loads:
        loads.start()
        # Read each process once it runs the load (`nice` has set its niceness and exec'd it):
        # a SCHED_IDLE child beside two busy cores waited longer than a fixed 0.3 s (29 Nov).
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(_comm(pid) != "airload" for pid, _ in seen):
            time.sleep(0.05)
        assert [_comm(pid) for pid, _ in seen] == ["airload"] * 2, "the loads never ran within 30 s"
        stats = [open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split() for pid, _ in seen]
        records = loads.stop()
    assert [name for _, name in seen] == ["onoff.0", "onoff.1"]
    assert [int(st[16]) for st in stats] == [5, 5], "wrap_argv was not applied"  # field 19: nice
    assert [int(st[38]) for st in stats] == [os.SCHED_IDLE] * 2, "preexec was not applied"  # 41: policy
    assert all(r["argv"][:3] == ["nice", "-n", "5"] for r in records)


def test_a_failing_load_is_recorded_and_the_rest_go_on(tmp_path):
    profile = resolve_profile("cpu-1")
    profile["processes"].append({**profile["processes"][0], "name": "broken", "kind": "command",
                                 "argv": ["false"]})
    with LoadSet(profile, workdir=tmp_path) as loads:
        loads.start()
        time.sleep(0.5)
        records = loads.stop()
    assert records[0]["figures"]["throughput"] > 0
    assert records[1]["exit_code"] == 1
    assert processes_tagged(loads.tag) == []


def test_unavailable_process_is_not_started(tmp_path):
    profile = resolve_profile("cpu-1")
    profile["processes"][0].update(available=False, reason="pretend it is missing")
    with LoadSet(profile, workdir=tmp_path) as loads:
        loads.start()
        records = loads.stop()
    assert records[0]["start_s"] is None and not records[0]["available"]
    assert records[0]["reason"] == "pretend it is missing"


# A child python process runs a LoadSet like the trial runner does, and is interrupted at
# a random moment (before, during and after the loads' offsets).
RUNNER = """
import signal, sys, time
from loads.launcher import LoadSet
from loads.profiles import resolve_profile
signal.signal(signal.SIGTERM, lambda *a: sys.exit(143))
with LoadSet(resolve_profile(sys.argv[1]), workdir=sys.argv[2]) as loads:
    print(loads.tag, flush=True)
    loads.start()
    time.sleep(30)
"""


# A load whose own children do not die with their parent: only the watchdog gets them
# when the launcher is SIGKILLed.
SHELL_WITH_CHILDREN = """description: a shell whose children outlive it unless killed
processes:
  - kind: command
    argv: [sh, -c, "sleep 300 & sleep 301 & wait"]
    start_s: 0.3
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
@pytest.mark.parametrize("profile", ["cpu-timevarying", "onoff-ctp1000-x2", "parsec-dedup",
                                     "shell-with-children"])
def test_interrupted_parent_leaves_nothing_behind(tmp_path, profile, sig):
    rnd = random.Random(f"{profile}{sig}")
    if profile == "shell-with-children":
        profile = str(tmp_path / "shell-with-children.yaml")
        Path(profile).write_text(SHELL_WITH_CHILDREN)
    for trial in range(2):
        p = subprocess.Popen([sys.executable, "-c", RUNNER, profile, str(tmp_path / str(trial))],
                             stdout=subprocess.PIPE, text=True)
        tag = p.stdout.readline().strip()
        time.sleep(rnd.uniform(0.0, 1.2))
        p.send_signal(sig)
        p.wait(timeout=20)
        # SIGKILL gives the launcher no chance: PR_SET_PDEATHSIG and the watchdog must do
        # it. Allow them a moment.
        deadline = time.monotonic() + 5
        while processes_tagged(tag) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = processes_tagged(tag)
        for pid in left:  # a failure must not leak into the next test
            os.kill(pid, signal.SIGKILL)
        assert left == [], f"{profile}: left running after {sig.name}"


def test_stress_ng_workers_keep_the_loads_tag(tmp_path):
    """stress-ng renames its workers by writing over its argv and environment unless told
    --keep-name; a worker without the tag is invisible to the watchdog, the noise
    accounting and the leak checks. Two workers and their parent: three tagged processes."""
    prof = tmp_path / "stress.yaml"
    prof.write_text("description: two stress-ng cpu workers\nprocesses:\n"
                    "  - kind: stress-ng\n    stressor: cpu\n    threads: 2\n")
    with LoadSet(resolve_profile(str(prof)), workdir=tmp_path / "w") as loads:
        loads.start()
        deadline = time.monotonic() + 10
        while len(processes_tagged(loads.tag)) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        tagged = processes_tagged(loads.tag)
        in_group = proctags.with_groups(tagged)
        loads.stop()
    assert len(tagged) >= 3 and in_group == set(tagged), (tagged, in_group)
    assert processes_tagged(loads.tag) == []


def test_a_load_that_leaves_its_group_is_still_stopped(tmp_path):
    """`setsid` puts the program in a session of its own, out of reach of killpg; its
    environment tag still finds it."""
    prof = tmp_path / "escape.yaml"
    prof.write_text("description: escapes its process group\nprocesses:\n"
                    "  - kind: command\n    argv: [setsid, sleep, '300']\n")
    with LoadSet(resolve_profile(str(prof)), workdir=tmp_path / "w") as loads:
        loads.start()
        time.sleep(0.5)
        assert processes_tagged(loads.tag), "the escaped sleep should be running"
        (rec,) = loads.stop()
    left = processes_tagged(loads.tag)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert left == [] and rec["stopped_cleanly"]


def test_a_load_that_ends_early_records_when_it_ended(tmp_path, monkeypatch):
    """stop_s is when the load really ended: a program that fails after 0.3 s did not compete
    with the engine for the rest of the run, and the prediction must not think it did. A
    relative program path is found from where the lab runs, not from the load's folder."""
    script = tmp_path / "fail-soon.sh"
    script.write_text("#!/bin/sh\nsleep 0.3\nexit 3\n")
    script.chmod(0o755)
    prof = tmp_path / "early.yaml"
    prof.write_text("description: ends by itself\nprocesses:\n  - kind: command\n    argv: [./fail-soon.sh]\n")
    monkeypatch.chdir(tmp_path)
    with LoadSet(resolve_profile(str(prof)), workdir=tmp_path / "w") as loads:
        loads.start()
        time.sleep(1.5)
        (rec,) = loads.stop()
    assert rec["available"] and rec["exit_code"] == 3, rec
    assert 0.25 < rec["stop_s"] < 1.0, f"stop_s {rec['stop_s']:.2f}: the stop, not the exit"


def test_an_error_in_the_caller_stops_every_load(tmp_path):
    """The trial runner's own failure (an exception inside the `with`) stops the loads too."""
    with pytest.raises(RuntimeError, match="the engine broke"):
        with LoadSet(resolve_profile("onoff-ctp1000-x2"), workdir=tmp_path) as loads:
            loads.start()
            time.sleep(0.3)
            assert len(processes_tagged(loads.tag)) == 2
            raise RuntimeError("the engine broke")
    assert processes_tagged(loads.tag) == []
    assert all(r["stop_s"] is not None and r["stopped_cleanly"] for r in loads.records)



TWO_SLEEPS = ("description: two sleeps, the second later\nprocesses:\n"
              "  - {name: first, kind: command, argv: [sleep, '300']}\n"
              "  - {name: second, kind: command, argv: [sleep, '300'], start_s: 0.3}\n")


@pytest.fixture
def short_waits(monkeypatch):
    monkeypatch.setattr(launcher, "START_WAIT_S", 1.0)
    monkeypatch.setattr(launcher, "STOP_SLACK_S", 1.0)
    monkeypatch.setattr(launcher, "STOP_GRACE_S", 0.5)


def _blocking_hook(which, release):
    """on_started runs in the scheduler thread: blocking there for load `which` stands in
    for a scheduler thread that hangs (what once kept a runner alive 180 s after SIGINT)."""
    return ProcessHooks(on_started=lambda pid, load: release.wait(60) if load["name"] == which else None)


def test_a_stuck_scheduler_does_not_hang_stop(tmp_path, short_waits):
    """stop() waits a bounded time for the scheduler thread, then kills by tag what it had
    started and says so (SchedulerStuck), with records, instead of waiting forever."""
    prof = tmp_path / "two.yaml"
    prof.write_text(TWO_SLEEPS)
    release = threading.Event()
    loads = LoadSet(resolve_profile(str(prof)), hooks=_blocking_hook("second", release), workdir=tmp_path / "w")
    try:
        loads.start()
        time.sleep(0.8)  # the second starts at 0.3 s, and its hook never returns
        assert len(processes_tagged(loads.tag)) == 2
        t = time.monotonic()
        with pytest.raises(SchedulerStuck, match="did not stop the loads within 3 s"):
            loads.stop()
        assert time.monotonic() - t < 5
        time.sleep(0.2)
        assert processes_tagged(loads.tag) == []
        assert [r["stopped_cleanly"] for r in loads.records] == [False, False]
        # and reaped: this process lives on (as a test session does), so no zombie of them
        assert [r["exit_code"] for r in loads.records] == [-signal.SIGKILL, -signal.SIGKILL]
        assert loads.stop() is loads.records  # a second stop() (the `with`'s) returns them
    finally:
        release.set()
        for pid in processes_tagged(loads.tag):
            os.kill(pid, signal.SIGKILL)


def test_a_stuck_start_raises_and_leaves_nothing(tmp_path, short_waits):
    """The same at start(): a scheduler that never reports the first loads running makes
    start() fail after START_WAIT_S; leaving the `with` on that error does not replace it
    with the stop's, and kills what was started."""
    prof = tmp_path / "two.yaml"
    prof.write_text(TWO_SLEEPS)
    release = threading.Event()
    try:
        with pytest.raises(SchedulerStuck, match="did not start the loads within 1 s"):
            with LoadSet(resolve_profile(str(prof)), hooks=_blocking_hook("first", release),
                         workdir=tmp_path / "w") as loads:
                loads.start()
        assert processes_tagged(loads.tag) == []
        assert [r["exit_code"] for r in loads.records] == [-signal.SIGKILL, None]  # reaped; never started
    finally:
        release.set()
        for pid in processes_tagged(loads.tag):
            os.kill(pid, signal.SIGKILL)

# About 0.3 s of CPU time, then it ends: measured by the process itself, so the machine's
# other load only stretches the wall time.
BUSY = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass\n"


def test_cpu_time_of_a_load_that_ended_on_its_own(tmp_path):
    """cpu_s is what the load used even when it ended before its stop (its exited process
    is read before it is reaped), and includes the children it waited for: a child that
    ended before the load did (`then-exit`), or while the load still runs (`then-sleep`,
    like a finished x264 run under loads.repeat or a benchmark under parsecmgmt)."""
    import yaml
    py = sys.executable
    procs = [
        {"name": "alone", "kind": "command", "argv": [py, "-c", BUSY]},
        {"name": "then-exit", "kind": "command", "argv": ["sh", "-c", f"'{py}' -c '{BUSY}'; exit 0"]},
        {"name": "then-sleep", "kind": "command", "argv": ["sh", "-c", f"'{py}' -c '{BUSY}'; sleep 30"]},
    ]
    prof = tmp_path / "busy.yaml"
    prof.write_text(yaml.safe_dump({"description": "busy for 0.3 s CPU, then done", "processes": procs}))
    with LoadSet(resolve_profile(str(prof)), workdir=tmp_path / "w") as loads:
        loads.start()
        deadline = time.monotonic() + 20  # the two that end by themselves, on a busy machine too
        while any(ld.exited is None for ld in loads.loads[:2]) and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.3)
        records = {r["name"]: r for r in loads.stop()}
    assert records["alone"]["exit_code"] == 0 and records["then-exit"]["exit_code"] == 0, records
    assert records["alone"]["stop_s"] < records["then-sleep"]["stop_s"], "it ended by itself"
    for name, rec in records.items():
        # 0.3 s of busy loop plus Python's start-up; an upper bound catches double counting.
        assert 0.28 <= rec["cpu_s"] < 1.5, f"{name}: cpu_s {rec['cpu_s']}"
