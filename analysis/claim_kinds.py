"""The words a claim's declaration (configs/claims.yaml) may use, each a small function in a
registry: FILTERS pick a table's rows, MEASURES read one number from a row, STATISTICS turn
rows into one value per repetition, TESTS judge a 95% interval. A new claim needs none of
this code; a new word is one function added to its registry."""
import ast
import json
import operator
import os
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from analysis import pairing
from analysis.baselines import Baselines, ran_far
from analysis.stats import level_key, number
from analysis.tracking import tracking_gap



class NotMeasurable(Exception):
    """This machine cannot measure the claim; the message says why."""


def same(a, b):
    """Equal as numbers when both are ('0' and 0.0 are the same remote share), else as text."""
    fa, fb = number(a), number(b)
    return fa == fb if fa is not None and fb is not None else str(a) == str(b)


# ---- the rows of one table, with what the measures need beside them ----------------------

class Table:
    """One experiment's table: its successful rows, each row's no-load baseline (the rule of
    analysis/baselines.py, the same as the table's slowdown column) and each row's trial record."""

    def __init__(self, path, rows):
        self.path, self.name = Path(path), Path(path).stem
        self.all_rows = list(rows)  # failed trials too: a claim's level was run, not skipped
        self.rows = [r for r in rows if r.get("status") == "ok"]
        self._baselines = Baselines(self.rows)
        self._records = {}

    def baseline_wall(self, row):
        """The mean wall time of the row's no-load baseline runs, or None."""
        return self._baselines.wall(row)

    def record(self, row):
        """The row's trial record: results/<scale>/trials/<experiment>/<trial>.json beside
        results/<scale>/tables/<experiment>.csv; None when it is not there."""
        tid = row.get("trial")
        if tid not in self._records:
            p = self.path.parent.parent / "trials" / (row.get("experiment") or self.name) / f"{tid}.json"
            try:
                self._records[tid] = json.loads(p.read_text())
            except (OSError, ValueError):
                self._records[tid] = None
        return self._records[tid]


# ---- filters: (rows, column, argument) -> rows -------------------------------------------

def _cores_expression(expr, cores):
    """'5*cores/8' with cores = 16 -> 10.0: numbers, 'cores', + - * / and parentheses only."""
    ops = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}

    def ev(n):
        if isinstance(n, ast.Expression):
            return ev(n.body)
        if isinstance(n, ast.Constant) and isinstance(n.value, (int, float)):
            return float(n.value)
        if isinstance(n, ast.Name) and n.id == "cores":
            return float(cores)
        if isinstance(n, ast.BinOp) and type(n.op) in ops:
            return ops[type(n.op)](ev(n.left), ev(n.right))
        raise ValueError(f"'{expr}' is not an expression in cores (numbers, cores, + - * /)")
    return ev(ast.parse(str(expr), mode="eval"))


def _levels(rows, col):
    return sorted({number(r.get(col)) for r in rows} - {None})


def _is(rows, col, v):
    return [r for r in rows if same(r.get(col), v)]


def _in(rows, col, vs):
    return [r for r in rows if any(same(r.get(col), v) for v in vs)]


def _not(rows, col, v):
    vs = v if isinstance(v, list) else [v]
    return [r for r in rows if not any(same(r.get(col), x) for x in vs)]


def _at_least(rows, col, x):
    return [r for r in rows if number(r.get(col)) is not None and number(r.get(col)) >= x]


def _at_most(rows, col, x):
    return [r for r in rows if number(r.get(col)) is not None and number(r.get(col)) <= x]


def _highest(rows, col, _):
    levels = _levels(rows, col)
    return _is(rows, col, levels[-1]) if levels else []


def _lowest(rows, col, _):
    levels = _levels(rows, col)
    return _is(rows, col, levels[0]) if levels else []


def _nearest(rows, col, expr):
    """The level nearest the expression in the trials' cores (the larger one on a tie, as the
    paper's comparison points lean high)."""
    levels = _levels(rows, col)
    if not levels:
        return []
    cores = max(_levels(rows, "cores") or [os.cpu_count()])
    target = _cores_expression(expr, cores)
    return _is(rows, col, min(levels, key=lambda n: (abs(n - target), -n)))


def _equals(rows, col, expr):
    """The level equal to the expression in the trials' cores ('cores': a load per core);
    none when the run has no such level (a smaller scale may not sweep it)."""
    cores = max(_levels(rows, "cores") or [os.cpu_count()])
    return _is(rows, col, _cores_expression(expr, cores))


FILTERS = {"is": _is, "in": _in, "not": _not, "at_least": _at_least, "at_most": _at_most,
           "highest": _highest, "lowest": _lowest, "nearest": _nearest, "equals": _equals}
RELATIVE = ("highest", "lowest", "nearest")  # chosen among the rows the other filters leave


def filter_ops(spec):
    """[(filter name, argument)] of one column's filter as declared."""
    if isinstance(spec, list):
        return [("in", spec)]
    if isinstance(spec, dict):
        return list(spec.items())
    return [("is", spec)]


def select(rows, filters):
    """The rows that pass every filter; the relative ones last, among the rows left."""
    steps = [(col, op, arg) for col, spec in (filters or {}).items() for op, arg in filter_ops(spec)]
    for col, op, arg in sorted(steps, key=lambda s: s[1] in RELATIVE):
        rows = FILTERS[op](rows, col, arg)
    return rows


def describe(filters):
    """'mode=fm, remote>=0.2' for a filter mapping."""
    signs = {"is": "=", "at_least": ">=", "at_most": "<=", "not": "!="}
    parts = []
    for col, spec in (filters or {}).items():
        for op, arg in filter_ops(spec):
            if op in signs:
                parts.append(f"{col}{signs[op]}{arg}")
            elif op == "in":
                parts.append(f"{col} in {'/'.join(map(str, arg))}")
            else:
                parts.append(f"{col} {op}" + ("" if arg is True else f" {arg}"))
    return ", ".join(parts) or "all trials"


# ---- measures: (row, table) -> number or None --------------------------------------------

def paired_slowdown(row, table):
    """Wall time over the no-load wall time of the same engine configuration and repetition
    (another repetition's where that one ran far: analysis/baselines.py)."""
    wall, base = number(row.get("wall_s")), table.baseline_wall(row)
    return wall / base if wall is not None and base else None


def slowdown_over_eq1(row, table):
    """The paired slowdown over Eq. 1's proportional slowdown for the row's own loads."""
    s, p = paired_slowdown(row, table), number(row.get("pred_eq1"))
    return s / p if s is not None and p else None


def _tracking_gap(row, table):
    rec = table.record(row)
    return tracking_gap(rec) if rec and rec.get("status") == "ok" else None


MEASURES = {"paired_slowdown": paired_slowdown, "slowdown_over_eq1": slowdown_over_eq1,
            "tracking_gap": _tracking_gap}


def measure_of(name):
    """A measure by name: a registered one, else the table column of that name."""
    return MEASURES.get(name) or (lambda row, table: number(row.get(name)))


# ---- statistic kinds: (rows, declaration, table) -> Sample -------------------------------

@dataclass
class Sample:
    values: list = field(default_factory=list)  # one per repetition
    note: str = ""                              # e.g. which configuration was the best other
    why: str = ""                               # why there are no values


def far_note(rows):
    """'k of n runs ran far' over the rows a statistic read (set-aside runs are already out):
    far runs stay in where fewer than 3 repetitions ran near (analysis/set_aside.py), and a
    value made mostly of them is the far-placed host's, which a reader must see."""
    far = sum(1 for r in rows if ran_far(r))
    return f"{far} of {len(rows)} runs ran far" if far else ""


def _joined(*notes):
    return "; ".join(x for x in notes if x)


def per_rep(rows, measure, table):
    """{rep: mean of the measure over the rows of that repetition} (rows a filter leaves
    together, e.g. every remote share, are averaged within their repetition)."""
    fn, out = measure_of(measure), {}
    for r in rows:
        v = fn(r, table)
        if v is not None:
            out.setdefault(str(r.get("rep")), []).append(v)
    return {rep: statistics.mean(vs) for rep, vs in out.items()}


def _paired(rows_a, rows_b, decl, table, op, why):
    """The sample of op(a, b) over the pairs of analysis/pairing.py; the note counts pairs
    made across blocks."""
    pairs = pairing.paired_values(rows_a, rows_b, measure_of(decl.get("measure", "wall_s")), table, op)
    across = sum(1 for _, _, how in pairs if how == pairing.ACROSS)
    return Sample([v for _, v, _ in pairs],
                  note=_joined(f"{across} pair(s) across blocks" if across else "", far_note([*rows_a, *rows_b])),
                  why="" if pairs else why)


def _sides(rows, decl, table):
    m = decl.get("measure", "wall_s")
    rows_a, rows_b = select(rows, decl["of"]), select(rows, decl["to"])
    missing = [describe(decl[k]) for k, side in (("of", rows_a), ("to", rows_b))
               if not per_rep(side, m, table)]
    why = f"no {m} of {' nor of '.join(missing)}" if missing else "no repetition has both configurations"
    return rows_a, rows_b, why


def st_value(rows, decl, table):
    m = decl.get("measure", "wall_s")
    chosen = select(rows, decl.get("of") or {})
    a = per_rep(chosen, m, table)
    return Sample(list(a[r] for r in sorted(a, key=level_key)), note=far_note(chosen),
                  why="" if a else f"no {m} of {describe(decl.get('of'))}")


def _ratio(x, y):
    return x / y if y else None


def st_ratio(rows, decl, table):
    rows_a, rows_b, why = _sides(rows, decl, table)
    return _paired(rows_a, rows_b, decl, table, _ratio, why)


def st_difference(rows, decl, table):
    rows_a, rows_b, why = _sides(rows, decl, table)
    return _paired(rows_a, rows_b, decl, table, operator.sub, why)


def st_ratio_to_best(rows, decl, table):
    """`of` over the best (lowest mean) of `others`, paired by repetition."""
    m = decl.get("measure", "wall_s")
    rows_a = select(rows, decl["of"])
    cands = [(f, select(rows, f)) for f in decl["others"]]
    cands = [(f, rs, per_rep(rs, m, table)) for f, rs in cands]
    cands = [c for c in cands if c[2]]
    has_a = bool(per_rep(rows_a, m, table))
    if not has_a or not cands:
        return Sample(why=f"no {m} of {describe(decl['of'])}" if not has_a else f"no {m} of any other configuration")
    best, rows_b, _ = min(cands, key=lambda c: statistics.mean(c[2].values()))
    s = _paired(rows_a, rows_b, decl, table, _ratio, "no repetition has both configurations")
    s.note = _joined(f"best other: {describe(best)}", s.note)
    return s


def st_not_measurable(rows, decl, table):
    raise NotMeasurable(decl["reason"])


STATISTICS = {"value": st_value, "ratio": st_ratio, "difference": st_difference,
              "ratio_to_best": st_ratio_to_best, "not_measurable": st_not_measurable}
NEEDS = {"value": (), "ratio": ("of", "to"), "difference": ("of", "to"),
         "ratio_to_best": ("of", "others"), "not_measurable": ("reason",)}


# ---- tests: (low, high, argument) -> (verdict, margin); margin > 0 inside ----------------

def t_greater_than(lo, hi, x):
    return ("agrees" if lo > x else "differs" if hi <= x else "inconclusive"), lo - x


def t_less_than(lo, hi, x):
    return ("agrees" if hi < x else "differs" if lo >= x else "inconclusive"), x - hi


def _bounds(arg):
    v, t = arg["value"], arg["tolerance"]
    return sorted((v * (1 - t), v * (1 + t))) if v else (-t, t)


def t_within(lo, hi, arg):
    a, b = _bounds(arg)
    verdict = "agrees" if a <= lo and hi <= b else "differs" if hi < a or lo > b else "inconclusive"
    return verdict, min(lo - a, b - hi)


TESTS = {"greater_than": t_greater_than, "less_than": t_less_than, "within": t_within}


def test_text(test):
    (name, arg), = test.items()
    if name == "within":
        a, b = _bounds(arg)
        return f"within {arg['tolerance']:.0%} of {arg['value']:g} ({a:.3g} to {b:.3g})"
    return f"{'>' if name == 'greater_than' else '<'} {arg:g}"
