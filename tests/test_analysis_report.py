"""Captions and figures from hand-made tables: a caption states the configuration at the
report's scale, the machine, and with numbers how the result compares with the paper (per
series slowdown beside its prediction, the experiment's claims beside the paper's values);
figures draw the prediction even for a single x value, and active-thread timelines one
panel per configuration."""
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from analysis import figures, report  # noqa: E402
from analysis.aggregate import COLUMNS  # noqa: E402
from workflows.experiments import load_experiment  # noqa: E402

FACTS = {"cores": 2, "cpu_model": "Test CPU", "kernel": "6.1"}


def row(**kw):
    r = {c: "" for c in COLUMNS}
    r.update(status="ok", baseline="0", stand_in="0")
    r.update({k: str(v) for k, v in kw.items()})
    return r


FIG08 = [  # mode fm and ladm at remote 0.4 under one load, and their baselines
    row(trial="fm-r0", mode="fm", remote="0.4", profile="cpu-1", slowdown=3.0, pred_eq1=1.5, pred_eq3=2.0),
    row(trial="fm-r1", mode="fm", remote="0.4", profile="cpu-1", slowdown=4.0, pred_eq1=1.5, pred_eq3=2.0),
    row(trial="ladm-r0", mode="ladm", mode_adaptive=1, remote="0.4", profile="cpu-1", slowdown=0.8, pred_eq1=1.5, pred_eq3=2.0),
    row(trial="base-fm", baseline=1, mode="fm", remote="0.4", profile="none", slowdown=1.0, pred_eq1=1.0),
]

CLAIMS = {"ladm_vs_fm_one_load": {"claim": "LADM outperforms FM under one load", "paper_value": "up to 2.8x",
                                  "paper_platform": "Core i7", "measured_here": "FM / LADM time up to 5.00x",
                                  "verdict": "agrees"}}


def test_caption_states_configuration_at_scale_and_machine():
    text = report.caption(load_experiment("fig08-one-load"), FIG08, FACTS, "smoke", CLAIMS)
    assert "mode over fm, ladm" in text and "remote over 0.4" in text  # the smoke values, not "the scale's"
    assert "smoke scale" in text and "2 cores (Test CPU, Linux 6.1)" in text
    assert "3 trial(s)" in text


def test_caption_compares_with_the_paper_in_numbers():
    text = report.caption(load_experiment("fig08-one-load"), FIG08, FACTS, "smoke", CLAIMS)
    # per series: mean (range) beside the prediction the figure draws (auto: Eq. 3 for LADM)
    assert "mode=fm 3.50 (3.00-4.00) vs proportional 1.50" in text
    assert "mode=ladm 0.80 vs Eq. 3 2.00" in text
    # the experiment's headline claim: the paper's value and this machine's, with the verdict
    assert "paper up to 2.8x on Core i7; here FM / LADM time up to 5.00x (agrees)" in text
    # a loaded run faster than its baseline is flagged, not passed off as a result
    assert "1 trial(s) ran faster under load than their no-load baseline" in text


def test_prediction_is_drawn_for_a_single_x_value():
    fig, ax = plt.subplots()
    figures.panel(ax, FIG08, {"kind": "line", "x": "remote", "series": "mode", "y": "slowdown",
                              "prediction": "auto"}, "slowdown")
    pred = {ln.get_label(): ln for ln in ax.get_lines() if "Eq." in ln.get_label()}
    plt.close(fig)
    assert set(pred) == {"predicted (Eq. 1/2; Eq. 3 for ADM/LADM), mode=fm",
                         "predicted (Eq. 1/2; Eq. 3 for ADM/LADM), mode=ladm"}
    fm = pred["predicted (Eq. 1/2; Eq. 3 for ADM/LADM), mode=fm"]
    assert list(fm.get_ydata()) == [1.5] and fm.get_marker() == "_"  # one point, still visible
    assert list(pred["predicted (Eq. 1/2; Eq. 3 for ADM/LADM), mode=ladm"].get_ydata()) == [2.0]


def trial_json(path, detector, reactivation, rep, tid=None):
    d = {"status": "ok", "trial": {"id": tid or f"{detector}-{reactivation}-rep{rep}", "rep": rep},
         "engine": {"config": {"detector": detector, "reactivation": reactivation, "threads": 2}},
         "machine": {"cores": 2},
         "timeline": [{"t_s": 0.0, "active_threads": 2}, {"t_s": 1.0, "active_threads": 1},
                      {"t_s": 3.0, "active_threads": 2}, {"t_s": 4.0, "active_threads": 2}],
         "loads": [{"start_s": 1.0, "stop_s": 3.0, "threads": 1}]}
    path.write_text(json.dumps(d))
    return path


def test_timeline_has_one_panel_per_configuration(tmp_path):
    trials = [trial_json(tmp_path / f"{n}.json", *args) for n, args in enumerate(
        [("pi", "rap", 0), ("pi", "rap", 1), ("apte", "pr", 0)])]
    trials.append(trial_json(tmp_path / "base.json", "pi", "rap", 0, tid="base-pi-rap-rep0"))
    runs = figures.timeline_runs(trials, {"series": "detector"})
    assert [label for label, _ in runs] == ["apte-pr (rep 0)", "pi-rap (rep 0)"]  # no baseline, first rep
    fig, ax = plt.subplots()
    figures.timeline_panel(ax, *runs[1])
    ideal = [ln for ln in ax.get_lines() if ln.get_label().startswith("ideal")][0]
    plt.close(fig)
    assert list(ideal.get_ydata()) == [2, 1, 2, 2]  # cores minus the load while it runs
    out = tmp_path / "fig11.png"
    figures.draw(load_experiment("fig11-12-active-threads"), [], trials, out)
    assert out.read_bytes()[:4] == b"\x89PNG" and "apte-pr" in out.with_suffix(".svg").read_text()


def test_caption_beside_the_figure_is_the_reports_caption(tmp_path):
    """The caption the figure rule writes for `snakemake --report` (analysis.caption, claims
    measured from the experiment's own table) is the one under the figure in the lab's report."""
    import csv
    from analysis import caption, claims
    from airbase import paths
    fig08 = [row(trial="fm-r0", mode="fm", remote="0.4", profile="cpu-1", slowdown=3.0, wall_s=6.0, pred_eq1=1.5),
             row(trial="ladm-r0", mode="ladm", mode_adaptive=1, remote="0.4", profile="cpu-1", slowdown=1.2, wall_s=2.0, pred_eq3=1.8),
             row(trial="base-fm", baseline=1, mode="fm", remote="0.4", profile="none", wall_s=2.0)]
    table = tmp_path / "fig08-one-load.csv"
    with open(table, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(fig08)
    summary, html, png = tmp_path / "summary.csv", tmp_path / "report.html", tmp_path / "fig.png"
    png.write_bytes(b"\x89PNG")
    claims.main(["--claims", str(paths.CONFIGS / "claims.yaml"), "--out", str(summary), str(table)])
    report.main(["--scale", "smoke", "--summary", str(summary), "--out", str(html),
                 "--experiment", "fig08-one-load", str(png), str(table)])
    out = tmp_path / "fig08-one-load.caption.html"
    caption.main(["--experiment", "fig08-one-load", "--scale", "smoke", "--table", str(table),
                  "--claims", str(paths.CONFIGS / "claims.yaml"), "--out", str(out)])
    text = out.read_text()
    # the claim, from the table alone: one repetition judges nothing
    assert "here remote 0.4: 3 n=1 inconclusive (inconclusive)" in text
    assert "mode=fm 3.00 vs proportional 1.50" in text
    assert text.strip() in html.read_text()


def test_caption_states_load_counts_as_run_on_this_machine():
    """fig17 sweeps load_count [1, 2, cores/2, 5*cores/8, cores, cores+1, 2*cores] at the
    paper scale: on 16 cores the caption says what ran, not the expressions (equal levels
    once); quick's one level, 5*cores/8, is 10."""
    fig17 = load_experiment("fig17-onoff-loads")
    assert "load_count over 10." in report.caption(fig17, [], dict(FACTS, cores=16), "quick", {})
    text = report.caption(fig17, [], dict(FACTS, cores=16), "paper", {})
    assert "load_count over 1, 2, 8, 10, 16, 17, 32" in text
    assert "cores" not in text.split("load_count over")[1].split(".")[0]
