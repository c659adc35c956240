#!/usr/bin/env python3
"""What a far vCPU placement costs the engine: no-load runs (FM unless --modes says) back to back, each classed by
its own barrier hand-offs (workflows/placement.py's far_share: near under 0.1, far at 0.5
and above, mixed between), and per remote level the median speed of each class.

    python3 engine/bench/far_penalty.py [--remote 0,0.2] [--modes fm] [--rounds 12] [--other BINARY]

A VM whose host moves its two vCPUs apart (docs/workflow.md, "Far vCPU placement") runs
near and far phases of seconds to a minute; runs of ~2.5 s (each level's end time is set by
an FM pilot run, the same work in every mode) mostly fall in one. Per run it reads the event rate and the handlers' own rate
(events per second of process_batch, the threads' busy_s): a penalty that shows in the
handlers' rate is the engine's work running slower, not its threads waiting for each other.
With --other, that binary runs beside this build's in alternating order (ABBA) and each is
reported per class, so an engine change is judged within a placement, never across it
(docs/engine-benchmarks.md). On a host that never places its vCPUs far, every run is near
and the penalty is not measurable: it says so. Prints; asserts nothing. Exit 2 on bad
arguments."""
import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

LAB = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(LAB))
from workflows import placement  # noqa: E402

ENGINE = LAB / "engine" / "build" / "airpdes"
TARGET_S = 2.5
PILOT_END = 3000.0
NEAR_BELOW, FAR_FROM = 0.1, 0.5


def run(binary, mode, remote, end_time):
    with tempfile.TemporaryDirectory() as d:
        argv = [str(binary), "--model", "phold", "--mode", mode, "--threads", "2", "--pes", "2", "--pin",
                "--lps-per-pe", "1000", "--remote", str(remote), "--end-time", str(end_time),
                "--quiet", "--json", f"{d}/o.json"]
        subprocess.run(argv, check=True)
        j = json.loads(Path(f"{d}/o.json").read_text())
    busy = sum(t["busy_s"] for t in j["threads"])
    return {"rate": j["event_rate"], "handler_rate": sum(t["events"] for t in j["threads"]) / busy if busy else None,
            "far": placement.far_share(j["barrier_handoff"]), "wall": j["wall_s"]}


def placement_class(far):
    if far is None:
        return None
    return "near" if far < NEAR_BELOW else "far" if far >= FAR_FROM else "mixed"


def summary(runs):
    """'n, median rate (min-max), handler rate' of a class's runs, M events/s."""
    rates = sorted(r["rate"] / 1e6 for r in runs)
    handlers = [r["handler_rate"] / 1e6 for r in runs if r["handler_rate"]]
    text = f"{len(runs):2d} runs, {statistics.median(rates):6.2f} M ev/s ({rates[0]:.2f}-{rates[-1]:.2f})"
    return text + (f", handlers {statistics.median(handlers):.2f} per thread-second" if handlers else "")


def levels(text):
    try:
        out = [float(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of numbers: {text!r}")
    if not out or any(not 0 <= x <= 1 for x in out):
        raise argparse.ArgumentTypeError(f"remote levels lie in [0, 1]: {text!r}")
    return out


def main(argv):
    ap = argparse.ArgumentParser(prog="far_penalty", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--remote", type=levels, default=[0.0, 0.2], help="PHOLD remote levels, comma-separated [0,0.2]")
    ap.add_argument("--modes", type=lambda t: t.split(","), default=["fm"],
                    help="parallel modes, comma-separated [fm]; adm moves PE state between the threads every iteration")
    ap.add_argument("--rounds", type=int, default=12, help="runs per mode, level and binary [12]")
    ap.add_argument("--other", type=Path, help="another airpdes binary to compare within each placement")
    a = ap.parse_args(argv)
    binaries = [ENGINE] + ([a.other] if a.other else [])
    for b in binaries:
        if not b.is_file():
            ap.exit(2, f"far_penalty: no engine binary at {b} (build it: cmake --build engine/build)\n")
    if a.rounds < 1:
        ap.exit(2, "far_penalty: --rounds must be at least 1\n")
    known = {m["name"] for m in json.loads(subprocess.run([str(ENGINE), "--describe"], capture_output=True,
                                                             text=True, check=True).stdout)["modes"] if not m["sequential"]}
    if not a.modes or any(m not in known for m in a.modes):
        ap.exit(2, f"far_penalty: --modes takes parallel modes of this engine: {', '.join(sorted(known))}\n")
    cases = [(m, x) for m in a.modes for x in a.remote]
    # one end time per level from an FM pilot: every mode simulates the same work
    ends = {x: round(PILOT_END * TARGET_S / run(ENGINE, "fm", x, PILOT_END)["wall"]) for x in a.remote}
    print(f"end times for ~{TARGET_S} s FM runs: " + ", ".join(f"remote {x}: {e}" for x, e in ends.items()), flush=True)
    runs = {(b, c): [] for b in binaries for c in cases}
    for r in range(a.rounds):
        for c in cases:
            for b in (binaries if r % 2 == 0 else binaries[::-1]):
                runs[(b, c)].append(run(b, c[0], c[1], ends[c[1]]))
        last = [runs[(b, c)][-1]["far"] for b in binaries for c in cases]
        print(f"round {r + 1}/{a.rounds}: far shares " + ", ".join("-" if f is None else f"{f:.2f}" for f in last),
              flush=True)
    for c in cases:
        for b in binaries:
            name = "this build" if b == ENGINE else str(b)
            by = {k: [r for r in runs[(b, c)] if placement_class(r["far"]) == k] for k in ("near", "mixed", "far")}
            print(f"{c[0]} at remote {c[1]}, {name}:")
            for k, rs in by.items():
                if rs:
                    print(f"  {k:5s} {summary(rs)}")
            if by["near"] and by["far"]:
                near = statistics.median(r["rate"] for r in by["near"])
                far = statistics.median(r["rate"] for r in by["far"])
                print(f"  far penalty (near / far median rate): {near / far:.2f}x")
            else:
                print("  far penalty: not measurable (no near or no far runs in this sample)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
