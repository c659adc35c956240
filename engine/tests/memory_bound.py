"""Memory is bounded by the GVT interval, not by the run length: fossil collection
reclaims committed events, so the peak resident size of a run 4x as long (same model)
stays about the same, with and without a competitor that makes one PE run ahead."""

import subprocess
import sys

from airpdes_harness import AIRPDES, check, cpu_competitor, finish

# 2 x 1000 LPs: at end 1200 an engine that kept every event would hold ~2 M of them
# (> 100 MB); a bounded one stays near its start-up size (~10 MB).
MODEL = ["--lps-per-pe", "1000", "--remote", "0.3", "--seed", "3", "--quiet"]


def peak_rss_kib(args):
    """Peak RSS of one airpdes run, measured in a fresh process so it is this run's own."""
    code = ("import resource, subprocess, sys\n"
            "subprocess.run(sys.argv[1:], check=True)\n"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", code, AIRPDES, *MODEL, *args],
                         capture_output=True, text=True, timeout=120)
    check(out.returncode == 0, f"{args}: {out.stderr.strip()}")
    return int(out.stdout.strip() or 0)


def compare(mode_args, label):
    short = peak_rss_kib([*mode_args, "--end-time", "300"])
    long = peak_rss_kib([*mode_args, "--end-time", "1200"])
    # 1.5x leaves room for allocator noise; an unbounded engine grows ~4x here.
    check(long < 1.5 * short, f"{label}: peak RSS {short} KiB at end 300, {long} KiB at end 1200")
    print(f"ok   {label}: peak RSS {short} KiB (end 300) vs {long} KiB (end 1200)")



compare(["--mode", "seq", "--pes", "2"], "seq")
compare(["--mode", "fm", "--threads", "2"], "fm 2 threads")
compare(["--mode", "ladm", "--threads", "2", "--pes", "4"], "ladm 2 threads 4 PEs")
with cpu_competitor():
    compare(["--mode", "fm", "--threads", "2"], "fm 2 threads + CPU competitor")
finish()
