"""quota: a CPU bandwidth limit on the loads together (cpu.max / cfs_quota_us), e.g. half
of one CPU as in the paper's Table I."""
from workflows.setups import cgroups

CONTROLLERS = ("cpu",)  # cpu alone: a machine without the cpuset controller can still run it


def availability(spec):
    return cgroups.availability(CONTROLLERS)


def apply(s, spec):
    cg = s.make_cgroups(CONTROLLERS)
    s.applied["loads"] = cg.set_quota("loads", spec["loads_cpu_share"], spec.get("period_us", 100000))
