"""analysis/placement_matched.py, the what-if of far baselines for far loaded runs, on
synthetic records and rows (the arithmetic is the point; a real run's figures are in
docs/reference-runs.md)."""
import pytest

from analysis import placement_matched as pm


def no_load(remote, attempts, kept=None, status="ok"):
    nz = {"attempts": attempts}
    if kept is not None:
        nz["kept_attempt"] = kept
    return {"status": status, "profile": {"processes": []}, "engine": {"config": {"remote": remote}}, "noise": nz}


def attempt(window_s, far_share, ran_far=None, disturbed=False):
    return {"window_s": window_s, "far_share": far_share, "disturbed": disturbed,
            "ran_far": far_share >= 0.25 if ran_far is None else ran_far}


def test_a_far_attempt_beside_the_near_run_kept_gives_the_extra_time_per_unit_of_share():
    # 3.0 s at share 1.0 against 2.0 s at share 0: 50% more per unit of share
    recs = [no_load(0.2, [attempt(3.0, 1.0), attempt(2.0, 0.0)]),
            # share 0.6 against 0.1: (2.5 / 2.0 - 1) / 0.5 = 0.5
            no_load(0.2, [attempt(2.5, 0.6), attempt(2.0, 0.1)], kept=1)]
    assert pm.penalty_pairs(recs) == {"0.2": [pytest.approx(0.5), pytest.approx(0.5)]}


def test_attempts_that_say_nothing_of_placement_are_left_out():
    recs = [
        no_load(0.2, [attempt(2.0, 0.0)]),                                    # never re-run
        no_load(0.2, [attempt(3.0, 1.0), attempt(2.0, 0.9, ran_far=True)]),   # the run kept was far too
        no_load(0.2, [attempt(3.0, 0.3), attempt(2.0, 0.0)]),                 # not far enough to measure
        no_load(0.2, [attempt(9.0, 1.0, disturbed=True), attempt(2.0, 0.0)]),  # re-run for other work
        no_load(0.2, [attempt(3.0, 1.0), attempt(2.0, 0.0)], status="error"),
        {**no_load(0.2, [attempt(3.0, 1.0), attempt(2.0, 0.0)]), "profile": {"processes": [{"kind": "cpu"}]}},
    ]
    assert pm.penalty_pairs(recs) == {}
    assert pm.penalty_per_share({}) == {}


def test_a_level_with_few_pairs_takes_every_levels_median():
    k = pm.penalty_per_share({"0": [0.2], "0.2": [0.5, 0.6, 0.4]})
    assert k == {None: pytest.approx(0.45), "0": pytest.approx(0.45), "0.2": pytest.approx(0.5)}


def test_only_loaded_runs_judged_far_are_adjusted_by_their_own_share():
    rows = [
        {"profile": "cpu-1", "remote": "0.2", "slowdown": "3.0", "far_share": "1.0", "ran_far": "1"},
        {"profile": "cpu-1", "remote": "0.2", "slowdown": "2.0", "far_share": "0.1", "ran_far": "0"},
        {"profile": "none", "remote": "0.2", "slowdown": "1.0", "far_share": "1.0", "ran_far": "1"},
        {"profile": "cpu-1", "remote": "0", "slowdown": "3.0", "far_share": "0.5", "ran_far": "1"},
        {"profile": "cpu-1", "remote": "0.2", "slowdown": "", "far_share": "", "ran_far": ""},
    ]
    out, n = pm.matched(rows, {None: 0.2, "0.2": 0.5})
    assert n == 2
    assert [r["slowdown"] for r in out] == [pytest.approx(2.0), "2.0", "1.0", pytest.approx(3.0 / 1.1), ""]
    assert rows[0]["slowdown"] == "3.0"  # the table's rows are not changed


def test_the_cli_refuses_a_folder_without_a_finished_run(tmp_path, capsys):
    assert pm.main([str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "no tables/summary.csv" in err
    assert pm.main([]) == 2
