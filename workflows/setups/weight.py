"""weight: relative CPU weights of the engine's and the loads' groups (cpu.weight / cpu.shares)."""
from workflows.setups import cgroups


def availability(spec):
    version, reason = cgroups.detect()
    return (True, None) if version else (False, reason)


def apply(s, spec):
    cg = s.make_cgroups()
    s.applied["engine"] = cg.set_weight("engine", spec["engine_weight"])
    s.applied["loads"] = cg.set_weight("loads", spec["loads_weight"])
