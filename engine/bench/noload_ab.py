#!/usr/bin/env python3
"""No-load speed of this engine against another airpdes binary (e.g. an older commit built
in a worktree): issue 16's "no-load speed unchanged within 3%".

    git worktree add /tmp/old caff99b && cmake -S /tmp/old/engine -B /tmp/old/build && \\
        make -C /tmp/old/build airpdes
    python3 engine/bench/noload_ab.py /tmp/old/build/airpdes [ROUNDS] [--pin] [--adaptive]

Runs fm (2 threads) at remote 0, 0.1, 0.4 and seq at remote 0.1 (PHOLD, 2 PEs x 1000 LPs,
end time 20000: ~2 s per fm run on the lab's VM), the two binaries back to back in
alternating order, and prints per configuration the median (min-max) of new / old committed
events per second over ROUNDS pairs [8]; --pin runs every parallel run with --pin (as the workflow's
experiments do); --adaptive runs adm and ladm (default detector and reactivation) at remote
0.1 and 0.4 instead, for a change to the adaptive modes' loop. Prints; asserts nothing."""
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

NEW = Path(__file__).resolve().parents[1] / "build" / "airpdes"
CONFIGS = [("fm", 0), ("fm", 0.1), ("fm", 0.4), ("seq", 0.1)]


PIN = []


def rate(binary, mode, remote):
    with tempfile.TemporaryDirectory() as d:
        argv = [str(binary), "--mode", mode, "--pes", "2", "--lps-per-pe", "1000", "--remote", str(remote),
                "--end-time", "20000", "--quiet", "--json", f"{d}/o.json"]
        if mode != "seq":
            argv += ["--threads", "2", *PIN]
        subprocess.run(argv, check=True)
        j = json.loads(Path(f"{d}/o.json").read_text())
        return j["committed_events"] / j["wall_s"]


def main(argv):
    if "--adaptive" in argv:
        CONFIGS[:] = [("adm", 0.1), ("adm", 0.4), ("ladm", 0.1), ("ladm", 0.4)]
        argv = [a for a in argv if a != "--adaptive"]
    if "--pin" in argv:
        PIN.append("--pin")
        argv = [a for a in argv if a != "--pin"]
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    if not argv or not Path(argv[0]).is_file() or (len(argv) > 1 and not argv[1].isdigit()):
        print("noload_ab: give the other airpdes binary and optionally a number of rounds "
              "(--help shows how to build one)", file=sys.stderr)
        return 2
    old, rounds = argv[0], int(argv[1]) if len(argv) > 1 else 8
    ratios = {c: [] for c in CONFIGS}
    for r in range(rounds):
        for c in CONFIGS:
            if r % 2 == 0:
                new_rate, old_rate = rate(NEW, *c), rate(old, *c)
            else:
                old_rate, new_rate = rate(old, *c), rate(NEW, *c)
            ratios[c].append(new_rate / old_rate)
        print(f"round {r + 1}/{rounds}: " + ", ".join(f"{m} {x}: {ratios[(m, x)][-1]:.3f}" for m, x in CONFIGS),
              flush=True)
    for (m, x), v in ratios.items():
        print(f"{m} remote {x}: new/old {statistics.median(v):.3f} ({min(v):.3f}-{max(v):.3f}, {len(v)} pairs)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
