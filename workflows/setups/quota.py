"""quota: a CPU bandwidth limit on the loads together (cpu.max / cfs_quota_us), e.g. half
of one CPU as in the paper's Table I."""
from workflows.setups import cgroups


def availability(spec):
    version, reason = cgroups.detect()
    return (True, None) if version else (False, reason)


def apply(s, spec):
    cg = s.make_cgroups()
    s.applied["loads"] = cg.set_quota("loads", spec["loads_cpu_share"], spec.get("period_us", 100000))
