"""`airlab doctor`: what this machine supports, and the reason for every "no"."""
import os
import shutil
import signal
import subprocess
import tempfile

from airbase.paths import AIRLOAD, AIRPDES
from workflows import machine, perf
from workflows.noise import process_table
from workflows.setups import cgroups

HELP = """\
Lists, for this machine: cores and topology (hwloc), kernel, the kernel's own threads that
keep a share of a CPU (background no load of the lab started), the cgroup interface and its
controllers, whether perf software and hardware counters work, whether the private SLURM
for the gang setup can be started, which load kinds and setups are available. Every "no"
comes with its reason. Exit 0 (it reports; it does not judge).

  airlab doctor            everything (starts a private SLURM for a few seconds)
  airlab doctor --quick    skip the SLURM start-up check
"""


def register(sub):
    import argparse
    p = sub.add_parser("doctor", help="what this machine supports (and why not)", description=HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="do not start SLURM to check gang scheduling")
    p.set_defaults(func=doctor_cmd)


def _line(ok, what, detail=""):
    mark = {True: "yes ", False: "no  ", None: "    "}[ok]
    print(f"  {mark} {what}{': ' + detail if detail else ''}")


def topology():
    if not shutil.which("lstopo-no-graphics"):
        return "hwloc is not installed (Debian package hwloc)"
    out = subprocess.run(["lstopo-no-graphics", "--no-io", "--of", "console"], capture_output=True,
                         text=True, timeout=30)
    lines = [ln.strip() for ln in out.stdout.splitlines() if ln.strip()]
    return "; ".join(lines[:6]) if lines else out.stderr.strip()


# What a kernel thread seen busy is, when its name says so (a line of explanation, no logic).
KNOWN_KERNEL_THREADS = {
    "kdamond": "DAMON's memory monitor, runnable for 6-28 ms at a time a few times a minute on "
               "the 2-core VM: an adaptive detector can take a burst for a competitor, so PI "
               "waits --pi-hold-ms before it deactivates",
}
KERNEL_THREAD_SHARE = 0.001  # of one CPU, averaged since the thread started


def busy_kernel_threads(min_share=None, table=None, uptime=None):
    """[(name, share of one CPU since it started)] of the kernel's own threads (kthreadd's
    children) at or above min_share (KERNEL_THREAD_SHARE), busiest first. They are background
    the engine competes with that no load of the lab started; their bursts, not their
    average, reach detectors. table and uptime default to the machine now; a caller that
    checks the answer passes its own snapshot, since kworkers end and rename themselves
    (kworker/0:1-events becomes kworker/0:1-mm_percpu_wq) between two reads of /proc."""
    min_share = KERNEL_THREAD_SHARE if min_share is None else min_share
    uptime = float(open("/proc/uptime").read().split()[0]) if uptime is None else uptime
    tick = os.sysconf("SC_CLK_TCK")
    out = []
    for ppid, start, cpu_s, name in (process_table() if table is None else table).values():
        alive_s = uptime - start / tick
        if ppid == 2 and alive_s > 1 and cpu_s / alive_s >= min_share:  # kthreadd's children
            out.append((name, cpu_s / alive_s))
    return sorted(out, key=lambda x: -x[1])


def kernel_threads_line():
    busy = busy_kernel_threads()
    if not busy:
        return f"none used {KERNEL_THREAD_SHARE:.1%} of a CPU or more on average"
    said = []
    for name, share in busy:
        what = next((w for k, w in KNOWN_KERNEL_THREADS.items() if name.startswith(k)), None)
        said.append(f"{name} {share:.2%} of a CPU on average" + (f" ({what})" if what else ""))
    return "; ".join(said)


def cgroup_controllers():
    """The controllers each cgroup hierarchy holds: every cgroup2 mount's list, and the
    v1 hierarchies by name (a hybrid machine has both)."""
    parts = []
    for mnt in cgroups.cgroup2_mounts():
        try:
            ctrl = " ".join((mnt / "cgroup.controllers").read_text().split()) or "none"
        except OSError as e:
            ctrl = f"unreadable ({e.strerror})"
        parts.append(f"v2 at {mnt}: {ctrl}")
    try:
        with open("/proc/mounts") as f:
            v1 = sorted({ln.split()[1].rsplit("/", 1)[-1] for ln in f if ln.split()[2] == "cgroup"})
    except OSError as e:
        return f"cannot read /proc/mounts: {e.strerror}"
    if v1:
        parts.append("v1: " + " ".join(v1))
    return "; ".join(parts) or "no cgroup hierarchy mounted"


def perf_status():
    """(software ok, hardware ok, detail) from a real `perf stat` of a short command."""
    with tempfile.TemporaryDirectory() as d:
        argv, missing = perf.wrap(["true"], f"{d}/perf.csv")
        if missing:
            return False, False, missing
        run = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        counters = perf.read(f"{d}/perf.csv")
        if run.returncode != 0:
            return False, False, run.stderr.strip()[-200:]
    sw = counters["task-clock"]["status"] == "ok"
    hw = counters["cycles"]
    return sw, hw["status"] == "ok", hw["reason"] or ""


def doctor_cmd(args):
    from loads.profiles import ProfileError, list_profiles, resolve_profile
    from workflows.setups import KINDS, kind_module, list_setups, open_setup
    f = machine.facts()
    print("machine")
    _line(None, "cores", f"{f['cores']} usable ({f['online_cpus']} online), {f['cpu_model']}")
    _line(None, "kernel", f["kernel"])
    _line(None, "topology", topology())
    _line(None, "kernel threads", kernel_threads_line())
    print("engine")
    _line(os.access(AIRPDES, os.X_OK), "airpdes", str(AIRPDES))
    _line(os.access(AIRLOAD, os.X_OK), "airload", str(AIRLOAD))
    from workflows.machine_speed import AIRPROBE
    _line(os.access(AIRPROBE, os.X_OK), "airprobe", f"{AIRPROBE} (the machine's speed before and after each trial)")
    _line(os.path.exists("/proc/thread-self/schedstat"), "rq detector",
          "/proc/thread-self/schedstat" + ("" if os.path.exists("/proc/thread-self/schedstat") else " is missing"))
    print("cgroups")
    for ctrl in cgroups.CONTROLLERS:  # each setup needs only its own (its module's CONTROLLERS)
        users = ", ".join(k for k in KINDS if ctrl in getattr(kind_module(k), "CONTROLLERS", ()))
        version, reason = cgroups.detect((ctrl,))
        _line(bool(version), f"{ctrl} controller ({users})", version or reason)
    _line(None, "controllers", cgroup_controllers())
    from workflows.setups import leftovers
    left = leftovers.stale_cgroups()
    _line(not left, "no cgroups left by a killed trial runner", ", ".join(left) + (
        " (the next trial removes them)" if left else ""))
    stale = leftovers.stale_processes()
    _line(not stale, "no processes left by a killed trial runner",
          ", ".join(f"{p} of runner {o}" for p, o in stale) + (" (the next trial removes them)" if stale else ""))
    print("perf")
    sw, hw, detail = perf_status()
    _line(sw, "software counters (task-clock, context switches, ...)")
    _line(hw, "hardware counters (cycles, cache misses)", "" if hw else
          f"{detail}; the engine's locality figure stands in for cache misses")
    print("setups")
    for name in list_setups():
        s = open_setup(name)
        ok, why = s.availability()
        if ok and s.kind == "gang" and not args.quick:
            ok, why = _gang_start_check()
        _line(ok, f"{name} ({s.kind})", why or "")
    print("load kinds")
    from loads import kinds, parsec
    for mod in kinds.KINDS.values():  # each kind says what it needs of this machine
        for ok, detail, label in mod.doctor_lines():
            _line(ok, label, detail or "")
    print("profiles")
    for name in list_profiles():
        try:
            r = resolve_profile(name)
        except ProfileError as e:  # one broken file must not hide the rest of the report
            _line(False, name, e.errors[0])
            continue
        tag = " [stand-in]" if r["stand_in"] else ""
        # The whole reason (what the PARSEC tree lacks), but the install help only once, above.
        why = r["reasons"] or sorted({"stand-in because " + ("PARSEC 3.0 is not installed (see parsec above)"
                                                             if p["replaces_unavailable"] == parsec.HELP
                                                             else p["replaces_unavailable"])
                                      for p in r["processes"] if p.get("replaces_unavailable")})
        _line(r["available"], name + tag, "; ".join(why))
    return 0


def _gang_start_check():
    from workflows.setups import leftovers
    from workflows.setups.slurm import GangCluster, GangError
    # Tagged and placed like a trial's, so if doctor is killed mid-check the next trial
    # sweeps the daemons and their folder (workflows/setups/leftovers.py).
    os.environ[leftovers.KEY] = str(os.getpid())
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # as Ctrl-C: stop() runs
    with tempfile.TemporaryDirectory(prefix=f"{leftovers.WORKDIR_PREFIX}{os.getpid()}-") as d:
        g = GangCluster(d)
        try:
            g.start()
        except Exception as e:
            try:
                g.stop()
            except GangError:
                pass  # the start's own error says more
            return False, f"could not start a private SLURM: {e}"
        try:
            g.stop()  # waits until every process of the cluster is gone
        except GangError as e:
            return False, f"a private SLURM started but did not stop cleanly: {e}"
        return True, "a private SLURM started and stopped"
