"""Experiment files and the workflow configuration: every shipped file validates and expands
at every scale; broken files fail with a message naming the file and the field."""
import subprocess
import sys
import textwrap

import pytest

from workflows import paths
from workflows.experiments import (ExperimentError, all_trials, expand, list_experiments,
                                   load_config, load_experiment)

GOOD = textwrap.dedent("""\
    figure: Fig. 99
    title: a test experiment
    paper_finding: none
    engine: {model: phold, threads: cores, end_time: 100}
    sweep: {mode: [fm, ladm], profile: [none, cpu-1]}
    plot: {kind: line, x: mode, series: profile, y: slowdown}
    """)


def write(tmp_path, text, name="figtest.yaml"):
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.mark.parametrize("scale", ["smoke", "quick", "paper"])
def test_shipped_experiments_expand(scale):
    cfg = load_config()
    plan = all_trials(cfg, scale)
    assert plan, "no experiment at this scale"
    for name, (exp, trials) in plan.items():
        assert exp["figure"].startswith(("Fig.", "Table")), name
        ids = [t["id"] for t in trials]
        assert len(ids) == len(set(ids)), f"{name}: duplicate trial ids"
        assert all(t["argv"] and t["argv"][0].startswith("--") for t in trials)
        # every loaded trial has a no-load baseline with the same engine options
        base = {str(sorted(t["engine"].items())) for t in trials if t["profile"] == "none"}
        for t in trials:
            if t["profile"] != "none" and exp["plot"]["kind"] != "timeline":
                assert str(sorted(t["engine"].items())) in base, f"{name}: {t['id']} has no baseline"


def test_paper_figures_covered():
    figures = " ".join(load_experiment(n)["figure"] for n in list_experiments())
    for fig in ["Fig. 1", "Fig. 3", "Fig. 4", "Fig. 5", "Fig. 7", "Fig. 8", "Fig. 9", "Fig. 10",
                "Fig. 11", "Fig. 13", "Fig. 15", "Fig. 16", "Fig. 17", "Fig. 18"]:
        assert fig in figures


def test_smoke_has_the_required_experiments():
    smoke = all_trials(load_config(), "smoke")
    kinds = {e["plot"]["kind"] for e, _ in smoke.values()}
    assert "timeline" in kinds
    profiles = {t["profile"] for _, ts in smoke.values() for t in ts}
    modes = {t["engine"].get("mode") for _, ts in smoke.values() for t in ts}
    assert {"none", "cpu-1"} <= profiles and any(p.startswith("onoff") for p in profiles)
    assert {"fm", "ladm"} <= modes


def test_good_file_expands_with_baselines(tmp_path):
    exp = load_experiment(write(tmp_path, GOOD))
    trials = expand(exp, "quick", {"reps": {"smoke": 1, "quick": 2, "paper": 10}}, cores=2)
    assert len(trials) == 2 * 2 * 2
    assert {t["engine"]["threads"] for t in trials} == {2}
    assert all("--end-time" in t["argv"] for t in trials)


@pytest.mark.parametrize("edit, field", [
    (lambda s: s.replace("figure: Fig. 99\n", ""), "'figure' is a required property"),
    (lambda s: s.replace("kind: line", "kind: pie"), "plot.kind"),
    (lambda s: s + "colour: red\n", "colour"),
    (lambda s: s.replace("mode: [fm, ladm]", "mode: fm"), "sweep.mode"),
    (lambda s: s.replace("x: mode", "x: epg"), "plot.x"),
    (lambda s: s.replace("end_time: 100", "end_time: 100, profile: cpu-1"), "engine.profile"),
    (lambda s: s.replace("sweep: {", "sweep: {Bad-Name: [1], "), "sweep"),
    (lambda s: s + "reps: 0\n", "reps"),
])
def test_broken_experiment_names_file_and_field(tmp_path, edit, field):
    p = write(tmp_path, edit(GOOD))
    with pytest.raises(ExperimentError) as e:
        load_experiment(p)
    assert str(p) in str(e.value) and field in str(e.value)


def test_not_yaml(tmp_path):
    p = write(tmp_path, "figure: [unclosed\n")
    with pytest.raises(ExperimentError, match=f"{p}: not valid YAML"):
        load_experiment(p)


def test_broken_config_names_field(tmp_path):
    p = write(tmp_path, "scale: huge\nreps: {smoke: 1, quick: 3, paper: 10}\n"
                        "trial_timeout_s: {smoke: 1, quick: 1, paper: 1}\nclaims: x.csv\n", "config.yaml")
    with pytest.raises(ExperimentError) as e:
        load_config(p)
    assert str(p) in str(e.value) and "scale" in str(e.value)


def test_snakemake_refuses_a_bad_config_at_start(tmp_path):
    """The Snakefile validates configs/config.yaml (with overrides) before planning anything."""
    r = subprocess.run([sys.executable, "-m", "snakemake", "-n", "-d", str(tmp_path),
                        "smoke", "--config", "scale=huge"],
                       capture_output=True, text=True, timeout=120, cwd=paths.ROOT)
    out = r.stdout + r.stderr
    assert r.returncode != 0
    assert "config.yaml (with any --config overrides)" in out  # the file, in the error itself
    assert "scale" in out and "huge" in out


def test_snakemake_refuses_a_broken_experiment_at_start(tmp_path):
    """A broken experiment file stops the workflow before any trial, naming file and field."""
    p = write(tmp_path, GOOD.replace("kind: line", "kind: pie"))
    r = subprocess.run([sys.executable, "-m", "snakemake", "-n", "-d", str(tmp_path / "work"),
                        "smoke", "--config", f"experiments=[{p}]"],
                       capture_output=True, text=True, timeout=120, cwd=paths.ROOT)
    out = r.stdout + r.stderr
    assert r.returncode != 0
    assert f"{p}: plot.kind: 'pie' is not one of" in out, out[-2000:]
    assert "rule trial" not in out


def test_time_budgets():
    """quick: the whole set in under 45 minutes on 2 cores; smoke: a couple of minutes."""
    from workflows.experiments import estimate_minutes
    cfg = load_config()
    assert estimate_minutes(all_trials(cfg, "quick")) < 40
    assert estimate_minutes(all_trials(cfg, "smoke")) < 2


def test_docs_example_experiment_validates(tmp_path):
    """The example in docs/workflow.md ('Adding an experiment') is a valid experiment."""
    doc = (paths.ROOT / "docs" / "workflow.md").read_text()
    block = doc.split("```yaml\n", 1)[1].split("```", 1)[0]
    exp = load_experiment(write(tmp_path, block, "fig08-mine.yaml"))
    trials = expand(exp, "quick", load_config(), cores=2)
    assert {t["engine"]["mode"] for t in trials} == {"fm", "adm", "ladm"}
