"""The paper's claims judged over several runs of one scale, each run's mean one value.

    python -m analysis.pooled results/quick results/quick-20261130T0738Z [RUN ...] [--out pooled.csv]

One run's interval holds the variation among its own repetitions, not the variation between
runs (the end times a run calibrated, the host's memory speed that day, how often it placed
the vCPUs far apart: docs/reference-runs.md), and a claim whose value lies within about a
half-width of its bound lands on either side of "inconclusive" from run to run. Here each
run's mean of a claim level is one value: k runs give a Student's t interval with k - 1
degrees of freedom that holds both kinds of variation, judged by the claim's own test, with
the wider family interval where a claim is judged at several levels, exactly as
analysis/claims.py judges one run's repetitions, far-run rule included (a pooled verdict the
runs' kept far runs made, one their near runs alone do not reach, is inconclusive). The
runs' own verdicts are shown beside it,
with how many claims each run judged as the next one given did, how many it reversed (agrees
in one, differs in the other), and how many run verdicts reverse the pooled one.

Runs to pool are finished runs of one scale (`make reproduce`, then `make reproduce-again`
as often as wanted: each leaves the earlier run at results/<scale>-<time>). A claim level
that only some runs measured is judged on those; a claim no run could judge keeps the
runs' own verdict (not measurable here, not run at this scale).

Exit 0 when every run could be read, 2 when a folder is not a finished run, fewer than
two are given, or the runs are of different scales."""
import argparse
import math
import statistics
import sys
from collections import Counter
from pathlib import Path

from airbase.atomic import write_csv
from analysis.claim_kinds import Sample
from analysis.claims import (VERDICTS, combine, far_runs_kept, judge_sample, level_samples, load_claims,
                             read_run_tables, reversed_verdicts, unless_far_made_it)
from analysis.sequential import SINGLE_LOOK
from analysis.stats import read_rows, t_quantile
from analysis.time_spent import named_records

# Verdicts that do not rest on a sample: the same in every run of the machine and scale.
UNJUDGED = ("not measurable here", "not run at this scale", "absent")
FIELDS = ["id", "verdict", "value", "ci_low", "ci_high", "runs", "same_verdict_again", "reason", "run_verdicts"]


class PoolError(Exception):
    """Runs that cannot be pooled; the message says which and why."""


def run_facts(run):
    """(scale, code versions, machines) a run's trial records name."""
    scales, versions, machines = set(), set(), set()
    for _, d in named_records(run):
        scales.add(((d.get("trial") or {}).get("labels") or {}).get("scale"))
        versions.add((d.get("runner") or {}).get("version"))
        machines.add((d.get("machine") or {}).get("cpu_model"))
    return {s for s in scales if s}, {v for v in versions if v}, {m for m in machines if m}


def run_means(claim, tables, near_only=False):
    """{level label: (mean of the run's per-repetition values, test)} of the levels with a
    value; near_only: of the run's near runs alone (claims.level_samples)."""
    out = {}
    for label, sample, test in level_samples(claim, tables, near_only=near_only):
        vals = [v for v in sample.values if v is not None]
        if vals:
            out[label] = (statistics.mean(vals), test)
    return out


def pooled_judgement(claim, runs_tables):
    """The Judged of one claim over the runs (None when no run has a value at any level).
    As in one run (claims.unless_far_made_it), a pooled verdict must not rest on far runs
    the runs kept: where some did, the runs' means over their near runs alone must reach
    it too, else the level is inconclusive."""
    per_run = [run_means(claim, t) for t in runs_tables]
    labels = list(dict.fromkeys(lv for means in per_run for lv in means))
    if not labels:
        return None
    near_per_run = [run_means(claim, t, near_only=True) for t in runs_tables]
    far_per_run = [far_runs_kept(claim, t) for t in runs_tables]
    results = []
    for lv in labels:
        have = [means[lv] for means in per_run if lv in means]
        missing = len(per_run) - len(have)
        note = f"measured in {len(have)} of {len(per_run)} runs" if missing else ""
        test, family = have[0][1], len(labels)
        judged = judge_sample(Sample([m for m, _ in have], note=note), test, lv, family=family)
        far = sum(f.get(lv, 0) for f in far_per_run)
        near = Sample([means[lv][0] for means in near_per_run if lv in means])
        results.append(unless_far_made_it(judged, far, near, test, family=family))
    return combine(results)


def _brief(row):
    """'agrees: 1.03 [1.01, 1.04] n=3' of a run's summary row."""
    ci = f" [{float(row['ci_low']):.4g}, {float(row['ci_high']):.4g}]" if row.get("ci_low") else ""
    val = f" {float(row['value']):.4g}{ci}" if row.get("value") else ""
    return f"{row['verdict']}:{val} n={row.get('n', '')}"


def pool(runs):
    """(rows of FIELDS, Markdown report) of the claims over the runs."""
    if len(runs) < 2:
        raise PoolError("give at least two runs (results/<scale> folders) to pool")
    for run in runs:
        if not (Path(run) / "tables" / "summary.csv").is_file():
            raise PoolError(f"{run}: no tables/summary.csv (give a results/<scale> folder of a finished run)")
    facts = [run_facts(r) for r in runs]
    scales = set().union(*(f[0] for f in facts))
    if len(scales) > 1:
        raise PoolError(f"the runs are of different scales ({', '.join(sorted(scales))}): their claims read "
                        f"different trials; pool runs of one scale")
    summaries = [{r["id"]: r for r in read_rows(Path(run) / "tables" / "summary.csv")} for run in runs]
    tables = [read_run_tables(run) for run in runs]
    rows = []
    for claim in load_claims()["claims"]:
        own = [s.get(claim["id"], {"verdict": "absent"}) for s in summaries]
        rows.append(_pooled_row(claim["id"], pooled_judgement(claim, tables), own))
    return rows, _report(runs, facts, summaries, rows)


def _pooled_row(cid, j, own):
    """A row of FIELDS: the pooled Judged j, or (j None: no run has a value) the runs' own
    verdict where they all say the same (not measurable here, not run at this scale)."""
    row = {"id": cid, "value": "", "ci_low": "", "ci_high": "", "runs": "0", "same_verdict_again": "",
           "run_verdicts": "; ".join(o["verdict"] for o in own)}
    if j is None:
        kinds = Counter(o["verdict"] for o in own)
        if len(kinds) == 1:
            return {**row, "verdict": own[0]["verdict"], "reason": own[0].get("reason", "")}
        return {**row, "verdict": "inconclusive", "reason": "the runs judged it differently and none has a value"}
    num = (lambda v: "" if v is None else f"{v:.4g}")
    again = f"{j.p[j.verdict]:.2f}" if j.p and j.verdict in j.p else ""
    return {**row, "verdict": j.verdict, "value": num(j.value), "ci_low": num(j.lo), "ci_high": num(j.hi),
            "runs": str(j.n), "same_verdict_again": again, "reason": j.reason}


def run_to_run(rows):
    """Each run against the next in the order given: (claims judged alike, claims reversed)
    per pair, over the claims every run's summary names; and the run verdicts that reverse
    the pooled one. What a bar over consecutive runs or against the pool would count."""
    judged = [r["run_verdicts"].split("; ") + [r["verdict"]] for r in rows
              if "absent" not in r["run_verdicts"].split("; ")]
    k = len(judged[0]) - 1 if judged else 0
    pairs = [(sum(v[i] == v[i + 1] for v in judged), sum(reversed_verdicts(v[i], v[i + 1]) for v in judged))
             for i in range(k - 1)]
    against_pool = sum(reversed_verdicts(v[i], v[-1]) for v in judged for i in range(k))
    return pairs, against_pool, len(judged)


def _run_to_run_line(rows):
    pairs, against_pool, n = run_to_run(rows)
    if not pairs:
        return []
    alike = sorted(a for a, _ in pairs)
    return ["", f"Each run against the next, in the order given: {alike[0]}-{alike[-1]} of {n} claims alike "
                f"(median {statistics.median(alike):g} over {len(pairs)} pairs), {sum(r for _, r in pairs)} reversed "
                f"(agrees in one, differs in the other); run verdicts that reverse the pooled one: {against_pool}."]


def _report(runs, facts, summaries, rows):
    names = [f"run {i}" for i in range(1, len(runs) + 1)]
    lines = [f"## {len(runs)} runs pooled: each run's mean of a claim level is one value", ""]
    for name, run, (scales, versions, machines) in zip(names, runs, facts):
        lines.append(f"- {name}: {run} (scale {', '.join(sorted(scales)) or '?'}; code "
                     f"{', '.join(sorted(versions)) or '?'}; {', '.join(sorted(machines)) or 'machine not recorded'})")
    if len(runs) < 4:
        lines += ["", f"With {len(runs)} runs the interval takes Student's t with {len(runs) - 1} degree(s) of "
                      f"freedom ({t_quantile(SINGLE_LOOK, len(runs) - 1):.1f} times the standard error): it settles little; four or more "
                      f"runs settle the claims a run leaves near its bound."]
    machines = set().union(*(f[2] for f in facts))
    if len(machines) > 1:
        lines += ["", f"The runs are from {len(machines)} machines: the pooled interval holds the variation "
                      f"between machines too, and its verdict is not one machine's."]
    judged = [r for r in rows if "absent" not in r["run_verdicts"].split("; ")]  # in every run's summary
    alike = sum(1 for r in judged if len(set(r["run_verdicts"].split("; "))) == 1)
    counts = Counter(r["verdict"] for r in rows)
    again = [float(r["same_verdict_again"]) for r in rows if r["same_verdict_again"]]
    certain = sum(1 for r in rows if not r["same_verdict_again"] and r["verdict"] in UNJUDGED)
    odds = (f" As many runs again would judge alike an expected {sum(again) + certain:.1f} of "
            f"{len(again) + certain} (every one: {math.prod(again):.0%}; analysis/replication.py on the runs' means)."
            if again else "")
    lines += ["", f"Every run judged alike: {alike} of {len(judged)} claims. Pooled: "
                  + ", ".join(f"{counts[v]} {v}" for v in VERDICTS if counts[v]) + "." + odds]
    lines += _run_to_run_line(rows)
    lines += ["", "| claim | " + " | ".join(names) + " | pooled |", "|---|" + "---|" * (len(runs) + 1)]
    for r in rows:
        cells = [_brief(s[r["id"]]) if r["id"] in s else "absent" for s in summaries]
        ci = f" [{r['ci_low']}, {r['ci_high']}]" if r["ci_low"] else ""
        again = f" (same again {r['same_verdict_again']})" if r["same_verdict_again"] else ""
        pooled = f"**{r['verdict']}**" + (f": {r['value']}{ci} over {r['runs']} runs{again}" if r["value"] else "")
        lines.append(f"| {r['id']} | " + " | ".join(cells) + f" | {pooled} |")
    lines += ["", "A claim judged at several levels shows its deciding level (the reason column of --out has each)."]
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", metavar="RUN", help="a finished run's results/<scale> folder")
    ap.add_argument("--out", help="also write the pooled verdicts as CSV here")
    a = ap.parse_args(argv)
    try:
        rows, text = pool(a.runs)
    except PoolError as e:
        print(f"pooled: {e}", file=sys.stderr)
        return 2
    if a.out:
        write_csv(a.out, FIELDS, rows)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
