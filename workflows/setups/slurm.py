"""A private, single-node SLURM for the `gang` setup (paper section 8.7).

GangCluster writes a slurm.conf of its own (PreemptMode=GANG, a partition with
OverSubscribe=FORCE:<jobs> and SchedulerTimeSlice), starts its own munged, slurmctld and
slurmd on private ports and sockets in the trial's work folder, runs the engine and each load
as separate batch jobs (each asking for every CPU, so they cannot run at the same time and
SLURM time-slices them), and on stop() cancels every job and stops the daemons it started.
The machine's own SLURM, if any, is never touched.

The partition admits `jobs` jobs per CPU (the engine plus every load process of the trial):
with fewer, the extra loads would wait pending for the whole run instead of taking turns.

Why the trial's temporary work folder and not results/: munged's socket and the per-step
sockets slurmstepd makes in SlurmdSpoolDir (<spool>/<node>_<job>.<step>, the step number up
to 10 digits) are UNIX sockets, whose path may not exceed 107 bytes (sun_path). Under
results/.slurm/<pid>/ that leaves about 50 bytes for the results folder's own path, which
a checkout in a deep home folder or AIRLAB_RESULTS on a cluster easily exceeds (munged
refuses to start, or jobs fail at their first step); $TMPDIR is short. And results/ may be on a
filesystem shared between nodes, where the clean-up of a killed runner, which judges by a PID
on this host, could delete a live runner's daemons' state on another node (and where root, whom
a private slurmd needs, is often squashed)."""
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from airbase import proctags, threads

DAEMONS = ("munged", "mungekey", "slurmctld", "slurmd", "sbatch", "scontrol", "squeue", "scancel", "sinfo")


def availability():
    missing = [d for d in DAEMONS if not shutil.which(d) and not Path(f"/usr/sbin/{d}").exists()]
    if missing:
        return False, f"SLURM is not installed ({', '.join(missing)} missing; Debian packages slurm-wlm munge)"
    if os.geteuid() != 0:
        return False, "gang needs root to start a private slurmd"
    return True, None


def _which(name):
    return shutil.which(name) or f"/usr/sbin/{name}"


def _free_port():
    for _ in range(50):
        port = random.randint(20000, 40000)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue
    raise RuntimeError("no free TCP port for slurmctld")


class GangError(Exception):
    pass


class GangCluster:
    def __init__(self, workdir, time_slice_s=5, jobs=2):
        self.dir = Path(workdir) / "slurm"
        self.time_slice_s = int(time_slice_s)
        self.jobs_per_cpu = max(2, int(jobs))  # engine + loads (2 for a lone engine, as before)
        self.node = "airlab-node"
        self.procs = {}
        self.env = None
        self.cores = len(os.sched_getaffinity(0))
        self.states = []          # [(seconds since start, {job name: state})]: the evidence
        self.first_running = {}   # job name -> monotonic instant it was first seen running
        self.job_ids = {}         # job name -> SLURM job id, as squeue listed it
        self._sampler = None
        self._stop_sampling = threading.Event()

    def _conf(self):
        d = self.dir
        ctl, node = _free_port(), _free_port()
        return f"""# written by airlab (workflows/setups/slurm.py) for one trial; removed with it
ClusterName=airlab
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={ctl}
SlurmdPort={node}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={d}/munge.socket
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
PreemptMode=GANG
SchedulerTimeSlice={self.time_slice_s}
ReturnToService=2
SlurmdTimeout=30
InactiveLimit=0
KillWait=2
NodeName={self.node} NodeHostname={socket.gethostname()} NodeAddr=127.0.0.1 CPUs={self.cores} State=UNKNOWN
PartitionName=gang Nodes={self.node} Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:{self.jobs_per_cpu}
"""

    def start(self):
        d = self.dir
        # A step socket path past sun_path's 107 bytes fails only when a job starts, deep in
        # slurmd's log: refuse up front, with the reason (see the module's docstring).
        longest = str(d / "spool" / f"{self.node}_{2**32 - 1}.{2**32 - 1}")
        if len(longest.encode()) > 107:
            raise GangError(f"the work folder's path is too long for SLURM's UNIX sockets ({longest} "
                            f"exceeds 107 bytes): set TMPDIR to a shorter folder")
        for sub in ("state", "spool"):
            (d / sub).mkdir(parents=True, exist_ok=True)
        (d / "slurm.conf").write_text(self._conf())
        self.env = {**os.environ, "SLURM_CONF": str(d / "slurm.conf")}
        try:
            # A key of our own: the machine's munge key (if any) and its munged stay untouched.
            key = subprocess.run([_which("mungekey"), "--create", "--force", f"--keyfile={d}/munge.key"],
                                 capture_output=True, text=True, timeout=30)
            if key.returncode != 0:
                raise GangError(f"mungekey could not create a key: {key.stderr.strip()}")
            self._daemon("munged", [_which("munged"), "-F", "--force", f"--socket={d}/munge.socket",
                                    f"--key-file={d}/munge.key", f"--pid-file={d}/munged.pid",
                                    f"--log-file={d}/munged.log", f"--seed-file={d}/munged.seed"])
            self._wait_for(lambda: (d / "munge.socket").exists(), "munged socket")
            self._daemon("slurmctld", [_which("slurmctld"), "-D", "-i", "-f", str(d / "slurm.conf")])
            self._daemon("slurmd", [_which("slurmd"), "-D", "-N", self.node, "-f", str(d / "slurm.conf")])
            self._wait_for(self._node_ready, "the SLURM node to be idle")
            self._sampler = threads.start(threading.Thread(target=self._sample_states, daemon=True))
        except Exception:
            self.stop()
            raise

    def _daemon(self, name, argv):
        log = open(self.dir / f"{name}.out", "wb")
        self.procs[name] = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=self.env,
                                            stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()

    def _wait_for(self, cond, what, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for name, p in self.procs.items():
                if p.poll() is not None:
                    tail = (self.dir / f"{name}.out").read_text(errors="replace")[-400:]
                    raise GangError(f"{name} exited ({p.returncode}) while waiting for {what}: {tail}")
            if cond():
                return
            time.sleep(0.2)
        raise GangError(f"timed out waiting for {what} (logs in {self.dir})")

    def _node_ready(self):
        out = subprocess.run([_which("sinfo"), "-h", "-o", "%t"], capture_output=True, text=True,
                             env=self.env, timeout=10)
        return out.returncode == 0 and out.stdout.strip() in ("idle", "mix", "alloc")

    def wrap(self, argv, role):
        """argv as a separate SLURM batch job that asks for every CPU, so jobs take turns
        (workflows/setups/slurm_job.py waits for it and relays its output and exit code).
        role is "engine" or a load's name: each job's own name, so the sampled job states
        show every load's turns."""
        return [sys.executable, "-m", "workflows.setups.slurm_job", "--conf", str(self.dir / "slurm.conf"),
                "--name", f"airlab-{role}", "--cpus", str(self.cores), "--", *argv]

    def env_for_clients(self):
        return self.env

    def jobs(self):
        """[(job id, name, state)] of this cluster's jobs."""
        if not self.env:
            return []
        out = subprocess.run([_which("squeue"), "-h", "-o", "%i %j %T"], capture_output=True, text=True,
                             env=self.env, timeout=10)
        return [tuple(line.split()) for line in out.stdout.splitlines() if line.strip()]

    def _sample_states(self):
        """Record which job runs and which is suspended, twice a second, for the trial."""
        t0 = last = time.monotonic()
        while not self._stop_sampling.wait(0.5):
            now = time.monotonic()
            try:
                jobs = self.jobs()
            except (subprocess.TimeoutExpired, OSError):
                continue
            for jobid, name, _ in jobs:
                self.job_ids.setdefault(name, jobid)
            for _, name, state in jobs:  # it began between the last look and this one
                if state == "RUNNING" and name not in self.first_running:
                    self.first_running[name] = (last + now) / 2
            last = now
            if jobs:
                snap = {name: state for _, name, state in jobs}
                if not self.states or self.states[-1][1] != snap:
                    self.states.append((round(time.monotonic() - t0, 2), snap))

    def first_ran(self, job_name):
        """When the job first ran (monotonic, within a quarter of a second), or None."""
        return self.first_running.get(job_name)

    def alternated(self):
        """True when the engine and a load each ran while the other was suspended."""
        seen = set()
        for _, snap in self.states:
            if snap.get("airlab-engine") == "RUNNING" and "SUSPENDED" in snap.values():
                seen.add("engine ran, load suspended")
            if snap.get("airlab-engine") == "SUSPENDED" and "RUNNING" in snap.values():
                seen.add("load ran, engine suspended")
        return len(seen) == 2

    def job_log(self, job_name, most=20):
        """The daemons' log lines on one job (its last `most`, each prefixed with the log's
        name), read after the trial: the evidence for a job that ended without telling why
        (a gang engine exited 0 without its results once in the suite at 8c25ed4 and
        once in 44 gang trials of quick runs, cause unknown). [] when the job was never
        listed or the logs are gone."""
        jobid = self.job_ids.get(job_name)
        if jobid is None:
            return []
        about = re.compile(rf"JobId={jobid}\b|\bjob[ _]?{jobid}\b|\[{jobid}\.|StepId={jobid}\.", re.IGNORECASE)
        lines = []
        for log in ("slurmctld.log", "slurmd.log"):
            try:
                text = (self.dir / log).read_text(errors="replace")
            except OSError:
                continue
            lines += [f"{log}: {line.strip()}" for line in text.splitlines() if about.search(line)]
        return lines[-most:]

    def describe(self):
        return {"slurm_conf": str(self.dir / "slurm.conf"), "time_slice_s": self.time_slice_s,
                "preempt_mode": "GANG", "oversubscribe": f"FORCE:{self.jobs_per_cpu}", "cpus_per_job": self.cores}

    def stop(self):
        """Cancel every job, stop the daemons, return the jobs that were still there."""
        self._stop_sampling.set()
        if self._sampler:
            self._sampler.join()
            self._sampler = None
        left = []
        if self.env and self.procs.get("slurmctld") and self.procs["slurmctld"].poll() is None:
            try:
                left = self.jobs()
                if left:
                    subprocess.run([_which("scancel"), "--full", *[j[0] for j in left]], env=self.env,
                                   capture_output=True, timeout=15)
                    deadline = time.monotonic() + 10
                    while self.jobs() and time.monotonic() < deadline:
                        time.sleep(0.2)
            except (subprocess.TimeoutExpired, OSError):
                pass
        for name in ("slurmd", "slurmctld", "munged"):
            p = self.procs.pop(name, None)
            if p is None:
                continue
            for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
                if p.poll() is not None:
                    break
                try:
                    os.killpg(p.pid, sig)
                    p.wait(wait)
                except (ProcessLookupError, subprocess.TimeoutExpired):
                    pass
        gone_or_left = self._until_no_process_left()
        if gone_or_left:
            raise GangError(f"processes of the private SLURM outlived it: {gone_or_left}")
        return [list(j) for j in left]

    def processes(self):
        """Every live process of this cluster, whoever started it: the daemons, slurmstepd
        and the jobs' programs all carry SLURM_CONF=<this cluster's slurm.conf> (the daemons
        get it from us, slurmstepd from slurmd, a job from sbatch --export=ALL). The tag is
        fixed before the first daemon starts: registered first, then created, so a process
        started just as an interrupt lands is found all the same."""
        return [pid for pid in proctags.find("SLURM_CONF", str(self.dir / "slurm.conf")) if pid != os.getpid()]

    def _until_no_process_left(self, timeout=15.0):
        """SIGKILL what is left of the cluster (slurmstepd outliving slurmd, a job's program
        whose step was killed) until nothing is; returns what still lives after timeout."""
        deadline = time.monotonic() + timeout
        while True:
            pids = self.processes()
            if not pids or time.monotonic() > deadline:
                return [f"{pid} ({_comm(pid)})" for pid in pids]
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.05)


def _comm(pid):
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return "gone"
