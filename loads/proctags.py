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


def cpu_seconds(pids):
    """utime + stime summed over pids (each with all its threads); gone processes count 0."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        except (OSError, IndexError, ValueError):
            pass
    return total
