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
# target_s (workflows/calibration.py; 1.05x, NO_LOAD_FACTOR), so its time is that times how
# much slower its engine policies and loads make it (_slowdown_factor). Gang shares time
# slices with its loads and starts a private SLURM. Each trial adds the runner's start-up,
# checks, probes and Snakemake's own job (TRIAL_OVERHEAD_S) and its wait for near CPUs; a
# no-load trial its re-runs for far placement; each configuration its pilot runs; each
# experiment its table, figure and caption. Trials with a fixed end time use the engine's
# event rates (PHOLD with 1000 LPs per PE ~0.16 s per 1000 time units, EPG ~0.0015 s more
# per unit, PCS with 2048 cells per PE ~0.35 s per 1000). A busy machine takes longer.
#
# Fitted on the four quick runs of the b6bf153 and bad5e86 pairs (326 trials each, 46.3-54.8
# min with the set-up) as medians over the runs; before, the constants of the 6a751fe pair
# gave 38 min, 1.22-1.44x short, almost all of it in the far handling and the pilots, which
# had grown since (the far rule measured during the run, up to 3 runs, pilots that wait).
NO_LOAD_FACTOR = 1.05    # no-load wall_s / target_s, median of 604 trials (p25-p75 1.01-1.10)
# runner start to engine start, the workflow's settle, the probes (median 0.43-0.53 s a
# trial), and Snakemake's gap between trials (2.5-2.6 min over 326: ~0.47 s); less the
# settle the runner no longer makes when it has stopped Snakemake (9359260; a mean 0.36-0.39 s a
# trial, re-runs included, in the two runs of the c8baa61 pair). Not refitted: the one pair
# without it (6ed977a) took 45.0 and 60.3 min where this printed 42, B on a far-placing day
# (10.7 min of far re-runs), which no constant here should be fitted to alone.
TRIAL_OVERHEAD_S = 0.64
# The far handling depends on the host, which no plan knows before it runs. A host that
# often places the two vCPUs far apart (the lab's first host, 24-27 Nov):
#   waiting for near CPUs before a trial (--wait-near, the workflow's default): most trials
#   wait one probe, a few up to 15 s (a mean of 0.9-1.3 s a trial over the four runs);
#   re-running a no-load trial whose run was far (workflows/placement.py): 0.11-0.48
#   re-runs per no-load trial (median 0.33), each ~10 s (9.3-11.3: the far run, ~1.3x a
#   near one, and the wait before the next).
# A host that keeps them near (the a5f1b20 pair, 28 Nov): 8 s of waiting in a whole run,
# 0.20-0.25 re-runs per no-load trial, no wait before them; the runs took 36.1 and 33.3 min
# where the far host's constants said 43 (its near waits 4.5 min and far re-runs 5.9, the
# pair's 0.1 and 1.6-2.2). The estimate printed gives both; budgets use the far host's.
# Loaded trials re-run when far (an experiment's rerun_far_loaded): on the AMD host's six
# quick runs of 3-4 Dec, 30 of Fig. 1's 108 loaded runs were kept far (none re-run then), and
# the trial after such a run started far 40% of the time: ~0.28 x (1 + 0.4) = 0.39 re-runs
# a trial within two. The near host's rate is not measured for loaded runs: its no-load one.
@dataclass(frozen=True)
class HostPlacement:
    near_wait_s: float             # per trial
    far_reruns_per_no_load: float
    far_rerun_wait_s: float        # before each re-run, besides the run itself
    far_reruns_per_loaded: float   # where the experiment re-runs far loaded runs


FAR_HOST = HostPlacement(near_wait_s=1.0, far_reruns_per_no_load=0.33, far_rerun_wait_s=6.5,
                         far_reruns_per_loaded=0.39)
NEAR_HOST = HostPlacement(near_wait_s=0.0, far_reruns_per_no_load=0.23, far_rerun_wait_s=0.0,
                          far_reruns_per_loaded=0.23)
ANALYSIS_S_PER_EXPERIMENT = 5.0
SOLO_S = 9.0
# Each pilot run's wait for near CPUs and probe after it (a calibrating trial's time beyond
# its engine run: 14-23 s as a mean per run, median 19 s, for ~7 pilot runs of ~1 s plus a
# 2.7 s check), less the settle of at least 0.2 s a pilot made until 9359260
PILOT_RUN_OVERHEAD_S = 1.25


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
# policies: medians of (wall_s / target_s - 1) / demand over the four runs above (fixed and
# fixed-yield: older runs; quick has none). The spread is wide: FM with a spinning barrier
# and two loads took 4x-16x its target.
_PER_LOAD_CPU = {
    "fixed": 2.2,              # FM, DM: a descheduled thread stalls its partner (1 load ~3x)
    "fixed-pinned": 1.5,       # ... threads pinned (p25-p75 1.1-1.9: 2.1-2.9x with one load)
    "fixed-yield": 10.0,       # ... with a yielding GVT barrier: 8-11x with one load (EEVDF)
    "fixed-conservative": 1.8, # conservative (p25-p75 1.3-2.4)
    # ADM/LADM (p25-p75 0.8-1.2), with either reactivation: since PR waits 40 of its
    # detector's confirmation times (ec7c786), LADM beside one load took 1.89-1.95x the
    # 2.9-s target with PR and 1.86-1.89x with RAP (Fig. 10's configurations, 4 interleaved
    # rounds, docs/engine-benchmarks.md); before, PR 2.1-2.4x and PI-PR 21x.
    "adaptive": 0.9,
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


def estimate_seconds(trial, host=FAR_HOST):
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
        far = host.far_reruns_per_no_load * (base + host.far_rerun_wait_s)
    elif trial.get("rerun_far_loaded"):
        far = host.far_reruns_per_loaded * (base + host.far_rerun_wait_s)
    else:
        far = 0.0
    return TRIAL_OVERHEAD_S + host.near_wait_s + base + far


def estimate_minutes(plan, host=FAR_HOST):
    """Minutes for the plan's trials, not counting top-up repetitions (top_up_minutes), on a
    host that places its vCPUs as `host` says (FAR_HOST: the longer, budgeted estimate)."""
    total, pilots = 0.0, set()
    for exp, trials in plan.values():
        total += ANALYSIS_S_PER_EXPERIMENT
        if exp.get("load_solo"):
            total += SOLO_S * len({t["profile"] for t in trials if t["profile"] != "none"})
        for t in trials:
            if t.get("top_up"):
                continue
            total += estimate_seconds(t, host)
            if t.get("target_s") is not None:
                pilots.add((key_of(resolved_work(t["argv"]), t["target_s"]), t["target_s"]))
    return (total + sum(pilot_seconds(target) for _, target in pilots)) / 60


def top_up_minutes(plan):
    """(trials, minutes) of the top-up repetitions, were every experiment's to run."""
    extra = [t for _, trials in plan.values() for t in trials if t.get("top_up")]
    return len(extra), sum(estimate_seconds(t) for t in extra) / 60


def pilot_seconds(target_s):
    """A configuration's calibration (workflows/calibration.py): ~3 probes lengthening to a
    pilot's length (~1 s in all), PILOT_RUNS pilots and, from CHECK_RUN_FROM_S on, a run at
    the target; each run with its PILOT_RUN_OVERHEAD_S."""
    pilot = min(PILOT_WALL_S, max(0.05, target_s / 2))
    checks = 1 if target_s >= CHECK_RUN_FROM_S else 0
    runs = 3 + PILOT_RUNS + checks
    return 1.0 + PILOT_RUNS * pilot + checks * target_s + runs * PILOT_RUN_OVERHEAD_S
