"""gang: the engine and the loads are separate jobs of a private single-node SLURM with
PreemptMode=GANG that take turns every time_slice_s seconds (paper section 8.7)."""
from workflows.setups import slurm


def availability(spec):
    return slurm.availability()


def apply(s, spec):
    # One job for the engine and one per load process: all must fit the partition at once,
    # or the loads beyond it stay pending instead of taking turns.
    s.gang = slurm.GangCluster(s.workdir, spec.get("time_slice_s", 5), jobs=1 + s.load_jobs())
    s.gang.start()
    s.engine_hooks = s.hooks(wrap_argv=lambda argv, load=None: s.gang.wrap(argv, "engine"))
    # A load's start is its job's first turn (often a slice or two after submission), so
    # Eq. 1/2 see the interval it really competed in.
    s.load_hooks = s.hooks(wrap_argv=lambda argv, load: s.gang.wrap(argv, f"load-{load['name']}"),
                           ran_since=lambda load: s.gang.first_ran(f"airlab-load-{load['name']}") if s.gang else None)
    s.applied = s.gang.describe()
