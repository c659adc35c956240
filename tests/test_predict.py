"""Eq. 1-3 of the AIR paper on hand-made load timelines with known answers."""
import math

import pytest

from analysis.predict import eq1, eq3_factor, load_intervals, predicted_slowdown, predicted_time
from analysis.stats import mean_ci


def cpu(start, stop=None, threads=1):
    return {"kind": "cpu", "start_s": start, "stop_s": stop, "threads": threads}


def test_eq1_paper_values():
    assert eq1(8, 1, 8) == pytest.approx(9 / 8)      # the paper's Core i7 case
    assert eq1(48, 1, 48) == pytest.approx(49 / 48)  # Magny-Cours
    assert eq1(2, 1, 2) == 1.5
    assert eq1(2, 0, 4) == 1.0                       # threads and loads fit: no slowdown


def test_eq3_gives_up_contended_contexts():
    assert eq3_factor(2, 1, 2) == 2.0
    assert eq3_factor(8, 5, 8) == pytest.approx(8 / 3)
    assert eq3_factor(2, 5, 2) == 2.0                # at least one thread stays
    assert eq3_factor(4, 0, 4) == 1.0


def test_whole_run_load():
    assert predicted_time(10.0, [cpu(0.0)], 2, 2) == pytest.approx(15.0)
    assert predicted_slowdown(10.0, [cpu(0.0)], 2, 2, adaptive=True) == pytest.approx(2.0)
    assert predicted_time(10.0, [], 2, 2) == pytest.approx(10.0)


def test_load_that_starts_and_stops_mid_run():
    # 2 s alone (2 s of work), 4 s with a load at rate 2/3 (8/3 s of work), then alone:
    # 10 - 2 - 8/3 = 16/3 s more. Total 2 + 4 + 16/3.
    t = predicted_time(10.0, [cpu(2.0, 6.0)], 2, 2)
    assert t == pytest.approx(2 + 4 + 16 / 3)


def test_overlapping_loads_and_onoff_share():
    loads = [cpu(0.0, 4.0), cpu(2.0, None), {"kind": "onoff", "start_s": 0.0, "stop_s": None,
                                             "threads": 1, "figures": {"busy_share": 0.5}}]
    iv = load_intervals(loads)
    assert [(a, b, n) for a, b, n in iv] == [(0.0, 2.0, 1.5), (2.0, 4.0, 2.5), (4.0, None, 1.5)]
    # rates: 2/3.5, 2/4.5, 2/3.5 on 2 cores with 2 threads
    t0 = 5.0
    done = 2 * 2 / 3.5 + 2 * 2 / 4.5
    assert predicted_time(t0, loads, 2, 2) == pytest.approx(4 + (t0 - done) * 3.5 / 2)


def test_eq2_is_the_sum_of_interval_times_by_eq1():
    """T_ideal = sum_j T_j * S_j: 3 s of no-load work alone, 2 s of work under two loads
    (S = 2 on 2 cores), the rest alone again."""
    loads = [cpu(3.0, 7.0), cpu(3.0, 7.0)]  # 4 s of wall time at S = 2: T_j = 2 s of work
    t0 = 10.0
    assert predicted_time(t0, loads, 2, 2) == pytest.approx(3 * 1 + 2 * 2 + 5 * 1)
    assert predicted_slowdown(t0, loads, 2, 2) == pytest.approx(12 / 10)


def test_eq3_load_that_starts_and_stops_mid_run():
    # Adaptive, 2 threads on 2 cores: alone for 2 s (2 s of work), then one load for 4 s:
    # one thread yields, rate 1/2 (2 s of work), then alone: 6 s more. Total 12 s.
    assert predicted_time(10.0, [cpu(2.0, 6.0)], 2, 2, adaptive=True) == pytest.approx(12.0)
    # 4 threads on 4 cores, 2 loads from 1 s to 3 s: N_j = 2, rate 1/2 while they run.
    assert predicted_time(5.0, [cpu(1.0, 3.0, threads=2)], 4, 4, adaptive=True) == pytest.approx(1 + 2 + 3)
    # Eq. 3 gives up whole threads where Eq. 1 shares: adaptive is never the faster prediction.
    assert predicted_time(10.0, [cpu(2.0, 6.0)], 2, 2, adaptive=True) > predicted_time(10.0, [cpu(2.0, 6.0)], 2, 2)


def test_load_stopping_before_the_engine_started_and_open_ended_loads():
    # A load that stopped at 0 (clamped start and stop) never overlaps the run.
    assert predicted_time(4.0, [cpu(-1.0, 0.0)], 2, 2) == pytest.approx(4.0)
    # A load with no recorded start is ignored; one still running at the end counts to the end.
    assert predicted_time(4.0, [{"kind": "cpu", "start_s": None, "stop_s": None, "threads": 1}], 2, 2) == 4.0
    assert predicted_time(4.0, [cpu(1.0)], 2, 2) == pytest.approx(1 + 3 * 1.5)


def test_run_ends_before_the_load_starts():
    assert predicted_time(1.0, [cpu(5.0)], 2, 2) == pytest.approx(1.0)


def test_mean_ci():
    m, h, n = mean_ci([1.0, 2.0, 3.0])
    assert (m, n) == (2.0, 3) and h == pytest.approx(4.303 * 1 / math.sqrt(3), abs=1e-3)
    assert mean_ci([5.0])[1] == 0.0
    assert math.isnan(mean_ci([])[0])
