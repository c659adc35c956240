"""The machine-speed probe: airprobe's figures, the trial's machine_speed record, and which
trials of a run the analysis calls slow (on synthetic records: the verdict logic)."""
import json
import os
import subprocess

import jsonschema

from analysis import machine_speed as speed_analysis
from trial_helpers import SCHEMA, run
from workflows import machine_speed


def test_airprobe_times_every_allowed_cpu():
    r = subprocess.run([str(machine_speed.AIRPROBE)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert sorted(c["cpu"] for c in out["cpus"]) == sorted(os.sched_getaffinity(0))
    assert all(c["chase_ns"] > 0 and c["compute_ns"] > 0 for c in out["cpus"])
    if len(os.sched_getaffinity(0)) >= 2:
        assert out["pingpong_ns"] > 0
    assert out["wall_s"] < 5  # a probe is a few tens of milliseconds, not a benchmark


def test_airprobe_on_one_cpu_has_no_pingpong():
    cpu = min(os.sched_getaffinity(0))
    r = subprocess.run([str(machine_speed.AIRPROBE), "--cpus", str(cpu), "--steps", "20000"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert [c["cpu"] for c in out["cpus"]] == [cpu] and out["pingpong_ns"] is None and out["steps"] == 20000


def test_airprobe_bad_input_is_one_line_and_exit_2():
    for args in (["--steps", "10"], ["--steps", "x"], ["--cpus", "a"], ["--bogus"]):
        r = subprocess.run([str(machine_speed.AIRPROBE), *args], capture_output=True, text=True, timeout=30)
        assert r.returncode == 2 and r.stdout == "" and len(r.stderr.strip().splitlines()) == 1, (args, r.stderr)


def test_airprobe_on_a_cpu_it_may_not_use_exits_3():
    r = subprocess.run([str(machine_speed.AIRPROBE), "--cpus", "1023", "--steps", "20000"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 3 and "cannot pin" in r.stderr


def test_probe_reports_why_it_could_not_run(monkeypatch, tmp_path):
    monkeypatch.setattr(machine_speed, "AIRPROBE", tmp_path / "no-such-airprobe")
    p = machine_speed.probe()
    assert set(p) == {"error"} and "could not run" in p["error"]


def test_every_trial_records_the_machine_speed_before_and_after(tmp_path):
    out = tmp_path / "t.json"
    r = run(out, profile="cpu-1")
    assert r.returncode == 0, r.stderr
    d = json.loads(out.read_text())
    jsonschema.validate(d, SCHEMA)
    for when in ("before", "after"):
        p = d["machine_speed"][when]
        assert p["chase_ns"] > 0 and p["compute_ns"] > 0 and len(p["cpus"]) == len(os.sched_getaffinity(0))


def _record(tid, chase, compute=1.0, after=None, pingpong=(100.0, 100.0)):
    ms = {"before": {"chase_ns": chase, "compute_ns": compute, "pingpong_ns": pingpong[0], "cpus": []},
          "after": after or {"chase_ns": chase, "compute_ns": compute, "pingpong_ns": pingpong[1], "cpus": []}}
    return "exp", {"trial": {"id": tid, "started_unix": 0.0}, "machine_speed": ms}


def test_slow_trials_against_the_runs_median():
    records = [_record(f"t{i}", 10.0) for i in range(8)]
    records += [_record("slow-chase", 11.6), _record("slow-core", 10.0, compute=1.2),
                _record("burst-before-only", 10.0, after={"chase_ns": 10.0, "compute_ns": 1.0}),
                _record("just-under", 11.4), ("exp", {"trial": {"id": "old"}})]
    records[-3][1]["machine_speed"]["before"]["chase_ns"] = 14.0  # one probe in a burst: not slow
    ref, slow, probed = speed_analysis.slow_trials(records)
    assert ref == {"chase_ns": 10.0, "compute_ns": 1.0}
    assert probed == 12  # the record without a probe is not judged
    assert sorted(t for _, _, t, _ in slow) == ["slow-chase", "slow-core"]


def test_a_failed_probe_is_not_judged():
    records = [_record("a", 10.0), ("exp", {"trial": {"id": "b"}, "machine_speed": {"before": {"error": "x"}, "after": {"error": "x"}}})]
    ref, slow, probed = speed_analysis.slow_trials(records)
    assert probed == 1 and slow == []
    assert speed_analysis.slow_trials([]) == (None, [], 0)


def test_far_trials_against_the_runs_near_pingpong():
    """The host running the vCPUs far apart shows in the ping-pong (50 -> 320 ns on the lab's
    VM): a trial is far when either probe took >= 3x the run's near level (its 10th
    percentile), so a run mostly far still judges against its near moments."""
    records = [_record(f"near{i}", 10.0, pingpong=(50.0, 52.0)) for i in range(4)]
    records += [_record(f"far{i}", 10.0, pingpong=(320.0, 330.0)) for i in range(5)]
    records += [_record("went-far", 10.0, pingpong=(51.0, 310.0)), _record("came-near", 10.0, pingpong=(300.0, 50.0)),
                _record("just-under", 10.0, pingpong=(149.0, 50.0)), ("exp", {"trial": {"id": "none"}})]
    near, far, probed = speed_analysis.far_trials(records)
    assert near == 50.0  # the 10th percentile of 12 before-probes, though most are far
    assert probed == 12
    got = {t: which for _, _, t, which in far}
    assert got == {**{f"far{i}": "both" for i in range(5)}, "went-far": "after", "came-near": "before"}
    assert speed_analysis.far_trials([]) == (None, [], 0)
