"""Experiments: one YAML file per paper figure or table (configs/experiments/), expanded
into trials for a scale. Used by the Snakefile (to name every trial file) and by the
analysis (to know what each trial was).

Expansion: every combination of the sweep's values, for every repetition, plus one no-load
baseline (profile none, setup cfs) per engine configuration, so each trial's slowdown has
its matching baseline.

Load counts follow the machine: the sweep variable `load_count` multiplies the one process
of each swept `profile` (cpu-1 run as 4 separate processes: `airlab trial --profile cpu-1
--load-count 4`, recorded as profile cpu-1-x4). Its values are integers or expressions in
the machine's cores ('cores/2', 'cores', 'cores+1', '2*cores'), resolved here when the plan
is expanded; 0 is the no-load trial (profile none); levels that resolve to the same number
are one level."""
import itertools
import json
import os
import random
import re
from pathlib import Path

import jsonschema

from airbase.paths import CONFIGS, EXPERIMENTS, SCHEMAS
from airbase.schema_messages import read_yaml, schema_errors
from loads.profiles import ProfileError, derived_name, load_file, profile_path, resolve_count

TRIAL_VARS = ("profile", "setup", "load_count")  # sweep variables that are not engine options
COUNT_VAR = "load_count"
DERIVED = ("n_loads", "load_processes", "ctp_us", "t_s")  # table columns computed from each trial's record


class ExperimentError(Exception):
    pass


# A trial's id ends in its repetition (...-rep3): the analysis finds a trial's repetitions by it.
REP_MARK = "-rep"


def repeated_trial(trial_id):
    """The id a repetition shares with its other repetitions: its own without the '-repN'."""
    head, mark, rep = str(trial_id).rpartition(REP_MARK)
    return head if mark and rep.isdigit() else str(trial_id)


def _validator(name):
    with open(SCHEMAS / name) as f:
        return jsonschema.Draft202012Validator(json.load(f))


def _schema_errors(data, schema_name, source):
    return schema_errors(_validator(schema_name), data, source)


def load_config(path=CONFIGS / "config.yaml", overrides=None):
    cfg = read_yaml(path, ExperimentError)
    cfg.update(overrides or {})
    errors = _schema_errors(cfg, "config.schema.json", str(path))
    if errors:
        raise ExperimentError("; ".join(errors))
    return cfg


def list_experiments():
    return sorted(p.stem for p in EXPERIMENTS.glob("*.yaml"))


def load_experiment(name_or_path):
    p = Path(name_or_path)
    path = p if p.suffix == ".yaml" else EXPERIMENTS / f"{name_or_path}.yaml"
    data = read_yaml(path, ExperimentError)
    if not isinstance(data, dict):
        raise ExperimentError(f"{path}: (top level): an experiment is a mapping")
    errors = _schema_errors(data, "experiment.schema.json", str(path))
    plot = data.get("plot") or {}
    sweep = data.get("sweep") or {}
    for key in ("x", "series"):
        var = plot.get(key)
        parts = var.split("+") if var and key == "series" else [var]  # series may combine: mode+setup
        if var and any(v not in sweep and v not in DERIVED for v in parts):
            errors.append(f"{path}: plot.{key}: '{var}' is not a sweep variable ({', '.join(sweep)}) "
                          f"nor a derived one ({', '.join(DERIVED)})")
        if var and COUNT_VAR in parts:
            errors.append(f"{path}: plot.{key}: plot the number of loads as the derived n_loads "
                          f"(CPUs the loads demand) or load_processes (from each trial's record), not {COUNT_VAR}")
    for var, val in (plot.get("relative_to") or {}).items():  # analysis/relative_time.py
        levels = sweep.get(var)
        levels = [v for lv in levels.values() for v in lv] if isinstance(levels, dict) else levels or []
        if var not in sweep or val not in levels:
            errors.append(f"{path}: plot.relative_to: {var}={val} is not a level of a sweep variable "
                          f"(the reference must be run in every block)")
        elif var != plot.get("series"):
            errors.append(f"{path}: plot.relative_to: {var} must be the plot's series ({plot.get('series')}), "
                          f"so the reference's series is the line at 1")
    for var in data.get("engine", {}):
        if var in TRIAL_VARS:
            errors.append(f"{path}: engine.{var}: {var} is a trial variable; put it under sweep")
    excepts = data.get("sweep_except") or []
    for scale, entries in (excepts.items() if isinstance(excepts, dict) else [(None, excepts)]):
        for i, entry in enumerate(entries if isinstance(entries, list) else []):
            for var in entry if isinstance(entry, dict) else ():
                if var not in sweep:
                    where = f"sweep_except.{scale}[{i}]" if scale else f"sweep_except[{i}]"
                    errors.append(f"{path}: {where}: '{var}' is not a sweep variable ({', '.join(sweep)})")
    errors += _check_top_up_half_width(data, path)
    errors += _check_top_up_on_undecided(data, path)
    if COUNT_VAR in sweep and not errors:
        errors += _check_load_count(data, path)
    if errors:
        raise ExperimentError("; ".join(errors))
    data["name"] = path.stem
    data["path"] = str(path)
    return data


def scale_values(value):
    """Every value a sweep variable takes at any scale."""
    if isinstance(value, dict):
        return [v for lst in value.values() for v in lst]
    return list(value)


def _check_top_up_half_width(data, path):
    """top_up_half_width asks for the top-up repetitions: it needs some, and points with
    intervals (a line or bar plot); per scale, each a number > 0 or null."""
    if "top_up_half_width" not in data:
        return []
    value, where = data["top_up_half_width"], f"{path}: top_up_half_width"
    errors = []
    for v in (value.values() if isinstance(value, dict) else []):  # a single value: the schema's
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0):
            errors.append(f"{where}: {v!r} is not a share > 0 (0.15 for 15%) or null")
    if not data.get("top_up"):
        errors.append(f"{where}: needs top_up, the repetitions it asks for")
    if (data.get("plot") or {}).get("kind") == "timeline":
        errors.append(f"{where}: a timeline plot has no points with intervals")
    return errors


def _check_top_up_on_undecided(data, path):
    """top_up_on_undecided: false leaves the top-up to precision alone, so it needs the bar."""
    if data.get("top_up_on_undecided", True) or "top_up_half_width" in data:
        return []
    return [f"{path}: top_up_on_undecided: false needs top_up_half_width, the only reason left to top up"]


def top_up_half_width(exp, scale):
    """The median relative half-width above which the top-up runs at this scale, or None."""
    v = at_scale(exp.get("top_up_half_width"), scale)
    return float(v) if v is not None else None


def _check_load_count(data, path):
    """sweep.load_count multiplies the one process of each swept profile: each must exist
    and have exactly one process entry (the no-load trial is load_count 0, not none)."""
    sweep = data["sweep"]
    if "profile" not in sweep:
        return [f"{path}: sweep.{COUNT_VAR}: needs sweep.profile, the one-process profile(s) whose "
                "process it multiplies (e.g. profile: [cpu-1])"]
    if data.get("load_solo"):
        return [f"{path}: load_solo: measures named profiles alone and cannot be combined with "
                f"sweep.{COUNT_VAR}"]
    errors = []
    for name in dict.fromkeys(scale_values(sweep["profile"])):
        if name == "none":
            errors.append(f"{path}: sweep.profile: 'none' cannot be multiplied; with sweep.{COUNT_VAR} "
                          f"the no-load trial is {COUNT_VAR} 0")
            continue
        try:
            n = len(load_file(profile_path(str(name)))["processes"])
        except ProfileError as e:
            errors.append(f"{path}: sweep.profile: '{name}': {e.errors[0]}")
            continue
        if n != 1:
            errors.append(f"{path}: sweep.profile: '{name}' has {n} process entries; sweep.{COUNT_VAR} "
                          "multiplies a profile's one process (e.g. cpu-1, onoff-ctp1000)")
    return errors


def load_counts(values, cores):
    """The distinct numbers of loads of a load_count list on a machine with `cores` CPUs, in
    increasing order: 1, 'cores/2', 'cores', 'cores+1', '2*cores' on 2 cores -> [1, 2, 3, 4].
    An expression is never below 1 ('cores/4' on 2 cores is 1); 0 is no load."""
    out = set()
    for v in values:
        out.add(int(v) if isinstance(v, (int, float)) else resolve_count(v, cores))
    return sorted(out)


def at_scale(value, scale):
    """A value that may be given per scale ({smoke: .., quick: .., paper: ..})."""
    if isinstance(value, dict) and set(value) == {"smoke", "quick", "paper"}:
        return value[scale]
    return value


def top_up_reps(exp, scale):
    """Repetitions the experiment adds at this scale when a claim on it is undecided or its
    figure imprecise (0: none, also when only precision may ask and no bar is set here)."""
    if not exp.get("top_up_on_undecided", True) and top_up_half_width(exp, scale) is None:
        return 0
    return int(at_scale(exp.get("top_up", 0), scale) or 0)


def two_looks(exp, scale):
    """Whether the experiment's claims are judged twice at this scale (analysis/sequential.py):
    it has a top-up that an undecided claim asks for. A top-up asked for by precision alone
    (top_up_on_undecided: false) sizes the sample by its spread, not its effect, so its
    claims keep one look's 95% intervals."""
    return top_up_reps(exp, scale) > 0 and exp.get("top_up_on_undecided", True)


def _engine_value(v, cores):
    if isinstance(v, str) and v.startswith("cores"):
        return resolve_count(v, cores)
    return v


def engine_argv(options):
    argv = []
    for key, value in sorted(options.items()):
        flag = "--" + key.replace("_", "-")
        if value is True:
            argv.append(flag)
        elif value is not False and value is not None:
            argv += [flag, str(value)]
    return argv


def _slug(value):
    return re.sub(r"[^A-Za-z0-9.]+", "", str(value))


def expand(exp, scale, cfg, cores=None):
    """The experiment's trials at this scale: a list of dicts with id, profile, setup, rep,
    vars (the sweep values), engine (resolved options), argv, baseline (bool), top_up (bool:
    a repetition that runs only when a claim is undecided after the first ones),
    rerun_far_loaded (bool: a loaded trial run again when it ran far)."""
    cores = cores or len(os.sched_getaffinity(0))
    reps = at_scale(exp.get("reps", cfg["reps"]), scale)
    reps = at_scale(reps, scale) if isinstance(reps, dict) else reps
    # Repetitions reps .. reps+extra-1 run only when a claim on this experiment is undecided
    # after the first `reps` (analysis/sequential.py); the workflow's top_up checkpoint decides.
    extra = top_up_reps(exp, scale)
    # The configuration's engine options (configs/config.yaml `engine`, e.g. pin) apply to
    # every experiment; the experiment's own engine block and sweep override them.
    engine = {**cfg.get("engine", {}), **exp["engine"]}
    base_engine = {k: _engine_value(at_scale(v, scale), cores) for k, v in engine.items()}
    # A trial's length is a time: the no-load run's target seconds, the end time calibrated
    # per configuration on this machine (workflows/calibration.py), unless the experiment
    # fixes an end time itself.
    target_s, wanted = None, exp.get("baseline_s", cfg.get("baseline_s"))
    if "end_time" not in base_engine and wanted is not None:
        target_s = float(at_scale(wanted, scale))
    # A loaded run that ran far is run again too (airlab trial --rerun-far-loaded), as every
    # no-load one is: where an experiment's loaded runs are short and its claims near their bounds.
    far_loaded = bool(at_scale(exp.get("rerun_far_loaded", False), scale))
    sweep = {k: at_scale(v, scale) for k, v in exp["sweep"].items()}
    if COUNT_VAR in sweep:
        sweep[COUNT_VAR] = load_counts(sweep[COUNT_VAR], cores)
    names = list(sweep)
    trials, seen = [], set()

    def add(values, baseline):
        eng = dict(base_engine)
        eng.update({k: _engine_value(v, cores) for k, v in values.items() if k not in TRIAL_VARS})
        if eng.get("mode") == "fm" and "pes" in eng and "threads" in eng:
            eng["pes"] = eng["threads"]
        profile = values.get("profile", "none")
        setup = values.get("setup", "cfs")
        count = values.get(COUNT_VAR) if profile != "none" else None
        for rep in range(reps + extra):
            # The key's slug too: a swept engine option such as pi_backoff_ms must not put an
            # underscore into the id, which the trial rule's wildcard does not match.
            tid = "-".join(f"{_slug(k)[:4]}{_slug(values[k])}" for k in names if k in values) or "run"
            tid = f"{'base-' if baseline else ''}{tid}{REP_MARK}{rep}"
            if tid in seen:
                continue
            seen.add(tid)
            trials.append({"id": tid, "profile": profile, "load_count": count, "setup": setup,
                           "rep": rep, "vars": dict(values), "engine": eng, "argv": engine_argv(eng),
                           "baseline": baseline, "target_s": target_s, "top_up": rep >= reps,
                           "rerun_far_loaded": far_loaded and profile != "none"})

    def no_load(values):  # load_count 0 is the no-load trial, whatever profile it multiplies
        if values.get(COUNT_VAR) == 0:
            return {**values, "profile": "none"}
        return values

    excepts = at_scale(exp.get("sweep_except") or [], scale)
    matched = [0] * len(excepts)

    def excepted(values):
        hits = [all(values.get(k) == v for k, v in entry.items()) for entry in excepts]
        for i, hit in enumerate(hits):
            matched[i] += hit
        return any(hits)

    combos = []
    for vals in itertools.product(*(sweep[n] for n in names)):
        values = no_load(dict(zip(names, vals)))
        if values not in combos and not excepted(values):
            combos.append(values)
    unmatched = [i for i, n in enumerate(matched) if not n]
    if unmatched:
        i = unmatched[0]
        raise ExperimentError(f"{exp.get('path', exp.get('name'))}: sweep_except: {excepts[i]} matches no combination "
                              f"of the {scale} sweep (a value not swept at {scale}?)")
    for values in combos:
        add(values, baseline=False)
    for values in combos if at_scale(exp.get("baselines", True), scale) else ():  # each engine configuration's no-load baseline
        base = {**values, "profile": "none", "setup": "cfs"}
        if COUNT_VAR in values:
            base[COUNT_VAR] = 0
        if base != values and {k: v for k, v in base.items() if k in values} not in combos:
            add({k: v for k, v in base.items() if k in values or k in TRIAL_VARS}, baseline=True)
    return trials


def profile_label(trial):
    """The profile a trial runs, as its record names it: cpu-1, or cpu-1-x4 for cpu-1's
    process run 4 times (load_count 4)."""
    if trial.get("load_count") is None:
        return trial["profile"]
    return derived_name(trial["profile"], trial["load_count"])


def runner_args(trial):
    """What `airlab trial` is told about what runs: --profile P [--load-count N] --setup S
    --rep R [--target-s S] [--rerun-far-loaded] (the engine options, trial["argv"], follow a
    `--`). The trial's spec file holds these and the engine options, so editing any of them
    reruns the trial."""
    count = [] if trial.get("load_count") is None else ["--load-count", str(trial["load_count"])]
    target = [] if trial.get("target_s") is None else ["--target-s", f"{trial['target_s']:g}"]
    far = ["--rerun-far-loaded"] if trial.get("rerun_far_loaded") else []
    return ["--profile", trial["profile"], *count, "--setup", trial["setup"], "--rep", str(trial["rep"]),
            *target, *far]


def previous_block(trials, trial):
    """The trials of the repetition block before this trial's (none for the first): the
    workflow runs every configuration's repetition r before any repetition r+1, so slow
    drift of the machine falls on both sides of each block's loaded/no-load ratio."""
    return [t for t in trials if t["rep"] == trial["rep"] - 1]


def _first_look_reps(trials):
    """How many repetitions an experiment runs before any top-up (its `reps`)."""
    return 1 + max((t["rep"] for t in trials if not t.get("top_up")), default=0)


def _by_experiment(plan):
    """Every block of the first experiment, then every block of the second, ...: each
    experiment done minutes after it starts (the order before 2026-11-26)."""
    names = list(plan)
    return lambda exp, rep: (names.index(exp), rep)


def _spread(plan):
    """Each experiment's blocks spread evenly over the run: block r of an experiment with n
    repetitions sits at (r + 0.5) / n of it (ties: the plan's order). A state of the host
    that lasts minutes (the 88d7519 pair's run A met a slower memory for the whole of Fig.
    13/14's blocks, and its `epg` level moved by 19 standard errors against run B) then
    falls on one block of several experiments rather than every block of one: the
    repetitions' spread shows it, and each experiment's mean averages over the run.
    Top-up blocks come after every first-look block."""
    names = list(plan)
    reps = {e: _first_look_reps(trials) for e, (_, trials) in plan.items()}
    return lambda exp, rep: ((rep + 0.5) / reps[exp], names.index(exp))


# How the workflow orders the repetition blocks of a run's experiments (config:
# repetition_order). A block itself always runs as one piece (block_order within it).
REPETITION_ORDERS = {"spread": _spread, "by_experiment": _by_experiment}


def block_ranks(plan, order="spread"):
    """{(experiment, rep): its block's place in the run, 0 first} for the plan's blocks,
    ordered by REPETITION_ORDERS[order]. A block r+1 still waits for block r of its own
    experiment (previous_block): this orders what is ready, it adds no dependency."""
    if order not in REPETITION_ORDERS:
        raise ExperimentError(f"repetition_order '{order}': expected one of {', '.join(REPETITION_ORDERS)}")
    key = REPETITION_ORDERS[order](plan)
    blocks = sorted({(e, t["rep"]) for e, (_, trials) in plan.items() for t in trials}, key=lambda b: key(*b))
    return {b: i for i, b in enumerate(blocks)}


def baseline_key(trial):
    """Trials with equal keys share a no-load baseline: same engine options."""
    return json.dumps(trial["engine"], sort_keys=True)


def _listed(groups, seed):
    """The configurations in the experiment's trial list order, the same in every block."""
    return groups


def _shuffled(groups, seed):
    """A fixed random order per block (seeded by the experiment and the repetition, so a
    dry run and every rerun of the run agree): a host phase that comes at the same point
    of every block then falls on different configurations. In the a40aa06 run C, with the
    listed order, the host ran the 3rd or 4th trial of all seven Fig. 4 blocks far: 10 of
    the 14 runs at thresholds 5.4 and 8 and none of the 21 at the others, and
    adm_threshold's verdict was the host's."""
    out = list(groups)
    random.Random(seed).shuffle(out)
    return out


# How the configurations of one repetition block are ordered (config: configuration_order).
CONFIGURATION_ORDERS = {"shuffled": _shuffled, "listed": _listed}


def block_order(trials, order="shuffled", experiment=""):
    """{trial id: its place in its repetition block}: the trials that share a no-load
    baseline (baseline_key) next to each other, the baseline first, the groups in the
    order CONFIGURATION_ORDERS[order] gives for the block. Run in this order, a loaded
    trial is seconds from the baseline its slowdown is taken against, not most of a block
    away, so a change of the machine's speed within a block rarely falls between the two
    sides of a ratio."""
    if order not in CONFIGURATION_ORDERS:
        raise ExperimentError(f"configuration_order '{order}': expected one of {', '.join(CONFIGURATION_ORDERS)}")
    groups = {}
    for t in trials:
        groups.setdefault(baseline_key(t), []).append(t)
    places = {}
    for rep in sorted({t["rep"] for t in trials}):
        place = 0
        for key in CONFIGURATION_ORDERS[order](list(groups), f"{experiment}:{rep}"):
            for t in sorted((t for t in groups[key] if t["rep"] == rep), key=lambda t: t["profile"] != "none"):
                places[t["id"]] = place
                place += 1
    return places


def all_trials(cfg, scale, only=None, cores=None):
    """{experiment name: (experiment, [trials])} for the experiments of this run (on a
    machine with `cores` CPUs: this one unless given)."""
    named = only or cfg.get("experiments")
    names = named or list_experiments()
    out = {}
    for name in names:
        exp = load_experiment(name)
        if scale == "smoke" and not exp.get("smoke"):
            continue
        if scale == "quick" and not exp.get("quick", True) and not named:
            continue  # left to the paper scale unless asked for by name
        out[exp["name"]] = (exp, expand(exp, scale, cfg, cores))  # a path given in config: its stem
    return out
