"""airload keeps its promises: onoff holds its duty cycle and reports what it achieved,
cpu keeps one CPU busy, both print their figures when stopped by SIGTERM, bad input is
one line and exit 2."""
import json
import os
import signal
import subprocess
import time

import pytest

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """utime + stime of a process (all its threads), from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def _realtime():
    """Run the measured load at real-time priority when allowed (root here): the machine is
    shared with other builds (load average 5-7 on 2 cores is common), and under CFS a load
    then gets only its fair share, far below its demand, so the measurement would say more
    about the neighbours than about airload. SCHED_FIFO gives it the CPU whenever it wants
    it, and the kernel's RT throttling (95%) bounds the damage of a bug. Without the right
    to do so the load runs normally and the tolerances below still apply."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
    except OSError:
        pass


def run_measured(argv, seconds):
    """Run argv for `seconds`, then SIGTERM it; return (its CPU share of one core, its JSON)."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, preexec_fn=_realtime)
    t0 = time.monotonic()
    time.sleep(seconds)
    cpu = cpu_seconds(p.pid)
    wall = time.monotonic() - t0
    p.send_signal(signal.SIGTERM)
    out, _ = p.communicate(timeout=10)
    assert p.returncode == 0
    return cpu / wall, json.loads(out.strip().splitlines()[-1])


@pytest.mark.parametrize("ctp", [1000, 10000])
def test_onoff_keeps_its_duty_cycle(airload, ctp):
    share, fig = run_measured([airload, "onoff", "--ctp-us", str(ctp)], 3.0)
    # Demand is 50% of one CPU. Tolerance 0.35-0.65: without real-time priority the load
    # can be descheduled during an on phase (its on time stretches in wall time while its
    # CPU time does not) and each sleep overshoots by the wake-up latency (tens of us,
    # a few % of a 1 ms period). A broken duty cycle (always on = 1.0, never on = 0) fails.
    assert 0.35 <= share <= 0.65, f"CPU share {share:.2f} at CTP {ctp} us"
    assert 0.35 <= fig["busy_share"] <= 0.65
    # The achieved periods, as measured by the load itself, are close to the CTP.
    assert ctp * 0.9 <= fig["mean_on_us"] <= ctp * 1.5
    assert ctp * 0.9 <= fig["mean_off_us"] <= ctp * 2.0
    assert fig["cycles"] >= 3.0 / (2 * ctp * 1e-6) * 0.5


def test_onoff_reports_short_periods_honestly(airload):
    _, fig = run_measured([airload, "onoff", "--ctp-us", "10"], 1.0)
    # A 10 us sleep cannot take 10 us: the figures report what really happened.
    assert fig["ctp_us"] == 10
    assert fig["mean_on_us"] >= 10 and fig["mean_off_us"] >= 10
    assert abs(fig["busy_share"] - fig["on_s"] / (fig["on_s"] + fig["off_s"])) < 1e-3
    # Measured, not assumed: on and off times cover the run's wall time (one thread). Figures
    # computed as cycles x CTP would cover only a fraction of it, as each cycle overruns.
    assert abs(fig["on_s"] + fig["off_s"] - fig["wall_s"]) < 0.1 * fig["wall_s"], fig


def test_cpu_keeps_a_core_busy_and_reports_on_sigterm(airload):
    share, fig = run_measured([airload, "cpu"], 1.0)
    assert share > 0.5, "a CPU-bound load should get most of a core even on a shared machine"
    assert fig["kind"] == "cpu" and fig["work_units"] > 0 and fig["throughput"] > 0


def test_duration_and_threads(airload):
    t0 = time.monotonic()
    out = subprocess.run([airload, "cpu", "--threads", "2", "--duration", "0.5"],
                         capture_output=True, text=True, timeout=10)
    assert out.returncode == 0 and 0.45 < time.monotonic() - t0 < 5
    assert json.loads(out.stdout)["threads"] == 2


@pytest.mark.parametrize("args", [[], ["gpu"], ["onoff"], ["onoff", "--ctp-us", "-5"],
                                  ["cpu", "--threads", "0"], ["cpu", "--frob", "1"],
                                  ["cpu", "--duration"], ["cpu", "--ctp-us", "10"]])
def test_bad_input(airload, args):
    out = subprocess.run([airload, *args], capture_output=True, text=True, timeout=10)
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1 and out.stderr.startswith("airload: ")
    assert out.stdout == ""
