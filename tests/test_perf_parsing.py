"""perf stat CSV parsing on recorded outputs: a VM without hardware counters, a machine
where perf multiplexed counters (scaled values, <not counted>), a hybrid CPU."""
from pathlib import Path

from workflows import perf

DATA = Path(__file__).parent / "data" / "perf"


def test_vm_without_hardware_counters():
    c = perf.parse((DATA / "vm-no-hardware.csv").read_text())
    assert c["task-clock"] == {"value": 16.60, "unit": "msec", "status": "ok", "reason": None}
    assert c["context-switches"]["value"] == 3 and c["duration_time"]["unit"] == "ns"
    for hw in ("cycles", "instructions", "cache-references", "cache-misses", "LLC-load-misses"):
        assert c[hw]["status"] == "not supported" and c[hw]["value"] is None and c[hw]["reason"]


def test_multiplexed_and_not_counted():
    c = perf.parse((DATA / "multiplexed.csv").read_text())
    assert c["task-clock"]["value"] == 2043.11  # ':u' modifiers are stripped
    assert c["cycles"]["value"] == 6412000000 and c["cycles"]["scaled_from_pct"] == 74.98
    assert c["cache-references"]["status"] == "not counted" and c["cache-references"]["value"] is None
    assert c["LLC-load-misses"]["status"] == "not supported"


# perf stat -x, on a hybrid Intel CPU (Alder Lake): one line per core type, the program
# ran on the big cores only; the counter must be found under its plain name.
HYBRID = """\
36.33,msec,task-clock,36327404,100.00,0.969,CPUs utilized
<not counted>,,cpu_atom/cycles/u,0,0.00,,
140184622,,cpu_core/cycles/u,36005398,99.00,3.859,GHz
1000,,cpu_atom/instructions/,1000,100.00,,
232341234,,cpu_core/instructions/,36005398,100.00,,
<not supported>,,cpu_atom/cache-misses/,0,100.00,,
<not supported>,,cpu_core/cache-misses/,0,100.00,,
"""


def test_hybrid_cpu_lines_per_core_type():
    c = perf.parse(HYBRID)
    assert c["cycles"]["status"] == "ok" and c["cycles"]["value"] == 140184622
    assert c["cycles"]["scaled_from_pct"] == 99.0 and sorted(c["cycles"]["pmus"]) == ["cpu_atom", "cpu_core"]
    assert c["instructions"]["value"] == 232342234  # counted on both kinds: summed
    assert c["cache-misses"]["status"] == "not supported" and c["cache-misses"]["value"] is None
    assert not any("/" in name for name in c)


def test_every_event_is_reported_even_when_perf_is_missing():
    c = perf.parse("", "perf is not installed")
    assert set(c) == set(perf.EVENTS)
    assert all(v["status"] == "unavailable" and v["reason"] == "perf is not installed" for v in c.values())


def test_garbage_lines_do_not_break_parsing():
    c = perf.parse("garbage\n,,\nnot-a-number,,task-clock,0,100.00,,\n")
    assert c["task-clock"]["status"] == "not counted"
    assert c["cycles"]["status"] == "unavailable"


def test_a_perf_that_cannot_count_leaves_the_engine_bare(monkeypatch):
    # /bin/false stands for a perf that exists but may not count (perf_event_paranoid,
    # a container's seccomp): the engine runs without it and every counter says why.
    monkeypatch.setattr(perf, "perf_binary", lambda: "/bin/false")
    monkeypatch.setattr(perf, "_probe", {})
    argv, why = perf.wrap(["airpdes", "--mode", "seq"], "/tmp/unused.csv")
    assert argv == ["airpdes", "--mode", "seq"] and "not permitted" in why
    c = perf.read("/nonexistent", why)
    assert all(v["status"] == "unavailable" and v["reason"] == why for v in c.values())


def test_real_perf_stat_output_parses():
    import subprocess
    import tempfile
    perf_path, why = perf.usable()
    if not perf_path:
        import pytest
        pytest.skip(why)
    with tempfile.TemporaryDirectory() as d:
        argv, _ = perf.wrap(["sh", "-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done"], f"{d}/p.csv")
        assert subprocess.run(argv, capture_output=True, timeout=60).returncode == 0
        c = perf.read(f"{d}/p.csv")
    assert set(c) >= set(perf.EVENTS)
    assert c["task-clock"]["status"] == "ok" and c["task-clock"]["value"] > 0
    assert c["duration_time"]["status"] == "ok"
    for hw in perf.HARDWARE:  # a value, or the reason it is missing: never silently absent
        assert (c[hw]["status"] == "ok") == (c[hw]["value"] is not None) and (c[hw]["reason"] or c[hw]["value"] is not None)
