"""analysis.pooled on hand-made runs: each run's mean of a claim level is one value, so k runs
settle a claim that sits within one run's half-width of its bound, and a difference between
runs that each run's own interval cannot see widens the pooled interval instead of hiding."""
import csv
import json

import pytest

from analysis import pooled
from analysis.aggregate import COLUMNS
from analysis.claims import FIELDS, RESTS_ON_FAR
from test_reproducibility import _write_csv  # hand-made runs' tables, as there


def _run(tmp_path, name, ratios, verdict="inconclusive", scale="quick", far_ladm=()):
    """A finished run whose Fig. 7 no-load table has LADM / FM = ratios[i] in block i at one
    remote share (ladm_overhead: within 5% of 1), and a trial record naming its scale. The
    LADM runs of the blocks in far_ladm were kept though the host ran them far (ran_far)."""
    run = tmp_path / name
    _write_csv(run / "tables" / "summary.csv", FIELDS,
               [{"id": "ladm_overhead", "verdict": verdict, "value": "1", "ci_low": "0.9", "ci_high": "1.1",
                 "n": str(len(ratios))}])
    rows = []
    for i, q in enumerate(ratios):
        for mode, wall in (("fm", 3.0), ("ladm", 3.0 * q)):
            far = "1" if mode == "ladm" and i in far_ladm else "0"
            rows.append({"experiment": "fig07-no-load", "trial": f"mode{mode}-rep{i}", "status": "ok", "baseline": "0",
                         "rep": str(i), "mode": mode, "remote": "0.2", "profile": "none", "wall_s": str(wall),
                         "ran_far": far})
    _write_csv(run / "tables" / "fig07-no-load.csv", COLUMNS, rows)
    rec = run / "trials" / "fig07-no-load" / "modefm-rep0.json"
    rec.parent.mkdir(parents=True)
    rec.write_text(json.dumps({"trial": {"labels": {"scale": scale}}, "runner": {"version": "abc123"},
                               "machine": {"cpu_model": "Test CPU"}}))
    return run


def _row(rows, cid):
    return next(r for r in rows if r["id"] == cid)


def test_runs_each_inconclusive_settle_when_pooled(tmp_path):
    # Each run: 3 blocks spread +-6% around its mean, so t(2) = 4.30 gives a half-width of
    # 4.30 * 0.06 / sqrt(3) = 0.149: every run straddles 0.95 and 1.05 (inconclusive).
    # Run means 1.00, 1.01, 0.99, 1.00: sd 0.0082, t(3) = 3.18, half-width 0.013: [0.987, 1.013].
    runs = [_run(tmp_path, f"r{k}", [m - 0.06, m, m + 0.06]) for k, m in enumerate((1.00, 1.01, 0.99, 1.00))]
    rows, text = pooled.pool(runs)
    r = _row(rows, "ladm_overhead")
    assert r["verdict"] == "agrees" and r["runs"] == "4"
    assert float(r["ci_low"]) == pytest.approx(0.987, abs=0.001)
    assert float(r["ci_high"]) == pytest.approx(1.013, abs=0.001)
    assert r["run_verdicts"] == "; ".join(["inconclusive"] * 4)
    assert "| ladm_overhead | inconclusive: 1 [0.9, 1.1] n=3 |" in text
    assert "**agrees**: 1 [0.987, 1.013] over 4 runs (same again 0.94) |" in text
    assert "Every run judged alike: 1 of 1 claims." in text
    assert ("Each run against the next, in the order given: 1-1 of 1 claims alike (median 1 over 3 pairs), "
            "0 reversed (agrees in one, differs in the other); run verdicts that reverse the pooled one: 0.") in text


def test_run_to_run_counts_reversals_not_moves_to_or_from_inconclusive():
    """What a bar over consecutive runs, or against the pooled verdict, would count: a claim
    agreeing in one run and differing in the next is reversed; a move to or from
    inconclusive is a change, not a reversal. A claim some run's summary lacks is left out."""
    rows = [{"run_verdicts": "agrees; differs; differs", "verdict": "differs"},
            {"run_verdicts": "inconclusive; agrees; agrees", "verdict": "agrees"},
            {"run_verdicts": "absent; agrees; agrees", "verdict": "agrees"}]
    pairs, against_pool, judged = pooled.run_to_run(rows)
    assert judged == 2
    assert pairs == [(0, 1), (2, 0)]  # (alike, reversed) for runs 1-2 and 2-3
    assert against_pool == 1          # run 1's agrees against the pooled differs


def test_a_difference_between_runs_widens_the_pooled_interval(tmp_path):
    # Each run is tight (+-0.5%) and agrees on its own, but the runs' means wander 0.96-1.04:
    # pooled, the variation between runs counts and the claim is no longer settled.
    runs = [_run(tmp_path, f"r{k}", [m - 0.005, m, m + 0.005], verdict="agrees")
            for k, m in enumerate((0.96, 1.04, 0.97, 1.03))]
    rows, _ = pooled.pool(runs)
    r = _row(rows, "ladm_overhead")
    # sd of 0.96, 1.04, 0.97, 1.03 = 0.0408; t(3) 3.18 -> half-width 0.065 around 1.0
    assert r["verdict"] == "inconclusive"
    assert float(r["ci_high"]) - float(r["ci_low"]) == pytest.approx(2 * 3.182 * 0.0408 / 2, abs=0.002)


def test_a_pooled_verdict_its_far_runs_made_is_not_judged(tmp_path):
    """As in one run (analysis/claims.py, judge_level): each run kept one far LADM run that
    took 1.30x FM, so the runs' means (1.10-1.11) say 'differs'; their near blocks alone
    (1.00-1.01) say 'agrees', so the pooled level is inconclusive and says why."""
    runs = [_run(tmp_path, f"r{k}", [m, m + 0.01, 1.30], far_ladm={2}) for k, m in enumerate((1.00, 0.995, 1.005))]
    rows, _ = pooled.pool(runs)
    r = _row(rows, "ladm_overhead")
    assert r["verdict"] == "inconclusive", r
    assert RESTS_ON_FAR in r["reason"] and "without its 3 far run(s): 1" in r["reason"], r["reason"]
    assert r["reason"].endswith("agrees)"), r["reason"]
    assert float(r["value"]) == pytest.approx(1.1033, abs=0.001)  # the figure shown is still every run's


def test_a_pooled_verdict_the_near_runs_reach_too_stands(tmp_path):
    runs = [_run(tmp_path, f"r{k}", [m, m + 0.01, m + 0.02], far_ladm={2}) for k, m in enumerate((1.00, 0.995, 1.005))]
    r = _row(pooled.pool(runs)[0], "ladm_overhead")
    assert r["verdict"] == "agrees" and RESTS_ON_FAR not in r["reason"], r["reason"]


def test_a_claim_no_run_could_judge_keeps_the_runs_verdict(tmp_path):
    runs = [_run(tmp_path, f"r{k}", [1.0, 1.0]) for k in range(2)]
    rows, _ = pooled.pool(runs)
    # the hand-made runs have no table of Fig. 1: their summaries do not name fm_one_load
    assert _row(rows, "fm_one_load")["verdict"] == "absent"
    assert _row(rows, "fm_one_load")["runs"] == "0"


def test_runs_that_cannot_be_pooled_are_refused(tmp_path, capsys):
    a = _run(tmp_path, "a", [1.0, 1.0])
    assert pooled.main([str(a)]) == 2
    assert "at least two runs" in capsys.readouterr().err
    assert pooled.main([str(a), str(tmp_path / "nothing")]) == 2
    assert "no tables/summary.csv" in capsys.readouterr().err
    smoke = _run(tmp_path, "s", [1.0, 1.0], scale="smoke")
    assert pooled.main([str(a), str(smoke)]) == 2
    assert "different scales (quick, smoke)" in capsys.readouterr().err


def test_the_csv_is_written_where_asked(tmp_path, capsys):
    runs = [_run(tmp_path, f"r{k}", [1.0, 1.01, 0.99]) for k in range(3)]
    out = tmp_path / "pooled.csv"
    assert pooled.main([*map(str, runs), "--out", str(out)]) == 0
    rows = list(csv.DictReader(open(out)))
    assert [r["id"] for r in rows][:1] == ["fm_one_load"]
    assert _row(rows, "ladm_overhead")["runs"] == "3"
    text = capsys.readouterr().out
    assert "## 3 runs pooled" in text
    assert "With 3 runs the interval takes Student's t with 2 degree(s) of freedom (4.3 times" in text

