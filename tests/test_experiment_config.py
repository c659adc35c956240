"""Experiment files and the workflow configuration: every shipped file validates and expands
at every scale; broken files fail with a message naming the file and the field."""
import itertools
import subprocess
import sys
import textwrap

import pytest

from airbase import paths
from workflows.experiments import (ExperimentError, all_trials, at_scale, expand, list_experiments, repeated_trial,
                                   load_config, load_experiment)

GOOD = textwrap.dedent("""\
    figure: Fig. 99
    title: a test experiment
    paper_finding: none
    engine: {model: phold, threads: cores, end_time: 100}
    sweep: {mode: [fm, ladm], profile: [none, cpu-1]}
    plot: {kind: line, x: mode, series: profile, y: slowdown}
    """)


def write(tmp_path, text, name="figtest.yaml"):
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.mark.parametrize("scale", ["smoke", "quick", "paper"])
def test_shipped_experiments_expand(scale):
    cfg = load_config()
    plan = all_trials(cfg, scale)
    assert plan, "no experiment at this scale"
    for name, (exp, trials) in plan.items():
        assert exp["figure"].startswith(("Fig.", "Table", "Beyond the paper")), name
        ids = [t["id"] for t in trials]
        assert len(ids) == len(set(ids)), f"{name}: duplicate trial ids"
        assert all(t["argv"] and t["argv"][0].startswith("--") for t in trials)
        # every loaded trial has a no-load baseline with the same engine options
        base = {str(sorted(t["engine"].items())) for t in trials if t["profile"] == "none"}
        for t in trials:
            if t["profile"] != "none" and exp["plot"]["kind"] != "timeline" and at_scale(exp.get("baselines", True), scale):
                assert str(sorted(t["engine"].items())) in base, f"{name}: {t['id']} has no baseline"


def test_paper_figures_covered():
    figures = " ".join(load_experiment(n)["figure"] for n in list_experiments())
    for fig in ["Fig. 1", "Fig. 3", "Fig. 4", "Fig. 5", "Fig. 7", "Fig. 8", "Fig. 9", "Fig. 10",
                "Fig. 11", "Fig. 13", "Fig. 15", "Fig. 16", "Fig. 17", "Fig. 18"]:
        assert fig in figures


def test_smoke_has_the_required_experiments():
    smoke = all_trials(load_config(), "smoke")
    kinds = {e["plot"]["kind"] for e, _ in smoke.values()}
    assert "timeline" in kinds
    profiles = {t["profile"] for _, ts in smoke.values() for t in ts}
    modes = {t["engine"].get("mode") for _, ts in smoke.values() for t in ts}
    assert {"none", "cpu-1"} <= profiles and any(p.startswith("onoff") for p in profiles)
    assert {"fm", "ladm"} <= modes


def test_good_file_expands_with_baselines(tmp_path):
    exp = load_experiment(write(tmp_path, GOOD))
    trials = expand(exp, "quick", {"reps": {"smoke": 1, "quick": 2, "paper": 10}}, cores=2)
    assert len(trials) == 2 * 2 * 2
    assert {t["engine"]["threads"] for t in trials} == {2}
    assert all("--end-time" in t["argv"] for t in trials)


@pytest.mark.parametrize("edit, field", [
    (lambda s: s.replace("figure: Fig. 99\n", ""), "'figure' is required"),
    (lambda s: s.replace("kind: line", "kind: pie"), "plot.kind"),
    (lambda s: s + "colour: red\n", "colour"),
    (lambda s: s.replace("mode: [fm, ladm]", "mode: fm"), "sweep.mode"),
    (lambda s: s.replace("x: mode", "x: epg"), "plot.x"),
    (lambda s: s.replace("end_time: 100", "end_time: 100, profile: cpu-1"), "engine.profile"),
    (lambda s: s.replace("sweep: {", "sweep: {Bad-Name: [1], "), "sweep"),
    (lambda s: s + "reps: 0\n", "reps"),
])
def test_broken_experiment_names_file_and_field(tmp_path, edit, field):
    p = write(tmp_path, edit(GOOD))
    with pytest.raises(ExperimentError) as e:
        load_experiment(p)
    assert str(p) in str(e.value) and field in str(e.value)


def test_not_yaml(tmp_path):
    p = write(tmp_path, "figure: [unclosed\n")
    with pytest.raises(ExperimentError, match=f"{p}: line [0-9]+: not valid YAML"):
        load_experiment(p)


def test_broken_config_names_field(tmp_path):
    p = write(tmp_path, "scale: huge\nreps: {smoke: 1, quick: 3, paper: 10}\n"
                        "trial_timeout_s: {smoke: 1, quick: 1, paper: 1}\nclaims: x.csv\n", "config.yaml")
    with pytest.raises(ExperimentError) as e:
        load_config(p)
    assert str(p) in str(e.value) and "scale" in str(e.value)


def test_snakemake_refuses_a_bad_config_at_start(tmp_path):
    """The Snakefile validates configs/config.yaml (with overrides) before planning anything."""
    r = subprocess.run([sys.executable, "-m", "snakemake", "-n", "-d", str(tmp_path),
                        "smoke", "--config", "scale=huge"],
                       capture_output=True, text=True, timeout=120, cwd=paths.ROOT)
    out = r.stdout + r.stderr
    assert r.returncode != 0
    assert "config.yaml (with any --config overrides)" in out  # the file, in the error itself
    assert "scale" in out and "huge" in out


def test_snakemake_refuses_a_broken_experiment_at_start(tmp_path):
    """A broken experiment file stops the workflow before any trial, naming file and field."""
    p = write(tmp_path, GOOD.replace("kind: line", "kind: pie"))
    r = subprocess.run([sys.executable, "-m", "snakemake", "-n", "-d", str(tmp_path / "work"),
                        "smoke", "--config", f"experiments=[{p}]"],
                       capture_output=True, text=True, timeout=120, cwd=paths.ROOT)
    out = r.stdout + r.stderr
    assert r.returncode != 0
    assert f"{p}: plot.kind: 'pie' is not one of" in out, out[-2000:]
    assert "rule trial" not in out


def test_time_budgets():
    """Issue 14's 45 minutes. The estimate (workflows/estimate.py), refitted part by part on
    the ac71aac pair (analysis/estimate_check.py), prints ~36 min for quick on the lab's
    host, which places its vCPUs far apart now and then; its runs at this plan took 32.8-35.7
    min, and on its far days the same host has taken up to 9 minutes more (e445808's A:
    8.1 min waiting for near CPUs), so that estimate with every top-up stays within 40. On
    the placement of the lab's first host, far apart most of the time (24-27 Nov), the first
    repetitions stay within the 45 (the top-ups run only where a claim is undecided or Fig.
    8 less precise than asked: 1 of the last 12 runs). The lower bound keeps the estimate
    from losing the far handling (it printed 38 without it, where runs took 46-55). Smoke:
    a couple of minutes."""
    from workflows.estimate import FAR_HOST, SOMETIMES_FAR_HOST, estimate_minutes, top_up_minutes
    cfg = load_config()
    quick = all_trials(cfg, "quick", cores=2)
    usual = estimate_minutes(quick, SOMETIMES_FAR_HOST)
    assert 30 < usual + top_up_minutes(quick, SOMETIMES_FAR_HOST)[1] <= 40
    assert estimate_minutes(quick, FAR_HOST) <= 45
    assert estimate_minutes(all_trials(cfg, "smoke", cores=2), FAR_HOST) < 2.5


def test_the_estimate_within_a_quarter_of_the_runs_at_this_plan():
    """`make reproduce` / `make reproduce-again` at this plan on the lab's host (the 950b6b3
    and ac71aac pairs, minutes with the set-up): the estimate printed first must lie within
    25% of each (issue 14), as must the near host's of the a5f1b20 pair, which ran on a host
    that rarely placed the vCPUs far apart (36.1 and 33.3 min where 43 was printed). The
    three hosts differ only in the far handling, so their order is fixed."""
    from workflows.estimate import FAR_HOST, NEAR_HOST, SOMETIMES_FAR_HOST, estimate_minutes
    quick = all_trials(load_config(), "quick", cores=2)
    near, usual, far = (estimate_minutes(quick, h) for h in (NEAR_HOST, SOMETIMES_FAR_HOST, FAR_HOST))
    assert near + 3 < usual < far - 5
    for real in (35.7, 32.8, 35.0, 35.3):
        assert abs(usual / real - 1) <= 0.25, (usual, real)
    for real in (36.1, 33.3):
        assert abs(near / real - 1) <= 0.25, (near, real)


def test_calibrated_trials_carry_a_target_not_an_end_time(tmp_path):
    """Without engine.end_time a trial runs for the scale's baseline_s (config, or the
    experiment's own): no --end-time, --target-s for the runner; with one, as before."""
    from workflows.experiments import runner_args
    timed = GOOD.replace("end_time: 100", "lps_per_pe: 500") + "baseline_s: {smoke: 0.2, quick: 3, paper: 20}\n"
    cfg = {"reps": {"smoke": 1, "quick": 2, "paper": 10}, "baseline_s": {"smoke": 0.3, "quick": 2.5, "paper": 30}}
    for text, target in ((timed, 3.0), (GOOD.replace("end_time: 100", "lps_per_pe: 500"), 2.5), (GOOD, None)):
        trials = expand(load_experiment(write(tmp_path, text)), "quick", cfg, cores=2)
        for t in trials:
            assert t["target_s"] == target
            assert ("--end-time" in t["argv"]) == (target is None)
            assert ("--target-s" in runner_args(t)) == (target is not None)


@pytest.mark.parametrize("scale", ["quick", "paper"])
def test_block_order_puts_each_baseline_just_before_its_loaded_trials(scale):
    """In every shipped experiment's block order a loaded trial's baseline runs before it
    and only trials sharing that baseline run between the two; each block is numbered
    0, 1, 2, ... (the workflow's priorities: workflows/trials.smk)."""
    from workflows.experiments import CONFIGURATION_ORDERS, baseline_key, block_order
    for (name, (exp, trials)), how in itertools.product(all_trials(load_config(), scale).items(), CONFIGURATION_ORDERS):
        order = block_order(trials, how, name)
        for rep in {t["rep"] for t in trials}:
            block = sorted((t for t in trials if t["rep"] == rep), key=lambda t: order[t["id"]])
            assert [order[t["id"]] for t in block] == list(range(len(block))), name
            for i, t in enumerate(block):
                if t["profile"] == "none":
                    continue
                key = baseline_key(t)
                base = [j for j, b in enumerate(block) if b["profile"] == "none" and baseline_key(b) == key]
                if not base:  # no-baseline experiments (timelines, baselines: false)
                    continue
                assert base[0] < i and all(baseline_key(b) == key for b in block[base[0]:i]), (name, t["id"])


def test_shuffled_blocks_order_configurations_differently_and_the_same_on_every_plan():
    """Fig. 4's seven blocks (one trial per threshold): shuffled, no threshold sits at the
    same place in every block and each block's order is fixed by experiment and repetition
    (a dry run and a rerun agree); listed, every block runs the experiment's list order."""
    from workflows.experiments import block_order
    name = "fig04-adm-threshold"
    _, trials = all_trials(load_config(), "quick")[name]
    reps = sorted({t["rep"] for t in trials})

    def blocks(order, seed=name):
        places = block_order(trials, order, seed)
        return [[t["id"] for t in sorted((t for t in trials if t["rep"] == r), key=lambda t: places[t["id"]])]
                for r in reps]
    listed = blocks("listed")
    assert all([repeated_trial(t) for t in b] == [repeated_trial(t) for t in listed[0]] for b in listed)
    shuffled = blocks("shuffled")
    assert shuffled == blocks("shuffled") and shuffled != blocks("shuffled", "another-experiment")
    positions = {}
    for b in shuffled:
        for place, t in enumerate(b):
            positions.setdefault(repeated_trial(t), set()).add(place)
    assert len(positions) == 5 and all(len(p) > 1 for p in positions.values()), positions


def test_unknown_configuration_order_is_an_error():
    from workflows.experiments import block_order
    with pytest.raises(ExperimentError, match="configuration_order 'random': expected one of shuffled, listed"):
        block_order([], "random")


def _plan(**reps):
    """A plan of experiments with these repetitions: n, or (n first-look, n top-up)."""
    plan = {}
    for name, n in reps.items():
        first, top = n if isinstance(n, tuple) else (n, 0)
        plan[name] = ({}, [{"id": f"t-rep{r}", "rep": r, "top_up": r >= first} for r in range(first + top)])
    return plan


def test_spread_order_puts_each_experiments_blocks_evenly_over_the_run():
    """Block r of an experiment of n repetitions at (r + 0.5) / n of the run, ties in the
    plan's order: a host state that lasts minutes falls on one block of several experiments."""
    from workflows.experiments import block_ranks
    ranks = block_ranks(_plan(a=4, b=2, c=1))
    order = [b for b, _ in sorted(ranks.items(), key=lambda x: x[1])]
    assert order == [("a", 0), ("b", 0), ("a", 1), ("c", 0), ("a", 2), ("b", 1), ("a", 3)]


def test_by_experiment_order_runs_each_experiments_blocks_back_to_back():
    from workflows.experiments import block_ranks
    ranks = block_ranks(_plan(a=2, b=3), "by_experiment")
    assert sorted(ranks, key=ranks.get) == [("a", 0), ("a", 1), ("b", 0), ("b", 1), ("b", 2)]


def test_top_up_blocks_come_after_every_first_look_block():
    from workflows.experiments import block_ranks
    ranks = block_ranks(_plan(a=(2, 2), b=4))
    first = [ranks[b] for b in ranks if b[1] < (2 if b[0] == "a" else 4)]
    assert min(ranks[("a", 2)], ranks[("a", 3)]) > max(first)
    assert ranks[("a", 2)] < ranks[("a", 3)]


def test_unknown_repetition_order_is_an_error():
    from workflows.experiments import block_ranks
    with pytest.raises(ExperimentError, match="repetition_order 'random': expected one of spread, by_experiment"):
        block_ranks(_plan(a=1), "random")


@pytest.mark.parametrize("order", ["spread", "by_experiment"])
@pytest.mark.parametrize("scale", ["smoke", "quick", "paper"])
def test_every_shipped_block_has_one_place_and_repetitions_keep_their_order(scale, order):
    """Every block of the shipped plans gets a distinct place, and an experiment's block r
    comes before its block r+1 (the order must agree with previous_block's dependency)."""
    from workflows.experiments import block_ranks
    plan = all_trials(load_config(), scale)
    ranks = block_ranks(plan, order)
    assert sorted(ranks.values()) == list(range(len(ranks)))
    assert set(ranks) == {(e, t["rep"]) for e, (_, ts) in plan.items() for t in ts}
    for e, (_, ts) in plan.items():
        reps = sorted({t["rep"] for t in ts})
        assert [ranks[(e, r)] for r in reps] == sorted(ranks[(e, r)] for r in reps), e


def test_baselines_can_be_left_out_and_blocks_follow_each_other(tmp_path):
    from workflows.experiments import previous_block
    exp = load_experiment(write(tmp_path, GOOD.replace("profile: [none, cpu-1]", "profile: [cpu-1]")))
    cfg = {"reps": {"smoke": 1, "quick": 3, "paper": 10}}
    assert sum(t["baseline"] for t in expand(exp, "quick", cfg, cores=2)) == 2 * 3
    exp["baselines"] = False
    trials = expand(exp, "quick", cfg, cores=2)
    assert len(trials) == 2 * 3 and not any(t["baseline"] for t in trials)
    for t in trials:
        assert {p["rep"] for p in previous_block(trials, t)} == ({t["rep"] - 1} if t["rep"] else set())
        assert len(previous_block(trials, t)) == (2 if t["rep"] else 0)


def test_baselines_can_be_chosen_per_scale(tmp_path):
    """baselines: {smoke: .., quick: .., paper: ..} (Fig. 10: none at quick, kept at paper);
    a per-scale value that is not a boolean is refused with the file and field."""
    text = GOOD.replace("profile: [none, cpu-1]", "profile: [cpu-1]") + "baselines: {smoke: false, quick: false, paper: true}\n"
    exp = load_experiment(write(tmp_path, text))
    cfg = {"reps": {"smoke": 1, "quick": 3, "paper": 2}}
    assert not any(t["baseline"] for t in expand(exp, "quick", cfg, cores=2))
    assert sum(t["baseline"] for t in expand(exp, "paper", cfg, cores=2)) == 2 * 2
    shipped = {n: trials for n, (_, trials) in all_trials(load_config(), "quick", cores=2).items()}
    assert not any(t["baseline"] for t in shipped["fig10-detectors"])
    paper = {n: trials for n, (_, trials) in all_trials(load_config(), "paper", cores=2).items()}
    assert any(t["baseline"] and t["vars"]["detector"] == "apte" for t in paper["fig10-detectors"])
    with pytest.raises(ExperimentError, match="baselines"):
        load_experiment(write(tmp_path, text.replace("quick: false, paper", "quick: 0, paper")))


def test_docs_example_experiment_validates(tmp_path):
    """The example in docs/workflow.md ('Adding an experiment') is a valid experiment."""
    doc = (paths.ROOT / "docs" / "workflow.md").read_text()
    block = doc.split("```yaml\n", 1)[1].split("```", 1)[0]
    exp = load_experiment(write(tmp_path, block, "fig08-mine.yaml"))
    trials = expand(exp, "quick", load_config(), cores=2)
    assert {t["engine"]["mode"] for t in trials} == {"fm", "adm", "ladm"}


# --- load counts that follow the machine's cores (sweep.load_count) ---

COUNTS = GOOD.replace("sweep: {mode: [fm, ladm], profile: [none, cpu-1]}",
                      "sweep: {mode: [fm, ladm], profile: [cpu-1], "
                      "load_count: [0, 1, cores/2, cores, cores+1, 2*cores]}").replace(
                      "x: mode, series: profile", "x: n_loads, series: mode")
REPS1 = {"reps": {"smoke": 1, "quick": 1, "paper": 1}}


@pytest.mark.parametrize("cores, expected", [
    (2, [0, 1, 2, 3, 4]),         # cores/2 = 1 and cores = 2 merge with 1 and 2 ... no duplicates
    (4, [0, 1, 2, 4, 5, 8]),
    (16, [0, 1, 8, 16, 17, 32]),
])
def test_load_counts_follow_the_cores(tmp_path, cores, expected):
    from workflows.experiments import profile_label, runner_args
    exp = load_experiment(write(tmp_path, COUNTS))
    trials = expand(exp, "quick", REPS1, cores=cores)
    ids = [t["id"] for t in trials]
    assert len(ids) == len(set(ids))
    for mode in ("fm", "ladm"):
        mine = [t for t in trials if t["engine"]["mode"] == mode]
        assert sorted(t["load_count"] or 0 for t in mine) == expected  # one trial per level
    for t in trials:
        n = t["vars"]["load_count"]
        assert t["id"] == f"mode{t['engine']['mode']}-prof{t['profile'].replace('-', '')}-load{n}-rep0"
        if n == 0:  # no load: the plain none profile, which is also every trial's baseline
            assert t["profile"] == "none" and t["load_count"] is None and "--load-count" not in runner_args(t)
        else:
            assert t["profile"] == "cpu-1" and t["load_count"] == n
            assert runner_args(t)[:4] == ["--profile", "cpu-1", "--load-count", str(n)]
            assert profile_label(t) == f"cpu-1-x{n}"
    assert not any(t["baseline"] for t in trials)  # load_count 0 is the baseline


def test_load_counts_without_zero_get_baselines_and_stable_ids(tmp_path):
    """Without a 0 level each engine configuration gets a no-load baseline; ids name the
    resolved count, so the same machine always gets the same ids, whatever order or
    spelling the levels have."""
    exp = load_experiment(write(tmp_path, COUNTS.replace("[0, 1, cores/2, cores, cores+1, 2*cores]",
                                                         "[cores, 1, 2]")))
    ids = [t["id"] for t in expand(exp, "quick", REPS1, cores=2)]
    assert ids == ["modefm-profcpu1-load1-rep0", "modefm-profcpu1-load2-rep0",
                   "modeladm-profcpu1-load1-rep0", "modeladm-profcpu1-load2-rep0",
                   "base-modefm-profnone-load0-rep0", "base-modeladm-profnone-load0-rep0"]


@pytest.mark.parametrize("cores", [2, 4, 16])
def test_shipped_load_sweeps_scale_with_the_cores(cores):
    """Fig. 1, 3, 15 and 17 sweep the number of loads relative to the cores; on 2 cores the
    paper scale's Fig. 1 covers 0 .. 4 loads, as the fixed cpu-N profiles did, and the quick
    one the load its claims read (its repetitions instead of more levels)."""
    cfg = load_config()
    expected = {  # (experiment, scale): {cores: load counts (0 = the no-load trial or baseline)}
        ("fig01-fm-slowdown", "quick"): {2: [0, 1], 4: [0, 1], 16: [0, 1]},
        ("fig01-fm-slowdown", "paper"): {2: [0, 1, 2, 3, 4], 4: [0, 1, 2, 3, 4, 5, 8],
                                         16: [0, 1, 2, 3, 8, 10, 16, 17, 32]},
        ("fig01-fm-slowdown", "smoke"): {2: [0, 1], 4: [0, 1], 16: [0, 1]},
        ("fig03-optimistic-vs-conservative", "quick"): {2: [0, 1], 4: [0, 1], 16: [0, 1]},  # the budget's
        ("fig15-pcs", "quick"): {2: [0, 1], 4: [0, 2], 16: [0, 10]},  # the claim's 5*cores/8 only
        ("fig17-onoff-loads", "quick"): {2: [0, 1], 4: [0, 2], 16: [0, 10]},
    }
    for (name, scale), by_cores in expected.items():
        exp = load_experiment(name)
        trials = expand(exp, scale, cfg, cores=cores)
        ids = [t["id"] for t in trials]
        assert len(ids) == len(set(ids)), name
        assert sorted({t["load_count"] or 0 for t in trials}) == by_cores[cores], (name, scale)
        reps = at_scale(exp.get("reps", cfg["reps"]), scale)  # an experiment may set its own
        extra = at_scale(exp.get("top_up", 0), scale)  # repetitions run only when a claim is undecided
        assert sum(t["top_up"] for t in trials) * (reps + extra) == len(trials) * extra, name
        assert all(t["top_up"] == (t["rep"] >= reps) for t in trials), name
        reps += extra
        per_config = {}
        for t in trials:  # one trial per (engine configuration, count, repetition)
            key = (str(sorted(t["engine"].items())), t["load_count"] or 0)
            per_config[key] = per_config.get(key, 0) + 1
        assert set(per_config.values()) == {reps}, name


@pytest.mark.parametrize("edit, field, words", [
    (lambda s: s.replace("cores+1", "cores*2"), "sweep.load_count[4]", "'cores*2' is not a load count"),
    (lambda s: s.replace("[0, 1, cores/2", "[-1, 1, cores/2"), "sweep.load_count[0]", "-1 is not a load count"),
    (lambda s: s.replace("2*cores]", "half]"), "sweep.load_count[5]", "integer >= 0"),
    (lambda s: s.replace("load_count: [0, 1, cores/2, cores, cores+1, 2*cores]",
                         "load_count: {smoke: [1], quick: [1, cores]}"), "sweep.load_count", "one list per scale"),
    (lambda s: s.replace("load_count: [0, 1, cores/2, cores, cores+1, 2*cores]",
                         "load_count: {smoke: [1], quick: [cores], paper: [cores-]}"),
     "sweep.load_count.paper[0]", "'cores-' is not a load count"),
    (lambda s: s.replace("load_count: [0, 1, cores/2, cores, cores+1, 2*cores]", "load_count: 4"),
     "sweep.load_count", "a list of load counts"),
    (lambda s: s.replace("profile: [cpu-1], ", ""), "sweep.load_count", "needs sweep.profile"),
    (lambda s: s.replace("profile: [cpu-1]", "profile: [none, cpu-1]"), "sweep.profile", "load_count 0"),
    (lambda s: s.replace("profile: [cpu-1]", "profile: [cpu-timevarying]"), "sweep.profile", "2 process entries"),
    (lambda s: s.replace("profile: [cpu-1]", "profile: [cpu-one]"), "sweep.profile", "cpu-one"),
    (lambda s: s.replace("x: n_loads", "x: load_count"), "plot.x", "n_loads"),
    (lambda s: s.replace("end_time: 100", "end_time: 100, load_count: 2"), "engine.load_count", "under sweep"),
    (lambda s: s + "load_solo: true\n", "load_solo", "load_count"),
])
def test_bad_load_count_names_file_and_field(tmp_path, edit, field, words):
    p = write(tmp_path, edit(COUNTS))
    with pytest.raises(ExperimentError) as e:
        load_experiment(p)
    msg = str(e.value)
    assert f"{p}: {field}:" in msg and words in msg, msg
    assert "is not valid under any of the given schemas" not in msg


def test_snakemake_passes_the_load_count_to_the_runner(tmp_path):
    """The plan's load counts reach the runner (--load-count N) and the trial's spec file, so
    changing a count reruns exactly that trial; the fallback names the derived profile."""
    p = write(tmp_path, COUNTS.replace("[0, 1, cores/2, cores, cores+1, 2*cores]", "[0, 3]")
              .replace("mode: [fm, ladm]", "mode: [fm]"), "figcount.yaml")
    work = tmp_path / "work"
    r = subprocess.run([sys.executable, "-m", "snakemake", "-n", "-p", "-d", str(work), "--cores", "2",
                        "results/quick/tables/figcount.csv", "--config", f"experiments=[{p}]", "scale=quick"],
                       capture_output=True, text=True, timeout=120, cwd=paths.ROOT)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-2000:]
    spec = work / "results/quick/specs/figcount/modefm-profcpu1-load3-rep0.args"
    assert spec.read_text().startswith("--profile cpu-1 --load-count 3 --setup cfs --rep 0 -- ")
    none = work / "results/quick/specs/figcount/modefm-profnone-load0-rep0.args"
    assert none.read_text().startswith("--profile none --setup cfs --rep 0 -- ")
    assert "--profile cpu-1 --load-count 3 --setup cfs" in out and "--profile cpu-1-x3 --setup cfs" in out


def test_config_engine_options_apply_to_every_experiment_unless_overridden(tmp_path):
    """configs/config.yaml `engine` (the shipped one pins threads) reaches every trial's
    engine options; an experiment's engine block or sweep overrides it."""
    assert load_config()["engine"] == {"pin": True}
    for exp, trials in all_trials(load_config(), "quick", cores=2).values():
        assert all(("--pin" in t["argv"]) == (t["engine"].get("pin") is True) for t in trials), exp["name"]
        if "pin" not in exp["engine"] and "pin" not in exp["sweep"]:
            assert all("--pin" in t["argv"] for t in trials), exp["name"]
    cfg = {"reps": {"smoke": 1, "quick": 1, "paper": 1}, "engine": {"pin": True, "batch": 8}}
    trials = expand(load_experiment(write(tmp_path, GOOD)), "quick", cfg, cores=2)
    assert all("--pin" in t["argv"] and t["engine"]["batch"] == 8 for t in trials)
    own = GOOD.replace("end_time: 100}", "end_time: 100, pin: false}")
    trials = expand(load_experiment(write(tmp_path, own)), "quick", cfg, cores=2)
    assert all("--pin" not in t["argv"] and t["engine"]["pin"] is False for t in trials)
    swept = GOOD.replace("sweep: {", "sweep: {pin: [false], ")
    trials = expand(load_experiment(write(tmp_path, swept)), "quick", cfg, cores=2)
    assert all("--pin" not in t["argv"] for t in trials)


def test_an_experiment_left_out_of_quick_runs_at_paper_or_when_named():
    """beyond-barrier-wait says `quick: false` (its claim names a load per core, ~4 min per
    trial): quick leaves it out, paper keeps it, and naming it runs it at quick."""
    cfg = load_config()
    assert "beyond-barrier-wait" not in all_trials(cfg, "quick", cores=2)
    assert "fig01-fm-slowdown" in all_trials(cfg, "quick", cores=2)
    assert "beyond-barrier-wait" in all_trials(cfg, "paper", cores=2)
    named = all_trials({**cfg, "experiments": ["beyond-barrier-wait"]}, "quick", cores=2)
    assert list(named) == ["beyond-barrier-wait"] and named["beyond-barrier-wait"][1]



EXCEPT = GOOD.replace("sweep: {mode: [fm, ladm], profile: [none, cpu-1]}",
                      "sweep: {mode: [fm, ladm], remote: [0.1, 0.2], profile: [cpu-1]}")


def test_sweep_except_leaves_out_combinations_and_their_baselines(tmp_path):
    exp = load_experiment(write(tmp_path, EXCEPT + "sweep_except: {smoke: [], quick: [{mode: ladm, remote: 0.2}], "
                                                  "paper: []}\n"))
    cfg = {"reps": 1}
    quick = {(t["vars"]["mode"], t["vars"]["remote"], t["profile"]) for t in expand(exp, "quick", cfg, cores=2)}
    assert quick == {(m, r, p) for m in ("fm", "ladm") for r in (0.1, 0.2) for p in ("cpu-1", "none")} - {
        ("ladm", 0.2, "cpu-1"), ("ladm", 0.2, "none")}
    assert len(expand(exp, "paper", cfg, cores=2)) == 8  # every scale has its own list


@pytest.mark.parametrize("entry, words", [
    ("[{mode: adm}]", "matches no combination of the quick sweep"),   # a value not swept
    ("[{mode: fm, remote: 0.3}]", "matches no combination"),
])
def test_sweep_except_that_matches_nothing_is_an_error(tmp_path, entry, words):
    p = write(tmp_path, EXCEPT + f"sweep_except: {entry}\n")
    exp = load_experiment(p)
    with pytest.raises(ExperimentError, match=words) as e:
        expand(exp, "quick", {"reps": 1}, cores=2)
    assert str(e.value).startswith(f"{p}: sweep_except: ")


@pytest.mark.parametrize("text, words", [
    ("sweep_except: [{detector: pi}]", "sweep_except[0]: 'detector' is not a sweep variable"),
    ("sweep_except: {smoke: [], quick: [{mode: fm, seed: 1}], paper: []}", "sweep_except.quick[0]: 'seed'"),
    ("sweep_except: [{}]", "sweep_except"),
    ("sweep_except: {quick: []}", "sweep_except"),
])
def test_bad_sweep_except_names_file_and_field(tmp_path, text, words):
    p = write(tmp_path, EXCEPT + text + "\n")
    with pytest.raises(ExperimentError) as e:
        load_experiment(p)
    assert str(p) in str(e.value) and words in str(e.value)


@pytest.mark.parametrize("extra, words", [
    ("top_up_half_width: 0.15\n", "top_up_half_width: needs top_up"),
    ("top_up: 2\ntop_up_half_width: {smoke: null, quick: 0, paper: 0.1}\n", "top_up_half_width: 0 is not a share > 0"),
    ("top_up: 2\ntop_up_half_width: -1\n", "top_up_half_width"),
    ("top_up: 2\ntop_up_on_undecided: false\n", "top_up_on_undecided: false needs top_up_half_width"),
])
def test_a_precision_top_up_needs_repetitions_and_a_share(tmp_path, extra, words):
    """top_up_half_width (analysis/top_up.py) asks for the top-up repetitions by the first
    look's median half-width: without top_up it could ask for nothing, and a share <= 0
    would ask always."""
    with pytest.raises(ExperimentError, match=words):
        load_experiment(write(tmp_path, GOOD + extra))


def test_a_precision_top_up_per_scale():
    from workflows.experiments import top_up_half_width
    exp = {"top_up": 3, "top_up_half_width": {"smoke": None, "quick": 0.15, "paper": 0.1}}
    assert [top_up_half_width(exp, s) for s in ("smoke", "quick", "paper")] == [None, 0.15, 0.1]
    assert top_up_half_width({"top_up": 3}, "quick") is None


def test_a_top_up_only_precision_asks_for_keeps_one_look():
    """top_up_on_undecided: false: the claims are judged once (95%), and at a scale without
    a bar nothing could ask, so no top-up repetitions are planned there."""
    from workflows.experiments import top_up_reps, two_looks
    exp = {"top_up": 2, "top_up_half_width": {"smoke": None, "quick": 0.15, "paper": 0.1},
           "top_up_on_undecided": False}
    assert [top_up_reps(exp, s) for s in ("smoke", "quick", "paper")] == [0, 2, 2]
    assert [two_looks(exp, s) for s in ("smoke", "quick", "paper")] == [False] * 3
    assert two_looks({**exp, "top_up_on_undecided": True}, "quick") and not two_looks({"top_up": 0}, "quick")


def test_far_loaded_runs_are_rerun_only_where_the_experiment_says(tmp_path):
    """rerun_far_loaded (per scale): that scale's loaded trials tell the runner
    --rerun-far-loaded (in their spec, so changing it reruns them) and the estimate counts
    their far re-runs; no-load trials are re-run for far placement anyway and never carry it;
    a value that is not a boolean is refused with the file and field. Of the shipped quick
    experiments Fig. 1 and 8 ask (their loaded trials only), no other."""
    from workflows.estimate import estimate_seconds
    from workflows.experiments import runner_args
    text = GOOD + "rerun_far_loaded: {smoke: false, quick: true, paper: false}\n"
    exp = load_experiment(write(tmp_path, text))
    cfg = {"reps": {"smoke": 1, "quick": 2, "paper": 2}}
    quick = expand(exp, "quick", cfg, cores=2)
    loaded = [t for t in quick if t["profile"] != "none"]
    assert loaded and all(t["rerun_far_loaded"] and "--rerun-far-loaded" in runner_args(t) for t in loaded)
    assert not any(t["rerun_far_loaded"] or "--rerun-far-loaded" in runner_args(t)
                   for t in quick if t["profile"] == "none")
    assert not any(t["rerun_far_loaded"] for t in expand(exp, "paper", cfg, cores=2))
    plain = load_experiment(write(tmp_path, GOOD, name="plain.yaml"))
    before = {t["id"]: estimate_seconds(t) for t in expand(plain, "quick", cfg, cores=2)}
    for t in quick:
        assert (estimate_seconds(t) > before[t["id"]]) == (t["profile"] != "none"), t["id"]
    with pytest.raises(ExperimentError, match="rerun_far_loaded"):
        load_experiment(write(tmp_path, GOOD + "rerun_far_loaded: {smoke: false, quick: 1, paper: false}\n"))
    shipped = all_trials(load_config(), "quick", cores=2)
    asking = {name for name, (_, trials) in shipped.items() if any(t["rerun_far_loaded"] for t in trials)}
    assert asking == {"fig01-fm-slowdown", "fig08-one-load"}
    assert all(t["rerun_far_loaded"] == (t["profile"] != "none") for name in asking for t in shipped[name][1])


@pytest.mark.parametrize("wait_near", [True, False])
def test_the_workflow_asks_for_far_loaded_reruns_only_with_wait_near(tmp_path, wait_near):
    """The runner refuses --rerun-far-loaded without --wait-near (tests/test_placement.py):
    with the config's wait_near off the workflow leaves it out of the command, while the spec
    file keeps it (so the experiment's key still decides when the trial reruns)."""
    p = write(tmp_path, GOOD + "rerun_far_loaded: {smoke: false, quick: true, paper: false}\n", "figfar.yaml")
    work = tmp_path / "work"
    r = subprocess.run([sys.executable, "-m", "snakemake", "-n", "-p", "-d", str(work), "--cores", "2",
                        "results/quick/tables/figfar.csv", "--config", f"experiments=[{p}]", "scale=quick",
                        f"wait_near={wait_near}"],
                       capture_output=True, text=True, timeout=120, cwd=paths.ROOT)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-2000:]
    commands = [ln for ln in r.stdout.splitlines() if " trial --profile " in ln]
    loaded = [c for c in commands if "--profile cpu-1" in c]
    assert loaded and len(commands) == 2 * len(loaded), commands
    assert all(("--rerun-far-loaded" in c) == wait_near and ("--wait-near" in c) == wait_near for c in loaded)
    assert not any("--rerun-far-loaded" in c for c in commands if "--profile none" in c)
    spec = work / "results/quick/specs/figfar/modefm-profcpu1-rep0.args"
    assert "--rerun-far-loaded" in spec.read_text()
