#!/usr/bin/env python3
"""How often an adaptive run deactivates a thread on an idle machine, per detector: a
detector's false alarms (docs/engine-benchmarks.md, "Detector false alarms").

    python3 engine/bench/idle_false_alarms.py [RUNS] [airpdes options...]

Runs LADM (2 threads, remote 0.2, end time 20000: ~2.3 s on the lab's VM) RUNS times [5]
and prints, per run, its wall time and when threads were deactivated (the engine's own
record: a deactivation shorter than a timeline sample counts too). Start a load beside it (e.g. engine/build/airload cpu) to check that
the detector still fires. Prints; asserts nothing."""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

AIRPDES = Path(__file__).resolve().parents[1] / "build" / "airpdes"


def main(argv):
    runs = int(argv[0]) if argv and argv[0].isdigit() else 5
    extra = argv[1:] if argv and argv[0].isdigit() else argv
    res = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as d:
            subprocess.run([str(AIRPDES), "--mode", "ladm", "--threads", "2", "--remote", "0.2", "--end-time", "20000",
                            "--quiet", "--json", f"{d}/o.json", "--timeline", f"{d}/t.csv", *extra], check=True)
            j = json.loads(Path(f"{d}/o.json").read_text())
            times = sorted(x for th in j["threads"] for x in th["deactivation_times_s"])
            res.append((round(j["wall_s"], 2), [round(x, 3) for x in times[:3]]))
    print(" ".join(extra) or "(defaults)", f"runs with a deactivation: {sum(1 for r in res if r[1])} of {runs}",
          "(wall s, first deactivation times s):", res)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
