"""A claim's reason says how many of the runs it read ran far (analysis/claim_kinds.py,
far_note): far runs stay in where fewer than 3 repetitions ran near (analysis/set_aside.py),
and a value made mostly of them is the far-placed host's (docs/reference-runs.md, the pair
at 17eab4c: fm_one_load 4.8 standard errors apart, 5 of 6 runs far in one run); and a
verdict only those far runs made is not given (analysis/claims.py, judge_level)."""
from analysis.claim_kinds import STATISTICS, far_note


def row(rep, wall_s, far_share="", ended_far="0", mode="fm"):
    return {"rep": str(rep), "wall_s": str(wall_s), "far_share": str(far_share), "ended_far": ended_far, "mode": mode}


def test_far_runs_are_counted_by_their_barrier_waits_else_by_the_probe_after():
    rows = [row(0, 2.0, 0.6), row(1, 2.1, 0.01), row(2, 2.2, "", "1"), row(3, 2.0, 0.05, "1")]
    # 0.6: far; 0.01 near; no share but ended far: far; a measured near share (under 10% with
    # a far probe after, workflows/placement.py FAR_AFTER_SHARE) wins over the probe
    assert far_note(rows) == "2 of 4 runs ran far"
    assert far_note([row(0, 2.0, 0.01), row(1, 2.0)]) == ""


def test_a_value_claims_reason_carries_it_and_reads_only_its_own_rows():
    rows = [row(r, 2.0 + r / 10, 0.9 if r else 0.0) for r in range(3)] + [row(0, 9.0, 0.9, mode="ladm")]
    s = STATISTICS["value"](rows, {"kind": "value", "measure": "wall_s", "of": {"mode": "fm"}}, "t")
    assert s.values == [2.0, 2.1, 2.2] and s.note == "2 of 3 runs ran far"
    near = [row(r, 2.0, 0.0) for r in range(3)]
    assert STATISTICS["value"](near, {"kind": "value", "measure": "wall_s", "of": {"mode": "fm"}}, "t").note == ""


# ---- a verdict must not rest on far runs (analysis/claims.py, judge_level) ----------------

VALUE = {"kind": "value", "measure": "wall_s", "of": {"mode": "fm"}}


def judged(rows, test):
    from analysis.claims import judge_part
    verdict, _ = judge_part(rows, {"statistic": VALUE, "test": test}, table=None)
    return verdict


def test_a_verdict_the_far_runs_made_is_not_judged():
    """Like the a40aa06 run C's Fig. 4: five far runs of seven stayed in (two near, under
    MIN_NEAR) and made the value 'differs'; the two near runs alone say 'agrees', so the
    level is inconclusive and says why, with both figures."""
    from analysis.claims import RESTS_ON_FAR
    rows = [row(0, 6.6, 0.01), row(1, 6.8, 0.02)] + [row(r, w, 0.9) for r, w in zip(range(2, 7), (12, 13, 14, 15, 12.5))]
    j = judged(rows, {"less_than": 8})
    assert j.verdict == "inconclusive" and RESTS_ON_FAR in j.reason, j.reason
    assert "5 of 7 runs ran far" in j.reason and "without its 5 far run(s): 6.7" in j.reason and "agrees" in j.reason
    assert round(j.value, 2) == 11.41  # the figure shown is still every run's


def test_a_verdict_the_near_runs_reach_alone_stands():
    rows = [row(0, 6.6, 0.01), row(1, 6.8, 0.02), row(2, 6.7, 0.01), row(3, 7.4, 0.9)]
    j = judged(rows, {"less_than": 8})
    assert j.verdict == "agrees" and "1 of 4 runs ran far" in j.reason, j.reason


def test_with_fewer_than_two_near_runs_the_verdict_stands_and_counts_them():
    """Nothing to check it against: the reason counts the far runs for the reader."""
    rows = [row(0, 6.6, 0.01), row(1, 12.0, 0.9), row(2, 12.4, 0.9)]
    j = judged(rows, {"greater_than": 8})
    assert j.verdict == "inconclusive"  # wide with three values: the rule is not needed here
    rows = [row(0, 11.9, 0.01), row(1, 12.0, 0.9), row(2, 12.1, 0.9)]
    j = judged(rows, {"greater_than": 8})
    assert j.verdict == "agrees" and "2 of 3 runs ran far" in j.reason, j.reason


def test_near_runs_only_are_judged_as_before():
    rows = [row(r, 6.6 + r / 100, 0.01) for r in range(4)]
    assert judged(rows, {"less_than": 8}).verdict == "agrees"
    assert judged(rows, {"greater_than": 8}).verdict == "differs"
