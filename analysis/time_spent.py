"""Where a run's time went, from its trial records: the engine runs it kept, the runs it
made again (far placement, disturbance), the waits for near CPUs, the calibration runs, the
runner's own work, and what happened between trials (Snakemake, tables, figures).

Why: the quick reproduction has a time budget, and on a host that often places its vCPUs
far apart a run can exceed it with the same plan (docs/reference-runs.md): this says
whether the plan or the host took the time. Set-up before the first trial and the report
after the last are outside the trials' span and not counted.

    python -m analysis.time_spent results/quick    (the workflow prints it at the end)
"""
import argparse
import json
import sys
from pathlib import Path

# (key, what it is), in the order a reader wants them
PARTS = (
    ("engine", "engine runs kept"),
    ("rerun", "engine runs made again (far placement or disturbed)"),
    ("near_wait", "waiting for near CPUs"),
    ("calibration", "calibration (end times: runs, waits and probes)"),
    ("settle", "waiting for the workflow to go quiet"),
    ("runner", "the runner's own work"),
    ("between", "between trials (Snakemake, tables, figures)"),
)


def named_records(run, experiments=None):
    """(experiment, record) for the trial records of a run folder (results/<scale>), of every
    experiment or of the named ones, any status: a failed trial's time was spent too. The
    experiment is the record's folder."""
    for p in sorted((Path(run) / "trials").glob("*/*.json")):
        if experiments is not None and p.parent.name not in experiments:
            continue
        try:
            d = json.loads(p.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(d, dict):
            yield p.parent.name, d


def timed(recs):
    """The records that say when their trial ran (what time_spent reads)."""
    return [d for d in recs if isinstance(d.get("trial"), dict) and "started_unix" in d["trial"]]


def records(run, experiments=None):
    """The records of a run that say when their trial ran."""
    return timed(d for _, d in named_records(run, experiments))


def _calibration_s(d):
    """Seconds of the calibration this trial made (none when it was cached): its whole span
    when recorded, else (records before it was) the engine runs alone, and the waits and
    probes around them fall to the runner's share."""
    c = d.get("calibration") or {}
    if not c or c.get("cached"):
        return 0.0
    if c.get("span_s") is not None:
        return c["span_s"]
    p = c.get("pilot") or {}
    return (sum(p.get("walls_s") or []) + ((p.get("probe") or {}).get("wall_s") or 0.0)
            + ((p.get("check_run") or {}).get("wall_s") or 0.0))


def kept_attempt(noise):
    """The index of the attempt a trial kept (its noise.attempts): the record says which;
    records from before it did, the last."""
    kept = noise.get("kept_attempt")
    return len(noise.get("attempts") or []) - 1 if kept is None else kept


def _trial(d):
    """(span, {part: seconds}) of one trial record: its wall span, split ('between' is the
    run's, not a trial's)."""
    t = d["trial"]
    span = max(0.0, t["finished_unix"] - t["started_unix"])
    nz = d.get("noise") or {}
    attempts = nz.get("attempts") or []
    kept = kept_attempt(nz)
    windows = [a.get("window_s") or 0.0 for a in attempts]
    engine = windows[kept] if 0 <= kept < len(windows) else (d.get("wall_s") or 0.0)
    # Each attempt's own wait and settle since they are recorded per attempt; before that
    # only the kept run's, and the waits before re-runs fall to the runner's share.
    if attempts and all("waited_s" in a for a in attempts):
        wait = sum(a["waited_s"] or 0.0 for a in attempts)
        settle = sum(a.get("settle_s") or 0.0 for a in attempts)
    else:
        wait = (((d.get("machine_speed") or {}).get("wait") or {}).get("waited_s")) or 0.0
        settle = nz.get("workflow_settle_s") or 0.0
    parts = {"engine": engine, "rerun": sum(windows) - engine if windows else 0.0,
             "near_wait": wait, "calibration": _calibration_s(d), "settle": settle}
    parts["runner"] = max(0.0, span - sum(parts.values()))
    return span, parts


def time_spent(recs):
    """{"span_s", "trials", "parts": {part: seconds}} over trial records: span_s from the
    first trial's start to the last one's end; `between` is what of it no trial covered."""
    spans, total = [], {k: 0.0 for k, _ in PARTS}
    for d in recs:
        span, parts = _trial(d)
        spans.append((d["trial"]["started_unix"], d["trial"]["finished_unix"]))
        for k, v in parts.items():
            total[k] += v
    if not spans:
        return {"span_s": 0.0, "trials": 0, "parts": total}
    spans.sort()
    whole = spans[-1][1] - spans[0][0]
    covered, end = 0.0, spans[0][0]
    for a, b in spans:  # trials run one at a time, but do not assume it
        covered += max(0.0, b - max(a, end))
        end = max(end, b)
    total["between"] = max(0.0, whole - covered)
    return {"span_s": whole, "trials": len(spans), "parts": total}


def by_experiment(recs):
    """{experiment: {"trials", "span_s" (its trials' spans summed), "far_s" (of which runs
    made again and waits for near CPUs)}}, in the order the experiments first ran: what each
    costs, for choosing a plan's repetitions."""
    out = {}
    for d in sorted(recs, key=lambda d: d["trial"]["started_unix"]):
        name = (d["trial"].get("labels") or {}).get("experiment", "?")
        span, parts = _trial(d)
        e = out.setdefault(name, {"trials": 0, "span_s": 0.0, "far_s": 0.0})
        e["trials"] += 1
        e["span_s"] += span
        e["far_s"] += parts["rerun"] + parts["near_wait"]
    return out


def summary_line(spent):
    """'41.2 min over 291 trials: engine runs kept 34.4 (83%), ...' (parts over 0.05 min)."""
    span = spent["span_s"]
    if not spent["trials"] or span <= 0:
        return "no trial records"
    shown = [f"{what} {s / 60:.1f} ({s / span:.0%})" for k, what in PARTS
             if (s := spent["parts"][k]) >= 3.0]
    return f"{span / 60:.1f} min over {spent['trials']} trials: " + ", ".join(shown)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", help="a run's results folder (results/quick)")
    ap.add_argument("--prefix", default="", help="printed before the line (the workflow's 'airlab: ...')")
    a = ap.parse_args(argv)
    if not (Path(a.run) / "trials").is_dir():
        print(f"time_spent: {a.run} has no trials/ folder: not a run's results", file=sys.stderr)
        return 2
    print(a.prefix + summary_line(time_spent(records(a.run))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
