"""The smoke target end to end, as a user runs it: real trials (engine + loads), tables,
figures, the summary of the paper's claims and the report, in a scratch directory
(snakemake -d), with the repository's workflow profile. Also: trials never overlap in time,
a finished run has nothing left to do (resume), and the SLURM profile plans the same DAG."""
import csv
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from workflows import paths
from workflows.experiments import all_trials, load_config

SNAKEMAKE = [sys.executable, "-m", "snakemake"]
TABLE_COLUMNS = {"experiment", "figure", "trial", "status", "reason", "profile", "setup", "mode",
                 "remote", "n_loads", "wall_s", "baseline_wall_s", "slowdown", "pred_eq1", "pred_eq3"}


def snakemake(workdir, *args, timeout=280):
    return subprocess.run([*SNAKEMAKE, "-d", str(workdir), *args], cwd=paths.ROOT,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    work = tmp_path_factory.mktemp("smoke")
    r = snakemake(work, "--cores", "2", "smoke")
    (work / "snakemake.out").write_text(r.stdout + r.stderr)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    return work, r.stdout + r.stderr


@pytest.fixture(scope="module")
def plan():
    return all_trials(load_config(), "smoke")


def test_prints_estimate_and_report_location(smoke_run):
    _, out = smoke_run
    assert "airlab: scale" in out and "estimate" in out
    # the plain command picks up the workflow profile (keep-going, one trial at a time)
    assert "workflow specific profile profiles/default" in out
    assert "trial_slot=Resource(\"trial_slot\", 1)" in out
    assert "smoke report at results/smoke/report.html" in out


def test_every_trial_recorded(smoke_run, plan):
    work, _ = smoke_run
    for exp, (_, trials) in plan.items():
        for t in trials:
            rec = json.loads((work / f"results/smoke/trials/{exp}/{t['id']}.json").read_text())
            assert rec["trial"]["labels"]["experiment"] == exp
            assert rec["status"] in ("ok", "failed", "unavailable")


def test_trials_never_overlap(smoke_run):
    """One trial at a time, although --cores 2 lets Snakemake run two jobs at once."""
    work, _ = smoke_run
    spans = sorted((rec["trial"]["started_unix"], rec["trial"]["finished_unix"], p.name)
                   for p in (work / "results/smoke/trials").rglob("*.json")
                   for rec in [json.loads(p.read_text())] if "started_unix" in rec["trial"])
    assert len(spans) >= 10
    for (s0, e0, a), (s1, e1, b) in zip(spans, spans[1:]):
        assert s1 >= e0, f"{a} ({s0:.2f}-{e0:.2f}) overlaps {b} ({s1:.2f}-{e1:.2f})"


def test_tables_have_columns_and_rows(smoke_run, plan):
    work, _ = smoke_run
    for exp, (_, trials) in plan.items():
        with open(work / f"results/smoke/tables/{exp}.csv") as f:
            rows = list(csv.DictReader(f))
        assert TABLE_COLUMNS <= set(rows[0]), exp
        assert sorted(r["trial"] for r in rows) == sorted(t["id"] for t in trials)
        ok = [r for r in rows if r["status"] == "ok"]
        assert ok, f"{exp}: no trial succeeded"
        for r in ok:
            if r["slowdown"]:
                assert float(r["slowdown"]) > 0 and float(r["pred_eq1"]) >= 1.0
            if r["profile"] == "none":  # a baseline is its own reference
                assert float(r["pred_eq1"]) == 1.0


def test_figures_are_images(smoke_run, plan):
    work, _ = smoke_run
    for exp in plan:
        png = (work / f"results/smoke/figures/{exp}.png").read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000, exp
        svg = (work / f"results/smoke/figures/{exp}.svg").read_text()
        assert "<svg" in svg and plan[exp][0]["figure"].split("/")[0] in svg, exp


def test_summary_lists_claims_with_measured_values(smoke_run, plan):
    work, _ = smoke_run
    with open(work / "results/smoke/tables/summary.csv") as f:
        rows = {r["id"]: r for r in csv.DictReader(f)}
    with open(paths.CONFIGS / "paper-claims.csv") as f:
        claims = {r["id"] for r in csv.DictReader(f)}
    assert set(rows) == claims
    measured = {c for e, _ in plan.values() for c in e.get("claims", [])}
    for cid in measured:
        assert rows[cid]["measured_here"], f"claim {cid} was measured but has no value"


def test_report_has_every_figure_and_the_summary(smoke_run, plan):
    work, _ = smoke_run
    html = (work / "results/smoke/report.html").read_text()
    assert html.count("data:image/png;base64,") >= len(plan)
    for exp, _ in plan.values():
        assert exp["figure"] in html and exp["title"] in html
    assert "fm_one_load" in html or "far exceeds proportional slowdown" in html


def test_rerun_has_nothing_to_do(smoke_run):
    work, _ = smoke_run
    r = snakemake(work, "-n", "smoke", timeout=120)
    assert r.returncode == 0
    assert "rule trial" not in r.stdout, r.stdout[-2000:]


EDITABLE = textwrap.dedent("""\
    figure: Fig. 98
    title: a scratch experiment for the rerun test
    paper_finding: none
    smoke: true
    engine: {model: phold, threads: 1, lps_per_pe: 50, end_time: 50, mode: fm}
    sweep: {profile: [none]}
    plot: {kind: line, x: profile, series: profile, y: wall_s}
    """)


def test_edited_experiment_reruns_exactly_its_trials(tmp_path):
    """Editing an experiment's engine options (here its end time) replans exactly that
    experiment's trials on the next run, although their ids did not change; an untouched
    experiment is not rerun. (Snakemake 9 compares input checksums: the trial's spec file
    is rewritten only when its options change.)"""
    work = tmp_path / "work"
    exps = {name: tmp_path / f"{name}.yaml" for name in ("edited", "untouched")}
    for p in exps.values():
        p.write_text(EDITABLE)
    only = "experiments=[" + ",".join(str(p) for p in exps.values()) + "]"
    targets = [f"results/smoke/trials/{name}/profnone-rep0.json" for name in exps]
    r = snakemake(work, "--cores", "2", "--config", only, "--", *targets, timeout=240)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    r = snakemake(work, "-n", "--config", only, "--", *targets, timeout=120)
    assert "rule trial:" not in r.stdout, r.stdout[-3000:]

    exps["edited"].write_text(EDITABLE.replace("end_time: 50", "end_time: 60"))
    r = snakemake(work, "-n", "--config", only, "--", *targets, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    planned = [ln.split(":", 1)[1].strip() for ln in r.stdout.splitlines() if ln.strip().startswith("output:")]
    assert [p for p in planned if "/trials/" in p] == [targets[0]], r.stdout[-3000:]


def test_slurm_profile_plans_the_same_trials(smoke_run, plan):
    """The SLURM executor plugin loads and plans every trial as a cluster job (dry run)."""
    work, _ = smoke_run
    r = snakemake(work, "-n", "--profile", "profiles/slurm", "--resources", "trial_slot=50",
                  "--forceall", "smoke", timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    n = sum(len(ts) for _, ts in plan.values())
    assert r.stdout.count("rule trial:") == n


def test_snakemake_report_has_the_figures(smoke_run, plan):
    """`snakemake --report` (Snakemake's own browsable report) carries every flagged figure."""
    work, _ = smoke_run
    out = work / "snakemake-report.html"
    r = snakemake(work, "smoke", "--report", str(out), timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    text = out.read_text(errors="replace")
    for exp in plan:
        assert f"{exp}.png" in text
