# Trials: one rule runs every trial through `airlab trial`. A trial claims every core
# (threads: workflow.cores), so no other job, trial or analysis, runs beside it: timings
# are not disturbed by the workflow itself. The trial runner writes its JSON atomically,
# so an interrupted run resumes cleanly; an engine error or timeout becomes a record with
# status "failed" (and its reason), reported in the figures and the report, so one bad
# trial does not stop the experiments. Delete that file (or use --forcerun) to retry it.
# Editing an experiment reruns exactly the trials whose options changed (their spec files).
# A calibrated trial (--target-s) finds its end time in results/<scale>/calibration/, made
# by pilot runs the first time its configuration runs; a disturbed trial is run again
# (config: disturbed_reruns, disturbed_threshold) and the last run kept, marked.

# Room for one repetition block in the priorities below (checked).
BLOCK_SPAN = 1000
_RANKS = {}


def block_priority(scale, exp, rep):
    """The priority of a repetition block (Snakemake runs the ready job of highest priority):
    blocks in the order config's repetition_order gives (workflows/experiments.py,
    block_ranks; default: each experiment's blocks spread over the run). A block runs as
    one piece, so a loaded trial is seconds from the no-load run of its own block. An
    ordering, not a dependency: one experiment's target still runs only its trials, and a
    cluster still runs them at once."""
    if scale not in _RANKS:
        try:
            _RANKS[scale] = block_ranks(PLAN[scale], config.get("repetition_order", "spread"))
        except ExperimentError as e:
            raise WorkflowError(str(e))
        if len(_RANKS[scale]) * BLOCK_SPAN >= ANALYSIS_PRIORITY:
            raise WorkflowError(f"scale {scale}: {len(_RANKS[scale])} repetition blocks leave no priority "
                                "above them for the analysis jobs")
    ranks = _RANKS[scale]
    return (len(ranks) - ranks[(exp, rep)]) * BLOCK_SPAN


def experiment_priority(scale, exp):
    """The priority of the experiment's first block (its loads' solo runs, its first look)."""
    return block_priority(scale, exp, 0) + BLOCK_SPAN - 1


_BLOCK_ORDER = {}


def trial_priority(wc):
    """The block's priority, and within the block each no-load baseline just before the
    loaded trials taken against it, the configurations in config's configuration_order
    (workflows/experiments.py, block_order; default: a fixed shuffle per block)."""
    key = (wc.scale, wc.exp)
    if key not in _BLOCK_ORDER:
        try:
            _BLOCK_ORDER[key] = block_order(PLAN[wc.scale][wc.exp][1], config.get("configuration_order", "shuffled"),
                                            wc.exp)
        except ExperimentError as e:
            raise WorkflowError(str(e))
        if len(_BLOCK_ORDER[key]) and max(_BLOCK_ORDER[key].values()) >= BLOCK_SPAN - 1:
            raise WorkflowError(f"{wc.exp}: a repetition block of more than {BLOCK_SPAN - 2} trials")
    return (block_priority(wc.scale, wc.exp, trial_of(wc)["rep"])
            + BLOCK_SPAN - 1 - _BLOCK_ORDER[key].get(wc.tid, 0))


def wait_near_args(scale):
    """--wait-near, with the scale's longest wait (config wait_near_max_s) when the config
    gives one; else the runner's own default (workflows/placement.py WAIT_MAX_S)."""
    if not config.get("wait_near", True):
        return []
    most = config.get("wait_near_max_s", {}).get(scale)
    return ["--wait-near"] + ([] if most is None else ["--wait-near-max", f"{most:g}"])


def trial_runner_args(wc):
    """runner_args of the trial, less --rerun-far-loaded where the config turns waiting for
    near CPUs off (the runner refuses it without --wait-near: far is judged against the
    level that waiting measures). The spec file keeps it, so the experiment's key still
    decides when the trial reruns."""
    args = runner_args(trial_of(wc))
    return args if wait_near_args(wc.scale) else [a for a in args if a != "--rerun-far-loaded"]


def trial_of(wc):
    try:
        return TRIALS[(wc.scale, wc.exp, wc.tid)]
    except KeyError:
        raise WorkflowError(f"no trial {wc.tid} in experiment {wc.exp} at scale {wc.scale}")


def previous_block_files(wc):
    """Repetitions run interleaved: a trial of repetition r waits for every trial of its
    experiment's repetition r-1 (ancient: only their existence orders the jobs; retrying
    one of them does not rerun the later blocks)."""
    _, trials = PLAN[wc.scale][wc.exp]
    return [ancient(f"results/{wc.scale}/trials/{wc.exp}/{t['id']}.json")
            for t in previous_block(trials, trial_of(wc))]


rule trial:
    input:
        spec="results/{scale}/specs/{exp}/{tid}.args",  # rewritten only when the trial changes
        previous_block=previous_block_files,
    output:
        "results/{scale}/trials/{exp}/{tid}.json",
    log:
        "results/{scale}/logs/{exp}/{tid}.log",
    wildcard_constraints:
        tid=r"(?!solo-)[A-Za-z0-9.\-]+",
    threads: workflow.cores
    resources:
        trial_slot=1,
    priority: trial_priority
    params:
        # The shell catches a hang-up so that it lives on to run the fallback, which says so
        # in the log (a trap with a command is reset to default in the runner, which answers
        # the hang-up itself). Here and not in the shell template below: Snakemake reruns
        # every finished trial when that template's text changes (its "code" rerun trigger),
        # while a param made from the output is not compared.
        cmd=lambda wc, output: "trap : HUP; " + shlex.join([
            *AIRLAB, "trial", *trial_runner_args(wc),  # --profile [--load-count] --setup --rep
            "--out", output[0], "--record-failure", "--allow-unavailable",
            "--timeout", str(config["trial_timeout_s"][wc.scale]),
            "--calibration-dir", f"results/{wc.scale}/calibration",
            "--reruns", str(config.get("disturbed_reruns", 2)),
            *wait_near_args(wc.scale),
            "--noise-threshold", str(config.get("disturbed_threshold", 0.05)),
            "--label", f"experiment={wc.exp}", "--label", f"scale={wc.scale}"]),
        # Snakemake stopped while the engine runs (workflows/workflow_pause.py): the shell's
        # $PPID is Snakemake's own process (a PID in the params would change every
        # invocation, and changed params rerun a job)
        pause="--pause-workflow $PPID" if config.get("pause_workflow", True) else "",
        engine=lambda wc: shlex.join(trial_of(wc)["argv"]),
        fallback=lambda wc, output: shlex.join([
            PY, "-m", "workflows.failed_trial", "--out", output[0], "--log", f"results/{wc.scale}/logs/{wc.exp}/{wc.tid}.log",
            "--profile", profile_label(trial_of(wc)), "--setup", trial_of(wc)["setup"],  # as recorded: cpu-1-x4
            "--rep", str(trial_of(wc)["rep"]), "--label", f"experiment={wc.exp}",
            "--label", f"scale={wc.scale}", "--", *trial_of(wc)["argv"]]),
    # If the runner itself dies without a record (killed from outside, a bug), write a
    # failed record anyway: the experiment's analysis goes on and the report names the reason.
    # An interrupt (runner exit 130) records nothing: the job fails and is rerun next time.
    shell:
        "{params.cmd} {params.pause} -- {params.engine} > {log} 2>&1 || AIRLAB_RUNNER_STATUS=$? {params.fallback} 2>> {log}"


rule load_solo:
    """A profile's loads alone (no engine): the reference for the loads' own slowdown."""
    output:
        "results/{scale}/trials/{exp}/solo-{profile}.json",
    log:
        "results/{scale}/logs/{exp}/solo-{profile}.log",
    threads: workflow.cores
    resources:
        trial_slot=1,
    priority: lambda wc: experiment_priority(wc.scale, wc.exp)
    params:
        cmd=lambda wc, output: shlex.join([*AIRLAB, "load", wc.profile, "--duration", "8", "--json", output[0]]),
    shell:
        "{params.cmd} > {log} 2>&1"
