"""The lab's own cgroups, on cgroup v2 where the machine has it and v1 otherwise.

A LabCgroups object creates one uniquely named parent group (airlab-<pid>-<random>) with
one child per role ("engine", "loads"), applies CPU sets, bandwidth limits and weights,
lets a child process join a role before exec (`join_preexec`), and on `remove()` kills
whatever is still inside and deletes every directory it made. A setup asks only for the
controllers it needs (cpuset: cpuset; quota, weight: cpu), so a machine without one is not
refused the setups that do without it. Nothing else is touched, except that on v2 the
requested controllers are enabled in the mount's top cgroup.subtree_control if they were
not (left on: other groups may rely on them by then)."""
import os
import signal
import time
import uuid
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
CONTROLLERS = ("cpu", "cpuset")  # all the lab uses; each setup asks for its own


class CgroupError(Exception):
    """The machine cannot apply what a setup asks for (the message says why)."""


def cgroup2_mounts():
    """Every cgroup2 mount point: /sys/fs/cgroup on a pure v2 machine, often
    /sys/fs/cgroup/unified beside v1 hierarchies on a hybrid one."""
    try:
        with open("/proc/mounts") as f:
            return [Path(ln.split()[1]) for ln in f if ln.split()[2] == "cgroup2"]
    except OSError:
        return [ROOT] if (ROOT / "cgroup.controllers").exists() else []


def v2_root(controllers=CONTROLLERS, mounts=None):
    """(cgroup2 mount with these controllers, None) or (None, why not). `mounts` defaults
    to the machine's (a test can pass a folder laid out like one)."""
    why = None
    for mnt in cgroup2_mounts() if mounts is None else mounts:
        try:
            ctrl = (Path(mnt) / "cgroup.controllers").read_text().split()
        except OSError:
            continue
        missing = [c for c in controllers if c not in ctrl]
        if not missing:
            return Path(mnt), None
        why = f"cgroup v2 at {mnt} without the {', '.join(missing)} controller(s)"
    return None, why


def detect(controllers=CONTROLLERS, mounts=None, v1_root=ROOT):
    """("v2", None) | ("v1", None) | (None, reason): which cgroup interface holds these
    controllers. v2 wins wherever a cgroup2 mount holds them all, hybrid machines included:
    a controller lives in one hierarchy only, so v1 is used only where v2 lacks it."""
    root, why_not_v2 = v2_root(controllers, mounts)
    if root:
        return ("v2", None) if os.access(root, os.W_OK) else (None, f"{root} is not writable (run as root)")
    v1_root = Path(v1_root)
    missing = [c for c in controllers if not (v1_root / c / "tasks").exists()]
    if missing:
        return None, (why_not_v2 or "no cgroup v2") + f" and no v1 {', '.join(missing)} hierarchy under {v1_root}"
    for c in controllers:
        if not os.access(v1_root / c, os.W_OK):
            return None, f"{v1_root / c} is not writable (run as root)"
    return "v1", None


def availability(controllers):
    """(True, None) or (False, reason): a setup that needs only these controllers can run here."""
    version, reason = detect(controllers)
    return (True, None) if version else (False, reason)


def _write(path, value):
    try:
        Path(path).write_text(str(value))
    except OSError as e:
        raise CgroupError(f"cannot write {value!r} to {path}: {e.strerror}") from None


def _read(path):
    """What the kernel holds now (recorded as applied: the value in force, not the request)."""
    return Path(path).read_text().strip()


class LabCgroups:
    def __init__(self, roles=("engine", "loads"), controllers=CONTROLLERS):
        self.controllers = tuple(controllers)
        self.version, reason = detect(self.controllers)
        if not self.version:
            raise CgroupError(reason)
        self.name = f"airlab-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.v2 = v2_root(self.controllers)[0] if self.version == "v2" else None
        self.roles = roles
        self.made = []  # directories to remove, children first at removal

    def create(self):
        """Make the groups. Separate from the constructor so that the owner holds this
        object (and so its remove()) before the first directory exists; each directory is
        listed in `made` before it is made: an interrupt at any instant leaves none that
        remove() does not know (remove() skips the ones that never came to be)."""
        if self.version == "v2":
            self._make_v2()
        else:
            self._make_v1()
        return self

    # --- creation
    def _mkdir(self, d):
        self.made.append(d)  # registered first, then made
        d.mkdir()

    def _make_v2(self):
        subtree = self.v2 / "cgroup.subtree_control"
        enabled = subtree.read_text().split()
        for c in self.controllers:
            if c not in enabled:
                _write(subtree, f"+{c}")
        parent = self.v2 / self.name
        self._mkdir(parent)
        _write(parent / "cgroup.subtree_control", " ".join(f"+{c}" for c in self.controllers))
        for role in self.roles:
            self._mkdir(parent / role)

    def _make_v1(self):
        for c in self.controllers:
            parent = ROOT / c / self.name
            self._mkdir(parent)
            if c == "cpuset":  # v1 cpusets start empty: inherit the parent's CPUs and memory
                for f in ("cpuset.cpus", "cpuset.mems"):
                    _write(parent / f, (ROOT / c / f).read_text().strip())
            for role in self.roles:
                self._mkdir(parent / role)
                if c == "cpuset":
                    for f in ("cpuset.cpus", "cpuset.mems"):
                        _write(parent / role / f, (parent / f).read_text().strip())

    def _dirs(self, role):
        if self.version == "v2":
            return [self.v2 / self.name / role]
        return [ROOT / c / self.name / role for c in self.controllers]

    def _dir(self, role, controller):
        if controller not in self.controllers:  # a setup asked for too few: say so, not ENOENT
            raise CgroupError(f"the lab's cgroups were made without the {controller} controller")
        return self.v2 / self.name / role if self.version == "v2" else ROOT / controller / self.name / role

    # --- settings
    def set_cpus(self, role, cpus):
        _write(self._dir(role, "cpuset") / "cpuset.cpus", cpus)
        return {"cpuset.cpus": _read(self._dir(role, "cpuset") / "cpuset.cpus")}

    def set_quota(self, role, cpu_share, period_us=100000):
        quota = max(1000, int(cpu_share * period_us))
        d = self._dir(role, "cpu")
        if self.version == "v2":
            _write(d / "cpu.max", f"{quota} {period_us}")
            return {"cpu.max": _read(d / "cpu.max")}
        _write(d / "cpu.cfs_period_us", period_us)
        _write(d / "cpu.cfs_quota_us", quota)
        return {"cpu.cfs_quota_us": int(_read(d / "cpu.cfs_quota_us")),
                "cpu.cfs_period_us": int(_read(d / "cpu.cfs_period_us"))}

    def set_weight(self, role, weight):
        """weight on the v2 scale (1-10000, default 100); v1 shares = weight * 1024 / 100."""
        d = self._dir(role, "cpu")
        if self.version == "v2":
            _write(d / "cpu.weight", weight)
            return {"cpu.weight": int(_read(d / "cpu.weight"))}
        shares = max(2, weight * 1024 // 100)
        _write(d / "cpu.shares", shares)
        return {"cpu.shares": int(_read(d / "cpu.shares"))}

    # --- membership
    def join_preexec(self, role):
        """A function for subprocess preexec_fn: moves the child into the role's groups."""
        files = [str(d / "cgroup.procs") for d in self._dirs(role)]

        def join():
            pid = str(os.getpid())
            for f in files:
                with open(f, "w") as fh:
                    fh.write(pid)
        return join

    def pids(self, role=None):
        out = set()
        for r in ([role] if role else self.roles):
            for d in self._dirs(r):
                try:
                    out.update(int(x) for x in (d / "cgroup.procs").read_text().split())
                except OSError:
                    pass
        return out

    def paths(self):
        return [str(p) for p in self.made]

    # --- clean-up
    def remove(self):
        """Kill whatever is left inside, then delete every directory this object made."""
        deadline = time.monotonic() + 5
        while self.pids() and time.monotonic() < deadline:
            for pid in self.pids():
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.02)
        errors = []
        for d in reversed(self.made):
            for _ in range(50):  # a just-killed task may take a moment to leave
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError as e:
                    err = e
                    time.sleep(0.02)
            else:
                errors.append(f"{d}: {err.strerror}")
        self.made = []
        if errors:
            raise CgroupError("could not remove " + "; ".join(errors))


def leftover_lab_groups():
    """Lab cgroups that exist now (for tests and `airlab doctor`)."""
    found = []
    for base in [*cgroup2_mounts(), *(ROOT / c for c in CONTROLLERS)]:
        if base.is_dir():
            found += [str(p) for p in base.glob("airlab-*") if p.is_dir()]
    return found


