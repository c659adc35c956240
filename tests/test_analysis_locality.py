"""Fig. 9 draws cache misses where perf counted them (cache-misses, else LLC-load-misses),
as the paper measured, and the engine's locality figure where the machine has no hardware
counters (this VM); title, axis label and caption say which one is shown and why. Both
paths from hand-made trial JSON and tables."""
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from analysis import aggregate, claims, figures, locality, report  # noqa: E402
from analysis.aggregate import COLUMNS  # noqa: E402
from workflows.experiments import load_experiment  # noqa: E402

FACTS = {"cores": 2, "cpu_model": "Test CPU", "kernel": "6.1"}
NOT_SUPPORTED = {"value": None, "unit": None, "status": "not supported",
                 "reason": "the CPU or hypervisor does not provide this counter"}


def counter(value):
    return {"value": value, "unit": None, "status": "ok", "reason": None}


def trial(tid, mode, profile, perf, share=0.1):
    return {"status": "ok", "trial": {"id": tid, "rep": 0, "profile": profile, "setup": "cfs", "labels": {}},
            "engine": {"config": {"mode": mode, "model": "phold", "threads": 2, "remote": 0.2},
                       "wall_s": 1.0, "committed_events": 1000, "efficiency": 1.0, "event_rate": 1000.0,
                       "rollbacks": 0},
            "locality": {"non_primary_iteration_share": share, "source": "engine"},
            "perf": perf, "loads": [], "profile": {"processes": []}, "machine": {"cores": 2}}


def table(tmp_path, perfs):
    """fig09's table from trials whose perf records are perfs[(mode, profile)]."""
    paths = []
    for (mode, profile), perf in perfs.items():
        p = tmp_path / f"mode{mode}-prof{profile}.json"
        p.write_text(json.dumps(trial(p.stem, mode, profile, perf, share=0.3 if mode == "adm" else 0.05)))
        paths.append(str(p))
    out = tmp_path / "fig09-locality.csv"
    aggregate.main(["--experiment", "fig09-locality", "--figure", "Fig. 9", "--out", str(out), "--", *paths])
    return figures.read_rows(out)


def test_trial_row_takes_the_first_counted_cache_counter():
    both = {"cache-misses": counter(5e6), "LLC-load-misses": counter(1e6)}
    llc_only = {"cache-misses": NOT_SUPPORTED, "LLC-load-misses": counter(2e6)}
    none = {"cache-misses": NOT_SUPPORTED, "LLC-load-misses": NOT_SUPPORTED}
    assert locality.from_perf(both) == (5e6, "cache-misses", "")
    assert locality.from_perf(llc_only) == (2e6, "LLC-load-misses", "")
    assert locality.from_perf(none) == (None, "", "hardware cache counters not supported here (perf: <not supported>)")
    no_perf = {"cache-misses": {"value": None, "status": "unavailable", "reason": "perf is not installed"}}
    assert locality.from_perf(no_perf)[2] == "no perf counters here (perf is not installed)"
    row = aggregate.row_of(trial("t", "adm", "cpu-1", llc_only), "fig09-locality", "Fig. 9")
    assert (row["cache_misses"], row["cache_counter"]) == (2e6, "LLC-load-misses")


def test_with_counters_the_figure_shows_cache_misses(tmp_path):
    misses = {("adm", "none"): 4e6, ("adm", "cpu-1"): 9e6, ("ladm", "none"): 3e6, ("ladm", "cpu-1"): 5e6}
    rows = table(tmp_path, {k: {"cache-misses": counter(v), "LLC-load-misses": NOT_SUPPORTED}
                            for k, v in misses.items()})
    shown = locality.choose(rows)
    assert shown["y"] == "cache_misses" and shown["label"] == "cache misses (perf cache-misses, whole run)"
    fig, ax = plt.subplots()
    figures.panel(ax, rows, load_experiment("fig09-locality")["plot"], shown["y"], shown["label"])
    heights = sorted(p.get_height() for p in ax.patches)
    ylabel = ax.get_ylabel()
    plt.close(fig)
    assert heights == sorted(misses.values())  # the counts, not the engine's shares
    assert ylabel == "cache misses (perf cache-misses, whole run)"

    out = tmp_path / "fig09.png"
    figures.draw(load_experiment("fig09-locality"), rows, [], out)
    svg = out.with_suffix(".svg").read_text()
    assert "shown: cache misses (perf cache-misses)" in svg and "whole run" in svg
    assert "not cache misses" not in svg

    text = report.caption(load_experiment("fig09-locality"), rows, FACTS, "smoke", {})
    assert "Shown: cache misses (perf cache-misses); the machine&#x27;s hardware cache counters work here." in text
    assert "mode=adm, profile=cpu-1 9e+06" in text and "mode=ladm, profile=cpu-1 5e+06" in text
    judged = {r["id"]: r for r in claims.summarise(claims.load_claims(), [tmp_path / "fig09-locality.csv"])}
    assert judged["cache_misses"]["value"] == "1.8"  # ADM / LADM cache misses, judged on the counts
    assert judged["cache_misses"]["verdict"] == "inconclusive"  # from one repetition


def test_without_counters_the_figure_shows_the_engines_figure_and_says_why(tmp_path):
    rows = table(tmp_path, {(m, p): {"cache-misses": NOT_SUPPORTED, "LLC-load-misses": NOT_SUPPORTED}
                            for m in ("adm", "ladm") for p in ("none", "cpu-1")})
    shown = locality.choose(rows)
    assert shown["y"] == "locality" and shown["label"] == "PE iterations off the primary thread"
    assert shown["why"] == "hardware cache counters not supported here (perf: <not supported>)"

    out = tmp_path / "fig09.png"
    figures.draw(load_experiment("fig09-locality"), rows, [], out)
    svg = out.with_suffix(".svg").read_text()
    assert "shown: the engine's locality figure (PE iterations off the primary thread)" in svg
    assert "not cache misses: hardware cache counters not supported here (perf: &lt;not supported&gt;)" in svg

    text = report.caption(load_experiment("fig09-locality"), rows, FACTS, "smoke", {})
    assert ("Shown: the engine&#x27;s locality figure (PE iterations off the primary thread), not cache "
            "misses: hardware cache counters not supported here (perf: &lt;not supported&gt;).") in text
    assert "mode=adm, profile=cpu-1 0.3" in text and "mode=ladm, profile=cpu-1 0.05" in text
    judged = {r["id"]: r for r in claims.summarise(claims.load_claims(), [tmp_path / "fig09-locality.csv"])}
    assert judged["cache_misses"]["verdict"] == "not measurable here"
    assert judged["cache_misses"]["reason"].startswith("hardware cache counters not supported here (perf: <not supported>); ")


def test_empty_table_has_no_locality_sentence():
    rows = [{c: "" for c in COLUMNS} | {"status": "failed", "baseline": "0", "reason": "boom"}]
    assert "Shown:" not in report.caption(load_experiment("fig09-locality"), rows, FACTS, "smoke", {})
