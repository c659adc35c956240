#!/usr/bin/env python3
"""FM and LADM under CPU-bound competitors: the table of issue 16, for anyone to re-measure.

For each GVT-barrier wait policy (--barrier-wait), mode (fm, ladm with pi + rap) and remote
share, it runs PHOLD (2 threads, 2 PEs x 1000 LPs, lookahead 0.1, mean 1.0) with 0, 1 and 2
CPU-bound competitors (`airload cpu`, unpinned) and prints the no-load wall time, the
slowdown with each load count (loaded time / the same configuration's no-load time of the
same round) and the efficiency (committed / processed events).

Rounds are interleaved: a round runs every configuration once at each load level (the
competitors stay up for the whole level), so a machine whose speed drifts shifts both sides
of a slowdown. Slowdowns are medians over rounds of those per-round ratios, with min-max.
A loaded run that passes --cap times its round's no-load time is stopped and shown as
">cap": the table then says the configuration collapsed, without waiting minutes for it.

The machine must be quiet: every row gets the CPU that anything else used during its runs
("foreign", % of one core, from /proc/stat minus the engine's and the competitors' own CPU);
a figure with foreign CPU above a few % is not to be believed.

Usage: python3 engine/bench/interference_table.py [--rounds 3] [--end-time 50000]
           [--policies block] [--variants "--gvt-period-ms 2;--gvt-period-ms 5"]
           [--modes fm,ladm] [--remotes 0.1,0.4] [--loads 0,1,2] [--cap 20]
           [--foreign] [--pin] [--airpdes engine/build/airpdes,/tmp/old/build/airpdes]

--foreign starts the competitors in sessions of their own: with sched_autogroup (on in
Debian) they are then another scheduling group, as another user's programs are, and the
kernel balances groups, not threads. Several --airpdes binaries (comma-separated) become
rows of their own, interleaved with the rest: an A/B of two engine commits.
"""
import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import json

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.join(HERE, "..", "build")
TICK = os.sysconf("SC_CLK_TCK")
MODE_ARGS = {"fm": [], "ladm": ["--detector", "pi", "--reactivation", "rap"],
             "adm": ["--detector", "pi", "--reactivation", "rap"], "dm": []}


def busy_jiffies():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v) - v[3] - v[4]  # all but idle and iowait


def proc_jiffies(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime + stime
    except (OSError, IndexError, ValueError):
        return 0


class Competitors:
    """n `airload cpu` processes for as long as the context lasts; with foreign=True each in a
    session of its own, hence (with sched_autogroup, or a desktop's per-session cgroups) in
    another scheduling group than the engine, like another user's program."""

    def __init__(self, n, foreign=False):
        self.n, self.procs, self.foreign = n, [], foreign

    def __enter__(self):
        airload = os.path.join(BUILD, "airload")
        for _ in range(self.n):
            self.procs.append(subprocess.Popen([airload, "cpu"], stdout=subprocess.DEVNULL,
                                               start_new_session=self.foreign))
        if self.n:
            time.sleep(0.2)
        return self

    def jiffies(self):
        return sum(proc_jiffies(p.pid) for p in self.procs)

    def __exit__(self, *exc):
        for p in self.procs:
            p.kill()
            p.wait()


def run(airpdes, args, timeout, loads):
    """One engine run: (JSON or None when stopped at the timeout, foreign CPU seconds)."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "out.json")
        b0, l0 = busy_jiffies(), loads.jiffies()
        p = subprocess.Popen([airpdes, *map(str, args), "--quiet", "--json", out])
        try:
            status, ru = _wait(p, timeout)
        except BaseException:
            p.kill()
            p.wait()
            raise
        own = ru.ru_utime + ru.ru_stime if ru else 0.0
        foreign = (busy_jiffies() - b0 - (loads.jiffies() - l0)) / TICK - own
        if status is None:
            return None, max(foreign, 0.0)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"interference_table: airpdes {' '.join(map(str, args))} failed")
        with open(out) as f:
            return json.load(f), max(foreign, 0.0)


def _wait(p, timeout):
    """(wait status, rusage) of p; status None when it was killed at the timeout (None: no limit).
    os.wait4 rather than Popen.wait: the rusage is the engine's own CPU time."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while deadline is None or time.monotonic() < deadline:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG if deadline else 0)
        if pid:
            p.returncode = os.waitstatus_to_exitcode(status)
            return status, ru
        time.sleep(0.01)
    p.send_signal(signal.SIGKILL)
    _, _, ru = os.wait4(p.pid, 0)
    p.returncode = -9
    return None, ru


def label(binary):
    """A binary's row label: "this" for this checkout's engine, else the path given."""
    same = os.path.abspath(binary) == os.path.abspath(os.path.join(BUILD, "airpdes"))
    return "this" if same else binary


def fmt_range(v, digits=2):
    return f"{statistics.median(v):.{digits}f} ({min(v):.{digits}f}-{max(v):.{digits}f})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--airpdes", default=os.path.join(BUILD, "airpdes"),
                    help="comma-separated engine binaries, each a row of its own [engine/build/airpdes]")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds [3]")
    ap.add_argument("--end-time", type=float, default=50000, help="PHOLD end time [50000: ~3-4 s alone]")
    ap.add_argument("--policies", default="default",
                    help="comma-separated --barrier-wait policies (block:US also sets --barrier-spin-us US), "
                         "or 'default' (the engine's) [default]")
    ap.add_argument("--variants", default="",
                    help="semicolon-separated sets of further engine options, each a row of its own "
                         "(e.g. '--gvt-period-ms 2;--gvt-period-ms 5'); an empty set is the engine's defaults ['']")
    ap.add_argument("--modes", default="fm,ladm", help="comma-separated modes [fm,ladm]")
    ap.add_argument("--remotes", default="0.1,0.4", help="comma-separated remote shares [0.1,0.4]")
    ap.add_argument("--loads", default="0,1,2", help="comma-separated CPU load counts; 0 must be one [0,1,2]")
    ap.add_argument("--cap", type=float, default=20, help="stop a loaded run past CAP x its no-load time [20]")
    ap.add_argument("--foreign", action="store_true",
                    help="start the competitors in sessions of their own (another scheduling group)")
    ap.add_argument("--pin", action="store_true", help="run the engine with --pin")
    a = ap.parse_args()
    try:
        policies = [p for p in a.policies.split(",") if p]
        variants = [v.strip() for v in a.variants.split(";")]
        modes = [m for m in a.modes.split(",") if m]
        remotes = [float(r) for r in a.remotes.split(",")]
        loads = sorted({int(n) for n in a.loads.split(",")})
    except ValueError as err:
        sys.exit(f"interference_table: bad list: {err}")
    if a.rounds < 1 or a.end_time <= 0 or a.cap <= 1 or loads[0] != 0 or any(m not in MODE_ARGS for m in modes):
        print("interference_table: need --rounds >= 1, --end-time > 0, --cap > 1, 0 among --loads, "
              f"modes from {', '.join(MODE_ARGS)}", file=sys.stderr)
        sys.exit(2)
    binaries = [b for b in a.airpdes.split(",") if b]
    for b in binaries:
        if not os.access(b, os.X_OK):
            print(f"interference_table: no engine at {b}; build it with `make build`", file=sys.stderr)
            sys.exit(2)

    base = ["--model", "phold", "--threads", 2, "--pes", 2, "--lps-per-pe", 1000, "--events-per-lp", 1,
            "--mean", 1.0, "--lookahead", 0.1, "--end-time", a.end_time, "--seed", 1]
    if a.pin:
        base.append("--pin")
    configs = [(b, p, v, m, r) for b in binaries for p in policies for v in variants for m in modes for r in remotes]

    def args_of(c):
        _, p, v, m, r = c
        wait = []
        if p != "default":  # "block" or "block:4000" (with --barrier-spin-us 4000)
            how, _, spin = p.partition(":")
            wait = ["--barrier-wait", how] + (["--barrier-spin-us", spin] if spin else [])
        return base + ["--mode", m, "--remote", r, *MODE_ARGS[m]] + wait + v.split()

    # results[config][n_loads] = list over rounds of (json or None, foreign_s)
    results = {c: {n: [] for n in loads} for c in configs}
    for rnd in range(a.rounds):
        alone = {}
        for n in loads:
            with Competitors(n, a.foreign) as comp:
                for c in configs:
                    timeout = None if n == 0 else a.cap * alone[c]
                    j, foreign = run(c[0], args_of(c), timeout, comp)
                    if n == 0:
                        alone[c] = j["wall_s"]
                    results[c][n].append((j, foreign))
                    shown = f"{j['wall_s']:.2f} s, eff {j['efficiency']:.3f}" if j else f"stopped at {timeout:.1f} s"
                    print(f"  round {rnd + 1}, {n} load(s), {label(c[0])} {c[1]} {c[2]} {c[3]} remote {c[4]}: {shown}, "
                          f"foreign {foreign:.2f} s", file=sys.stderr, flush=True)

    print(f"# FM and LADM under CPU loads ({time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores, "
          f"PHOLD 2 x 1000 LPs, end time {a.end_time:g}, median (min-max) of {a.rounds} interleaved rounds"
          f"{', competitors in sessions of their own' if a.foreign else ''}{', --pin' if a.pin else ''})\n")
    head = "| engine | wait | options | mode | remote | no-load s |" + "".join(f" slowdown, {n} load{'s' * (n != 1)} |"
                                                          for n in loads[1:])
    head += "".join(f" eff, {n} |" for n in loads) + " foreign CPU % of a core (max) |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for c in configs:
        b, p, v, m, r = c
        zero = [j["wall_s"] for j, _ in results[c][0]]
        row = f"| {label(b)} | {p} | {v or '-'} | {m} | {r:g} | {fmt_range(zero)} |"
        for n in loads[1:]:
            ratios = [(j["wall_s"] / z if j else float("inf")) for (j, _), z in zip(results[c][n], zero)]
            cell = fmt_range(ratios)
            if any(x == float("inf") for x in ratios):
                stopped = sum(x == float("inf") for x in ratios)
                cell = cell.replace("inf", f">{a.cap:g}") + f" ({stopped} stopped)"
            row += f" {cell} |"
        for n in loads:
            eff = [j["efficiency"] for j, _ in results[c][n] if j]
            row += f" {fmt_range(eff, 3) if eff else '-'} |"
        worst = 0.0
        for n in loads:
            for j, foreign in results[c][n]:
                if j:
                    worst = max(worst, 100 * foreign / j["wall_s"])
        row += f" {worst:.1f} |"
        print(row, flush=True)
    cores = os.cpu_count()
    print(f"\nEq. 1 (proportional slowdown, {cores} cores, 2 threads): " +
          ", ".join(f"{n} load{'s' * (n != 1)} {max(1.0, (2 + n) / cores):.2f}" for n in loads[1:]))


if __name__ == "__main__":
    main()
