"""cpu: a tight arithmetic loop per thread (engine/build/airload cpu); work units/s."""
import os

from airbase.paths import AIRLOAD
from loads.kinds.common import json_figures

NAME = "cpu"
SCHEMA = {}
REQUIRED = ()


def availability(spec):
    return (True, None) if os.access(AIRLOAD, os.X_OK) else (False, f"{AIRLOAD} is missing: build the engine (make build)")


def describe(proc):
    return f"airload cpu, {proc['threads']} thread(s)"


def command(proc, workdir):
    return [str(AIRLOAD), "cpu", "--threads", str(proc["threads"])], {}


def figures(proc, stdout, stderr, workdir):
    return json_figures(stdout)


def doctor_lines():
    return [(*availability({"kind": NAME}), NAME)]
