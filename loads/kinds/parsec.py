"""parsec: a PARSEC 3.0 benchmark from the user's PARSEC tree, resolved once before the
trial (loads/parsec.py: binary, input, command line from PARSEC's own files) and run
itself, again and again, in a run folder of its own; runs/s and the program's CPU seconds.
A run that fails is never counted."""
from pathlib import Path

from loads import parsec as tree
from loads.kinds.common import json_figures, repeat

NAME = "parsec"
SCHEMA = {
    "benchmark": {
        "enum": [
            "blackscholes", "bodytrack", "canneal", "dedup", "facesim", "ferret", "fluidanimate",
            "freqmine", "raytrace", "streamcluster", "swaptions", "vips", "x264", "splash2x.barnes",
            "splash2x.cholesky", "splash2x.fft", "splash2x.fmm", "splash2x.lu_cb",
            "splash2x.lu_ncb", "splash2x.ocean_cp", "splash2x.ocean_ncp", "splash2x.radiosity",
            "splash2x.radix", "splash2x.raytrace", "splash2x.volrend", "splash2x.water_nsquared",
            "splash2x.water_spatial",
        ],
        "description": "parsec: the PARSEC 3.0 benchmark, e.g. blackscholes (or splash2x.NAME).",
    },
    "parsec_home": {
        "type": "string",
        "minLength": 1,
        "description": ("parsec: the PARSEC 3.0 folder (holding bin/parsecmgmt) [$PARSEC_HOME, then "
                        "PATH]."),
    },
    "input": {
        "enum": ["test", "simdev", "simsmall", "simmedium", "simlarge", "native"],
        "description": "parsec: input set [the largest the PARSEC tree has].",
    },
    "build_config": {
        "type": "string",
        "pattern": "^[A-Za-z0-9_.+-]+$",
        "description": ("parsec: build configuration, as parsecmgmt -c names it (gcc-pthreads, gcc, ...) "
                        "[the first built of gcc-pthreads, gcc, gcc-openmp, gcc-tbb]."),
    },
}
REQUIRED = ("benchmark",)


def availability(spec):
    return tree.availability(spec)


def resolved(proc):
    """For its thread count: binary, arguments, environment; the input and build chosen."""
    res = tree.resolve(proc, proc["threads"])
    return {"input": res["input"], "build_config": res["build_config"], "parsec": res}


def describe(proc):
    res = proc.get("parsec")
    if not res:
        return f"PARSEC {proc['benchmark']} (not available here)"
    return f"real PARSEC ({res['origin']}): {proc['benchmark']} -i {res['input']} -n {proc['threads']}, " \
           f"{res['build_config']} build"


def prepare(proc, workdir=None):
    """The input unpacked once into the lab's cache; the load's own run folder in workdir."""
    res = proc["parsec"]
    source = tree.unpacked_input(res["input_archive"]) if res["input_archive"] else None
    if workdir is not None:
        tree.make_run_folder(source, Path(workdir) / "run")


def command(proc, workdir):
    # The benchmark itself, in the run folder prepare() made (relative: under gang the job
    # starts in the load's work folder too); parsecmgmt is not in the loop.
    res = proc["parsec"]
    return repeat([res["binary"], *res["args"]], "runs/s", chdir="run"), dict(res["env"])


def figures(proc, stdout, stderr, workdir):
    return json_figures(stdout)


def doctor_lines():
    """Where PARSEC is, and each benchmark the shipped profiles use: ready, or what it lacks."""
    from loads.parsec_prepare import shipped_benchmarks
    home, origin = tree.find_home()
    lines = [(home is not None, origin if home else tree.HELP, NAME)]
    if home is not None:
        for bench in shipped_benchmarks():
            try:
                res = tree.resolve({"kind": NAME, "benchmark": bench})
                lines.append((True, f"input {res['input']}, {res['build_config']} build", f"  parsec {bench}"))
            except tree.Unavailable as e:
                lines.append((False, str(e), f"  parsec {bench}"))
    return lines
