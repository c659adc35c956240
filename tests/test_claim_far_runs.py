"""A claim's reason says how many of the runs it read ran far (analysis/claim_kinds.py,
far_note): far runs stay in where fewer than 3 repetitions ran near (analysis/set_aside.py),
and a value made mostly of them is the far-placed host's (docs/reference-runs.md, the pair
at 17eab4c: fm_one_load 4.8 standard errors apart, 5 of 6 runs far in one run)."""
from analysis.claim_kinds import STATISTICS, far_note


def row(rep, wall_s, far_share="", ended_far="0", mode="fm"):
    return {"rep": str(rep), "wall_s": str(wall_s), "far_share": str(far_share), "ended_far": ended_far, "mode": mode}


def test_far_runs_are_counted_by_their_barrier_waits_else_by_the_probe_after():
    rows = [row(0, 2.0, 0.6), row(1, 2.1, 0.01), row(2, 2.2, "", "1"), row(3, 2.0, 0.1, "1")]
    # 0.6: far; 0.01 near; no share but ended far: far; a measured near share wins over the probe
    assert far_note(rows) == "2 of 4 runs ran far"
    assert far_note([row(0, 2.0, 0.01), row(1, 2.0)]) == ""


def test_a_value_claims_reason_carries_it_and_reads_only_its_own_rows():
    rows = [row(r, 2.0 + r / 10, 0.9 if r else 0.0) for r in range(3)] + [row(0, 9.0, 0.9, mode="ladm")]
    s = STATISTICS["value"](rows, {"kind": "value", "measure": "wall_s", "of": {"mode": "fm"}}, "t")
    assert s.values == [2.0, 2.1, 2.2] and s.note == "2 of 3 runs ran far"
    near = [row(r, 2.0, 0.0) for r in range(3)]
    assert STATISTICS["value"](near, {"kind": "value", "measure": "wall_s", "of": {"mode": "fm"}}, "t").note == ""
