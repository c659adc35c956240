"""Adaptation really happens (paper Fig. 11-12). With N threads on N cores:
- one CPU-bound competitor for the whole run: adm and ladm with the pi, rq and apte
  detectors spend most of the run with N-1 active threads;
- no competitor: most of the run with N active threads;
- the competitor stops mid-run: RAP brings the thread back (the end of the run has N),
  unpinned and pinned, and also when the out thread sits on an active thread's CPU (its
  probe must not time the engine's own thread);
- no CPU free of active threads (the run confined to one CPU): an out thread's RAP probes
  count as slow, in rap_no_spare_cpu, and it stays out;
- a competitor that comes and goes every 10 ms: PI's back-off stops its probes handing it
  slices.
The shares asserted are generous (the machine is shared and noisy); what they rule out is
a detector that never fires, one that fires without a competitor, and a reactivation
policy that never brings a thread back. Results must still equal seq (checked too).

"No competitor" is a premise about the whole machine, and a shared machine breaks it: when
other people's programs keep the cores busy, deactivating a thread is the right answer. So
while each such run goes, the test samples the kernel's count of runnable tasks
(/proc/stat procs_running) minus the engine's own running threads and this sampler: the
foreign demand for the cores. The "all N active" shares are asserted only when that demand
averaged below FOREIGN_MAX, in one of up to QUIET_TRIES runs of the case (one run while
the machine has stayed busy since an earlier case's runs); otherwise the
case prints NOT CHECKED with the figure, and a run whose checks all passed ends as skipped,
not passed (on a dedicated or CI machine every case is checked). The competitor cases need
no such premise: foreign load only adds to the competitor."""
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

from airpdes_harness import (AIRPDES, assert_same, check, cpu_competitor, fail, finish, not_checked,
                             on_off_competitor, read_timeline, run)

FOREIGN_MAX = 0.3  # runnable tasks of other programs, on average (1.0 = a whole competitor)

N = min(os.cpu_count() or 1, 4)
if N < 2:
    print(f"SKIP: adaptation needs at least 2 cores (this machine has {N}): with one core "
          "there is no thread to deactivate")
    sys.exit(77)

MODEL = ["--pes", N, "--lps-per-pe", 1000, "--remote", 0.4, "--seed", 11]


def share(rows, pred, after_s=None, skip_frac=0.1):
    """Share of timeline rows satisfying pred, ignoring the first skip_frac of the run
    (or everything before after_s): detection needs a few GVT rounds to act."""
    if after_s is None:
        rows = rows[int(len(rows) * skip_frac):]
    else:
        rows = [r for r in rows if r[0] >= after_s]
    return (sum(1 for r in rows if pred(r[3])) / len(rows), len(rows)) if rows else (0.0, 0)


def running_tasks(pid):
    """How many threads of process pid are running or runnable now."""
    n = 0
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                n += f.read().rsplit(") ", 1)[1][0] == "R"
    except OSError:
        pass
    return n


def procs_running():
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("procs_running"):
                return int(line.split()[1])
    return 0


class KernelThreads:
    """The CPU time of the kernel's own threads (kthreadd's children), read in ns from their
    schedstat through descriptors kept open (0.04 ms a read of all ~60 here; opening them
    each time cost 0.5 ms, 2.5% of a core at one read per 20 ms). A kernel thread's burst is
    foreign demand that the runnable-task count misses: DAMON's kdamond stays runnable for
    6-28 ms a few times a minute on the 2-core VM, between two of the sampler's reads."""

    def __init__(self):
        self.fds = []
        for pid in os.listdir("/proc"):
            try:
                with open(f"/proc/{pid}/stat") as f:
                    if pid.isdigit() and f.read().rsplit(") ", 1)[1].split()[1] == "2":
                        self.fds.append(os.open(f"/proc/{pid}/schedstat", os.O_RDONLY))
            except (OSError, IndexError):
                pass

    def cpu_s(self):
        total = 0
        for fd in self.fds:
            try:
                total += int(os.pread(fd, 64, 0).split()[0])
            except (OSError, ValueError, IndexError):  # the thread has exited
                pass
        return total / 1e9

    def close(self):
        for fd in self.fds:
            os.close(fd)


def run_sampled(*args, own=()):
    """Run airpdes with a timeline while sampling the foreign demand for CPUs every 20 ms.
    own: PIDs of processes this test started besides the engine (the competitor).
    Returns (JSON with "_timeline" and "_kernel_threads" [(t_s, their CPU s so far)],
    [(t_s, foreign runnable tasks)])."""
    with tempfile.TemporaryDirectory() as d:
        out, tl = os.path.join(d, "out.json"), os.path.join(d, "tl.csv")
        argv = [AIRPDES, *map(str, args), "--quiet", "--json", out, "--timeline", tl]
        kernel = KernelThreads()
        t0 = time.monotonic()
        p = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)
        samples, kernel_cpu = [], []
        while p.poll() is None:
            kernel_cpu.append((time.monotonic() - t0, kernel.cpu_s()))
            # The engine's threads wake and sleep between the two reads (a barrier wait on
            # a futex), so a sample can be off by one either way: kept signed, clipped at 0
            # only as a mean (clipping each sample read an idle machine as 0.4-0.5 foreign
            # tasks in ~1 of 6 runs: a case NOT CHECKED for nothing).
            ours = running_tasks(p.pid) + sum(running_tasks(q) for q in own) + 1  # + this sampler
            samples.append((time.monotonic() - t0, procs_running() - ours))
            time.sleep(0.02)
            if time.monotonic() - t0 > 60:
                p.kill()
        kernel_cpu.append((time.monotonic() - t0, kernel.cpu_s()))
        kernel.close()
        err = p.stderr.read()
        p.stderr.close()
        if p.returncode != 0:
            fail(f"{' '.join(argv[1:])}: exit {p.returncode}; stderr: {err.strip()}")
            return None, samples
        with open(out) as f:
            j = json.load(f)
        j["_timeline"] = read_timeline(tl)
        j["_kernel_threads"] = kernel_cpu
        return j, samples


def mean_foreign(samples, after_s=0.0):
    v = [n for t, n in samples if t >= after_s]
    return max(0.0, sum(v) / len(v)) if v else 0.0


QUIET_TRIES = 3  # runs of a case that needs a quiet machine, before it is NOT CHECKED
# True after a case spent all its tries on a busy machine: the next cases then run once each
# until one run comes back quiet. A machine busy for minutes (a CI host's neighbours) cost
# QUIET_TRIES runs per case for the same NOT CHECKED: 126-143 s beside a hog, 36-55 s quiet.
stayed_busy = False


def run_when_quiet(*args, own=()):
    """run_sampled, again while another program kept the machine busy during the run (up to
    QUIET_TRIES runs): one burst of someone else's work costs a run, not the case's check."""
    global stayed_busy
    tries = 1 if stayed_busy else QUIET_TRIES
    for attempt in range(1, tries + 1):
        j, samples = run_sampled(*args, own=own)
        foreign = mean_foreign(samples)
        if j is None:
            return j, samples
        if foreign < FOREIGN_MAX:
            stayed_busy = False
            return j, samples
        if attempt == tries:
            if stayed_busy:
                print(f"note: the machine is still busy ({foreign:.1f} foreign runnable tasks on average), "
                      f"as through an earlier case's {QUIET_TRIES} runs: one run, not {QUIET_TRIES}", flush=True)
            stayed_busy = True
            return j, samples
        print(f"note: the machine was busy during a run that needs it quiet ({foreign:.1f} foreign runnable "
              f"tasks on average): run {attempt + 1} of at most {QUIET_TRIES}", flush=True)


refs = {}
for end in (3000, 12000):
    refs[end] = run(*MODEL, "--end-time", end, "--mode", "seq")[0]

CASES = [(mode, det) for mode in ("adm", "ladm") for det in ("pi", "rq", "apte")]
with cpu_competitor():
    for mode, det in CASES:
        j, _ = run(*MODEL, "--end-time", 3000, "--mode", mode, "--threads", N, "--detector", det,
                   "--reactivation", "rap", timeline=True)
        if not j:
            continue
        s, n = share(j["_timeline"], lambda a: a == N - 1)
        label = f"{mode} {det} + 1 CPU competitor"
        assert_same(refs[3000], j, label)
        if check(n >= 10 and s >= 0.5, f"{label}: {N - 1} active in only {s:.0%} of {n} samples"):
            print(f"ok   {label}: {N - 1} of {N} threads active in {s:.0%} of {n} samples")
        if det == "pi":
            # --pi-needs-switch (default 1): the deactivation stood on slow probes whose
            # yields handed the CPU to the competitor (the thread was switched out)
            slow = sum(th["pi_slow_probes"] for th in j["threads"])
            kept = sum(th["pi_slow_kept_cpu"] for th in j["threads"])
            if check(slow - kept >= 3, f"{label}: {slow} slow probes, {kept} of them kept the CPU"):
                print(f"ok   {label}: {slow - kept} of {slow} slow probes handed the CPU to the competitor")

# --detect-after-ms: no detector judges before it (a new thread often shares its
# creator's CPU for the first 10-25 ms, which PI and RQ would take for a competitor).
# Deterministic: no deactivation time may precede it, and one that never arrives within
# the run means no deactivation at all, even beside a competitor.
with cpu_competitor():
    for det, after_ms in (("pi", 300), ("rq", 300), ("pi", 1e6)):
        j, _ = run(*MODEL, "--end-time", 3000, "--mode", "ladm", "--threads", N, "--detector", det,
                   "--reactivation", "rap", "--detect-after-ms", after_ms)
        if not j:
            continue
        label = f"ladm {det} --detect-after-ms {after_ms:g} + 1 CPU competitor"
        assert_same(refs[3000], j, label)
        times = [x for th in j["threads"] for x in th["deactivation_times_s"]]
        count = sum(th["deactivations"] for th in j["threads"])
        if after_ms * 1e-3 > j["wall_s"]:
            ok = check(count == 0, f"{label}: {count} deactivations in a {j['wall_s']:.2f} s run")
        else:
            ok = check(times and min(times) >= after_ms * 1e-3,
                       f"{label}: deactivations at {times[:4]} (none, or before {after_ms:g} ms)")
        if ok:
            print(f"ok   {label}: {count} deactivations, the first at "
                  f"{min(times) if times else '-'} s (run {j['wall_s']:.2f} s)")

# --apte-hits N within --apte-window-ms: a window too short for N detector checks (each
# 32 iterations apart) can never be met, so APTE deactivates nothing even beside a
# competitor; the same hits within a generous window do (checked above with the default).
with cpu_competitor():
    j, _ = run(*MODEL, "--end-time", 3000, "--mode", "ladm", "--threads", N, "--detector", "apte",
               "--reactivation", "rap", "--apte-hits", 8, "--apte-window-ms", 0.001)
    if j:
        label = "ladm apte --apte-hits 8 --apte-window-ms 0.001 + 1 CPU competitor"
        assert_same(refs[3000], j, label)
        count = sum(th["deactivations"] for th in j["threads"])
        if check(count == 0, f"{label}: {count} deactivations"):
            print(f"ok   {label}: no deactivation in {j['wall_s']:.2f} s")

# A brief competitor (20 ms busy every ~250 ms, 8% of a core; kdamond and a workflow's
# polling are this kind) inflates several periods per burst. The paper's one-period rule
# (--apte-hits 1 --apte-share 0) deactivates a thread at nearly every burst (6-8 times in
# 2.4 s by hand when this was written; 51-56 times in each of 4 runs of ~1.5 s on 30 Nov,
# several per burst, RAP bringing the thread back in between); the default also needs the lost time to reach --apte-share of the
# window, which such a burst never does (0 in 2.4 s by hand). The paper's rule is run too,
# so the case shows the competitor really provokes it.
# Like "no competitor" below, these need the rest of the machine quiet (another program's
# CPU-bound work is a real competitor: the paper's rule then deactivates once and stays so,
# the default and RQ rightly deactivate), so the foreign demand is sampled here too. A whole
# run's mean is not enough: a foreign program busy for a few tenths of a second leaves the
# mean under FOREIGN_MAX and provokes right deactivations. Seen: the default failed once in
# a fresh clone's CTest run (29 Nov, 2 deactivations in 2.46 s), and 2 of 100 runs of the
# case by hand, both in the minute another Python program of ours ran (its timing was not
# logged; 3 and 4 deactivations, the foreign demand sampled 1-2 around each, the run's mean
# 0.16-0.18); 0 in the other 98. So
# the bound counts only the deactivations that came with no foreign demand around them.
# A foreign program busy for 0.4 s from 1 s into the run (24 runs by hand) made the default
# deactivate once or twice within 0.2 s of its start, the foreign samples at 1 from ~40 ms
# before the deactivation to the burst's end; on a quiet machine a sample reads 1 now and
# then (the engine's threads wake and sleep between the sampler's reads). With this span
# each of the 13 deactivations of the 12 runs it was tried on counted as beside foreign
# demand, and 294 of the paper's rule's 303 in 4 runs did not (the other 9 in a run whose
# foreign mean was 0.16).
# The kernel's own threads are foreign demand too, and the runnable-task samples miss their
# bursts. Likely the failure of a fresh clone's suite at a3b84f9 (30 Nov, 2 deactivations,
# bound 1): in 150 runs of the case by hand with a sched_switch trace of DAMON's kdamond
# (30 Nov), the default made 3 deactivations, each with 11.6-25.8 ms of kdamond in the
# 100 ms before it, while 100 ms windows drawn at random in the same runs held more than
# 1 ms of it in 15% (p90 1.3 ms). So a deactivation with at least KERNEL_MIN_S of kernel-
# thread CPU in the KERNEL_BEFORE_S before it (sampled every 20 ms, hence the + 0.02) also
# counts as beside foreign demand. With it, random instants of 150 further runs were
# excused in 21 of 3000 (0.7%), and none of the paper's rule's 208 deactivations in 4 runs.
FOREIGN_BEFORE_S, FOREIGN_AFTER_S = 0.06, 0.1
FOREIGN_AROUND = 0.5   # mean foreign runnable tasks in that span
KERNEL_BEFORE_S, KERNEL_MIN_S = 0.12, 0.005


def kernel_cpu_before(j, t):
    """CPU seconds the kernel's threads used from KERNEL_BEFORE_S before t to just after it."""
    series = j.get("_kernel_threads") or []
    before = [c for ts, c in series if ts <= t - KERNEL_BEFORE_S]
    after = [c for ts, c in series if ts >= t + 0.02]
    if not series:
        return 0.0
    return (after[0] if after else series[-1][1]) - (before[-1] if before else series[0][1])


def foreign_around(t, samples):
    """Mean foreign runnable tasks sampled from FOREIGN_BEFORE_S before t to FOREIGN_AFTER_S
    after it (None without samples there)."""
    near = [n for ts, n in samples if t - FOREIGN_BEFORE_S <= ts <= t + FOREIGN_AFTER_S]
    return sum(near) / len(near) if near else None


def false_alarms(j, samples):
    """The deactivation times that came with no foreign demand around them: neither other
    programs' runnable tasks nor a burst of the kernel's own threads."""
    times = [x for th in j["threads"] for x in th["deactivation_times_s"]]
    return [t for t in times if (foreign_around(t, samples) or 0.0) < FOREIGN_AROUND
            and kernel_cpu_before(j, t) < KERNEL_MIN_S]


def where_deactivated(j, samples):
    """'at T s (foreign 0 1 1 ...)' per deactivation: the foreign runnable tasks sampled from
    FOREIGN_BEFORE_S before it to FOREIGN_AFTER_S after, for a failure message. (The
    sampler's clock starts a few ms before the engine's.)"""
    out = []
    for t in sorted(x for th in j["threads"] for x in th["deactivation_times_s"]):
        near = [f"{n:.0f}" for ts, n in samples if t - FOREIGN_BEFORE_S <= ts <= t + FOREIGN_AFTER_S]
        out.append(f"at {t:.3f} s (foreign {' '.join(near) or '-'}; kernel threads "
                   f"{kernel_cpu_before(j, t) * 1e3:.1f} ms in the {KERNEL_BEFORE_S * 1e3:.0f} ms before)")
    return "; ".join(out)


def quiet(label, samples):
    foreign = mean_foreign(samples)
    if foreign >= FOREIGN_MAX:
        not_checked(f"{label} + a brief competitor: the machine was busy ({foreign:.1f} "
              "foreign runnable tasks on average)")
    return foreign < FOREIGN_MAX


with on_off_competitor(0.02, 0.23) as brief:
    time.sleep(0.5)  # past the competitor's interpreter start-up, itself a 20-40 ms burst
    counts = {}
    for label, extra in (("paper's rule", ("--apte-hits", 1, "--apte-share", 0)), ("default", ())):
        j, samples = run_when_quiet(*MODEL, "--end-time", 12000, "--mode", "ladm", "--threads", N, "--pin",
                                    "--detector", "apte", "--reactivation", "rap", *extra, own=[brief.pid])
        if j:
            assert_same(refs[12000], j, f"ladm apte {label} + a brief competitor")
            if quiet(f"ladm apte {label}", samples):
                counts[label] = (len(false_alarms(j, samples)), sum(th["deactivations"] for th in j["threads"]),
                                 j["wall_s"], where_deactivated(j, samples))
    if len(counts) == 2:
        (paper, _, _, _), (default, all_default, wall, where) = counts["paper's rule"], counts["default"]
        ok = check(paper >= 2, f"the brief competitor provoked only {paper} deactivations by the "
                               "paper's rule: the case shows nothing")
        ok = check(default <= 1, f"ladm apte (default) + a brief competitor: {default} deactivations "
                                 f"with no foreign demand around them in {wall:.2f} s (the paper's rule: "
                                 f"{paper}): {where}") and ok
        if ok:
            print(f"ok   ladm apte + a brief competitor: {default} deactivations by default "
                  f"({all_default - default} more beside another program's demand), {paper} by the paper's rule")
    # RQ beside the same competitor: each burst makes the pinned thread it lands on wait
    # ~50% for ~40 ms (EEVDF shares the CPU in 3 ms slices). RQ needs > --rq-threshold of
    # wait over 5 windows of 10 ms in a row; with 2 windows of 4 ms (engine f64d2bd and
    # before) it deactivated 7-10 times in a ~2 s run by hand, and in 11 of 12 no-load
    # runs of a quick reproduction. A CPU-bound load is detected above (N-1 active).
    j, samples = run_when_quiet(*MODEL, "--end-time", 12000, "--mode", "ladm", "--threads", N, "--pin",
                                "--detector", "rq", "--reactivation", "rap", own=[brief.pid])
    if j:
        assert_same(refs[12000], j, "ladm rq + a brief competitor")
    if j and quiet("ladm rq", samples):
        count = len(false_alarms(j, samples))
        if check(count <= 1, f"ladm rq + a brief competitor: {count} deactivations with no foreign demand "
                             f"around them in {j['wall_s']:.2f} s: {where_deactivated(j, samples)}"):
            print(f"ok   ladm rq + a brief competitor: {count} deactivations in {j['wall_s']:.2f} s")

# --pi-backoff-ms (default 64) beside a competitor that comes and goes every 10 ms: each
# slow probe hands it a slice, and 3 in a row never fit in its on-period, so without the
# back-off PI spends ~1 s of a 3 s run inside probes (0.8-1.6 s by hand) for nothing; with
# it 0.09-0.19 s. Asserted: the back-off at most halves it. The case shows nothing if the
# probes found no competitor (a machine so busy that PI deactivated and stopped probing),
# nor beside other people's work: every probe then finds a competitor, and the back-off
# saved less (0.85 s against 1.15 s beside two 25% CPU hogs, 29 Nov), so both runs are
# sampled and the case needs them quiet, as the no-competitor cases do.
with on_off_competitor(0.01, 0.01) as onoff:
    time.sleep(0.5)  # past the competitor's interpreter start-up
    probe_s, busy = {}, {}
    for backoff in (0, 64):
        j, samples = run_when_quiet(*MODEL, "--end-time", 12000, "--mode", "ladm", "--threads", N, "--pin",
                                    "--detector", "pi", "--reactivation", "rap", "--pi-backoff-ms", backoff,
                                    own=[onoff.pid])
        if j:
            assert_same(refs[12000], j, f"ladm pi --pi-backoff-ms {backoff} + a 10 ms on-off competitor")
            probe_s[backoff] = (sum(th["pi_probe_s"] for th in j["threads"]),
                                sum(th["pi_slow_probes"] for th in j["threads"]))
            busy[backoff] = mean_foreign(samples)
    if len(probe_s) == 2:
        (off_s, off_slow), (on_s, on_slow) = probe_s[0], probe_s[64]
        label = "ladm pi + a 10 ms on-off competitor"
        if max(busy.values()) >= FOREIGN_MAX:
            not_checked(f"{label}: the machine was busy ({max(busy.values()):.1f} foreign runnable tasks on "
                        f"average); probes took {on_s:.2f} s with --pi-backoff-ms 64, {off_s:.2f} s without")
        elif off_s < 0.2:
            not_checked(f"{label}: without the back-off its probes took only {off_s:.2f} s "
                  f"({off_slow} slow): they found no competitor to hand slices to")
        elif check(on_s <= 0.5 * off_s, f"{label}: probes took {on_s:.2f} s with --pi-backoff-ms 64, "
                                        f"{off_s:.2f} s without ({busy[64]:.2f} and {busy[0]:.2f} foreign "
                                        f"runnable tasks on average)"):
            print(f"ok   {label}: probes took {on_s:.2f} s ({on_slow} slow) with --pi-backoff-ms 64, "
                  f"{off_s:.2f} s ({off_slow} slow) without")

# --pi-needs-switch: with --pi-threshold-us 0 every probe is slow, and on an idle CPU its
# yields keep the CPU (no switch: ~99% of probes by hand). With 0 such probes count and a
# thread deactivates after 3 of them; with 1 (the default) they are ignored, so each
# deactivation must stand on 3 slow probes of its own thread that did switch (an invariant:
# a busy machine only adds switched probes). By hand: 0 deactivations of ~500 probes each.
for needs in (0, 1):
    j, _ = run(*MODEL, "--end-time", 3000, "--mode", "ladm", "--threads", N, "--detector", "pi",
               "--reactivation", "rap", "--pi-threshold-us", 0, "--pi-needs-switch", needs)
    if not j:
        continue
    label = f"ladm pi --pi-threshold-us 0 --pi-needs-switch {needs}, no competitor"
    assert_same(refs[3000], j, label)
    per = [(th["pi_slow_probes"], th["pi_slow_kept_cpu"], th["deactivations"]) for th in j["threads"]]
    if needs == 0:
        ok = check(sum(d for _, _, d in per) >= 1, f"{label}: no deactivation, probes {per}")
    else:
        ok = check(all(3 * d <= slow - kept for slow, kept, d in per),
                   f"{label}: a deactivation without 3 switched slow probes (slow, kept, deactivations "
                   f"per thread: {per})")
    if ok:
        print(f"ok   {label}: (slow probes, kept the CPU, deactivations) per thread {per}")

# --pi-hold-ms: the slow probes must last that long before a deactivation. With
# --pi-threshold-us 0 --pi-needs-switch 0 every probe is slow from the run's first one on,
# so the run of slow probes never breaks: with a hold of 250 ms a thread deactivates, and
# not before 0.25 s into the run (its clock starts before any probe); with a hold longer
# than the run, never, although every one of its probes was slow. End time 12000: the run
# must outlast the hold on a fast host too (at 3000 the AMD host's run ended at 0.22 s).
for hold in (250, 1e6):
    j, _ = run(*MODEL, "--end-time", 12000, "--mode", "ladm", "--threads", N, "--detector", "pi",
               "--reactivation", "rap", "--pi-threshold-us", 0, "--pi-needs-switch", 0,
               "--detect-after-ms", 0, "--pi-hold-ms", hold)
    if not j:
        continue
    label = f"ladm pi --pi-threshold-us 0 --pi-needs-switch 0 --pi-hold-ms {hold:g}, no competitor"
    assert_same(refs[12000], j, label)
    times = sorted(x for th in j["threads"] for x in th["deactivation_times_s"])
    slow = sum(th["pi_slow_probes"] for th in j["threads"])
    if hold < 1e6:
        ok = check(times and times[0] >= hold * 1e-3,
                   f"{label}: deactivations at {times} s of a {j['wall_s']:.2f} s run, wanted one, none before "
                   f"{hold * 1e-3:g} s")
    else:
        ok = check(not times and slow >= 3, f"{label}: deactivations at {times} s, {slow} slow probes")
    if ok:
        print(f"ok   {label}: deactivations at {[round(t, 3) for t in times]} s, {slow} slow probes "
              f"(run {j['wall_s']:.2f} s)")

# --pi-switch-rate: preemptions count as slow probes. With --pi-threshold-us 1e9 no probe
# is ever slow, so without the option no thread can deactivate; beside a CPU-bound
# competitor the threads are preempted at least every few scheduler ticks, far above 1 a
# second, so with --pi-switch-rate 1 one must. A probe that is never slow never backs off
# either, and each one's yields hand the competitor a whole slice (~5 ms): at the default
# 1 ms interval the run without the option took 20 s instead of 0.6; probing every 50 ms
# keeps it short and still leaves dozens of probes.
with cpu_competitor():
    for rate in (0, 1):
        j, _ = run(*MODEL, "--end-time", 3000, "--mode", "ladm", "--threads", N, "--detector", "pi",
                   "--reactivation", "rap", "--pi-threshold-us", 1e9, "--pi-switch-rate", rate,
                   "--pi-interval-ms", 50)
        if not j:
            continue
        label = f"ladm pi --pi-threshold-us 1e9 --pi-switch-rate {rate} + a CPU-bound competitor"
        assert_same(refs[3000], j, label)
        d = sum(th["deactivations"] for th in j["threads"])
        if check(d >= 1 if rate else d == 0, f"{label}: {d} deactivations"):
            print(f"ok   {label}: {d} deactivations")

for mode, det in CASES:
    j, samples = run_when_quiet(*MODEL, "--end-time", 3000, "--mode", mode, "--threads", N,
                                "--detector", det, "--reactivation", "rap")
    if not j:
        continue
    s, n = share(j["_timeline"], lambda a: a == N)
    foreign = mean_foreign(samples)
    label = f"{mode} {det}, no competitor"
    if foreign >= FOREIGN_MAX:
        not_checked(f"{label}: the machine was busy ({foreign:.1f} foreign runnable tasks "
              f"on average); all {N} active in {s:.0%} of {n} samples")
        continue
    if check(n >= 5 and s >= 0.5, f"{label}: all {N} active in only {s:.0%} of {n} samples "
                                  f"({foreign:.2f} foreign runnable tasks on average)"):
        print(f"ok   {label}: all {N} threads active in {s:.0%} of {n} samples "
              f"({foreign:.2f} foreign runnable tasks on average)")

def thread_moves(j):
    """Each thread's deactivations, reactivations and RAP probes, for a failure message."""
    return "; ".join(f"thread {th['id']}: out at {[round(x, 3) for x in th['deactivation_times_s']]}, back at "
                     f"{[round(x, 3) for x in th['reactivation_times_s']]}, RAP probes {th['rap_probes']} "
                     f"({th['rap_slow_probes']} slow, slowest {th['rap_probe_max_us']:.0f} us, "
                     f"{th['rap_no_spare_cpu']} with no CPU free of active threads)" for th in j["threads"])


# PR brings a thread back every --pr-periods (40) detection periods, a period being at
# least the detector's confirmation time (PI: its 30-ms hold), so beside a steady
# competitor the thread is out for most of the run and comes back about once per 1.2 s.
# Counted in iterations alone (before 6 Dec) that was every ~3 ms of work: 306
# reactivations in an 11.6-s run that PI-RAP ran in 1.1 s. The bound is the rule's own.
PR_PERIOD_S = 40 * 0.030
with cpu_competitor():
    j, _ = run(*MODEL, "--end-time", 12000, "--mode", "ladm", "--threads", N, "--detector", "pi",
               "--reactivation", "pr", timeline=True)
    if j:
        label = "ladm pi + pr + 1 CPU competitor"
        assert_same(refs[12000], j, label)
        backs = sum(th["reactivations"] for th in j["threads"])
        s, n = share(j["_timeline"], lambda a: a == N - 1)
        ok = check(backs <= j["wall_s"] / PR_PERIOD_S + 1,
                   f"{label}: {backs} reactivations in {j['wall_s']:.2f} s, more than one per {PR_PERIOD_S:g} s; "
                   f"{thread_moves(j)}")
        ok = check(j["wall_s"] < 1.5 * PR_PERIOD_S or backs >= 1,
                   f"{label}: no reactivation in {j['wall_s']:.2f} s; {thread_moves(j)}") and ok
        ok = check(n >= 10 and s >= 0.5, f"{label}: {N - 1} active in only {s:.0%} of {n} samples") and ok
        if ok:
            print(f"ok   {label}: {backs} reactivations in {j['wall_s']:.2f} s, {N - 1} of {N} threads "
                  f"active in {s:.0%} of {n} samples")


# The competitor leaves after STOP_S; from STOP_S + 0.3 s on, RAP must have brought the
# deactivated thread back for most of the remaining samples. Unpinned (the kernel places the
# threads, and the inactive one's probes must avoid the active ones' CPUs) and pinned, as the
# workflow's figures run LADM (each thread probes its own CPU).
STOP_S = 0.6
for mode, det, pin in [("ladm", "pi", []), ("adm", "rq", []), ("ladm", "pi", ["--pin"])]:
    with cpu_competitor() as comp:
        timer = threading.Timer(STOP_S, comp.kill)
        timer.start()
        j, samples = run_sampled(*MODEL, "--end-time", 12000, "--mode", mode, "--threads", N, *pin,
                                 "--detector", det, "--reactivation", "rap", own=[comp.pid])
        timer.cancel()
    if not j:
        continue
    tl = j["_timeline"]
    label = f"{mode} {det}{' pinned' if pin else ''} + competitor leaving at {STOP_S} s"
    assert_same(refs[12000], j, label)
    # Under RAP a thread comes back only after a fast probe of its own.
    check(all(th["reactivations"] <= th["rap_probes"] - th["rap_slow_probes"] for th in j["threads"]),
          f"{label}: more reactivations than fast RAP probes: {j['threads']}")
    before, nb = share([r for r in tl if 0.1 <= r[0] < STOP_S], lambda a: a == N - 1, after_s=0)
    after, na = share(tl, lambda a: a == N, after_s=STOP_S + 0.3)
    foreign = mean_foreign(samples, after_s=STOP_S + 0.3)
    check(na >= 10, f"{label}: the run ended too soon after the competitor left ({na} samples)")
    if foreign >= FOREIGN_MAX:
        not_checked(f"{label}: the machine stayed busy after it left ({foreign:.1f} foreign "
              f"runnable tasks on average); {N - 1} active in {before:.0%} of samples before, "
              f"all {N} in {after:.0%} after")
        continue
    # The threads' own record, so a failure says whether RAP never brought the thread back
    # (never probed, or every probe slow) or the detector sent it away again. Seen 30 Nov and
    # 4 Dec: adm rq, thread 1 out at 0.111 s and never back, its probes on the active thread's
    # CPU (the case below).
    if check(after >= 0.6, f"{label}: all {N} active in only {after:.0%} of {na} samples after it "
                           f"left ({foreign:.2f} foreign runnable tasks on average); {thread_moves(j)}"):
        print(f"ok   {label}: {N - 1} active in {before:.0%} of samples before, all {N} in "
              f"{after:.0%} of {na} samples after ({foreign:.2f} foreign runnable on average)")


# RAP's probe must not time the engine's own threads. Where a sleeping thread wakes is the
# kernel's choice: in 4 of 147 runs of the case above on the 2-core VM the inactive thread
# woke on the active thread's CPU, and its probes stayed there, all slow, while the other CPU
# was free; twice it never came back (30 Nov, 4 Dec). This case makes that placement certain:
# once a thread is out, its mask (and the active thread's) is narrowed to the active thread's
# CPU, as the kernel's choice was, and after the competitor leaves RAP must still bring it
# back.

def engine_tasks(pid):
    """{tid: (CPU time in ns, the CPU it last ran on)} of pid's threads."""
    tasks = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                ns = int(f.read().split()[0])
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                cpu = int(f.read().rsplit(") ", 1)[1].split()[36])
        except (OSError, ValueError, IndexError):
            continue
        tasks[int(tid)] = (ns, cpu)
    return tasks


def cpu_each_period(pid, deadline, period_s=0.03):
    """Every period until the deadline (monotonic seconds): ({tid: ns of CPU it used in the
    period}, the engine_tasks() reading at its end)."""
    prev = engine_tasks(pid)
    while time.monotonic() < deadline:
        time.sleep(period_s)
        now = engine_tasks(pid)
        yield {tid: now[tid][0] - prev[tid][0] for tid in now if tid in prev}, now
        prev = now


def narrow_inactive_thread(pid, deadline):
    """Wait until one of pid's threads is asleep while the others run (deactivated), then
    restrict it and the running ones to the CPU of a running one: the kernel can no longer
    move the active thread away and leave the out thread's CPU free by chance (the engine
    before ebc997b passed 1 of 3 runs so). Returns (seconds since the call, that CPU), or
    None when no thread went out before the deadline (monotonic seconds)."""
    t0 = time.monotonic()
    for ran, now in cpu_each_period(pid, deadline):
        idle = [tid for tid, d in ran.items() if d < 1e6]  # < 1 ms of CPU in 30 ms
        busy = [tid for tid, d in ran.items() if d > 10e6]
        if len(idle) == 1 and busy:
            cpu = now[busy[0]][1]
            try:
                for tid in (idle[0], *busy):
                    os.sched_setaffinity(tid, {cpu})
            except OSError:
                return None
            return time.monotonic() - t0, cpu
    return None


def release_when_back(pid, deadline):
    """Once every thread of pid runs again (the out one is back), give them all this driver's
    mask again, so that the rest of the run does not share one CPU."""
    mask = os.sched_getaffinity(0)
    for ran, now in cpu_each_period(pid, deadline):
        if len(ran) >= N and sum(d > 5e6 for d in ran.values()) >= N:  # each > 5 ms of CPU in 30 ms
            for tid in now:
                try:
                    os.sched_setaffinity(tid, mask)
                except OSError:
                    pass
            return


with cpu_competitor() as comp, tempfile.TemporaryDirectory() as d:
    label = "adm rq + rap: a thread out on an active thread's CPU"
    out = os.path.join(d, "out.json")
    argv = [AIRPDES, *map(str, MODEL), "--end-time", "12000", "--mode", "adm", "--threads", str(N),
            "--detector", "rq", "--reactivation", "rap", "--quiet", "--json", out]
    start = time.monotonic()
    p = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)
    narrowed = narrow_inactive_thread(p.pid, start + STOP_S - 0.1)
    time.sleep(max(0.0, start + STOP_S - time.monotonic()))
    comp.kill()
    if narrowed is not None:
        release_when_back(p.pid, time.monotonic() + 3)
    err = p.communicate(timeout=120)[1]
    if p.returncode != 0:
        fail(f"{label}: exit {p.returncode}; stderr: {err.strip()}")
    elif narrowed is None:
        not_checked(f"{label}: no thread was seen out before {STOP_S - 0.1:.1f} s, so none was narrowed")
    else:
        with open(out) as f:
            j = json.load(f)
        assert_same(refs[12000], j, label)
        at, cpu = narrowed
        # The engine's clock starts after the process does: a time before `at` on its clock
        # is before the narrowing.
        outs = [th for th in j["threads"] if th["deactivations"] and th["deactivation_times_s"][0] < at
                and not any(r < at for r in th["reactivation_times_s"])]
        moves = thread_moves(j)
        if not outs:
            fail(f"{label}: a thread was asleep at {at:.2f} s, but none was out by the engine's record; {moves}")
        elif check(all(th["reactivations"] for th in outs),
                 f"{label}: narrowed to CPU {cpu} at {at:.2f} s, the thread never came back after the "
                 f"competitor left at {STOP_S} s: its probes timed the engine's own thread; {moves}"):
            print(f"ok   {label}: narrowed to CPU {cpu} at {at:.2f} s, back after the competitor left "
                  f"(run {j['wall_s']:.2f} s); {moves}")


# With no CPU free of active threads an unpinned out thread cannot probe without timing the
# engine's own thread, and coming back would only share that CPU: each such probe counts as
# slow, in rap_no_spare_cpu, and the thread stays out. Made certain by confining the run
# (this driver's mask, which the engine inherits) and a competitor to one CPU: the competitor
# sends a thread out, and the process has no other CPU.
own_mask = os.sched_getaffinity(0)
one_cpu = min(own_mask)
for det in ("rq", "pi"):
    label = f"adm {det} + rap confined with a competitor to CPU {one_cpu}: no CPU to probe on"
    with cpu_competitor(cpus={one_cpu}) as comp:
        os.sched_setaffinity(0, {one_cpu})
        try:
            j, _ = run(*MODEL, "--end-time", 3000, "--mode", "adm", "--threads", N, "--detector", det,
                       "--reactivation", "rap")
        finally:
            os.sched_setaffinity(0, own_mask)
        # The premise: the competitor's every thread (the busy loop is a worker) shared the CPU.
        masks = {tid: os.sched_getaffinity(int(tid)) for tid in os.listdir(f"/proc/{comp.pid}/task")}
        if not check(all(m == {one_cpu} for m in masks.values()),
                     f"{label}: the competitor's threads were not all confined to CPU {one_cpu}: {masks}"):
            continue
    if not j:
        continue
    assert_same(refs[3000], j, label)
    outs = [th for th in j["threads"] if th["deactivations"]]
    ok = check(outs, f"{label}: no thread went out; {thread_moves(j)}")
    ok = check(all(th["rap_probes"] > 0 and th["rap_no_spare_cpu"] == th["rap_probes"] == th["rap_slow_probes"]
                   for th in outs),
               f"{label}: an out thread's probes ran, or none was tried; {thread_moves(j)}") and ok
    ok = check(not any(th["reactivations"] for th in j["threads"]),
               f"{label}: a thread came back to share the one CPU; {thread_moves(j)}") and ok
    if ok:
        print(f"ok   {label}: {thread_moves(j)}")
finish()
