"""stress-ng: any stressor with its arguments; bogo ops/s from its YAML metrics."""
from pathlib import Path

from loads.kinds.common import program

NAME = "stress-ng"
SCHEMA = {
    "stressor": {
        "type": "string",
        "pattern": "^[a-z0-9-]+$",
        "description": "stress-ng: the stressor name, e.g. cpu, cache, vm, matrix.",
    },
    "args": {
        "type": "array",
        "items": {"type": "string"},
        'description': "stress-ng: extra options, e.g. ['--vm-bytes', '256M'].",
    },
}
REQUIRED = ("stressor",)


def availability(spec):
    return program("stress-ng", "stress-ng")


def describe(proc):
    return " ".join(["stress-ng", f"--{proc['stressor']}", str(proc["threads"]), *proc.get("args", [])])


def command(proc, workdir):
    # A day-long timeout: the launcher stops it (SIGTERM makes stress-ng write metrics).
    # --keep-name: by default stress-ng names its workers by writing over its argv and the
    # environment after it, and the workers lose the load's tag (AIRLAB_LOAD_ID/_SET) that
    # the watchdog, the noise accounting and every leak check find processes by.
    return ["stress-ng", f"--{proc['stressor']}", str(proc["threads"]), *proc.get("args", []),
            "--timeout", "86400", "--keep-name", "--metrics-brief",
            "--yaml", str(Path(workdir) / "metrics.yaml")], {}


def figures(proc, stdout, stderr, workdir):
    import yaml
    try:
        with open(Path(workdir) / "metrics.yaml") as f:
            data = yaml.safe_load(f) or {}
    except (OSError, yaml.YAMLError) as e:
        return {"throughput": None, "unit": "bogo ops/s", "error": f"no stress-ng metrics: {e}"}
    metrics = data.get("metrics") or []
    ops = sum(m.get("bogo-ops", 0) for m in metrics)
    rate = sum(m.get("bogo-ops-per-second-real-time", 0) for m in metrics)
    return {"throughput": rate, "unit": "bogo ops/s", "bogo_ops": ops,
            "stressors": [m.get("stressor") for m in metrics]}


def doctor_lines():
    return [(*availability({"kind": NAME}), NAME)]
