"""The first look of the two-look design (analysis/sequential.py): judge, on the first
`reps` repetitions of one experiment, every claim that reads it, and decide whether its
`top_up` repetitions run. They run when any of those claims is inconclusive; a claim this
machine cannot measure never asks for them. With --half-width-over (the experiment's
`top_up_half_width` at this scale) they also run when the figure's points are less precise
than that: the median of their 95% half-widths relative to the point (analysis/precision.py)
exceeds it. That sample size follows the measured spread, not the effect, so it leaves the
claims' error rates alone; a host whose speed wanders gets the repetitions a steady one
does without. With --precision-only (the experiment's `top_up_on_undecided: false`) only
the precision asks: the claims are judged once, on every repetition run, at 95%, and the
decision records their first-look verdicts at that level for the record. The decision is a
JSON file that the workflow's `top_up` checkpoint reads to choose the experiment's trials.

    python -m analysis.top_up --experiment NAME --claims configs/claims.yaml \\
        --table FIRST_LOOK.csv --out DECISION.json [--half-width-over 0.15 --plot EXPERIMENT.yaml
        [--precision-only]]
"""
import argparse
import json
import sys
from pathlib import Path

from airbase.atomic import write_atomic
from analysis import claims as claims_mod
from analysis.precision import median_half_width
from analysis.sequential import SINGLE_LOOK, TWO_LOOKS
from analysis.stats import read_rows
from workflows.experiments import ExperimentError, load_experiment


# Where the workflow writes each experiment's decision in a run's results folder
# (workflows/analysis.smk, checkpoint top_up): <run>/top-up/<experiment>.json.
DECISIONS = "top-up"


def read_decisions(run):
    """[(path, decision)] of a finished run's first-look decisions, those that can be read,
    in the experiments' order. A decision written before the workflow recorded its `level`
    came from a two-look experiment (only those had a first look then): it gets TWO_LOOKS."""
    out = []
    for p in sorted((Path(run) / DECISIONS).glob("*.json")):
        try:
            d = json.loads(p.read_text())
        except (OSError, ValueError):
            continue
        out.append((p, {"level": TWO_LOOKS, **d}))
    return out


def decide(doc, table_path, experiment, half_width_over=None, plot=None, precision_only=False):
    """{"top_up": bool, "level": the claims' interval level, "claims": {id: verdict at the
    first look with its figures}, and with half_width_over (and the figure's plot)
    "precision": {median_half_width, points, bar, asks}}. precision_only: an undecided
    claim does not ask (and the claims are judged at one look's level)."""
    if precision_only and half_width_over is None:
        raise ValueError("precision_only needs half_width_over")
    mine = [c for c in doc["claims"] if c["table"] == experiment]
    level = SINGLE_LOOK if precision_only else TWO_LOOKS
    rows = claims_mod.summarise({**doc, "claims": mine}, [table_path], set() if precision_only else {experiment})
    looked = {r["id"]: {"verdict": r["verdict"], "reason": r["reason"]} for r in rows}
    undecided = any(r["verdict"] == "inconclusive" for r in rows)
    d = {"experiment": experiment, "level": level, "top_up": undecided and not precision_only, "claims": looked}
    if half_width_over is not None:
        med, points = median_half_width(read_rows(table_path), plot)
        # No point with two values yet (every run of a point failed or set aside): nothing
        # says the figure is precise, so the repetitions run.
        asks = med is None or med > half_width_over
        d["precision"] = {"median_half_width": med, "points": points, "bar": half_width_over, "asks": asks}
        d["top_up"] = d["top_up"] or asks
    return d


def _said(d):
    said = "; ".join(f"{cid} {c['verdict']}" for cid, c in d["claims"].items()) or "no claims read it"
    p = d.get("precision")
    if p:
        hw = "no point with two runs" if p["median_half_width"] is None else f"{p['median_half_width']:.1%}"
        said += f"; median half-width {hw} ({'over' if p['asks'] else 'within'} {p['bar']:.0%})"
    if d["level"] == SINGLE_LOOK:
        said += "; only the precision asks"
    return said


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--experiment", required=True, help="the experiment's name (its table's stem)")
    ap.add_argument("--claims", required=True, help="configs/claims.yaml")
    ap.add_argument("--table", required=True, help="the experiment's table of its first `reps` repetitions")
    ap.add_argument("--out", required=True)
    ap.add_argument("--half-width-over", type=float, metavar="SHARE",
                    help="also add the repetitions when the figure's median relative half-width exceeds this")
    ap.add_argument("--plot", metavar="EXPERIMENT.yaml", help="the experiment whose plot gives the figure's points "
                    "(with --half-width-over)")
    ap.add_argument("--precision-only", action="store_true",
                    help="only the precision asks, not an undecided claim (with --half-width-over; the "
                         "experiment's top_up_on_undecided: false); its claims keep 95%% intervals")
    a = ap.parse_args(argv)
    if Path(a.table).stem != a.experiment:
        print(f"top_up: --table {a.table}: its name must be {a.experiment}.csv (claims find tables by name)",
              file=sys.stderr)
        return 2
    try:
        doc = claims_mod.load_claims(a.claims)
    except claims_mod.ClaimError as e:
        print(f"top_up: {e}", file=sys.stderr)
        return 2
    plot = None
    if a.precision_only and a.half_width_over is None:
        print("top_up: --precision-only needs --half-width-over SHARE and --plot EXPERIMENT.yaml", file=sys.stderr)
        return 2
    if a.half_width_over is not None:
        if a.half_width_over <= 0 or not a.plot:
            print("top_up: --half-width-over needs a share > 0 and --plot EXPERIMENT.yaml", file=sys.stderr)
            return 2
        try:
            plot = load_experiment(a.plot)["plot"]
        except ExperimentError as e:
            print(f"top_up: {e}", file=sys.stderr)
            return 2
    d = decide(doc, a.table, a.experiment, a.half_width_over, plot, a.precision_only)
    write_atomic(a.out, json.dumps(d, indent=1) + "\n")
    said = _said(d)
    print(f"top_up: {a.experiment}: first look: {said} -> "
          f"{'adding its top-up repetitions' if d['top_up'] else 'no repetitions added'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
