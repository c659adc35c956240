"""Finding the lab's processes by a tag in their environment. Every load carries
AIRLAB_LOAD_SET (its set) and AIRLAB_LOAD_ID (itself); the engine carries AIRLAB_TRIAL.
Environment variables survive srun, slurmstepd, shells and wrappers, so a tag finds a
process wherever it was started from (a gang job's program is not our descendant)."""
import os


def find(key, value=None):
    """PIDs of live (non-zombie) processes whose environment has key (= value, if given)."""
    want = f"{key}=".encode()
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    continue
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read().split(b"\0")
        except (OSError, IndexError):
            continue
        for item in env:
            if item.startswith(want) and (value is None or item[len(want):].decode(errors="replace") == value):
                found.append(int(pid))
                break
    return found


def with_groups(pids):
    """pids and every live process in a process group of one of them (not this process's
    own group). A tag can be lost: a program may write over its argv and the environment
    that follows it to name its workers (stress-ng does unless run with --keep-name, as
    the lab runs it), and then only their process group says whose they are."""
    pids = set(pids)
    groups = set()
    for pid in pids:
        try:
            groups.add(os.getpgid(pid))
        except (ProcessLookupError, PermissionError):
            pass
    groups.discard(os.getpgrp())
    if not groups:
        return pids
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                if int(f.read().rsplit(")", 1)[1].split()[2]) in groups:
                    pids.add(int(pid))
        except (OSError, IndexError, ValueError):
            pass
    return pids


def cpu_seconds(pids, children=True):
    """CPU time (user + system) of pids, each with all its threads and the children it has
    waited for (a stress-ng worker, a finished x264 run): utime + stime + cutime + cstime;
    children=False: the processes themselves only (utime + stime).
    Gone processes count 0. A live process's children that still run are not included:
    give their PIDs too (find() by tag does). Zombies still answer, so a process that ended
    can be read until it is reaped."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += sum(int(v) for v in fields[11:15 if children else 13]) / tick
        except (OSError, IndexError, ValueError):
            pass
    return total
