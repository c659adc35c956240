"""`airlab trial` as a user runs it: the no-load baseline, a machine that lacks a load
kind, bad input refused before anything starts (exit 2, no file), a timeout (exit 124) and
interrupts at random moments (exit 130): nothing written, nothing of the run left behind."""
import json
import os
import random
import signal
import time

import jsonschema
import pytest

from airbase import proctags
from airbase.stop_signals import STOP_SIGNALS
from trial_helpers import AIRLAB, SCHEMA, Runner, run, wait_until_gone
from workflows.setups import open_setup

SLOW_ENGINE = ["--mode", "fm", "--threads", "2", "--lps-per-pe", "500", "--end-time", "10000000"]


def test_no_load_baseline(tmp_path):
    out = tmp_path / "none.json"
    r = run(out, profile="none")
    assert r.returncode == 0, r.stderr
    d = json.loads(out.read_text())
    jsonschema.validate(d, SCHEMA)
    assert d["loads"] == [] and d["profile"]["name"] == "none" and d["wall_s"] == d["engine"]["wall_s"]


def test_machine_without_a_load_kind(tmp_path):
    prof = tmp_path / "needs-parsec.yaml"
    prof.write_text("description: real PARSEC only\nprocesses:\n  - kind: parsec\n    benchmark: canneal\n")
    env = {k: v for k, v in os.environ.items() if k != "PARSEC_HOME"}
    out = tmp_path / "u.json"
    r = run(out, profile=str(prof), env=env)
    assert r.returncode == 3 and "PARSEC" in r.stderr and not out.exists()
    r = run(out, profile=str(prof), env=env, extra=["--allow-unavailable"])
    assert r.returncode == 0, r.stderr
    rec = json.loads(out.read_text())
    jsonschema.validate(rec, SCHEMA)
    assert rec["status"] == "unavailable" and "PARSEC_HOME" in rec["reasons"][0] and "engine" not in rec


@pytest.mark.parametrize("case,args", [
    ("unknown profile", ["--profile", "no-such", "--setup", "cfs"]),
    ("unknown setup", ["--profile", "cpu-1", "--setup", "no-such"]),
    ("bad engine option", ["--profile", "cpu-1", "--setup", "cfs", "--", "--mode", "fm", "--threads", "2", "--pes", "3"]),
    ("unknown engine option", ["--profile", "cpu-1", "--setup", "cfs", "--", "--mode", "fm", "--frobnicate"]),
    ("runner-owned option", ["--profile", "cpu-1", "--setup", "cfs", "--", "--json", "x.json"]),
    ("runner-owned timeline", ["--profile", "cpu-1", "--setup", "cfs", "--", "--timeline=x.csv"]),
    ("no engine options", ["--profile", "cpu-1", "--setup", "cfs"]),
    ("bad label", ["--profile", "cpu-1", "--label", "novalue", "--", "--mode", "seq"]),
    ("bad timeout", ["--profile", "cpu-1", "--timeout", "0", "--", "--mode", "seq"]),
])
def test_bad_input(tmp_path, case, args):
    import subprocess
    out = tmp_path / "out.json"
    if "--" not in args and case != "no engine options":
        args = [*args, "--", "--mode", "seq"]
    r = subprocess.run([AIRLAB, "trial", "--out", str(out), *args], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, (case, r.stderr)
    assert len(r.stderr.strip().splitlines()) == 1 and r.stderr.startswith("airlab trial: error:")
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_unwritable_output(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    (ro / "f").write_text("")
    # /proc/x.json: its folder exists and, for root, os.access() calls it writable.
    for out in ["/proc/airlab/out.json", "/proc/x.json", str(tmp_path), str(ro / "f" / "x.json")]:
        r = run(out)
        assert r.returncode == 2 and "--out" in r.stderr, (out, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ro"]


def test_bad_input_makes_no_output_folder(tmp_path):
    """--out's missing folders are made when the result is written, not while the input is
    checked: refused input leaves nothing, a good run creates them."""
    r = run(tmp_path / "new" / "sub" / "x.json", profile="no-such")
    assert r.returncode == 2 and list(tmp_path.iterdir()) == [], r.stderr
    r = run(tmp_path / "new" / "sub" / "x.json", profile="none", engine=["--mode", "seq", "--end-time", "100"])
    assert r.returncode == 0 and (tmp_path / "new" / "sub" / "x.json").is_file(), r.stderr


def test_timeout_stops_everything(tmp_path):
    out = tmp_path / "slow.json"
    r = run(out, setup="cpuset", engine=SLOW_ENGINE, extra=["--timeout", "1"])
    assert r.returncode == 124 and "--timeout" in r.stderr and not out.exists(), r.stderr
    assert r.left_behind() == []
    # --record-failure: a clearly marked failed record (schema-valid, no measurements).
    r = run(out, engine=SLOW_ENGINE, extra=["--timeout", "1", "--record-failure"])
    assert r.returncode == 0, r.stderr
    rec = json.loads(out.read_text())
    jsonschema.validate(rec, SCHEMA)
    assert rec["status"] == "failed" and "--timeout" in rec["reasons"][0] and "wall_s" not in rec
    assert r.left_behind() == []


def _blocked(pid, tid=None):
    """Which of the stop signals (SIGINT, SIGTERM, SIGHUP) a thread (or a process's main thread) blocks."""
    path = f"/proc/{pid}/task/{tid}/status" if tid else f"/proc/{pid}/status"
    with open(path) as f:
        mask = int(next(line for line in f if line.startswith("SigBlk:")).split()[1], 16)
    return {s for s in STOP_SIGNALS if mask & (1 << (s - 1))}


def test_signals_reach_the_runners_main_thread_and_loads_stay_stoppable(tmp_path):
    """Python runs handlers in the main thread only; a SIGINT the kernel handed to a helper
    thread (timer, load scheduler) waited until the engine ended (a minute, seen once under
    cpuset). Helpers block SIGINT/SIGTERM, the main thread does not, and the loads the
    scheduler thread starts get them back (else SIGTERM could not stop a load)."""
    # sha256sum keeps the signal mask it inherits (airload sets its own)
    r = Runner(tmp_path / "t.json", profile="command-sha256", engine=SLOW_ENGINE)
    try:
        deadline = time.monotonic() + 30
        loads = []
        while time.monotonic() < deadline and not loads:
            time.sleep(0.2)
            loads = [p for p in proctags.find("AIRLAB_LOAD_ID") if p in proctags.find("AIRLAB_TEST_RUN", r.tag)]
        assert loads, "the profile's load did not start"
        tids = [int(t) for t in os.listdir(f"/proc/{r.proc.pid}/task")]
        helpers = [t for t in tids if t != r.proc.pid]
        assert helpers, "the runner has no helper thread to check (timer, load scheduler)"
        # The main thread blocks both for the instant it starts a helper (airbase/threads.py),
        # so one look can land in that instant (seen once in CI): it must be unblocked in
        # most of 10 looks; a main thread that kept them blocked fails every look.
        looks = []
        for _ in range(10):
            looks.append(_blocked(r.proc.pid, r.proc.pid))
            time.sleep(0.02)
        assert sum(1 for b in looks if b == set()) >= 8, looks
        for t in helpers:
            assert _blocked(r.proc.pid, t) == set(STOP_SIGNALS), f"thread {t}"
        for p in loads:
            assert _blocked(p) == set(), f"load {p} blocks SIGINT/SIGTERM"
        r.proc.send_signal(signal.SIGINT)
        assert r.wait(30) == 130, r.stderr
        assert not r.out.exists()
    finally:
        if r.proc.poll() is None:  # a failed check: stop it so that it cleans up
            r.proc.terminate()
            r.proc.wait(60)
    assert wait_until_gone(r) == []


@pytest.mark.parametrize("setup", ["cfs", "cpuset", "quota-half"])
def test_interrupted_runner_leaves_nothing(tmp_path, setup):
    ok, why = open_setup(setup).availability()
    if not ok:
        pytest.skip(why)
    rnd = random.Random(setup)
    for i in range(6):
        out = tmp_path / f"{i}.json"
        r = Runner(out, profile="cpu-timevarying", setup=setup, engine=SLOW_ENGINE)
        time.sleep(rnd.uniform(0.05, 2.0))  # from argument checking to the middle of the run
        r.proc.send_signal(rnd.choice(STOP_SIGNALS))
        r.wait(60)
        # 130; or killed by the signal itself when it came before Python had set up its handlers
        assert r.returncode in (130, *(-s for s in STOP_SIGNALS)), r.stderr
        assert not out.exists() and [f for f in tmp_path.iterdir() if f.name.startswith(".")] == []
        assert wait_until_gone(r, 2.0) == [], f"left behind after interrupt {i}: {r.stderr}"


def test_a_hang_up_mid_run_leaves_nothing(tmp_path):
    """A dropped ssh session or a closed terminal sends SIGHUP. Its default action killed the
    runner alone: the engine and perf ran on and the trial's cpuset cgroups stayed (seen on
    30 Nov). The runner answers it as it answers SIGTERM."""
    ok, why = open_setup("cpuset").availability()
    if not ok:
        pytest.skip(why)
    r = Runner(tmp_path / "t.json", profile="cpu-1", setup="cpuset", engine=SLOW_ENGINE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and "airpdes" not in " ".join(_cmdlines(r.left_behind())):
        time.sleep(0.1)
    r.proc.send_signal(signal.SIGHUP)
    assert r.wait(60) == 130, r.stderr
    assert "interrupted by SIGHUP; nothing was written" in r.stderr
    assert not r.out.exists()
    assert wait_until_gone(r, 2.0) == []


def _cmdlines(items):
    """The command lines of the process ids among `items` (cgroup paths are left out)."""
    out = []
    for pid in items:
        try:
            with open(f"/proc/{int(pid)}/cmdline", "rb") as f:
                out.append(f.read().replace(b"\0", b" ").decode(errors="replace"))
        except (OSError, ValueError, TypeError):
            continue
    return out


def test_an_interrupt_inside_the_clean_up_still_leaves_nothing(tmp_path, monkeypatch):
    """The signal's exception can land anywhere, here just as the cgroups are to be removed
    (so their removal never runs): the runner's final sweep of what carries its PID removes
    them. In-process, so the moment is exact rather than lucky."""
    from pathlib import Path

    from airbase import proctags
    from workflows import trial
    from workflows.setups import cgroups, leftovers
    ok, why = open_setup("quota-half").availability()
    if not ok:
        pytest.skip(why)
    real_remove = cgroups.LabCgroups.remove

    def interrupted_remove(self):
        os.kill(os.getpid(), signal.SIGTERM)  # the runner's handler raises right here
        real_remove(self)
    monkeypatch.setattr(cgroups.LabCgroups, "remove", interrupted_remove)
    out = tmp_path / "t.json"
    mine = f"airlab-{os.getpid()}-"
    try:
        with pytest.raises(trial.TrialInterrupted):
            trial.run_trial("cpu-1", "quota-half", out, ["--mode", "seq", "--end-time", "2000"], timeout=120)
        assert not out.exists()
        assert [g for g in cgroups.leftover_lab_groups() if Path(g).name.startswith(mine)] == []
        assert proctags.find(leftovers.KEY, str(os.getpid())) == []
    finally:  # never leave this test's groups on the machine, even when it fails
        leftovers.sweep_runner(os.getpid())


def test_what_a_killed_runner_left_is_swept_by_the_next_trial(tmp_path):
    """SIGKILL gives the runner no chance to clean up: its engine (under perf, in its own
    session) and its cgroups survive it. The next trial finds them by the dead runner's
    PID (AIRLAB_RUNNER, airlab-<pid>-...) and removes them."""
    r = Runner(tmp_path / "k.json", setup="cpuset", engine=SLOW_ENGINE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(r.left_behind()) < 3:  # engine (perf, airpdes) and a cgroup
        time.sleep(0.2)
    r.proc.kill()
    r.wait(30)
    assert r.left_behind(), "nothing was running when the runner was killed"
    nxt = run(tmp_path / "next.json", profile="none")
    assert nxt.returncode == 0, nxt.stderr
    assert "removed what a killed runner left" in nxt.stderr
    assert wait_until_gone(r, 5.0) == [] and not (tmp_path / "k.json").exists()
    import glob
    import tempfile
    assert glob.glob(f"{tempfile.gettempdir()}/airlab-trial-{r.proc.pid}-*") == [], "its work folder is left"


@pytest.mark.parametrize("count", ["0", "-1", "two", "cores*2", "3.5"])
def test_bad_load_count(tmp_path, count):
    """--load-count is an integer >= 1 or an expression in cores: anything else is refused
    in one line (exit 2) before anything starts, and so is a profile without exactly one
    process to multiply."""
    import subprocess
    out = tmp_path / "out.json"
    r = subprocess.run([AIRLAB, "trial", "--profile", "cpu-1", "--load-count", count, "--out", str(out),
                        "--", "--mode", "seq"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("airlab trial: error: --load-count") and len(r.stderr.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("profile", ["none", "cpu-timevarying"])
def test_load_count_needs_a_one_process_profile(tmp_path, profile):
    import subprocess
    r = subprocess.run([AIRLAB, "trial", "--profile", profile, "--load-count", "2", "--out", str(tmp_path / "o.json"),
                        "--", "--mode", "seq"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "one process" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert list(tmp_path.iterdir()) == []


def test_derived_load_count_runs_and_records_that_many_loads(tmp_path):
    """--profile cpu-1 --load-count 3: three separate CPU-bound processes ran beside the
    engine, and the record says so (profile cpu-1-x3 with three processes, three loads), so
    the table's n_loads is 3."""
    from analysis.aggregate import n_loads, row_of
    out = tmp_path / "x3.json"
    r = Runner(out, profile="cpu-1", extra=["--load-count", "3"],
               engine=["--mode", "fm", "--threads", "2", "--end-time", "200"])
    assert r.wait(120) == 0, r.stderr
    assert r.left_behind() == []
    d = json.loads(out.read_text())
    jsonschema.validate(d, SCHEMA)
    assert d["status"] == "ok"
    assert d["trial"]["profile"] == d["profile"]["name"] == "cpu-1-x3" and d["profile"]["load_count"] == 3
    assert [p["kind"] for p in d["profile"]["processes"]] == ["cpu"] * 3
    assert len(d["loads"]) == 3 and len({ld["name"] for ld in d["loads"]}) == 3
    assert n_loads(d["profile"]) == 3
    row = row_of(d, "figtest", "Fig. 99")
    assert row["n_loads"] == 3 and row["profile"] == "cpu-1-x3"
    # FM neither adapts nor probes: its engine reports no PI figures (a detector reports its
    # own), and its row says 0. A PI run from an engine before probes were counted has no
    # figure rather than a made-up 0.
    assert not any(k.startswith("pi_") for t in d["engine"]["threads"] for k in t)
    assert row["deactivations"] == 0 and row["pi_probe_s"] == 0
    d["engine"]["mode_adaptive"] = True
    d["engine"]["config"]["detector"] = "pi"
    assert row_of(d, "figtest", "Fig. 99")["pi_probe_s"] == ""


@pytest.mark.parametrize("args,says", [
    (["--out", "x.json", "--", "--mode", "seq"], "the following arguments are required: --profile"),
    (["--profile", "cpu-1", "--out", "x.json", "--rep", "two", "--", "--mode", "seq"], "--rep: invalid int value"),
    (["--profile", "cpu-1", "--out", "x.json", "--no-such-option"], "unrecognized arguments: --no-such-option"),
])
def test_argument_errors_are_one_line(tmp_path, args, says):
    """argparse's own refusals follow the project's rule too: one line naming the command,
    where to find the usage, exit 2, nothing written (not argparse's usage block)."""
    import subprocess
    r = subprocess.run([AIRLAB, "trial", *args], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith("airlab trial: error: ") and says in line, line
    assert line.endswith("(see 'airlab trial --help')")
    assert r.stdout == "" and list(tmp_path.iterdir()) == []


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs 2 cores: a thread to deactivate")
def test_pi_sees_the_runners_load(tmp_path):
    """The PI detector and RAP time sched_yield(), which hands the CPU only to tasks of the
    same scheduling group. Under sched_autogroup (on by default in Debian's kernels) every
    session is a group, so the runner keeps the engine and its loads in its own session:
    LADM next to one CPU-bound load must deactivate a thread, every time. With the engine and
    the load each in a session of its own (setsid) most runs never did (efficiency 0.2-0.7)."""
    for i in range(3):
        out = tmp_path / f"ladm{i}.json"
        r = run(out, profile="cpu-1", engine=["--mode", "ladm", "--threads", "2", "--pes", "2",
                                              "--remote", "0.4", "--end-time", "3000",
                                              "--detector", "pi", "--reactivation", "rap"])
        assert r.returncode == 0, r.stderr
        e = json.loads(out.read_text())["engine"]
        deactivations = [t["deactivations"] for t in e["threads"]]
        assert sum(deactivations) >= 1, f"run {i}: no deactivation {deactivations}, efficiency {e['efficiency']:.2f}"


def test_sigusr1_prints_where_the_runner_is_and_the_trial_goes_on(tmp_path):
    """The diagnostic a hung runner gets (trial_helpers.Runner.wait): every thread's stack on
    stderr, the trial undisturbed by it; an interrupt then still ends it cleanly."""
    out = tmp_path / "t.json"
    r = Runner(out, profile="none", engine=SLOW_ENGINE)
    time.sleep(1.5)
    r.proc.send_signal(signal.SIGUSR1)
    time.sleep(0.5)
    assert r.proc.poll() is None
    r.proc.send_signal(signal.SIGINT)
    assert r.wait(60) == 130, r.stderr
    assert "most recent call first" in r.stderr and "trial.py" in r.stderr, r.stderr
    assert not out.exists() and wait_until_gone(r, 2.0) == []
