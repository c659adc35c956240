"""`airlab reproduce-again`: measure the paper's figures a second time and compare the two runs.

A second `make reproduce` in the same clone does nothing (every output is there), so the
check a reproduction lab is judged by, two consecutive runs on one machine giving the same
verdicts, needed a second clone. This command moves the finished run aside (results/<scale>
to results/<scale>-<time its summary was written>, with its calibration: the new run
calibrates again, as a fresh clone does), runs `snakemake --cores all reproduce_figures`,
and writes `analysis.reproducibility`'s comparison of the two runs into the new run's
folder (reproducibility.md), printing its first line; from the third finished run on it
also names the command that judges every claim over all of them (analysis/pooled.py). If
the workflow fails before it made anything, the earlier run is moved back; otherwise both
stay and the message says where each is."""
import argparse
import filecmp
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from airbase import paths
from airbase.atomic import write_atomic
from airbase.errors import UsageError
from airbase.stop_signals import STOP_SIGNALS

# The copies reproduce_figures makes at the top of results/: while they exist Snakemake has
# nothing to do, even with results/<scale> gone.
TOP_COPIES = ("report.html", "tables/summary.csv")


def _scale(config_args):
    """The scale of the run: a `scale=` among the --config overrides, else configs/config.yaml's."""
    for arg in config_args:
        if arg.startswith("scale="):
            return arg.split("=", 1)[1]
    from workflows.experiments import load_config
    return load_config()["scale"]


def _set_aside(results, scale):
    """Move results/<scale> to results/<scale>-<UTC time of its summary>; returns the new path."""
    run = results / scale
    stamp = time.strftime("%Y%m%dT%H%MZ", time.gmtime((run / "tables" / "summary.csv").stat().st_mtime))
    target, n = results / f"{scale}-{stamp}", 1
    while target.exists():
        n += 1
        target = results / f"{scale}-{stamp}-{n}"
    run.rename(target)
    for rel in TOP_COPIES:
        copy = results / rel
        if not copy.exists():
            continue
        own = target / rel
        if own.exists() and filecmp.cmp(copy, own, shallow=False):
            copy.unlink()  # the same file is in the run set aside
        else:  # e.g. Snakemake's own report written over it: kept beside the run
            shutil.move(str(copy), str(target / f"top-level-{Path(rel).name}"))
    return target


def reproduce_again(directory, config_args):
    results = Path(directory) / "results"
    scale = _scale(config_args)
    if not (results / scale / "tables" / "summary.csv").is_file():
        before = finished_runs(results, scale)
        if (results / scale).is_dir() and before:  # this command's own run, stopped before its end
            raise UsageError(f"{results / scale} is a run that has not finished (stopped before its end?), and the "
                             f"finished one before it is at {before[-1]}: finish this one with "
                             f"`{_finish(config_args)}` (it goes on where it stopped), then compare the two: python -m "
                             f"analysis.reproducibility {before[-1]} {results / scale}")
        raise UsageError(f"no finished run at {results / scale} (its tables/summary.csv is missing): "
                         f"run `make reproduce` first")
    earlier = _set_aside(results, scale)
    print(f"airlab: the earlier run is now at {earlier}; measuring again into {results / scale}", flush=True)
    cmd = [sys.executable, "-m", "snakemake", "-d", str(directory), "--cores", "all"]
    if config_args:
        cmd += ["--config", *config_args]
    cmd += ["--", "reproduce_figures"]
    rc, stopped_by = run_workflow(cmd)
    if rc != 0:
        what = f"was stopped ({stopped_by})" if stopped_by else f"failed (exit {rc})"
        new = results / scale
        # The workflow writes its trials' specs when it reads the Snakefile: a folder holding
        # nothing else has made nothing.
        if new.exists() and {p.name for p in new.iterdir()} <= {"specs"}:
            shutil.rmtree(new)
        if not new.exists():
            earlier.rename(new)  # nothing made: as if the command had not run
            print(f"airlab: the workflow {what} before it made anything; the earlier run is back at {new}")
        else:
            print(f"airlab: the workflow {what}; the earlier run stays at {earlier}, this one's trials so far "
                  f"are in {new}: finish it with `{_finish(config_args)}` (it goes on where it stopped), then "
                  f"compare the two: python -m analysis.reproducibility {earlier} {new}")
        return rc
    # The analysis is a layer above the workflow: run as a program, as the workflow's rules do.
    cmp = subprocess.run([sys.executable, "-m", "analysis.reproducibility", str(earlier), str(results / scale)],
                         cwd=paths.ROOT, capture_output=True, text=True)
    if cmp.returncode != 0:
        print(f"airlab: both runs finished (the earlier at {earlier}), but comparing them failed: "
              f"{cmp.stderr.strip()[-300:]}")
        return cmp.returncode
    text = cmp.stdout.rstrip("\n")
    compared = results / scale / "reproducibility.md"
    write_atomic(compared, f"# {earlier.name} (A) against {scale} (B)\n\n{text}\n")
    first = next((ln for ln in text.splitlines() if ln.startswith("Same verdict")), "")
    print(f"airlab: {first.split('. ')[0].rstrip('.')}; the two runs compared: {compared}")
    runs = finished_runs(results, scale)
    if len(runs) >= 3:
        print(f"airlab: {len(runs)} finished {scale} runs in {results}; every claim judged over all of them "
              f"(each run's mean one value): python -m analysis.pooled {' '.join(map(str, runs))}")
    return 0


def _finish(config_args):
    """The command that finishes a run of this scale where it stopped."""
    if not config_args:
        return "make reproduce"
    return f"snakemake --cores all --config {' '.join(config_args)} -- reproduce_figures"


def run_workflow(cmd):
    """(exit status, name of the stop signal that ended it or None) of Snakemake run as `cmd`.
    Ctrl-C at a terminal reaches Snakemake too (one process group), which cancels its jobs
    (each trial runner stops what it started) and removes its lock: we wait for that instead
    of killing it half-way (subprocess.call's SIGKILL after 0.25 s). SIGTERM and a hang-up
    may reach this command alone (a `kill`, a batch system, a dropped session): they are
    passed on as SIGINT, the signal Snakemake answers by cancelling its jobs (its SIGTERM
    waits for the running trial to finish)."""
    # A command started in the background by a shell inherits SIGINT ignored, and Python then
    # leaves it ignored: Snakemake must answer the SIGINT we pass on.
    proc = subprocess.Popen(cmd, cwd=paths.ROOT, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    got = []

    def stop(signum, frame):
        got.append(signal.Signals(signum).name)
        if signum != signal.SIGINT and proc.poll() is None:
            proc.send_signal(signal.SIGINT)
    old = {s: signal.signal(s, stop) for s in STOP_SIGNALS}
    try:
        rc = proc.wait()  # retried after each handler (PEP 475)
    finally:
        for s, h in old.items():
            signal.signal(s, h)
    return (130 if got and rc != 0 else rc), (got[0] if got else None)


def finished_runs(results, scale):
    """The finished runs of a scale in results/: <scale> and every <scale>-<time> set aside."""
    found = [results / scale] + sorted(results.glob(f"{scale}-*"))
    return [r for r in found if (r / "tables" / "summary.csv").is_file()]


HELP = __doc__.split("\n\n", 1)[1] + """

examples:
  make reproduce-again                       the same, after the set-up
  airlab reproduce-again                     the configured scale (configs/config.yaml)
  airlab reproduce-again --config scale=smoke

exit status: 0 when both runs finished and were compared, 2 when there is no finished run
to measure again, else the workflow's own."""


def register(sub):
    p = sub.add_parser("reproduce-again", help="measure the figures again and compare with the finished run",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", nargs="+", default=[], metavar="KEY=VALUE",
                   help="Snakemake --config overrides, e.g. scale=smoke")
    p.add_argument("--directory", default=str(paths.ROOT),
                   help="the workflow's working directory, holding results/ [the repository]")
    p.set_defaults(func=lambda a: reproduce_again(a.directory, a.config))
