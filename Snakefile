# airlab: re-measure the AIR paper on this machine.
#
#   snakemake --cores all reproduce_figures     every experiment at config's scale + report
#   snakemake --cores all smoke                 a tiny version of four experiments (minutes)
#   snakemake --cores all fig08_one_load        one experiment (target = file stem, '-' -> '_')
#   snakemake --cores all bench                 the engine benchmarks (printed, not asserted)
#   snakemake -n reproduce_figures              what would run (and the time estimate)
#
# Configuration: configs/config.yaml (scale, repetitions), configs/experiments/*.yaml (one
# per paper figure), configs/profiles/ (loads), configs/setups/ (scheduling). Results go to
# results/<scale>/; reproduce_figures also copies the report to results/report.html and the
# summary to results/tables/summary.csv. The workflow profile (profiles/default/) is loaded
# automatically: keep-going, rerun-incomplete, and one trial at a time.
import json
import os
import shlex
import signal
import sys

from snakemake.utils import min_version, validate

from analysis.claims import ClaimError, check_claims
from workflows.estimate import HOSTS, estimate_minutes, top_up_minutes
from workflows.experiments import (ExperimentError, all_trials, block_order, block_ranks, previous_block, profile_label,
                                  runner_args, top_up_half_width, two_looks)
from workflows.snakemake_timers import cancel_rate_limit_timers

min_version("9.0")
report: "workflows/report/workflow.rst"   # `snakemake --report results/snakemake-report.html`


def snakemake_report_path(argv):
    """The file `--report` writes Snakemake's report to ('report.html' when not named)."""
    for i, arg in enumerate(argv):
        if arg.startswith("--report="):
            return arg.split("=", 1)[1]
        if arg == "--report":
            nxt = argv[i + 1] if i + 1 < len(argv) else ""
            return nxt if nxt and not nxt.startswith("-") else "report.html"
    return None


# The issue's `snakemake --report results/report.html` writes Snakemake's report over the
# copy of the lab's report that reproduce_figures leaves there. Nothing is lost (the lab's
# page stays at results/<scale>/report.html and is inside Snakemake's report), but say so.
_sm_report = snakemake_report_path(sys.argv)
if _sm_report and os.path.abspath(_sm_report) == os.path.abspath("results/report.html"):
    print("airlab: results/report.html becomes Snakemake's report (the same figures and captions); "
          "the lab's own report stays at results/<scale>/report.html and is in it under 'airlab report'. "
          "To keep both at the top: --report results/snakemake-report.html", file=sys.stderr)

# A hang-up (the terminal closed, the ssh session dropped) ends the workflow as Ctrl-C does:
# Snakemake cancels its jobs (each trial runner stops what it started) and removes its lock.
# Left to SIGHUP's default, Snakemake died at once and its lock stopped the next run.
try:
    signal.signal(signal.SIGHUP, signal.default_int_handler)
except ValueError:  # the Snakefile read outside the main thread (Snakemake's API in a thread)
    pass

# Paths relative to the Snakefile, so `snakemake -d SOMEWHERE` (tests, a cluster's scratch
# directory) writes results there and still finds the lab's configuration.
LAB = workflow.basedir
configfile: os.path.join(LAB, "configs/config.yaml")
try:
    validate(config, os.path.join(LAB, "configs/schemas/config.schema.json"))
except WorkflowError as e:  # Snakemake's message names the field but not the file
    raise WorkflowError(f"{os.path.join(LAB, 'configs/config.yaml')} (with any --config overrides): {e}")
config["claims"] = os.path.join(LAB, config["claims"])

PY = sys.executable                       # Snakemake's interpreter: the lab's venv
AIRLAB = [PY, "-m", "workflows.cli"]      # the `airlab` command, whatever PATH says
SCALE = config["scale"]

try:
    PLAN = {SCALE: all_trials(config, SCALE)}
    if SCALE != "smoke":
        PLAN["smoke"] = all_trials(config, "smoke")
    check_claims(config["claims"])  # a claim naming a missing table, column or configuration stops the run here
except (ExperimentError, ClaimError) as e:
    raise WorkflowError(str(e))

# (scale, experiment, trial id) -> trial
TRIALS = {(s, e, t["id"]): t for s, exps in PLAN.items() for e, (_, ts) in exps.items() for t in ts}


def write_spec(path, text):
    """Write a trial's spec only when it changed: its mtime then tells Snakemake that the
    trial's engine options, profile, load count or setup were edited (Snakemake 9 lists
    changed params with --list-changes but does not rerun such jobs), and exactly those
    trials rerun."""
    try:
        if open(path).read() == text:
            return
    except OSError:
        pass
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


for (s, e, tid), t in TRIALS.items():
    write_spec(f"results/{s}/specs/{e}/{tid}.args", shlex.join([*runner_args(t), "--", *t["argv"]]) + "\n")


def target_name(exp):
    return exp.replace("-", "_")


# On a cluster (profiles/slurm) only trials become jobs; the light analysis runs here.
localrules: reproduce_figures, smoke, bench, top_up, table, figure, summary, report


include: "workflows/trials.smk"
include: "workflows/analysis.smk"


def print_estimate():
    for s, plan in PLAN.items():
        n = sum(1 for _, ts in plan.values() for t in ts if not t["top_up"])
        extra, extra_min = top_up_minutes(plan)
        why = ("a claim is undecided or a figure less precise than asked"
               if any(top_up_half_width(e, s) is not None for e, _ in plan.values()) else "a claim is undecided")
        more = f"; up to {extra} more ({extra_min:.0f} min) where {why} after the first repetitions" if extra else ""
        (first, host), *others = HOSTS
        range_ = ", ".join(f"{estimate_minutes(plan, h):.0f} on {name}" for name, h in others)
        print(f"airlab: scale {s}: {len(plan)} experiments, {n} trials (estimate: "
              f"{estimate_minutes(plan, host):.0f} min on 2 cores from scratch on {first}; {range_}; "
              f"trials run one at a time{more})", file=sys.stderr)


def is_dry_run(argv):
    """-n, --dry-run, --dryrun, or -n among short flags (-np)."""
    return any(a in ("--dry-run", "--dryrun") or (a.startswith("-") and not a.startswith("--")
                                                  and a[1:].isalpha() and "n" in a[1:]) for a in argv)


# Snakemake runs onstart only for a real run (and knows it is a dry run only after the
# Snakefile is read): a dry run (-n) prints the estimate here.
if is_dry_run(sys.argv):
    print_estimate()


onstart:
    print_estimate()


# The run is over: Python's exit need not wait for Snakemake's last job-rate timer
# (workflows/snakemake_timers.py).
onsuccess:
    cancel_rate_limit_timers()


onerror:
    cancel_rate_limit_timers()


rule reproduce_figures:
    """Every experiment at the configured scale, the summary and the report."""
    input:
        report=f"results/{SCALE}/report.html",
        summary=f"results/{SCALE}/tables/summary.csv",
    output:
        report="results/report.html",
        summary="results/tables/summary.csv",
    shell:
        "cp {input.report} {output.report} && cp {input.summary} {output.summary} && "
        "echo 'airlab: report at {output.report} (summary: {output.summary})' && "
        "{PY:q} -m analysis.time_spent --prefix 'airlab: the trials took ' results/{SCALE}"


rule smoke:
    """A tiny version of four experiments, end to end, with the report."""
    input:
        "results/smoke/report.html",
        "results/smoke/tables/summary.csv",
    shell:
        "echo 'airlab: smoke report at {input[0]}' && "
        "{PY:q} -m analysis.time_spent --prefix 'airlab: the trials took ' results/smoke"


rule bench:
    """The engine benchmarks (engine/bench/): printed figures, medians of repeated runs."""
    threads: workflow.cores
    resources:
        trial_slot=1,  # a benchmark is timing-sensitive too: never beside a trial
    shell:
        "{PY:q} {LAB}/engine/bench/run_bench.py && {PY:q} {LAB}/engine/bench/bench_pcs_conservative.py"
