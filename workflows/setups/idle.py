"""idle: the loads run under SCHED_IDLE, so they get a CPU only when the engine leaves it idle."""
import os


def availability(spec):
    return (True, None) if hasattr(os, "SCHED_IDLE") else (False, "this system has no SCHED_IDLE")


def _idle():
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))


def apply(s, spec):
    s.load_hooks = s.hooks(preexec=_idle)
    s.applied = {"loads_policy": "SCHED_IDLE"}
