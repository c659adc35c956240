"""One figure per experiment (PNG and SVG) from its table: measured mean with 95% CI error
bars per x and series, and the proportional-slowdown prediction drawn as a line (Eq. 1/2
for fixed mapping, Eq. 3 for the adaptive modes, as the experiment asks). Timeline figures
draw active threads over wall time with the ideal (threads minus loads running). A
locality figure draws cache misses where perf counted them, else the engine's locality
figure, and its title says which and why (analysis/locality.py).

    python -m analysis.figures --experiment configs/experiments/X.yaml --table T.csv \
        --out results/<scale>/figures/X.png [--trials TRIAL.json ...]
"""
import argparse
import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from airbase.atomic import write_atomic  # noqa: E402
from analysis import locality, relative_time  # noqa: E402
from analysis.stats import mean_ci, number as _num, read_rows, series_of  # noqa: E402
from analysis.tracking import ideal_threads, loads_running  # noqa: E402
from workflows.experiments import load_experiment  # noqa: E402

LABELS = {"slowdown": "slowdown (loaded / no-load time)", "wall_s": "run time (s)",
          "efficiency": "efficiency (committed / processed)", "locality": locality.ENGINE_FIGURE,
          "load_slowdown": "the loads' own slowdown", "event_rate": "committed events/s",
          "n_loads": "CPU-bound loads (CPUs demanded)", "load_processes": "loads (processes)", "ctp_us": "CTP (us)", "remote": "remote share",
          "epg": "event granularity (EPG)", "apte_threshold": "APTE threshold", "active_threads": "active threads"}

PREDICTED = {"eq1": "proportional (Eq. 1/2)", "eq3": "adaptive (Eq. 3)",
             "auto": "predicted (Eq. 1/2; Eq. 3 for ADM/LADM)"}


def grouped(rows, x, series, y):
    """{series value: [(x value, mean, ci, n)]} over ok, non-baseline rows."""
    out = {}
    for r in rows:
        if r["status"] != "ok" or r["baseline"] == "1" or _num(r.get(y)) is None:
            continue
        out.setdefault(series_of(r, series), {}).setdefault(r[x], []).append(_num(r[y]))
    result = {}
    for s, by_x in out.items():
        pts = []
        for xv, vals in by_x.items():
            m, h, n = mean_ci(vals)
            pts.append((xv, m, h, n))
        pts.sort(key=lambda p: (_num(p[0]) is None, _num(p[0]) if _num(p[0]) is not None else 0, str(p[0])))
        result[s] = pts
    return result


def prediction(rows, x, series, kind):
    """{series: [(x, predicted slowdown)]}; 'auto' = Eq. 3 for rows of an adaptive mode, else Eq. 1."""
    out = {}
    for r in rows:
        if r["status"] != "ok" or r["baseline"] == "1":
            continue
        col = "pred_eq3" if kind == "eq3" or (kind == "auto" and str(r.get("mode_adaptive")) == "1") else "pred_eq1"
        v = _num(r.get(col))
        if v is not None:
            out.setdefault(series_of(r, series), {}).setdefault(r[x], []).append(v)
    return {s: sorted(((xv, sum(v) / len(v)) for xv, v in d.items()), key=lambda p: _num(p[0]) or 0)
            for s, d in out.items()}


def panel(ax, rows, plot, y, ylabel=None):
    x, series = plot["x"], plot.get("series")
    data = grouped(rows, x, series, y)
    if not data:
        ax.text(0.5, 0.5, "no successful trials", ha="center", va="center", transform=ax.transAxes)
        return
    kind = plot["kind"]
    xs_all = sorted({p[0] for pts in data.values() for p in pts}, key=lambda v: (_num(v) is None, _num(v) or 0, v))
    numeric = all(_num(v) is not None for v in xs_all) and kind == "line"
    width = 0.8 / max(1, len(data))
    colours = {}  # a series' prediction is drawn in its measured line's colour
    for i, (s, pts) in enumerate(sorted(data.items())):
        label = f"{series}={s}" if series else "measured"
        if numeric:
            bars = ax.errorbar([_num(p[0]) for p in pts], [p[1] for p in pts], yerr=[p[2] for p in pts],
                               marker="o", capsize=3, label=label)
            colours[s] = bars[0].get_color()
        else:
            pos = [xs_all.index(p[0]) + (i - (len(data) - 1) / 2) * width for p in pts]
            ax.bar(pos, [p[1] for p in pts], width=width, yerr=[p[2] for p in pts], capsize=3, label=label)
    if not numeric:
        ax.set_xticks(range(len(xs_all)))
        ax.set_xticklabels(xs_all, rotation=20, ha="right", fontsize=8)
    pred_kind = plot.get("prediction", "none")
    if y == "slowdown" and pred_kind != "none":
        for s, pts in sorted(prediction(rows, x, series, pred_kind).items()):
            if numeric:  # the dash marker keeps a one-point prediction visible
                ax.plot([_num(p[0]) for p in pts], [p[1] for p in pts], "--", marker="_", markersize=14,
                        color=colours.get(s, "k"), alpha=0.6,
                        label=f"{PREDICTED[pred_kind]}{f', {series}={s}' if series else ''}")
            else:
                for p in pts:
                    xi = xs_all.index(p[0]) if p[0] in xs_all else None
                    if xi is not None:
                        ax.hlines(p[1], xi - 0.4, xi + 0.4, colors="k", linestyles="dashed", alpha=0.6)
        ax.axhline(1.0, color="grey", lw=0.5)
    if plot.get("logx") and numeric:
        ax.set_xscale("log")
    ax.set_ylim(bottom=0)  # every plotted quantity is non-negative; a CI below 0 says only "noisy"
    ax.set_xlabel(LABELS.get(x, x))
    ax.set_ylabel(ylabel or LABELS.get(y, y))
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)


def timeline_runs(trials, plot):
    """[(label, trial record)]: the first successful repetition of each loaded configuration,
    one panel each (overlaid, their fast-switching active-thread steps hide one another)."""
    runs = {}
    for path in trials:
        d = json.loads(Path(path).read_text())
        if d.get("status") != "ok" or d["trial"]["id"].startswith("base-"):
            continue
        cfg = d["engine"]["config"]
        label = f"{cfg.get('detector')}-{cfg.get('reactivation')}" if plot.get("series") else d["trial"]["id"]
        if label not in runs or d["trial"]["rep"] < runs[label]["trial"]["rep"]:
            runs[label] = d
    return [(f"{label} (rep {d['trial']['rep']})", d) for label, d in sorted(runs.items())]


def timeline_panel(ax, label, d):
    tl = d["timeline"]
    cfg = d["engine"]["config"]
    ax.step([r["t_s"] for r in tl], [r["active_threads"] for r in tl], where="post", label=label)
    threads, cores = cfg["threads"], d["machine"]["cores"]
    end = tl[-1]["t_s"] if tl else 0
    ts = sorted({0.0, end} | {t for ld in d["loads"] for t in (ld["start_s"], ld["stop_s"])
                              if t is not None and t < end})  # loads outliving the run: not drawn
    ideal = []
    for t in ts:
        ideal.append(ideal_threads(threads, cores, loads_running(d["loads"], t)))
    ax.step(ts, ideal, where="post", color="k", ls="--", alpha=0.6, label="ideal: cores - loads")
    ax.set_ylim(0, threads + 0.4)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # a count of threads
    ax.set_ylabel("active threads")
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(alpha=0.3)


def draw(exp, rows, trials, out, reason=None):
    plot = exp["plot"]
    panels = [plot["y"]] + ([plot["y2"]] if plot.get("y2") else [])
    runs = timeline_runs(trials, plot) if plot["kind"] == "timeline" and not reason else []
    if runs:  # one row per run, sharing the time axis
        fig, axes = plt.subplots(len(runs), 1, figsize=(6.4, 1.4 + 1.6 * len(runs)), sharex=True, squeeze=False)
        for ax, (label, d) in zip(axes[:, 0], runs):
            timeline_panel(ax, label, d)
        axes[-1][0].set_xlabel("wall time (s)")
    else:
        fig, axes = plt.subplots(1, len(panels), figsize=(6.4 * len(panels), 4.4), squeeze=False)
    if reason:
        axes[0][0].text(0.5, 0.5, f"not measured here:\n{reason}", ha="center", va="center", wrap=True,
                        transform=axes[0][0].transAxes)
        axes[0][0].set_axis_off()
    elif plot["kind"] == "timeline":
        if not runs:
            axes[0][0].text(0.5, 0.5, "no successful loaded run", ha="center", va="center",
                            transform=axes[0][0].transAxes)
    else:
        for i, (ax, y) in enumerate(zip(axes[0], panels)):
            if y == "locality":  # cache misses where counted, else the engine's figure
                shown = locality.choose(rows)
                panel(ax, rows, plot, shown["y"], shown["label"])
            elif i == 0 and relative_time.reference_of(plot):
                col, val = relative_time.reference_of(plot)
                panel(ax, relative_time.with_relative(rows, plot), plot, relative_time.column(plot),
                      relative_time.label(plot, LABELS.get(y, y)))
                ax.axhline(1.0, color="k", ls="--", lw=0.8, label=f"{col}={val} (the reference)")
                ax.legend(fontsize=7)
            else:
                panel(ax, rows, plot, y)
    stand_in = any(r.get("stand_in") == "1" for r in rows)
    title = f"{exp['figure']}: {exp['title']}" + (" [PARSEC stand-ins]" if stand_in else "")
    if "locality" in panels and not reason:
        title = "\n".join([title, *locality.title_lines(locality.choose(rows))])
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    out = Path(out)
    for target in (out, out.with_suffix(".svg")):
        write_atomic(target, lambda f, fmt=target.suffix[1:]: fig.savefig(f, format=fmt, dpi=110))
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--experiment", required=True)
    ap.add_argument("--table", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--trials", nargs="*", default=[])
    a = ap.parse_args(argv)
    exp = load_experiment(a.experiment)
    rows = read_rows(a.table)
    ok = [r for r in rows if r["status"] == "ok"]
    reason = None
    if not ok:
        reasons = sorted({r["reason"] for r in rows if r["reason"]})
        reason = "; ".join(reasons) or "no trial succeeded"
    draw(exp, rows, a.trials, a.out, reason)
    print(f"figures: {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
