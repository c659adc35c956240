"""`airlab trial` end to end: a real trial under every setup this machine supports, with a
real CPU load and a real engine run; the result validates against the schema, the setup
took effect (seen by the kernel), nothing is left behind; bad input is refused before
anything starts; interrupting the runner at random moments leaves no process or cgroup."""
import json
import os
import random
import signal
import subprocess
import time

import jsonschema
import pytest

from loads import proctags
from workflows import cgroups
from workflows.paths import SCHEMAS
from workflows.setups import open_setup

ENGINE = ["--mode", "fm", "--threads", "2", "--lps-per-pe", "300", "--remote", "0.2", "--end-time", "3000"]
SCHEMA = json.loads((SCHEMAS / "trial.schema.json").read_text())


def trial(airlab_cmd, out, profile="cpu-1", setup="cfs", engine=ENGINE, extra=()):
    return subprocess.run([airlab_cmd, "trial", "--profile", profile, "--setup", setup, "--out", str(out),
                           *extra, "--", *engine], capture_output=True, text=True, timeout=300)


def nothing_left():
    assert proctags.find("AIRLAB_LOAD_SET") == [] or all(
        p in _preexisting for p in proctags.find("AIRLAB_LOAD_SET"))
    assert proctags.find("AIRLAB_TRIAL") == []
    assert cgroups.leftover_lab_groups() == []


_preexisting = set(proctags.find("AIRLAB_LOAD_SET"))


def cpu_list(text):
    out = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def available(setup):
    ok, why = open_setup(setup).availability()
    if not ok:
        pytest.skip(f"setup {setup} cannot run here: {why}")


@pytest.mark.parametrize("setup", ["cfs", "cpuset", "quota-half", "weight-4to1", "idle", "nice"])
def test_trial_under_each_setup(airlab_cmd, tmp_path, setup):
    available(setup)
    out = tmp_path / f"{setup}.json"
    r = trial(airlab_cmd, out, setup=setup, extra=["--rep", "3", "--label", "figure=test"])
    assert r.returncode == 0, r.stderr
    d = json.loads(out.read_text())
    jsonschema.validate(d, SCHEMA)
    assert d["trial"]["rep"] == 3 and d["trial"]["labels"] == {"figure": "test"}
    assert d["engine"]["committed_events"] > 0 and len(d["loads"]) == 1
    assert d["perf"]["task-clock"]["status"] == "ok"  # software counters work everywhere
    assert d["runner"]["version"] != "" and d["machine"]["cores"] >= 1
    load = d["loads"][0]
    assert load["figures"]["throughput"] > 0 and load["start_s"] is not None
    seen = d["setup"]["applied"]["observed"]
    eng, ld = seen["engine"], seen["loads"][0]
    if setup == "cpuset":
        assert cpu_list(eng["cpus_allowed"]).isdisjoint(cpu_list(ld["cpus_allowed"]))
        assert any("/engine" in c for c in eng["cgroups"]) and any("/loads" in c for c in ld["cgroups"])
    elif setup == "quota-half":
        # The loads' group may use half a CPU: the load's CPU time over its run time stays
        # near 0.5 (0.62 allows one period of slack on a short run; unlimited it is ~0.67-1).
        share = load["cpu_s"] / (load["stop_s"] - load["start_s"])
        assert share <= 0.62, f"load used {share:.2f} CPUs under a 0.5 CPU quota"
    elif setup == "weight-4to1":
        assert any("/loads" in c for c in ld["cgroups"])
        applied = d["setup"]["applied"]
        assert applied["engine"] != applied["loads"]
    elif setup == "idle":
        assert ld["policy"] == 5 and eng["policy"] == 0  # SCHED_IDLE for the load only
    elif setup == "nice":
        assert ld["nice"] == 19 and eng["nice"] == 0
    else:
        assert eng["cgroups"] == [] and ld["nice"] == 0 and ld["policy"] == 0
    nothing_left()


def test_gang_jobs_alternate(airlab_cmd, tmp_path):
    available("gang")
    out = tmp_path / "gang.json"
    # About 12 s of engine work: SLURM suspends the second job as it starts (the first
    # switch comes ~10 s in), then the engine and the load take turns every 5 s slice.
    engine = ["--mode", "fm", "--threads", "2", "--lps-per-pe", "1000", "--remote", "0.2", "--end-time", "70000"]
    r = trial(airlab_cmd, out, setup="gang", engine=engine)
    assert r.returncode == 0, r.stderr
    d = json.loads(out.read_text())
    applied = d["setup"]["applied"]
    assert applied["jobs_alternated"], applied["job_states"]
    assert d["loads"][0]["cpu_s"] > 0.5, "the load never got its turn"
    assert applied["jobs_left_at_end"] == []
    out2 = subprocess.run(["pgrep", "-x", "slurmctld|slurmd|munged"], capture_output=True, text=True)
    assert out2.stdout.strip() == "", "SLURM daemons outlived the trial"
    nothing_left()


def test_no_load_baseline_and_unavailable(airlab_cmd, tmp_path):
    out = tmp_path / "none.json"
    r = trial(airlab_cmd, out, profile="none")
    assert r.returncode == 0 and json.loads(out.read_text())["loads"] == []
    prof = tmp_path / "needs-parsec.yaml"
    prof.write_text("description: real PARSEC only\nprocesses:\n  - kind: parsec\n    benchmark: canneal\n")
    env = {k: v for k, v in os.environ.items() if k != "PARSEC_HOME"}
    r = subprocess.run([os.environ.get("AIRLAB", airlab_cmd), "trial", "--profile", str(prof), "--out",
                        str(tmp_path / "u.json"), "--", *ENGINE], capture_output=True, text=True, env=env)
    assert r.returncode == 3 and "PARSEC" in r.stderr and not (tmp_path / "u.json").exists()
    r = subprocess.run([airlab_cmd, "trial", "--allow-unavailable", "--profile", str(prof), "--out",
                        str(tmp_path / "u.json"), "--", *ENGINE], capture_output=True, text=True, env=env)
    assert r.returncode == 0
    rec = json.loads((tmp_path / "u.json").read_text())
    assert rec["status"] == "unavailable" and "PARSEC_HOME" in rec["reasons"][0]


@pytest.mark.parametrize("case,args", [
    ("unknown profile", ["--profile", "no-such", "--setup", "cfs"]),
    ("unknown setup", ["--profile", "cpu-1", "--setup", "no-such"]),
    ("bad engine option", ["--profile", "cpu-1", "--setup", "cfs", "--", "--mode", "fm", "--threads", "2", "--pes", "3"]),
    ("runner-owned option", ["--profile", "cpu-1", "--setup", "cfs", "--", "--json", "x.json"]),
    ("no engine options", ["--profile", "cpu-1", "--setup", "cfs"]),
    ("bad label", ["--profile", "cpu-1", "--label", "novalue", "--", "--mode", "seq"]),
])
def test_bad_input(airlab_cmd, tmp_path, case, args):
    out = tmp_path / "out.json"
    if "--" not in args and case != "no engine options":
        args = [*args, "--", "--mode", "seq"]
    r = subprocess.run([airlab_cmd, "trial", "--out", str(out), *args], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, (case, r.stderr)
    assert len(r.stderr.strip().splitlines()) == 1 and r.stderr.startswith("airlab trial: error:")
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_unwritable_output(airlab_cmd, tmp_path):
    for out in ["/proc/airlab/out.json", str(tmp_path)]:
        r = trial(airlab_cmd, out)
        assert r.returncode == 2 and "--out" in r.stderr


def test_timeout_stops_everything(airlab_cmd, tmp_path):
    out = tmp_path / "slow.json"
    slow = ["--mode", "fm", "--threads", "2", "--lps-per-pe", "1000", "--end-time", "10000000"]
    r = trial(airlab_cmd, out, setup="cpuset", engine=slow, extra=["--timeout", "1"])
    assert r.returncode == 1 and "--timeout" in r.stderr and not out.exists()
    nothing_left()


@pytest.mark.parametrize("setup", ["cfs", "cpuset"])
def test_interrupted_runner_leaves_nothing(airlab_cmd, tmp_path, setup):
    available(setup)
    rnd = random.Random(setup)
    slow = ["--mode", "fm", "--threads", "2", "--lps-per-pe", "500", "--end-time", "10000000"]
    for i in range(5):
        out = tmp_path / f"{i}.json"
        p = subprocess.Popen([airlab_cmd, "trial", "--profile", "cpu-timevarying", "--setup", setup,
                              "--out", str(out), "--", *slow], stderr=subprocess.PIPE, text=True)
        time.sleep(rnd.uniform(0.1, 2.0))
        p.send_signal(rnd.choice([signal.SIGINT, signal.SIGTERM]))
        _, err = p.communicate(timeout=60)
        assert p.returncode != 0 and not out.exists(), err
        assert [f for f in tmp_path.iterdir() if f.name.startswith(".")] == [], "temporary file left"
        nothing_left()
