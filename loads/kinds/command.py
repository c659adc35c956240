"""command: any program, as an argv list (never a shell string); its throughput is group 1
of the last match of throughput_regex in its output, if given."""
import os
import re
import shutil

NAME = "command"
SCHEMA = {
    "argv": {
        "type": "array",
        "items": {"type": "string"},
        "minItems": 1,
        "description": "command: the program and its arguments (never a shell string).",
    },
    "throughput_regex": {
        "type": "string",
        "description": ("command: a regular expression whose group 1 (last match in the output) is the "
                        "throughput."),
    },
    "throughput_unit": {"type": "string", "description": "command: the unit of that throughput."},
}
REQUIRED = ("argv",)


def availability(spec):
    prog = spec["argv"][0]
    found = shutil.which(prog) if os.sep not in prog else (prog if os.access(prog, os.X_OK) else None)
    return (True, None) if found else (False, f"command {prog!r} not found")


def describe(proc):
    return " ".join(map(str, proc["argv"]))


def command(proc, workdir):
    argv = list(proc["argv"])
    # The load runs in its own work folder; a relative program path means the one that
    # availability() found, relative to where the lab was started.
    if os.sep in argv[0] and not os.path.isabs(argv[0]):
        argv[0] = os.path.abspath(argv[0])
    return argv, {}


def figures(proc, stdout, stderr, workdir):
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


def doctor_lines():
    return []  # any program: nothing to check until a profile names one
