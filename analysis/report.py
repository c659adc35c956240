"""The report: one self-contained HTML page (results/<scale>/report.html). It opens with the
count of each verdict on the paper's claims and where the machine the trials ran on (as
they recorded it) differs from the paper's platforms, then the claims table (paper value
and platform, this machine's statistic with its 95% interval and n, the test, the verdict
and why: analysis/claims.py), every figure with a caption (analysis/caption.py), and every
trial that failed or could not run here, with its reason.

    python -m analysis.report --scale quick --summary S.csv --out R.html \
        --experiment NAME FIGURE.png TABLE.csv [--experiment ...]
"""
import argparse
import base64
import html
import sys
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

from airbase.atomic import write_atomic
from analysis import claims, locality, time_spent
from analysis.caption import caption
from analysis.recorded_machine import machine_facts, trial_machines
from analysis.set_aside import SET_ASIDE
from analysis.stats import read_rows
from workflows import machine
from workflows.experiments import load_experiment

CSS = """body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:4px 6px;vertical-align:top}
th{background:#f0f0f0}.agrees{color:#176d1f}.differs{color:#a32}.inconclusive{color:#866}.not-measurable-here{color:#666}.not-run-at-this-scale{color:#666}.fig{margin:2em 0;border-top:1px solid #ddd}
img{max-width:100%}.caption{font-size:14px;line-height:1.4}.warn{color:#a32}code{font-size:12px}"""


def cache_counters(experiments):
    """'yes (perf cache-misses)', or why not, from the tables' perf columns ('' if unknown)."""
    rows = [r for _, _, table in experiments for r in read_rows(table) if r["status"] == "ok"]
    if not rows:
        return ""
    shown = locality.choose(rows)
    return f"yes ({shown['shown']})" if shown["y"] == "cache_misses" else f"no: {shown['why']}"


def _recorded(m, key):
    v = m.get(key)
    return "not recorded" if v is None else ("yes" if v is True else "no" if v is False else str(v))


def machine_comparison(machines, platforms, counters):
    """HTML: this machine beside the paper's platforms (cores, hardware threads, SMT,
    virtualisation, hardware cache counters), and a sentence on where they differ."""
    here = machines[0] if machines else {}
    cols = [("cores", lambda p: p["cores"], lambda m: _recorded(m, "cores")),
            ("hardware threads", lambda p: p["hardware_threads"], lambda m: _recorded(m, "online_cpus")),
            ("SMT", lambda p: "yes" if p["smt"] else "no", lambda m: _recorded(m, "smt")),
            ("virtualised", lambda p: "yes" if p["virtualised"] else "no", lambda m: _recorded(m, "virtualised")),
            ("hardware cache counters", lambda p: "yes" if p["cache_counters"] else "no", lambda m: counters or "not known")]
    h = ["<table><tr><th></th>" + "".join(f"<th>{html.escape(c)}</th>" for c, _, _ in cols) + "</tr>"]
    for name, p in platforms.items():
        h.append(f"<tr><td>paper: {html.escape(name)}</td>" + "".join(f"<td>{html.escape(str(f(p)))}</td>" for _, f, _ in cols) + "</tr>")
    h.append("<tr><td><b>here</b></td>" + "".join(f"<td>{html.escape(g(here))}</td>" for _, _, g in cols) + "</tr></table>")
    diffs = []
    cores = here.get("cores")
    if cores is not None and all(cores != p["cores"] for p in platforms.values()):
        diffs.append(f"{cores} cores where the paper had " + " and ".join(f"{p['cores']} ({n})" for n, p in platforms.items()))
    if here.get("virtualised") is True:
        diffs.append("a virtual machine (the paper's were bare metal)")
    if here.get("smt") is False and any(p["smt"] for p in platforms.values()):
        diffs.append("no SMT (the Core i7 had two hardware threads per core)")
    if counters.startswith("no"):
        diffs.append("no hardware cache counters (the paper counted cache misses)")
    unknown = [c for c, _, g in cols[2:4] if g(here) == "not recorded"]
    text = ("This machine differs from the paper's platforms in: " + "; ".join(diffs) + "." if diffs
            else "No difference from the paper's platforms is recorded.")
    if unknown:
        text += f" Not recorded by the trials: {', '.join(unknown)}."
    if len(machines) > 1:
        text += f" The trials ran on {len(machines)} different machines; the first is shown."
    return "\n".join(h) + f"<p>{html.escape(text)}</p>"


def verdict_counts(rows):
    counts = Counter(r["verdict"] for r in rows)
    return f"{len(rows)} claims: " + ", ".join(f"{counts[v]} {v}" for v in claims.VERDICTS if counts[v]) + "."


def _statistic_cell(r):
    if r["value"] == "":
        return f"n={r['n']}"
    ci = f" [{r['ci_low']}, {r['ci_high']}]" if r["ci_low"] != "" else ""
    return f"{r['statistic']}: {r['value']}{ci}, n={r['n']}"


def time_section(experiments):
    """Where the trials' time went (analysis/time_spent.py): so a run that took longer than
    its estimate says whether the plan or the host (far placement, re-runs) took it."""
    runs = {Path(table).parent.parent for _, _, table in experiments}
    recs = [d for run in sorted(runs) for d in time_spent.records(run, {name for name, _, _ in experiments})]
    spent = time_spent.time_spent(recs)
    h = ["<h2 id=time>Where the time went</h2>"]
    if not spent["trials"]:
        return h[0] + "<p>No trial records were found beside the tables.</p>"
    if spent["span_s"] <= 0:  # shares of no time say nothing: no table of them
        return h[0] + (f"<p>The {spent['trials']} trial records found span no time (each started "
                       "when it finished): nothing to break down.</p>")
    h.append(f"<p>{spent['span_s'] / 60:.1f} minutes from the first trial's start to the last one's end, "
             f"over {spent['trials']} trials (set-up before them and this analysis after them are not "
             f"counted). Runs made again are no-load runs during which the host placed the CPUs far "
             f"apart, and runs other work disturbed: a host that often does the first takes longer "
             f"than one that keeps its CPUs near each other, with the same plan.</p>"
             "<table><tr><th>what</th><th>minutes</th><th>share</th></tr>")
    h += [f"<tr><td>{html.escape(what)}</td><td>{spent['parts'][k] / 60:.1f}</td>"
          f"<td>{spent['parts'][k] / spent['span_s']:.0%}</td></tr>"
          for k, what in time_spent.PARTS]
    h.append("</table><table><tr><th>experiment</th><th>trials</th><th>minutes in its trials</th>"
             "<th>of which runs made again and waits for near CPUs</th></tr>")
    h += [f"<tr><td>{html.escape(name)}</td><td>{e['trials']}</td><td>{e['span_s'] / 60:.1f}</td>"
          f"<td>{e['far_s'] / 60:.1f}</td></tr>" for name, e in time_spent.by_experiment(recs).items()]
    h.append("</table>")
    return "".join(h)


def build(scale, summary, experiments, out, claims_path=claims.DEFAULT):
    machines = trial_machines(experiments)
    facts = machine_facts(experiments)
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    rows = read_rows(summary)
    platforms = claims.load_claims(claims_path)["platforms"]
    source = "as the trials recorded it" if machines else "the analysing host: no trial records were found"
    h = [f"<!doctype html><html><head><meta charset=utf-8><title>airlab report ({scale})</title>"
         f"<style>{CSS}</style></head><body>",
         "<h1>airlab: the AIR paper re-measured on this machine</h1>",
         f"<p class=counts><b>{html.escape(verdict_counts(rows))}</b> Each statistic is computed per repetition "
         f"with a {html.escape(claims.INTERVAL)} (97.5% where an experiment added repetitions to claims "
         f"its first ones left undecided: the interval column says which); agrees / differs when the whole "
         f"interval passes / fails the test (a claim judged at m levels differs only where a level's "
         f"interval at 1 - 0.05/m fails), inconclusive when it straddles it or n &lt; 2. "
         f"'Same again' is the chance that a repeat of the run with as many repetitions reaches the "
         f"same verdict (analysis/replication.py): low where the value sits near its bound.</p>",
         f"<p>Scale <b>{scale}</b>, {now}, lab version {html.escape(machine.lab_version())}. Machine "
         f"({html.escape(source)}): {facts.get('cores')} cores, {html.escape(str(facts.get('cpu_model')))}, "
         f"Linux {html.escape(str(facts.get('kernel')))}, cgroup {html.escape(str(facts.get('cgroup')))}.</p>",
         machine_comparison(machines, platforms, cache_counters(experiments)),
         "<h2>The paper's claims beside this machine</h2><table><tr><th>figure</th><th>claim</th>"
         "<th>paper (platform)</th><th>statistic here: mean [95% interval], n</th><th>test</th><th>verdict</th>"
         "<th>same again</th>"
         "<th>why</th></tr>"]
    by_id = {}
    for r in rows:
        by_id[r["id"]] = r
        h.append(f"<tr><td>{html.escape(r['figure'])}</td><td>{html.escape(r['claim'])}</td>"
                 f"<td>{html.escape(r['paper_value'])}"  # with several platforms each value names its own
                 + ("" if ";" in r["paper_platform"] else f" ({html.escape(r['paper_platform'])})") + "</td>"
                 f"<td>{html.escape(_statistic_cell(r))}</td><td>{html.escape(r['test'])}</td>"
                 f"<td class='{r['verdict'].replace(' ', '-')}'>{html.escape(r['verdict'])}</td>"
                 f"<td>{html.escape(r.get('same_verdict_again', ''))}</td>"
                 f"<td>{html.escape(r['reason'])}</td></tr>")
    h.append("</table>")
    claims_of = by_id
    for name, png, table in experiments:
        exp = load_experiment(name)
        rows = read_rows(table)
        data = base64.b64encode(Path(png).read_bytes()).decode()
        h.append(f"<div class=fig id={html.escape(name)}><h2>{html.escape(exp['figure'])}</h2>"
                 f"<img alt='{html.escape(exp['title'])}' src='data:image/png;base64,{data}'>"
                 f"<p class=caption>{caption(exp, rows, facts, scale, claims_of)}</p>"
                 f"<p><code>{html.escape(str(table))}</code>, <code>{html.escape(str(Path(png).with_suffix('.svg')))}</code></p></div>")
    # far runs set aside (analysis/set_aside.py) ran; each caption counts them
    failed = [(name, r) for name, _, table in experiments for r in read_rows(table)
              if r["status"] not in ("ok", SET_ASIDE)]
    h.append(f"<h2 id=failed>Trials that failed or could not run here ({len(failed)})</h2>")
    if failed:
        h.append("<table><tr><th>experiment</th><th>trial</th><th>status</th><th>reason</th></tr>")
        h += [f"<tr><td>{html.escape(n)}</td><td>{html.escape(r['trial'])}</td><td>{html.escape(r['status'])}</td>"
              f"<td>{html.escape(r['reason'])}</td></tr>" for n, r in failed]
        h.append("</table><p>Logs: <code>results/" + html.escape(scale) + "/logs/EXPERIMENT/TRIAL.log</code>; "
                 "delete a trial's JSON to run it again.</p>")
    else:
        h.append("<p>None: every trial ran.</p>")
    h.append(time_section(experiments))
    h.append("</body></html>")
    write_atomic(out, "\n".join(h))


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
