#!/usr/bin/env python3
"""Engine benchmark: prints Markdown tables of committed events per second (median of
--reps runs, with min and max) for PHOLD, and the adaptive modes under one CPU-bound
competitor beside the paper's predictions.

1. seq and fm at 1 and 2 threads, remote 0, 0.1, 0.4 (PHOLD, 1000 LPs per PE, 1 event per
   LP, mean 1.0, lookahead 0.1, EPG 0, end time --end-time).
2. 2 threads, remote 0.4, one CPU-bound competitor for the whole run: fm, dm, adm, ladm
   (pi + rap) with each mode's slowdown against its own unloaded time and against the
   proportional slowdown (Eq. 1: (threads + loads) / cores = 1.5 on 2 cores) and LADM's
   expectation (Eq. 3: 2.0, one core lost for the whole run).
3. No competitor: ladm vs fm (adaptation should cost nothing when nothing competes).

Configurations compared with each other are run interleaved (one run of each per round) and
ratios are medians of back-to-back pairs, so a shared machine's drift cancels out.

Speed is measured here, never asserted in tests. The machine may be shared: quote medians.

Usage: python3 engine/bench/run_bench.py [--reps 5] [--end-time 20000] [--quick]
"""
import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_AIRPDES = os.path.join(HERE, "..", "build", "airpdes")


def run(airpdes, args):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "out.json")
        subprocess.run([airpdes, *map(str, args), "--quiet", "--json", out], check=True, timeout=1800)
        with open(out) as f:
            return json.load(f)


@contextlib.contextmanager
def cpu_competitor(on=True):
    airload = os.path.join(os.path.dirname(os.path.abspath(DEFAULT_AIRPDES)), "airload")
    argv = [airload, "cpu"] if os.access(airload, os.X_OK) else [sys.executable, "-c", "while True: pass"]
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL) if on else None
    try:
        time.sleep(0.1 if on else 0)
        yield
    finally:
        if p:
            p.kill()
            p.wait()


def measure(airpdes, configs, reps):
    """{name: [run JSON] * reps} for {name: args}, interleaved: round r runs every
    configuration once, so a slow drift of a shared machine (another job starting, the
    host's turbo) hits every configuration alike instead of one whole row."""
    runs = {name: [] for name in configs}
    for _ in range(reps):
        for name, args in configs.items():
            j = run(airpdes, args)
            runs[name].append(j)
            print(f"  {' '.join(map(str, args))}: {j['event_rate'] / 1e6:.2f} M ev/s, "
                  f"{j['wall_s']:.2f} s, eff {j['efficiency']:.3f}", file=sys.stderr, flush=True)
    return runs


def paired_ratio(num, den, key="wall_s"):
    """Median over rounds of num[key]/den[key], each pair measured back to back (see measure)."""
    return statistics.median(a[key] / b[key] for a, b in zip(num, den))


def med(runs, key, scale=1.0, digits=2):
    v = [r[key] / scale for r in runs]
    return f"{statistics.median(v):.{digits}f} ({min(v):.{digits}f}-{max(v):.{digits}f})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--airpdes", default=DEFAULT_AIRPDES, help="engine binary [engine/build/airpdes]")
    ap.add_argument("--reps", type=int, default=5, help="runs per row; the median is shown [5]")
    ap.add_argument("--end-time", type=float, default=20000, help="PHOLD end time [20000]")
    ap.add_argument("--quick", action="store_true", help="3 reps, end time 5000: a rough look in a minute")
    a = ap.parse_args()
    if a.quick:
        a.reps, a.end_time = 3, 5000
    if a.reps < 1 or a.end_time <= 0:
        print("run_bench: --reps must be >= 1 and --end-time > 0", file=sys.stderr)
        sys.exit(2)
    if not os.access(a.airpdes, os.X_OK):
        print(f"run_bench: no engine at {a.airpdes}; build it with `make build`", file=sys.stderr)
        sys.exit(2)

    phold = ["--model", "phold", "--lps-per-pe", 1000, "--events-per-lp", 1, "--mean", 1.0,
             "--lookahead", 0.1, "--epg", 0, "--end-time", a.end_time, "--seed", 1]
    cores = os.cpu_count()
    print(f"# airpdes benchmark, {time.strftime('%Y-%m-%d %H:%M')}, {cores} cores, "
          f"median (min-max) of {a.reps}\n")
    print(f"## PHOLD, 1000 LPs/PE, end time {a.end_time:g}, no competitor\n")
    print("| mode | threads | remote | committed M ev/s | efficiency | vs seq |")
    print("|---|---|---|---|---|---|")
    for remote in (0, 0.1, 0.4):
        rows = measure(a.airpdes, {
            "seq": phold + ["--mode", "seq", "--pes", 2, "--remote", remote],
            1: phold + ["--mode", "fm", "--threads", 1, "--remote", remote],
            2: phold + ["--mode", "fm", "--threads", 2, "--remote", remote]}, a.reps)
        seq = rows["seq"]
        print(f"| seq | 1 | {remote} | {med(seq, 'event_rate', 1e6)} | 1.000 | 1.00 |", flush=True)
        for threads in (1, 2):
            fm = rows[threads]
            # rates, not wall times: fm with 1 thread simulates one PE, seq two
            ratio = paired_ratio(fm, seq, key="event_rate")
            print(f"| fm | {threads} | {remote} | {med(fm, 'event_rate', 1e6)} | "
                  f"{med(fm, 'efficiency', 1, 3)} | {ratio:.2f} |", flush=True)

    two = phold + ["--threads", 2, "--pes", 2, "--remote", 0.4]
    modes = [("fm", []), ("dm", []), ("adm", ["--detector", "pi", "--reactivation", "rap"]),
             ("ladm", ["--detector", "pi", "--reactivation", "rap"])]
    alone = measure(a.airpdes, {m: two + ["--mode", m, *x] for m, x in modes}, a.reps)
    with cpu_competitor():
        loaded = measure(a.airpdes, {m: two + ["--mode", m, *x] for m, x in modes}, a.reps)
    # Eq. 1: 2 threads + 1 load share the cores in proportion; Eq. 3: LADM gives the load
    # its core and runs the 2 PEs on the remaining cores.
    eq1 = max(1.0, (2 + 1) / cores)
    eq3 = max(1.0, 2 / max(cores - 1, 1))
    print(f"\n## 2 threads, remote 0.4, one CPU-bound competitor (Eq. 1 = {eq1:.2f}, Eq. 3 = {eq3:.2f})\n")
    print("| mode | wall s alone | wall s loaded | slowdown | vs Eq. 1 | vs Eq. 3 | eff loaded |")
    print("|---|---|---|---|---|---|---|")
    fm_loaded = statistics.median(r["wall_s"] for r in loaded["fm"])
    for m, _ in modes:
        t0 = statistics.median(r["wall_s"] for r in alone["fm"])  # slowdown vs the best unloaded mode
        t1 = statistics.median(r["wall_s"] for r in loaded[m])
        s = t1 / t0
        print(f"| {m} | {med(alone[m], 'wall_s')} | {med(loaded[m], 'wall_s')} | {s:.2f} | "
              f"{s / eq1:.2f} | {s / eq3:.2f} | {med(loaded[m], 'efficiency', 1, 3)} |", flush=True)
    ladm_loaded = statistics.median(r["wall_s"] for r in loaded["ladm"])
    ladm_alone = statistics.median(r["wall_s"] for r in alone["ladm"])
    fm_alone = statistics.median(r["wall_s"] for r in alone["fm"])
    print(f"\nUnder the competitor LADM is {fm_loaded / ladm_loaded:.2f}x faster than unpinned FM; "
          f"with no competitor LADM takes {ladm_alone / fm_alone:.3f}x FM's time "
          f"(median of back-to-back pairs: {paired_ratio(alone['ladm'], alone['fm']):.3f}x).")
    print("(slowdown = loaded wall time / unloaded FM wall time; Eq. 1 and Eq. 3 as in the paper)")


if __name__ == "__main__":
    main()
