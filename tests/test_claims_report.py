"""The report opens with the count of each verdict and with where the machine the trials ran
on (as they recorded it, not the host that analyses them) differs from the paper's
platforms; its first table gives per claim the paper's value and platform, the statistic
with its interval and n, the test, the verdict and why."""
import csv
import json

from analysis import claims, report
from analysis.aggregate import COLUMNS

MACHINE = {"cores": 2, "online_cpus": 2, "kernel": "6.1.0-test", "cpu_model": "Recorded CPU",
           "cgroup": "v2", "hostname": "trialhost"}


def run_layout(tmp_path, machine):
    """results/quick/{tables,trials,figures} with one fig08 table of 3 repetitions, its trial
    records (with the given machine), and the summary."""
    tables = tmp_path / "results/quick/tables"
    trials = tmp_path / "results/quick/trials/fig08-one-load"
    tables.mkdir(parents=True)
    trials.mkdir(parents=True)
    rows = []
    for rep, (fm, ladm) in enumerate([(3.0, 1.0), (3.3, 1.1), (2.7, 0.9)]):
        for mode, w in (("fm", fm), ("ladm", ladm)):
            tid = f"mode{mode}-rep{rep}"
            rows.append({c: "" for c in COLUMNS} | {"experiment": "fig08-one-load", "trial": tid, "status": "ok",
                        "baseline": "0", "rep": rep, "mode": mode, "remote": "0.4", "profile": "cpu-1",
                        "wall_s": w, "cores": "2", "cache_note": "hardware cache counters not supported here "
                                                                 "(perf: <not supported>)"})
            (trials / f"{tid}.json").write_text(json.dumps({"status": "ok", "machine": machine}))
    table = tables / "fig08-one-load.csv"
    with open(table, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(rows)
    summary = tables / "summary.csv"
    assert claims.main(["--out", str(summary), str(table)]) == 0
    png = tmp_path / "results/quick/figures/fig08-one-load.png"
    png.parent.mkdir(parents=True)
    png.write_bytes(b"\x89PNG")
    return summary, [("fig08-one-load", str(png), str(table))]


def test_report_opens_with_verdict_counts_and_the_recorded_machine(tmp_path):
    summary, exps = run_layout(tmp_path, MACHINE | {"smt": False, "virtualised": True})
    out = tmp_path / "report.html"
    report.build("quick", summary, exps, out)
    text = out.read_text()
    with open(summary) as f:
        verdicts = [r["verdict"] for r in csv.DictReader(f)]
    counts = ", ".join(f"{verdicts.count(v)} {v}" for v in claims.VERDICTS if verdicts.count(v))
    head = text.split("<h2>", 1)[0]
    assert f"{len(verdicts)} claims: {counts}." in head
    assert "1 agrees" in head and "not measurable here" in head
    assert "as the trials recorded it" in head and "Recorded CPU" in head and "6.1.0-test" in head
    assert "2 cores where the paper had 4 (Core i7) and 48 (Magny-Cours)" in head
    assert "a virtual machine (the paper&#x27;s were bare metal)" in head
    assert "no SMT" in head and "no hardware cache counters" in head
    # the claims table: paper value and platform, statistic with interval and n, test, verdict, why
    row = text.split("LADM outperforms FM under one load at remote &gt;= 20%", 1)[1].split("</tr>", 1)[0]
    assert "up to 2.8x (Core i7); up to 2x (Magny-Cours)" in row
    assert "FM time / LADM time: 3 [" in row and "n=3" in row and "&gt; 1 at every remote" in row
    assert "class='agrees'>agrees<" in row and "the whole interval is &gt; 1" in row


def test_facts_the_trials_did_not_record_are_said_to_be_missing(tmp_path):
    summary, exps = run_layout(tmp_path, MACHINE)
    out = tmp_path / "report.html"
    report.build("quick", summary, exps, out)
    head = out.read_text().split("<h2>", 1)[0]
    assert "Not recorded by the trials: SMT, virtualised." in head
