"""The report: one self-contained HTML page (results/<scale>/report.html) with the summary
of the paper's claims beside this machine's values, every figure with a caption (what was
run, on which machine, what the paper found, what was measured here), and every trial that
failed or could not run here, with its reason.

    python -m analysis.report --scale quick --summary S.csv --out R.html \
        --experiment NAME FIGURE.png TABLE.csv [--experiment ...]
"""
import argparse
import base64
import csv
import html
import os
import statistics
import sys
from datetime import datetime, timezone
from pathlib import Path

from workflows import machine
from workflows.experiments import at_scale, load_experiment

CSS = """body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:4px 6px;vertical-align:top}
th{background:#f0f0f0}.agrees{color:#176d1f}.differs{color:#a32}.fig{margin:2em 0;border-top:1px solid #ddd}
img{max-width:100%}.caption{font-size:14px;line-height:1.4}.warn{color:#a32}code{font-size:12px}"""


def _rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def _f(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _values(v):
    return v if isinstance(v, list) else [v]


def _series(r, series):
    return "+".join(str(r.get(part, "")) for part in series.split("+")) if series else ""


def measured_here(exp, ok):
    """Per series: mean slowdown (range over x values and repetitions) beside the mean
    prediction the figure draws (Eq. 3 for adaptive modes under 'auto'/'eq3', else Eq. 1/2)."""
    plot, series = exp["plot"], exp["plot"].get("series")
    kind = plot.get("prediction", "none")
    groups = {}
    for r in ok:
        if _f(r["slowdown"]) is None or r["profile"] == "none":  # no load: 1 by definition
            continue
        eq3 = kind == "eq3" or (kind == "auto" and r.get("mode") in ("adm", "ladm"))
        g = groups.setdefault(_series(r, series), ([], [], eq3))
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


def caption(exp, rows, facts, scale="quick", claims=None):
    """Configuration at this scale, machine, the paper's finding and, with numbers, what was
    measured here: per-series slowdown beside its prediction, and each of the experiment's
    headline claims (summary.csv) beside the paper's value."""
    ok = [r for r in rows if r["status"] == "ok" and r["baseline"] != "1"]
    bad = [r for r in rows if r["status"] != "ok"]
    eng = ", ".join(f"{k}={at_scale(v, scale)}" for k, v in exp["engine"].items())
    sweep = "; ".join(f"{k} over {', '.join(map(str, _values(at_scale(v, scale))))}" for k, v in exp["sweep"].items())
    parts = [f"<b>{html.escape(exp['figure'])}.</b> {html.escape(exp['title'])}.",
             f"Engine ({html.escape(scale)} scale): {html.escape(eng)}; {html.escape(sweep)}. "
             f"{len(ok)} trial(s) (plus no-load baselines) on "
             f"{facts['cores']} cores ({html.escape(facts['cpu_model'])}, Linux {html.escape(facts['kernel'])}).",
             f"<i>Paper:</i> {html.escape(exp['paper_finding'])}"]
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


def build(scale, summary, experiments, out):
    facts = machine.facts()
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    h = [f"<!doctype html><html><head><meta charset=utf-8><title>airlab report ({scale})</title>"
         f"<style>{CSS}</style></head><body>",
         f"<h1>airlab: the AIR paper re-measured on this machine</h1>",
         f"<p>Scale <b>{scale}</b>, {now}, lab version {html.escape(machine.lab_version())}. Machine: "
         f"{facts['cores']} cores, {html.escape(facts['cpu_model'])}, Linux {html.escape(facts['kernel'])}, "
         f"cgroup {html.escape(str(facts['cgroup']))}.</p>",
         "<h2>The paper's claims beside this machine</h2><table><tr><th>figure</th><th>claim</th>"
         "<th>paper</th><th>measured here</th><th></th></tr>"]
    claims = {}
    for r in _rows(summary):
        claims[r["id"]] = r
        h.append(f"<tr><td>{html.escape(r['figure'])}</td><td>{html.escape(r['claim'])}</td>"
                 f"<td>{html.escape(r['paper_value'])} ({html.escape(r['paper_platform'])})</td>"
                 f"<td>{html.escape(r['measured_here'])}</td><td class={r['verdict'] or 'none'}>"
                 f"{html.escape(r['verdict'])}</td></tr>")
    h.append("</table>")
    for name, png, table in experiments:
        exp = load_experiment(name)
        rows = _rows(table)
        data = base64.b64encode(Path(png).read_bytes()).decode()
        h.append(f"<div class=fig id={html.escape(name)}><h2>{html.escape(exp['figure'])}</h2>"
                 f"<img alt='{html.escape(exp['title'])}' src='data:image/png;base64,{data}'>"
                 f"<p class=caption>{caption(exp, rows, facts, scale, claims)}</p>"
                 f"<p><code>{html.escape(str(table))}</code>, <code>{html.escape(str(Path(png).with_suffix('.svg')))}</code></p></div>")
    failed = [(name, r) for name, _, table in experiments for r in _rows(table) if r["status"] != "ok"]
    h.append(f"<h2 id=failed>Trials that failed or could not run here ({len(failed)})</h2>")
    if failed:
        h.append("<table><tr><th>experiment</th><th>trial</th><th>status</th><th>reason</th></tr>")
        h += [f"<tr><td>{html.escape(n)}</td><td>{html.escape(r['trial'])}</td><td>{html.escape(r['status'])}</td>"
              f"<td>{html.escape(r['reason'])}</td></tr>" for n, r in failed]
        h.append("</table><p>Logs: <code>results/" + html.escape(scale) + "/logs/EXPERIMENT/TRIAL.log</code>; "
                 "delete a trial's JSON to run it again.</p>")
    else:
        h.append("<p>None: every trial ran.</p>")
    h.append("</body></html>")
    out = Path(out)
    tmp = out.with_name(f".{out.name}.tmp.{os.getpid()}")
    tmp.write_text("\n".join(h))
    os.replace(tmp, out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", required=True)
    ap.add_argument("--summary", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--experiment", nargs=3, action="append", default=[], metavar=("NAME", "PNG", "CSV"))
    a = ap.parse_args(argv)
    build(a.scale, a.summary, a.experiment, a.out)
    print(f"report: {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
