"""What each kind of load is: one module per kind in this package, like the setups in
workflows/setups/, each listed once in KINDS. A kind module holds

    NAME                               its name (a profile's `kind`)
    SCHEMA, REQUIRED                   the profile fields only it reads (JSON schema of each)
                                       and those a process of this kind must give
    NOMINAL_DUTY, measured_duty(figs)  optional: its share of a CPU per thread (cpu_demand)
    availability(spec) -> (ok, why)    can a process of this spec run on this machine
    describe(proc) -> str              what it runs, in a few words (`airlab profiles`)
    command(proc, workdir) -> (argv, env)
    figures(proc, stdout, stderr, workdir) -> {throughput, unit, ...}
    doctor_lines() -> [(ok, detail, label)]   what `airlab doctor` shows for it
    prepare(proc, workdir), resolved(proc)    optional: inputs made before the clock
                                              starts; fields it adds once resolved

The profile schema is assembled here (profile_schema): configs/schemas/profile.schema.json
holds the fields every process has; each kind adds its SCHEMA and REQUIRED. Adding a kind =
one module here, one line in KINDS and a row in docs/profiles.md: tests/test_loads_kinds.py
fails until they agree."""
import copy
import json
import os

from airbase import cpus
from airbase.paths import SCHEMAS
from loads.kinds import command, cpu, onoff, parsec, stress_ng, vips, x264

KINDS = {m.NAME: m for m in (cpu, onoff, stress_ng, x264, vips, parsec, command)}


def cpu_demand(proc, measured=True):
    """CPUs a load process wants: its threads times its duty cycle. The one definition the
    tables (n_loads), the predictions (Eq. 1-3), the timeline figures and the time estimate
    use. The duty cycle is the record's measured busy_share, else (measured) the kind's
    measured_duty(figures), else the kind's NOMINAL_DUTY (1 unless the kind says: an on-off
    load computes ctp_us and sleeps as long, 0.5)."""
    mod = KINDS.get(proc.get("kind"))
    duty = proc.get("busy_share")
    if duty is None and measured and hasattr(mod, "measured_duty"):
        duty = mod.measured_duty(proc.get("figures") or {})
    if duty is None:
        duty = getattr(mod, "NOMINAL_DUTY", 1.0)
    return proc.get("threads", 1) * duty

PARSEC_HELP = parsec.tree.HELP


def kind_fields():
    """{field: the kind that reads it}: on another kind such a field is an error."""
    return {field: name for name, mod in KINDS.items() for field in mod.SCHEMA}


def profile_schema():
    """The profile schema: the common file with every kind's fields, the kind names as the
    enum of `kind`, and each kind's required fields (`airlab profiles schema` prints it)."""
    schema = json.loads((SCHEMAS / "profile.schema.json").read_text())
    proc = schema["$defs"]["process"]
    proc["properties"]["kind"] = {**proc["properties"]["kind"], "enum": list(KINDS)}
    for name, mod in KINDS.items():
        proc["properties"].update(copy.deepcopy(mod.SCHEMA))
        if mod.REQUIRED:
            proc.setdefault("allOf", []).append(
                {"if": {"required": ["kind"], "properties": {"kind": {"const": name}}},
                 "then": {"required": list(mod.REQUIRED)}})
    return schema


def parsec_home(configured=None):
    """The PARSEC folder (profile's parsec_home, $PARSEC_HOME, or above a parsecmgmt on
    PATH), or None when none is set up."""
    return parsec.tree.find_home(configured)[0]


def availability(spec):
    """(True, None) when a process of this spec can run here, else (False, reason)."""
    if spec.get("cpus"):
        # Checked here, not when the load starts: binding to a missing CPU fails in the child,
        # where the only message left is "Exception occurred in preexec_fn".
        usable = os.sched_getaffinity(0)
        missing = sorted(cpus.cpu_list(spec["cpus"]) - usable)
        if missing:
            return False, (f"cpus {spec['cpus']!r}: CPU {', '.join(map(str, missing))} is not usable here "
                           f"(usable: {', '.join(map(str, sorted(usable)))})")
    mod = KINDS.get(spec["kind"])
    if mod is None:
        return False, f"unknown kind {spec['kind']!r}"
    return mod.availability(spec)


def describe(proc):
    """What one resolved process runs, in a few words for listings: 'real PARSEC (...)' or
    'stand-in for ...: ...' for the PARSEC profiles, so a user sees which one this machine runs."""
    what = KINDS[proc["kind"]].describe(proc)
    return f"stand-in for {proc['stand_in_for']}: {what}" if proc.get("stand_in_for") else what


def resolved_fields(proc):
    """What a kind adds to a resolved process that can run here (PARSEC: its resolution)."""
    fn = getattr(KINDS[proc["kind"]], "resolved", None)
    return fn(proc) if fn else {}


def prepare(proc, workdir=None):
    """Generate (or find cached) the input a load needs, before the trial's clock starts,
    so a load starts on time (and, for PARSEC, its run folder in workdir)."""
    fn = getattr(KINDS[proc["kind"]], "prepare", None)
    if fn:
        fn(proc, workdir)


def command_for(proc, workdir):
    """(argv, extra environment) that start one process of a resolved profile entry."""
    if proc["kind"] not in KINDS:
        raise ValueError(f"unknown kind {proc['kind']!r}")
    return KINDS[proc["kind"]].command(proc, workdir)


def figures_of(proc, stdout, stderr, workdir):
    """The load's own progress figures from its output: at least throughput and unit."""
    return KINDS[proc["kind"]].figures(proc, stdout, stderr, workdir)
