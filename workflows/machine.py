"""Facts about the machine a trial ran on, recorded in every trial."""
import os
import platform
import socket
import subprocess

from airbase.cpus import cpu_list
from airbase.paths import ROOT
from workflows.setups import cgroups


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def smt():
    """Whether a CPU this process may use shares its core with another hardware thread (the
    kernel's topology; None when unreadable). A VM sees its vCPUs' topology as the host
    presents it: two vCPUs on sibling threads of one host core may still say False."""
    try:
        for cpu in os.sched_getaffinity(0):
            with open(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list") as f:
                if len(cpu_list(f.read().strip())) > 1:
                    return True
        return False
    except (OSError, ValueError):
        return None


def virtualised():
    """Whether the kernel runs under a hypervisor (the CPU's 'hypervisor' flag; None when
    /proc/cpuinfo has no flags line, as on some non-x86 machines)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("flags", "Features")):
                    return "hypervisor" in line.split(":", 1)[1].split()
    except OSError:
        pass
    return None


def cgroup_fact():
    """'v2', 'v1', or per controller ('cpu v2; cpuset unusable: ...') when they differ: each
    setup needs only its own controller, so a machine without cpuset still runs quota."""
    found = {c: cgroups.detect((c,)) for c in cgroups.CONTROLLERS}
    said = {c: version or f"unusable: {reason}" for c, (version, reason) in found.items()}
    if len(set(said.values())) == 1:
        return said["cpu"]
    return "; ".join(f"{c} {s}" for c, s in said.items())


def facts():
    return {"cores": len(os.sched_getaffinity(0)), "online_cpus": os.cpu_count(),
            "kernel": platform.release(), "cpu_model": cpu_model(),
            "smt": smt(), "virtualised": virtualised(),
            "cgroup": cgroup_fact(), "hostname": socket.gethostname()}


def lab_version():
    """The git commit of the lab (with '+dirty' for uncommitted changes), or 'unknown'."""
    try:
        rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"],
                             capture_output=True, text=True, timeout=10)
        if rev.returncode != 0:
            return "unknown"
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return rev.stdout.strip() + ("+dirty" if dirty else "")
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
