"""Where a run's time went (analysis/time_spent.py), on trial records written here: each
trial's span is split into its kept engine run, the runs made again, the waits, the
calibration and the runner's rest, and the gaps between trials are counted once. A real
trial's record is checked in tests/test_placement.py (a far no-load run made again)."""
import json
import subprocess
import sys

import pytest

from analysis.time_spent import by_experiment, summary_line, time_spent

T0 = 1_800_000_000.0


def record(start, span, windows, kept=None, waits=None, settles=None, wait_kept=0.0, settle_kept=0.0,
           calibration=None):
    """A trial record with only what time_spent reads. waits/settles: per attempt (as the
    runner records since analysis/time_spent.py), else only the kept run's."""
    kept = len(windows) - 1 if kept is None else kept
    attempts = [{"window_s": w, "foreign_cpu_s": 0.0, "disturbed": False} for w in windows]
    if waits is not None:
        for a, w, s in zip(attempts, waits, settles):
            a.update(waited_s=w, settle_s=s)
    return {"trial": {"started_unix": T0 + start, "finished_unix": T0 + start + span},
            "wall_s": windows[kept],
            "noise": {"attempts": attempts, "kept_attempt": kept, "workflow_settle_s": settle_kept},
            "machine_speed": {"wait": {"waited_s": wait_kept}},
            "calibration": calibration}


def test_a_trial_run_again_counts_both_runs_and_both_waits():
    d = record(0, 20.0, [3.0, 2.5, 2.8], kept=1, waits=[0.1, 4.0, 2.0], settles=[0.2, 0.3, 0.25])
    s = time_spent([d])
    assert s["trials"] == 1 and s["span_s"] == pytest.approx(20.0)
    p = s["parts"]
    assert p["engine"] == 2.5 and p["rerun"] == pytest.approx(5.8)
    assert p["near_wait"] == pytest.approx(6.1) and p["settle"] == pytest.approx(0.75)
    assert p["runner"] == pytest.approx(20.0 - 2.5 - 5.8 - 6.1 - 0.75) and p["between"] == 0.0
    assert sum(p.values()) == pytest.approx(20.0)


def test_older_records_count_the_kept_runs_wait_only():
    """Before waits were recorded per run, the waits before re-runs are the runner's share."""
    d = record(0, 12.0, [3.0, 2.0], wait_kept=1.5, settle_kept=0.4)
    p = time_spent([d])["parts"]
    assert p["near_wait"] == 1.5 and p["settle"] == 0.4 and p["rerun"] == 3.0
    assert p["runner"] == pytest.approx(12.0 - 2.0 - 3.0 - 1.5 - 0.4)


def test_calibration_counts_where_it_was_made_not_where_it_was_cached():
    pilot = {"walls_s": [1.0, 1.1, 0.9], "probe": {"wall_s": 0.5}, "check_run": {"wall_s": 2.7}}
    made = record(0, 10.0, [2.7], calibration={"cached": False, "pilot": pilot})
    cached = record(10.0, 3.0, [2.7], calibration={"cached": True, "pilot": pilot})
    explicit = record(13.0, 3.0, [2.7], calibration=None)
    p = time_spent([made, cached, explicit])["parts"]
    assert p["calibration"] == pytest.approx(6.2) and p["engine"] == pytest.approx(8.1)


def test_a_calibrations_waits_and_probes_count_as_calibration_not_the_runner():
    """Its recorded span (runs, settles, waits for near CPUs, probes) is calibration time; at
    smoke scale 5 s of it went to the runner's share when only the runs counted."""
    pilot = {"walls_s": [0.2, 0.2, 0.2], "probe": {"wall_s": 0.1}, "check_run": None}
    d = record(0, 9.0, [1.0], calibration={"cached": False, "pilot": pilot, "span_s": 5.0})
    p = time_spent([d])["parts"]
    assert p["calibration"] == 5.0 and p["runner"] == pytest.approx(9.0 - 1.0 - 5.0)


def test_gaps_between_trials_are_counted_once_and_overlaps_not_at_all():
    a = record(0, 5.0, [4.0])
    b = record(7.0, 5.0, [4.0])       # 2 s after a
    c = record(10.0, 4.0, [3.0])      # overlaps b (not the workflow's way, but not counted twice)
    s = time_spent([c, a, b])
    assert s["span_s"] == pytest.approx(14.0) and s["parts"]["between"] == pytest.approx(2.0)


def test_the_summary_line_names_the_parts_in_minutes():
    d = record(0, 600.0, [300.0, 120.0], waits=[60.0, 30.0], settles=[1.0, 1.0])
    line = summary_line(time_spent([d, record(660.0, 240.0, [200.0])]))
    assert line.startswith("15.0 min over 2 trials: engine runs kept 5.3 (36%), ")
    assert "engine runs made again (far placement or disturbed) 5.0 (33%)" in line
    assert "waiting for near CPUs 1.5 (10%)" in line and "between trials (Snakemake, tables, figures) 1.0 (7%)" in line
    assert "calibration" not in line  # under 3 s: left out
    assert summary_line(time_spent([])) == "no trial records"


def test_the_command_reads_a_run_and_refuses_a_folder_that_is_not_one(tmp_path):
    folder = tmp_path / "trials" / "fig07-no-load"
    folder.mkdir(parents=True)
    (folder / "t.json").write_text(json.dumps(record(0, 4.0, [3.0])))
    (folder / "broken.json").write_text("{")
    r = subprocess.run([sys.executable, "-m", "analysis.time_spent", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith("0.1 min over 1 trials: engine runs kept"), r
    r = subprocess.run([sys.executable, "-m", "analysis.time_spent", str(tmp_path / "trials")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and r.stderr.startswith("time_spent: "), r


def test_each_experiment_counts_its_trials_and_their_far_handling_in_the_order_they_ran():
    late = record(100.0, 20.0, [3.0, 2.5], waits=[1.0, 4.0], settles=[0.2, 0.2])
    late["trial"]["labels"] = {"experiment": "fig08-one-load"}
    early = record(0.0, 10.0, [8.0])
    early["trial"]["labels"] = {"experiment": "fig01-fm-slowdown"}
    again = record(50.0, 5.0, [4.0], waits=[0.5], settles=[0.1])
    again["trial"]["labels"] = {"experiment": "fig01-fm-slowdown"}
    got = by_experiment([late, again, early])
    assert list(got) == ["fig01-fm-slowdown", "fig08-one-load"]
    assert got["fig01-fm-slowdown"] == {"trials": 2, "span_s": 15.0, "far_s": 0.5}
    assert got["fig08-one-load"] == {"trials": 1, "span_s": 20.0, "far_s": pytest.approx(3.0 + 5.0)}


def test_the_reports_section_breaks_down_a_runs_time_and_says_so_when_it_spans_none(tmp_path):
    """The report's "Where the time went" (analysis/report.time_section) over the records beside
    the tables: a table of the parts with their shares, and, for records that span no time
    (start == finish), one sentence instead of a table without rows."""
    from analysis.report import time_section
    folder = tmp_path / "trials" / "fig07-no-load"
    folder.mkdir(parents=True)
    experiments = [("fig07-no-load", None, str(tmp_path / "tables" / "fig07-no-load.csv"))]
    (folder / "t.json").write_text(json.dumps(record(0, 0.0, [0.0])))
    h = time_section(experiments)
    assert "span no time" in h and "<table>" not in h, h
    (folder / "u.json").write_text(json.dumps(record(0, 600.0, [300.0])))
    h = time_section(experiments)
    assert "<table><tr><th>what</th>" in h and "<td>engine runs kept</td><td>5.0</td><td>50%</td>" in h, h


def test_the_kept_attempt_is_the_records_or_the_last():
    """One reading for every analysis (time_spent, placement_matched): the record's index,
    or the last attempt for records from before it was written (absent or null)."""
    from analysis.time_spent import kept_attempt
    three = [{}, {}, {}]
    assert kept_attempt({"attempts": three, "kept_attempt": 0}) == 0
    assert kept_attempt({"attempts": three}) == kept_attempt({"attempts": three, "kept_attempt": None}) == 2
    assert kept_attempt({}) == -1  # no attempts: callers fall back to the record's wall_s
