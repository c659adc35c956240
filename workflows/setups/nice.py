"""nice: the loads run at a nice value (lower priority under the fair scheduler)."""
import os


def availability(spec):
    return True, None


def apply(s, spec):
    n = spec["loads_nice"]
    s.load_hooks = s.hooks(preexec=lambda: os.setpriority(os.PRIO_PROCESS, 0, n))
    s.applied = {"loads_nice": n}
