"""How a two-sided claim (a ratio or a difference) pairs the runs of its two sides.

Repetitions run interleaved, so each repetition block's runs of the two sides are compared
with each other: a machine whose speed drifts moves both. A block loses a run on one side
when it failed or was set aside (it ran far: analysis/set_aside.py), and that used to cost
the claim either the whole block or its balance:

- A side summed over a sweep (Fig. 7's ADM and LADM over every remote share) compared the
  block's mean over the configurations each side still had: a block whose ADM lost its
  remote-0.05 run set ADM's mean over three shares against LADM's over four. Now a block
  compares only the configurations both sides ran in it (MATCHED).
- A claim of one configuration per side (Fig. 8's FM against LADM at one remote share)
  lost every block where either side was set aside: 3 and 4 of 6 blocks were left in the
  2afd76b pair. Now the runs left over on each side, in blocks where the other side was
  lost, are paired with each other, nearest blocks first, each run once (ACROSS). Such a
  pair does not cancel drift, but its runs are independent of every other pair's, so the
  t interval stays honest, and its spread shows the drift it did not cancel.

Across-block pairs are made only where each side is one configuration: for a sweep a
block's value is a mean over configurations of one time, and leftovers of different
blocks do not make such a block."""
from statistics import mean

from analysis.baselines import ENGINE_KEY
from analysis.stats import level_key, number

# The columns that tell two runs' configurations apart, besides the sides' own columns.
CONFIG = ENGINE_KEY + ("profile", "setup", "ctp_us", "n_loads")

MATCHED, ACROSS = "same block", "across blocks"


def _value_key(v):
    n = number(v)
    return n if n is not None else str(v if v is not None else "")


def sweep_columns(a_rows, b_rows):
    """The columns both sides sweep over the same levels (remote in Fig. 7): a run is
    compared with the other side's run at the same levels. A column only one side varies
    (its detector, say) is the side's own and averaged over."""
    cols = []
    for c in CONFIG:
        la, lb = {_value_key(r.get(c)) for r in a_rows}, {_value_key(r.get(c)) for r in b_rows}
        if len(la) > 1 and la == lb:
            cols.append(c)
    return cols


def _by_block(rows, fn, table, cols):
    """{rep: {configuration: [values]}} of the rows whose measure is a number."""
    out = {}
    for r in rows:
        v = fn(r, table)
        if v is not None:
            key = tuple(_value_key(r.get(c)) for c in cols)
            out.setdefault(str(r.get("rep")), {}).setdefault(key, []).append(v)
    return out


def nearest_pairs(left_a, left_b):
    """Pairs of a's and b's leftover blocks, nearest first, each block once:
    [(rep_a, rep_b)]. Ties go to the earlier blocks."""
    cands = []
    for ra in left_a:
        for rb in left_b:
            na, nb = number(ra), number(rb)
            dist = abs(na - nb) if na is not None and nb is not None else float("inf")
            cands.append((dist, level_key(ra), level_key(rb), ra, rb))
    used_a, used_b, out = set(), set(), []
    for _, _, _, ra, rb in sorted(cands):
        if ra not in used_a and rb not in used_b:
            used_a.add(ra)
            used_b.add(rb)
            out.append((ra, rb))
    return sorted(out, key=lambda p: level_key(p[0]))


def paired_values(a_rows, b_rows, fn, table, op):
    """[(label, value, how)] of the claim's pairs: op(mean of a, mean of b) per block over
    the configurations both sides ran in it (how = MATCHED, label its rep), then, where each
    side is one configuration, the leftover blocks paired across (how = ACROSS, label
    'rep_a/rep_b'). Pairs whose op gives None are dropped."""
    cols = sweep_columns(a_rows, b_rows)
    a, b = _by_block(a_rows, fn, table, cols), _by_block(b_rows, fn, table, cols)
    out = []
    for rep in sorted(set(a) & set(b), key=level_key):
        keys = set(a[rep]) & set(b[rep])
        if keys:
            va = mean([v for k in keys for v in a[rep][k]])
            vb = mean([v for k in keys for v in b[rep][k]])
            out.append((rep, op(va, vb), MATCHED))
    configs = {k for blocks in (a, b) for per in blocks.values() for k in per}
    if len(configs) == 1:
        (key,) = configs
        left_a = [r for r in a if key in a[r] and key not in b.get(r, {})]
        left_b = [r for r in b if key in b[r] and key not in a.get(r, {})]
        for ra, rb in nearest_pairs(left_a, left_b):
            out.append((f"{ra}/{rb}", op(mean(a[ra][key]), mean(b[rb][key])), ACROSS))
    return [(label, v, how) for label, v, how in out if v is not None]
