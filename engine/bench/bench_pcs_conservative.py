#!/usr/bin/env python3
"""Benchmark for the PCS model and conservative synchronisation; prints Markdown tables.

1. PCS: committed events/s and efficiency for seq and fm at 1 and 2 threads (the same
   2,000-cell network in every row: PCS depends only on the cell count).
2. PHOLD at remote 0.05 (2 PEs x 1000 LPs, fm, 2 threads): optimistic vs conservative,
   without and with one CPU-bound competitor (a busy-loop process) — the paper's Fig. 3.

Each figure is the median of --reps interleaved rounds (every row once per round), with
min and max. The default end times make every run last 1 s or more on a 2-core VM (a
shorter run measures start-up and single scheduling decisions). Timings on a shared
machine are noisy: quote medians and say what else was running.

Usage: engine/bench/bench_pcs_conservative.py [--airpdes engine/build/airpdes] [--reps 5]
       [--pcs-end-time 10000] [--phold-end-time 15000]
"""
import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def run(airpdes, args):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "out.json")
        subprocess.run([airpdes, *map(str, args), "--quiet", "--json", out], check=True, timeout=900)
        with open(out) as f:
            return json.load(f)


@contextlib.contextmanager
def cpu_load(on):
    p = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if on else None
    try:
        yield
    finally:
        if p:
            p.kill()
            p.wait()


def measure_interleaved(airpdes, rows, reps):
    """{row label: (rates, efficiencies, walls)}: round after round, every row once per
    round (A B C A B C ...), so a machine whose speed drifts moves every row alike. A
    loaded row starts its busy loop for its own run only."""
    out = {label: ([], [], []) for label, _, _ in rows}
    for rnd in range(1, reps + 1):
        for label, args, load in rows:
            with cpu_load(load):
                j = run(airpdes, args)
            rates, effs, walls = out[label]
            rates.append(j["event_rate"])
            effs.append(j["efficiency"])
            walls.append(j["wall_s"])
            print(f"  round {rnd}, {label}: {j['event_rate'] / 1e6:.2f} M ev/s, eff {j['efficiency']:.3f}, "
                  f"{j['wall_s']:.2f} s", file=sys.stderr, flush=True)
    return out


def fmt(v, scale=1e6, digits=2):
    return (f"{statistics.median(v) / scale:.{digits}f} "
            f"({min(v) / scale:.{digits}f}-{max(v) / scale:.{digits}f})")


def print_table(title, first_columns, rows, got, reps):
    """One Markdown table: a row per configuration, its rate, efficiency and wall time."""
    print(f"## {title}, median (min-max) of {reps} interleaved rounds\n")
    print(f"| {first_columns} | committed M ev/s | efficiency | wall s |")
    print("|---" * (first_columns.count("|") + 4) + "|")
    for label, _, _ in rows:
        r, e, w = got[label]
        print(f"| {label} | {fmt(r)} | {fmt(e, 1, 3)} | {fmt(w, 1, 2)} |", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--airpdes", default=os.path.join(HERE, "..", "build", "airpdes"))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--pcs-end-time", type=float, default=10000)
    ap.add_argument("--phold-end-time", type=float, default=15000)
    a = ap.parse_args()
    if a.reps < 1 or not os.access(a.airpdes, os.X_OK):
        sys.exit(f"bench: need --reps >= 1 and an executable airpdes (got {a.airpdes}); build the engine first")

    pcs = ["--model", "pcs", "--end-time", a.pcs_end_time, "--seed", 1]
    pcs_rows = [("seq", pcs + ["--mode", "seq", "--pes", 2, "--lps-per-pe", 1000], False),
                ("fm, 1 thread", pcs + ["--mode", "fm", "--threads", 1, "--lps-per-pe", 2000], False),
                ("fm, 2 threads", pcs + ["--mode", "fm", "--threads", 2, "--lps-per-pe", 1000], False),
                ("fm, 2 threads, conservative", pcs + ["--mode", "fm", "--threads", 2, "--lps-per-pe", 1000,
                                                       "--sync", "conservative"], False)]
    phold = ["--model", "phold", "--mode", "fm", "--threads", 2, "--pes", 2, "--lps-per-pe", 1000,
             "--remote", 0.05, "--lookahead", 0.1, "--end-time", a.phold_end_time, "--seed", 1]
    phold_rows = [(f"{sync} | {'1 busy loop' if load else 'none'}", phold + ["--sync", sync], load)
                  for load in (False, True) for sync in ("optimistic", "conservative")]
    got = measure_interleaved(a.airpdes, pcs_rows + phold_rows, a.reps)

    print_table(f"PCS, 2,000 cells, 10 channels, end time {a.pcs_end_time:g}", "run", pcs_rows, got, a.reps)
    print()
    print_table(f"PHOLD remote 0.05, fm, 2 threads, 2 x 1000 LPs, end time {a.phold_end_time:g}", "sync | CPU load",
                phold_rows, got, a.reps)


if __name__ == "__main__":
    main()
