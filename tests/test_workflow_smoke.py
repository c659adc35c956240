"""The smoke target end to end, as a user runs it: real trials (engine + loads), tables,
figures, the summary of the paper's claims and the report, in a scratch directory
(snakemake -d), with the repository's workflow profile. Also: trials never overlap in time,
a finished run has nothing left to do, an interrupted run resumes, Snakemake's own report
carries the lab's captions, and the SLURM profile plans the same DAG."""
import csv
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from airbase import proctags
from airbase import paths
from workflows import machine
from workflows.experiments import all_trials, load_config
from trial_helpers import WORKFLOW_TIMEOUT_S, run_workflow

SNAKEMAKE = [sys.executable, "-m", "snakemake"]
TABLE_COLUMNS = {"experiment", "figure", "trial", "status", "reason", "profile", "setup", "mode",
                 "remote", "n_loads", "wall_s", "baseline_wall_s", "slowdown", "pred_eq1", "pred_eq3"}


def snakemake(workdir, *args, timeout=WORKFLOW_TIMEOUT_S):
    return run_workflow([*SNAKEMAKE, "-d", str(workdir), *args], timeout, cwd=paths.ROOT)


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    work = tmp_path_factory.mktemp("smoke")
    r = snakemake(work, "--cores", "2", "smoke")
    (work / "snakemake.out").write_text(r.stdout + r.stderr)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    return work, r.stdout + r.stderr


@pytest.fixture(scope="module")
def plan():
    return all_trials(load_config(), "smoke")


def test_prints_estimate_and_report_location(smoke_run, plan):
    _, out = smoke_run
    assert "airlab: scale" in out and "estimate" in out
    # and at the end, where the trials' time went (analysis/time_spent.py)
    n = sum(len(trials) for _, trials in plan.values())
    assert re.search(rf"airlab: the trials took [0-9.]+ min over {n} trials: engine runs kept [0-9.]+ \(", out), out[-1500:]
    # the plain command picks up the workflow profile (keep-going, one trial at a time)
    assert "workflow specific profile profiles/default" in out
    assert "trial_slot=Resource(\"trial_slot\", 1)" in out
    assert "smoke report at results/smoke/report.html" in out


def test_every_trial_recorded(smoke_run, plan):
    work, _ = smoke_run
    for exp, (_, trials) in plan.items():
        for t in trials:
            rec = json.loads((work / f"results/smoke/trials/{exp}/{t['id']}.json").read_text())
            assert rec["trial"]["labels"]["experiment"] == exp
            assert rec["status"] in ("ok", "failed", "unavailable")


def test_snakemake_was_stopped_during_every_engine_run(smoke_run, plan):
    """pause_workflow (on by default): the trial rule passes Snakemake's PID ($PPID of its
    shell) and the runner stops it while the engine runs (workflows/workflow_pause.py)."""
    work, _ = smoke_run
    recs = [json.loads((work / f"results/smoke/trials/{exp}/{t['id']}.json").read_text())
            for exp, (_, trials) in plan.items() for t in trials]
    ok = [r for r in recs if r["status"] == "ok"]
    assert ok and all(r["noise"]["workflow_paused"] is True for r in ok), [r["noise"] for r in ok]


def test_smoke_trials_wait_for_near_cpus_at_most_the_scales_maximum(smoke_run, plan):
    """wait_near (on by default) with the scale's wait_near_max_s: smoke's 0.3 s trials wait
    at most 3 s for near CPUs (the runner's default, for quick and paper, is 15 s)."""
    work, _ = smoke_run
    assert load_config()["wait_near_max_s"]["smoke"] == 3
    recs = [json.loads((work / f"results/smoke/trials/{exp}/{t['id']}.json").read_text())
            for exp, (_, trials) in plan.items() for t in trials]
    waits = [r["machine_speed"]["wait"] for r in recs if r["status"] == "ok"]
    assert waits and all(w["max_s"] == 3 and w["waited_s"] < 3 + 1 for w in waits), waits


def test_trials_never_overlap(smoke_run):
    """One trial at a time, although --cores 2 lets Snakemake run two jobs at once."""
    work, _ = smoke_run
    spans = sorted((rec["trial"]["started_unix"], rec["trial"]["finished_unix"], p.name)
                   for p in (work / "results/smoke/trials").rglob("*.json")
                   for rec in [json.loads(p.read_text())] if "started_unix" in rec["trial"])
    assert len(spans) >= 10
    for (s0, e0, a), (s1, e1, b) in zip(spans, spans[1:]):
        assert s1 >= e0, f"{a} ({s0:.2f}-{e0:.2f}) overlaps {b} ({s1:.2f}-{e1:.2f})"


def test_tables_have_columns_and_rows(smoke_run, plan):
    work, _ = smoke_run
    for exp, (_, trials) in plan.items():
        with open(work / f"results/smoke/tables/{exp}.csv") as f:
            rows = list(csv.DictReader(f))
        assert TABLE_COLUMNS <= set(rows[0]), exp
        assert sorted(r["trial"] for r in rows) == sorted(t["id"] for t in trials)
        ok = [r for r in rows if r["status"] == "ok"]
        assert ok, f"{exp}: no trial succeeded"
        for r in ok:
            if r["slowdown"]:
                assert float(r["slowdown"]) > 0 and float(r["pred_eq1"]) >= 1.0
            if r["profile"] == "none":  # a baseline is its own reference
                assert float(r["pred_eq1"]) == 1.0


def test_figures_are_images(smoke_run, plan):
    work, _ = smoke_run
    for exp in plan:
        png = (work / f"results/smoke/figures/{exp}.png").read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000, exp
        svg = (work / f"results/smoke/figures/{exp}.svg").read_text()
        assert "<svg" in svg and plan[exp][0]["figure"].split("/")[0] in svg, exp


def test_summary_lists_claims_with_measured_values(smoke_run, plan):
    work, _ = smoke_run
    with open(work / "results/smoke/tables/summary.csv") as f:
        rows = {r["id"]: r for r in csv.DictReader(f)}
    from analysis.claims import VERDICTS, load_claims
    assert set(rows) == {c["id"] for c in load_claims()["claims"]}
    assert all(r["verdict"] in VERDICTS and r["reason"] for r in rows.values())  # never a blank verdict
    measured = {c for e, _ in plan.values() for c in e.get("claims", [])}
    for cid in measured:
        assert rows[cid]["measured_here"], f"claim {cid} was measured but has no value"


def test_report_has_every_figure_and_the_summary(smoke_run, plan):
    work, _ = smoke_run
    html = (work / "results/smoke/report.html").read_text()
    assert html.count("data:image/png;base64,") >= len(plan)
    for exp, _ in plan.values():
        assert exp["figure"] in html and exp["title"] in html
    assert "fm_one_load" in html or "far exceeds proportional slowdown" in html
    # where the time went, from the trials' own records: every trial, its engine runs in it
    n = sum(len(trials) for _, trials in plan.values())
    section = html.split("<h2 id=time>Where the time went</h2>", 1)[1]
    assert f"over {n} trials" in section, section[:400]
    engine_min = float(re.search(r"<td>engine runs kept</td><td>([0-9.]+)</td>", section).group(1))
    assert engine_min > 0, section[:400]
    for exp in plan:  # and each experiment's own minutes
        assert f"<tr><td>{exp}</td><td>{len(plan[exp][1])}</td>" in section, (exp, section[-1500:])


def test_a_workflow_past_its_time_limit_is_stopped_with_everything_it_started():
    """The limit on these tests' workflows stops the whole process group, not the first
    process only: a job it started (here a shell's two sleeps) does not run on into the
    tests after it."""
    tag = uuid.uuid4().hex
    with pytest.raises(AssertionError, match="did not finish within 1 s"):
        run_workflow(["sh", "-c", "sleep 100 & sleep 100"], 1, env={**os.environ, "AIRLAB_TEST_RUN": tag})
    deadline = time.monotonic() + 10
    while proctags.find("AIRLAB_TEST_RUN", tag) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert proctags.find("AIRLAB_TEST_RUN", tag) == []


def test_rerun_has_nothing_to_do(smoke_run):
    work, _ = smoke_run
    r = snakemake(work, "-n", "smoke", timeout=120)
    assert r.returncode == 0
    assert "rule trial" not in r.stdout, r.stdout[-2000:]


def scratch_experiment(figure, purpose, lps_per_pe, end_time, profile):
    """A one-trial smoke experiment of our own, written by a test."""
    return textwrap.dedent(f"""\
        figure: {figure}
        title: a scratch experiment for the {purpose} test
        paper_finding: none
        smoke: true
        engine: {{model: phold, threads: 1, lps_per_pe: {lps_per_pe}, end_time: {end_time}, mode: fm}}
        sweep: {{profile: [{profile}]}}
        plot: {{kind: line, x: profile, series: profile, y: wall_s}}
        """)


EDITABLE = scratch_experiment("Fig. 98", "rerun", 50, 50, "none")


def test_edited_experiment_reruns_exactly_its_trials(tmp_path):
    """Editing an experiment's engine options (here its end time) replans exactly that
    experiment's trials on the next run, although their ids did not change; an untouched
    experiment is not rerun. (Snakemake 9 compares input checksums: the trial's spec file
    is rewritten only when its options change.) Its first run also shows that a finished
    workflow does not wait for Snakemake's job-rate timer to exit."""
    work = tmp_path / "work"
    exps = {name: tmp_path / f"{name}.yaml" for name in ("edited", "untouched")}
    for p in exps.values():
        p.write_text(EDITABLE)
    only = "experiments=[" + ",".join(str(p) for p in exps.values()) + "]"
    targets = [f"results/smoke/trials/{name}/profnone-rep0.json" for name in exps]
    # With a 10-minute job-rate timer this run ends in seconds only if the Snakefile cancels
    # the last timer when the work is done (workflows/snakemake_timers.py): else it outlives the limit.
    r = snakemake(work, "--cores", "2", "--max-jobs-per-timespan", "1000/600s", "--config", only, "--", *targets,
                  timeout=240)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    r = snakemake(work, "-n", "--config", only, "--", *targets, timeout=120)
    assert r.returncode == 0 and "rule trial:" not in r.stdout, (r.stdout + r.stderr)[-3000:]

    exps["edited"].write_text(EDITABLE.replace("end_time: 50", "end_time: 60"))
    r = snakemake(work, "-n", "--config", only, "--", *targets, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    planned = [ln.split(":", 1)[1].strip() for ln in r.stdout.splitlines() if ln.strip().startswith("output:")]
    assert [p for p in planned if "/trials/" in p] == [targets[0]], r.stdout[-3000:]


# Each trial's engine runs some 3 s; the loaded one beside one CPU-bound load.
INTERRUPTIBLE = scratch_experiment("Fig. 97", "interruption", 1000, 40000, "cpu-1")


def _owner(pid):
    """The AIRLAB_RUNNER tag (the trial runner's PID) of a process, or None."""
    try:
        env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return None
    return next((int(e.split(b"=", 1)[1]) for e in env if e.startswith(b"AIRLAB_RUNNER=")), None)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGHUP], ids=lambda s: s.name)
def test_interrupted_run_resumes(tmp_path, sig):
    """Ctrl-C, or a hang-up (SIGINT or SIGHUP to snakemake's process group, as a terminal
    sends them when a key is pressed or the session drops) while a trial runs beside its
    load: nothing of the run survives, no trial JSON is half-written and the interrupt is not
    recorded as a failed trial; the next run (its lock gone) reruns the interrupted trial and
    completes the set without rerunning what had finished."""
    work, exp = tmp_path / "work", tmp_path / "interrupt.yaml"
    exp.write_text(INTERRUPTIBLE)
    only = f"experiments=[{exp}]"
    trials = work / "results/smoke/trials/interrupt"
    targets = [f"results/smoke/trials/interrupt/{t}.json" for t in ("base-profnone-rep0", "profcpu1-rep0")]
    tag = uuid.uuid4().hex  # everything this run starts inherits it
    # A 10-minute job-rate timer: the interrupted workflow ends within the limit below only if
    # the Snakefile's onerror cancels it (workflows/snakemake_timers.py).
    proc = subprocess.Popen([*SNAKEMAKE, "-d", str(work), "--cores", "2", "--max-jobs-per-timespan", "1000/600s",
                             "--config", only, "--", *targets],
                            cwd=paths.ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True, env={**os.environ, "AIRLAB_TEST_RUN": tag})
    try:
        runner, deadline = None, time.monotonic() + 120
        while runner is None and proc.poll() is None and time.monotonic() < deadline:
            mine = set(proctags.find("AIRLAB_TEST_RUN", tag))
            engine = mine & set(proctags.find("AIRLAB_TRIAL"))
            if engine and mine & set(proctags.find("AIRLAB_LOAD_ID")):  # the loaded trial runs
                runner = _owner(engine.pop())
            # Not more often: this test is an ancestor of the runner, and its CPU counts as
            # the workflow's (before the runner skipped the settle for a stopped Snakemake,
            # polling every 0.1 s held the trial 3.9 s)
            time.sleep(0.5)
        assert runner, f"the loaded trial never started: {proc.communicate()[0][-2000:] if proc.poll() else ''}"
        time.sleep(0.5)
        interrupted_at = time.time()
        os.killpg(proc.pid, sig)
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.communicate(timeout=60)
    assert proc.returncode != 0 and "Terminating processes on user request" in out, out[-2000:]

    # (a) nothing of the run is left: not the runner's engine or loads, nor anything else
    deadline = time.monotonic() + 10
    while (proctags.find("AIRLAB_TEST_RUN", tag) or proctags.find("AIRLAB_RUNNER", str(runner))) \
            and time.monotonic() < deadline:
        time.sleep(0.2)
    left = set(proctags.find("AIRLAB_TEST_RUN", tag)) | set(proctags.find("AIRLAB_RUNNER", str(runner)))
    for pid in left:  # do not leave them to the next test
        os.kill(pid, signal.SIGKILL)
    assert not left, f"left running after the interrupt: {sorted(left)}"

    # (b) no half-written JSON, and the interrupt is no failed record: the trial is just not done
    assert not [p for p in (work / "results").rglob("*") if ".tmp" in p.name]
    assert not (trials / "profcpu1-rep0.json").exists()
    finished = {p.name: p.stat().st_mtime_ns for p in trials.glob("*.json")}
    for name in finished:
        assert json.loads((trials / name).read_text())["status"] == "ok", name
    log = (work / "results/smoke/logs/interrupt/profcpu1-rep0.log").read_text()
    assert f"interrupted by {sig.name}" in log and "no record written" in log, log

    # (c) the next run (rerun-incomplete, from the workflow profile) completes the set
    r = snakemake(work, "--cores", "2", "--config", only, "--", *targets)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    assert targets[1] in r.stderr  # the interrupted trial was rerun
    rerun = json.loads((trials / "profcpu1-rep0.json").read_text())
    assert rerun["status"] == "ok" and rerun["trial"]["started_unix"] > interrupted_at
    assert json.loads((trials / "base-profnone-rep0.json").read_text())["status"] == "ok"
    assert {n: (trials / n).stat().st_mtime_ns for n in finished} == finished  # not rerun


def test_slurm_profile_plans_the_same_trials(smoke_run, plan):
    """The SLURM executor plugin loads and plans every trial as a cluster job (dry run)."""
    work, _ = smoke_run
    r = snakemake(work, "-n", "--profile", "profiles/slurm", "--resources", "trial_slot=50",
                  "--forceall", "smoke", timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    n = sum(len(ts) for _, ts in plan.values())
    assert r.stdout.count("rule trial:") == n


def lab_caption(lab_report, exp):
    """The caption under an experiment's figure in the lab's own report."""
    return re.search(rf"<div class=fig id={exp}>.*?<p class=caption>(.*?)</p>", lab_report, re.S).group(1)


def test_snakemake_report_has_the_figures(smoke_run, plan):
    """`snakemake --report` (Snakemake's own browsable report) carries every flagged figure,
    each with the lab report's caption: the machine's cores and the values measured here."""
    work, _ = smoke_run
    out = work / "snakemake-report.html"
    r = snakemake(work, "smoke", "--report", str(out), timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    text = out.read_text(errors="replace")
    lab = (work / "results/smoke/report.html").read_text()
    for exp in plan:
        assert f"{exp}.png" in text
        assert lab_caption(lab, exp) in text, exp
    fig08 = lab_caption(lab, "fig08-one-load")
    assert f"on {machine.facts()['cores']} cores (" in fig08
    assert re.search(r"by series: mode=fm \d+\.\d\d", fig08), fig08  # a measured slowdown


def test_snakemake_report_over_the_lab_reports_copy_loses_nothing(smoke_run):
    """The issue's `snakemake --report results/report.html` replaces the copy of the lab's
    report that reproduce_figures leaves there: it says so, the lab's page stays at
    results/<scale>/report.html, and Snakemake's report carries it."""
    work, _ = smoke_run
    lab = work / "results/smoke/report.html"
    before = lab.read_bytes()
    shutil.copy(lab, work / "results/report.html")  # as reproduce_figures leaves it
    r = snakemake(work, "smoke", "--report", "results/report.html", timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "the lab's own report stays at results/<scale>/report.html" in r.stderr
    assert lab.read_bytes() == before
    text = (work / "results/report.html").read_text(errors="replace")
    assert "airlab report" in text and "own self-contained report at scale smoke" in text


ORDERED = textwrap.dedent("""\
    figure: Fig. 96
    title: a scratch experiment for the repetition order test
    paper_finding: none
    engine: {model: phold, threads: 2, lps_per_pe: 100}
    sweep: {mode: [fm, ladm], profile: [cpu-1]}
    reps: {smoke: 3, quick: 3, paper: 3}
    plot: {kind: line, x: mode, series: profile, y: slowdown}
    """)


def test_a_swept_engine_option_with_underscores_plans_runnable_trials(tmp_path):
    """Sweeping an engine option named with underscores (pi_backoff_ms) gives trial ids the
    trial rule's wildcard matches: the dry run schedules every trial (it once stopped with a
    MissingInputException for ids such as modeladm-pi_b64-...)."""
    exp = tmp_path / "figswept.yaml"
    exp.write_text(ORDERED.replace("sweep: {mode: [fm, ladm], profile: [cpu-1]}",
                                   "sweep: {mode: [ladm], pi_backoff_ms: [0, 64], profile: [cpu-1]}"))
    r = snakemake(tmp_path / "work", "-n", "-p", "--cores", "2", "--config", f"experiments=[{exp}]", "scale=quick",
                  "--", "results/quick/tables/figswept.csv", timeout=120)
    out = r.stdout + r.stderr
    assert r.returncode == 0 and "MissingInputException" not in out, out[-3000:]
    jobs = re.findall(r"output: results/quick/trials/figswept/(\S+)\.json", r.stdout)
    assert len(jobs) == 12 and "modeladm-piba64-profcpu1-rep0" in jobs, jobs
    assert "--pi-backoff-ms 64" in out


@pytest.fixture(scope="module")
def ordered_plan(tmp_path_factory):
    """The dry run of ORDERED at the quick scale, with the shell commands (-p): read by the
    two tests below (one Snakemake start-up, ~3 s, for both)."""
    tmp = tmp_path_factory.mktemp("ordered")
    exp = tmp / "figorder.yaml"
    exp.write_text(ORDERED)
    r = snakemake(tmp / "work", "-n", "-p", "--cores", "2", "--config", f"experiments=[{exp}]", "scale=quick",
                  "--", "results/quick/tables/figorder.csv", timeout=120)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    return r


def test_repetitions_run_block_by_block(ordered_plan):
    """Every trial of repetition r (loaded runs and baselines of every configuration) comes
    before any of repetition r+1: each trial of block r+1 takes block r's records as
    (ancient) inputs, and the dry run lists the jobs in that order. Calibrated trials carry
    their target and the calibration folder; the dry run prints the estimate."""
    r = ordered_plan
    out = r.stdout + r.stderr
    assert "airlab: scale quick: 1 experiments, 12 trials (estimate:" in out
    jobs = [ln.split(":", 1)[1].strip() for ln in r.stdout.splitlines() if ln.strip().startswith("output:")]
    reps = [int(re.search(r"-rep(\d+)\.json$", j).group(1)) for j in jobs if "/trials/" in j]
    assert len(reps) == 12 and reps == sorted(reps), reps
    target = load_config()["baseline_s"]["quick"]  # configs/config.yaml's, as the plan reads it
    assert f"--target-s {target:g}" in out and "--calibration-dir results/quick/calibration" in out
    blocks = re.findall(r"input: (.*)\n\s*output: results/quick/trials/figorder/(\S+)-rep(\d)\.json", r.stdout)
    assert len(blocks) == 12
    for inputs, _, rep in blocks:
        earlier = set(re.findall(r"-rep(\d)\.json", inputs))
        assert earlier == ({str(int(rep) - 1)} if rep != "0" else set()), (rep, inputs)


@pytest.mark.parametrize("order", ["spread", "by_experiment"])
def test_repetition_blocks_run_in_the_configured_order(tmp_path, order):
    """Trial priorities order the repetition blocks (Snakemake runs the ready job of highest
    priority): spread (the default) alternates two experiments of 2 repetitions block by
    block, by_experiment runs each experiment's blocks back to back. Either way it is an
    ordering, not a dependency: a target of the second experiment alone plans only its own
    trials, and each table runs as soon as its trials are done."""
    exps = {name: tmp_path / f"{name}.yaml" for name in ("first", "second")}
    for p in exps.values():
        p.write_text(EDITABLE.replace("plot:", "reps: {smoke: 2, quick: 2, paper: 2}\nplot:"))
    work = tmp_path / "work"
    only = "experiments=[" + ",".join(str(p) for p in exps.values()) + "]"
    chosen = [] if order == "spread" else [f"repetition_order={order}"]
    r = snakemake(work, "-n", "--config", only, "scale=smoke", *chosen, "--",
                  *(f"results/smoke/tables/{n}.csv" for n in exps), timeout=120)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    jobs = re.findall(r"rule trial:\n(?:\s+\S.*\n)*?\s+output: results/smoke/trials/(\w+)/\S+-rep(\d)\.json\n"
                      r"(?:\s+\S.*\n)*?\s+priority: (\d+)", r.stdout)
    assert len(jobs) == 4, r.stdout[-3000:]
    by_priority = [(e, int(rep)) for e, rep, _ in sorted(jobs, key=lambda j: -int(j[2]))]
    expected = {"spread": [("first", 0), ("second", 0), ("first", 1), ("second", 1)],
                "by_experiment": [("first", 0), ("first", 1), ("second", 0), ("second", 1)]}[order]
    assert by_priority == expected, jobs
    tables = re.findall(r"rule table:\n(?:\s+\S.*\n)*?\s+priority: (\d+)", r.stdout)
    assert len(tables) == 2 and min(int(p) for p in tables) > max(int(j[2]) for j in jobs), r.stdout[-3000:]
    r = snakemake(work, "-n", "--config", only, "scale=smoke", *chosen, "--",
                  "results/smoke/tables/second.csv", timeout=120)
    assert r.returncode == 0 and "/trials/first/" not in r.stdout, (r.stdout + r.stderr)[-3000:]


@pytest.mark.parametrize("key, allowed", [("repetition_order", "spread"), ("configuration_order", "shuffled")])
def test_unknown_order_stops_the_workflow_with_the_allowed_ones(tmp_path, key, allowed):
    r = snakemake(tmp_path / "work", "-n", "--config", "scale=smoke", f"{key}=random", "--", "smoke",
                  timeout=120)
    assert r.returncode != 0 and key in (r.stdout + r.stderr) and allowed in (r.stdout + r.stderr), \
        (r.stdout + r.stderr)[-2000:]


def test_baseline_runs_just_before_its_loaded_trials(ordered_plan, tmp_path):
    """Within a repetition block each no-load baseline has the priority just above the
    loaded trials taken against it (workflows/experiments.py, block_order): a loaded trial
    is then seconds, not most of a block, from the other side of its slowdown."""
    r = ordered_plan
    jobs = re.findall(r"rule trial:\n(?:\s+\S.*\n)*?\s+output: results/quick/trials/figorder/(\S+)-rep0\.json\n"
                      r"(?:\s+\S.*\n)*?\s+priority: (\d+)", r.stdout)
    by_priority = [tid for tid, p in sorted(jobs, key=lambda j: -int(j[1]))]
    assert by_priority in (["base-modefm-profnone", "modefm-profcpu1", "base-modeladm-profnone", "modeladm-profcpu1"],
                           ["base-modeladm-profnone", "modeladm-profcpu1", "base-modefm-profnone", "modefm-profcpu1"]), jobs
    # the configurations in the block's shuffled order (config configuration_order), as planned
    from workflows.experiments import block_order, expand, load_experiment
    (tmp_path / "figorder.yaml").write_text(ORDERED)
    trials = expand(load_experiment(tmp_path / "figorder.yaml"), "quick", load_config(), cores=2)
    places = block_order(trials, "shuffled", "figorder")
    planned = sorted((t for t in places if t.endswith("-rep0")), key=places.get)
    assert by_priority == [t.removesuffix("-rep0") for t in planned], (by_priority, places)


def test_reproduce_again_measures_beside_the_finished_run_and_compares(tmp_path):
    """`airlab reproduce-again` (make reproduce-again): refused with no finished run; after
    one, it moves the run aside (results/smoke-<time>), measures again and writes the two
    runs' comparison; a workflow that fails before making anything puts the earlier run back."""
    work = tmp_path / "work"
    exp = paths.ROOT / "configs" / "experiments" / "fig11-12-active-threads.yaml"  # 2 smoke trials and baselines
    only = ["scale=smoke", f"experiments=[{exp}]"]
    again = [sys.executable, "-m", "workflows.cli", "reproduce-again", "--directory", str(work), "--config", *only]
    r = run_workflow(again, 120, cwd=paths.ROOT)
    assert r.returncode == 2 and "no finished run" in r.stderr and "make reproduce" in r.stderr, r.stderr
    r = snakemake(work, "--cores", "2", "--config", *only, "--", "reproduce_figures")
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    results = work / "results"
    trial = sorted((results / "smoke" / "trials").glob("*/*.json"))[0].relative_to(results)
    first = (results / trial).read_text()

    r = run_workflow(again, WORKFLOW_TIMEOUT_S, cwd=paths.ROOT)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    [earlier] = [p for p in results.iterdir() if p.name.startswith("smoke-")]
    assert (earlier / trial.relative_to("smoke")).read_text() == first  # moved, untouched
    assert (results / trial).read_text() != first  # measured again
    assert (results / "report.html").is_file() and (results / "tables/summary.csv").is_file()
    compared = results / "smoke" / "reproducibility.md"
    assert "### Verdicts" in compared.read_text() and earlier.name in compared.read_text()
    assert "Same verdict in both runs" in r.stdout and str(compared) in r.stdout, r.stdout[-2000:]

    second = (results / trial).read_text()
    broken = [sys.executable, "-m", "workflows.cli", "reproduce-again", "--directory", str(work),
              "--config", "scale=smoke", f"experiments=[{tmp_path / 'missing.yaml'}]"]
    r = run_workflow(broken, 120, cwd=paths.ROOT)
    assert r.returncode not in (0, 2) and "is back at" in r.stdout, (r.stdout + r.stderr)[-2000:]
    assert (results / trial).read_text() == second
    assert [p.name for p in results.iterdir() if p.name.startswith("smoke-")] == [earlier.name]
