"""Interference profiles: find, validate and resolve them for this machine.

A profile is a YAML file in configs/profiles/ (schema: configs/schemas/profile.schema.json,
guide: docs/profiles.md). Resolving turns relative thread counts into numbers for this
machine, expands `count` into separate processes, checks that each process can run here
(and switches to its `fallback` stand-in when it cannot) and returns plain JSON-able data
that the launcher runs and the trial records."""
import os
import re
from pathlib import Path

import jsonschema

from airbase.paths import PROFILES
from airbase.schema_messages import read_yaml, schema_errors
from loads import kinds


class ProfileError(Exception):
    """A profile that cannot be used; `errors` lists each problem as 'file: field: problem'."""

    def __init__(self, errors):
        super().__init__("; ".join(errors))
        self.errors = errors


def machine_cores():
    """CPUs this process may run on (the affinity mask, which cpusets and taskset narrow)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def resolve_count(value, cores=None):
    """An absolute count, or an expression in cores: 'cores', 'cores-1', 'cores/2', '2*cores'.
    Never below 1: 'cores-1' on a 1-core machine is 1."""
    cores = cores or machine_cores()
    if isinstance(value, int):
        return value
    m = re.fullmatch(r"\s*(?:(\d+)\s*\*\s*)?cores\s*(?:([-+/])\s*(\d+))?\s*", str(value))
    if not m:
        raise ValueError(f"'{value}' is not a count (use an integer or cores, cores-1, cores/2, 2*cores)")
    n = int(m.group(1) or 1) * cores
    if m.group(2):
        k = int(m.group(3))
        if m.group(2) == "/" and k == 0:
            raise ValueError(f"'{value}' divides by zero")
        n = {"-": n - k, "+": n + k, "/": n // k}[m.group(2)]
    return max(1, n)


def parse_load_count(value, cores=None):
    """A load count (--load-count, sweep.load_count) as a number >= 1: an integer, a string of
    digits, or an expression in cores. ValueError (with the reason) for anything else."""
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool):
        raise ValueError(f"'{value}' is not a count")
    n = resolve_count(value, cores)
    if n < 1:
        raise ValueError(f"{value} is not >= 1 (for no load use the profile none)")
    return n


def looks_like_path(name_or_path):
    """A path to a YAML file rather than the name of a profile in configs/profiles/."""
    return Path(name_or_path).suffix in (".yaml", ".yml") or os.sep in str(name_or_path)


def profile_path(name_or_path):
    """A profile name (configs/profiles/NAME.yaml) or a path to a YAML file."""
    if looks_like_path(name_or_path):
        return Path(name_or_path)
    return PROFILES / f"{name_or_path}.yaml"


def _missing(name_or_path):
    """One line for a profile that is not there. A path gets no list of the shipped profiles:
    the user meant that file, not one of ours."""
    if looks_like_path(name_or_path):
        return f"{name_or_path}: no such profile file"
    import difflib
    names = list_profiles()
    close = difflib.get_close_matches(str(name_or_path), names, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return f"no such profile '{name_or_path}'{hint}; profiles: {', '.join(names) or 'none'}"


def list_profiles():
    return sorted(p.stem for p in PROFILES.glob("*.yaml"))


_schema = None


def _validator():
    global _schema
    if _schema is None:
        _schema = kinds.profile_schema()
    return jsonschema.Draft202012Validator(_schema)


def validate(data, source):
    """Every problem in a parsed profile, as 'source: field: problem' lines ([] = valid)."""
    errors = schema_errors(_validator(), data, source)
    if errors or not isinstance(data, dict):
        return errors
    for i, proc in enumerate(data.get("processes", [])):
        _check_process(proc, f"{source}: processes[{i}]", errors)
    return errors


# Fields that only one kind reads (each kind module's SCHEMA). On another kind they would
# be ignored without a word (a `kind: cpu` with `ctp_us: 1000` would run a plain CPU loop),
# so they are errors.
KIND_FIELDS = kinds.kind_fields()


def _check_process(proc, where, errors):
    """What the schema cannot say: times in order, fields of the right kind, a usable regex."""
    start = proc.get("start_s", 0)
    if "stop_s" in proc and proc["stop_s"] <= start:
        errors.append(f"{where}: stop_s ({proc['stop_s']}) is not after start_s ({start})")
    for part in proc.get("cpus", "").split(","):
        lo, _, hi = part.partition("-")
        if hi and int(hi) < int(lo):
            errors.append(f"{where}.cpus: the range {part} is empty (write {hi}-{lo})")
    for field in sorted(set(proc) & set(KIND_FIELDS)):
        if KIND_FIELDS[field] != proc["kind"]:
            errors.append(f"{where}: {field} does not apply to kind {proc['kind']} (only to {KIND_FIELDS[field]})")
    if "throughput_regex" in proc:
        try:
            groups = re.compile(proc["throughput_regex"]).groups
        except re.error as e:
            errors.append(f"{where}.throughput_regex: not a valid regular expression: {e}")
        else:
            if not groups:
                errors.append(f"{where}.throughput_regex: no group: put the number in parentheses, "
                              "e.g. 'rate ([0-9.]+)'")
    if "fallback" in proc:
        _check_process(proc["fallback"], f"{where}.fallback", errors)


def load_file(path):
    """Parse and validate one profile file; raise ProfileError listing every problem."""
    path = Path(path)
    if not path.is_file():
        raise ProfileError([f"{path}: no such profile file"])
    data = read_yaml(path, lambda msg: ProfileError([msg]))
    if not isinstance(data, dict):
        raise ProfileError([f"{path}: (top level): a profile is a mapping with description and processes"])
    errors = validate(data, str(path))
    if errors:
        raise ProfileError(errors)
    return data


def derived_name(name_or_path, count):
    """The name of a profile whose one process runs `count` times (--load-count): NAME-xCOUNT,
    e.g. cpu-1-x4 (the shipped onoff-ctp1000-x2 is onoff-ctp1000 run twice, so named)."""
    return f"{profile_path(name_or_path).stem}-x{count}"


def with_load_count(data, path, load_count, cores=None):
    """(profile data, n): the profile's one process entry (and its fallback) with its count
    replaced by `load_count` (an integer >= 1, or an expression in cores) resolved to n.
    Raises ProfileError for a bad count or a profile without exactly one process entry."""
    try:
        n = parse_load_count(load_count, cores)
    except ValueError as e:
        raise ProfileError([f"load count: {e}"])
    procs = data["processes"]
    if len(procs) != 1:
        raise ProfileError([f"{path}: processes: a load count multiplies a profile's one process entry; "
                            f"this profile has {len(procs)}"])
    spec = {**procs[0], "count": n}
    if "fallback" in spec:
        spec["fallback"] = {**spec["fallback"], "count": n}
    return {**data, "processes": [spec]}, n


def resolve_profile(name_or_path, cores=None, load_count=None):
    """The profile resolved for this machine: a JSON-able dict with name, path, description,
    available (every process can run here), reasons (why not) and processes, one entry per
    separate process (count expanded), each with its argv-relevant parameters, threads,
    start_s, stop_s (None = until the engine ends), stand_in, stand_in_for, available,
    reason and runs (what runs on this machine, in words). Raises ProfileError for an
    invalid or missing profile. With load_count (an integer or an expression in cores) the
    profile's one process runs that many times and the profile is named NAME-xN (cpu-1-x4);
    the dict's load_count is then N (else None)."""
    path = profile_path(name_or_path)
    if not path.is_file():
        raise ProfileError([_missing(name_or_path)])
    data = load_file(path)
    cores = cores or machine_cores()
    name, n_loads = path.stem, None
    if load_count is not None:
        data, n_loads = with_load_count(data, path, load_count, cores)
        name = derived_name(path, n_loads)
    procs, reasons = [], []
    for i, spec in enumerate(data["processes"]):
        chosen, why_not = spec, None
        ok, reason = kinds.availability(spec)
        if not ok and "fallback" in spec:
            why_not = reason
            chosen = {**spec["fallback"]}
            chosen.setdefault("name", spec.get("name", spec["kind"]))
            ok, reason = kinds.availability(chosen)
        base = chosen.get("name", chosen["kind"])
        n = resolve_count(chosen.get("count", 1), cores)
        for k in range(n):
            proc = {key: v for key, v in chosen.items() if key not in ("fallback", "count")}
            start = float(chosen.get("start_s", 0))
            stop = chosen.get("stop_s")
            if "duration_s" in chosen:
                stop = start + float(chosen["duration_s"])
            proc.update({
                "name": base if n == 1 else f"{base}.{k}",
                "threads": resolve_count(chosen.get("threads", 1), cores),
                "start_s": start,
                "stop_s": None if stop is None else float(stop),
                "stand_in": bool(chosen.get("stand_in_for")),
                "stand_in_for": chosen.get("stand_in_for"),
                "replaces_unavailable": why_not,
                "available": ok,
                "reason": reason,
            })
            proc.pop("duration_s", None)
            if ok:
                try:  # for its thread count, now known (PARSEC: the benchmark's own command line)
                    proc.update(kinds.resolved_fields(proc))
                except Exception as e:  # e.g. a runconf bash cannot read: unavailable, said why
                    ok, reason = False, str(e)
                    proc.update({"available": False, "reason": reason})
            proc["runs"] = kinds.describe(proc)  # what runs here: real PARSEC or which stand-in
            procs.append(proc)
        if not ok:
            reasons.append(f"processes[{i}] ({base}): {reason}")
    return {
        "name": name,
        "load_count": n_loads,
        "path": str(path),
        "description": data["description"],
        "paper": data.get("paper"),
        "cores": cores,
        "available": not reasons,
        "reasons": reasons,
        "stand_in": any(p["stand_in"] for p in procs),
        "processes": procs,
    }
