"""A figure's caption (HTML): what was run at the report's scale, on which machine, what
the paper found and, with numbers, what was measured here. The lab's report puts it under
each figure; the figure rule also writes it beside the figure (results/<scale>/figures/
<exp>.caption.html) for the captions of `snakemake --report` (workflows/report/figure.rst).

    python -m analysis.caption --experiment NAME --scale S --table T.csv \
        --claims configs/claims.yaml --out FIGURE.caption.html
"""
import argparse
import html
import statistics
import sys

from airbase.atomic import write_atomic
from analysis import baselines
from analysis import claims as claims_mod
from analysis import locality
from analysis.recorded_machine import machine_facts
from analysis.set_aside import SET_ASIDE
from analysis.stats import number as _f, read_rows, series_of
from workflows import placement
from workflows.experiments import at_scale, load_counts, load_experiment, two_looks


def _values(v):
    return v if isinstance(v, list) else [v]


def measured_here(exp, ok):
    """Per series: mean slowdown (range over x values and repetitions) beside the mean
    prediction the figure draws (Eq. 3 for adaptive modes under 'auto'/'eq3', else Eq. 1/2)."""
    plot, series = exp["plot"], exp["plot"].get("series")
    kind = plot.get("prediction", "none")
    groups = {}
    for r in ok:
        if _f(r["slowdown"]) is None or r["profile"] == "none":  # no load: 1 by definition
            continue
        eq3 = kind == "eq3" or (kind == "auto" and str(r.get("mode_adaptive")) == "1")
        g = groups.setdefault(series_of(r, series), ([], [], eq3))
        g[0].append(_f(r["slowdown"]))
        if _f(r["pred_eq3" if eq3 else "pred_eq1"]) is not None:
            g[1].append(_f(r["pred_eq3" if eq3 else "pred_eq1"]))
    parts = []
    for s, (slow, pred, eq3) in sorted(groups.items()):
        label = f"{series}={s}" if series else "all trials"
        text = f"{label} {statistics.mean(slow):.2f}"
        if len(slow) > 1:
            text += f" ({min(slow):.2f}-{max(slow):.2f})"
        if pred:
            text += f" vs {'Eq. 3' if eq3 else 'proportional'} {statistics.mean(pred):.2f}"
        parts.append(text)
    return "; ".join(parts)


def plotted_here(exp, ok, col):
    """The mean of a plotted column per x value and series, e.g. 'mode=adm, profile=cpu-1 0.42'."""
    x, series = exp["plot"]["x"], exp["plot"].get("series")
    groups = {}
    for r in ok:
        if _f(r.get(col)) is not None:
            key = f"{x}={r.get(x, '')}" + (f", {series}={series_of(r, series)}" if series else "")
            groups.setdefault(key, []).append(_f(r[col]))
    return "; ".join(f"{k} {statistics.mean(v):.3g}" for k, v in sorted(groups.items()))


def _sweep_values(var, values, facts):
    """A sweep's values as run here: load_count expressions ('cores/2') resolved for the
    machine's cores, so the caption says 1, 2 on 2 cores and not 1, cores/2."""
    values = _values(values)
    if var == "load_count" and facts.get("cores"):
        return load_counts(values, int(facts["cores"]))
    return values


def caption(exp, rows, facts, scale="quick", claims=None):
    """Configuration at this scale, machine, the paper's finding and, with numbers, what was
    measured here: per-series slowdown beside its prediction, and each of the experiment's
    headline claims (summary.csv) beside the paper's value."""
    ok = [r for r in rows if r["status"] == "ok" and r["baseline"] != "1"]
    bad = [r for r in rows if r["status"] not in ("ok", SET_ASIDE)]
    eng = ", ".join(f"{k}={at_scale(v, scale)}" for k, v in exp["engine"].items())
    sweep = "; ".join(f"{k} over {', '.join(map(str, _sweep_values(k, at_scale(v, scale), facts)))}"
                      for k, v in exp["sweep"].items())
    parts = [f"<b>{html.escape(exp['figure'])}.</b> {html.escape(exp['title'])}.",
             f"Engine ({html.escape(scale)} scale): {html.escape(eng)}; {html.escape(sweep)}. "
             f"{len(ok)} trial(s) (plus no-load baselines) on "
             f"{facts['cores']} cores ({html.escape(facts['cpu_model'])}, Linux {html.escape(facts['kernel'])}).",
             f"<i>Paper:</i> {html.escape(exp['paper_finding'])}"]
    targets = sorted({r["target_s"] for r in rows if r.get("target_s")})
    if targets:  # trial length is a time; the end time that gives it was calibrated here
        ends = sorted({r["end_time"] for r in ok if r.get("end_time")}, key=float)
        parts.insert(2, f"No-load runs last {' / '.join(map(str, targets))} s: the simulated end time "
                        f"({', '.join(map(str, ends)) or 'none ran'}) is calibrated per configuration on this "
                        f"machine, and every mode and load of a configuration simulates the same events.")
    if "locality" in (exp["plot"]["y"], exp["plot"].get("y2")) and ok:
        shown = locality.choose(rows)
        parts.append(html.escape(locality.sentence(shown)))
        here = plotted_here(exp, ok, shown["y"])
        if here:
            parts.append(f"<i>Here,</i> {html.escape(shown['label'])} (mean): {html.escape(here)}.")
    here = measured_here(exp, ok)
    if here:
        parts.append(f"<i>Here,</i> slowdown (loaded / no-load time; mean, range) by series: {html.escape(here)}.")
    for cid in exp.get("claims", []):
        c = (claims or {}).get(cid)
        if c:
            verdict = f" ({c['verdict']})" if c["verdict"] else ""
            parts.append(f"<i>{html.escape(c['claim'])}:</i> paper {html.escape(c['paper_value'])} "
                         f"on {html.escape(c['paper_platform'])}; here {html.escape(c['measured_here'])}"
                         f"{html.escape(verdict)}.")
    faster = [r for r in ok if (_f(r["slowdown"]) or 1.0) < 0.95]
    if faster:
        # A loaded run cannot truly beat its no-load run: its baseline was disturbed.
        parts.append(f"<span class=warn>{len(faster)} trial(s) ran faster under load than their no-load "
                     "baseline (slowdown below 1): the baseline itself was slow (other work on the machine, "
                     "or the engine's run-to-run spread), so read these slowdowns with care.</span>")
    as_run = onoff_sentence(ok)
    if as_run:
        parts.append(as_run)
    noise = noise_sentence(rows)
    if noise:
        parts.append(noise)
    if any(r.get("stand_in") == "1" for r in rows):
        parts.append("<span class=warn>PARSEC was not installed: its loads are documented stand-ins "
                     "(see the profiles).</span>")
    if bad:
        reasons = sorted({r["reason"] for r in bad})
        parts.append(f"<span class=warn>{len(bad)} trial(s) failed or could not run here: "
                     f"{html.escape('; '.join(reasons))}</span>")
    if exp.get("needs"):
        parts.append(f"Needs: {html.escape(exp['needs'])}.")
    return " ".join(p for p in parts if p)


# An off period this much longer than the CTP makes the load a different load from the
# paper's (busy half the time); the caption says so.
OVERSHOOT = 1.5


def _us(v):
    return f"{v:.1f}" if v < 100 else f"{v:.0f}"


def onoff_sentence(rows):
    """What the on-off loads really did, per CTP: mean on and off periods over the trials
    (the table's load_on_us / load_off_us) and the busy share they give. An off period lasts
    the sleep plus its timer latency plus the wait for a CPU once awake: a CTP-10 load
    computes ~11 us and is off ~50 us here, a CTP-1000 one beside two engine threads is off
    ~1.6 ms. Lighter loads than their names."""
    by_ctp = {}
    for r in rows:
        on, off, ctp = _f(r.get("load_on_us")), _f(r.get("load_off_us")), _f(r.get("ctp_us"))
        if on is not None and off is not None and ctp:
            by_ctp.setdefault(ctp, []).append((on, off))
    if not by_ctp:
        return ""
    said, light = [], []
    for ctp, periods in sorted(by_ctp.items()):
        on = statistics.mean(p[0] for p in periods)
        off = statistics.mean(p[1] for p in periods)
        said.append(f"CTP {ctp:g} us: on {_us(on)} / off {_us(off)} us (busy {on / (on + off):.0%})")
        if off > OVERSHOOT * ctp:
            light.append(f"{ctp:g}")
    text = f"On-off loads as run (mean per period over the trials): {'; '.join(said)}."
    if light:
        text += (f" At CTP {', '.join(light)} us the off periods ran long (the sleep's timer latency, and "
                 "the wait for a CPU after waking beside the engine's threads): the load was busy less than "
                 "half the time, where the paper's load is busy half of it.")
    return html.escape(text)


def noise_sentence(rows):
    """How many trials other work on the machine disturbed (the table's `disturbed` and
    `reruns`, from each trial's `noise`): re-run, and still disturbed after the re-runs; and
    with --wait-near, how many the host's far vCPU placement re-ran (`far_reruns`) or
    touched at the end of the run kept (`ended_far`)."""
    measured = [r for r in rows if r.get("disturbed") in ("0", "1", 0, 1)]
    if not measured:
        return ""
    far_redone = {id(r): int(_f(r.get("far_reruns")) or 0) for r in measured}
    rerun = [r for r in measured if (_f(r.get("reruns")) or 0) - far_redone[id(r)] > 0]
    still = [r for r in measured if str(r.get("disturbed")) == "1"]
    if not rerun and not still:
        text = f"Noise: none of the {len(measured)} trials was disturbed by other work on the machine."
    else:
        text = (f"Noise: {len(rerun)} of {len(measured)} trial(s) were run again because other work on the "
                f"machine disturbed them; {len(still)} stayed disturbed after their re-runs (kept, marked "
                "in the table's disturbed column).")
    far_rerun = sum(1 for r in measured if far_redone[id(r)])
    # loaded ones only where the experiment re-runs them (rerun_far_loaded)
    loaded = sum(1 for r in measured if far_redone[id(r)] and r.get("profile") not in (None, "", "none"))
    ran_far = sum(1 for r in measured if baselines.ran_far(r))
    if far_rerun or ran_far:
        who = f"trial(s) ({loaded} loaded)" if loaded else "no-load trial(s)"
        text += (f" {far_rerun} {who} were run again because the host ran the CPUs far apart; "
                 f"{ran_far} kept run(s) ran so (loaded ones are re-run only where the experiment "
                 "says rerun_far_loaded; the table's ran_far column: a "
                 f"far_share, the share of a run's barrier waits at far speed, {placement.FAR_RERUN_SHARE:.0%} "
                 "or more above the lowest its configuration showed earlier, or "
                 f"{placement.FAR_AFTER_SHARE:.0%} or more with a far probe after the run; ended_far where it is empty).")
    set_aside = sum(1 for r in rows if r.get("status") == SET_ASIDE)
    if set_aside:
        text += (f" {set_aside} far run(s) were set aside: their trials' near repetitions stand for them "
                 "(status 'set aside' in the table).")
    # the trials the figures use: a set-aside row keeps its baseline_from but is not plotted
    stood_in = sum(1 for r in rows if r.get("status") == "ok"
                   and r.get("baseline_from") in (baselines.OTHERS, baselines.OTHERS_FAR))
    if stood_in:
        text += (f" {stood_in} trial(s) were divided by other repetitions' no-load runs because their own "
                 "block's ran far or failed (the table's baseline_from column).")
    return f"<span class=warn>{html.escape(text)}</span>" if still else html.escape(text)


def experiment_claims(exp, table, claims_path, scale):
    """The experiment's claims as summary.csv has them, judged from its own table alone
    (the claims of configs/claims.yaml whose table is this experiment)."""
    doc = claims_mod.load_claims(claims_path)
    doc = {**doc, "claims": [c for c in doc["claims"] if c["table"] == exp["name"]]}
    looks = {exp["name"]} if two_looks(exp, scale) else set()
    return {r["id"]: r for r in claims_mod.summarise(doc, [table], looks)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--experiment", required=True)
    ap.add_argument("--scale", required=True)
    ap.add_argument("--table", required=True)
    ap.add_argument("--claims", required=True, help="configs/claims.yaml")
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    exp = load_experiment(a.experiment)
    facts = machine_facts([(a.experiment, None, a.table)])
    text = caption(exp, read_rows(a.table), facts, a.scale, experiment_claims(exp, a.table, a.claims, a.scale))
    write_atomic(a.out, f"<p class=caption>{text}</p>\n")
    print(f"caption: {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
