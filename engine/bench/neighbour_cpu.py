#!/usr/bin/env python3
"""Does a CPU-bound load on one CPU slow an engine thread on another, and does that depend
on where the host places the two CPUs? On a VM the two vCPUs may be hyperthreads of one
host core, and then a load slows the engine's thread beside it with no sign in the guest.

Each round: airprobe (the ping-pong says near or far), a sequential engine run pinned to
--cpu with the other CPU idle, the same run with `airload cpu` pinned to --load-cpu, then
airprobe again. The two runs of a round are seconds apart, so the ratio busy / idle is the
load's effect with the host's drift mostly cancelled. Prints one line per round and, at the
end, the ratio's median and range by placement (both probes near, both far, mixed), and how
fast the idle run's time wanders (its spread, run to run, and per minute).

Run it alone: anything else on the machine is in the figures.

Usage: python3 engine/bench/neighbour_cpu.py [--minutes 9] [--end-time 6000]
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import tempfile
import time

BUILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build")
# A near ping-pong is ~50 ns on the lab's VMs, a far one 300 ns and more (workflows/placement.py).
FAR_NS = 150


def pingpong_ns():
    out = subprocess.run([os.path.join(BUILD, "airprobe")], capture_output=True, text=True, check=True).stdout
    return json.loads(out)["pingpong_ns"]


def seq_wall_s(cpu, end_time, out):
    subprocess.run(["taskset", "-c", str(cpu), os.path.join(BUILD, "airpdes"), "--mode", "seq",
                    "--lps-per-pe", "1000", "--pes", "2", "--remote", "0.2", "--end-time", str(end_time),
                    "--quiet", "--json", out], check=True, timeout=600)
    with open(out) as f:
        return json.load(f)["wall_s"]


def one_round(args, out):
    before = pingpong_ns()
    idle = seq_wall_s(args.cpu, args.end_time, out)
    load = subprocess.Popen(["taskset", "-c", str(args.load_cpu), os.path.join(BUILD, "airload"), "cpu"],
                            stdout=subprocess.DEVNULL)
    try:
        time.sleep(0.05)  # the load is running before the engine starts
        busy = seq_wall_s(args.cpu, args.end_time, out)
    finally:
        load.terminate()
        load.wait()
    return before, idle, busy, pingpong_ns()


def placement(before, after):
    far = [x >= FAR_NS for x in (before, after)]
    return "far" if all(far) else "near" if not any(far) else "mixed"


def summary(rows):
    print("\nbusy / idle by placement (probes before and after the round):")
    for where in ("near", "far", "mixed"):
        ratios = [r["busy"] / r["idle"] for r in rows if r["placement"] == where]
        if ratios:
            print(f"  {where:5} {len(ratios):4} rounds: median {statistics.median(ratios):.3f} "
                  f"({min(ratios):.3f}-{max(ratios):.3f})")
    idle = [math.log(r["idle"]) for r in rows]
    if len(idle) > 2:
        steps = [b - a for a, b in zip(idle, idle[1:])]
        print(f"idle run: median {statistics.median(r['idle'] for r in rows):.3f} s, sd {statistics.stdev(idle):.3f} "
              f"(log), consecutive rounds' ratio sd {statistics.stdev(steps):.3f} (log)")
    minutes = {}
    for r in rows:
        minutes.setdefault(int(r["t_s"] // 60), []).append(r["idle"])
    print("idle run's median per minute: " + " ".join(f"{statistics.median(v):.3f}" for _, v in sorted(minutes.items())))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=9.0, help="how long to measure [9]")
    ap.add_argument("--end-time", type=int, default=6000, help="the engine run's end time (6000: ~1 s on the lab's VMs)")
    ap.add_argument("--cpu", type=int, default=0, help="the engine's CPU [0]")
    ap.add_argument("--load-cpu", type=int, default=1, help="the load's CPU [1]")
    args = ap.parse_args()
    if args.cpu == args.load_cpu:
        ap.error("--cpu and --load-cpu must differ")
    rows, start = [], time.monotonic()
    print("t_s pingpong_before_ns pingpong_after_ns idle_s busy_s busy/idle")
    with tempfile.TemporaryDirectory() as d:
        while time.monotonic() - start < args.minutes * 60:
            before, idle, busy, after = one_round(args, os.path.join(d, "out.json"))
            rows.append({"t_s": time.monotonic() - start, "idle": idle, "busy": busy,
                         "placement": placement(before, after)})
            print(f"{rows[-1]['t_s']:.1f} {before} {after} {idle:.4f} {busy:.4f} {busy / idle:.3f}", flush=True)
    summary(rows)


if __name__ == "__main__":
    main()
