"""`airlab doctor`: every section is there, facts match the machine, every "no" has a
reason, and setups the machine cannot apply are reported as such (the same availability
the trial runner uses, so doctor and trials never disagree)."""
import os
import re
import subprocess

from trial_helpers import AIRLAB
from workflows.setups import list_setups, open_setup


def test_doctor_reports_every_section_with_reasons():
    r = subprocess.run([AIRLAB, "doctor", "--quick"], capture_output=True, text=True, timeout=120,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    for section in ("machine", "engine", "cgroups", "perf", "setups", "load kinds", "profiles"):
        assert re.search(rf"^{section}$", out, re.M), section
    assert f"{len(os.sched_getaffinity(0))} usable" in out
    assert re.search(r"topology: .*(Machine|Package|Core|hwloc)", out)
    assert re.search(r"software counters", out)
    assert re.search(r"^ +kernel threads: (none used|\S+ \d+\.\d\d% of a CPU on average)", out, re.M), out[:2000]
    for line in out.splitlines():
        if line.startswith("  no  "):
            assert ": " in line and len(line.split(": ", 1)[1]) > 5, f"a no without its reason: {line}"
    for name in list_setups():
        ok, why = open_setup(name).availability()
        line = next(ln for ln in out.splitlines() if re.match(rf"  (yes|no)\s+{re.escape(name)} \(", ln))
        assert line.startswith("  yes" if ok else "  no"), line
    assert re.search(r"^  (yes|no)\s+parsec", out, re.M)


def test_cgroup_interface_follows_where_the_controllers_live():
    """A hybrid machine (v1 controllers beside a cgroup2 mount) and a pure v2 machine must
    both be read right: v2 exactly when some cgroup2 mount holds cpu and cpuset."""
    from workflows.setups import cgroups
    with open("/proc/mounts") as f:
        v2_mounts = [ln.split()[1] for ln in f if ln.split()[2] == "cgroup2"]
    assert [str(m) for m in cgroups.cgroup2_mounts()] == v2_mounts
    holds_both = [m for m in v2_mounts
                  if {"cpu", "cpuset"} <= set(open(f"{m}/cgroup.controllers").read().split())]
    version, reason = cgroups.detect()
    if holds_both:
        assert version == "v2"
    elif version is None:
        assert reason and "v1" in reason
    else:
        assert version == "v1"
    r = subprocess.run([AIRLAB, "doctor", "--quick"], capture_output=True, text=True, timeout=120,
                       stdin=subprocess.DEVNULL)
    for m in v2_mounts:
        assert f"v2 at {m}:" in r.stdout


def test_doctor_argument_errors_are_one_line():
    """One line naming `airlab doctor` (not argparse's usage block, nor plain `airlab`)."""
    r = subprocess.run([AIRLAB, "doctor", "--no-such-option"], capture_output=True, text=True, timeout=60,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip().splitlines() == [
        "airlab doctor: error: unrecognized arguments: --no-such-option (see 'airlab doctor --help')"]


def test_doctor_reports_a_broken_profile_and_goes_on():
    """A profile file with an error is a "no" line with the error, not a traceback that
    hides every line after it."""
    from loads.profiles import PROFILES
    broken = PROFILES / "zz-doctor-test-broken.yaml"
    broken.write_text("description: broken on purpose\nprocesses:\n  - kind: cpu\n    threads: -3\n")
    try:
        r = subprocess.run([AIRLAB, "doctor", "--quick"], capture_output=True, text=True, timeout=120,
                           stdin=subprocess.DEVNULL)
    finally:
        broken.unlink()
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    line = next(ln for ln in r.stdout.splitlines() if "zz-doctor-test-broken" in ln)
    assert line.startswith("  no ") and "threads" in line, line


def test_machine_facts_say_smt_and_virtualisation():
    """The report compares this machine with the paper's platforms on SMT and
    virtualisation; the trials record both (None only when the kernel does not say)."""
    from workflows import machine
    f = machine.facts()
    assert f["smt"] in (True, False, None) and f["virtualised"] in (True, False, None)
    with open("/proc/cpuinfo") as c:
        flags = next((ln for ln in c if ln.startswith("flags")), None)
    if flags is not None:
        assert f["virtualised"] == ("hypervisor" in flags.split(":", 1)[1].split())


def test_busy_kernel_threads_are_the_kernels_own_and_busiest_first(monkeypatch):
    """The machine section names the kernel's own threads that keep a share of a CPU (DAMON's
    kdamond here): only kthreadd's children, each at or above the share asked, busiest
    first; a share no thread reaches gives the "none" line. The check on the real machine
    uses one snapshot of /proc: kworkers end and rename themselves between two reads (CI
    failed on that race at 85c9ecc)."""
    from workflows import doctor
    from workflows.noise import process_table
    table = process_table()
    uptime = float(open("/proc/uptime").read().split()[0])
    every = doctor.busy_kernel_threads(min_share=0.0, table=table, uptime=uptime)
    assert every, "a running kernel has kernel threads that have run (rcu, kworkers, ksoftirqd)"
    shares = [s for _, s in every]
    assert shares == sorted(shares, reverse=True) and all(0.0 <= s <= 1.01 for s in shares)
    kernel_names = {name for ppid, _, _, name in table.values() if ppid == 2}
    assert all(name in kernel_names for name, _ in every), "a listed thread is not a kernel thread"
    assert [n for n, _ in doctor.busy_kernel_threads(min_share=0.001, table=table, uptime=uptime)] == \
        [n for n, s in every if s >= 0.001]
    # A made-up table: a user process, however busy, is not listed; a kernel thread younger
    # than a second is not (its share means nothing yet); the rest busiest first.
    tick = os.sysconf("SC_CLK_TCK")
    made_up = {10: (1, 0, 50.0, "busy_user_program"), 11: (2, 0, 1.0, "kdamond.0"),
               12: (2, 0, 4.0, "ksoftirqd/0"), 13: (2, int(99.5 * tick), 0.4, "kworker/young"),
               14: (2, 0, 0.05, "rcu_preempt")}
    assert doctor.busy_kernel_threads(min_share=0.005, table=made_up, uptime=100.0) == \
        [("ksoftirqd/0", 0.04), ("kdamond.0", 0.01)]
    monkeypatch.setattr(doctor, "KERNEL_THREAD_SHARE", 2.0)
    assert doctor.kernel_threads_line().startswith("none used 200.0% of a CPU")


def test_a_reader_that_goes_away_ends_it_quietly():
    """`airlab doctor | head`: the reader leaves before the end; the command stops with
    128 + SIGPIPE and no traceback, as a shell tool does."""
    p = subprocess.Popen([AIRLAB, "doctor", "--quick"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL)
    p.stdout.close()
    err = p.stderr.read().decode()
    p.stderr.close()
    assert p.wait(timeout=120) == 141 and "Traceback" not in err and "Exception" not in err, err
