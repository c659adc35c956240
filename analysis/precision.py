"""How precise a figure is: the 95% interval's half-width of each plotted point relative to
the point (the figure's own x, series and y; points with n >= 2), and their median, the
figure's precision that issue 14 bars at 15% and that an experiment's `top_up_half_width`
asks its top-up repetitions for (analysis/top_up.py).

A point that is its own reference is not a measurement and is left out: a no-load run's
slowdown is that run over its block's no-load runs, 1 by construction (Fig. 1's zero-load
points), as FM's line is in a figure drawn relative to FM. Counted, Fig. 1's two such points
of six made its median the mean of its two narrowest loaded points."""
import statistics

from analysis import relative_time
from analysis.baselines import is_baseline_run
from analysis.figures import grouped


def relative_half_widths(rows, plot):
    """[(series, x, mean, half-width / mean, n)] of the figure's measured points: its plotted
    points but those that are their own reference (with `relative_to`, the points relative to
    the reference: analysis/relative_time.py; with y slowdown, no no-load run)."""
    y = plot["y"]
    if relative_time.reference_of(plot):
        rows, y = relative_time.with_relative(rows, plot), relative_time.column(plot)
    elif y == "slowdown":
        rows = [r for r in rows if not is_baseline_run(r)]
    out = []
    for s, pts in grouped(rows, plot["x"], plot.get("series"), y).items():
        for x, m, h, n in pts:
            out.append((s, x, m, h / m if m else float("nan"), n))
    return out


def median_half_width(rows, plot):
    """(median relative half-width over the points with n >= 2, how many such points), or
    (None, 0) when no point has two values."""
    rel = [p[3] for p in relative_half_widths(rows, plot) if p[4] >= 2]
    return (statistics.median(rel), len(rel)) if rel else (None, 0)
