"""Do two reproductions agree, and is each one long and quiet enough to mean something?

    python -m analysis.reproducibility results/quick OTHER/results/quick
    python -m analysis.reproducibility results/quick        (one run: its own figures)

Reads each run's tables (results/<scale>/tables/*.csv, summary.csv) and trial records
(results/<scale>/trials/) and prints, as Markdown for docs/workflow.md:

- the verdict of every claim in both runs, and which changed;
- per figure (default Fig. 1, 7, 8), the median over its plotted points of the 95% interval's
  half-width relative to the point (points with n >= 2; the figure's own x, series and y),
  and the series whose points are widest;
- the shortest engine run of each run, and how many trials ran under --min-engine-s;
- how well each configuration's calibration hit its target: its near no-load FM runs' time
  over the target (analysis/calibration_hit.py);
- FM's efficiency without a load (share of no-load FM trials at >= 0.95), and how often an
  adaptive mode deactivated a thread without a load (the engine's count, or a timeline
  sample below its threads), also by mode and detector;
- trials marked disturbed, and re-runs; the workflow's own CPU (Snakemake) during engine runs;
- how far each no-load run's time strays from its configuration's (the same events): the
  host's speed from run to run, with the runs near and far apart told apart;
- trials whose machine-speed probe ran slow against the run's median, and trials whose
  CPUs the host ran far apart (the probe's ping-pong; analysis/machine_speed.py), and the
  far runs the analysis set aside (analysis/set_aside.py), and the claims judged inconclusive
  because a verdict rested on far runs it kept (analysis/claims.py, judge_level);
- which experiments added their top-up repetitions, and the first-look verdicts or the
  figure's precision that asked;
- where the trials' time went: engine runs kept and made again, waits, calibration
  (analysis/time_spent.py);
- whether the claims' statistics differ between the runs by more than their own intervals
  allow (per claim level, z = difference of the means over its standard error), and whether
  the runs calibrated the same work to the same end time (analysis/end_times.py);
- for multiples of the runs' repetitions, the chance that two runs judge each claim alike,
  the runs' values pooled (analysis/repetition_plan.py).

Exit 0 when it could read both runs (whatever they say), 2 when a folder is not a run."""
import argparse
import json
import math
import statistics
import sys
from pathlib import Path

from analysis import calibration_hit, end_times, machine_speed, precision, repetition_plan
from analysis.baselines import ran_far
from analysis.claims import RESTS_ON_FAR, level_rows, level_samples, load_claims, read_run_tables, reversed_verdicts
from analysis.sequential import SINGLE_LOOK
from analysis.set_aside import SET_ASIDE
from analysis.stats import read_rows
from analysis.time_spent import named_records, summary_line, time_spent, timed
from analysis.top_up import read_decisions
from workflows import placement
from workflows.experiments import ExperimentError, load_experiment

FIGURES = ["fig01-fm-slowdown", "fig07-no-load", "fig08-one-load"]


def verdicts(run):
    return {r["id"]: r for r in read_rows(Path(run) / "tables" / "summary.csv")}


def _set_aside_cell(run):
    """'no-load n; loaded n' of the run's table rows with status set aside."""
    rows = [r for t in read_run_tables(run).values() for r in t.all_rows if r.get("status") == SET_ASIDE]
    base = sum(1 for r in rows if r.get("profile") == "none")
    return f"{base}; {len(rows) - base}"


def _rests_on_far_cell(summary):
    """The claims of a run's summary ({id: row}) judged inconclusive because a level's
    verdict rested on far runs (analysis/claims.py, judge_level), or 'none'."""
    ids = [cid for cid, r in summary.items() if RESTS_ON_FAR in (r.get("reason") or "")]
    return ", ".join(ids) if ids else "none"


def _absolute_note(a, b, figures):
    """For a figure drawn relative to a reference (analysis/relative_time.py), a line with the
    same median over its points in the measure's own unit, drift between blocks included."""
    lines = []
    for f in figures:
        try:
            plot = load_experiment(f)["plot"]
            if not plot.get("relative_to"):
                continue
            absolute = {k: v for k, v in plot.items() if k != "relative_to"}
            meds = [precision.median_half_width(read_rows(Path(run) / "tables" / f"{f}.csv"), absolute)[0]
                    for run in (a, b)]
        except (OSError, ExperimentError, KeyError):
            continue
        ref = ", ".join(f"{k}={v}" for k, v in plot["relative_to"].items())
        shown = " and ".join("none" if m is None else f"{m:.1%}" for m in meds)
        lines.append(f"\n{f}: its points are each block's {plot['y']} over its {ref} run's; "
                     f"over the {plot['y']} itself (every series, drift between blocks included) the "
                     f"median half-width is {shown} (run A and B).")
    return lines


def _widest(points, series_var):
    """'; widest: VAR=SERIES m%' (the series whose points' median relative half-width is the
    largest) when a figure has more than one series, else ''. A figure's median can hide
    that one series makes it wide (Fig. 7's ADM on a host that places the vCPUs far apart:
    docs/reference-runs.md)."""
    by = {}
    for s, _, _, rel, _ in points:
        by.setdefault(s, []).append(rel)
    if len(by) < 2:
        return ""
    series, rel = max(((s, statistics.median(v)) for s, v in by.items()), key=lambda x: x[1])
    return f"; widest: {series_var}={series} {rel:.1%}"


Z_FAR = 2.5


def _far_runs(rows):
    """(runs that ran far, runs whose placement was recorded) among a level's table rows: far
    by the analysis's own rule (analysis/baselines.ran_far: the engine's barrier waits, else
    the probe after the run), the host's doing, not the engine's."""
    placed = [r for r in rows if str(r.get("far_share", "")) != "" or str(r.get("ended_far", "")) != ""]
    return sum(1 for r in placed if ran_far(r)), len(placed)


def claim_levels(run):
    """{(claim, level): (mean, standard error, n, (runs far, runs measured))} of every claim
    level with n >= 2."""
    tables = read_run_tables(run)
    out = {}
    for claim in load_claims()["claims"]:
        rows = level_rows(claim, tables)
        for label, sample, _ in level_samples(claim, tables):
            v = [x for x in sample.values if x is not None]
            if len(v) >= 2:
                out[(claim["id"], label)] = (statistics.mean(v), statistics.stdev(v) / len(v) ** 0.5, len(v),
                                             _far_runs(rows.get(label, [])))
    return out


def between_runs(a, b):
    """[(|z|, claim, level, mean A, mean B)], largest first, over the claim levels with n >= 2
    in both runs: z = (mean A - mean B) / sqrt(se A^2 + se B^2). Were each run's interval to
    hold all the variation between runs, |z| would pass 2.5 in about 1% of levels (normal),
    up to ~7% with the 2-5 degrees of freedom of a quick run's standard errors; more means a
    run-to-run effect the repetitions of one run cannot see."""
    return _z_of(claim_levels(a), claim_levels(b))


def _z_of(la, lb):
    out = []
    for k in la.keys() & lb.keys():
        (ma, sa, _, _), (mb, sb, _, _) = la[k], lb[k]
        se = (sa * sa + sb * sb) ** 0.5
        out.append((abs(ma - mb) / se if se > 0 else (0.0 if ma == mb else float("inf")), *k, ma, mb))
    return sorted(out, reverse=True)


def _between_runs_lines(a, b):
    la, lb = claim_levels(a), claim_levels(b)
    zs = _z_of(la, lb)
    if not zs:
        return ["No claim level has two repetitions in both runs."]
    far = [z for z in zs if z[0] > Z_FAR]
    med = statistics.median(z[0] for z in zs)
    text = (f"{len(zs)} claim levels with n >= 2 in both runs; median |z| {med:.2f}; |z| > {Z_FAR:g}: "
            f"{len(far)} ({len(far) / len(zs):.0%})")

    def runs_far(c, lv):
        """How many of the level's runs ran with the vCPUs far apart in each run: the first
        thing to look at behind a large z (far runs in one run only: the host, not the engine)."""
        (fa, na), (fb, nb) = la[(c, lv)][3], lb[(c, lv)][3]
        if not (fa or fb):
            return ""
        return (f" (runs far, >= {placement.FAR_RERUN_SHARE:.0%} of their barrier waits, "
                f">= {placement.FAR_AFTER_SHARE:.0%} with a far probe after, or at their end: "
                f"A {fa} of {na}, B {fb} of {nb})")
    return [text + (": " + "; ".join(f"{c}{f' ({lv})' if lv else ''} {ma:.3g} / {mb:.3g}, z {z:.1f}{runs_far(c, lv)}"
                                     for z, c, lv, ma, mb in far) if far else "") + "."]


def deactivated(d):
    """The engine's own count (a deactivation shorter than a timeline sample is one too),
    or a timeline sample below the run's threads."""
    eng = d["engine"]
    if any(t.get("deactivations") for t in eng.get("threads") or []):
        return True
    return any(s["active_threads"] < eng["config"]["threads"] for s in d.get("timeline") or [])


_PATH_OPTIONS = ("json", "timeline")


def _block_drift(no_load):
    """First repetition block's no-load wall time over the mean of the later blocks', per
    configuration: what a machine whose speed changed during the run does to baselines."""
    out = []
    for reps in no_load.values():
        later = [w for r, w in reps.items() if r != 0]
        if 0 in reps and later:
            out.append(reps[0] / statistics.mean(later))
    return out


def _first_look_reps(run):
    """{experiment: the repetitions of its first look} for each experiment that added its
    top-up, from the first-look table the workflow left beside its decision."""
    out = {}
    for p, d in read_decisions(run):
        try:
            rows = read_rows(p.with_suffix(".csv")) if d.get("top_up") else []
        except OSError:
            continue
        reps = {int(r["rep"]) for r in rows if (r.get("rep") or "").isdigit()}
        if reps:
            out[p.stem] = reps
    return out


def _top_up_drift(run, no_load):
    """The top-up blocks' mean no-load wall time over the first-look blocks', per
    configuration of an experiment that added its top-up. Those blocks run after every
    first look, close together, so they share one phase of the host's speed: a wall-time
    figure (Fig. 7) carries it, a per-block ratio cancels it."""
    first, out = _first_look_reps(run), []
    for (exp, _, _), reps in no_load.items():
        if exp not in first:
            continue
        early = [w for r, w in reps.items() if r in first[exp]]
        late = [w for r, w in reps.items() if r not in first[exp]]
        if early and late:
            out.append(statistics.mean(late) / statistics.mean(early))
    return out


# A run whose barrier waits were almost all at near speed (the host kept the vCPUs together).
NEAR_SHARE = 0.01


def _run_to_run(no_load_walls, no_load_far):
    """Each no-load run's engine time over its configuration's median, with the share of its
    barrier waits at far speed (None where not recorded): every repetition of a
    configuration commits the same events, so this is the host's speed from run to run,
    which the repetition blocks cancel only where it changes slower than a block."""
    out = []
    for key, reps in no_load_walls.items():
        if len(reps) < 2:
            continue
        m = statistics.median(reps.values())
        out += [(w / m, no_load_far.get(key, {}).get(rep)) for rep, w in reps.items()]
    return out


def _run_to_run_cell(t):
    rel = t["run_to_run"]
    if not rel:
        return "-"
    xs = sorted(r for r, _ in rel)
    q = statistics.quantiles(xs, n=10, method="inclusive")
    cell = f"{q[0]:.2f}-{q[-1]:.2f} ({xs[0]:.2f}-{xs[-1]:.2f}, {len(xs)} runs)"
    near = [r for r, f in rel if f is not None and f < NEAR_SHARE]
    rest = [r for r, f in rel if f is not None and f >= NEAR_SHARE]
    if near and rest:
        cell += (f"; median {statistics.median(near):.2f} ({len(near)} runs) under {NEAR_SHARE:.0%} far, "
                 f"{statistics.median(rest):.2f} ({len(rest)}) more")
    return cell


def trial_facts(run, min_engine_s):
    walls, short, fm_eff, adaptive_idle, disturbed, reruns, n = [], [], [], [], 0, 0, 0
    far_reruns, near_waits = 0, []
    steal, no_load_walls, no_load_far, workflow_share = [], {}, {}, []
    far_shares = {"no-load": [], "loaded": []}
    pi_idle_slow = None  # PI's slow probes in no-load adaptive trials, those that kept the CPU
    every = list(named_records(run))  # read once: any status for the time, the ok ones for the rest
    records = [(exp, d) for exp, d in every if d.get("status") == "ok"]
    for exp, d in records:
        n += 1
        eng = d["engine"]
        walls.append((eng["wall_s"], exp, d["trial"]["id"]))
        if eng["wall_s"] < min_engine_s:
            short.append((exp, d["trial"]["id"], eng["wall_s"]))
        no_load = not (d.get("profile") or {}).get("processes")
        if no_load and eng["config"]["mode"] == "fm":
            fm_eff.append(eng["efficiency"])
        if no_load and eng.get("mode_adaptive"):
            adaptive_idle.append((exp, d["trial"]["id"], deactivated(d),
                                  f"{eng['config']['mode']}-{eng['config'].get('detector', '?')}"))
            ths = eng.get("threads") or []
            if ths and all("pi_slow_kept_cpu" in th for th in ths):
                pi_idle_slow = pi_idle_slow or [0, 0]
                pi_idle_slow[0] += sum(th.get("pi_slow_probes", 0) for th in ths)
                pi_idle_slow[1] += sum(th["pi_slow_kept_cpu"] for th in ths)
        ms = d.get("machine_speed") or {}
        share = ms.get("far_share") if isinstance(ms.get("far_share"), (int, float)) else None
        if no_load:
            cfg = {k: v for k, v in eng["config"].items() if k not in _PATH_OPTIONS}
            key = (exp, json.dumps(cfg, sort_keys=True), (d.get("setup") or {}).get("name"))
            no_load_walls.setdefault(key, {})[d["trial"].get("rep", 0)] = eng["wall_s"]
            no_load_far.setdefault(key, {})[d["trial"].get("rep", 0)] = share
        nz = d.get("noise") or {}
        wf = (nz.get("runner_parts_cpu_s") or {}).get("workflow")
        if wf is not None and nz.get("window_s"):
            workflow_share.append(wf / nz["window_s"])
        if "steal_cpu_s" in nz:
            steal.append((nz["steal_cpu_s"], exp, d["trial"]["id"]))
        disturbed += bool(nz.get("disturbed"))
        # Re-runs for far vCPU placement (--wait-near) are counted apart from disturbed ones.
        far = placement.far_reruns(nz)
        far_reruns += far
        reruns += (nz.get("reruns") or 0) - far
        if share is not None:
            # the runner's verdict where it recorded one (placement.judge), else the share alone
            far = ms["ran_far"] if isinstance(ms.get("ran_far"), bool) else placement.ran_far(share, False)
            far_shares["no-load" if no_load else "loaded"].append((share, far))
        wait = ms.get("wait")
        if wait:
            near_waits.append((wait["waited_s"], wait.get("probes", 1), wait["far"]))
    return {"n": n, "shortest": min(walls) if walls else None, "short": short, "fm_eff": fm_eff,
            "adaptive_idle": adaptive_idle, "pi_idle_slow": pi_idle_slow, "disturbed": disturbed, "reruns": reruns,
            "far_reruns": far_reruns, "near_waits": near_waits, "far_shares": far_shares,
            "steal": steal, "drift": _block_drift(no_load_walls), "top_up_drift": _top_up_drift(run, no_load_walls),
            "run_to_run": _run_to_run(no_load_walls, no_load_far), "workflow_share": workflow_share,
            "speed": machine_speed.slow_trials(records), "far": machine_speed.far_trials(records),
            "calibration": calibration_hit.summary(records),
            "time": summary_line(time_spent(timed(d for _, d in every)))}


def top_ups(run):
    """'fig03-... (opt_vs_cons inconclusive)' per experiment with a top-up that added its repetitions,
    from the workflow's first-look decisions (results/<scale>/top-up/*.json)."""
    decisions = read_decisions(run)
    added, looked = [], len(decisions)
    for p, d in decisions:
        if d.get("top_up"):
            asked = [f"{c} {v['verdict']}" for c, v in d.get("claims", {}).items()
                     if v["verdict"] == "inconclusive" and d.get("level") != SINGLE_LOOK]
            prec = d.get("precision") or {}
            if prec.get("asks"):
                hw = prec.get("median_half_width")
                asked.append("median half-width " + ("unknown" if hw is None else f"{hw:.1%}") + f" over {prec['bar']:.0%}")
            added.append(f"{p.stem} ({', '.join(asked)})")
    return f"{len(added)} of {looked}" + (f": {'; '.join(added)}" if added else "") if looked else "no experiment with a top-up"


def _by_policy(facts):
    kinds = sorted({x[3] for x in facts["adaptive_idle"]})
    return ", ".join(f"{k} {sum(x[2] for x in facts['adaptive_idle'] if x[3] == k)}/"
                     f"{sum(x[3] == k for x in facts['adaptive_idle'])}" for k in kinds) or "-"


def _pct(k, n):
    return f"{k}/{n} ({100 * k / n:.0f}%)" if n else "none"


def _slow_cell(ref, slow, probed):
    if not probed:
        return "not recorded"
    by_exp = {}
    for _, exp, _, _ in slow:
        by_exp[exp] = by_exp.get(exp, 0) + 1
    worst = f", worst {max(slow)[0]:.2f}x" if slow else ""
    return f"{len(slow)}/{probed}{worst}" + (f" ({', '.join(f'{e} {k}' for e, k in sorted(by_exp.items()))})" if slow else "")


def _near_cell(t):
    w = t["near_waits"]
    if not w:
        return "not recorded"
    # One probe (~25 ms) is no wait: the first was near.
    return (f"{sum(s for s, _, _ in w):.0f} s, {sum(n > 1 for _, n, _ in w)}/{len(w)}, {sum(f for *_, f in w)}; "
            f"{t['far_reruns']}")


def _far_share_cell(shares):
    def part(xs):
        if not xs:
            return "not recorded"
        n = sum(far for _, far in xs)
        return f"{n}/{len(xs)} ({statistics.median(x for x, _ in xs):.0%})"
    return f"{part(shares['no-load'])}; {part(shares['loaded'])}"


def _far_cell(near, far, probed):
    if not probed:
        return "not recorded"
    which = {k: sum(w == k for *_, w in far) for k in ("before", "after", "both")}
    return f"{len(far)}/{probed} ({which['before']} / {which['after']} / {which['both']}; near {near:.0f} ns)"


def report(a, b, figures, min_engine_s):
    lines = []
    va, vb = verdicts(a), verdicts(b)
    same = [i for i in va if i in vb and va[i]["verdict"] == vb[i]["verdict"]]
    ids = set(va) | set(vb)

    def expected(v):
        """Verdicts a repeat would share by the run's own chances (analysis/replication.py);
        a claim given none (one repetition, not measurable, not run) counts as certain."""
        got = [float(g) for g in (v.get(i, {}).get("same_verdict_again", "") for i in ids) if g not in ("", None)]
        return len(ids) - len(got) + sum(got), math.prod(got), bool(got)
    (ea, all_a, known_a), (eb, all_b, known_b) = expected(va), expected(vb)
    said = (f" Expected from each run's own chances of the same verdict again: A {ea:.1f}, B {eb:.1f}; "
            f"the chance that every verdict recurs: A {all_a:.1%}, B {all_b:.1%}."
            if known_a or known_b else "")
    # A claim one run confirms and the other refutes contradicts itself; one that is
    # inconclusive in a run sits within that run's interval of its bound.
    reversed_ = sorted(i for i in ids if reversed_verdicts(va.get(i, {}).get("verdict"), vb.get(i, {}).get("verdict")))
    rev = (f" Reversed (agrees in one run, differs in the other): {len(reversed_)}"
           f"{' (' + ', '.join(reversed_) + ')' if reversed_ else ''}; every other change is to or from "
           "inconclusive.")
    lines += ["### Verdicts", "", f"Same verdict in both runs: {len(same)} of {len(ids)} claims.{said}{rev}", "",
              "| claim | run A | run B |", "|---|---|---|"]
    for i in sorted(set(va) | set(vb)):
        ra, rb = va.get(i, {}), vb.get(i, {})

        def cell(r):
            if not r:
                return "-"
            ci = f" [{r['ci_low']}, {r['ci_high']}]" if r.get("ci_low") not in ("", None) else ""
            again = f" (same again {r['same_verdict_again']})" if r.get("same_verdict_again") else ""
            return f"{r['verdict']}: {r.get('value', '')}{ci} n={r.get('n', '')}{again}"
        mark = ("" if ra.get("verdict") == rb.get("verdict")
                else " **reversed**" if i in reversed_ else " **changed**")
        lines.append(f"| {i}{mark} | {cell(ra)} | {cell(rb)} |")
    lines += ["", "### Interval half-width relative to the point (median over the figure's measured points "
              "with n >= 2: not a no-load point of a slowdown, nor the reference of a relative figure)", "",
              "| figure | run A | run B |", "|---|---|---|"]
    for f in figures:
        cells = []
        for run in (a, b):
            try:
                plot = load_experiment(f)["plot"]
                pts = [p for p in precision.relative_half_widths(read_rows(Path(run) / "tables" / f"{f}.csv"), plot)
                       if p[4] >= 2]
            except (OSError, ExperimentError, KeyError) as e:
                cells.append(f"unreadable ({e})")
                continue
            rel = [p[3] for p in pts]
            widest = _widest(pts, plot.get("series"))
            cells.append(f"{statistics.median(rel):.1%} (max {max(rel):.1%}, {len(rel)} points{widest})"
                         if rel else "no point with n >= 2")
        lines.append(f"| {f} | {cells[0]} | {cells[1]} |")
    lines += _absolute_note(a, b, figures)
    lines += ["", "### Trials", "", "| | run A | run B |", "|---|---|---|"]
    fa, fb = trial_facts(a, min_engine_s), trial_facts(b, min_engine_s)
    rows = [
        ("trials (ok)", lambda t: str(t["n"])),
        ("shortest engine run", lambda t: f"{t['shortest'][0]:.2f} s ({t['shortest'][1]}/{t['shortest'][2]})" if t["shortest"] else "-"),
        (f"engine runs under {min_engine_s:g} s", lambda t: f"{len(t['short'])}" + (
            f" ({', '.join(sorted({e for e, _, _ in t['short']}))})" if t["short"] else "")),
        # The pilots' luck is every trial's: a calibration that missed shows here, nowhere else.
        ("no-load FM runs (near) over their calibrated target, median per configuration: median (min-max); "
         f"those under {calibration_hit.SHORT:g} or over {calibration_hit.LONG:g}",
         lambda t: calibration_hit.cell(t["calibration"])),
        ("no-load FM trials at efficiency >= 0.95", lambda t: _pct(sum(e >= 0.95 for e in t["fm_eff"]), len(t["fm_eff"]))),
        ("no-load FM efficiency, min-median", lambda t: f"{min(t['fm_eff']):.3f}-{statistics.median(t['fm_eff']):.3f}" if t["fm_eff"] else "-"),
        ("no-load adaptive trials that deactivated a thread", lambda t: _pct(sum(x[2] for x in t["adaptive_idle"]), len(t["adaptive_idle"]))),
        ("... by mode and detector", _by_policy),
        # A slow probe in which the thread kept its CPU had no guest task to hand it to: the
        # hypervisor or interrupts delayed it (engine --pi-needs-switch ignores those).
        ("PI's slow probes in no-load trials: all, those in which the thread kept its CPU", lambda t: (
            f"{t['pi_idle_slow'][0]}, {t['pi_idle_slow'][1]}" if t["pi_idle_slow"] else "not recorded")),
        ("no-load first block / later blocks (per configuration), median (max)", lambda t: (
            f"{statistics.median(t['drift']):.3f} ({max(t['drift']):.2f}, {len(t['drift'])} configurations)"
            if t["drift"] else "-")),
        ("no-load top-up blocks / first-look blocks (per configuration), median (max)", lambda t: (
            f"{statistics.median(t['top_up_drift']):.3f} ({max(t['top_up_drift']):.2f}, "
            f"{len(t['top_up_drift'])} configurations)" if t["top_up_drift"] else "no top-up with no-load runs")),
        # The same events every repetition: a spread here is the host's, and it is what
        # widens a no-load figure's intervals (Fig. 7) where blocks cannot cancel it.
        ("no-load runs over their configuration's median (the same events): p10-p90 (min-max); "
         "by the share of barrier waits at far speed", _run_to_run_cell),
        ("hypervisor steal during engine runs, total (most in one run)", lambda t: (
            f"{sum(x[0] for x in t['steal']):.2f} s ({max(t['steal'])[0]:.2f} s, {max(t['steal'])[1]})"
            if t["steal"] else "not recorded")),
        ("the workflow's own CPU during engine runs, share of a core: median (max)", lambda t: (
            f"{statistics.median(t['workflow_share']):.1%} ({max(t['workflow_share']):.1%})"
            if t["workflow_share"] else "not recorded")),
        ("disturbed trials (kept after re-runs)", lambda t: str(t["disturbed"])),
        ("re-runs of disturbed trials", lambda t: str(t["reruns"])),
        ("waiting for the CPUs near (--wait-near): seconds in all, trials that waited, still far at the start; "
         "no-load re-runs for ending far", _near_cell),
    ]
    for name, f in rows:
        lines.append(f"| {name} | {f(fa)} | {f(fb)} |")
    lines.append(f"| experiments with a top-up that added its repetitions | {top_ups(a)} | {top_ups(b)} |")
    lines.append("| where the trials' time went, first start to last end (analysis/time_spent.py) | "
                 + " | ".join(t["time"] for t in (fa, fb)) + " |")
    speed = [fa["speed"], fb["speed"]]
    lines.append(f"| machine probe, run's median: chase / multiply (ns per step) | "
                 + " | ".join(f"{ref['chase_ns']:.2f} / {ref['compute_ns']:.3f}" if ref else "not recorded"
                              for ref, _, _ in speed) + " |")
    lines.append(f"| trials on a slow machine (both probes >= {machine_speed.SLOW_RATIO:.2f}x the run's median) | "
                 + " | ".join(_slow_cell(*x) for x in speed) + " |")
    lines.append(f"| kept runs that ran far (>= {placement.FAR_RERUN_SHARE:.0%} of the engine's barrier waits "
                 "at far speed, above the configuration's usual share where the runner judged it; "
                 f">= {placement.FAR_AFTER_SHARE:.0%} with a far probe after the run): no-load; "
                 "loaded (median share) | "
                 + " | ".join(_far_share_cell(t["far_shares"]) for t in (fa, fb)) + " |")
    lines.append("| far runs the analysis set aside (3 near repetitions of the trial stand; analysis/set_aside.py): "
                 "no-load; loaded | " + " | ".join(_set_aside_cell(run) for run in (a, b)) + " |")
    lines.append("| claims judged inconclusive because a verdict rested on far runs the set-aside rule kept "
                 "(the near runs alone judged otherwise; analysis/claims.py, judge_level) | "
                 + " | ".join(_rests_on_far_cell(v) for v in (va, vb)) + " |")
    lines.append(f"| trials with the CPUs far apart (a ping-pong >= {machine_speed.FAR_RATIO:g}x the run's near "
                 f"level; before / after / both) | " + " | ".join(_far_cell(*t["far"]) for t in (fa, fb)) + " |")
    lines += ["", "### Between the runs: z of each claim level (difference of means / its standard error)", ""]
    lines += _between_runs_lines(a, b)
    if str(a) != str(b):
        lines += ["", end_times.line(a, b)]
    runs = list(dict.fromkeys([str(a), str(b)]))  # one run given: its values once
    planned = repetition_plan.plan(runs, load_claims(), repetition_plan.TIMES, repetition_plan.two_looks_of(runs))
    if planned:
        lines += ["", "### Repetitions that would make each verdict recur (the runs' values pooled; "
                  "python -m analysis.repetition_plan A B adds the minutes)", ""]
        lines += repetition_plan.report(planned, repetition_plan.TIMES).rstrip("\n").split("\n")
    idle = [(r, e, t) for r, facts in (("A", fa), ("B", fb)) for e, t, d, _ in facts["adaptive_idle"] if d]
    if idle:
        lines += ["", "No-load adaptive trials that deactivated a thread: " + "; ".join(f"{r}: {e}/{t}" for r, e, t in idle) + "."]
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 2)[2],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_a", help="a reproduction's results/<scale> folder")
    ap.add_argument("run_b", nargs="?", help="another one of the same scale [none: report run A alone]")
    ap.add_argument("--figure", action="append", dest="figures", metavar="EXPERIMENT",
                    help=f"an experiment whose figure's intervals to report (repeatable) [{', '.join(FIGURES)}]")
    ap.add_argument("--min-engine-s", type=float, default=2.0, help="the shortest engine run wanted [2]")
    a = ap.parse_args(argv)
    for run in filter(None, (a.run_a, a.run_b)):
        if not (Path(run) / "tables" / "summary.csv").is_file():
            print(f"reproducibility: {run}: no tables/summary.csv (give a results/<scale> folder of a finished run)",
                  file=sys.stderr)
            return 2
    print(report(a.run_a, a.run_b or a.run_a, a.figures or FIGURES, a.min_engine_s))
    return 0


if __name__ == "__main__":
    sys.exit(main())
