#!/usr/bin/env python3
"""Two engine builds' detectors side by side: deactivations, the first one's time and the
run's wall time, with no load, beside a brief load and beside a CPU-bound load, in
interleaved rounds (A B, then B A, ...) so that drift shifts both.

    python3 engine/bench/detector_ab.py OLD_AIRPDES NEW_AIRPDES [ROUNDS] [airpdes options...]

ROUNDS [4]; the options [--detector rq --reactivation rap] are added to every run.
Conditions (2 threads, remote 0.2):
  idle          LADM pinned, end time 20000 (~2 s on the lab's VM): false alarms
  burst         the same beside a process busy 15 ms every 100 ms: still false alarms
  cpu           ADM unpinned, end time 8000, beside one CPU-bound process: detection
Each load starts 0.3 s before its run and is killed after it. Prints; asserts nothing.
Run it on a quiet machine (docs/engine-benchmarks.md, "RQ: the windows alias")."""
import contextlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BUSY = "while True: pass"
BURST = """import time
while True:
    end = time.monotonic() + 0.015
    while time.monotonic() < end: pass
    time.sleep(0.085)"""
CONDITIONS = {
    "idle": (["--mode", "ladm", "--pin", "--end-time", "20000"], None),
    "burst": (["--mode", "ladm", "--pin", "--end-time", "20000"], BURST),
    "cpu": (["--mode", "adm", "--end-time", "8000"], BUSY),
}


@contextlib.contextmanager
def load(code):
    if code is None:
        yield
        return
    p = subprocess.Popen([sys.executable, "-c", code])
    try:
        time.sleep(0.3)  # past the interpreter's start-up
        yield
    finally:
        p.kill()
        p.wait()


def one_run(airpdes, args):
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([airpdes, "--threads", "2", "--remote", "0.2", "--quiet", "--json", f"{d}/o.json", *args],
                       check=True)
        j = json.loads(Path(f"{d}/o.json").read_text())
    times = sorted(x for th in j["threads"] for x in th["deactivation_times_s"])
    return j["wall_s"], sum(th["deactivations"] for th in j["threads"]), times[0] if times else None


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    builds = {"old": argv[0], "new": argv[1]}
    rest = argv[2:]
    rounds = int(rest.pop(0)) if rest and rest[0].isdigit() else 4
    extra = rest or ["--detector", "rq", "--reactivation", "rap"]
    res = {(c, b): [] for c in CONDITIONS for b in builds}
    for r in range(rounds):
        for cond, (args, code) in CONDITIONS.items():
            for b in (("old", "new") if r % 2 == 0 else ("new", "old")):
                with load(code):
                    res[cond, b].append(one_run(builds[b], [*args, *extra]))
        print(f"round {r + 1} of {rounds} done", file=sys.stderr)
    for (cond, b), runs in res.items():
        walls = [w for w, _, _ in runs]
        firsts = [f for _, _, f in runs if f is not None]
        first = f"{min(firsts):.3f}-{max(firsts):.3f} s" if firsts else "-"
        print(f"{cond:6} {b}: deactivations {[n for _, n, _ in runs]}, first at {first}, "
              f"run {min(walls):.2f}-{max(walls):.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
