"""Scheduling setups: how the engine and the loads share the machine during a trial.

A setup is a YAML file in configs/setups/ (schema configs/schemas/setup.schema.json); each
kind is one module here (cfs, idle, nice, cpuset, quota, weight, gang) with
`availability(spec)` and `apply(applied_setup, spec)`; cgroups.py hides cgroup v1/v2 and
slurm.py the private SLURM.
`open_setup(name)` validates it; `with setup.applied() as s:` makes it real for one trial
(creates cgroups, starts a private SLURM, ...) and gives the hooks that put the engine
(`s.engine_hooks`) and every load (`s.load_hooks`) under it; leaving the block undoes
everything, whatever happened inside. A setup this machine cannot apply raises SetupError
with the reason: it never quietly runs as cfs."""
import importlib
import json
import os
from pathlib import Path

from airbase.paths import SCHEMAS, SETUPS
from airbase.schema_messages import read_yaml, schema_errors
from loads.launcher import ProcessHooks
from workflows.setups import cgroups, slurm

KINDS = ("cfs", "idle", "nice", "cpuset", "quota", "weight", "gang")


class SetupError(Exception):
    """The setup is invalid or cannot be applied on this machine."""


def list_setups():
    return sorted(p.stem for p in SETUPS.glob("*.yaml"))


def open_setup(name_or_path):
    p = Path(name_or_path)
    path = p if (p.suffix in (".yaml", ".yml") or os.sep in str(name_or_path)) else SETUPS / f"{name_or_path}.yaml"
    if not path.is_file():
        raise SetupError(f"{path}: no such setup (setups: {', '.join(list_setups())})")
    data = read_yaml(path, SetupError)
    with open(SCHEMAS / "setup.schema.json") as f:
        errors = schema_errors(json.load(f), data, str(path))
    if errors:
        raise SetupError("; ".join(errors))
    return Setup(path.stem, str(path), data)


def kind_module(kind):
    return importlib.import_module(f"workflows.setups.{kind}")


class Setup:
    def __init__(self, name, path, spec):
        self.name, self.path, self.spec = name, path, spec
        self.kind = spec["kind"]

    def availability(self):
        """(True, None) or (False, reason) for this machine, without changing anything."""
        return kind_module(self.kind).availability(self.spec)

    def applied(self, workdir, profile=None):
        """The setup in force for one trial of `profile` (the resolved profile: gang sizes
        its SLURM partition to the trial's jobs)."""
        ok, reason = self.availability()
        if not ok:
            raise SetupError(f"setup {self.name} ({self.kind}) cannot be applied here: {reason}")
        return AppliedSetup(self, Path(workdir), profile)


class AppliedSetup:
    """One trial's setup in force. `applied` records what was really done; a kind's
    apply() fills the hooks and may own cgroups (`cg`) or a SLURM cluster (`gang`), which
    leaving the block removes."""
    hooks = ProcessHooks

    def __init__(self, setup, workdir, profile=None):
        self.setup = setup
        self.workdir = workdir
        self.profile = profile
        self.engine_hooks = ProcessHooks()
        self.load_hooks = ProcessHooks()
        self.applied = {}
        self.cg = None
        self.gang = None
        self.engine_job_log = []  # gang: the SLURM daemons' lines on the engine's job

    def __enter__(self):
        try:
            kind_module(self.setup.kind).apply(self, self.setup.spec)
        except (cgroups.CgroupError, slurm.GangError) as e:
            self.__exit__(None, None, None)
            raise SetupError(f"setup {self.setup.name}: {e}") from None
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def load_jobs(self):
        """How many load processes the trial's profile starts (each one a job under gang)."""
        return sum(1 for p in (self.profile or {}).get("processes", []) if p.get("available", True))

    def make_cgroups(self, controllers):
        """The trial's own cgroups (one per role) with only the controllers the setup needs;
        the engine and the loads join theirs."""
        self.cg = cgroups.LabCgroups(controllers=controllers)  # held (so removed) before it exists
        self.cg.create()
        self.applied = {"cgroup": self.cg.version, "controllers": list(self.cg.controllers),
                        "groups": self.cg.paths()}
        self.engine_hooks = ProcessHooks(preexec=self.cg.join_preexec("engine"))
        self.load_hooks = ProcessHooks(preexec=self.cg.join_preexec("loads"))
        return self.cg

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
                self.engine_job_log = self.gang.job_log("airlab-engine")
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
