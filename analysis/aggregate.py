"""Trial JSONs of one experiment -> one tidy CSV table (results/<scale>/tables/<exp>.csv).

One row per trial: what it was (sweep values, profile, setup, rep), what happened (wall
time, events, efficiency, locality, perf cache misses or why none were counted, the loads'
own throughput), its slowdown against the mean of its matching no-load baseline (its own
repetition block's unless that ran far: analysis/baselines.py), and the predictions for it
from its own measured load timeline (Eq. 1/2, and Eq. 3 for adaptive modes).

    python -m analysis.aggregate --experiment NAME --out TABLE.csv TRIAL.json ...
"""
import argparse
import json
import os
import statistics
import sys
from pathlib import Path

from airbase.atomic import write_csv
from analysis import locality
from analysis.baselines import Baselines
from analysis.set_aside import SET_ASIDE, set_aside_far, unmark_like_near_repetitions
from analysis.predict import predicted_slowdown
from loads.kinds import cpu_demand
from workflows import placement
from workflows.calibration import work_of

COLUMNS = ["experiment", "figure", "trial", "status", "reason", "rep", "baseline", "profile", "setup",
           "mode", "mode_adaptive", "sync", "model", "remote", "epg", "detector", "reactivation", "apte_threshold",
           "barrier_wait", "optimism_window", "threads", "cores", "n_loads", "load_processes", "ctp_us", "stand_in", "wall_s", "baseline_wall_s",
           "baseline_from",
           "slowdown", "pred_eq1", "pred_eq3", "committed_events", "efficiency", "event_rate",
           "rollbacks", "locality", "cache_misses", "cache_counter", "cache_note", "load_throughput",
           "load_unit", "solo_throughput", "load_slowdown", "engine_cpu_s", "end_time", "target_s",
           "work_key", "checksum", "disturbed", "reruns", "foreign_cpu_s", "runner_cpu_s", "far_reruns", "ended_far", "far_share",
           "ran_far", "deactivations", "pi_probe_s", "load_on_us", "load_off_us"]


def n_loads(profile):
    """CPUs the profile's loads demand, as declared (loads.kinds.cpu_demand): the x axis of
    the figures, the same for every repetition."""
    return sum(cpu_demand(p, measured=False) for p in profile.get("processes", []))


def load_processes(profile):
    """How many load processes ran: the paper's "number of loads" (Fig. 17 counts on-off
    loads, each demanding half a CPU, so n_loads is half of it there)."""
    return len(profile.get("processes", []))


def ctp(profile):
    for p in profile.get("processes", []):
        if p.get("kind") == "onoff":
            return p.get("ctp_us")
    return None


# Records from engines before 1 Dec 2026 carry no `work_options`: their config was classed by
# this list of the options that change only how the events are run, every other key counting
# as work. Frozen: every later record says which of its options are work.
HOW_OPTIONS_BEFORE_WORK_OPTIONS = frozenset({
    "mode", "sync", "threads", "batch", "gvt_interval", "detect_interval", "detect_after_ms", "detector", "reactivation",
    "apte_threshold", "apte_hits", "apte_window_ms", "apte_share", "pi_threshold_us", "pi_interval_ms", "pi_backoff_ms",
    "pi_needs_switch", "pi_switch_rate", "pi_hold_ms", "rq_threshold", "n_batch", "pin", "barrier_wait",
    "barrier_spin_us", "optimism_window", "timeline_period_ms", "quiet", "json", "timeline", "check", "describe",
    "end_time",
})


def work_key(eng):
    """What a run simulated, as one string: the options its engine declared as work (an older
    record's: every config key outside the frozen list above) and the end time, so runs with
    the same key must commit the same events."""
    cfg = eng["config"]
    declared = eng.get("work_options")
    if declared is None:
        declared = [k for k in cfg if k.replace("-", "_") not in HOW_OPTIONS_BEFORE_WORK_OPTIONS]
    return json.dumps({**work_of(cfg, declared), "end_time": str(cfg.get("end-time", ""))}, sort_keys=True)

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
    row.update(mode=cfg["mode"], mode_adaptive=int(bool(eng.get("mode_adaptive"))), sync=cfg.get("sync", ""), model=cfg["model"], remote=cfg.get("remote", ""),
               epg=cfg.get("epg", ""), detector=cfg.get("detector", ""), reactivation=cfg.get("reactivation", ""),
               apte_threshold=cfg.get("apte-threshold", ""), barrier_wait=cfg.get("barrier-wait", ""),
               optimism_window=cfg.get("optimism-window", ""), threads=cfg["threads"], wall_s=eng["wall_s"],
               committed_events=eng["committed_events"], efficiency=eng["efficiency"],
               event_rate=eng["event_rate"], rollbacks=eng["rollbacks"],
               locality=trial["locality"]["non_primary_iteration_share"])
    misses, row["cache_counter"], row["cache_note"] = locality.from_perf(trial["perf"])
    row["cache_misses"] = "" if misses is None else misses
    tc = trial["perf"].get("task-clock", {})
    row["engine_cpu_s"] = tc["value"] / 1000 if tc.get("status") == "ok" and tc.get("unit") == "msec" else ""
    nz = trial.get("noise") or {}
    row.update(end_time=cfg.get("end-time", ""), checksum=eng.get("checksum", ""),
               work_key=work_key(eng),
               target_s=(trial.get("calibration") or {}).get("target_s", ""),
               disturbed="" if nz.get("disturbed") is None else int(nz["disturbed"]),
               reruns=nz.get("reruns", ""), foreign_cpu_s=nz.get("foreign_cpu_s", ""),
               runner_cpu_s=nz.get("runner_cpu_s", ""))
    # --wait-near (workflows/placement.py): re-runs because the host ran the CPUs far apart
    # by the run's end (not other work), and whether the kept run ended far ("" unrecorded).
    ms = trial.get("machine_speed") or {}
    row["far_reruns"] = placement.far_reruns(nz)
    row["ended_far"] = int(ms["far_after"]) if isinstance(ms.get("far_after"), bool) else ""
    # the share of the run's barrier waits at far-placed speed, measured during it ("": unknown)
    row["far_share"] = ms["far_share"] if isinstance(ms.get("far_share"), (int, float)) else ""
    # the runner's verdict: that share against its configuration's usual one (placement.judge);
    # "" in records before it, which the analysis judges from far_share and ended_far
    row["ran_far"] = int(ms["ran_far"]) if isinstance(ms.get("ran_far"), bool) else ""
    # What adaptation did: deactivations over all threads, and the wall time PI's probes spent
    # handing the CPU away. A detector reports its own figures, so a run without PI has none:
    # 0, it never probed; "" for a PI run from an engine before the probes were counted.
    threads = eng.get("threads") or []
    row["deactivations"] = sum(t.get("deactivations", 0) for t in threads)
    if threads and all("pi_probe_s" in t for t in threads):
        row["pi_probe_s"] = sum(t["pi_probe_s"] for t in threads)
    elif threads and not (eng.get("mode_adaptive") and (eng.get("config") or {}).get("detector") == "pi"):
        row["pi_probe_s"] = 0
    loads = trial.get("loads", [])
    thr = [ld["figures"].get("throughput") for ld in loads if ld["figures"].get("throughput") is not None]
    if thr:
        row["load_throughput"] = sum(thr)
        row["load_unit"] = loads[0]["figures"].get("unit", "")
    # An on-off load as it ran: its mean on and off periods (airload measures them; an off
    # period is the sleep, its timer latency and the wait for a CPU once awake: CTP 10 ran
    # ~11 us on / ~50 us off here, CTP 1000 beside the engine ~1.0 / 1.6 ms), over its loads.
    onoff = [ld["figures"] for ld in loads if ld["figures"].get("mean_on_us") is not None]
    if onoff:
        row["load_on_us"] = sum(f["mean_on_us"] for f in onoff) / len(onoff)
        row["load_off_us"] = sum(f["mean_off_us"] for f in onoff) / len(onoff)
    row["_loads"] = loads
    return row


def prediction_loads(records):
    """Load records as Eq. 1-3 take them: start and stop on the engine's clock; a load meant
    to run to the end of the trial (no planned stop) that did not end on its own is open
    (stop None), since it ran beside every moment of the engine's run."""
    out = []
    for ld in records:
        if ld.get("start_s") is None:
            continue
        whole = ld.get("planned_stop_s") is None and not ld.get("ended_early")
        out.append({"start_s": ld["start_s"], "stop_s": None if whole else ld["stop_s"],
                    "threads": ld["threads"], "kind": ld["kind"], "figures": ld["figures"]})
    return out


def check_determinism(rows):
    """The determinism contract across a configuration: every trial that simulated the same
    work (model, parameters, PEs, end time, seed: work_key) commits the same events with the
    same checksum, whatever its mode, detector or load. Trials that disagree with the
    majority (or all of them, without one) become error rows with the reason."""
    groups = {}
    for r in rows:
        if r["status"] == "ok":
            groups.setdefault(r["work_key"], []).append(r)
    for rs in groups.values():
        results = {}
        for r in rs:
            results.setdefault((r["committed_events"], r["checksum"]), []).append(r)
        if len(results) == 1:
            continue
        best = max(results.values(), key=len)
        majority = best[0] if len(best) * 2 > len(rs) else None
        for r in rs:
            if majority is not None and (r["committed_events"], r["checksum"]) == \
                    (majority["committed_events"], majority["checksum"]):
                continue
            r["status"] = "error"
            r["reason"] = (f"determinism contract broken: {r['committed_events']} events committed, checksum "
                           f"{r['checksum']}, where " + ("the other trials" if majority is None else
                                                         f"{len(best)} of {len(rs)} trials") +
                           f" of this configuration (end time {r['end_time']}) "
                           + ("disagree" if majority is None else
                              f"committed {majority['committed_events']}, checksum {majority['checksum']}"))
    return rows


def add_slowdowns(rows, solo=None):
    """slowdown = wall / mean wall of the same engine configuration without loads, in the
    same repetition block unless that one ran far (analysis/baselines.py; baseline_from says
    which). The predictions use that baseline time and the trial's own load timeline."""
    baselines = Baselines(rows)
    for r in rows:
        if r["status"] != "ok":
            continue
        walls, source = baselines.of(r)
        if walls:
            b = statistics.mean(walls)
            r["baseline_wall_s"], r["baseline_from"] = b, source
            r["slowdown"] = r["wall_s"] / b
            cores, threads = int(r["cores"] or os.cpu_count()), int(r["threads"])
            loads = prediction_loads(r["_loads"])
            r["pred_eq1"] = predicted_slowdown(b, loads, threads, cores)
            r["pred_eq3"] = predicted_slowdown(b, loads, threads, cores, adaptive=True)
        s = (solo or {}).get(r["profile"])
        if s and r["load_throughput"]:
            r["solo_throughput"] = s
            r["load_slowdown"] = s / r["load_throughput"] if r["load_throughput"] > 0 else ""
    for r in rows:
        r.pop("_loads", None)
    return rows


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
    rows = set_aside_far(add_slowdowns(unmark_like_near_repetitions(check_determinism(rows)), read_solo(a.solo)))
    write_csv(a.out, COLUMNS, rows)
    bad = [r for r in rows if r["status"] not in ("ok", SET_ASIDE)]
    far = [r for r in rows if r["status"] == SET_ASIDE]
    print(f"aggregate: {a.experiment}: {len(rows)} trials, {len(bad)} failed, {len(far)} set aside "
          f"(ran far) -> {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
