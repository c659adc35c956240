"""cfs: nothing changed; Linux's default scheduler shares the cores (the paper's setting)."""


def availability(spec):
    return True, None


def apply(s, spec):
    s.applied = {"scheduler": "SCHED_NORMAL (unchanged)"}
