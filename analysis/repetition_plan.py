"""How many repetitions would make each claim's verdict come out the same in two runs.

A run's `same_verdict_again` says how likely a repeat of *that run* reaches its verdict.
Planning needs the other question: given what runs of this design measured, how often do
two fresh runs of r repetitions agree, for r below and above today's? More repetitions do
not always help: a claim whose value lies on its bound is reliably inconclusive with few
repetitions and a coin toss between inconclusive and a verdict with many, until very many
narrow the interval below the distance to the bound. The answer tells where repetitions
buy a stable verdict and where no affordable number will.

The per-repetition values of every claim level are pooled over the runs given (runs of
the same experiments on one machine: they sample one distribution, an assumption, so
give runs of the same design). For each multiple of the runs' repetitions, the truth is
drawn from the pooled values' posterior and two runs are drawn from it and judged as the
claim is (analysis/replication.py); levels combine as verdicts do. Minutes per repetition
come from the workflow's estimate for the scale (workflows/estimate.py).

    python -m analysis.repetition_plan RUN [RUN ...] [--times 0.5,1,1.5,2,3] [--scale quick]
                                       [--design fig04-adm-threshold=5,fig07-no-load=3]

RUN is a results folder (results/quick) with tables/. Prints a Markdown table and, for
the runs' repetitions and for each experiment at its best listed multiple, the expected
number of claims judged alike and the chance that all are. `--design` judges one plan
instead of the best multiples: the experiments named at those repetitions, the others at
the runs' own; it prints each claim it moves and what the plan costs by the estimate.
"""
import argparse
import math
import sys
from pathlib import Path

from analysis import claims as claims_mod
from analysis import replication
from analysis.sequential import SINGLE_LOOK, TWO_LOOKS
from analysis.top_up import read_decisions
from workflows.estimate import estimate_seconds
from workflows.experiments import all_trials, load_config

TIMES = (0.5, 1.0, 1.5, 2.0, 3.0)


def pooled_levels(claim, runs_tables):
    """[(test, pooled values, repetitions per run)] of each level the claim is judged at,
    over the runs that measured it; [] when a level has under 3 values in all."""
    by_label = {}
    for tables in runs_tables:
        for label, sample, test in claims_mod.level_samples(claim, tables):
            vals = [v for v in sample.values if v is not None]
            _, pooled, sizes = by_label.setdefault(label, (test, [], []))
            pooled.extend(vals)
            sizes.append(len(vals))
    levels = [(test, vals, max(sizes)) for test, vals, sizes in by_label.values()]
    return levels if levels and all(len(v) >= 3 for _, v, _ in levels) else []


def repetitions(n, times):
    """The repetitions of `times` x n (at least 2: an interval needs them)."""
    return max(2, round(n * times))


def alike(levels, level, times, draws=replication.DRAWS):
    """(chance two runs agree, the verdict most often reached) at `times` x the runs'
    repetitions."""
    per_level = [replication.paired_runs(vals, test, level, repetitions(size, times), draws, family=len(levels))
                 for test, vals, size in levels]
    same, seen = 0, {}
    for pairs in zip(*per_level):
        one = replication.worst([a for a, _ in pairs])
        other = replication.worst([b for _, b in pairs])
        same += one == other
        seen[one] = seen.get(one, 0) + 1
    return same / draws, max(seen, key=seen.get)


def minutes_per_repetition(scale):
    """{experiment: estimated minutes of one repetition of its trials} at `scale`."""
    plan = all_trials(load_config(), scale)
    out = {}
    for name, (exp, trials) in plan.items():
        first = [t for t in trials if not t.get("top_up")]
        reps = max(1, len({t["rep"] for t in first}))
        out[name] = sum(estimate_seconds(t) for t in first) / 60 / reps
    return out


def two_looks_of(runs):
    """The experiments whose claims these runs judged at 97.5%: those with a first-look
    decision at two looks' level (a top-up only precision asks for keeps 95%)."""
    return {p.stem for r in runs for p, d in read_decisions(r) if d["level"] == TWO_LOOKS}


def plan(runs, doc, times=TIMES, two_looks=()):
    """[{claim, table, n, chances: {times: (alike, verdict)}}] of every claim the runs can judge."""
    runs_tables = [claims_mod.read_run_tables(r) for r in runs]
    out = []
    for claim in doc["claims"]:
        levels = pooled_levels(claim, runs_tables)
        if not levels:
            continue
        level = TWO_LOOKS if claim["table"] in two_looks else SINGLE_LOOK
        out.append({"claim": claim["id"], "table": claim["table"], "n": max(s for _, _, s in levels),
                    "chances": {x: alike(levels, level, x) for x in times}})
    return out


def _best_per_experiment(rows, times):
    """{experiment: multiple} maximising the product of its claims' chances (ties: fewer)."""
    best = {}
    for table in sorted({r["table"] for r in rows}):
        mine = [r for r in rows if r["table"] == table]
        best[table] = max(times, key=lambda x: (math.prod(r["chances"][x][0] for r in mine), -x))
    return best


def report(rows, times, per_rep=None):
    head = "| claim | experiment | n | " + " | ".join(f"{x:g}x" for x in times) + " |"
    lines = [head, "|" + "---|" * (3 + len(times))]
    for r in rows:
        cells = [f"{r['chances'][x][0]:.2f} {r['chances'][x][1][:4]} (n={repetitions(r['n'], x)})" for x in times]
        lines.append(f"| {r['claim']} | {r['table']} | {r['n']} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("Each cell: the chance that two runs of that many repetitions judge the claim alike, "
                 "and the verdict most often reached.")

    def said(choice):
        ps = [r["chances"][choice[r["table"]]][0] for r in rows]
        return f"expected alike {sum(ps):.1f} of {len(ps)}, all alike {100 * math.prod(ps):.1f}%"

    lines.append(f"At the runs' repetitions: {said({r['table']: 1.0 for r in rows})}.")
    best = _best_per_experiment(rows, times)
    text = f"Each experiment at its best listed multiple: {said(best)}"
    if per_rep:
        n_of = {}
        for r in rows:
            n_of[r["table"]] = max(n_of.get(r["table"], 0), r["n"])
        now = sum(per_rep.get(t, 0) * n for t, n in n_of.items())
        then = sum(per_rep.get(t, 0) * repetitions(n, best[t]) for t, n in n_of.items())
        text += f"; the judged experiments' trials {now:.0f} -> {then:.0f} min (estimate)"
    lines.append(text + ": " + ", ".join(f"{t} {x:g}x" for t, x in best.items()) + ".")
    return "\n".join(lines) + "\n"


def _minutes_or_none(scale):
    try:
        return minutes_per_repetition(scale)
    except Exception as e:  # the estimate is a courtesy: the chances stand without it
        print(f"repetition_plan: no time estimate for scale {scale}: {e}", file=sys.stderr)
        return None


def parse_design(text):
    """{experiment: repetitions} of `--design` text 'fig04-adm-threshold=5,fig07-no-load=3'."""
    design = {}
    for part in text.split(","):
        name, sep, reps = part.partition("=")
        if not sep or not name.strip() or not reps.strip().isdigit() or int(reps) < 2:
            raise ValueError(f"{part!r}: give EXPERIMENT=REPETITIONS with at least 2 repetitions")
        design[name.strip()] = int(reps)
    return design


def design_report(runs, doc, design, two_looks=(), per_rep=None):
    """Markdown lines: each claim of an experiment the design names, its chance of the same
    verdict twice at the runs' repetitions and at the design's, then the totals over every
    judged claim and the design's cost in estimated minutes."""
    runs_tables = [claims_mod.read_run_tables(r) for r in runs]
    lines = ["| claim | experiment | n | chance alike | at the design | n |", "|---|---|---|---|---|---|"]
    now, then = [], []
    n_of = {}  # experiment -> the runs' repetitions
    for claim in doc["claims"]:
        levels = pooled_levels(claim, runs_tables)
        if not levels:
            continue
        table, n = claim["table"], max(s for _, _, s in levels)
        n_of[table] = max(n_of.get(table, 0), n)
        level = TWO_LOOKS if table in two_looks else SINGLE_LOOK
        before = alike(levels, level, 1.0)
        after = alike(levels, level, design[table] / n) if table in design else before
        now.append(before[0])
        then.append(after[0])
        if table in design:
            lines.append(f"| {claim['id']} | {table} | {n} | {before[0]:.2f} {before[1][:4]} | "
                         f"{after[0]:.2f} {after[1][:4]} | {design[table]} |")
    unknown = sorted(set(design) - set(n_of))
    if unknown:
        raise ValueError(f"--design names {', '.join(unknown)}: no claim of these runs reads it")
    lines.append("")
    lines.append(f"At the runs' repetitions: expected alike {sum(now):.1f} of {len(now)}, all alike "
                 f"{100 * math.prod(now):.1f}%. This design: expected alike {sum(then):.1f}, all alike "
                 f"{100 * math.prod(then):.1f}%.")
    if per_rep:
        minutes = sum(per_rep.get(t, 0) * (reps - n_of[t]) for t, reps in design.items())
        lines.append(f"Its cost by the estimate: {minutes:+.1f} min of trials.")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="Example: python -m analysis.repetition_plan runA/results/quick "
                                        "runB/results/quick --times 0.5,1,2")
    ap.add_argument("runs", nargs="+", help="results folders of runs of the same design (each with tables/)")
    ap.add_argument("--times", default=",".join(f"{x:g}" for x in TIMES),
                    help="multiples of the runs' repetitions to consider (default %(default)s)")
    ap.add_argument("--scale", default="quick", help="the scale whose time estimate prices a repetition")
    ap.add_argument("--claims", default=str(claims_mod.DEFAULT), help="the claims file (default configs/claims.yaml)")
    ap.add_argument("--design", metavar="EXP=N,...",
                    help="judge this plan: the experiments named at these repetitions, the others at the runs' "
                         "own (e.g. fig04-adm-threshold=5,fig07-no-load=3); prints the claims it moves, the "
                         "expected alike and its cost, instead of the table of multiples")
    a = ap.parse_args(argv)
    try:
        times = tuple(float(x) for x in a.times.split(","))
    except ValueError:
        print(f"repetition_plan: --times {a.times!r}: give numbers separated by commas, e.g. 0.5,1,2",
              file=sys.stderr)
        return 2
    if 1.0 not in times or any(x <= 0 for x in times):
        print(f"repetition_plan: --times {a.times!r}: the multiples must be positive and include 1",
              file=sys.stderr)
        return 2
    try:
        design = parse_design(a.design) if a.design else None
    except ValueError as e:
        print(f"repetition_plan: --design {e}", file=sys.stderr)
        return 2
    for r in a.runs:
        if not (Path(r) / "tables").is_dir():
            print(f"repetition_plan: {r}: no tables/ folder (give a results folder such as results/quick)",
                  file=sys.stderr)
            return 2
    try:
        doc = claims_mod.load_claims(a.claims)
    except claims_mod.ClaimError as e:
        print(f"repetition_plan: {e}", file=sys.stderr)
        return 2
    if design:
        per_rep = _minutes_or_none(a.scale)
        try:
            sys.stdout.write(design_report(a.runs, doc, design, two_looks_of(a.runs), per_rep))
        except ValueError as e:
            print(f"repetition_plan: {e}", file=sys.stderr)
            return 2
        return 0
    rows = plan(a.runs, doc, times, two_looks_of(a.runs))
    if not rows:
        print("repetition_plan: no claim has 3 or more values in these runs' tables", file=sys.stderr)
        return 2
    sys.stdout.write(report(rows, times, _minutes_or_none(a.scale)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
