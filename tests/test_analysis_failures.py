"""A failed trial is reported with its reason and does not stop its experiment's analysis:
aggregate keeps it as a row, the figure is drawn from what exists (or is a placeholder that
says why nothing was measured), and the report lists it. One real trial (no load, tiny
PHOLD) is the measured side; the failed side is the record the workflow writes when a
trial's runner dies (workflows/failed_trial.py)."""
import csv
import json
import subprocess
import sys

import pytest

from airbase import paths
from analysis import aggregate, claims, figures, report
from workflows import failed_trial

AIRLAB = [sys.executable, "-m", "workflows.cli"]  # the airlab command, in this interpreter

ENGINE = ["--model", "phold", "--mode", "fm", "--threads", "2", "--lps-per-pe", "100",
          "--end-time", "200", "--remote", "0.4"]


@pytest.fixture(scope="module")
def trials(tmp_path_factory):
    d = tmp_path_factory.mktemp("trials")
    ok = d / "profnone-remo0.4-rep0.json"
    subprocess.run([*AIRLAB, "trial", "--profile", "none", "--setup", "cfs", "--rep", "0",
                    "--out", str(ok), "--timeout", "60", "--label", "experiment=fig01-fm-slowdown",
                    "--", *ENGINE], check=True, capture_output=True, timeout=120)
    bad = d / "profcpu1-remo0.4-rep0.json"
    log = d / "profcpu1-remo0.4-rep0.log"
    log.write_text("airlab trial: starting\nairlab trial: failed: the engine failed (exit -9): killed\n")
    failed_trial.main(["--out", str(bad), "--log", str(log), "--profile", "cpu-1", "--setup", "cfs",
                       "--rep", "0", "--label", "experiment=fig01-fm-slowdown", "--", *ENGINE])
    return ok, bad


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def test_failed_trial_is_a_row_with_its_reason(trials, tmp_path):
    ok, bad = trials
    table = tmp_path / "fig01.csv"
    aggregate.main(["--experiment", "fig01-fm-slowdown", "--figure", "Fig. 1", "--out", str(table),
                    "--", str(ok), str(bad)])
    by_trial = {r["trial"]: r for r in rows(table)}
    assert by_trial[ok.stem]["status"] == "ok" and float(by_trial[ok.stem]["slowdown"]) == 1.0
    assert by_trial[bad.stem]["status"] == "failed"
    assert "exit -9" in by_trial[bad.stem]["reason"]
    assert by_trial[bad.stem]["slowdown"] == ""


def test_figure_and_report_go_on(trials, tmp_path):
    ok, bad = trials
    table, png = tmp_path / "fig01.csv", tmp_path / "fig01.png"
    aggregate.main(["--experiment", "fig01-fm-slowdown", "--figure", "Fig. 1", "--out", str(table),
                    "--", str(ok), str(bad)])
    figures.main(["--experiment", "fig01-fm-slowdown", "--table", str(table), "--out", str(png),
                  "--trials", str(ok), str(bad)])
    assert png.read_bytes()[:4] == b"\x89PNG"
    summary = tmp_path / "summary.csv"
    claims.main(["--claims", str(paths.CONFIGS / "claims.yaml"), "--out", str(summary), str(table)])
    html = tmp_path / "report.html"
    report.main(["--scale", "smoke", "--summary", str(summary), "--out", str(html),
                 "--experiment", "fig01-fm-slowdown", str(png), str(table)])
    text = html.read_text()
    assert "Trials that failed or could not run here (1)" in text
    assert bad.stem in text and "exit -9" in text


def test_nothing_measured_gives_a_placeholder_with_the_reason(trials, tmp_path):
    _, bad = trials
    table, png = tmp_path / "fig01.csv", tmp_path / "fig01.png"
    aggregate.main(["--experiment", "fig01-fm-slowdown", "--figure", "Fig. 1", "--out", str(table),
                    "--", str(bad)])
    figures.main(["--experiment", "fig01-fm-slowdown", "--table", str(table), "--out", str(png),
                  "--trials", str(bad)])
    svg = png.with_suffix(".svg").read_text()
    assert "not measured here" in svg and "Fig. 1" in svg


def test_an_interrupted_runner_leaves_no_record(tmp_path, capsys):
    """Ctrl-C is not a failure of the experiment: the fallback writes nothing and passes the
    runner's status on, so Snakemake keeps the trial incomplete and the next run reruns it."""
    out, log = tmp_path / "t.json", tmp_path / "t.log"
    log.write_text("airlab trial: interrupted by SIGINT; nothing was written\n")
    args = ["--out", str(out), "--log", str(log), "--profile", "cpu-1", "--setup", "cfs", "--rep", "0"]
    for status in (130, 143, 129):
        assert failed_trial.main([*args, "--runner-status", str(status), "--", *ENGINE]) == status
        assert not out.exists()
    assert "no record written; the next run reruns it" in capsys.readouterr().err
    assert failed_trial.main([*args, "--runner-status", "137", "--", *ENGINE]) == 0  # killed from outside
    assert json.loads(out.read_text())["status"] == "failed"
