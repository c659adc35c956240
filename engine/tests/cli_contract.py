"""The airpdes command-line contract: every kind of bad input gets exactly one line on
stderr, exit status 2 and no output file (neither the file nor a temporary left beside
it); a good run writes JSON with exactly the documented keys and a well-formed timeline."""
import json
import os
import subprocess
import tempfile

from airpdes_harness import AIRPDES, check, finish, run

SMALL = ["--lps-per-pe", "50", "--end-time", "50"]
BAD = {
    "unknown flag": ["--frobnicate", "3"],
    "non-numeric value": ["--lps-per-pe", "many"],
    "negative value": ["--end-time", "-5"],
    "negative threads": ["--mode", "dm", "--threads", "-2", "--pes", "2"],
    "zero LPs": ["--lps-per-pe", "0"],
    "end time zero": ["--end-time", "0"],
    "remote above 1": ["--remote", "1.5"],
    "remote below 0": ["--remote", "-0.1"],
    "fm threads != pes": ["--mode", "fm", "--threads", "2", "--pes", "4"],
    "dm threads > pes": ["--mode", "dm", "--threads", "3", "--pes", "2"],
    "ladm threads > pes": ["--mode", "ladm", "--threads", "4", "--pes", "2"],
    "seq with threads": ["--mode", "seq", "--threads", "2"],
    "unknown mode": ["--mode", "turbo"],
    "unknown model": ["--model", "traffic"],
    "unknown detector": ["--mode", "adm", "--threads", "2", "--detector", "oracle"],
    "unknown reactivation": ["--mode", "adm", "--threads", "2", "--reactivation", "never"],
    "unknown sync": ["--sync", "lazy"],
    "missing value": ["--seed"],
    "zero lookahead, conservative": ["--lookahead", "0", "--sync", "conservative"],
    "trailing garbage in a number": ["--mean", "1.0x"],
}

for label, args in BAD.items():
    with tempfile.TemporaryDirectory() as d:
        out, tl = os.path.join(d, "out.json"), os.path.join(d, "tl.csv")
        p = subprocess.run([AIRPDES, *SMALL, *args, "--json", out, "--timeline", tl],
                           capture_output=True, text=True, timeout=30)
        lines = p.stderr.strip().splitlines()
        check(p.returncode == 2, f"{label}: exit {p.returncode}, wanted 2")
        check(len(lines) == 1 and lines[0].startswith("airpdes: "),
              f"{label}: wanted one 'airpdes: ...' line on stderr, got {lines!r}")
        check(os.listdir(d) == [], f"{label}: left files behind: {os.listdir(d)}")
        if p.returncode == 2 and len(lines) == 1:
            print(f"ok   {label}: {lines[0]}")

# An output path in a directory that does not exist, or cannot be written: refused before
# the run starts (nothing is simulated for nothing).
for label, path in [("json in a missing directory", "/nonexistent-dir/out.json"),
                    ("json path is a directory", "/")]:
    p = subprocess.run([AIRPDES, *SMALL, "--json", path], capture_output=True, text=True, timeout=30)
    check(p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1,
          f"{label}: exit {p.returncode}, stderr {p.stderr!r}")
    print(f"ok   {label}: {p.stderr.strip()}")

# A good run: exactly the documented keys, consistent counts, a well-formed timeline.
KEYS = {"config", "wall_s", "committed_events", "processed_events", "rolled_back_events",
        "rollbacks", "efficiency", "event_rate", "gvt_rounds", "final_gvt", "checksum",
        "threads", "pes", "model"}
THREAD_KEYS = {"id", "events", "busy_s", "inactive_s", "deactivations", "reactivations",
               "deactivation_times_s", "reactivation_times_s"}
PE_KEYS = {"id", "committed_events", "iterations", "non_primary_iterations"}
j, _ = run("--mode", "ladm", "--threads", "2", "--pes", "3", "--lps-per-pe", "200",
           "--end-time", "2000", "--remote", "0.3", "--timeline-period-ms", "5", timeline=True)
if j:
    tl = j.pop("_timeline")
    check(set(j) == KEYS, f"JSON keys {sorted(j)} != {sorted(KEYS)}")
    check(all(set(t) == THREAD_KEYS for t in j["threads"]), f"thread keys {j['threads'][0].keys()}")
    check(all(set(p) == PE_KEYS for p in j["pes"]), f"pe keys {j['pes'][0].keys()}")
    check(len(j["threads"]) == 2 and len(j["pes"]) == 3, "one entry per thread and per PE")
    check(j["processed_events"] == j["committed_events"] + j["rolled_back_events"],
          "processed != committed + rolled back")
    check(sum(p["committed_events"] for p in j["pes"]) == j["committed_events"],
          "per-PE committed events do not add up")
    check(abs(j["efficiency"] - j["committed_events"] / j["processed_events"]) < 1e-9, "efficiency")
    check(j["final_gvt"] >= 2000, f"final GVT {j['final_gvt']} below the end time")
    check(isinstance(j["checksum"], str) and int(j["checksum"], 16) >= 0, "checksum is a hex string")
    check(j["config"]["mode"] == "ladm" and j["config"]["pes"] == 3, "config echoes the options")
    check(len(tl) >= 1, "timeline has no rows")
    check(all(a[0] < b[0] for a, b in zip(tl, tl[1:])), "timeline t_s not increasing")
    check(all(a[2] <= b[2] for a, b in zip(tl, tl[1:])), "committed events decrease in the timeline")
    check(all(1 <= r[3] <= 2 for r in tl), "active threads outside [1, threads]")
    print(f"ok   JSON keys, counts and a timeline of {len(tl)} rows")

# Human summary on stdout (no --quiet), nothing on stderr when stderr is not a terminal.
p = subprocess.run([AIRPDES, *SMALL], capture_output=True, text=True, timeout=30)
check(p.returncode == 0 and "committed" in p.stdout and "checksum" in p.stdout and p.stderr == "",
      f"summary: rc {p.returncode}, stdout {p.stdout!r}, stderr {p.stderr!r}")
p = subprocess.run([AIRPDES, "--help"], capture_output=True, text=True, timeout=30)
check(p.returncode == 0 and "--detector" in p.stdout and "Examples" in p.stdout, "--help")
finish()
