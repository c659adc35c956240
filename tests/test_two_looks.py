"""The two-look sequential design (analysis/sequential.py): t quantiles at any level, claims
on two-look experiments judged at 97.5%, the first look's decision (analysis/top_up.py) on
synthetic tables, and the workflow running the top-up repetitions only where a claim is
undecided, with real trials."""
import csv
import json
import math
import subprocess
import sys
import textwrap

import pytest
import yaml

from airbase import paths
from analysis import claims, top_up
from analysis.aggregate import COLUMNS
from analysis.sequential import SINGLE_LOOK, TWO_LOOKS, interval_text
from analysis.stats import mean_ci, t_quantile
from trial_helpers import run_workflow

# Student's t, two-sided 95%, 1..30 degrees of freedom (any statistics table)
T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
       2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
       2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def test_t_quantiles_match_the_tables():
    for df, t in enumerate(T95, start=1):
        assert t_quantile(0.95, df) == pytest.approx(t, abs=6e-4), df
    # two-sided 97.5% (one-sided 0.9875) and 99%
    for df, t in {1: 25.452, 2: 6.205, 3: 4.177, 5: 3.163, 10: 2.634}.items():
        assert t_quantile(TWO_LOOKS, df) == pytest.approx(t, abs=1e-3), df
    assert t_quantile(0.99, 1) == pytest.approx(63.657, abs=1e-3)
    assert t_quantile(0.95, 100000) == pytest.approx(1.960, abs=1e-3)


def test_mean_ci_level():
    m, h95, n = mean_ci([1.0, 2.0, 3.0])
    _, h975, _ = mean_ci([1.0, 2.0, 3.0], TWO_LOOKS)
    assert (m, n) == (2.0, 3) and h95 == pytest.approx(4.303 / math.sqrt(3), abs=1e-3)
    assert h975 == pytest.approx(6.205 / math.sqrt(3), abs=1e-3)


def row(**kw):
    r = {c: "" for c in COLUMNS}
    r.update(status="ok", baseline="0", setup="cfs", profile="none", mode="fm", threads="2", cores="2")
    r.update({k: str(v) for k, v in kw.items()})
    return r


def write_table(path, values):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        for rep, v in enumerate(values):
            w.writerow(row(rep=rep, wall_s=v))


def doc_with(test, table="fig03-optimistic-vs-conservative"):
    return {"platforms": {}, "claims": [{
        "id": "synthetic", "figure": "Fig. 3", "claim": "wall time above a bound",
        "paper": [{"value": "-", "platform": "-"}], "table": table,
        "statistic": {"kind": "value", "measure": "wall_s", "label": "wall time"}, "test": test}]}


def test_two_look_claims_get_wider_intervals(tmp_path):
    """Values whose 95% interval clears the bound but whose 97.5% one does not: agrees on a
    one-look experiment, inconclusive on a two-look one, and the summary says which."""
    table = tmp_path / "fig03-optimistic-vs-conservative.csv"
    write_table(table, [1.10, 1.20, 1.30])  # mean 1.2, sd 0.1: 95% [0.95, 1.45], 97.5% [0.84, 1.56]
    doc = doc_with({"greater_than": 0.9})
    one, = claims.summarise(doc, [table])
    two, = claims.summarise(doc, [table], {"fig03-optimistic-vs-conservative"})
    assert one["verdict"] == "agrees" and one["interval"] == interval_text(SINGLE_LOOK) == claims.INTERVAL
    assert two["verdict"] == "inconclusive" and two["interval"] == interval_text(TWO_LOOKS)
    assert "97.5%" in two["interval"] and "5% overall" in two["interval"]
    assert float(two["ci_low"]) == pytest.approx(1.2 - 6.205 * 0.1 / math.sqrt(3), abs=1e-3)


@pytest.mark.parametrize("values, test, verdict, more", [
    ([1.0, 1.2, 1.1], {"greater_than": 1.1}, "inconclusive", True),   # straddles
    ([1.0, 1.01, 1.02], {"greater_than": 0.5}, "agrees", False),
    ([1.0, 1.01, 1.02], {"greater_than": 5}, "differs", False),
    ([1.0], {"greater_than": 0.5}, "inconclusive", True),             # one repetition left
])
def test_first_look_decides_the_top_up(tmp_path, values, test, verdict, more):
    table = tmp_path / "fig03-optimistic-vs-conservative.csv"
    write_table(table, values)
    d = top_up.decide(doc_with(test), table, "fig03-optimistic-vs-conservative")
    assert d["top_up"] is more and d["claims"]["synthetic"]["verdict"] == verdict
    assert d["level"] == TWO_LOOKS


def test_claims_of_other_experiments_never_ask(tmp_path):
    table = tmp_path / "fig03-optimistic-vs-conservative.csv"
    write_table(table, [1.0, 1.2, 1.1])
    d = top_up.decide(doc_with({"greater_than": 1.1}, table="fig15-pcs"), table,
                      "fig03-optimistic-vs-conservative")
    assert d == {"experiment": "fig03-optimistic-vs-conservative", "level": TWO_LOOKS, "top_up": False,
                 "claims": {}}


# The figure of write_table's rows: one point (profile none) of wall_s.
PLOT = {"kind": "line", "x": "profile", "series": "mode", "y": "wall_s"}


@pytest.mark.parametrize("values, bar, more", [
    # mean 2.0, sd 0.1, n 3: half-width 4.303 * 0.1 / sqrt(3) = 0.248, 12.4% of the point
    ([1.9, 2.0, 2.1], 0.15, False),
    ([1.9, 2.0, 2.1], 0.12, True),
    ([2.0], 0.15, True),            # no point with two runs: nothing says it is precise
])
def test_first_look_asks_for_precision(tmp_path, values, bar, more):
    """top_up_half_width: the repetitions run when the figure's median relative half-width
    exceeds the bar, even with every claim decided (here none reads the experiment)."""
    table = tmp_path / "fig07-no-load.csv"
    write_table(table, values)
    d = top_up.decide(doc_with({"greater_than": 0}, table="fig15-pcs"), table, "fig07-no-load", bar, PLOT)
    assert d["top_up"] is more and d["claims"] == {}
    p = d["precision"]
    assert p["asks"] is more and p["bar"] == bar
    if len(values) > 1:
        assert p["median_half_width"] == pytest.approx(0.124, abs=5e-4) and p["points"] == 1
    else:
        assert p["median_half_width"] is None and p["points"] == 0


def test_an_undecided_claim_still_asks_when_the_figure_is_precise(tmp_path):
    table = tmp_path / "fig03-optimistic-vs-conservative.csv"
    write_table(table, [1.0, 1.2, 1.1])
    d = top_up.decide(doc_with({"greater_than": 1.1}), table, "fig03-optimistic-vs-conservative", 10.0, PLOT)
    assert d["top_up"] is True and d["precision"]["asks"] is False


@pytest.mark.parametrize("bar, more", [(10.0, False), (0.12, True)])
def test_a_precision_only_top_up_ignores_undecided_claims(tmp_path, bar, more):
    """top_up_on_undecided: false: an undecided claim does not ask, only the figure's
    half-width (12.4% here) does, and the claims are judged at one look's 95%: the values
    whose 95% interval clears 0.9 agree, where two looks' 97.5% would leave them undecided."""
    table = tmp_path / "fig03-optimistic-vs-conservative.csv"
    write_table(table, [1.10, 1.20, 1.30])
    straddles = top_up.decide(doc_with({"greater_than": 1.1}), table, "fig03-optimistic-vs-conservative",
                              bar, PLOT, precision_only=True)
    assert straddles["claims"]["synthetic"]["verdict"] == "inconclusive"
    assert straddles["top_up"] is more and straddles["level"] == SINGLE_LOOK
    clears = top_up.decide(doc_with({"greater_than": 0.9}), table, "fig03-optimistic-vs-conservative",
                           bar, PLOT, precision_only=True)
    assert clears["claims"]["synthetic"]["verdict"] == "agrees"
    with pytest.raises(ValueError):
        top_up.decide(doc_with({"greater_than": 0.9}), table, "fig03-optimistic-vs-conservative", precision_only=True)


def test_top_up_cli_refuses_precision_only_without_a_bar(tmp_path):
    table = tmp_path / "fig07-no-load.csv"
    write_table(table, [1.0, 1.1])
    r = subprocess.run([sys.executable, "-m", "analysis.top_up", "--experiment", "fig07-no-load", "--claims",
                        str(paths.CONFIGS / "claims.yaml"), "--table", str(table), "--out", str(tmp_path / "d.json"),
                        "--precision-only"], cwd=paths.ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--precision-only needs --half-width-over" in r.stderr
    assert not (tmp_path / "d.json").exists()


def test_top_up_cli_refuses_a_bar_without_its_plot(tmp_path):
    table = tmp_path / "fig15-pcs.csv"
    write_table(table, [1.0, 1.1])
    for extra in (["--half-width-over", "0.15"], ["--half-width-over", "0", "--plot", "fig15-pcs"],
                  ["--half-width-over", "0.15", "--plot", str(tmp_path / "none.yaml")]):
        r = subprocess.run([sys.executable, "-m", "analysis.top_up", "--experiment", "fig15-pcs", "--claims",
                            str(paths.CONFIGS / "claims.yaml"), "--table", str(table), "--out",
                            str(tmp_path / "d.json"), *extra], cwd=paths.ROOT, capture_output=True, text=True, timeout=60)
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and r.stderr.startswith("top_up: "), (extra, r.stderr)
        assert not (tmp_path / "d.json").exists()


def test_top_up_cli_refuses_a_misnamed_table(tmp_path):
    table = tmp_path / "first-look.csv"
    write_table(table, [1.0, 1.1])
    r = subprocess.run([sys.executable, "-m", "analysis.top_up", "--experiment", "fig15-pcs", "--claims",
                        str(paths.CONFIGS / "claims.yaml"), "--table", str(table), "--out", str(tmp_path / "d.json")],
                       cwd=paths.ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "fig15-pcs.csv" in r.stderr
    assert not (tmp_path / "d.json").exists()


# ---- the workflow, with real trials --------------------------------------------------------
# Two scratch experiments under the names of shipped ones (claims may only read those), each
# read by one claim on the repetition number itself: with 2 repetitions (0, 1) "rep > 0.5"
# straddles its bound whatever the machine does, "rep > -100" agrees.

def scratch(figure, extra=""):
    return extra + "\n" + textwrap.dedent(f"""\
        figure: {figure}
        title: a scratch two-look experiment
        paper_finding: none
        smoke: true
        engine: {{model: phold, threads: 1, lps_per_pe: 50, end_time: 50, mode: fm}}
        sweep: {{profile: [none]}}
        reps: {{smoke: 2, quick: 2, paper: 2}}
        top_up: {{smoke: 1, quick: 1, paper: 1}}
        plot: {{kind: line, x: profile, series: profile, y: wall_s}}
        """)


def rep_claim(cid, table, bound):
    return {"id": cid, "figure": "Fig. 3", "claim": "the repetition number exceeds a bound",
            "paper": [{"value": "-", "platform": "-"}], "table": table,
            "statistic": {"kind": "value", "measure": "rep", "label": "repetition"},
            "test": {"greater_than": bound}}


def test_workflow_adds_repetitions_only_where_a_claim_is_undecided(tmp_path):
    """... or, with top_up_half_width, where the figure is less precise than asked: a third
    experiment that no claim reads asks for a median half-width under 1e-9 (two runs' wall
    times are never that alike) and gets its top-up. The decided one asks only by precision
    (top_up_on_undecided: false) with a bar of 1000 (100000%): a second claim on it, undecided,
    does not ask either, and both its claims keep one look's 95%."""
    undecided, decided, imprecise = "fig03-optimistic-vs-conservative", "fig15-pcs", "fig07-no-load"
    for name, fig, extra in ((undecided, "Fig. 3", ""),
                             (decided, "Fig. 15", "top_up_half_width: 1000\ntop_up_on_undecided: false"),
                             (imprecise, "Fig. 7", "top_up_half_width: 1.0e-9")):
        (tmp_path / f"{name}.yaml").write_text(scratch(fig, extra))
    doc = yaml.safe_load((paths.CONFIGS / "claims.yaml").read_text())
    doc["claims"] = [rep_claim("undecided", undecided, 0.5), rep_claim("decided", decided, -100),
                     rep_claim("undecided_alone", decided, 0.5)]
    (tmp_path / "claims.yaml").write_text(yaml.safe_dump(doc))
    work = tmp_path / "work"
    config = ["scale=smoke", f"claims={tmp_path / 'claims.yaml'}",
              "experiments=[" + ",".join(str(tmp_path / f"{n}.yaml") for n in (undecided, decided, imprecise)) + "]"]
    run = lambda *a: run_workflow([sys.executable, "-m", "snakemake", "-d", str(work), *a, "--config", *config,
                                   "--", "results/smoke/tables/summary.csv"], cwd=paths.ROOT)
    r = run("--cores", "2")
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    # the estimate names the possible top-ups, and why (here one experiment asks for precision)
    assert "up to 3 more" in out and "where a claim is undecided or a figure less precise than asked" in out
    trials = work / "results/smoke/trials"
    assert sorted(p.name for p in (trials / undecided).glob("*.json")) == [f"profnone-rep{i}.json" for i in range(3)]
    assert sorted(p.name for p in (trials / decided).glob("*.json")) == [f"profnone-rep{i}.json" for i in range(2)]
    first = {n: json.loads((work / f"results/smoke/top-up/{n}.json").read_text()) for n in (undecided, decided)}
    assert first[undecided]["top_up"] is True and first[undecided]["claims"]["undecided"]["verdict"] == "inconclusive"
    assert first[decided]["top_up"] is False and first[decided]["claims"]["decided"]["verdict"] == "agrees"
    assert first[decided]["claims"]["undecided_alone"]["verdict"] == "inconclusive"  # and did not ask
    assert first[decided]["precision"]["asks"] is False and first[decided]["precision"]["points"] == 1
    assert first[decided]["level"] == SINGLE_LOOK and first[undecided]["level"] == TWO_LOOKS
    assert "precision" not in first[undecided]
    assert sorted(p.name for p in (trials / imprecise).glob("*.json")) == [f"profnone-rep{i}.json" for i in range(3)]
    precision = json.loads((work / f"results/smoke/top-up/{imprecise}.json").read_text())
    assert precision["top_up"] is True and precision["claims"] == {}
    assert precision["precision"]["asks"] is True and precision["precision"]["median_half_width"] > 1e-9
    assert f"{imprecise}: first look: no claims read it; median half-width" in out
    with open(work / "results/smoke/tables/summary.csv") as f:
        summary = {r["id"]: r for r in csv.DictReader(f)}
    assert summary["undecided"]["n"] == "3" and summary["undecided"]["verdict"] == "inconclusive"
    assert summary["decided"]["n"] == "2" and summary["decided"]["verdict"] == "agrees"
    assert summary["undecided"]["interval"] == interval_text(TWO_LOOKS)
    assert summary["decided"]["interval"] == summary["undecided_alone"]["interval"] == interval_text(SINGLE_LOOK)
    assert summary["undecided_alone"]["n"] == "2" and summary["undecided_alone"]["verdict"] == "inconclusive"
    assert f"{decided}: first look: decided agrees; undecided_alone inconclusive; median half-width" in out
    assert "only the precision asks -> no repetitions added" in out
    with open(work / f"results/smoke/tables/{undecided}.csv") as f:
        assert sorted(r["rep"] for r in csv.DictReader(f)) == ["0", "1", "2"]
    r = run("-n")
    assert r.returncode == 0 and "rule trial" not in r.stdout, (r.stdout + r.stderr)[-2000:]
