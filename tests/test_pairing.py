"""Two-sided claims pair their sides' runs (analysis/pairing.py) on hand-made table rows:
within a block only the configurations both sides ran, and, for one configuration per side,
the leftover runs of blocks the other side lost paired across blocks, each run once."""
import pytest

from analysis import pairing
from analysis.claim_kinds import STATISTICS, Table
from analysis.set_aside import SET_ASIDE


def row(mode, rep, wall, remote="0.2", status="ok", detector="pi"):
    return {"experiment": "fig08-one-load", "trial": f"{mode}-remo{remote}-rep{rep}", "status": status,
            "rep": str(rep), "mode": mode, "remote": remote, "detector": detector, "profile": "cpu-1",
            "setup": "cfs", "wall_s": str(wall)}


RATIO = {"kind": "ratio", "measure": "wall_s", "of": {"mode": "fm"}, "to": {"mode": "ladm"}}


def ratio(rows):
    """The claim's sample as claims.py computes it: on the table's successful rows."""
    table = Table("fig08-one-load.csv", rows)
    return STATISTICS["ratio"](table.rows, RATIO, table)


def test_a_block_compares_only_the_configurations_both_sides_ran():
    # remote 0.05 runs take 10 s, the others 2 s; FM is 1.1x LADM in every configuration.
    # FM's remote-0.05 run of block 2 was set aside: block 2 must not set FM's mean over
    # two shares against LADM's over three (that gave 2.2 / 4.67 = 0.47).
    walls = {"0.05": 10.0, "0.2": 2.0, "0.4": 2.0}
    rows = []
    for rep in (1, 2, 3):
        for remote, w in walls.items():
            gone = rep == 2 and remote == "0.05"
            rows.append(row("fm", rep, w * 1.1, remote, status=SET_ASIDE if gone else "ok"))
            rows.append(row("ladm", rep, w, remote))
    s = ratio(rows)
    assert s.values == pytest.approx([1.1, 1.1, 1.1]) and s.note == ""


def test_leftover_blocks_pair_across_nearest_first_each_run_once():
    fm = {1: 3.0, 2: 9.0, 3: 3.3, 4: 3.0, 5: 9.0, 6: 3.0}   # blocks 2 and 5 ran far: set aside
    ladm = {1: 2.0, 2: 2.2, 3: 7.0, 4: 2.0, 5: 2.5, 6: 2.0}  # block 3 ran far
    rows = [row("fm", r, w, status=SET_ASIDE if r in (2, 5) else "ok") for r, w in fm.items()]
    rows += [row("ladm", r, w, status=SET_ASIDE if r == 3 else "ok") for r, w in ladm.items()]
    s = ratio(rows)
    # same-block pairs 1, 4, 6; FM's leftover block 3 with LADM's nearest leftover, block 2
    # (distance 1; block 5 is 2 away): LADM's block 5 stays unpaired, nothing is used twice
    assert s.values == pytest.approx([1.5, 1.5, 1.5, 3.3 / 2.2])
    assert s.note == "1 pair(s) across blocks"


def test_nearest_pairs_take_each_block_once():
    assert pairing.nearest_pairs(["1", "6"], ["2", "5"]) == [("1", "2"), ("6", "5")]
    assert pairing.nearest_pairs(["3"], ["2", "4"]) == [("3", "2")]  # a tie goes to the earlier block
    assert pairing.nearest_pairs(["3"], []) == []


def test_a_sweep_does_not_pair_across_blocks():
    # FM lost block 1 at both shares, LADM block 2 at both: with a sweep a leftover does not
    # make a block (its value is a mean over configurations of one time), so n = 1
    rows = []
    for rep in (1, 2, 3):
        for remote in ("0.2", "0.4"):
            rows.append(row("fm", rep, 3.0, remote, status=SET_ASIDE if rep == 1 else "ok"))
            rows.append(row("ladm", rep, 2.0, remote, status=SET_ASIDE if rep == 2 else "ok"))
    s = ratio(rows)
    assert s.values == pytest.approx([1.5]) and s.note == ""


def test_a_column_only_one_side_varies_is_averaged_not_matched():
    # FM's runs name no detector, LADM's two detectors: the sides still pair per block, LADM
    # over the mean of its two detectors
    rows = [row("fm", r, 3.0, detector="") for r in (1, 2)]
    rows += [row("ladm", r, w, detector=d) for r in (1, 2) for d, w in (("pi", 1.0), ("apte", 2.0))]
    assert ratio(rows).values == pytest.approx([2.0, 2.0])
    assert pairing.sweep_columns([r for r in rows if r["mode"] == "fm"], [r for r in rows if r["mode"] == "ladm"]) == []


def test_no_pair_says_why():
    rows = [row("fm", 1, 3.0), row("ladm", 2, 2.0, remote="0.4")]
    s = ratio(rows)
    assert s.values == [1.5]  # one configuration per side (remote is not swept by both): across
    s = ratio([row("fm", 1, 3.0)])
    assert s.values == [] and s.why == "no wall_s of mode=ladm"
