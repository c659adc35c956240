"""perf stat around the engine: software counters always, hardware counters where the
machine has them. Every counter is recorded with its value or the reason it is missing:
"not supported" (the CPU or VM has no such counter), "not counted" (multiplexing or the
program ended first), "unavailable" (perf itself is missing or not permitted)."""
import shutil

from airbase import bounded_run

SOFTWARE = ["task-clock", "context-switches", "cpu-migrations", "page-faults", "duration_time"]
HARDWARE = ["cycles", "instructions", "cache-references", "cache-misses", "LLC-load-misses"]
EVENTS = SOFTWARE + HARDWARE


def perf_binary():
    """The perf executable, or None. Debian's /usr/bin/perf is a wrapper that fails when no
    perf matches the running kernel, so check that it really runs."""
    perf = shutil.which("perf")
    if not perf:
        return None
    import subprocess
    try:
        ok = bounded_run.run([perf, "--version"], timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    return perf if ok else None


_probe = {}


def usable():
    """(perf path, None) or (None, reason): perf exists and may count software events for
    this user (perf_event_paranoid, seccomp in containers). Probed once per process."""
    if "result" not in _probe:
        perf = perf_binary()
        if not perf:
            _probe["result"] = (None, "perf is not installed or does not match this kernel (Debian package linux-perf)")
        else:
            import subprocess
            try:
                r = bounded_run.run([perf, "stat", "-x", ",", "-e", "task-clock", "--", "true"],
                                    timeout=30, text=True)
                why = None if r.returncode == 0 else \
                    f"perf stat is not permitted here: {(r.stderr.strip().splitlines() or ['exit %d' % r.returncode])[0]}"
            except (OSError, subprocess.TimeoutExpired) as e:
                why = f"perf stat did not run: {e}"
            _probe["result"] = (perf, None) if why is None else (None, why)
    return _probe["result"]


def wrap(argv, out_file):
    """argv run under `perf stat` writing CSV to out_file; (argv, None) or (argv, reason)
    when perf is unavailable (the engine then runs bare and every counter says why)."""
    perf, why = usable()
    if not perf:
        return list(argv), why
    return [perf, "stat", "-x", ",", "-o", str(out_file), "-e", ",".join(EVENTS), "--", *argv], None


def parse(text, reason_if_empty=None):
    """perf stat -x, output -> {event: {value, unit, status, reason}} for every EVENTS entry.
    Lines look like `16.60,msec,task-clock,16596088,100.00,0.934,CPUs utilized` or
    `<not supported>,,cycles,0,100.00,,`; comments and blank lines are skipped."""
    found = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.split(",")
        if len(fields) < 3:
            continue
        value, unit, event = fields[0], fields[1], fields[2]
        event = event.split(":")[0]  # cycles:u -> cycles
        pmu = None
        if event.count("/") == 2:  # hybrid CPUs: cpu_core/cycles/u and cpu_atom/cycles/u
            pmu, event, _ = event.split("/")
        entry = {"value": None, "unit": unit or None, "status": "ok", "reason": None}
        if value == "<not supported>":
            entry.update(status="not supported", reason="the CPU or hypervisor does not provide this counter")
        elif value == "<not counted>":
            entry.update(status="not counted", reason="perf could not schedule the counter (multiplexing) or the run ended first")
        else:
            try:
                entry["value"] = float(value)
                if len(fields) > 4 and fields[4] not in ("", "100.00"):
                    entry["scaled_from_pct"] = float(fields[4])  # multiplexed: perf scaled it
            except ValueError:
                entry.update(status="not counted", reason=f"unreadable value {value!r}")
        if pmu:
            entry["pmus"] = [pmu]
            found[event] = _merge(found.get(event), entry)
        else:
            found[event] = entry
    for event in EVENTS:
        if event not in found:
            found[event] = {"value": None, "unit": None, "status": "unavailable",
                            "reason": reason_if_empty or "perf did not report this counter"}
    return found


def _merge(a, b):
    """One counter from its per-PMU lines: the counted values summed (the program ran on
    both kinds of core), a missing status only when no PMU counted it."""
    if a is None:
        return b
    if a["status"] != "ok" or b["status"] != "ok":
        merged = dict(b if a["status"] != "ok" else a)
    else:
        merged = {**a, "value": a["value"] + b["value"]}
        pct = [e["scaled_from_pct"] for e in (a, b) if "scaled_from_pct" in e]
        if pct:
            merged["scaled_from_pct"] = min(pct)
    merged["pmus"] = a["pmus"] + b["pmus"]
    return merged


def read(out_file, reason_if_missing=None):
    if reason_if_missing:
        return parse("", reason_if_missing)
    try:
        with open(out_file) as f:
            return parse(f.read(), "perf printed nothing for this counter")
    except OSError as e:
        return parse("", f"no perf output ({e.strerror})")


def hardware_counters_work(sample=None):
    """Whether cycles can be counted here (VMs usually cannot)."""
    return sample.get("cycles", {}).get("status") == "ok" if sample else None


