"""The report: one self-contained HTML page (results/<scale>/report.html) with the summary
of the paper's claims beside this machine's values, every figure with a caption (what was
run, on which machine, what the paper found, what was measured here: analysis/caption.py),
and every trial that failed or could not run here, with its reason.

    python -m analysis.report --scale quick --summary S.csv --out R.html \
        --experiment NAME FIGURE.png TABLE.csv [--experiment ...]
"""
import argparse
import base64
import html
import os
import sys
from datetime import datetime, timezone
from pathlib import Path

from analysis.caption import caption
from analysis.stats import read_rows
from workflows import machine
from workflows.experiments import load_experiment

CSS = """body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:4px 6px;vertical-align:top}
th{background:#f0f0f0}.agrees{color:#176d1f}.differs{color:#a32}.fig{margin:2em 0;border-top:1px solid #ddd}
img{max-width:100%}.caption{font-size:14px;line-height:1.4}.warn{color:#a32}code{font-size:12px}"""


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
    for r in read_rows(summary):
        claims[r["id"]] = r
        h.append(f"<tr><td>{html.escape(r['figure'])}</td><td>{html.escape(r['claim'])}</td>"
                 f"<td>{html.escape(r['paper_value'])} ({html.escape(r['paper_platform'])})</td>"
                 f"<td>{html.escape(r['measured_here'])}</td><td class={r['verdict'] or 'none'}>"
                 f"{html.escape(r['verdict'])}</td></tr>")
    h.append("</table>")
    for name, png, table in experiments:
        exp = load_experiment(name)
        rows = read_rows(table)
        data = base64.b64encode(Path(png).read_bytes()).decode()
        h.append(f"<div class=fig id={html.escape(name)}><h2>{html.escape(exp['figure'])}</h2>"
                 f"<img alt='{html.escape(exp['title'])}' src='data:image/png;base64,{data}'>"
                 f"<p class=caption>{caption(exp, rows, facts, scale, claims)}</p>"
                 f"<p><code>{html.escape(str(table))}</code>, <code>{html.escape(str(Path(png).with_suffix('.svg')))}</code></p></div>")
    failed = [(name, r) for name, _, table in experiments for r in read_rows(table) if r["status"] != "ok"]
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
