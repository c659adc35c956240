"""Adaptation really happens (paper Fig. 11-12). With N threads on N cores:
- one CPU-bound competitor for the whole run: adm and ladm with the pi and rq detectors
  spend most of the run with N-1 active threads;
- no competitor: most of the run with N active threads;
- the competitor stops mid-run: RAP brings the thread back (the end of the run has N).
The shares asserted are generous (the machine is shared and noisy); what they rule out is
a detector that never fires, one that fires without a competitor, and a reactivation
policy that never brings a thread back. Results must still equal seq (checked too)."""
import os
import sys
import threading

from airpdes_harness import assert_same, check, cpu_competitor, finish, run

N = min(os.cpu_count() or 1, 4)
if N < 2:
    print(f"SKIP: adaptation needs at least 2 cores (this machine has {N}): with one core "
          "there is no thread to deactivate")
    sys.exit(77)

MODEL = ["--pes", N, "--lps-per-pe", 1000, "--remote", 0.4, "--seed", 11]


def share(rows, pred, after_s=None, skip_frac=0.1):
    """Share of timeline rows satisfying pred, ignoring the first skip_frac of the run
    (or everything before after_s): detection needs a few GVT rounds to act."""
    if after_s is None:
        rows = rows[int(len(rows) * skip_frac):]
    else:
        rows = [r for r in rows if r[0] >= after_s]
    return (sum(1 for r in rows if pred(r[3])) / len(rows), len(rows)) if rows else (0.0, 0)


refs = {}
for end in (3000, 12000):
    refs[end] = run(*MODEL, "--end-time", end, "--mode", "seq")[0]

CASES = [(mode, det) for mode in ("adm", "ladm") for det in ("pi", "rq")]
with cpu_competitor():
    for mode, det in CASES:
        j, _ = run(*MODEL, "--end-time", 3000, "--mode", mode, "--threads", N, "--detector", det,
                   "--reactivation", "rap", timeline=True)
        if not j:
            continue
        s, n = share(j["_timeline"], lambda a: a == N - 1)
        label = f"{mode} {det} + 1 CPU competitor"
        assert_same(refs[3000], j, label)
        check(n >= 10 and s >= 0.5, f"{label}: {N - 1} active in only {s:.0%} of {n} samples")
        print(f"ok   {label}: {N - 1} of {N} threads active in {s:.0%} of {n} samples")

for mode, det in CASES:
    j, _ = run(*MODEL, "--end-time", 3000, "--mode", mode, "--threads", N, "--detector", det,
               "--reactivation", "rap", timeline=True)
    if not j:
        continue
    s, n = share(j["_timeline"], lambda a: a == N)
    check(n >= 5 and s >= 0.5, f"{mode} {det}, no competitor: all {N} active in only {s:.0%} of {n} samples")
    print(f"ok   {mode} {det}, no competitor: all {N} threads active in {s:.0%} of {n} samples")

# The competitor leaves after STOP_S; from STOP_S + 0.3 s on, RAP must have brought the
# deactivated thread back for most of the remaining samples.
STOP_S = 0.6
for mode, det in [("ladm", "pi"), ("adm", "rq")]:
    with cpu_competitor() as comp:
        timer = threading.Timer(STOP_S, comp.kill)
        timer.start()
        j, _ = run(*MODEL, "--end-time", 12000, "--mode", mode, "--threads", N, "--detector", det,
                   "--reactivation", "rap", timeline=True)
        timer.cancel()
    if not j:
        continue
    tl = j["_timeline"]
    label = f"{mode} {det} + competitor leaving at {STOP_S} s"
    assert_same(refs[12000], j, label)
    before, nb = share([r for r in tl if 0.1 <= r[0] < STOP_S], lambda a: a == N - 1, after_s=0)
    after, na = share(tl, lambda a: a == N, after_s=STOP_S + 0.3)
    check(na >= 10, f"{label}: the run ended too soon after the competitor left ({na} samples)")
    check(after >= 0.6, f"{label}: all {N} active in only {after:.0%} of {na} samples after it left")
    print(f"ok   {label}: {N - 1} active in {before:.0%} of samples before, "
          f"all {N} in {after:.0%} of {na} samples after")
finish()
