"""Far runs set aside from the figures and claims where near repetitions stand.

A run the host placed far (its two vCPUs apart, workflows/placement.py: most of its
barrier hand-offs at far speed, measured by the engine during the run, not from its time)
measures the host, not the engine: in the 8f6d61a pair the loaded FM runs of Fig. 1 that
ran far took 1.4-1.8x their near repetitions (remote 0.1, one load: 3.46 against
1.97-2.16), and 49 and 44 of each run's ~150 loaded trials ran so. Loaded trials are not
re-run for it (they last 5-47 s and a far phase often outlasts them: placement.py), so the
analysis sets such a run aside when at least MIN_NEAR repetitions of the same trial (the
same configuration, profile and setup) ran near: its table row keeps every figure, with
status SET_ASIDE and the reason; figures and claims use the near repetitions. Where fewer
ran near, every repetition stays in, far ones included (the caption counts them). The rule
reads only the placement, never the run's time, so it cannot pick the fast runs."""
from analysis.baselines import ran_far
from workflows.experiments import repeated_trial

SET_ASIDE = "set aside"
# Near repetitions a trial needs before its far ones go: an interval from two values uses
# t = 12.7 (one degree of freedom), from three 4.3, so with fewer the far run costs less
# than its absence. Tried at 2 on the 8f6d61a pair first: the figures' widths were the same,
# but claims judged on three repetitions fell to two (epg: [-4.5, 7.7]).
MIN_NEAR = 3


def _trial_of(row):
    """The trial a row repeats: its experiment and its id without the repetition."""
    return (row.get("experiment"), repeated_trial(row.get("trial", "")))


def set_aside_far(rows):
    """Mark far runs SET_ASIDE where at least MIN_NEAR repetitions of their trial ran near;
    rows: the table's rows after the slowdowns were computed (aggregate.add_slowdowns)."""
    trials = {}
    for r in rows:
        if r["status"] == "ok":
            trials.setdefault(_trial_of(r), []).append(r)
    for reps in trials.values():
        far = [r for r in reps if ran_far(r)]
        near = len(reps) - len(far)
        if not far or near < MIN_NEAR:
            continue
        for r in far:
            share = r.get("far_share")
            how = (f"{share:.0%} of its barrier waits at far speed" if isinstance(share, (int, float))
                   else "far at its end")
            r["status"] = SET_ASIDE
            r["reason"] = (f"the host ran the CPUs far apart ({how}); the {near} near repetitions of this "
                           "trial stand for it")
    return rows
