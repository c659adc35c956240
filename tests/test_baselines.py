"""Which no-load runs a slowdown is divided by (analysis/baselines.py), on hand-made rows:
the own repetition block's near run, else the other blocks' near runs (its own ran far or
failed), far runs only where no block has a near one; and the tables (aggregate) and the
claims (claim_kinds.Table) divide by the same runs."""
import html

from analysis import baselines
from analysis.aggregate import add_slowdowns
from analysis.caption import noise_sentence
from analysis.claim_kinds import Table, paired_slowdown


def row(profile, rep, wall, far_share="", ended_far="", status="ok", remote=0.2):
    return {"trial": f"{profile}-{remote}-{rep}", "status": status, "mode": "fm", "sync": "", "model": "phold",
            "remote": remote, "epg": "", "detector": "", "reactivation": "", "apte_threshold": "",
            "barrier_wait": "", "optimism_window": "", "threads": 2, "cores": 2, "profile": profile,
            "setup": "cfs", "rep": rep, "wall_s": wall, "far_share": far_share, "ended_far": ended_far,
            "_loads": [], "load_throughput": ""}


def as_csv(rows):
    """The rows as a table file gives them back: every cell a string."""
    return [{k: str(v) for k, v in r.items() if k != "_loads"} for r in rows]


def blocks():
    return [row("none", 0, 2.0, far_share=0.01), row("none", 1, 4.5, far_share=0.9),  # block 1 ran far
            row("none", 2, 3.0, status="failed"), row("none", 3, 2.4, far_share="", ended_far=0),
            row("cpu-1", 0, 5.0), row("cpu-1", 1, 6.6), row("cpu-1", 2, 5.5), row("cpu-1", 3, 4.8)]


def test_own_block_unless_it_ran_far_or_failed():
    rows = add_slowdowns(blocks())
    loaded = {r["rep"]: r for r in rows if r["profile"] == "cpu-1"}
    assert loaded[0]["baseline_wall_s"] == 2.0 and loaded[0]["baseline_from"] == baselines.OWN
    assert loaded[3]["baseline_wall_s"] == 2.4 and loaded[3]["baseline_from"] == baselines.OWN
    for rep in (1, 2):  # far, failed: the near runs of blocks 0 and 3
        assert abs(loaded[rep]["baseline_wall_s"] - 2.2) < 1e-12 and loaded[rep]["baseline_from"] == baselines.OTHERS
    assert abs(loaded[1]["slowdown"] - 3.0) < 1e-12


def test_far_by_the_probe_after_the_run_where_no_share_was_measured():
    rows = add_slowdowns([row("none", 0, 2.0), row("none", 1, 3.0, ended_far=1), row("cpu-1", 1, 6.0)])
    assert rows[-1]["baseline_wall_s"] == 2.0 and rows[-1]["baseline_from"] == baselines.OTHERS


def test_far_runs_only_where_no_block_has_a_near_one():
    rows = add_slowdowns([row("none", 0, 3.0, far_share=0.5), row("none", 1, 5.0, far_share=1.0),
                          row("cpu-1", 0, 6.0), row("cpu-1", 2, 8.0)])
    assert (rows[2]["baseline_wall_s"], rows[2]["baseline_from"]) == (3.0, baselines.OWN_FAR)
    assert (rows[3]["baseline_wall_s"], rows[3]["baseline_from"]) == (4.0, baselines.OTHERS_FAR)


def test_another_configuration_is_never_a_baseline():
    rows = add_slowdowns([row("none", 0, 2.0, remote=0.4), row("cpu-1", 0, 6.0)])
    assert "slowdown" not in rows[1] and "baseline_from" not in rows[1]


def test_claims_divide_by_the_same_runs_as_the_table():
    """claim_kinds' paired_slowdown on the table as read back (strings) equals the table's
    slowdown column for every loaded row."""
    rows = add_slowdowns(blocks())
    table = Table("fig01-fm-slowdown.csv", as_csv(rows))
    for r in table.rows:
        if r["profile"] == "cpu-1":
            assert abs(paired_slowdown(r, table) - float(r["slowdown"])) < 1e-12, r["trial"]


def test_the_caption_counts_the_stand_in_baselines():
    rows = as_csv(add_slowdowns(blocks()))
    for r in rows:
        r.update(disturbed="0", reruns="0", far_reruns="0")
    # the far no-load run of block 1 too: its slowdown says what the far placement cost
    assert "3 trial(s) were divided by other repetitions' no-load runs" in html.unescape(noise_sentence(rows))
    # a row set aside is not in the figures: not counted among them
    next(r for r in rows if r.get("baseline_from") == "other blocks")["status"] = "set aside"
    assert "2 trial(s) were divided by other repetitions' no-load runs" in html.unescape(noise_sentence(rows))
