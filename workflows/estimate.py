"""How long a plan takes: seconds per trial on a 2-core machine and minutes per plan, printed
by the Snakefile before a run and used to keep the quick scale within its budget
(tests/test_experiment_config.py). The constants are fitted to measured runs; each says
which."""
from dataclasses import dataclass

from loads.kinds import cpu_demand
from loads.profiles import resolve_profile
from workflows.calibration import CHECK_RUN_FROM_S, PILOT_RUNS, PILOT_WALL_S, key_of, resolved_work
from workflows.engine_policies import is_adaptive


# Seconds per trial on a 2-core machine. A calibrated trial's no-load FM run lasts about its
# target_s (workflows/calibration.py; 1.10x over a run, NO_LOAD_FACTOR), so its time is that times how
# much slower its engine policies and loads make it (_slowdown_factor). Gang shares time
# slices with its loads and starts a private SLURM. Each trial adds the runner's start-up,
# checks, probes and Snakemake's own job (TRIAL_OVERHEAD_S) and its wait for near CPUs; a
# no-load trial its re-runs for far placement; each configuration its pilot runs; each
# experiment its table, figure and caption. Trials with a fixed end time use the engine's
# event rates (PHOLD with 1000 LPs per PE ~0.16 s per 1000 time units, EPG ~0.0015 s more
# per unit, PCS with 2048 cells per PE ~0.35 s per 1000). A busy machine takes longer.
#
# Refitted part by part (analysis/estimate_check.py) on the two runs of the ac71aac pair (6 Dec,
# AMD host, 287 trials each, 35.0 and 35.3 min with the set-up), where the constants fitted
# on the b6bf153 and bad5e86 pairs (27 Nov, Xeon host) printed 44: the engine runs within
# 10%, but the rest of each trial 4.4 min against 1.8-1.9, the calibration 2.4 against 1.3
# and the far handling 13.5 against 6.2-6.6 (HostPlacement below).
NO_LOAD_FACTOR = 1.10    # no-load engine window / target_s over the pair's 244: sum over sum (median 1.06)
# The runner's own work (start-up, checks), the workflow's settle and Snakemake's gap to the
# next trial: 0.10 and 0.13 s a trial in the pair (runner, settle and the time between
# trials, less ANALYSIS_S_PER_EXPERIMENT and SOLO_S). It was 0.64 s, fitted on runs from
# before the runner stopped Snakemake during engine runs (9359260) and recorded each
# attempt's wait for near CPUs, which HostPlacement.near_wait_s now holds.
TRIAL_OVERHEAD_S = 0.12
# The far handling depends on the host, which no plan knows before it runs; three hosts are
# measured. A host that often places the two vCPUs far apart (the lab's first, a Xeon, 24-27 Nov):
#   waiting for near CPUs before a trial (--wait-near, the workflow's default): most trials
#   wait one probe, a few up to 15 s (a mean of 0.9-1.3 s a trial over the four runs);
#   re-running a no-load trial whose run was far (workflows/placement.py): 0.11-0.48
#   re-runs per no-load trial (median 0.33), each ~10 s (9.3-11.3: the far run, ~1.3x a
#   near one, and the wait before the next).
# A host that keeps them near (the a5f1b20 pair, 28 Nov): 8 s of waiting in a whole run,
# 0.20-0.25 re-runs per no-load trial, no wait before them; the runs took 36.1 and 33.3 min
# where the far host's constants said 43 (its near waits 4.5 min and far re-runs 5.9, the
# pair's 0.1 and 1.6-2.2).
# A host that places them far now and then (the lab's AMD EPYC host, 29 Nov-6 Dec, over 60
# quick runs): a trial's first wait 0.25 and 0.44 s in the ac71aac pair, and over the twelve
# runs of 5-6 Dec with the time broken down, 2.5-8.1 min of waits a run (median 3.95), of
# which ~1.9 before re-runs: ~0.4 s a trial; 0.29-0.30 re-runs per no-load trial in the
# pair, 0.30-0.32 in 2a111d2's; 2.9 s of waiting before each (median over the fifteen runs
# of 5 Dec; the pair 1.8-2.2); of the loaded runs that are re-run when far (Fig. 1 and 8),
# 0.15-0.31 re-runs a trial in the four runs since they are (median 0.23).
# Loaded trials re-run when far (an experiment's rerun_far_loaded): on the AMD host's six
# quick runs of 3-4 Dec, 30 of Fig. 1's 108 loaded runs were kept far (none re-run then), and
# the trial after such a run started far 40% of the time: ~0.28 x (1 + 0.4) = 0.39 re-runs
# a trial within two, the far host's figure. The near host's rate is not measured for loaded
# runs: its no-load one.
# A calibration's pilot runs wait for near CPUs too: 1.25 s a run on the far host (a
# calibrating trial's time beyond its engine runs, 14-23 s for ~7 runs), 0.14 s on the AMD
# host (the pair's 18 calibrations of 7.3-12.4 s: 0.09 and 0.19 s a run in A and B beyond
# the engine runs and ~1 s of probes, over 129 runs), taken for the near host too.
@dataclass(frozen=True)
class HostPlacement:
    near_wait_s: float             # per trial, before its first run (probes included)
    far_reruns_per_no_load: float
    far_rerun_wait_s: float        # before each re-run, besides the run itself
    far_reruns_per_loaded: float   # where the experiment re-runs far loaded runs
    pilot_run_wait_s: float        # per calibration run


FAR_HOST = HostPlacement(near_wait_s=1.0, far_reruns_per_no_load=0.33, far_rerun_wait_s=6.5,
                         far_reruns_per_loaded=0.39, pilot_run_wait_s=1.25)
NEAR_HOST = HostPlacement(near_wait_s=0.0, far_reruns_per_no_load=0.23, far_rerun_wait_s=0.0,
                          far_reruns_per_loaded=0.23, pilot_run_wait_s=0.14)
SOMETIMES_FAR_HOST = HostPlacement(near_wait_s=0.4, far_reruns_per_no_load=0.30, far_rerun_wait_s=2.9,
                                   far_reruns_per_loaded=0.23, pilot_run_wait_s=0.14)
# (name, placement) as the estimate is printed: the first is the estimate, the others its range
HOSTS = (("a host that places its vCPUs far apart now and then", SOMETIMES_FAR_HOST),
         ("one that keeps them near each other", NEAR_HOST),
         ("one that often places them far apart", FAR_HOST))
# A run set aside for far placement against the near run kept: 1.28x and 1.36x in the
# pair's 82 re-runs (the far host's ~1.3x, 27 Nov)
FAR_RUN_FACTOR = 1.3
ANALYSIS_S_PER_EXPERIMENT = 5.0
SOLO_S = 9.0


def _demand(trial, cores=2):
    """CPUs the trial's loads demand (loads.kinds.cpu_demand, before any run)."""
    if trial["profile"] == "none":
        return 0.0
    try:
        prof = _profile(trial["profile"], trial.get("load_count"))
    except Exception:  # an estimate: a profile that cannot be read counts as one load
        return 1.0
    return sum(cpu_demand(p, measured=False) for p in prof["processes"])


_profiles = {}


def _profile(name, count):
    if (name, count) not in _profiles:
        _profiles[(name, count)] = resolve_profile(name, load_count=count)
    return _profiles[(name, count)]


# How much each CPU the loads demand adds to a 2-thread run on 2 cores, by the engine's
# policies: in the ac71aac pair, the sum over its loaded trials of (engine window - target_s)
# over the sum of target_s x demand, a ratio of sums because the estimate is a total and the
# spread is skewed (the medians: pinned FM 1.24, conservative 1.21, adaptive 0.95; fast
# on-off loads cost far more than their half CPU: onoff-ctp10 3.5-5x, Fig. 16). fixed and
# fixed-yield, which quick does not run, are the medians of the b6bf153 and bad5e86 pairs'
# older runs. FM with a spinning barrier and two loads took 4x-16x its target.
_PER_LOAD_CPU = {
    "fixed": 2.2,              # FM, DM: a descheduled thread stalls its partner (1 load ~3x)
    "fixed-pinned": 1.7,       # ... threads pinned (118 trials; 1.5 from the older runs)
    "fixed-yield": 10.0,       # ... with a yielding GVT barrier: 8-11x with one load (EEVDF)
    "fixed-conservative": 1.36,  # conservative (6 trials; 1.8 from the older runs)
    # ADM/LADM, with either reactivation (202 trials; 0.9 from the older runs): since PR
    # waits 40 of its detector's confirmation times (ec7c786), LADM beside one load took
    # 1.89-1.95x the 2.9-s target with PR and 1.86-1.89x with RAP (Fig. 10's configurations,
    # 4 interleaved rounds, docs/engine-benchmarks.md); before, PR 2.1-2.4x and PI-PR 21x.
    "adaptive": 1.1,
}


def _slowdown_factor(engine, demand):
    if is_adaptive(engine.get("mode", "fm")):
        kind = "adaptive"
    elif engine.get("sync") == "conservative":
        kind = "fixed-conservative"
    else:
        kind = ("fixed-yield" if engine.get("barrier_wait") == "yield"
                else "fixed-pinned" if engine.get("pin") is True else "fixed")
    return 1.0 + _PER_LOAD_CPU[kind] * demand


def estimate_parts(trial, host=SOMETIMES_FAR_HOST):
    """{part: seconds} of one trial, on a host that places its vCPUs as `host` says: the
    engine run kept, the runs made again for far placement with the waits before them, the
    wait for near CPUs before the first run, and the runner's and Snakemake's overhead."""
    e = trial["engine"]
    if trial.get("target_s") is not None:
        base = trial["target_s"]
    else:
        span = float(e.get("end_time", 10000)) / 1000
        lps = float(e.get("lps_per_pe", 1000))
        if e.get("model") == "pcs":
            base = span * lps / 2048 * 0.35
        else:
            base = span * lps / 1000 * (0.16 + 0.0015 * float(e.get("epg", 0)))
    if trial["setup"] == "gang" and trial["profile"] != "none":
        # Time slices shared with the loads, whatever the mode (the engine runs alone in its
        # slices: 1.1-3.2x in the 07a2ac1 run), plus the private SLURM's start.
        base = base * 2.5 + 3
    else:
        base *= _slowdown_factor(e, _demand(trial))
    if trial["profile"] == "none":
        base *= NO_LOAD_FACTOR
        far = host.far_reruns_per_no_load * (FAR_RUN_FACTOR * base + host.far_rerun_wait_s)
    elif trial.get("rerun_far_loaded"):
        far = host.far_reruns_per_loaded * (FAR_RUN_FACTOR * base + host.far_rerun_wait_s)
    else:
        far = 0.0
    return {"engine": base, "far": far, "near_wait": host.near_wait_s, "overhead": TRIAL_OVERHEAD_S}


def estimate_seconds(trial, host=SOMETIMES_FAR_HOST):
    return sum(estimate_parts(trial, host).values())


def plan_parts(plan, ran, host=SOMETIMES_FAR_HOST):
    """{part: seconds} for the trials `ran` ({experiment: [trials]}) of the plan: their
    estimate_parts summed, the calibration of each key they use once (pilots), and each
    experiment's table, figure and solo load runs (analysis). analysis/estimate_check.py
    sets these beside a finished run's."""
    parts = dict.fromkeys(("engine", "far", "near_wait", "overhead", "pilots", "analysis"), 0.0)
    pilots = set()
    for name, trials in ran.items():
        exp = plan[name][0]
        parts["analysis"] += ANALYSIS_S_PER_EXPERIMENT
        if exp.get("load_solo"):
            parts["analysis"] += SOLO_S * len({t["profile"] for t in plan[name][1] if t["profile"] != "none"})
        for t in trials:
            for k, v in estimate_parts(t, host).items():
                parts[k] += v
            if t.get("target_s") is not None:
                pilots.add((key_of(resolved_work(t["argv"]), t["target_s"]), t["target_s"]))
    parts["pilots"] = sum(pilot_seconds(target, host) for _, target in pilots)
    return parts


def estimate_minutes(plan, host=SOMETIMES_FAR_HOST):
    """Minutes for the plan's trials, not counting top-up repetitions (top_up_minutes), on a
    host that places its vCPUs as `host` says (FAR_HOST: the longest, which the budget is
    checked against)."""
    first = {name: [t for t in trials if not t.get("top_up")] for name, (_, trials) in plan.items()}
    return sum(plan_parts(plan, first, host).values()) / 60


def top_up_minutes(plan, host=SOMETIMES_FAR_HOST):
    """(trials, minutes) of the top-up repetitions, were every experiment's to run."""
    extra = [t for _, trials in plan.values() for t in trials if t.get("top_up")]
    return len(extra), sum(estimate_seconds(t, host) for t in extra) / 60


def pilot_seconds(target_s, host=SOMETIMES_FAR_HOST):
    """A configuration's calibration (workflows/calibration.py): ~3 probes lengthening to a
    pilot's length (~1 s in all), PILOT_RUNS pilots and, from CHECK_RUN_FROM_S on, a run at
    the target; each run with the host's wait for near CPUs."""
    pilot = min(PILOT_WALL_S, max(0.05, target_s / 2))
    checks = 1 if target_s >= CHECK_RUN_FROM_S else 0
    runs = 3 + PILOT_RUNS + checks
    return 1.0 + PILOT_RUNS * pilot + checks * target_s + runs * host.pilot_run_wait_s
