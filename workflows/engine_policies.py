"""What the engine offers, asked of the engine (`airpdes --describe`), so the Python side keeps
no lists of mode, detector or model names: a new mode registered in engine/src/registry.c is
known here without an edit. Trial records say the same per run (`mode_adaptive` in the
engine's JSON); this is for decisions taken before any trial ran (the time estimate)."""
import functools
import json

from airbase import bounded_run
from airbase.paths import AIRPDES


class EngineDescribeError(Exception):
    pass


@functools.lru_cache(maxsize=1)
def describe():
    """The engine's registries: {"modes": [{"name", "help", "default", "adapts_threads", ...}], ...}."""
    try:
        r = bounded_run.run([str(AIRPDES), "--describe"], timeout=30, text=True)
    except OSError as e:
        raise EngineDescribeError(f"cannot run {AIRPDES} --describe ({e.strerror}); build it: make build") from e
    if r.returncode != 0:
        raise EngineDescribeError(f"{AIRPDES} --describe failed: {r.stderr.strip() or r.returncode}")
    return json.loads(r.stdout)


def is_adaptive(mode):
    """Whether MODE deactivates and reactivates threads (adm, ladm today)."""
    for m in describe()["modes"]:
        if m["name"] == mode:
            return bool(m["adapts_threads"])
    raise EngineDescribeError(f"the engine has no mode {mode!r}")


def work_options():
    """The options that change which events are simulated (the model, its shape and
    parameters, the seed, the end time): the engine declares them (option_def.h's `work`),
    and every other option, each policy's included, only changes how they are run."""
    return frozenset(describe()["work_options"])
