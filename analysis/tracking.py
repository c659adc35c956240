"""How closely a run's active threads track the ideal (Fig. 11/12): the ideal is the
threads that fit beside the loads running at that moment, cores - loads (at least 1, at
most the engine's threads), as the figure draws it; the gap is the mean of |active - ideal|
over the timeline samples taken while at least one load ran."""
from loads.kinds import cpu_demand


def loads_running(loads, t):
    """CPUs demanded by the loads running at time t (loads.kinds.cpu_demand; load times are
    relative to the engine's start)."""
    return sum(cpu_demand(ld) for ld in loads
               if ld.get("start_s") is not None and ld["start_s"] <= t
               and (ld.get("stop_s") is None or ld["stop_s"] > t))


def ideal_threads(threads, cores, n_loads):
    return max(1, min(threads, cores - n_loads))


def tracking_gap(record):
    """Mean |active threads - ideal| over the loaded part of one trial record, or None when
    the record has no timeline or no load ran during it."""
    timeline, loads = record.get("timeline") or [], record.get("loads") or []
    threads = record["engine"]["config"]["threads"]
    cores = (record.get("machine") or {}).get("cores") or threads
    gaps = []
    for s in timeline:
        ne = loads_running(loads, s["t_s"])
        if ne > 0:
            gaps.append(abs(s["active_threads"] - ideal_threads(threads, cores, ne)))
    return sum(gaps) / len(gaps) if gaps else None
