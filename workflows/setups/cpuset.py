"""cpuset: space partitioning; the engine and the loads on disjoint CPU sets (cgroup cpuset)."""
import os

from workflows.setups import cgroups


def availability(spec):
    version, reason = cgroups.detect()
    if not version:
        return False, reason
    if len(os.sched_getaffinity(0)) < 2:
        return False, "cpuset needs at least 2 CPUs (engine and loads on disjoint sets)"
    return True, None


def apply(s, spec):
    cpus = sorted(os.sched_getaffinity(0))
    eng = spec.get("engine_cpus") or ",".join(map(str, cpus[:-1]))
    lds = spec.get("loads_cpus") or str(cpus[-1])
    if cgroups.cpu_list(eng) & cgroups.cpu_list(lds):
        raise cgroups.CgroupError(f"cpuset: engine_cpus {eng} and loads_cpus {lds} overlap")
    cg = s.make_cgroups()
    s.applied["engine"] = cg.set_cpus("engine", eng)
    s.applied["loads"] = cg.set_cpus("loads", lds)
