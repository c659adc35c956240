"""Who else used the CPUs while the engine ran: the trial's `noise` object.

The machine's busy CPU time over the engine's run (/proc/stat: user, nice, system, irq,
softirq of all CPUs; steal and idle are no one's work here) minus what the trial itself
used: the engine (perf's task-clock, else the CPU of the process tree the runner waited
for), its loads (their processes' CPU from /proc, children included) and the instrument
(the runner's own threads, perf, the loads' watchdog, any helper the setup started, such
as a private SLURM, and the workflow above the runner: Snakemake, make). What is left, `foreign_cpu_s`, is other work on the machine
(another user, a build, a kernel thread); more than `threshold` of one core over the run
marks the trial `disturbed`.

That difference undercounts when CPUs go idle many thousand times a second: /proc/stat
credits busy time per tick, and a CPU that idles between ticks loses the short busy spells
in between (an on-off load with a 10 us period, alone on this VM: 2.8 s of its own CPU in
4 s, 1.6 s of busy ticks on the machine; in the 948b0e5 runs foreign CPU came out -1.0 to
-1.3 s beside such a load). So foreign CPU is also summed from the other processes' own
counts (exact, but blind to work in another PID namespace and to processes that ended
during the run), and the larger of the two estimates is taken: a disturbance either one
sees counts.

Cheap on purpose: two reads of /proc/stat, getrusage() and a scan of /proc's process list
around the run; nothing runs while the engine does."""
import os
import resource
import time

from airbase import proctags
from workflows.setups import leftovers

_TICK = os.sysconf("SC_CLK_TCK")
DEFAULT_THRESHOLD = 0.05  # share of one core over the run


def _busy_and_steal_s():
    """The machine's busy CPU time and the hypervisor's steal (CPU time it ran something
    else while this machine's CPUs wanted to run; 0 on bare metal), from one read."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal guest guest_nice (guest is inside user)
    return (v[0] + v[1] + v[2] + v[5] + v[6]) / _TICK, (v[7] / _TICK if len(v) > 7 else 0.0)


def machine_busy_s():
    return _busy_and_steal_s()[0]


def _self_cpu_s():
    ru = resource.getrusage(resource.RUSAGE_SELF)  # every thread of the runner
    return ru.ru_utime + ru.ru_stime


def _cpu_by_pid(pids):
    return {pid: proctags.cpu_seconds([pid]) for pid in pids}


def process_table():
    """{pid: (parent pid, start time in ticks, own CPU seconds, name)} of every process now."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
            end = stat.rindex(")")  # the name may itself hold ")"
            comm, fields = stat[stat.index("(") + 1:end], stat[end + 1:].split()
            out[int(name)] = (int(fields[1]), int(fields[19]), (int(fields[11]) + int(fields[12])) / _TICK, comm)
        except (OSError, IndexError, ValueError):
            pass  # ended while we looked
    return out


def _descendants(table, root):
    kids = {}
    for pid, row in table.items():
        kids.setdefault(row[0], []).append(pid)
    out, todo = set(), [root]
    while todo:
        for k in kids.get(todo.pop(), []):
            if k not in out:
                out.add(k)
                todo.append(k)
    return out


def _started_before(before, after, pid):
    """Whether pid in `after` is the same process as in `before` (not new, not a reused PID)."""
    was = before.get(pid)
    return was is not None and was[1] == after[pid][1]


def others_by_pid(before, after, ours):
    """{pid: CPU seconds} of the processes not in `ours` between two process tables: each
    one's own CPU (not its reaped children's: a SLURM daemon reaps our engine), counted
    from 0 when it started in between (a PID reused counts as new)."""
    return {pid: max(0.0, row[2] - before[pid][2]) if _started_before(before, after, pid) else row[2]
            for pid, row in after.items() if pid not in ours}


def top_foreign(before, after, by_pid, n=3, min_s=0.01):
    """Who the foreign CPU was: the n processes of by_pid that used the most (at least
    min_s), each {pid, name, cpu_s, new}. new: it started during the run, as a process
    of the trial's own would have; one that ran before it cannot be the trial's."""
    top = sorted(((cpu, pid) for pid, cpu in by_pid.items() if cpu >= min_s), reverse=True)[:n]
    return [{"pid": pid, "name": after[pid][3] if len(after[pid]) > 3 else "?", "cpu_s": round(cpu, 3),
             "new": not _started_before(before, after, pid)} for cpu, pid in top]


def named(processes):
    """'name (pid) 1.23 s, ...' for a warning line."""
    return ", ".join(f"{p['name']} ({p['pid']}) {p['cpu_s']:.2f} s" for p in processes)


def ancestors(pid):
    """The processes above pid up to (not including) init: the workflow that started the
    runner (Snakemake, make, the shells between them)."""
    out = []
    while True:
        try:
            with open(f"/proc/{pid}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            return out
        if ppid <= 1:
            return out
        out.append(ppid)
        pid = ppid


def _own_cpu_s(pids):
    """{pid: CPU seconds of the process itself, without its children}: an ancestor's
    children are the runner and the trials before it, counted elsewhere."""
    return {pid: proctags.cpu_seconds([pid], children=False) for pid in pids}


def workflow_snapshot():
    """CPU seconds so far of the workflow above this process (see ancestors)."""
    return _own_cpu_s(ancestors(os.getpid()))


def workflow_cpu_since(snapshot):
    now = _own_cpu_s(snapshot)
    return sum(max(0.0, now[p] - snapshot[p]) for p in now)


def settle_workflow(max_wait_s=5.0, quiet_s=0.2, poll_s=0.05):
    """Wait (at most max_wait_s) until the workflow above this process has used no CPU for
    quiet_s, and return the seconds waited. Snakemake finishes the previous job (its
    records, the next job's selection) while it starts the next one: a trial started at
    once shares its first tenths of a second with that work, on a machine with as many
    cores as engine threads. Only for a workflow the runner cannot stop (no
    --pause-workflow): a stopped one cannot compete (workflows/workflow_pause.py)."""
    t0 = time.monotonic()
    pids = ancestors(os.getpid())
    last, quiet_since = _own_cpu_s(pids), t0
    while True:
        now = time.monotonic()
        if now - quiet_since >= quiet_s or now - t0 >= max_wait_s:
            return round(now - t0, 3)
        time.sleep(poll_s)
        cpu = _own_cpu_s(pids)
        if any(cpu[p] > last[p] for p in cpu):
            quiet_since = time.monotonic()
        last = cpu


class Window:
    """Opened just before the engine starts, closed as soon as it has been waited for."""

    def __init__(self, runner_pid=None):
        self.key = leftovers.KEY
        self.runner_pid = str(runner_pid or os.getpid())
        self.procs0 = process_table()  # first: its own CPU stays out of the window
        # Processes the runner's setup already started (a private SLURM): their CPU during
        # the run belongs to the instrument. Scanned before the window opens.
        self.helpers0 = _cpu_by_pid(proctags.find(self.key, self.runner_pid))
        # The workflow above the runner (Snakemake, make; kept quiet by settle_workflow) is the
        # lab's own machinery: the instrument's, not foreign.
        self.workflow0 = _own_cpu_s(ancestors(int(self.runner_pid)))
        self.self0 = _self_cpu_s()
        self.busy0, self.steal0 = _busy_and_steal_s()
        self.t0 = time.monotonic()
        self.t1 = None

    def close(self):
        self.t1 = time.monotonic()
        self.busy1, self.steal1 = _busy_and_steal_s()
        self.self1 = _self_cpu_s()
        self.workflow1 = _own_cpu_s(self.workflow0)
        self.procs1 = process_table()

    def account(self, engine_tree_s, task_clock_s, load_leaders, load_tag, watchdog_pid, engine_tag,
                threshold=DEFAULT_THRESHOLD, wrapper_s=0.0, stopped_loads_s=0.0):
        """The noise object. engine_tree_s: CPU of the process tree the runner waited for
        (perf and the engine; None when the engine ran elsewhere, as a SLURM job, and the
        runner waited for its wrapper, whose CPU, wrapper_s, is the instrument's);
        task_clock_s: the engine's CPU by perf (None without perf)."""
        loads_s = proctags.cpu_seconds(set(load_leaders)) + stopped_loads_s  # first: they still run
        load_pids = set(load_leaders) | set(proctags.find("AIRLAB_LOAD_SET", load_tag)) if load_tag else set(load_leaders)
        load_pids = proctags.with_groups(load_pids)  # a program may overwrite its workers' tags
        loads_s += proctags.cpu_seconds(load_pids - set(load_leaders))
        engine_pids = set(proctags.find("AIRLAB_TRIAL", engine_tag)) if engine_tag else set()
        helpers = wrapper_s
        for pid in set(proctags.find(self.key, self.runner_pid)) - load_pids - engine_pids:
            helpers += max(0.0, proctags.cpu_seconds([pid]) - self.helpers0.get(pid, 0.0))
        watchdog_s = proctags.cpu_seconds([watchdog_pid]) if watchdog_pid else 0.0
        if task_clock_s is not None:
            engine_s = task_clock_s
            perf_s = max(0.0, engine_tree_s - task_clock_s) if engine_tree_s is not None else 0.0
        else:
            engine_s, perf_s = engine_tree_s, 0.0
        runner_self = self.self1 - self.self0
        workflow_s = sum(max(0.0, self.workflow1[p] - self.workflow0[p]) for p in self.workflow1)
        runner_s = runner_self + perf_s + watchdog_s + helpers + workflow_s
        window = self.t1 - self.t0
        busy = self.busy1 - self.busy0
        from_machine = None if engine_s is None else busy - engine_s - loads_s - runner_s
        runner = int(self.runner_pid)
        ours = (load_pids | engine_pids | set(proctags.find(self.key, self.runner_pid)) | {runner}
                | _descendants(self.procs1, runner) | set(self.workflow1)
                | ({watchdog_pid} if watchdog_pid else set()))
        by_pid = others_by_pid(self.procs0, self.procs1, ours)
        from_processes = sum(by_pid.values())
        foreign = None if from_machine is None else max(from_machine, from_processes)
        limit = threshold * window
        return {
            "window_s": round(window, 4), "machine_busy_cpu_s": round(busy, 3),
            "engine_cpu_s": None if engine_s is None else round(engine_s, 3),
            "loads_cpu_s": round(loads_s, 3), "runner_cpu_s": round(runner_s, 3),
            "runner_parts_cpu_s": {"runner": round(runner_self, 3), "perf": round(perf_s, 3),
                                   "watchdog": round(watchdog_s, 3), "setup_helpers": round(helpers, 3),
                                   "workflow": round(workflow_s, 3)},
            "foreign_cpu_s": None if foreign is None else round(foreign, 3),
            # the two estimates it is the larger of (see the module's doc)
            "foreign_from_machine_cpu_s": None if from_machine is None else round(from_machine, 3),
            "foreign_from_processes_cpu_s": round(from_processes, 3),
            "foreign_processes": top_foreign(self.procs0, self.procs1, by_pid),
            # Recorded, not judged: a VM whose host is busy runs slower without any foreign
            # work here (ticks of 10 ms; see docs/reference-runs.md).
            "steal_cpu_s": round(self.steal1 - self.steal0, 3),
            "threshold": threshold, "threshold_cpu_s": round(limit, 3),
            "disturbed": None if foreign is None else foreign > limit,
            "window_monotonic_s": [self.t0, self.t1],
        }
