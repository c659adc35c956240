"""The gang setup with a real private SLURM (munged, slurmctld, slurmd started by the
runner): the engine and a CPU load are separate jobs that SLURM time-slices, which the
job states sampled during the run show; afterwards no daemon, job or process is left."""
import json
import subprocess
import tempfile
from pathlib import Path

import jsonschema
import pytest

from airbase.paths import AIRPDES
from trial_helpers import SCHEMA, run
from workflows.setups import open_setup


# SLURM runs one of the three jobs first (a ~7.5 s turn, the engine or a load: the order
# varies), then each gets 5 s slices in turn: the engine must outlast its first turn, so
# that whichever load comes after it runs while it still works. Its work is measured in
# seconds on this machine, not fixed: the fixed end time of 110000 was ~15 s of CPU on an
# idle Xeon VM (11 M events/s) and ~27 s on an AMD EPYC one (7 M events/s), and each
# second of work beyond the first turn costs about three seconds of test (the engine has a
# third of the slices): 71 and 79 s for this test there; 37-51 s with 12 s of work (3
# runs), 42-67 s with 14 (5 runs; the engine's turn coming last costs a cycle). 14 s: a
# run can go 1.4x faster than its pilot on a host whose speed wanders
# (docs/reference-runs.md), and 14 / 1.4 still outlasts the first turn.
# seq: a fixed amount of CPU work, which on a busy machine does not grow with rollbacks.
ENGINE_WORK_S = 14
SEQ = ["--mode", "seq", "--lps-per-pe", "2000"]
PILOT_END = 5000


def engine_options(work_s=ENGINE_WORK_S):
    """seq options whose run takes about work_s seconds of CPU here (scaled from a pilot)."""
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "pilot.json"
        subprocess.run([str(AIRPDES), *SEQ, "--end-time", str(PILOT_END), "--quiet", "--json", str(out)],
                       check=True, timeout=120)
        wall = json.loads(out.read_text())["wall_s"]
    return [*SEQ, "--end-time", f"{PILOT_END * work_s / wall:.0f}"]


def gang_trial(out, profile="cpu-1"):
    """Run a gang trial; check it succeeded, left nothing and is valid. Returns its record."""
    ok, why = open_setup("gang").availability()
    if not ok:
        pytest.skip(f"gang cannot run here: {why}")
    r = run(out, profile=profile, setup="gang", engine=engine_options())
    assert r.returncode == 0, r.stderr
    assert r.left_behind() == [], "SLURM daemons, jobs or loads outlived the trial"
    d = json.loads(out.read_text())
    jsonschema.validate(d, SCHEMA)
    return d


def test_gang_jobs_alternate_and_every_load_takes_turns(tmp_path):
    """The engine and two load processes are three jobs: the partition admits all three at
    once (OverSubscribe=FORCE:3), so the jobs alternate and each load runs in its own turns
    instead of staying pending: both loads run while the engine still works. One trial for
    both checks: each costs half a minute of time slices (5 s is SLURM's shortest)."""
    d = gang_trial(tmp_path / "gang2.json", profile="cpu-2")
    applied = d["setup"]["applied"]
    assert applied["preempt_mode"] == "GANG" and applied["oversubscribe"] == "FORCE:3"
    assert applied["jobs_alternated"], applied["job_states"]
    assert len(d["loads"]) == 2
    for load in d["loads"]:
        assert "error" not in load["figures"], load
        assert load["cpu_s"] > 0.5, f"{load['name']} never got its turn: {applied['job_states']}"
        assert any(snap.get(f"airlab-load-{load['name']}") == "RUNNING" for _, snap in applied["job_states"])
        # Its start is its job's first turn, not its submission (which launched_s keeps).
        assert load["launched_s"] is not None and load["start_s"] >= load["launched_s"], load
    assert applied["jobs_left_at_end"] == []


def test_gang_refuses_a_work_folder_too_long_for_slurm_sockets(tmp_path):
    """slurmstepd's step sockets live in the work folder (UNIX socket paths are limited to
    107 bytes): a TMPDIR too deep is refused before any daemon starts, exit 3 with the
    reason on one line, nothing left. Starts no SLURM, so it is cheap."""
    import os
    ok, why = open_setup("gang").availability()
    if not ok:
        pytest.skip(f"gang cannot run here: {why}")
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    out = tmp_path / "g.json"
    r = run(out, setup="gang", engine=["--mode", "seq", "--end-time", "100"], env={**os.environ, "TMPDIR": str(deep)})
    assert r.returncode == 3 and "too long for SLURM's UNIX sockets" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not out.exists()
    assert r.left_behind() == [] and list(deep.iterdir()) == []


# Interrupting a gang trial (before SLURM, while its daemons start, mid-run) is
# tests/test_setups_interrupts.py's test_interrupted_gang_trial_at_each_phase_leaves_nothing.


@pytest.mark.parametrize("state,code,stopped,rc,says", [
    ("COMPLETED", 0, False, 0, None),
    ("COMPLETED", 3, False, 3, None),
    ("FAILED", 2, False, 2, "FAILED"),
    ("NODE_FAIL", 0, False, 1, "NODE_FAIL"),       # exit code 0, but the job never finished
    ("CANCELLED", 0, False, 1, "CANCELLED"),       # cancelled by someone else before it ran
    ("CANCELLED", 143, True, 143, None),           # we asked it to stop: as the program ended
    ("CANCELLED", 0, True, 0, None),
    (None, None, False, 1, "without an exit code"),  # lost track of it
])
def test_a_job_that_did_not_complete_is_not_a_clean_exit(state, code, stopped, rc, says):
    """The gang wrapper's exit code and message from the job's final state (synthetic states:
    the ones that lie are the rare ones, NODE_FAIL on a busy host)."""
    from workflows.setups.slurm_job import outcome
    got_rc, why = outcome(state, code, stopped)
    assert got_rc == rc
    assert (why is None) if says is None else (says in why)


def test_the_daemons_lines_on_one_job_are_kept(tmp_path):
    """GangCluster.job_log: the lines of slurmctld's and slurmd's logs on one job (by the id
    squeue listed under its name), not on a job whose id merely starts the same; nothing for
    a job never listed. Synthetic logs in the wording of Debian 12's SLURM (22.05), copied from
    a private cluster's logs on 30 Nov (the submit line left out)."""
    from workflows.setups.slurm import GangCluster
    c = GangCluster(tmp_path)
    c.dir.mkdir(parents=True)
    (c.dir / "slurmctld.log").write_text(
        "[2026-11-30T14:36:07.101] sched: Allocate JobId=1 NodeList=airlab-node #CPUs=2 Partition=gang\n"
        "[2026-11-30T14:36:07.102] sched: Allocate JobId=12 NodeList=airlab-node #CPUs=2 Partition=gang\n"
        "[2026-11-30T14:36:09.500] _job_complete: JobId=1 WEXITSTATUS 0\n"
        "[2026-11-30T14:36:09.501] _job_complete: JobId=1 done\n")
    (c.dir / "slurmd.log").write_text(
        "[2026-11-30T14:36:07.200] Launching batch job 1 for UID 0\n"
        "[2026-11-30T14:36:07.300] Launching batch job 12 for UID 0\n"
        "[2026-11-30T14:36:09.400] [1.batch] done with job\n")
    c.job_ids = {"airlab-engine": "1", "airlab-load-cpu.0": "12"}
    got = c.job_log("airlab-engine")
    assert got == ["slurmctld.log: [2026-11-30T14:36:07.101] sched: Allocate JobId=1 NodeList=airlab-node #CPUs=2 Partition=gang",
                   "slurmctld.log: [2026-11-30T14:36:09.500] _job_complete: JobId=1 WEXITSTATUS 0",
                   "slurmctld.log: [2026-11-30T14:36:09.501] _job_complete: JobId=1 done",
                   "slurmd.log: [2026-11-30T14:36:07.200] Launching batch job 1 for UID 0",
                   "slurmd.log: [2026-11-30T14:36:09.400] [1.batch] done with job"], got
    assert len(c.job_log("airlab-load-cpu.0")) == 2 and c.job_log("airlab-engine", most=2) == got[-2:]
    assert c.job_log("airlab-load-none") == []


def test_a_failed_gang_engine_says_what_its_job_did():
    """A gang engine's failure message ends with its job's last sampled states (synthetic
    record): the one thing known about a job whose program said nothing."""
    from workflows.trial import _engine_job_evidence
    states = [(0.5, {"airlab-engine": "PENDING"}), (1.0, {"airlab-engine": "RUNNING", "airlab-load-cpu.0": "PENDING"}),
              (6.0, {"airlab-engine": "SUSPENDED", "airlab-load-cpu.0": "RUNNING"}), (9.5, {"airlab-load-cpu.0": "RUNNING"})]
    said = _engine_job_evidence({"applied": {"job_states": states}})
    assert said == "; the engine's job, as sampled: 0.5 s PENDING, 1 s RUNNING, 6 s SUSPENDED"
    assert _engine_job_evidence({"applied": {"job_states": states[3:]}}).endswith("never in the queue")
    assert _engine_job_evidence({"applied": {"time_slice_s": 5}}) == "" == _engine_job_evidence(None)
