"""A figure's measure relative to a reference configuration of the same repetition block.

Fig. 7 asks how LADM's and ADM's no-load run time compare with FM's (the paper: LADM within
5%). Plotted as absolute seconds, each point's interval carries the host's speed drift
between blocks: in run A of the 0b48c9f pair the top-up blocks of Fig. 7 ran 1.22-1.50x
slower than the first three, and the figure's median half-width went from 22.7 to 25.9%
although every mode slowed alike. Repetitions run block by block (the first of every
configuration, then the second, ...), so a run divided by the reference mode's run of the
same block and the same other settings cancels that drift, as the claims' pairs do
(analysis/pairing.py). It does not cancel a speed that changes from one run to the next:
in the 4007ce7 pair the AMD host ran the same configuration at 0.65-1.54x its median, three
modes of one block up to 1.45x apart, and Fig. 7 narrowed only from 17.4 / 22.5% over the
seconds to 14.8 / 20.6% (docs/reference-runs.md).

An experiment asks for it with `plot: {..., relative_to: {mode: fm}}`: the plotted y is then
y / (the y of the reference's row in the same block with the same x, profile, load count and
setup). The reference's own series is 1 by construction, drawn as a line at 1, and is not a
measured point: it has no interval and does not count in the figure's precision
(analysis/precision.py). A row without a reference run in its block (failed, or set aside)
has no relative value; `y2` can keep the absolute values beside it."""
from analysis.stats import number

# What besides the block must match: the x the point is drawn at, and what the run ran beside.
MATCH = ("profile", "n_loads", "setup")


def reference_of(plot):
    """(column, value) of the plot's reference configuration, or None."""
    ref = plot.get("relative_to")
    return next(iter(ref.items())) if ref else None


def column(plot):
    """The name of the relative column: wall_s_vs_fm."""
    col, val = reference_of(plot)
    return f"{plot['y']}_vs_{val}"


def label(plot, base_label):
    col, val = reference_of(plot)
    return f"{base_label.split(' (')[0]} / {str(val).upper() if col == 'mode' else val}'s, same block"


def _key(r, plot, ref_col):
    return (str(r.get("rep")), str(r.get(plot["x"])), *(str(r.get(c, "")) for c in MATCH if c != ref_col))


def with_relative(rows, plot):
    """The rows with the relative column added (empty where the block has no reference run),
    and the reference's own rows left out: they are the 1 everything is measured against."""
    ref_col, ref_val = reference_of(plot)
    y, out_col = plot["y"], column(plot)
    ok = [r for r in rows if r.get("status") == "ok" and r.get("baseline") != "1"]
    refs = {}
    for r in ok:
        if str(r.get(ref_col)) == str(ref_val) and number(r.get(y)):
            refs.setdefault(_key(r, plot, ref_col), []).append(number(r[y]))
    ok_ids = {id(r) for r in ok}
    out = []
    for r in rows:
        if str(r.get(ref_col)) == str(ref_val):
            continue
        ref = refs.get(_key(r, plot, ref_col)) if id(r) in ok_ids else None
        v = number(r.get(y))
        rel = v / (sum(ref) / len(ref)) if ref and v is not None else None
        out.append({**r, out_col: "" if rel is None else rel})
    return out
