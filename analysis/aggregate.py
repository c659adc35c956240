"""Trial JSONs of one experiment -> one tidy CSV table (results/<scale>/tables/<exp>.csv).

One row per trial: what it was (sweep values, profile, setup, rep), what happened (wall
time, events, efficiency, locality, perf cache misses or why none were counted, the loads'
own throughput), its slowdown against the mean of its matching no-load baseline, and the
predictions for it from its own measured load timeline (Eq. 1/2, and Eq. 3 for adaptive
modes).

    python -m analysis.aggregate --experiment NAME --out TABLE.csv TRIAL.json ...
"""
import argparse
import csv
import json
import os
import statistics
import sys
from pathlib import Path

from analysis import locality
from analysis.predict import predicted_slowdown

COLUMNS = ["experiment", "figure", "trial", "status", "reason", "rep", "baseline", "profile", "setup",
           "mode", "sync", "model", "remote", "epg", "detector", "reactivation", "apte_threshold",
           "threads", "cores", "n_loads", "load_processes", "ctp_us", "stand_in", "wall_s", "baseline_wall_s",
           "slowdown", "pred_eq1", "pred_eq3", "committed_events", "efficiency", "event_rate",
           "rollbacks", "locality", "cache_misses", "cache_counter", "cache_note", "load_throughput",
           "load_unit", "solo_throughput", "load_slowdown", "engine_cpu_s"]
ADAPTIVE = ("adm", "ladm")


def n_loads(profile):
    """CPUs the profile's loads demand: threads, times the duty cycle of on-off loads."""
    total = 0.0
    for p in profile.get("processes", []):
        total += p.get("threads", 1) * (0.5 if p.get("kind") == "onoff" else 1.0)
    return total


def load_processes(profile):
    """How many load processes ran: the paper's "number of loads" (Fig. 17 counts on-off
    loads, each demanding half a CPU, so n_loads is half of it there)."""
    return len(profile.get("processes", []))


def ctp(profile):
    for p in profile.get("processes", []):
        if p.get("kind") == "onoff":
            return p.get("ctp_us")
    return None


def row_of(trial, experiment, figure):
    t = trial["trial"]
    prof = trial.get("profile", {})
    row = {c: "" for c in COLUMNS}
    row.update(experiment=experiment, figure=figure, trial=t["id"], status=trial["status"],
               reason="; ".join(trial.get("reasons", []) or [trial.get("reason", "")]).strip("; "),
               rep=t["rep"], baseline=int(t["id"].startswith("base-")), profile=t["profile"],
               setup=t["setup"], n_loads=n_loads(prof), load_processes=load_processes(prof), ctp_us=ctp(prof) or "",
               stand_in=int(bool(prof.get("stand_in"))), cores=trial.get("machine", {}).get("cores", ""))
    for k, v in (t.get("labels") or {}).items():
        if k in row and not row[k]:
            row[k] = v
    if trial["status"] != "ok":
        return row
    eng = trial["engine"]
    cfg = eng["config"]
    row.update(mode=cfg["mode"], sync=cfg.get("sync", ""), model=cfg["model"], remote=cfg.get("remote", ""),
               epg=cfg.get("epg", ""), detector=cfg.get("detector", ""), reactivation=cfg.get("reactivation", ""),
               apte_threshold=cfg.get("apte-threshold", ""), threads=cfg["threads"], wall_s=eng["wall_s"],
               committed_events=eng["committed_events"], efficiency=eng["efficiency"],
               event_rate=eng["event_rate"], rollbacks=eng["rollbacks"],
               locality=trial["locality"]["non_primary_iteration_share"])
    misses, row["cache_counter"], row["cache_note"] = locality.from_perf(trial["perf"])
    row["cache_misses"] = "" if misses is None else misses
    tc = trial["perf"].get("task-clock", {})
    row["engine_cpu_s"] = tc["value"] / 1000 if tc.get("status") == "ok" and tc.get("unit") == "msec" else ""
    loads = trial.get("loads", [])
    thr = [ld["figures"].get("throughput") for ld in loads if ld["figures"].get("throughput") is not None]
    if thr:
        row["load_throughput"] = sum(thr)
        row["load_unit"] = loads[0]["figures"].get("unit", "")
    row["_loads"] = loads
    return row


def add_slowdowns(rows, solo=None):
    """slowdown = wall / mean wall of the same engine configuration without loads; the
    predictions use the baseline time and the trial's own load timeline."""
    base = {}
    for r in rows:
        if r["status"] == "ok" and r["profile"] == "none" and r["setup"] == "cfs":
            base.setdefault(_key(r), []).append(r["wall_s"])
    for r in rows:
        if r["status"] != "ok":
            continue
        walls = base.get(_key(r))
        if walls:
            b = statistics.mean(walls)
            r["baseline_wall_s"] = b
            r["slowdown"] = r["wall_s"] / b
            cores, threads = int(r["cores"] or os.cpu_count()), int(r["threads"])
            loads = [{"start_s": ld["start_s"], "stop_s": ld["stop_s"], "threads": ld["threads"],
                      "kind": ld["kind"], "figures": ld["figures"]} for ld in r["_loads"] if ld.get("start_s") is not None]
            r["pred_eq1"] = predicted_slowdown(b, loads, threads, cores)
            r["pred_eq3"] = predicted_slowdown(b, loads, threads, cores, adaptive=True)
        s = (solo or {}).get(r["profile"])
        if s and r["load_throughput"]:
            r["solo_throughput"] = s
            r["load_slowdown"] = s / r["load_throughput"] if r["load_throughput"] > 0 else ""
    for r in rows:
        r.pop("_loads", None)
    return rows


def _key(r):
    return (r["mode"], r["sync"], r["model"], r["remote"], r["epg"], r["detector"], r["reactivation"],
            r["apte_threshold"], r["threads"])


def read_solo(paths):
    out = {}
    for p in paths:
        d = json.loads(Path(p).read_text())
        thr = [ld["figures"].get("throughput") for ld in d.get("loads", [])]
        if thr and all(v is not None for v in thr):
            out[d["profile"]["name"]] = sum(thr)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--experiment", required=True)
    ap.add_argument("--figure", default="")
    ap.add_argument("--out", required=True)
    ap.add_argument("--solo", nargs="*", default=[], help="load-alone JSONs (airlab load --json)")
    ap.add_argument("trials", nargs="*")
    a = ap.parse_args(argv)
    rows = []
    for p in a.trials:
        try:
            rows.append(row_of(json.loads(Path(p).read_text()), a.experiment, a.figure))
        except (OSError, ValueError, KeyError) as e:
            print(f"aggregate: skipping {p}: {e}", file=sys.stderr)
    rows = add_slowdowns(rows, read_solo(a.solo))
    tmp = f"{a.out}.tmp.{os.getpid()}"
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(rows)
    os.replace(tmp, a.out)
    bad = [r for r in rows if r["status"] != "ok"]
    print(f"aggregate: {a.experiment}: {len(rows)} trials, {len(bad)} not ok -> {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
