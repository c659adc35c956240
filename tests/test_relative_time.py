"""A figure relative to a reference mode of the same block (analysis/relative_time.py), on
synthetic rows: drift between blocks cancels, the reference is the line at 1 and not a
point, a block without its reference run gives no value, and bad declarations are refused."""
import pytest

from analysis import figures, precision, relative_time
from workflows.experiments import ExperimentError, load_experiment

PLOT = {"kind": "line", "x": "remote", "series": "mode", "y": "wall_s", "relative_to": {"mode": "fm"}}


def row(mode, remote, rep, wall, status="ok"):
    return {"status": status, "baseline": "0", "mode": mode, "remote": str(remote), "rep": str(rep),
            "wall_s": str(wall), "profile": "none", "n_loads": "0", "setup": "cfs"}


def drifting_rows():
    """Three blocks; the third ran 1.4x slower in every mode; LADM 3% and ADM 20% over FM."""
    rows = []
    for rep, speed in ((0, 1.0), (1, 1.0), (2, 1.4)):
        for remote, base in ((0.05, 2.5), (0.4, 3.0)):
            rows += [row("fm", remote, rep, base * speed), row("ladm", remote, rep, base * 1.03 * speed),
                     row("adm", remote, rep, base * 1.2 * speed)]
    return rows


def test_drift_between_blocks_cancels_and_the_reference_is_no_point():
    rows = drifting_rows()
    rel = precision.relative_half_widths(rows, PLOT)
    assert {(s, x) for s, x, *_ in rel} == {("ladm", "0.05"), ("ladm", "0.4"), ("adm", "0.05"), ("adm", "0.4")}
    for s, x, m, h, n in rel:
        assert m == pytest.approx(1.03 if s == "ladm" else 1.2) and h == pytest.approx(0, abs=1e-9) and n == 3
    absolute = precision.median_half_width(rows, {k: v for k, v in PLOT.items() if k != "relative_to"})[0]
    assert absolute > 0.3  # the same rows in seconds: the drift is all in the intervals
    assert precision.median_half_width(rows, PLOT) == (pytest.approx(0, abs=1e-9), 4)


def test_a_block_without_its_reference_run_has_no_relative_value():
    rows = drifting_rows()
    rows[3] = {**rows[3], "status": "set aside"}  # block 0's FM at remote 0.4
    by = {(r["mode"], r["remote"], r["rep"]): r[relative_time.column(PLOT)] for r in relative_time.with_relative(rows, PLOT)}
    assert by[("ladm", "0.4", "0")] == "" and by[("ladm", "0.05", "0")] == pytest.approx(1.03)
    assert not any(mode == "fm" for mode, _, _ in by)
    n = {(s, x): n for s, x, _, _, n in precision.relative_half_widths(rows, PLOT)}
    assert n[("ladm", "0.4")] == 2 and n[("ladm", "0.05")] == 3


def test_the_figure_draws_the_relative_panel_and_the_absolute_one(tmp_path):
    exp = {**load_experiment("fig07-no-load")}
    assert exp["plot"]["relative_to"] == {"mode": "fm"} and exp["plot"]["y2"] == "wall_s"
    out = tmp_path / "fig07.png"
    figures.draw(exp, drifting_rows(), [], out)
    svg = out.with_suffix(".svg").read_text()
    assert "FM's, same block" in svg and "mode=fm (the reference)" in svg and "run time (s)" in svg


@pytest.mark.parametrize("relative_to,says", [
    ("{detector: pi}", "is not a level of a sweep variable"),
    ("{mode: dm}", "is not a level of a sweep variable"),
    ("{remote: 0.4}", "must be the plot's series"),
])
def test_a_reference_that_cannot_be_in_every_block_is_refused(tmp_path, relative_to, says):
    p = tmp_path / "exp.yaml"
    p.write_text(f"""figure: Fig. 96
title: relative_to check
paper_finding: none
engine: {{model: phold, threads: 2, lps_per_pe: 100}}
sweep: {{mode: [fm, ladm], remote: [0.05, 0.4]}}
plot: {{kind: line, x: remote, series: mode, y: wall_s, relative_to: {relative_to}}}
""")
    with pytest.raises(ExperimentError, match=says):
        load_experiment(p)
