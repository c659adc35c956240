"""Which no-load runs a trial's slowdown is divided by: one rule for the tables
(analysis/aggregate.py) and the claims (analysis/claim_kinds.py).

A loaded trial is compared with the no-load runs of the same engine configuration in its
own repetition block: repetitions run interleaved, so a machine whose speed drifts moves
both sides of the ratio. A no-load run that ran far (the host ran the two vCPUs apart,
workflows/placement.py: measured by the engine's own barrier hand-offs, not by its time)
took up to 1.5x as long, which says nothing about the engine; where its block has no near
run the other blocks' near runs stand in. In the 8f6d61a pair 12 and 15 of 114 no-load
trials were kept far after their re-runs, and one (4.54 s beside 2.6-2.7 s) halved its
block's slowdowns and widened Fig. 1's intervals (docs/reference-runs.md). Far runs are
used only where no block of the configuration has a near one."""
from analysis.stats import number
from workflows import placement

# The columns that make two rows the same engine configuration (a loaded run and its
# no-load baseline differ only in profile and setup).
ENGINE_KEY = ("mode", "sync", "model", "remote", "epg", "detector", "reactivation", "apte_threshold", "barrier_wait",
              "optimism_window", "threads")

# Where a baseline came from (the table's baseline_from column).
OWN, OTHERS, OWN_FAR, OTHERS_FAR = "own block", "other blocks", "own block, far", "other blocks, far"


def engine_key(row):
    return tuple(str(row.get(k, "")) for k in ENGINE_KEY)


def is_baseline_run(row):
    """A successful no-load run without a scheduling setup: what slowdowns are divided by."""
    return (row.get("status") == "ok" and row.get("profile") == "none"
            and row.get("setup", "cfs") in ("cfs", "") and number(row.get("wall_s")) is not None)


def ran_far(row):
    """A table row's kept run ran far: as the runner judged it (ran_far: its share of far
    barrier waits against its configuration's usual one), else, in tables from before that
    column, by the share alone or the probe after it (ended_far); False when nothing was recorded."""
    if str(row.get("ran_far", "")) in ("0", "1"):
        return str(row["ran_far"]) == "1"
    return placement.ran_far(number(row.get("far_share")), str(row.get("ended_far", "")) == "1")


class Baselines:
    """The no-load runs of one table (or of one experiment's rows), by configuration and block."""

    def __init__(self, rows):
        self._blocks = {}
        for r in rows:
            if is_baseline_run(r):
                self._blocks.setdefault(engine_key(r), {}).setdefault(str(r.get("rep")), []).append(r)

    def of(self, row):
        """(wall times of the no-load runs the row is divided by, where they came from: OWN,
        OTHERS, OWN_FAR or OTHERS_FAR); ([], "") when its configuration has none."""
        blocks, rep = self._blocks.get(engine_key(row), {}), str(row.get("rep"))
        own = blocks.get(rep, [])
        others = [b for k, rs in blocks.items() if k != rep for b in rs]
        for runs, source in (([b for b in own if not ran_far(b)], OWN), ([b for b in others if not ran_far(b)], OTHERS),
                             (own, OWN_FAR), (others, OTHERS_FAR)):
            if runs:
                return [number(b["wall_s"]) for b in runs], source
        return [], ""

    def wall(self, row):
        """The mean wall time of the row's baseline runs, or None."""
        walls, _ = self.of(row)
        return sum(walls) / len(walls) if walls else None
