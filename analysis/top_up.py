"""The first look of the two-look design (analysis/sequential.py): judge, on the first
`reps` repetitions of one experiment, every claim that reads it, and decide whether its
`top_up` repetitions run. They run when any of those claims is inconclusive; a claim this
machine cannot measure never asks for them. The decision is a JSON file that the
workflow's `top_up` checkpoint reads to choose the experiment's trials.

    python -m analysis.top_up --experiment NAME --claims configs/claims.yaml \\
        --table FIRST_LOOK.csv --out DECISION.json
"""
import argparse
import json
import sys
from pathlib import Path

from airbase.atomic import write_atomic
from analysis import claims as claims_mod
from analysis.sequential import TWO_LOOKS


def decide(doc, table_path, experiment):
    """{"top_up": bool, "claims": {id: verdict at the first look with its figures}}."""
    mine = [c for c in doc["claims"] if c["table"] == experiment]
    rows = claims_mod.summarise({**doc, "claims": mine}, [table_path], {experiment})
    looked = {r["id"]: {"verdict": r["verdict"], "reason": r["reason"]} for r in rows}
    return {"experiment": experiment, "level": TWO_LOOKS,
            "top_up": any(r["verdict"] == "inconclusive" for r in rows), "claims": looked}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--experiment", required=True, help="the experiment's name (its table's stem)")
    ap.add_argument("--claims", required=True, help="configs/claims.yaml")
    ap.add_argument("--table", required=True, help="the experiment's table of its first `reps` repetitions")
    ap.add_argument("--out", required=True)
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
    d = decide(doc, a.table, a.experiment)
    write_atomic(a.out, json.dumps(d, indent=1) + "\n")
    said = "; ".join(f"{cid} {c['verdict']}" for cid, c in d["claims"].items()) or "no claims read it"
    print(f"top_up: {a.experiment}: first look: {said} -> "
          f"{'adding its top-up repetitions' if d['top_up'] else 'no repetitions added'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
