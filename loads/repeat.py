"""Run a program over and over until stopped, then print one JSON line with how many runs
completed per second: the progress figure of loads that are finite programs (x264 encoding
a video, vips processing an image, a PARSEC benchmark).

    python -m loads.repeat --unit frames/s --units-per-run 60 -- x264 ... input.y4m

SIGTERM, SIGINT or SIGHUP ends it: the run in progress is stopped and the figures are printed.
The stopped run counts only through --partial-regex (group 1 of its last match in the
program's output = its progress, times --partial-scale = units it completed; e.g. x264's
"16/60 frames", vips's "36% complete" with scale 0.01 run), otherwise
not at all: a short trial must not read as a starved load because its run did not end.
A run that fails (a non-zero exit code, a signal such as SIGABRT) is never counted: it ends
the loop with its exit code, the reason and its last stderr line in the figures, and the
wrapper exits 1. `program_cpu_s` is the CPU time (user + system) of every run of the
program, the stopped one included; --chdir runs it in another folder (a PARSEC load's own
run folder)."""
import argparse
import ctypes
import json
import os
import re
import resource
import signal
import subprocess
import sys
import time

from airbase.stop_signals import STOP_SIGNALS


def _die_with_parent():
    """If this wrapper is killed outright, its program goes too (PR_SET_PDEATHSIG)."""
    ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--unit", default="runs/s")
    ap.add_argument("--units-per-run", type=float, default=1.0)
    ap.add_argument("--partial-regex", help="progress of a stopped run, from its output")
    ap.add_argument("--partial-scale", type=float, default=1.0, help="units per progress step")
    ap.add_argument("--chdir", help="folder to run the program in [the current one]")
    ap.add_argument("argv", nargs="+")
    a = ap.parse_args()
    stopping = False
    child = None

    def stop(signum, frame):
        nonlocal stopping
        stopping = True
        if child and child.poll() is None:
            child.terminate()

    for s in STOP_SIGNALS:
        signal.signal(s, stop)
    t0 = time.monotonic()
    runs, run_times, exit_code, partial, error = 0, [], 0, 0.0, None
    while not stopping:
        start = time.monotonic()
        try:
            child = subprocess.Popen(a.argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=a.chdir,
                                     preexec_fn=_die_with_parent)
        except OSError as e:  # no such program, not executable: as a failed run
            exit_code, error = 127, f"could not start {a.argv[0]}: {e.strerror}"
            break
        out, err = child.communicate()
        if stopping:
            partial = _partial_units(a.partial_regex, out + b"\n" + err) * a.partial_scale
            break
        if child.returncode != 0:
            exit_code = child.returncode
            text = err.decode(errors="replace")
            sys.stderr.write(text[-2000:])
            last = (text.strip().splitlines() or out.decode(errors="replace").strip().splitlines() or [""])[-1]
            how = (f"killed by {signal.Signals(-exit_code).name}" if exit_code < 0 and -exit_code in
                   signal.valid_signals() else f"exit code {exit_code}")
            error = f"run {runs + 1} of {os.path.basename(a.argv[0])} failed ({how})" + (f": {last[:300]}" if last else "")
            break
        runs += 1
        run_times.append(time.monotonic() - start)
    wall = time.monotonic() - t0
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # every run this wrapper waited for
    figures = {
        # A load whose program failed has no throughput: it did not run for the whole time.
        "throughput": None if exit_code else (runs * a.units_per_run + partial) / wall if wall > 0 else 0.0,
        "unit": a.unit, "runs": runs, "partial_units": partial, "wall_s": wall,
        "mean_run_s": sum(run_times) / len(run_times) if run_times else None,
        "program_exit_code": exit_code, "program_cpu_s": usage.ru_utime + usage.ru_stime,
        "failed_runs": 0 if exit_code == 0 else 1,
    }
    if error:
        figures["error"] = error
    print(json.dumps(figures), flush=True)
    return 0 if exit_code == 0 else 1


def _partial_units(regex, err):
    if not regex:
        return 0.0
    found = re.findall(regex, err.decode(errors="replace"))
    try:
        return float(found[-1]) if found else 0.0
    except ValueError:
        return 0.0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
