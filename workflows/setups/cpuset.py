"""cpuset: space partitioning; the engine and the loads on disjoint CPU sets (cgroup cpuset)."""
import os

from airbase import cpus
from workflows.setups import cgroups

CONTROLLERS = ("cpuset",)  # cpuset alone: a machine without the cpu controller can still run it


def _sets(spec):
    """(engine CPUs, loads CPUs) as cpuset strings, defaults resolved for this machine."""
    cpus = sorted(os.sched_getaffinity(0))
    return spec.get("engine_cpus") or ",".join(map(str, cpus[:-1])), spec.get("loads_cpus") or str(cpus[-1])


def availability(spec):
    version, reason = cgroups.detect(CONTROLLERS)
    if not version:
        return False, reason
    usable = os.sched_getaffinity(0)
    if len(usable) < 2:
        return False, "cpuset needs at least 2 CPUs (engine and loads on disjoint sets)"
    # Checked here, not when the cgroup refuses it, so doctor and the trial's exit 3 say why.
    eng, lds = _sets(spec)
    if cpus.cpu_list(eng) & cpus.cpu_list(lds):
        return False, f"engine_cpus {eng} and loads_cpus {lds} overlap"
    for key, text in (("engine_cpus", eng), ("loads_cpus", lds)):
        if not cpus.cpu_list(text) <= usable:
            return False, f"{key} {text} is not within this machine's usable CPUs {','.join(map(str, sorted(usable)))}"
    return True, None


def apply(s, spec):
    eng, lds = _sets(spec)
    cg = s.make_cgroups(CONTROLLERS)
    s.applied["engine"] = cg.set_cpus("engine", eng)
    s.applied["loads"] = cg.set_cpus("loads", lds)
