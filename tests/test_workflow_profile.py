"""The workflow profile keeps Snakemake idle while a trial runs (docs/workflow.md, "The
instrument stays out of the way"). Its default once-a-second re-evaluation of ~150 ready
trial jobs (params, resources, the ILP solver in a subprocess) grew to a third of a core
during a quick run and was the lab's speed drift; the smoke runs of the test suite have too
few jobs for that to show, so the settings themselves are checked here."""
import re

import yaml

from airbase.paths import ROOT

PROFILE = ROOT / "profiles" / "default" / "config.yaml"  # loaded automatically beside the Snakefile


def test_profile_sits_where_snakemake_loads_it():
    assert (ROOT / "Snakefile").is_file() and PROFILE.is_file()


def test_one_trial_at_a_time_without_the_ilp_solver():
    prof = yaml.safe_load(PROFILE.read_text())
    assert prof["scheduler"] == "greedy"
    assert "trial_slot=1" in prof["resources"]


def test_job_rate_timer_wakes_at_most_every_10_seconds():
    prof = yaml.safe_load(PROFILE.read_text())
    m = re.fullmatch(r"(\d+)/(\d+)(ms|s|m|h)", str(prof["max-jobs-per-timespan"]))
    assert m, prof["max-jobs-per-timespan"]
    seconds = int(m[2]) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[m[3]]
    # the timer fires once per timespan; enough jobs per span that it never throttles trials
    assert seconds >= 10 and int(m[1]) >= 100


def test_pending_job_rate_timers_are_cancelled_at_the_end():
    """Snakemake's job-rate timer is a non-daemon thread that held every workflow's exit up
    to 10 s after its last job; the Snakefile's onsuccess/onerror cancel it."""
    import threading
    from workflows.snakemake_timers import cancel_rate_limit_timers
    fired = threading.Event()
    timer = threading.Timer(600, fired.set)
    timer.start()
    assert cancel_rate_limit_timers() >= 1
    timer.join(timeout=10)
    assert not timer.is_alive() and not fired.is_set()
    snakefile = (ROOT / "Snakefile").read_text()
    assert re.search(r"^onsuccess:\n    cancel_rate_limit_timers\(\)", snakefile, re.M)
    assert re.search(r"^onerror:\n    cancel_rate_limit_timers\(\)", snakefile, re.M)
