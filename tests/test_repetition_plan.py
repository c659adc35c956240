"""analysis.repetition_plan: the chance that two runs judge a claim alike, at multiples of
the repetitions that runs of the design measured. Off its bound, more repetitions settle a
verdict; on it, they unsettle it (few give a stable 'inconclusive', many a coin toss)."""
import csv
import json
import random

from analysis import repetition_plan, replication
from analysis.aggregate import COLUMNS
from analysis.sequential import SINGLE_LOOK, TWO_LOOKS

ABOVE_ONE = {"greater_than": 1}


def _levels(values, test=ABOVE_ONE):
    return [(test, values, len(values))]


def test_off_its_bound_more_repetitions_settle_the_verdict():
    rng = random.Random(1)
    vals = [rng.gauss(1.15, 0.15) for _ in range(5)]  # about one sd above the bound
    few, _ = repetition_plan.alike(_levels(vals), 0.95, 1.0)
    many, verdict = repetition_plan.alike(_levels(vals), 0.95, 4.0)
    assert many > few + 0.15 and many > 0.85 and verdict == "agrees", (few, many, verdict)


def test_on_its_bound_more_repetitions_unsettle_it():
    rng = random.Random(2)
    vals = [rng.gauss(0, 0.1) for _ in range(10)]
    m = sum(vals) / len(vals)
    vals = [1 + v - m for v in vals]  # the mean exactly on the bound
    few, verdict = repetition_plan.alike(_levels(vals), 0.95, 0.3)
    many, _ = repetition_plan.alike(_levels(vals), 0.95, 3.0)
    assert verdict == "inconclusive" and few > 0.8 and many < few - 0.1, (few, many)


def test_two_runs_share_one_truth_and_the_draws_are_seeded():
    vals = [1.05, 1.2, 0.98, 1.1]
    pairs = replication.paired_runs(vals, ABOVE_ONE, 0.95, 6, draws=500)
    assert pairs == replication.paired_runs(vals, ABOVE_ONE, 0.95, 6, draws=500)
    assert len(pairs) == 500 and {v for p in pairs for v in p} <= {"agrees", "differs", "inconclusive"}
    # no spread: both runs reach the one verdict every time
    assert set(replication.paired_runs([2.0, 2.0, 2.0], ABOVE_ONE, 0.95, 3, draws=50)) == {("agrees", "agrees")}


def test_levels_combine_as_a_claims_verdicts_do():
    assert replication.worst(["agrees", "inconclusive", "agrees"]) == "inconclusive"
    assert replication.worst(["inconclusive", "differs"]) == "differs"
    assert replication.worst(["agrees"]) == "agrees"
    # a level all but sure to differ makes the claim differ in both runs, whatever the other does
    p, verdict = repetition_plan.alike([(ABOVE_ONE, [1.5, 1.1, 1.3], 3), (ABOVE_ONE, [0.5, 0.52, 0.51], 3)],
                                       0.95, 1.0)
    assert verdict == "differs" and p > 0.99, p


def _fig07(run, ladm_walls):
    """fig07-no-load rows of ladm_overhead (LADM / FM time within 5% of 1, at each remote)."""
    run.joinpath("tables").mkdir(parents=True)
    with open(run / "tables" / "fig07-no-load.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        for rep, wall in enumerate(ladm_walls):
            for mode, t in (("fm", 2.0), ("ladm", wall)):
                w.writerow({k: "" for k in COLUMNS} | {
                    "experiment": "fig07-no-load", "trial": f"{mode}-{rep}", "status": "ok", "rep": str(rep),
                    "profile": "none", "setup": "cfs", "mode": mode, "remote": "0.1", "wall_s": str(t)})


def test_the_command_pools_runs_and_prints_each_claims_chances(tmp_path, capsys):
    _fig07(tmp_path / "a", [2.0, 2.02, 1.98])
    _fig07(tmp_path / "b", [2.01, 1.99, 2.0])
    assert repetition_plan.main([str(tmp_path / "a"), str(tmp_path / "b"), "--times", "0.5,1,2"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| ladm_overhead "))
    # 6 pooled values, 3 per run: n 3; within 1% of FM, far inside the 5% tolerance
    assert row.startswith("| ladm_overhead | fig07-no-load | 3 | ")
    assert "agre (n=3)" in row and "(n=6)" in row, row
    assert "At the runs' repetitions: expected alike" in out
    assert repetition_plan.main([str(tmp_path / "a"), str(tmp_path / "b"), "--times", "0.5,1,2"]) == 0
    assert capsys.readouterr().out == out  # seeded: the same tables, the same figures


def test_a_design_is_judged_claim_by_claim_and_priced(tmp_path, capsys):
    """--design: the claims of the experiments it names, their chance at the runs'
    repetitions and at the design's, the totals, and the cost by the quick estimate."""
    _fig07(tmp_path / "a", [2.0, 2.02, 1.98])
    _fig07(tmp_path / "b", [2.01, 1.99, 2.0])
    runs = [str(tmp_path / "a"), str(tmp_path / "b")]
    assert repetition_plan.main(runs + ["--design", "fig07-no-load=6"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| ladm_overhead "))
    assert row.startswith("| ladm_overhead | fig07-no-load | 3 | ") and row.endswith("agre | 6 |"), row
    chance_now, chance_then = (float(c.split()[0]) for c in row.split("|")[4:6])
    assert chance_then >= chance_now - 0.02, row  # off its bound: more repetitions do not unsettle it
    assert "This design: expected alike" in out
    per_rep = repetition_plan.minutes_per_repetition("quick")["fig07-no-load"]
    assert f"Its cost by the estimate: {3 * per_rep:+.1f} min of trials." in out, out


def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    _fig07(tmp_path / "a", [2.0, 2.02, 1.98])
    assert repetition_plan.main([str(tmp_path / "a"), "--times", "two"]) == 2
    assert repetition_plan.main([str(tmp_path / "a"), "--times", "0.5,2"]) == 2
    assert repetition_plan.main([str(tmp_path / "nothing")]) == 2
    assert repetition_plan.main([str(tmp_path / "a"), "--design", "fig07-no-load=1"]) == 2
    assert repetition_plan.main([str(tmp_path / "a"), "--design", "fig99=3"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 5 and all(line.startswith("repetition_plan: ") for line in err), err
    assert "must be positive and include 1" in err[1] and "no tables/ folder" in err[2]
    assert "at least 2 repetitions" in err[3] and "fig99: no claim of these runs reads it" in err[4]


def test_claims_are_judged_at_the_level_their_runs_judged_them(tmp_path):
    """The experiments judged at two looks' level are read from the runs' first-look
    decisions: a decision at TWO_LOOKS, or one from before decisions recorded their level
    (only two-look experiments had one then); not a top-up only precision asks for
    (SINGLE_LOOK), nor a decision that cannot be read."""
    run = tmp_path / "run"
    (run / "top-up").mkdir(parents=True)
    for name, decision in (("fig04-adm-threshold", {"top_up": True, "level": TWO_LOOKS}),
                           ("fig03-optimistic-vs-conservative", {"top_up": False}),
                           ("fig07-no-load", {"top_up": True, "level": SINGLE_LOOK})):
        (run / "top-up" / f"{name}.json").write_text(json.dumps(decision))
    (run / "top-up" / "fig15-pcs.json").write_text("{half-written")
    assert repetition_plan.two_looks_of([run]) == {"fig04-adm-threshold", "fig03-optimistic-vs-conservative"}
    assert repetition_plan.two_looks_of([tmp_path / "no-run"]) == set()
