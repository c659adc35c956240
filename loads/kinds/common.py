"""What several load kinds share: a program looked up on PATH, a finite program run again
and again by loads.repeat, and figures read from the last JSON line a load prints."""
import json
import shutil
import sys


def program(name, package):
    """(True, None) when `name` is on PATH, else (False, which Debian package has it)."""
    return (True, None) if shutil.which(name) else (False, f"{name} is not installed (Debian package {package})")


def repeat(argv, unit, units_per_run=1, partial_regex=None, partial_scale=1.0, chdir=None):
    """Run argv over and over until stopped; loads.repeat reports completed runs per second
    (plus the units a stopped run completed, when partial_regex reads its progress)."""
    partial = ["--partial-regex", partial_regex, "--partial-scale", str(partial_scale)] if partial_regex else []
    where = ["--chdir", chdir] if chdir else []
    return [sys.executable, "-m", "loads.repeat", "--unit", unit, "--units-per-run",
            str(units_per_run), *partial, *where, "--", *argv]


def json_figures(stdout):
    """The last line of the load's output that is a JSON object (airload, loads.repeat)."""
    for line in reversed(stdout.splitlines()):
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                break
    return {"throughput": None, "unit": None, "error": "the load printed no figures"}
