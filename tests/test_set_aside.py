"""Far runs set aside (analysis/set_aside.py) on hand-made table rows: only where at least
MIN_NEAR repetitions of the same trial ran near, by placement alone (never by time), and the
figures, claims and caption then leave them out of the numbers but count them."""
import html

from analysis import set_aside
from analysis.caption import noise_sentence
from analysis.claim_kinds import Table
from analysis.figures import grouped
from analysis.set_aside import MIN_NEAR, SET_ASIDE, set_aside_far, unmark_like_near_repetitions


def row(rep, wall, far_share=0.02, ended_far=0, trial="profcpu-1-remo0.1", status="ok"):
    return {"experiment": "fig01-fm-slowdown", "trial": f"{trial}-rep{rep}", "status": status, "reason": "",
            "rep": rep, "wall_s": wall, "far_share": far_share, "ended_far": ended_far, "profile": "cpu-1",
            "setup": "cfs", "baseline": "0", "remote": "0.1", "mode": "fm", "slowdown": wall / 2.5}


def test_far_runs_go_where_enough_near_repetitions_stand():
    rows = [row(r, 5.0) for r in range(MIN_NEAR)] + [row(7, 9.0, far_share=0.9), row(8, 4.0, far_share="", ended_far=1)]
    set_aside_far(rows)
    assert [r["status"] for r in rows] == ["ok"] * MIN_NEAR + [SET_ASIDE, SET_ASIDE]
    assert "90% of its barrier waits at far speed" in rows[-2]["reason"] and "far at its end" in rows[-1]["reason"]
    # by placement, not by time: the far run that was fast goes too


def test_too_few_near_repetitions_keep_every_run():
    rows = [row(r, 5.0) for r in range(MIN_NEAR - 1)] + [row(7, 9.0, far_share=0.9)]
    assert all(r["status"] == "ok" for r in set_aside_far(rows))


def test_repetitions_of_another_trial_do_not_count():
    rows = [row(r, 5.0, trial="profcpu-1-remo0.4") for r in range(MIN_NEAR)] + [row(7, 9.0, far_share=0.9)]
    assert all(r["status"] == "ok" for r in set_aside_far(rows))


def test_failed_runs_are_neither_near_nor_set_aside():
    rows = [row(r, 5.0, status="failed") for r in range(MIN_NEAR)] + [row(7, 9.0, far_share=0.9)]
    assert [r["status"] for r in set_aside_far(rows)] == ["failed"] * MIN_NEAR + ["ok"]


def as_csv(rows):
    return [{k: str(v) for k, v in r.items()} for r in rows]


def test_figures_claims_and_caption_leave_them_out_of_the_numbers():
    rows = as_csv(set_aside_far([row(r, 5.0) for r in range(MIN_NEAR)] + [row(9, 9.0, far_share=1.0)]))
    (_, mean, _, n), = grouped(rows, "remote", None, "wall_s")[""]
    assert (mean, n) == (5.0, MIN_NEAR)
    assert len(Table("fig01-fm-slowdown.csv", rows).rows) == MIN_NEAR
    for r in rows:
        r.update(disturbed="0", reruns="0", far_reruns="0")
    text = html.unescape(noise_sentence(rows))
    assert "1 far run(s) were set aside" in text and "failed" not in text
    assert set_aside.SET_ASIDE in text


def test_a_run_marked_far_like_its_near_repetitions_is_not_set_aside():
    """The runner marks a configuration's first run far by its share alone (it has no usual
    share yet): loaded ADM at 0.26 beside near repetitions at 0.26-0.30 (the 36df169 pair's
    Fig. 4). Held against them it ran as they did and stays; a run far beyond them (0.6)
    and one far by the probe after it (no share) are still set aside; a trial whose every
    run was marked keeps the runner's verdicts."""
    rows = [row(0, 8.9, far_share=0.2646) | {"ran_far": 1}] + [
        row(r, 8.8, far_share=s) | {"ran_far": 0} for r, s in ((1, 0.2769), (2, 0.276), (3, 0.2759), (4, 0.2816))]
    rows += [row(5, 12.0, far_share=0.6) | {"ran_far": 1}, row(6, 9.0, far_share="", ended_far=1)]
    set_aside_far(unmark_like_near_repetitions(rows))
    assert [r["ran_far"] for r in rows[:5]] == [0] * 5
    assert [r["status"] for r in rows] == ["ok"] * 5 + [SET_ASIDE, SET_ASIDE]
    alone = [row(r, 8.9, far_share=0.27, trial="profcpu-1-remo0.4") | {"ran_far": 1} for r in range(3)]
    assert [r["ran_far"] for r in unmark_like_near_repetitions(alone)] == [1, 1, 1]


def test_a_run_with_a_far_probe_after_it_is_held_to_the_lower_share():
    """With a far probe after it a run is far from 10% of its waits (placement.FAR_AFTER_SHARE):
    like run A of the 58275f9 pair's Fig. 1 baseline at 0.22 beside near repetitions at
    0.00-0.01, which it outran by 1.30x. Held against those repetitions it stays far (0.22 is
    more than 0.10 above them); one at 0.28 beside repetitions at 0.26-0.28 ran as they did."""
    near = [row(r, 5.0, far_share=0.003) | {"ran_far": 0} for r in range(MIN_NEAR)]
    rows = near + [row(7, 6.5, far_share=0.22, ended_far=1) | {"ran_far": 1}]
    set_aside_far(unmark_like_near_repetitions(rows))
    assert rows[-1]["ran_far"] == 1 and rows[-1]["status"] == SET_ASIDE
    steady = [row(r, 8.8, far_share=s, trial="profcpu-1-remo0.4") | {"ran_far": 0} for r, s in ((0, 0.26), (1, 0.27))]
    rows = steady + [row(2, 8.9, far_share=0.28, ended_far=1, trial="profcpu-1-remo0.4") | {"ran_far": 1}]
    assert unmark_like_near_repetitions(rows)[-1]["ran_far"] == 0


def test_a_trial_is_found_by_its_id_without_the_repetition():
    from workflows.experiments import repeated_trial
    assert repeated_trial("base-mode-fm-remo0.1-rep12") == "base-mode-fm-remo0.1"
    assert repeated_trial("prof-rep-remo0.1") == "prof-rep-remo0.1"  # no repetition number: the id itself
