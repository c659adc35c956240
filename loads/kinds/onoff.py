"""onoff: compute ctp_us microseconds, sleep as long, repeat (the paper's CTP load;
engine/build/airload onoff); work units/s with the measured on/off times."""
from airbase.paths import AIRLOAD
from loads.kinds import cpu
from loads.kinds.common import json_figures

NAME = "onoff"
SCHEMA = {
    "ctp_us": {
        "type": "number",
        "exclusiveMinimum": 0,
        "description": "onoff: on period = off period, microseconds.",
    },
}
REQUIRED = ("ctp_us",)
NOMINAL_DUTY = 0.5  # ctp_us of work, then as long asleep


def measured_duty(figures):
    """The share of the time it computed, as the load measured it (None if not reported)."""
    return figures.get("busy_share")
availability = cpu.availability  # the same program


def describe(proc):
    return f"airload onoff --ctp-us {proc['ctp_us']}, {proc['threads']} thread(s)"


def command(proc, workdir):
    return [str(AIRLOAD), "onoff", "--ctp-us", str(proc["ctp_us"]), "--threads", str(proc["threads"])], {}


def figures(proc, stdout, stderr, workdir):
    return json_figures(stdout)


def doctor_lines():
    return [(*availability({"kind": NAME}), NAME)]
