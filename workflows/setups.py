"""Scheduling setups: how the engine and the loads share the machine during a trial.

A setup is a YAML file in configs/setups/ (schema configs/schemas/setup.schema.json).
`open_setup(name)` validates it; `with setup.applied() as s:` makes it real for one trial
(creates cgroups, starts a private SLURM, ...) and gives the hooks that put the engine
(`s.engine_hooks`) and every load (`s.load_hooks`) under it; leaving the block undoes
everything, whatever happened inside. A setup this machine cannot apply raises SetupError
with the reason: it never quietly runs as cfs."""
import json
import os
from pathlib import Path

import jsonschema
import yaml

from loads.launcher import ProcessHooks
from workflows import cgroups
from workflows.paths import SCHEMAS, SETUPS


class SetupError(Exception):
    """The setup is invalid or cannot be applied on this machine."""


def list_setups():
    return sorted(p.stem for p in SETUPS.glob("*.yaml"))


def open_setup(name_or_path):
    p = Path(name_or_path)
    path = p if (p.suffix in (".yaml", ".yml") or os.sep in str(name_or_path)) else SETUPS / f"{name_or_path}.yaml"
    if not path.is_file():
        raise SetupError(f"{path}: no such setup (setups: {', '.join(list_setups())})")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        raise SetupError(f"{path}: not valid YAML: {e}")
    with open(SCHEMAS / "setup.schema.json") as f:
        schema = json.load(f)
    errs = sorted(jsonschema.Draft202012Validator(schema).iter_errors(data), key=lambda e: e.path)
    if errs:
        where = ".".join(map(str, errs[0].absolute_path)) or "(top level)"
        raise SetupError(f"{path}: {where}: {errs[0].message}")
    return Setup(path.stem, str(path), data)


def _all_cpus():
    return sorted(os.sched_getaffinity(0))


def _cpu_list(text):
    out = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


class Setup:
    def __init__(self, name, path, spec):
        self.name, self.path, self.spec = name, path, spec
        self.kind = spec["kind"]

    def availability(self):
        """(True, None) or (False, reason) for this machine, without changing anything."""
        if self.kind in ("cpuset", "quota", "weight"):
            version, reason = cgroups.detect()
            if not version:
                return False, reason
            if self.kind == "cpuset" and len(_all_cpus()) < 2:
                return False, "cpuset needs at least 2 CPUs (engine and loads on disjoint sets)"
        if self.kind == "gang":
            from workflows import slurm
            return slurm.availability()
        return True, None

    def applied(self, workdir):
        ok, reason = self.availability()
        if not ok:
            raise SetupError(f"setup {self.name} ({self.kind}) cannot be applied here: {reason}")
        return AppliedSetup(self, Path(workdir))


class AppliedSetup:
    """One trial's setup in force. `applied` records what was really done."""

    def __init__(self, setup, workdir):
        self.setup = setup
        self.workdir = workdir
        self.engine_hooks = ProcessHooks()
        self.load_hooks = ProcessHooks()
        self.applied = {}
        self.cg = None
        self.gang = None

    def __enter__(self):
        try:
            self._apply()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _apply(self):
        kind, spec = self.setup.kind, self.setup.spec
        if kind == "cfs":
            self.applied = {"scheduler": "SCHED_NORMAL (unchanged)"}
        elif kind == "idle":
            def idle():
                os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
            self.load_hooks = ProcessHooks(preexec=idle)
            self.applied = {"loads_policy": "SCHED_IDLE"}
        elif kind == "nice":
            n = spec["loads_nice"]
            self.load_hooks = ProcessHooks(preexec=lambda: os.setpriority(os.PRIO_PROCESS, 0, n))
            self.applied = {"loads_nice": n}
        elif kind in ("cpuset", "quota", "weight"):
            try:
                self.cg = cgroups.LabCgroups()
                self.applied = {"cgroup": self.cg.version, "groups": self.cg.paths()}
                if kind == "cpuset":
                    cpus = _all_cpus()
                    eng = spec.get("engine_cpus") or ",".join(map(str, cpus[:-1]))
                    lds = spec.get("loads_cpus") or str(cpus[-1])
                    if _cpu_list(eng) & _cpu_list(lds):
                        raise SetupError(f"cpuset: engine_cpus {eng} and loads_cpus {lds} overlap")
                    self.applied["engine"] = self.cg.set_cpus("engine", eng)
                    self.applied["loads"] = self.cg.set_cpus("loads", lds)
                elif kind == "quota":
                    self.applied["loads"] = self.cg.set_quota("loads", spec["loads_cpu_share"],
                                                              spec.get("period_us", 100000))
                else:
                    self.applied["engine"] = self.cg.set_weight("engine", spec["engine_weight"])
                    self.applied["loads"] = self.cg.set_weight("loads", spec["loads_weight"])
            except cgroups.CgroupError as e:
                raise SetupError(f"setup {self.setup.name}: {e}") from None
            self.engine_hooks = ProcessHooks(preexec=self.cg.join_preexec("engine"))
            self.load_hooks = ProcessHooks(preexec=self.cg.join_preexec("loads"))
        elif kind == "gang":
            from workflows import slurm
            self.gang = slurm.GangCluster(self.workdir, spec.get("time_slice_s", 5))
            self.gang.start()
            self.engine_hooks = ProcessHooks(wrap_argv=lambda argv, load=None: self.gang.wrap(argv, "engine"))
            self.load_hooks = ProcessHooks(wrap_argv=lambda argv, load: self.gang.wrap(argv, "load"))
            self.applied = self.gang.describe()

    def record(self):
        return {"name": self.setup.name, "kind": self.setup.kind, "path": self.setup.path,
                "params": {k: v for k, v in self.setup.spec.items() if k not in ("description", "kind")},
                "description": self.setup.spec["description"], "applied": self.applied}

    def __exit__(self, *exc):
        errors = []
        if self.gang:
            try:
                self.applied["jobs_left_at_end"] = self.gang.stop()
                self.applied["job_states"] = self.gang.states
                self.applied["jobs_alternated"] = self.gang.alternated()
            except Exception as e:  # keep cleaning up the rest
                errors.append(str(e))
            self.gang = None
        if self.cg:
            try:
                self.cg.remove()
            except cgroups.CgroupError as e:
                errors.append(str(e))
            self.cg = None
        if errors and exc[0] is None:
            raise SetupError("; ".join(errors))
        return False
