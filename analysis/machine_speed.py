"""Which trials of a run ran on a slow machine: the trials' airprobe records
(workflows/machine_speed.py) against the run's own typical probe.

A probe's figures are nanoseconds per step of fixed work on a CPU's own clock, so a slower
step is a slower machine (the host's other guests sharing the cores or caches), whatever
the trial's loads did. The run's typical step is the median of its trials' probes taken
before the loads started. One probe is noisy (on the quiet 2-core VM, 60 probes 0.3 s
apart: the chase's median 10.8 ns, sd 12%, one in six at least 1.08x the median, the
multiply chain's sd 3%), and the host's bursts of contention come and go within seconds;
so a trial is slow when both its probes, before and after the run, took at least
SLOW_RATIO of the typical step, in the chase (caches and memory) or the multiply chain
(the core): the machine was slow all through the run. In the same 60 probes two
consecutive ones were both 1.08x slower 3 times in 59, at most 1.175x. A slow phase that
comes and goes within one engine run slips between the probes: this sees phases of a run's
length and more, the kind that moved the 7a3b582 pair's run A (+15-18% CPU per event).
"""
import statistics

from workflows import placement

# Both probes at least this much slower than the run's median mark the trial slow: 1 of 59
# quiet pairs reached it (1.175x; the next 1.084x), the slow phase seen was +15-18% CPU
# per event: a measure of what the machine did, not a filter of trials.
SLOW_RATIO = 1.15
FIGURES = ("chase_ns", "compute_ns")


def _ok(probe):
    return isinstance(probe, dict) and all(isinstance(probe.get(f), (int, float)) for f in FIGURES)


def typical(records):
    """{figure: median over the run's before-probes} (None when no trial has a probe)."""
    before = [d["machine_speed"]["before"] for _, d in records if _ok((d.get("machine_speed") or {}).get("before"))]
    if not before:
        return None
    return {f: statistics.median(p[f] for p in before) for f in FIGURES}


def slowness(d, ref):
    """How much slower than usual the machine was all through the trial: per figure the
    faster of its two probes over the run's typical one, the larger of the figures (1.0 =
    as usual); None without both probes."""
    ms = d.get("machine_speed") or {}
    probes = [ms.get(k) for k in ("before", "after")]
    if not ref or not all(_ok(p) for p in probes):
        return None
    return max(min(p[f] for p in probes) / ref[f] for f in FIGURES)


def slow_trials(records, ratio=SLOW_RATIO):
    """(typical probe, [(slowness, experiment, trial id, started unix)] of the slow trials,
    probed trials). records: (experiment, trial dict) pairs of one run."""
    records = list(records)
    ref = typical(records)
    slow, probed = [], 0
    for exp, d in records:
        s = slowness(d, ref)
        if s is None:
            continue
        probed += 1
        if s >= ratio:
            slow.append((s, exp, d["trial"]["id"], d["trial"].get("started_unix")))
    return ref, slow, probed


# The ping-pong: how long a cache line takes between the two CPUs the probe pins to. On
# the lab's VM it is ~50 ns while the host keeps the two vCPUs close (a shared cache) and
# ~310-335 ns while it runs them far apart, for seconds to a minute at a time (the a3d99c9
# run, docs/workflow.md; workflows/placement.py, which the runner uses to wait for near);
# a no-load FM run, which crosses the GVT barrier every ~0.1 ms, then took up to 1.5x as
# long. A trial is "far" when either of its probes took at least FAR_RATIO times the run's
# near level (its 10th percentile of before-probes, so a run that is mostly far still has
# a near reference when it was ever near).
FAR_RATIO = placement.FAR_RATIO
NEAR_QUANTILE = 0.1


def near_pingpong(records):
    """The run's near ping-pong (ns): the NEAR_QUANTILE of its trials' before-probes, or None."""
    xs = sorted(x for _, d in records if (x := placement.pingpong_ns((d.get("machine_speed") or {}).get("before"))))
    return xs[int(NEAR_QUANTILE * (len(xs) - 1))] if xs else None


def far_trials(records, ratio=FAR_RATIO):
    """(near ping-pong ns, [(worst probe / near, experiment, trial id, which probes were far:
    "before", "after" or "both")], probed trials). records: (experiment, trial dict) pairs."""
    records = list(records)
    near = near_pingpong(records)
    far, probed = [], 0
    for exp, d in records:
        ms = d.get("machine_speed") or {}
        pp = {k: placement.pingpong_ns(ms.get(k)) for k in ("before", "after")}
        if not near or None in pp.values():
            continue
        probed += 1
        hit = [k for k, x in pp.items() if x >= ratio * near]
        if hit:
            far.append((max(pp.values()) / near, exp, d["trial"]["id"], "both" if len(hit) == 2 else hit[0]))
    return near, far, probed
