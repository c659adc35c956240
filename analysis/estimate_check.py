"""A finished run's time against the estimate that `snakemake -n` prints, part by part, and
the host's vCPU placement as the run measured it.

Why: the estimate (workflows/estimate.py) is a model with constants fitted to measured
runs, and the host's placement (how often it puts the two vCPUs far apart, how long a trial
waits for them to come near) moves a run's time by a quarter without any change of plan.
This says which part of a gap is the host and which is the model, and prints the placement
constants (a HostPlacement) the run measured, so a refit is read off stored runs, not
guessed. Only trials of this checkout's plan count (a run of another plan: its trials that
are still in the plan).

    python -m analysis.estimate_check results/quick [results/quick-20261206-0412 ...]
"""
import argparse
import json
import statistics
import sys
from pathlib import Path

from analysis.time_spent import _trial
from workflows.estimate import FAR_HOST, NEAR_HOST, HostPlacement, plan_parts
from workflows.experiments import all_trials, load_config

# (row, the estimate's parts, the run's parts) in the order a reader wants them; the run's
# parts are measure()'s keys
ROWS = (
    ("engine runs kept", ("engine",), ("engine",)),
    ("far re-runs and the waits before them", ("far",), ("rerun", "rerun_wait")),
    ("waits for near CPUs before a trial's first run", ("near_wait",), ("first_wait",)),
    ("calibration", ("pilots",), ("calibration",)),
    ("the rest: start-up, probes, between trials, analysis", ("overhead", "analysis"), ("rest",)),
)


# A run's seconds by part (they add up to its span); measure() adds calibration_wait, the
# part of `calibration` that is not engine runs
MEASURED = ("engine", "rerun", "rerun_wait", "first_wait", "calibration", "rest")


def run_seconds(m):
    return sum(m[k] for k in MEASURED)


def _attempts(d):
    return (d.get("noise") or {}).get("attempts") or []


def measure(records):
    """The run's seconds by part, and the counts its placement constants come from."""
    m = dict.fromkeys(MEASURED, 0.0)
    n = dict.fromkeys(("trials", "no_load", "no_load_reruns", "reruns", "far_loaded", "far_loaded_reruns",
                       "calibration_runs"), 0)
    calibration_wait = 0.0
    starts, ends = [], []
    for trial, d in records:
        span, parts = _trial(d)
        attempts = _attempts(d)
        waits = [a.get("waited_s") or 0.0 for a in attempts]
        first = waits[0] if waits else parts["near_wait"]
        reruns = max(0, len(attempts) - 1)
        m["engine"] += parts["engine"]
        m["rerun"] += parts["rerun"]
        m["rerun_wait"] += parts["near_wait"] - first
        m["first_wait"] += first
        m["calibration"] += parts["calibration"]
        m["rest"] += parts["settle"] + parts["runner"]
        n["trials"] += 1
        n["reruns"] += reruns
        if trial["profile"] == "none":
            n["no_load"] += 1
            n["no_load_reruns"] += reruns
        elif trial.get("rerun_far_loaded"):
            n["far_loaded"] += 1
            n["far_loaded_reruns"] += reruns
        wait, runs = _calibration_wait(d)
        calibration_wait += wait
        n["calibration_runs"] += runs
        starts.append(d["trial"]["started_unix"])
        ends.append(d["trial"]["finished_unix"])
    if starts:
        m["rest"] += max(0.0, max(ends) - min(starts) - run_seconds(m))  # between trials
    m["calibration_wait"] = calibration_wait  # within m["calibration"], not a part of its own
    return m, n


def _calibration_wait(d):
    """(seconds, runs) of a calibration this trial made beyond its engine runs, counted as
    pilot_seconds counts them: ~1 s of lengthening probes, the pilots, the check run, and
    3 + pilots + check runs that each wait for near CPUs. (0, 0) if it made none."""
    c = d.get("calibration") or {}
    if c.get("cached") is not False or c.get("span_s") is None:
        return 0.0, 0
    p = c.get("pilot") or {}
    walls = p.get("walls_s") or []
    check = (p.get("check_run") or {}).get("wall_s")
    runs = 3 + len(walls) + (check is not None)
    return max(0.0, c["span_s"] - 1.0 - sum(walls) - (check or 0.0)), runs


def placement(m, n):
    """The HostPlacement this run measured (None where it had nothing to count)."""
    if not n["trials"]:
        return None
    return HostPlacement(
        near_wait_s=m["first_wait"] / n["trials"],
        far_reruns_per_no_load=n["no_load_reruns"] / n["no_load"] if n["no_load"] else 0.0,
        far_rerun_wait_s=m["rerun_wait"] / n["reruns"] if n["reruns"] else 0.0,
        far_reruns_per_loaded=n["far_loaded_reruns"] / n["far_loaded"] if n["far_loaded"] else 0.0,
        pilot_run_wait_s=m["calibration_wait"] / n["calibration_runs"] if n["calibration_runs"] else 0.0)


def estimate(plan, trials, host):
    """The estimate's seconds by part for the trials that ran (top-ups only where they ran)."""
    ran = {}
    for t in trials:
        ran.setdefault(t["experiment"], []).append(t)
    return plan_parts(plan, ran, host)


def run_records(run, plan):
    """([(plan trial, record)], records not in the plan) of a run folder."""
    matched, other = [], 0
    for p in sorted((Path(run) / "trials").glob("*/*.json")):
        try:
            d = json.loads(p.read_text())
        except (OSError, ValueError):
            continue
        if not isinstance(d, dict) or not isinstance(d.get("trial"), dict) or "started_unix" not in d["trial"]:
            continue
        exp = plan.get(p.parent.name)
        trial = next((t for t in exp[1] if t["id"] == p.stem), None) if exp else None
        if trial is None:
            other += 1
            continue
        matched.append(({**trial, "experiment": p.parent.name}, d))
    return matched, other


def report(run, plan, out=sys.stdout):
    records, other = run_records(run, plan)
    if not records:
        print(f"estimate_check: {run}: no trial record of this checkout's plan", file=sys.stderr)
        return None
    m, n = measure(records)
    host = placement(m, n)
    trials = [t for t, _ in records]
    hosts = (("far host", FAR_HOST), ("near host", NEAR_HOST), ("this run's placement", host))
    est = {name: estimate(plan, trials, h) for name, h in hosts}
    print(f"{run}: {n['trials']} trials of this plan" + (f" ({other} records of another plan left out)" if other else ""),
          file=out)
    print(f"| part (min) | {' | '.join(f'estimate, {name}' for name, _ in hosts)} | measured |", file=out)
    print("|---|" + "---|" * (len(hosts) + 1), file=out)
    for row, eparts, mparts in ROWS:
        cells = [f"{sum(est[name][k] for k in eparts) / 60:.1f}" for name, _ in hosts]
        print(f"| {row} | {' | '.join(cells)} | {sum(m[k] for k in mparts) / 60:.1f} |", file=out)
    totals = [sum(est[name].values()) / 60 for name, _ in hosts]
    real = run_seconds(m) / 60
    print(f"| **total** | {' | '.join(f'{t:.1f} ({t / real:.2f}x)' for t in totals)} | {real:.1f} |", file=out)
    print(f"placement measured: near_wait_s={host.near_wait_s:.2f} (a trial's first wait), "
          f"far_reruns_per_no_load={host.far_reruns_per_no_load:.2f} ({n['no_load_reruns']}/{n['no_load']}), "
          f"far_rerun_wait_s={host.far_rerun_wait_s:.2f} (over {n['reruns']} re-runs), "
          f"far_reruns_per_loaded={host.far_reruns_per_loaded:.2f} ({n['far_loaded_reruns']}/{n['far_loaded']}), "
          f"pilot_run_wait_s={host.pilot_run_wait_s:.2f} (over {n['calibration_runs']} calibration runs)",
          file=out)
    return {"measured_min": real, "estimate_min": dict(zip((h for h, _ in hosts), totals)), "placement": host}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", help="runs' results folders (results/quick, results/quick-<time>)")
    ap.add_argument("--scale", default="quick", help="the scale whose plan the runs ran [quick]")
    a = ap.parse_args(argv)
    for run in a.runs:
        if not (Path(run) / "trials").is_dir():
            print(f"estimate_check: {run} has no trials/ folder: not a run's results", file=sys.stderr)
            return 2
    plan = all_trials(load_config(), a.scale, cores=2)
    results = [r for run in a.runs if (r := report(run, plan)) is not None]
    if not results:
        return 2
    if len(results) > 1:
        med = {k: statistics.median(getattr(r["placement"], k) for r in results)
               for k in HostPlacement.__dataclass_fields__}
        print(f"median placement over {len(results)} runs: HostPlacement("
              + ", ".join(f"{k}={v:.2f}" for k, v in med.items()) + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
