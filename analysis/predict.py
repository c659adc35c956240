"""The AIR paper's predictions of a run's time under interference (section 3 and 6).

Eq. 1, proportional slowdown during interval j:  S_j = (N_p + N_e,j) / N_c  (1 when the
       threads and loads fit on the cores), N_p engine threads, N_e,j loads, N_c cores.
Eq. 2, ideal time of a run:  T_ideal = sum_j T_j * S_j, T_j the no-load time of the work
       done in interval j.
Eq. 3, expected time of an adaptive run (ADM, LADM) that gives up N_j threads:
       T_expected = sum_j N_p / (N_p - N_j) * T_j, N_j = threads that must yield.

The load timeline is measured (each load's real start and stop in the trial, relative to
the engine's start), so intervals are wall-clock intervals of the loaded run. We walk
through them consuming the baseline's work: during interval j the run progresses at
1 / S_j of its no-load speed. The result is the time at which the baseline work (T0) is
done: Eq. 2 with the T_j found on the way. An on-off load counts as its measured busy
share of a CPU (a 50% duty cycle is half a load): loads.kinds.cpu_demand."""
from loads.kinds import cpu_demand


def eq1(n_threads, n_loads, n_cores):
    """Proportional slowdown S_j (Eq. 1)."""
    total = n_threads + n_loads
    return max(1.0, total / n_cores)


def eq3_factor(n_threads, n_loads, n_cores):
    """N_p / (N_p - N_j) (Eq. 3): the adaptive engine gives up the hardware contexts the
    loads take, keeping at least one thread."""
    yielded = min(max(0.0, n_threads + n_loads - n_cores), n_threads - 1)
    return n_threads / (n_threads - yielded)


def load_intervals(loads, end_s=None):
    """[(t_start, t_end, N_e)] from load records (start_s, stop_s, threads, demand).
    A load without a stop time runs to the end of the run (None = open)."""
    edges = {0.0}
    for ld in loads:
        if ld.get("start_s") is None:
            continue
        edges.add(max(0.0, ld["start_s"]))
        if ld.get("stop_s") is not None:
            edges.add(max(0.0, ld["stop_s"]))
    points = sorted(edges)
    out = []
    for i, t in enumerate(points):
        nxt = points[i + 1] if i + 1 < len(points) else None
        ne = sum(cpu_demand(ld) for ld in loads
                 if ld.get("start_s") is not None and ld["start_s"] <= t
                 and (ld.get("stop_s") is None or ld["stop_s"] > t))
        out.append((t, nxt, ne))
    return out


def predicted_time(t0, loads, n_threads, n_cores, adaptive=False):
    """Predicted wall time of a run whose no-load time is t0, next to `loads`
    (Eq. 2 with Eq. 1 rates, or Eq. 3 rates when adaptive)."""
    if t0 <= 0:
        return 0.0
    factor = eq3_factor if adaptive else eq1
    work_left, t = t0, 0.0
    for start, end, ne in load_intervals(loads):
        rate = 1.0 / factor(n_threads, ne, n_cores)
        span = None if end is None else end - start
        if span is None or span * rate >= work_left:
            return start + work_left / rate
        work_left -= span * rate
        t = end
    return t + work_left


def predicted_slowdown(t0, loads, n_threads, n_cores, adaptive=False):
    return predicted_time(t0, loads, n_threads, n_cores, adaptive) / t0 if t0 > 0 else float("nan")
