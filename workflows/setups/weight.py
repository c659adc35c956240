"""weight: relative CPU weights of the engine's and the loads' groups (cpu.weight / cpu.shares)."""
from workflows.setups import cgroups

CONTROLLERS = ("cpu",)  # cpu alone: a machine without the cpuset controller can still run it


def availability(spec):
    return cgroups.availability(CONTROLLERS)


def apply(s, spec):
    cg = s.make_cgroups(CONTROLLERS)
    s.applied["engine"] = cg.set_weight("engine", spec["engine_weight"])
    s.applied["loads"] = cg.set_weight("loads", spec["loads_weight"])
