"""A trial's length from a time: the simulated end time at which a model configuration's
no-load run lasts about `target_s` wall seconds on this machine.

Every mode, detector and load level of one configuration must simulate exactly the same
events (the determinism contract), so the end time depends only on what changes the
simulated work (model, its parameters, PEs, LPs, remote share, EPG, lookahead, seed, ...)
and never on how the work is run (mode, threads, detector, synchronisation, loads). It is
found once per configuration with a short pilot run and cached in a folder
(results/<scale>/calibration/ in the workflow), so every later trial reuses it.

The pilot runs FM with one thread per PE: it does not depend on the mode under test, it is
the paper's reference mode, and without a load it is the fastest of the parallel modes here
(LADM within a few per cent), so the FM baseline lasts about target_s and every other trial
of the configuration at least about that long. Seq would need a guessed parallel speedup to
hit the target. Noise only ever slows a run down, so the fastest of three pilots counts.

On a host that moves the vCPUs apart for seconds at a time (workflows/placement.py) every
pilot of a configuration can fall into one far phase, which shortens every run of that
configuration (in run A of the 58758ed pair the remote 0.2 pilots ran at 0.73x the usual
rate, unprobed, and 66 no-load runs lasted 1.85-2.0 s against a 2.5 s target). With
`near` (the workflow's --wait-near) each pilot waits for near CPUs like a trial, and a
pilot that started far (the wait ran out) or ended far counts as disturbed. Slow pilots on
near CPUs happen too (a later run: the same configuration at the same rate, none far): the
host's speed itself moves by ~1.3x for tens of seconds (docs/workflow.md, "Far, measured
during the run")."""
import fcntl
import hashlib
import json
import resource
import tempfile
import time
from pathlib import Path

from airbase import bounded_run
from airbase.atomic import write_json
from airbase.paths import AIRPDES
from workflows import engine_policies, machine_speed, placement, workflow_pause
from workflows.noise import DEFAULT_THRESHOLD, machine_busy_s, workflow_cpu_since, workflow_snapshot

PILOT_RUNS = 3           # the fastest counts
PILOT_TRIES = 8          # runs at most, waiting for undisturbed ones
# A pilot run's length (less when the target itself is short). The 2fb74de pair's pilots of
# 0.24-0.4 s put the same configuration's end time 4-25% apart in two runs (PCS 4720 and
# 5660) and in one run 8 PCS baselines at 1.83-1.96 s for a 2.5 s target: a short run's
# start-up and a model's warm-up weigh more in it than in the trial.
PILOT_WALL_S = 1.0
# From this target on, one more run at the calibrated end time itself: its rate is the
# trial's, with nothing to extrapolate. The fastest rate of all runs counts, so a pilot
# slowed by the machine cannot shorten every trial of the configuration.
CHECK_RUN_FROM_S = 1.0
FIRST_PILOT_END = 200.0  # simulated time of the first probe, lengthened until it is long enough


class CalibrationError(Exception):
    pass


def parse_options(argv):
    """airpdes options as a dict with underscores: ['--remote', '0.2', '--pin'] -> {remote:
    '0.2', pin: True}."""
    out, i = {}, 0
    while i < len(argv):
        tok = argv[i]
        if not tok.startswith("--"):
            raise CalibrationError(f"unexpected engine argument {tok!r}")
        key, eq, val = tok[2:].partition("=")
        key = key.replace("-", "_")
        if eq:
            out[key] = val
        elif i + 1 < len(argv) and not argv[i + 1].startswith("--"):
            out[key] = argv[i + 1]
            i += 1
        else:
            out[key] = True
        i += 1
    return out


def work_of(options, work_options=None):
    """What decides the simulated work, from parsed options or an engine JSON's config
    (dashes or underscores): the options the engine declares as work (option_def.h's `work`:
    the model, its shape and parameters, the seed; `work_options`, by default the built
    engine's `--describe`), so a new policy option needs no edit here. The end time is what
    calibration finds, so it is not part of the key it finds it for. PEs default to the
    threads, as in the engine."""
    if work_options is None:
        work_options = engine_policies.work_options()
    names = {n.replace("-", "_") for n in work_options} - {"end_time"}
    opts = {k.replace("-", "_"): v for k, v in options.items()}
    # `is`: a 0 from a JSON config is a value (0 == False), an unset flag is not
    work = {k: str(v) for k, v in opts.items() if k in names and v is not None and v is not False}
    work.setdefault("model", "phold")
    work["pes"] = str(opts.get("pes") or opts.get("threads") or 1)
    return dict(sorted(work.items()))


_resolved = {}


def resolved_work(engine_opts):
    """The work of these engine options (CLI tokens) with every work option as the engine
    resolves it (its defaults, a model's own size), so the same simulated work has one key
    whether an option is given at its default or left out. Keyed as given, Fig. 13/14's
    `--epg 0` and the other figures' default EPG were calibrated twice in each run, and in B
    of the 4007ce7 pair 1.55x apart (24400 and 15700; the shorter one ran two baselines
    for 1.70 s). The engine resolves them in a run that simulates nothing (a few ms); where it
    cannot (a missing engine, options it refuses), the options as given are the work, and the
    trial's own `--check` says what is wrong."""
    given = work_of(parse_options(engine_opts))
    key = tuple(given.items())
    if key not in _resolved:
        _resolved[key] = _engine_resolved(given)
    return dict(_resolved[key])


def _work_argv(work):
    """A work dict as engine options: {lps_per_pe: '1000'} -> ['--lps-per-pe', '1000']."""
    argv = []
    for k, v in work.items():
        argv += [f"--{k.replace('_', '-')}"] + ([] if v == "True" else [v])
    return argv


def _engine_resolved(given):
    argv = [str(AIRPDES), "--mode", "seq", *_work_argv(given)]
    with tempfile.TemporaryDirectory(prefix="airlab-work-") as d:
        out = Path(d) / "work.json"
        try:
            r = bounded_run.run([*argv, "--end-time", "1e-300", "--quiet", "--json", str(out)], timeout=60, text=True)
            rec = json.loads(out.read_text()) if r.returncode == 0 else None
        except (OSError, ValueError):
            rec = None
    if not rec or "work_options" not in rec:
        return given
    names = [n for n in rec["work_options"] if n != "end-time"]
    work = {n.replace("-", "_"): _option_text(rec["config"][n]) for n in names
            if rec["config"].get(n) is not None and rec["config"][n] is not False}
    return dict(sorted(work.items()))


def _option_text(v):
    """A resolved option as its CLI text: 0.2, 1000, phold (a JSON 1.0 reads back as 1)."""
    return "True" if v is True else str(v)


_engine_ids = {}


def engine_id(binary=AIRPDES):
    """A digest of the engine binary: a rebuilt engine that runs faster or slower is
    calibrated again (an unchanged rebuild is the same binary and keeps its cache)."""
    binary = Path(binary)
    try:
        st = binary.stat()
    except OSError:
        return "unbuilt"
    stamp = (str(binary), st.st_mtime_ns, st.st_size)
    if stamp not in _engine_ids:
        _engine_ids[stamp] = hashlib.sha1(binary.read_bytes()).hexdigest()[:12]
    return _engine_ids[stamp]


def key_of(work, target_s, engine=None):
    """The cache key of a configuration's calibration: its work, the target and the engine."""
    ident = engine_id() if engine is None else engine
    digest = hashlib.sha1(json.dumps([work, float(target_s), ident], sort_keys=True).encode()).hexdigest()[:12]
    return f"{work['model']}-{digest}"


def pilot_config(work):
    """What a pilot's usual share of far hand-offs belongs to (placement.NearLevel.usual_share):
    the pilots of one configuration's work, whatever their end time. Its own key, not a
    trial's: a trial's names every engine option, a pilot's only the work."""
    return "pilot-" + hashlib.sha256(json.dumps(work, sort_keys=True).encode()).hexdigest()[:16]


def _pilot(work, end_time, timeout, near=None):
    """(wall_s, committed events, disturbed, far). near: (NearLevel, seconds to wait at
    most) or None."""
    argv = [str(AIRPDES), "--mode", "fm", "--threads", work["pes"], *_work_argv(work)]
    with tempfile.TemporaryDirectory(prefix="airlab-pilot-") as d:
        out = Path(d) / "pilot.json"
        pause = workflow_pause.Pause()  # the workflow stopped during the pilot, as in a trial
        pause.start_or_settle()
        try:
            wall, events, disturbed, far = _timed_pilot(argv, end_time, timeout, near, out, pilot_config(work))
        finally:
            pause.end()
    return wall, events, disturbed, far


def _timed_pilot(argv, end_time, timeout, near, out, config):
    """One pilot run into `out`, with the machine's other work and placement around it."""
    started_far = False
    if near is not None:  # a wait that ran out while still far starts the pilot far
        started_far = placement.wait_until_near(near[0], max_wait_s=near[1])[1]["far"]
    busy0, kids0, flow0, t0 = machine_busy_s(), _children_cpu_s(), workflow_snapshot(), time.monotonic()
    r = bounded_run.run([*argv, "--end-time", f"{end_time:g}", "--quiet", "--json", str(out)],
                        timeout=timeout, text=True)
    # Other work during the pilot: FM slows far beyond its share next to a competitor,
    # so a disturbed pilot would give a much too short end time.
    foreign = (machine_busy_s() - busy0) - (_children_cpu_s() - kids0) - workflow_cpu_since(flow0)
    disturbed = foreign > DEFAULT_THRESHOLD * (time.monotonic() - t0) + 0.02
    probe_after = machine_speed.probe() if near is not None else None
    if r.returncode != 0 or not out.exists():
        raise CalibrationError(f"pilot run failed (exit {r.returncode}): {r.stderr.strip()[-300:]}")
    d = json.loads(out.read_text())
    # The CPUs apart during the pilot make it as slow as a disturbed one. Judged as a trial's
    # run is, by its barrier hand-offs: a probe is one moment (kept far trials had near probes
    # after them in the b6bf153 pair; the bad5e86 pair's run A calibrated one configuration at
    # ~1.5x the normal run time with near probes, and its trials ran 1.78-3.3 s against a
    # 2.7 s target). A pilot is short and cheap to repeat, so a start the wait left far
    # counts too, whatever its hand-offs say. Against the share its configuration's pilots
    # usually show, as a trial's run is: judged by the share alone (up to 365645c), the
    # EPG-4000 configuration's pilots (45-65% slow hand-offs in every run on the Xeon host)
    # counted far and cost extra pilots.
    far = started_far or (near is not None and near[0].judge(d.get("barrier_handoff"), probe_after, config,
                                                             started_far=started_far)["ran_far"])
    return d["wall_s"], d["committed_events"], disturbed or far, far


def _children_cpu_s():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def measure(work, target_s, timeout=300, near=None):
    """Run the pilots; returns the calibration record (without caching). near: see _pilot."""
    started = time.monotonic()
    goal = min(PILOT_WALL_S, max(0.05, target_s / 2))
    # Probes lengthen the run until it is long enough to scale; the pilots then run at the
    # scaled end time (so only their walls count: a probe's was for another end time).
    end = FIRST_PILOT_END
    while True:
        wall, events, disturbed, _ = _pilot(work, end, timeout, near)
        if wall >= goal * 0.6:
            break
        end *= min(16.0, max(1.5, goal / max(wall, 1e-3)))
    probe = {"end_time": end, "wall_s": wall}
    end = float(f"{end * goal / wall:.3g}")  # the measured pilots last about goal seconds
    walls, clean, far_runs = [], [], 0
    # Three undisturbed pilots if the machine allows, within PILOT_TRIES runs.
    while len(clean) < PILOT_RUNS and len(walls) < PILOT_TRIES:
        wall, events, disturbed, far = _pilot(work, end, timeout, near)
        walls.append(wall)
        far_runs += far
        if not disturbed:
            clean.append(wall)
    best = min(clean or walls)
    rate = end / best
    check = None
    if target_s >= CHECK_RUN_FROM_S:
        check_end = float(f"{target_s * rate:.3g}")
        wall, _, disturbed, far = _pilot(work, check_end, timeout, near)
        check = {"end_time": check_end, "wall_s": wall, "disturbed": disturbed, "far": far}
        if not disturbed or not clean:
            rate = max(rate, check_end / wall)
    end_time = float(f"{target_s * rate:.3g}")  # three significant digits: a readable end time
    return {"key": key_of(work, target_s), "engine_id": engine_id(), "target_s": float(target_s), "work": work,
            "pilot": {"mode": "fm", "threads": int(work["pes"]), "end_time": end, "walls_s": walls,
                      "best_wall_s": best, "committed_events": events, "undisturbed_runs": len(clean),
                      "disturbed": not clean, "far_runs": far_runs, "waited_for_near": near is not None,
                      "probe": probe, "check_run": check,
                      "sim_time_per_s": rate},
            "end_time": end_time, "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            # The whole measurement: the runs and, around each, the workflow's settle, the wait
            # for near CPUs and the probe after it (5 s at smoke scale for 0.6 s of runs).
            "span_s": round(time.monotonic() - started, 3)}


def calibrate(engine_opts, target_s, cache_dir, timeout=300, near=None):
    """The calibration record of these engine options (list of CLI tokens) for target_s,
    from the cache or measured now and cached (written atomically, under a lock so two
    runners never measure the same configuration at once). near: see _pilot."""
    work = resolved_work(engine_opts)
    key = key_of(work, target_s)
    cache = Path(cache_dir)
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / f"{key}.json"
    with open(cache / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if path.exists():
            rec = json.loads(path.read_text())
            rec["cached"] = True
            return rec
        rec = measure(work, target_s, timeout, near)
        write_json(path, rec)
    rec["cached"] = False
    return rec
