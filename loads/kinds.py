"""What each kind of load is: whether it can run on this machine, the argv that starts it,
and how its own progress figures are read back. Adding a kind = one entry in KINDS."""
import json
import os
import re
import shutil
import sys
from pathlib import Path

from workflows.paths import AIRLOAD

PARSEC_HELP = ("PARSEC 3.0 is not installed: download parsec-3.0 from https://parsec.cs.princeton.edu/, "
               "build the benchmark with `parsecmgmt -a build -p NAME`, and set PARSEC_HOME to its folder")


def parsecmgmt(configured=None):
    """parsecmgmt from the profile's parsec_home, $PARSEC_HOME/bin, or PATH (in that order);
    None when PARSEC is not installed."""
    return parsec_origin(configured)[0]


def parsec_origin(configured=None):
    """(parsecmgmt, where it was found, e.g. 'PARSEC_HOME=/opt/parsec-3.0'), or (None, None)."""
    for field, home in (("parsec_home", configured), ("PARSEC_HOME", os.environ.get("PARSEC_HOME"))):
        if home and os.access(Path(home).expanduser() / "bin" / "parsecmgmt", os.X_OK):
            return str(Path(home).expanduser() / "bin" / "parsecmgmt"), f"{field}={home}"
    found = shutil.which("parsecmgmt")
    return (found, f"parsecmgmt on PATH: {found}") if found else (None, None)


def describe(proc):
    """What one resolved process runs, in a few words for listings: 'real PARSEC (...)' or
    'stand-in: ...' for the PARSEC profiles, so a user sees which one this machine runs."""
    kind, threads = proc["kind"], proc["threads"]
    if kind == "parsec":
        _, origin = parsec_origin(proc.get("parsec_home"))
        what = (f"real PARSEC ({origin}): {proc['benchmark']} -i {proc.get('input', 'simmedium')} -n {threads}"
                if origin else f"PARSEC {proc['benchmark']} (not installed)")
    elif kind in ("cpu", "onoff"):
        what = f"airload {kind}" + (f" --ctp-us {proc['ctp_us']}" if kind == "onoff" else "") + f", {threads} thread(s)"
    elif kind == "stress-ng":
        what = " ".join(["stress-ng", f"--{proc['stressor']}", str(threads), *proc.get("args", [])])
    elif kind == "x264":
        what = f"the x264 encoder on a generated {int(proc.get('frames', 60))}-frame 640x360 video, {threads} thread(s)"
    elif kind == "vips":
        px = int(proc.get("image_px", 2600))
        what = f"vips sharpen on a generated {px}x{px} image, {threads} thread(s)"
    else:
        what = " ".join(map(str, proc.get("argv", [kind])))
    if proc.get("stand_in_for"):
        return f"stand-in for {proc['stand_in_for']}: {what}"
    return what


def _program(name, package):
    return (True, None) if shutil.which(name) else (False, f"{name} is not installed (Debian package {package})")


def cpu_list(text):
    """The CPUs of a list such as '0-3,6': {0, 1, 2, 3, 6}."""
    cpus = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return cpus


def availability(spec):
    """(True, None) when a process of this spec can run here, else (False, reason)."""
    kind = spec["kind"]
    if spec.get("cpus"):
        # Checked here, not when the load starts: binding to a missing CPU fails in the child,
        # where the only message left is "Exception occurred in preexec_fn".
        usable = os.sched_getaffinity(0)
        missing = sorted(cpu_list(spec["cpus"]) - usable)
        if missing:
            return False, (f"cpus {spec['cpus']!r}: CPU {', '.join(map(str, missing))} is not usable here "
                           f"(usable: {', '.join(map(str, sorted(usable)))})")
    if kind in ("cpu", "onoff"):
        return (True, None) if os.access(AIRLOAD, os.X_OK) else \
            (False, f"{AIRLOAD} is missing: build the engine (make build)")
    if kind == "stress-ng":
        return _program("stress-ng", "stress-ng")
    if kind == "x264":
        return _program("x264", "x264")
    if kind == "vips":
        return _program("vips", "libvips-tools")
    if kind == "parsec":
        return (True, None) if parsecmgmt(spec.get("parsec_home")) else (False, PARSEC_HELP)
    if kind == "command":
        prog = spec["argv"][0]
        found = shutil.which(prog) if os.sep not in prog else (prog if os.access(prog, os.X_OK) else None)
        return (True, None) if found else (False, f"command {prog!r} not found")
    return False, f"unknown kind {kind!r}"


def _repeat(argv, unit, units_per_run=1, partial_regex=None, partial_scale=1.0):
    """Run argv over and over until stopped; loads.repeat reports completed runs per second
    (plus the units a stopped run completed, when partial_regex reads its progress)."""
    partial = ["--partial-regex", partial_regex, "--partial-scale", str(partial_scale)] if partial_regex else []
    return [sys.executable, "-m", "loads.repeat", "--unit", unit, "--units-per-run",
            str(units_per_run), *partial, "--", *argv]


def prepare(proc):
    """Generate (or find cached) the input a load needs, before the trial's clock starts,
    so a load starts on time."""
    from loads import inputs
    if proc["kind"] == "x264":
        inputs.y4m_video(int(proc.get("frames", 60)))
    elif proc["kind"] == "vips":
        inputs.ppm_image(int(proc.get("image_px", 2600)))


def command_for(proc, workdir):
    """(argv, extra environment) that start one process of a resolved profile entry."""
    from loads import inputs  # generating input is only needed when a load really starts
    kind, threads = proc["kind"], str(proc["threads"])
    if kind == "cpu":
        return [str(AIRLOAD), "cpu", "--threads", threads], {}
    if kind == "onoff":
        return [str(AIRLOAD), "onoff", "--ctp-us", str(proc["ctp_us"]), "--threads", threads], {}
    if kind == "stress-ng":
        # A day-long timeout: the launcher stops it (SIGTERM makes stress-ng write metrics).
        return ["stress-ng", f"--{proc['stressor']}", threads, *proc.get("args", []),
                "--timeout", "86400", "--metrics-brief", "--yaml", str(Path(workdir) / "metrics.yaml")], {}
    if kind == "x264":
        frames = int(proc.get("frames", 60))
        video = inputs.y4m_video(frames)
        # Not --quiet: its progress line ("16/60 frames") counts the frames of a stopped run.
        return _repeat(["x264", "--threads", threads, "--preset", "medium",
                        "-o", str(Path(workdir) / "out.264"), str(video)], "frames/s", frames,
                       partial_regex=r"\] (\d+)/\d+ frames"), {}
    if kind == "vips":
        image = inputs.ppm_image(int(proc.get("image_px", 2600)))
        # --vips-progress ("36% complete") counts the fraction of a stopped run.
        return _repeat(["vips", "sharpen", str(image), str(Path(workdir) / "out.v"), "--vips-progress"],
                       "runs/s", partial_regex=r"(\d+)% complete", partial_scale=0.01), \
            {"VIPS_CONCURRENCY": threads}
    if kind == "parsec":
        return _repeat([parsecmgmt(proc.get("parsec_home")), "-a", "run", "-p", proc["benchmark"], "-i",
                        proc.get("input", "simmedium"), "-n", threads], "runs/s"), {}
    if kind == "command":
        argv = list(proc["argv"])
        # The load runs in its own work folder; a relative program path means the one that
        # availability() found, relative to where the lab was started.
        if os.sep in argv[0] and not os.path.isabs(argv[0]):
            argv[0] = os.path.abspath(argv[0])
        return argv, {}
    raise ValueError(f"unknown kind {kind!r}")


def figures_of(proc, stdout, stderr, workdir):
    """The load's own progress figures from its output: at least throughput and unit."""
    kind = proc["kind"]
    if kind in ("cpu", "onoff") or kind in ("x264", "vips", "parsec"):
        for line in reversed(stdout.splitlines()):
            if line.startswith("{"):
                try:
                    return json.loads(line)
                except ValueError:
                    break
        return {"throughput": None, "unit": None, "error": "the load printed no figures"}
    if kind == "stress-ng":
        return _stress_ng_figures(Path(workdir) / "metrics.yaml")
    if kind == "command":
        rx = proc.get("throughput_regex")
        if not rx:
            return {"throughput": None, "unit": None}
        matches = re.findall(rx, stdout + "\n" + stderr)
        value = matches[-1] if matches else None
        if isinstance(value, tuple):
            value = value[0]
        try:
            value = float(value) if value is not None else None
        except ValueError:
            value = None
        return {"throughput": value, "unit": proc.get("throughput_unit", "units/s")}
    return {"throughput": None, "unit": None}


def _stress_ng_figures(path):
    import yaml
    try:
        with open(path) as f:
            data = yaml.safe_load(f) or {}
    except (OSError, yaml.YAMLError) as e:
        return {"throughput": None, "unit": "bogo ops/s", "error": f"no stress-ng metrics: {e}"}
    metrics = data.get("metrics") or []
    ops = sum(m.get("bogo-ops", 0) for m in metrics)
    rate = sum(m.get("bogo-ops-per-second-real-time", 0) for m in metrics)
    return {"throughput": rate, "unit": "bogo ops/s", "bogo_ops": ops,
            "stressors": [m.get("stressor") for m in metrics]}
