"""`airlab reproduce-again` around the runs it leaves: which finished runs it names for
pooling, and what it says when its own measurement was stopped before the end (the command's
whole workflow is tested with real smoke runs in tests/test_workflow_smoke.py)."""
import pytest

from test_pooled import _run


def test_reproduce_again_finds_the_runs_to_pool(tmp_path):
    """`make reproduce-again` names the command that pools every finished run of the scale:
    the current one and those it set aside, not an unfinished one nor another scale's."""
    from workflows.reproduce_again import finished_runs
    results = tmp_path / "results"
    for name in ("quick", "quick-20261130T0738Z", "quick-20261130T0900Z", "smoke"):
        _run(results, name, [1.0, 1.0])
    (results / "quick-20261130T1000Z" / "trials").mkdir(parents=True)  # interrupted: no summary
    assert [p.name for p in finished_runs(results, "quick")] == ["quick", "quick-20261130T0738Z",
                                                                 "quick-20261130T0900Z"]


def test_reproduce_again_after_its_own_run_was_stopped_says_how_to_finish(tmp_path):
    """A measurement stopped half-way (a hang-up, Ctrl-C) leaves results/<scale> unfinished
    and the earlier run at results/<scale>-<time>: the command says how to finish and compare,
    instead of 'run make reproduce first'."""
    from airbase.errors import UsageError
    from workflows.reproduce_again import reproduce_again
    results = tmp_path / "results"
    _run(results, "quick-20261130T0853Z", [1.0, 1.0])
    (results / "quick" / "trials").mkdir(parents=True)
    with pytest.raises(UsageError) as e:
        reproduce_again(tmp_path, ["scale=quick"])
    assert "has not finished" in str(e.value) and "make reproduce" in str(e.value)
    assert f"analysis.reproducibility {results / 'quick-20261130T0853Z'} {results / 'quick'}" in str(e.value)
    (results / "quick" / "trials").rmdir()
    (results / "quick").rmdir()
    with pytest.raises(UsageError, match="no finished run at"):
        reproduce_again(tmp_path, ["scale=quick"])
