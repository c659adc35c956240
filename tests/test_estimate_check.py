"""A run's time against the estimate (analysis/estimate_check.py), on trial records written
here for trials of the shipped quick plan: the measured parts add up to the run's span, the
placement constants are counted from the records (first waits, re-runs and the waits
before them, by kind of trial), and the estimate on one host differs from another's only in
the far handling (the pilots' waits included)."""
import json
import subprocess
import sys

import pytest

from analysis.estimate_check import estimate, measure, placement, run_records, run_seconds
from workflows.estimate import FAR_HOST, NEAR_HOST, estimate_parts
from workflows.experiments import all_trials, load_config

T0 = 1_800_000_000.0
EXP = "fig01-fm-slowdown"


@pytest.fixture(scope="module")
def plan():
    return all_trials(load_config(), "quick", cores=2)


def record(trial, start, span, windows, waits, calibration_s=None):
    attempts = [{"window_s": w, "waited_s": s, "settle_s": 0.0, "foreign_cpu_s": 0.0, "disturbed": False,
                 "ran_far": i < len(windows) - 1} for i, (w, s) in enumerate(zip(windows, waits))]
    return {"trial": {"id": trial["id"], "started_unix": T0 + start, "finished_unix": T0 + start + span,
                      "labels": {"experiment": EXP, "scale": "quick"}},
            "wall_s": windows[-1],
            "noise": {"attempts": attempts, "kept_attempt": len(windows) - 1},
            "calibration": ({"cached": False, "span_s": calibration_s,
                             "pilot": {"walls_s": [1.0, 1.0, 1.0], "check_run": {"wall_s": 2.9}}}
                            if calibration_s else {"cached": True})}


def write_run(tmp_path, plan):
    """Three trials of Fig. 1: a no-load one made again once (far), a loaded one that re-runs
    far loaded runs, made again twice, and a loaded one kept at its first run; 10 s between
    the second and third."""
    trials = plan[EXP][1]
    none = next(t for t in trials if t["profile"] == "none" and t["rep"] == 0)
    loaded = [t for t in trials if t["profile"] != "none" and t["rep"] == 0][:2]
    assert all(t["rerun_far_loaded"] for t in loaded)  # the plan's Fig. 1 re-runs them (77ad84e)
    recs = [(none, record(none, 0, 30.0, [3.9, 3.0], [1.0, 4.0], calibration_s=15.0)),
            (loaded[0], record(loaded[0], 30, 25.0, [6.0, 6.5, 5.9], [0.5, 2.0, 3.0])),
            (loaded[1], record(loaded[1], 65, 8.0, [6.1], [0.0]))]
    folder = tmp_path / "trials" / EXP
    folder.mkdir(parents=True)
    for t, d in recs:
        (folder / f"{t['id']}.json").write_text(json.dumps(d))
    (folder / "base-not-in-the-plan-rep0.json").write_text(json.dumps(recs[2][1]))
    return tmp_path, [t for t, _ in recs]


def test_the_parts_add_up_to_the_span_and_the_placement_is_counted(tmp_path, plan):
    run, trials = write_run(tmp_path, plan)
    records, other = run_records(run, plan)
    assert [t["id"] for t, _ in records] == sorted(t["id"] for t in trials) and other == 1
    m, n = measure(records)
    assert m["engine"] == pytest.approx(3.0 + 5.9 + 6.1)
    assert m["rerun"] == pytest.approx(3.9 + 6.0 + 6.5)
    assert m["first_wait"] == pytest.approx(1.5) and m["rerun_wait"] == pytest.approx(9.0)
    assert m["calibration"] == 15.0
    assert run_seconds(m) == pytest.approx(73.0)  # first start to last end, gaps included
    assert n == {"trials": 3, "no_load": 1, "no_load_reruns": 1, "reruns": 3, "far_loaded": 2,
                 "far_loaded_reruns": 2, "calibration_runs": 3 + 3 + 1}
    assert m["calibration_wait"] == pytest.approx(15.0 - 1.0 - 3.0 - 2.9)
    host = placement(m, n)
    assert host.near_wait_s == pytest.approx(0.5) and host.far_rerun_wait_s == pytest.approx(3.0)
    assert host.far_reruns_per_no_load == 1.0 and host.far_reruns_per_loaded == 1.0
    assert host.pilot_run_wait_s == pytest.approx(8.1 / 7)


def test_the_estimate_by_host_differs_only_in_the_far_handling(plan):
    trials = [{**t, "experiment": EXP} for t in plan[EXP][1] if not t["top_up"]]
    far, near = estimate(plan, trials, FAR_HOST), estimate(plan, trials, NEAR_HOST)
    for k in ("engine", "overhead", "analysis"):
        assert far[k] == near[k] > 0, k
    assert far["far"] > near["far"] and far["near_wait"] > near["near_wait"] == 0
    assert far["pilots"] > near["pilots"] > 0  # the pilots wait for near CPUs too
    assert sum(far.values()) - far["pilots"] - far["analysis"] == pytest.approx(
        sum(sum(estimate_parts(t, FAR_HOST).values()) for t in trials))


def test_the_command_prints_the_table_and_refuses_a_folder_without_trials(tmp_path, plan):
    run, _ = write_run(tmp_path / "run", plan)
    r = subprocess.run([sys.executable, "-m", "analysis.estimate_check", str(run), str(run)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "| engine runs kept |" in r.stdout and "| **total** |" in r.stdout
    assert "(1 records of another plan left out)" in r.stdout
    assert "placement measured: near_wait_s=0.50" in r.stdout
    assert "median placement over 2 runs: HostPlacement(near_wait_s=0.50" in r.stdout
    r = subprocess.run([sys.executable, "-m", "analysis.estimate_check", str(tmp_path / "nothing")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "no trials/ folder" in r.stderr
