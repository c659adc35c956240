"""The paper's claims judged on this machine: configs/claims.yaml declares, per claim, the
table it reads, the rows (filters), a statistic computed per repetition and a test; this
module interprets those declarations (the words they may use are in analysis/claim_kinds.py)
and writes the summary (results/<scale>/tables/summary.csv).

Each statistic gets a 95% interval over repetitions (Student's t, analysis.stats.mean_ci;
97.5% when its experiment adds repetitions to undecided claims: analysis/sequential.py).
Verdict: agrees when the whole interval passes the test, differs when the whole interval
fails it (for a claim judged at m levels or parts, the wider interval at 1 - 0.05/m of
analysis/family.py), inconclusive when it straddles the boundary, when there are fewer than 2
repetitions, or when it rests on far runs (judge_level), "not measurable here" (with the
reason) when this machine cannot measure it,
"not run at this scale" when the run has no table of its experiment, or no trial (ok or
failed) of the rows the claim reads (a smaller scale may leave out an experiment, or the
level a claim names, such as a load per core).

    python -m analysis.claims --claims configs/claims.yaml --out summary.csv [--two-looks EXP ...] -- TABLE.csv ...
    python -m analysis.claims --check configs/claims.yaml     (what the workflow checks at start)
"""
import argparse
import json
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from airbase.atomic import write_csv
from airbase.paths import CONFIGS, SCHEMAS
from airbase.schema_messages import read_yaml, schema_errors
from analysis import replication
from analysis.family import family_level, judge_interval
from analysis.aggregate import COLUMNS
from analysis.baselines import ran_far
from analysis.claim_kinds import (MEASURES, NEEDS, STATISTICS, NotMeasurable, Table, filter_ops,
                                  describe, level_key, same, select, test_text)
from analysis.sequential import SINGLE_LOOK, TWO_LOOKS, interval_text
from analysis.stats import mean_ci, read_rows
from workflows.experiments import ExperimentError, list_experiments, load_experiment, scale_values

DEFAULT = CONFIGS / "claims.yaml"
INTERVAL = interval_text(SINGLE_LOOK)
VERDICTS = ("agrees", "differs", "inconclusive", "not measurable here", "not run at this scale")
# Said of a level whose verdict its far runs made (judge_level).
RESTS_ON_FAR = "not judged: the verdict rests on runs the host placed far"


def reversed_verdicts(a, b):
    """Whether two verdicts of a claim are opposite (agrees in one, differs in the other):
    a reversal, unlike a move to or from inconclusive."""
    return {a, b} == {"agrees", "differs"}


FIELDS = ["id", "figure", "claim", "paper_value", "paper_platform", "table", "statistic", "value", "ci_low",
          "ci_high", "n", "interval", "test", "verdict", "same_verdict_again", "reason", "measured_here"]


class ClaimError(Exception):
    """A claims file that cannot be used; the message names the file and the claim."""


# ---- reading and checking the declarations -----------------------------------------------

def load_claims(path=DEFAULT):
    """The claims document, checked against its schema and the words claim_kinds knows
    (not against the experiments: check_claims does that)."""
    path = Path(path)
    doc = read_yaml(path, ClaimError)
    schema = json.loads((SCHEMAS / "claims.schema.json").read_text())
    errs = schema_errors(schema, doc, str(path), place=lambda p: _where(doc, p))
    if errs:
        raise ClaimError("; ".join(errs))
    errors = []
    seen = set()
    for c in doc["claims"]:
        if c["id"] in seen:
            errors.append(f"{path}: claim '{c['id']}': declared twice")
        seen.add(c["id"])
        errors += [f"{path}: claim '{c['id']}': {e}" for e in _shape_errors(c)]
    if errors:
        raise ClaimError("; ".join(errors))
    return doc


def _where(doc, p):
    """'claim 'x': where.mode' for a schema error's path."""
    p = list(p)
    if len(p) >= 2 and p[0] == "claims" and isinstance(p[1], int) and p[1] < len(doc["claims"]):
        cid = doc["claims"][p[1]].get("id", f"#{p[1] + 1}") if isinstance(doc["claims"][p[1]], dict) else p[1]
        return f"claim '{cid}': " + (".".join(map(str, p[2:])) or "(the claim)")
    return ".".join(map(str, p)) or "(top level)"


def _parts(c):
    return c["all_of"] if "all_of" in c else [c]


def _shape_errors(c):
    kind = (c.get("statistic") or {}).get("kind")
    if "all_of" in c and ("statistic" in c or "test" in c):
        return ["give either statistic and test, or all_of"]
    if kind == "not_measurable":
        return [f"statistic.{k}: missing" for k in NEEDS[kind] if k not in c["statistic"]]
    if "all_of" not in c and not ("statistic" in c and "test" in c):
        return ["needs statistic and test (or all_of, or statistic kind not_measurable)"]
    errors = []
    for i, p in enumerate(_parts(c)):
        at = f"all_of.{i}." if "all_of" in c else ""
        decls = [("statistic", p["statistic"])] + [(f"beside.{j}", {**p["statistic"], **b})
                                                   for j, b in enumerate(c.get("beside", []))]
        for name, s in decls:
            if s["kind"] not in STATISTICS:
                errors.append(f"{at}{name}.kind: '{s['kind']}' is not a statistic ({', '.join(STATISTICS)})")
                continue
            errors += [f"{at}{name}.{k}: missing (needed by {s['kind']})" for k in NEEDS[s["kind"]] if k not in s]
            m = s.get("measure", "wall_s")
            if m not in MEASURES and m not in COLUMNS:
                errors.append(f"{at}{name}.measure: '{m}' is neither a table column nor a measure ({', '.join(MEASURES)})")
    return errors


def _filters_of(c):
    """(where it is declared, filters) for every filter mapping of a claim."""
    out = [("where", c.get("where") or {})]
    for i, p in enumerate(_parts(c)):
        at = f"all_of.{i}." if "all_of" in c else ""
        if "all_of" in c:
            out.append((f"{at}where", p.get("where") or {}))
        for j, b in enumerate([p.get("statistic") or {}] + list(c.get("beside", []))):
            name = f"{at}statistic" if j == 0 else f"beside.{j - 1}"
            out += [(f"{name}.{k}", b[k]) for k in ("of", "to") if k in b]
            out += [(f"{name}.others.{n}", f) for n, f in enumerate(b.get("others", []))]
    return out


def experiment_values(exp, col):
    """The values an experiment gives a column at any scale, or None when it leaves the
    column to the engine or to the trial (any value is possible)."""
    implicit = {"profile": ["none"], "setup": ["cfs"]}.get(col, [])  # every baseline's
    if col in exp["sweep"]:
        return scale_values(exp["sweep"][col]) + implicit
    if col in exp["engine"]:
        v = exp["engine"][col]
        return list(v.values()) if isinstance(v, dict) else [v]
    return implicit or None


def check_claims(path=DEFAULT):
    """Refuse (ClaimError naming the file and the claim) a claim whose table is not an
    experiment, or that names a column the tables do not have or a configuration its
    experiment never runs. The workflow calls this at start."""
    doc = load_claims(path)
    names, errors = set(list_experiments()), []
    for c in doc["claims"]:
        say = f"{path}: claim '{c['id']}'"
        if c["table"] not in names:
            errors.append(f"{say}: table: '{c['table']}' is not an experiment in configs/experiments/")
            continue
        try:
            exp = load_experiment(c["table"])
        except ExperimentError as e:
            errors.append(f"{say}: table: {e}")
            continue
        columns = [(f"{at}.{col}", col, spec) for at, fs in _filters_of(c) for col, spec in fs.items()]
        columns += [(f"{at}each", p["each"], None) for at, p in
                    ((f"all_of.{i}." if "all_of" in c else "", p) for i, p in enumerate(_parts(c))) if "each" in p]
        columns += [(f"requires.{k}", c["requires"][k], None) for k in ("column", "why_column") if k in c.get("requires", {})]
        for at, col, spec in columns:
            if col not in COLUMNS:
                errors.append(f"{say}: {at}: '{col}' is not a column of the tables")
                continue
            known = experiment_values(exp, col)
            for op, arg in (filter_ops(spec) if spec is not None and known is not None else []):
                if op not in ("is", "in", "not"):
                    continue
                for v in (arg if isinstance(arg, list) else [arg]):
                    if not any(same(v, k) for k in known):
                        errors.append(f"{say}: {at}: {v!r} is not run by {c['table']} "
                                      f"({col}: {', '.join(map(str, dict.fromkeys(known)))})")
    if errors:
        raise ClaimError("; ".join(errors))
    return doc


# ---- judging -----------------------------------------------------------------------------

@dataclass
class Judged:
    verdict: str
    reason: str
    value: float = None
    lo: float = None
    hi: float = None
    n: int = 0
    label: str = ""
    margin: float = float("-inf")
    p: dict = None  # {verdict: probability} of a repeat of the run (analysis/replication.py)

    def brief(self, verdict=True):
        """'1.62 [1.40, 1.84] n=3 agrees' (or 'n=1', 'n=0')."""
        said = f" {self.verdict}" if verdict else ""
        if self.value is None:
            return f"n={self.n}{said}"
        ci = f" [{self.lo:.3g}, {self.hi:.3g}]" if self.lo is not None else ""
        return f"{self.value:.3g}{ci} n={self.n}{said}"


def _g(v):
    return f"{v:.3g}"


def judge_sample(sample, test, label="", level=SINGLE_LOOK, family=1):
    """The verdict on one sample of per-repetition values (its interval at `level`), one of
    `family` levels the claim is judged at (differs needs the wider interval of
    analysis/family.py)."""
    vals = sample.values
    note = f" ({sample.note})" if sample.note else ""
    if not vals:
        return Judged("inconclusive", f"n=0: {sample.why}", label=label)
    m, h, n = mean_ci(vals, level)
    if n < 2:
        return Judged("inconclusive", f"{_g(m)} from one repetition: no interval{note}", m, None, None, n, label)
    lo, hi = m - h, m + h
    wide = family_level(level, family)
    verdict, margin, only_narrow = judge_interval(m, h, mean_ci(vals, wide)[1], test)
    again = replication.verdict_probabilities(vals, test, level, family)
    said = {"agrees": f"the whole interval is {test_text(test)}",
            "differs": f"the whole interval fails {test_text(test)}",
            "inconclusive": f"the interval straddles the bound of {test_text(test)}"}[verdict]
    if only_narrow:
        said = (f"the interval fails {test_text(test)}, but not the {wide:.2%} one that one of "
                f"{family} levels needs to make the claim differ")
    return Judged(verdict, f"{_g(m)} [{_g(lo)}, {_g(hi)}] n={n}: {said}{note}", m, lo, hi, n, label, margin, again)


def combine(results, label=""):
    """One verdict of several (levels or parts): differs if any differs, else inconclusive if
    any is, else agrees; the figures shown are those of the deciding one (for agrees, the
    one nearest its bound)."""
    for v in ("differs", "inconclusive"):
        hit = [r for r in results if r.verdict == v]
        if hit:
            pick = hit[0]
            break
    else:
        pick = min(results, key=lambda r: r.margin)
    if len(results) == 1:
        return Judged(**{**pick.__dict__, "label": label or pick.label})
    counts = Counter(r.verdict for r in results)
    tally = ", ".join(f"{counts[v]} {v}" for v in VERDICTS if counts[v])
    where = f"{pick.label}: " if pick.label else ""
    again = replication.combine([r.p for r in results]) if all(r.p for r in results) else None
    return Judged(pick.verdict, f"{where}{pick.reason} ({tally} of {len(results)})",
                  pick.value, pick.lo, pick.hi, pick.n, label, pick.margin, again)


def judge_level(rows, stat, test, table, label="", level=SINGLE_LOOK, family=1):
    """The verdict at one level (or part): its statistic over the rows, judged by its test.
    A verdict must not rest on far runs. Where far runs stayed in (fewer than 3 near
    repetitions of their trial stood: analysis/set_aside.py), agrees or differs stands only
    if the near runs alone, where they give an interval, reach the same verdict; else the
    level is inconclusive and says so. In the a40aa06 run C the host ran 10 of the 14 Fig. 4
    runs at thresholds 5.4 and 8 far (10.4-15.9 s against 6.6-6.8 s near) and adm_threshold
    read 1.63 [1.11, 2.15], "differs", which run A (1.007, no far run) reversed. The check
    reads the placement and the verdict, never which runs were fast."""
    judged = judge_sample(STATISTICS[stat["kind"]](rows, stat, table), test, label, level, family)
    far = sum(1 for r in rows if ran_far(r))
    if judged.verdict not in ("agrees", "differs") or not far:
        return judged  # spares the near-only statistic; unless_far_made_it checks the same
    near = STATISTICS[stat["kind"]]([r for r in rows if not ran_far(r)], stat, table)
    return unless_far_made_it(judged, far, near, test, level, family)


def unless_far_made_it(judged, far, near, test, level=SINGLE_LOOK, family=1):
    """`judged`, or inconclusive when its `far` kept far runs made it: the `near` Sample (the
    same statistic without them) judged alone reaches another verdict. With fewer than 2
    near values there is nothing to check it against and it stands (its reason counts the
    far runs). One rule for a run's levels (judge_level) and for runs pooled
    (analysis/pooled.py)."""
    if judged.verdict not in ("agrees", "differs") or not far or len(near.values) < 2:
        return judged
    alone = judge_sample(near, test, judged.label, level, family)
    if alone.verdict == judged.verdict:
        return judged
    return Judged("inconclusive", f"{judged.reason}; {RESTS_ON_FAR} (without its {far} far run(s): "
                  f"{alone.brief()})", judged.value, judged.lo, judged.hi, judged.n, judged.label)


def judge_part(rows, part, table, label="", level=SINGLE_LOOK, family=1):
    """(verdict, detail text) of one part: at each level of `each`, or once; `family` is the
    number of levels the whole claim is judged at."""
    each, stat = part.get("each"), part["statistic"]
    if not each:
        r = judge_level(rows, stat, part["test"], table, label, level, family)
        return r, r.brief(verdict=False)
    levels = sorted({str(r.get(each)) for r in rows if str(r.get(each, "")) != ""}, key=level_key)
    if not levels:
        return Judged("inconclusive", f"n=0: no trials with {each} here", label=label), "no trials"
    results = [judge_level(select(rows, {each: lv}), stat, part["test"], table,
                            f"{each} {lv}", level, family) for lv in levels]
    return combine(results, label), "; ".join(f"{r.label}: {r.brief()}" for r in results)


def _levels(claim, tables):
    """(label, rows, statistic, table, test) of every level a claim is judged at (each part,
    each level of its `each`); none when its table is missing or the machine cannot
    measure it."""
    table = tables.get(claim["table"])
    if table is None or not table.rows or claim.get("statistic", {}).get("kind") == "not_measurable":
        return
    rows = select(table.rows, claim.get("where"))
    if _unmeasurable(claim, rows):
        return
    for i, p in enumerate(_parts(claim)):
        part_rows = select(rows, p.get("where")) if "all_of" in claim else rows
        name = f"{p.get('label', f'part {i + 1}')}: " if "all_of" in claim else ""
        each, stat = p.get("each"), p["statistic"]
        levels = (sorted({str(r.get(each)) for r in part_rows if str(r.get(each, "")) != ""}, key=level_key)
                  if each else [None])
        for lv in levels:
            yield (f"{name}{each} {lv}" if each else name.rstrip(": "),
                   select(part_rows, {each: lv}) if each else part_rows, stat, table, p["test"])


def level_samples(claim, tables, near_only=False):
    """[(label, Sample, test)] of every level a claim is judged at, the per-repetition values
    its verdict rests on and the test they meet; [] when its table is missing or the machine
    cannot measure it. For comparing runs (analysis.reproducibility), planning repetitions
    (analysis.repetition_plan) and pooling runs (analysis.pooled). near_only: the same
    statistic over the level's near runs alone (the far-run rule, unless_far_made_it)."""
    out = []
    for label, rows, stat, table, test in _levels(claim, tables):
        if near_only:
            rows = [r for r in rows if not ran_far(r)]
        try:
            out.append((label, STATISTICS[stat["kind"]](rows, stat, table), test))
        except NotMeasurable:
            continue
    return out


def far_runs_kept(claim, tables):
    """{level label: how many of the level's kept runs ran far}."""
    return {label: sum(1 for r in rows if ran_far(r)) for label, rows, *_ in _levels(claim, tables)}


def level_rows(claim, tables):
    """{label: the table rows behind that level} (every trial of it, baselines included)."""
    return {label: rows for label, rows, *_ in _levels(claim, tables)}


def _unmeasurable(claim, rows):
    """The reason this machine cannot measure the claim, or None."""
    req = claim.get("requires")
    if not req or any(str(r.get(req["column"], "")) != "" for r in rows):
        return None
    whys = Counter(r.get(req.get("why_column", ""), "") for r in rows if r.get(req.get("why_column", ""), ""))
    why = whys.most_common(1)[0][0] if whys else f"no trial recorded {req['column']}"
    return f"{why}; {req['otherwise']}"


def _beside(claim, rows, table, level):
    out = []
    for b in claim.get("beside", []):
        decl = {**claim["statistic"], **b}
        s = STATISTICS[decl["kind"]](rows, decl, table)
        if s.values:
            m, h, n = mean_ci(s.values, level)
            ci = f" [{_g(m - h)}, {_g(m + h)}]" if n > 1 else ""
            out.append(f"{decl.get('label', decl['kind'])} {_g(m)}{ci} n={n}")
        else:
            out.append(f"{decl.get('label', decl['kind'])}: {s.why}")
    return out


def judge_claim(claim, tables, level=SINGLE_LOOK):
    """(Judged, detail) for one claim against {experiment name: Table}, intervals at `level`."""
    table = tables.get(claim["table"])
    try:
        if claim.get("statistic", {}).get("kind") == "not_measurable":
            STATISTICS["not_measurable"]([], claim["statistic"], table)
        if table is None:  # the experiment is not part of this scale (or of --config experiments=)
            return Judged("not run at this scale", f"this run has no table of {claim['table']}"), ""
        if not table.rows:
            return Judged("inconclusive", f"n=0: no successful trials of {claim['table']} in this run"), "no trials"
        rows = select(table.rows, claim.get("where"))
        if not rows and not select(table.all_rows, claim.get("where")):
            return (Judged("not run at this scale", f"no trial of {claim['table']} in this run has "
                           f"{describe(claim.get('where'))}" + (f" ({claim['note']})" if claim.get("note") else "")),
                    "")
        why = _unmeasurable(claim, rows)
        if why:
            raise NotMeasurable(why)
        family = sum(1 for _ in _levels(claim, tables))
        if "all_of" in claim:
            done = [judge_part(select(rows, p.get("where")), p, table, p.get("label", f"part {i + 1}"), level,
                               family) for i, p in enumerate(claim["all_of"])]
            head = combine([r for r, _ in done])
            detail = "; ".join(f"{r.label}: {d}" for r, d in done)
        else:
            head, detail = judge_part(rows, claim, table, level=level, family=family)
    except NotMeasurable as e:
        head, detail = Judged("not measurable here", str(e)), ""
        rows = select(table.rows, claim.get("where")) if table else []
    extra = _beside(claim, rows, table, level) if table and claim.get("beside") else []
    return head, "; ".join([d for d in [detail] if d] + [f"beside: {x}" for x in extra])


def _statistic_label(claim):
    return " and ".join(p["statistic"].get("label", p["statistic"]["kind"]) for p in _parts(claim))


def _test_label(claim):
    if claim.get("statistic", {}).get("kind") == "not_measurable":
        return ""
    parts = []
    for p in _parts(claim):
        t = test_text(p["test"]) + (f" at every {p['each']}" if p.get("each") else "")
        parts.append(f"{p['label']}: {t}" if "all_of" in claim and p.get("label") else t)
    return "; ".join(parts)


def summary_row(claim, tables, level=SINGLE_LOOK):
    head, detail = judge_claim(claim, tables, level)
    paper = claim["paper"]
    num = (lambda v: "" if v is None else f"{v:.4g}")
    return {"id": claim["id"], "figure": claim["figure"], "claim": claim["claim"],
            "paper_value": "; ".join(p["value"] + (f" ({p['platform']})" if len(paper) > 1 else "") for p in paper),
            "paper_platform": "; ".join(p["platform"] for p in paper), "table": claim["table"],
            "statistic": _statistic_label(claim), "value": num(head.value), "ci_low": num(head.lo),
            "ci_high": num(head.hi), "n": str(head.n), "interval": interval_text(level) if head.lo is not None else "",
            "test": _test_label(claim), "verdict": head.verdict,
            "same_verdict_again": f"{head.p[head.verdict]:.2f}" if head.p and head.verdict in head.p else "",
            "reason": head.reason,
            "measured_here": detail or head.reason}


def read_tables(paths):
    """{experiment name: Table} from table paths (results/<scale>/tables/<experiment>.csv)."""
    return {Path(p).stem: Table(p, read_rows(p)) for p in paths}


def read_run_tables(run):
    """{experiment name: Table} of a run's results folder (results/<scale>): every table in
    its tables/ but the claims summary."""
    return read_tables(sorted(p for p in (Path(run) / "tables").glob("*.csv") if p.name != "summary.csv"))


def summarise(doc, table_paths, two_looks=()):
    """The summary's rows. Claims on the experiments named in `two_looks` (those that add
    repetitions when undecided, analysis/sequential.py) get 97.5% intervals, the rest 95%."""
    tables = read_tables(table_paths)
    return [summary_row(c, tables, TWO_LOOKS if c["table"] in two_looks else SINGLE_LOOK) for c in doc["claims"]]


def write_summary(rows, out):
    write_csv(out, FIELDS, rows)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--claims", default=str(DEFAULT), help="configs/claims.yaml")
    ap.add_argument("--check", action="store_true", help="only check the claims against the experiments")
    ap.add_argument("--out", help="the summary CSV to write")
    ap.add_argument("--two-looks", nargs="*", default=[], metavar="EXPERIMENT",
                    help="experiments that added repetitions when a claim was undecided (their `top_up` at "
                         "this scale, analysis/sequential.py): their claims get 97.5%% intervals [none: 95%%]")
    ap.add_argument("tables", nargs="*")
    a = ap.parse_args(argv)
    try:
        doc = check_claims(a.claims) if a.check else load_claims(a.claims)
    except ClaimError as e:
        print(f"claims: {e}", file=sys.stderr)
        return 2
    if a.check:
        print(f"claims: {len(doc['claims'])} claims in {a.claims} are well formed", file=sys.stderr)
        return 0
    if not a.out:
        print("claims: --out is needed to write the summary", file=sys.stderr)
        return 2
    rows = summarise(doc, a.tables, set(a.two_looks))
    write_summary(rows, a.out)
    counts = Counter(r["verdict"] for r in rows)
    print(f"claims: {len(rows)} claims ({', '.join(f'{counts[v]} {v}' for v in VERDICTS if counts[v])}) -> {a.out}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
