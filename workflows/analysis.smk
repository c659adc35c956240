# Analysis: per experiment a table, a figure (PNG + SVG); then the summary of the paper's
# claims and the report. These are light jobs that may run in parallel with each other.


def trial_path(scale, exp, trial):
    return f"results/{scale}/trials/{exp}/{trial['id']}.json"


def first_look_files(scale, exp):
    """The experiment's first `reps` repetitions (every trial of an experiment without a top-up)."""
    return [trial_path(scale, exp, t) for t in PLAN[scale][exp][1] if not t["top_up"]]


def two_look_experiments(scale):
    """Experiments that add repetitions when a claim on them is undecided (analysis/sequential.py);
    not those whose top-up only precision asks for (top_up_on_undecided: false)."""
    return [e for e, (exp, _) in PLAN[scale].items() if two_looks(exp, scale)]


def trial_files(scale, exp):
    """The experiment's trials: its first repetitions, and its top-up repetitions when the
    top_up checkpoint found a claim on it undecided or its figure less precise than asked."""
    trials = PLAN[scale][exp][1]
    if any(t["top_up"] for t in trials):
        with open(checkpoints.top_up.get(scale=scale, exp=exp).output.decision) as f:
            if not json.load(f)["top_up"]:
                trials = [t for t in trials if not t["top_up"]]
    return [trial_path(scale, exp, t) for t in trials]


def solo_files(scale, exp):
    e, trials = PLAN[scale][exp]
    if not e.get("load_solo"):
        return []
    profiles = sorted({t["profile"] for t in trials if t["profile"] != "none"})
    return [f"results/{scale}/trials/{exp}/solo-{p}.json" for p in profiles]


def precision_args(scale, exp):
    """--half-width-over and --plot for analysis.top_up when the experiment asks for its
    top-up by precision at this scale (top_up_half_width), else nothing."""
    e = PLAN[scale][exp][0]
    bar = top_up_half_width(e, scale)
    if bar is None:
        return ""
    only = "" if two_looks(e, scale) else " --precision-only"
    return f"--half-width-over {bar:g} --plot {shlex.quote(e['path'])}{only}"


checkpoint top_up:
    """The first look of a two-look experiment: its claims judged on its first repetitions
    (a table of those alone), and with top_up_half_width its figure's precision; the
    decision says whether its top-up repetitions run."""
    input:
        trials=lambda wc: first_look_files(wc.scale, wc.exp),
        solo=lambda wc: solo_files(wc.scale, wc.exp),
        claims=config["claims"],
    output:
        decision="results/{scale}/top-up/{exp}.json",
        table="results/{scale}/top-up/{exp}.csv",
    priority: lambda wc: experiment_priority(wc.scale, wc.exp)  # its top-up follows its first look
    params:
        figure=lambda wc: PLAN[wc.scale][wc.exp][0]["figure"],
        precision=lambda wc: precision_args(wc.scale, wc.exp),
    shell:
        "{PY:q} -m analysis.aggregate --experiment {wildcards.exp} --figure {params.figure:q} "
        "--out {output.table} --solo {input.solo} -- {input.trials} && "
        "{PY:q} -m analysis.top_up --experiment {wildcards.exp} --claims {input.claims:q} "
        "--table {output.table} --out {output.decision} {params.precision}"


# An experiment's table and figure run as soon as its trials are done, between the next
# experiment's trials (they never run beside one: a trial claims every core). With a lower
# priority than the trials they would wait, ready, until the last trial, and Snakemake
# re-weighs every ready job at each scheduling pass (by priority, then by the sizes of its
# inputs: a table reads all its experiment's trials): in a run at 664fa61 its own CPU
# during engine runs grew from 0.3% to 12% of a core as finished experiments piled up
# (7a3b582, whose tables ran between trials: median 2%, p90 3%), and in that run no-load
# adaptive trials deactivated a thread in 34% of the runs (0-1% in the runs before it).
ANALYSIS_PRIORITY = 10**6


rule table:
    input:
        trials=lambda wc: trial_files(wc.scale, wc.exp),
        solo=lambda wc: solo_files(wc.scale, wc.exp),
    output:
        "results/{scale}/tables/{exp}.csv",
    wildcard_constraints:
        exp=r"(?!summary\.csv)[A-Za-z0-9.\-]+",  # any experiment; tables/summary.csv is the claims rule's (the lookahead sees the rest of the path)
    priority: ANALYSIS_PRIORITY
    params:
        figure=lambda wc: PLAN[wc.scale][wc.exp][0]["figure"],
    shell:
        "{PY:q} -m analysis.aggregate --experiment {wildcards.exp} --figure {params.figure:q} "
        "--out {output} --solo {input.solo} -- {input.trials}"


rule figure:
    input:
        table="results/{scale}/tables/{exp}.csv",
        trials=lambda wc: trial_files(wc.scale, wc.exp),
        claims=config["claims"],
    output:
        png=report("results/{scale}/figures/{exp}.png", caption="report/figure.rst", category="{scale}"),
        svg="results/{scale}/figures/{exp}.svg",
        # the lab report's caption, for `snakemake --report` (figure.rst includes it)
        caption="results/{scale}/figures/{exp}.caption.html",
    priority: ANALYSIS_PRIORITY
    shell:
        "{PY:q} -m analysis.figures --experiment {wildcards.exp} --table {input.table} "
        "--out {output.png} --trials {input.trials} && "
        "{PY:q} -m analysis.caption --experiment {wildcards.exp} --scale {wildcards.scale} "
        "--table {input.table} --claims {input.claims:q} --out {output.caption}"


rule summary:
    input:
        tables=lambda wc: [f"results/{wc.scale}/tables/{e}.csv" for e in PLAN[wc.scale]],
        claims=config["claims"],
    output:
        "results/{scale}/tables/summary.csv",
    params:
        two_looks=lambda wc: shlex.join(["--two-looks", *two_look_experiments(wc.scale)]),
    shell:
        "{PY:q} -m analysis.claims --claims {input.claims} {params.two_looks} --out {output} -- {input.tables}"


rule report:
    input:
        summary="results/{scale}/tables/summary.csv",
        figures=lambda wc: [f"results/{wc.scale}/figures/{e}.png" for e in PLAN[wc.scale]],
        tables=lambda wc: [f"results/{wc.scale}/tables/{e}.csv" for e in PLAN[wc.scale]],
    output:  # also in Snakemake's own report, so `--report results/report.html` loses nothing
        report("results/{scale}/report.html", caption="report/lab-report.rst", category="airlab report"),
    params:
        experiments=lambda wc: " ".join(
            f"--experiment {e} results/{wc.scale}/figures/{e}.png results/{wc.scale}/tables/{e}.csv"
            for e in PLAN[wc.scale]),
    shell:
        "{PY:q} -m analysis.report --scale {wildcards.scale} --summary {input.summary} "
        "--out {output} {params.experiments}"


# One target per experiment: snakemake --cores all fig08_one_load
for _exp in PLAN[SCALE]:
    rule:
        name: target_name(_exp)
        input: f"results/{SCALE}/figures/{_exp}.png"
