"""A figure's precision (analysis/precision.py) on synthetic rows shaped like Fig. 1's table:
a no-load run's slowdown is 1 by construction, so its point is no measurement and does not
count; the loaded points alone set the median that issue 14's bar and the top-up read."""
import statistics

import pytest

from analysis import aggregate, precision
from analysis.stats import mean_ci

PLOT = {"kind": "line", "x": "n_loads", "series": "remote", "y": "slowdown", "prediction": "eq1"}
# The loaded runs' times per repetition block: one load ~2x its block's no-load run, two ~4x.
LOADED = {1: [5.4, 5.9, 5.1, 6.3], 2: [10.5, 12.8, 9.9, 11.6]}


def fig01_rows():
    rows = []
    for rep in range(4):
        for remote in ("0", "0.1"):
            common = {"status": "ok", "baseline": "0", "rep": str(rep), "remote": remote, "mode": "fm",
                      "threads": "2", "cores": "2", "setup": "cfs", "_loads": []}
            rows.append({**common, "profile": "none", "n_loads": "0", "wall_s": 2.7})
            for n, walls in LOADED.items():
                rows.append({**common, "profile": "cpu-1", "n_loads": str(n), "wall_s": walls[rep]})
    return aggregate.add_slowdowns(rows)


def test_no_load_points_are_one_by_construction_and_left_out():
    rows = fig01_rows()
    assert {r["slowdown"] for r in rows if r["n_loads"] == "0"} == {1.0}  # the premise
    points = precision.relative_half_widths(rows, PLOT)
    assert sorted({(s, x) for s, x, *_ in points}) == [("0", "1"), ("0", "2"), ("0.1", "1"), ("0.1", "2")]
    loaded = []
    for n, walls in LOADED.items():
        m, h, _ = mean_ci([w / 2.7 for w in walls])
        loaded += [h / m] * 2  # both remote shares took the same times
    med, count = precision.median_half_width(rows, PLOT)
    assert count == 4 and med == pytest.approx(statistics.median(loaded))
    # Counted, the two zero-width points would have pulled the median down to the narrowest loaded ones.
    assert med > statistics.median(loaded + [0.0, 0.0]) + 0.01


def test_a_loaded_figure_without_no_load_points_is_unchanged():
    """Fig. 8's shape: its no-load runs are separate baseline trials (baseline 1), never plotted."""
    rows = [r for r in fig01_rows() if r["n_loads"] != "0"] + [
        {**r, "baseline": "1"} for r in fig01_rows() if r["n_loads"] == "0"]
    med, count = precision.median_half_width(rows, PLOT)
    assert count == 4 and med == pytest.approx(precision.median_half_width(fig01_rows(), PLOT)[0])
