#!/usr/bin/env python3
"""What PI's probe back-off (--pi-backoff-ms) costs and gains (docs/engine-benchmarks.md).

    python3 engine/bench/pi_backoff_latency.py [ROUNDS]

LADM-PI-RAP, 2 threads pinned, PHOLD 2 x 1000 LPs, remote 0.05, end time 28700 (~2.9 s
alone on the lab's VM). A CPU-bound `airload cpu` arrives at 1.0 s, after an idle second
("idle") or after a second of `airload onoff --ctp-us 10000` ("onoff"). Each round runs
both scenarios with back-off 0 and 64, the two in alternating order [ROUNDS: 6].

Prints one JSON line per run, then per scenario and back-off the median (min-max) detection
latency (the first deactivation after the load arrived), the probes (slow ones) over the
run, the wall time spent inside probes (the CPU they handed away) and the run's wall.
Needs the machine to itself; asserts nothing."""
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BUILD = Path(__file__).resolve().parents[1] / "build"
ARRIVE_S = 1.0
BACKOFFS = (0, 64)


def run(scenario, backoff):
    with tempfile.TemporaryDirectory() as d:
        out = f"{d}/engine.json"
        argv = [str(BUILD / "airpdes"), "--mode", "ladm", "--threads", "2", "--pin", "--detector", "pi",
                "--reactivation", "rap", "--lps-per-pe", "1000", "--remote", "0.05", "--end-time", "28700",
                "--pi-backoff-ms", str(backoff), "--json", out, "--quiet"]
        t0 = time.monotonic()
        engine = subprocess.Popen(argv)
        loads = [subprocess.Popen([str(BUILD / "airload"), "cpu", "--start-delay", str(ARRIVE_S), "--duration", "60"],
                                  stdout=subprocess.DEVNULL)]
        if scenario == "onoff":
            loads.append(subprocess.Popen([str(BUILD / "airload"), "onoff", "--ctp-us", "10000",
                                           "--duration", str(ARRIVE_S)], stdout=subprocess.DEVNULL))
        try:
            if engine.wait() != 0:
                sys.exit(f"pi_backoff_latency: airpdes exited {engine.returncode}")
        finally:
            for p in loads:
                p.terminate()
                p.wait()
        j = json.loads(Path(out).read_text())
    # the load's arrival on the engine's clock (0 = the engine's start)
    arrive = t0 + ARRIVE_S - j["start_monotonic_s"]
    after = sorted(x for t in j["threads"] for x in t["deactivation_times_s"] if x >= arrive)
    return {"scenario": scenario, "backoff_ms": backoff, "wall_s": round(j["wall_s"], 3),
            "latency_ms": round((after[0] - arrive) * 1e3, 1) if after else None,
            "deactivations_before": sum(1 for t in j["threads"] for x in t["deactivation_times_s"] if x < arrive),
            "probes": sum(t["pi_probes"] for t in j["threads"]),
            "slow_probes": sum(t["pi_slow_probes"] for t in j["threads"]),
            "probe_s": round(sum(t["pi_probe_s"] for t in j["threads"]), 4)}


def spread(values):
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    return f"{statistics.median(values):g} ({min(values):g}-{max(values):g})"


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    rows = []
    for r in range(rounds):
        for scenario in ("idle", "onoff"):
            for backoff in (BACKOFFS if r % 2 == 0 else BACKOFFS[::-1]):
                rows.append(dict(run(scenario, backoff), round=r))
                print(json.dumps(rows[-1]), flush=True)
    print(f"\n{rounds} rounds; median (min-max)")
    for scenario in ("idle", "onoff"):
        for backoff in BACKOFFS:
            s = [x for x in rows if x["scenario"] == scenario and x["backoff_ms"] == backoff]
            missed = sum(1 for x in s if x["latency_ms"] is None)
            print(f"{scenario:5} back-off {backoff:2} ms: latency {spread([x['latency_ms'] for x in s])} ms"
                  f"{f' ({missed} never detected)' if missed else ''}; probes {spread([x['probes'] for x in s])}, "
                  f"slow {spread([x['slow_probes'] for x in s])}; inside probes {spread([x['probe_s'] for x in s])} s; "
                  f"wall {spread([x['wall_s'] for x in s])} s")


if __name__ == "__main__":
    main()
