"""What a trial runner that was killed outright (SIGKILL, OOM killer, a lost node) could not
clean up: its engine under perf, SLURM daemons and job steps, its cgroups. Every process a
runner starts inherits AIRLAB_RUNNER=<runner pid> (through perf, srun, slurmd and
slurmstepd alike), its cgroups are named airlab-<runner pid>-... and its work folder (SLURM
state, engine output) airlab-trial-<runner pid>-... in the temporary directory; whatever belongs to a
runner that no longer exists is stale. Each trial sweeps before it starts; `airlab doctor`
lists what it finds. Nothing of a live runner is touched, except by that runner itself
(sweep_runner, when its trial did not succeed)."""
import os
import re
import shutil
import signal
import tempfile
import time
from pathlib import Path

from airbase import proctags
from workflows.setups import cgroups

KEY = "AIRLAB_RUNNER"
WORKDIR_PREFIX = "airlab-trial-"


def _alive(pid):
    return Path(f"/proc/{pid}").exists()


def _owner(pid):
    try:
        for item in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
            if item.startswith(KEY.encode() + b"="):
                return int(item.split(b"=", 1)[1])
    except (OSError, ValueError):
        pass
    return None


def stale_processes():
    """[(pid, owner pid)] of lab processes whose runner is gone."""
    out = []
    for pid in proctags.find(KEY):
        owner = _owner(pid)
        if owner is not None and owner != pid and not _alive(owner):
            out.append((pid, owner))
    return out


def stale_cgroups():
    out = []
    for g in cgroups.leftover_lab_groups():
        m = re.match(r"airlab-(\d+)-", Path(g).name)
        if m and not _alive(int(m.group(1))):
            out.append(g)
    return out


def stale_workdirs():
    out = []
    for d in Path(tempfile.gettempdir()).glob(f"{WORKDIR_PREFIX}*-*"):
        m = re.match(rf"{WORKDIR_PREFIX}(\d+)-", d.name)
        if m and d.is_dir() and not _alive(int(m.group(1))):
            out.append(str(d))
    return out


def _kill_until_gone(find):
    """SIGKILL every (pid, note) find() returns, a few rounds: a killed slurmd may have had
    children that only show up (orphaned) after it is gone. Returns what was killed."""
    removed = []
    for _ in range(3):
        procs = find()
        if not procs:
            break
        for pid, note in procs:
            try:
                name = Path(f"/proc/{pid}/comm").read_text().strip()
                os.kill(pid, signal.SIGKILL)
                removed.append(f"process {pid} ({name}){note}")
            except OSError:
                pass
        time.sleep(0.2)
    return removed


def sweep():
    """Kill stale processes, remove stale cgroups; returns what was removed (descriptions)."""
    removed = _kill_until_gone(lambda: [(pid, f" of dead runner {owner}") for pid, owner in stale_processes()])
    for g in stale_cgroups():
        _remove_group(g)
        removed.append(f"cgroup {g}")
    for d in stale_workdirs():  # last: a daemon killed above may have held files there
        shutil.rmtree(d, ignore_errors=True)
        removed.append(f"work folder {d}")
    return removed


def sweep_runner(runner):
    """Everything of the runner with this PID that still exists: its last line of defence
    when a trial ends any other way than success. A signal's exception can land anywhere,
    inside Popen (a child nobody holds) or a clean-up (groups not yet removed)."""
    removed = _kill_until_gone(lambda: [(pid, "") for pid in proctags.find(KEY, str(runner)) if pid != os.getpid()])
    for g in cgroups.leftover_lab_groups():
        if Path(g).name.startswith(f"airlab-{runner}-"):
            _remove_group(g)
            removed.append(f"cgroup {g}")
    for d in Path(tempfile.gettempdir()).glob(f"{WORKDIR_PREFIX}{runner}-*"):
        shutil.rmtree(d, ignore_errors=True)
        removed.append(f"work folder {d}")
    return removed


def _remove_group(g):
    """Kill what is inside a lab cgroup, then remove it, children first."""
    d = Path(g)
    for proc_file in d.rglob("cgroup.procs"):
        try:
            pids = proc_file.read_text().split()
        except OSError:
            continue
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (OSError, ValueError):
                pass
    for sub in sorted((p for p in d.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)) + [d]:
        for _ in range(50):
            try:
                sub.rmdir()
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.02)
