"""Clean-up at any instant: `airlab trial` interrupted (SIGINT, SIGTERM) at many instants of
its life, from Python's start-up (the first 0.2 s) through the input checks, the setup being
applied (cgroups made, a private SLURM started), the loads starting and the middle of the
run, under every setup this machine has: once the runner has exited nothing of it is left,
no process (engine, load, SLURM daemon, slurmstepd, job), no cgroup, no work folder, no
half-written input. A runner killed outright (SIGKILL) cannot clean up; the next trial
sweeps what it left.

The instants are fixed (not random) and spread so that, over the setups, every phase is hit;
the whole file stays near a minute: about 25 short interrupted trials plus three gang ones."""
import glob
import signal
import tempfile
import time

import pytest

from trial_helpers import Runner
from airbase.paths import RESULTS
from airbase.stop_signals import STOP_SIGNALS
from workflows.setups import open_setup

SLOW_ENGINE = ["--mode", "fm", "--threads", "2", "--lps-per-pe", "500", "--end-time", "10000000"]
SETUPS = ["cfs", "nice", "idle", "cpuset", "quota-half", "weight-4to1"]
# Seconds after the runner starts: start-up and imports, argument checks and `airpdes
# --check`, the setup applied, loads starting (x264 input, on-off processes), mid-run.
INSTANTS = [0.0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.45, 0.6, 0.8, 1.0, 1.3, 1.7]
PROFILES = ["x264", "cpu-timevarying", "onoff-ctp1000-x2"]


def leftovers(r):
    """What of this runner still exists: processes and cgroups (trial_helpers), its work
    folder, an input it was writing."""
    left = r.left_behind()
    left += glob.glob(f"{tempfile.gettempdir()}/airlab-trial-{r.proc.pid}-*")
    left += glob.glob(f"{RESULTS}/inputs/*.tmp.{r.proc.pid}") + glob.glob(f"{RESULTS}/inputs/parsec/.*.{r.proc.pid}.*")
    return left


def gone_soon(r, seconds=1.0):
    """leftovers() after the runner exited, allowing a killed process a moment to die."""
    deadline = time.monotonic() + seconds
    while True:
        left = leftovers(r)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def ended_in_python_start_up(r):
    """A SIGINT while Python itself starts (its `site` import, the first ~10-35 ms here) is
    Python's fatal error, exit 1, before any of the lab's code has run: 5 of 400 random
    instants in [0, 1.6] s on 29 Nov. The clean-up checks below hold for it too."""
    return r.returncode == 1 and "Fatal Python error: init_" in r.stderr and r.stderr.rstrip().endswith("KeyboardInterrupt")


def interrupt(tmp_path, setup, profile, at, sig, engine=SLOW_ENGINE):
    out = tmp_path / f"{setup}-{at}.json"
    r = Runner(out, profile=profile, setup=setup, engine=engine)
    time.sleep(at)
    r.proc.send_signal(sig)
    r.wait(120)
    # 130; or killed by the signal itself when it came before Python set up its handlers
    assert r.returncode in (130, -signal.SIGINT, -signal.SIGTERM, -signal.SIGHUP) or ended_in_python_start_up(r), \
        (setup, at, r.stderr)
    assert not out.exists()
    assert gone_soon(r) == [], f"{setup}, {profile}, {sig.name} at {at} s left: {r.stderr}"
    return r


@pytest.mark.parametrize("k,setup", list(enumerate(SETUPS)))
def test_interrupted_at_any_instant_leaves_nothing(tmp_path, k, setup):
    ok, why = open_setup(setup).availability()
    if not ok:
        pytest.skip(why)
    for i, at in enumerate(INSTANTS[k % 3::3]):
        sig = STOP_SIGNALS[(i + k) % len(STOP_SIGNALS)]  # Ctrl-C, kill, a dropped ssh session
        interrupt(tmp_path, setup, PROFILES[(i + k) % len(PROFILES)], at, sig)


def test_a_killed_runner_is_swept_by_the_next_trial(tmp_path):
    """SIGKILL leaves the runner no chance (its quota cgroups, engine and load survive it);
    the next trial, under another setup and with no load, removes all of it first.
    (tests/test_trial_runner.py checks the same sweep after a cpuset trial without a load.)"""
    ok, why = open_setup("quota-half").availability()
    if not ok:
        pytest.skip(why)
    killed = Runner(tmp_path / "k.json", profile="cpu-1", setup="quota-half", engine=SLOW_ENGINE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(killed.left_behind()) < 3:  # perf, engine, load, cgroup
        time.sleep(0.1)
    killed.proc.kill()
    killed.wait(30)
    assert leftovers(killed), "nothing was running when the runner was killed"
    nxt = Runner(tmp_path / "n.json", profile="none", setup="cfs", engine=["--mode", "seq", "--end-time", "100"])
    assert nxt.wait(120) == 0, nxt.stderr
    assert "removed what a killed runner left" in nxt.stderr
    assert gone_soon(killed, 5.0) == [] and gone_soon(nxt) == []


def test_interrupted_gang_trial_at_each_phase_leaves_nothing(tmp_path):
    """Gang: before SLURM, while munged/slurmctld/slurmd start, and once the jobs run (the
    clean-up waits until slurmstepd and every job's program are gone), by SIGTERM and by a
    hang-up (a dropped ssh session: SIGHUP)."""
    ok, why = open_setup("gang").availability()
    if not ok:
        pytest.skip(why)
    for at, sig in ((0.15, signal.SIGTERM), (2.5, signal.SIGINT), (7.0, signal.SIGTERM), (7.0, signal.SIGHUP)):
        interrupt(tmp_path, "gang", "cpu-1", at, sig)
