"""The airpdes command-line contract: every kind of bad input gets exactly one line on
stderr, exit status 2 and no output file (neither the file nor a temporary left beside
it); a good run writes JSON with exactly the documented keys and a well-formed timeline."""
import json
import os
import subprocess
import tempfile
import time

from airpdes_harness import AIRPDES, check, finish, not_checked, run
from dir_watch import DirWatch

SMALL = ["--lps-per-pe", "50", "--end-time", "50"]
BAD = {
    "unknown flag": ["--frobnicate", "3"],
    "non-numeric value": ["--lps-per-pe", "many"],
    "negative value": ["--lookahead", "-0.5"],
    "negative threads": ["--mode", "dm", "--threads", "-2", "--pes", "2"],
    "zero LPs": ["--lps-per-pe", "0"],
    "end time zero": ["--end-time", "0"],
    "remote above 1": ["--remote", "1.5"],
    "remote below 0": ["--remote", "-0.1"],
    "fm threads < pes": ["--mode", "fm", "--threads", "2", "--pes", "4"],
    "fm threads > pes": ["--mode", "fm", "--threads", "3", "--pes", "2"],
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
    "negative end time": ["--end-time", "-1"],
    "seed above 64 bits": ["--seed", "18446744073709551616"],
    "an option where a file name belongs": ["--json", "--quiet"],
    "model option out of range": ["--model", "pcs", "--channels", "0"],
    "unknown barrier wait policy": ["--barrier-wait", "nap"],
    "negative optimism window": ["--optimism-window", "-1"],
    # --check answers for the run: it refuses what set-up would refuse
    "--check, zero lookahead, conservative": ["--lookahead", "0", "--sync", "conservative", "--check"],
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

# A conservative run that needs millions of windows (lookahead 1e-6 over end time 10000 on
# 2 x 1000 LPs: ~2e7 rounds) gets one warning line naming the cause, still exits 0 with
# --check; a reasonable one (lookahead 0.1) gets none.
for label, lookahead, warned in [("conservative with millions of windows", "1e-6", True),
                                 ("conservative with few windows", "0.1", False)]:
    p = subprocess.run([AIRPDES, "--mode", "fm", "--threads", "2", "--pes", "2", "--end-time", "10000",
                        "--sync", "conservative", "--lookahead", lookahead, "--check"],
                       capture_output=True, text=True, timeout=30)
    lines = p.stderr.strip().splitlines()
    ok = p.returncode == 0 and (len(lines) == 1 and "GVT rounds" in lines[0] and "lookahead" in lines[0]
                                if warned else lines == [])
    check(ok, f"{label}: exit {p.returncode}, stderr {lines!r}")
    if ok:
        print(f"ok   {label}: {lines[0] if lines else 'no warning'}")

# An output path in a directory that does not exist, or cannot be written: refused before
# the run starts (nothing is simulated for nothing).
# (/proc refuses new files even to root, so the case holds when the tests run as root.)
for label, opt, path in [("json in a missing directory", "--json", "/nonexistent-dir/out.json"),
                         ("json path is a directory", "--json", "/"),
                         ("json in an unwritable directory", "--json", "/proc/airpdes-out.json"),
                         ("timeline in an unwritable directory", "--timeline", "/proc/airpdes-tl.csv")]:
    p = subprocess.run([AIRPDES, *SMALL, opt, path], capture_output=True, text=True, timeout=30)
    if check(p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1,
             f"{label}: exit {p.returncode}, stderr {p.stderr!r}"):
        print(f"ok   {label}: {p.stderr.strip()}")

# An output path that is an existing directory: refused, and the write probe leaves nothing.
with tempfile.TemporaryDirectory() as d:
    sub = os.path.join(d, "sub")
    os.mkdir(sub)
    p = subprocess.run([AIRPDES, *SMALL, "--timeline", sub], capture_output=True, text=True, timeout=30)
    if check(p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1
             and os.listdir(d) == ["sub"] and os.listdir(sub) == [],
             f"timeline path is a directory: exit {p.returncode}, stderr {p.stderr!r}, left {os.listdir(d)}"):
        print(f"ok   timeline path is a directory: {p.stderr.strip()}")

# --json and --timeline naming one file, spelled two ways: refused (one would overwrite the other).
with tempfile.TemporaryDirectory() as d:
    p = subprocess.run([AIRPDES, *SMALL, "--json", os.path.join(d, "o"), "--timeline",
                        os.path.join(d, ".", "o")], capture_output=True, text=True, timeout=30)
    if check(p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and os.listdir(d) == [],
             f"same output file twice: exit {p.returncode}, stderr {p.stderr!r}, left {os.listdir(d)}"):
        print(f"ok   same output file twice: {p.stderr.strip()}")

# The largest 64-bit seed is a seed; --check validates without running or writing.
with tempfile.TemporaryDirectory() as d:
    p = subprocess.run([AIRPDES, *SMALL, "--seed", "18446744073709551615", "--check", "--json",
                        os.path.join(d, "o.json")], capture_output=True, text=True, timeout=30)
    if check(p.returncode == 0 and p.stdout == "" and p.stderr == "" and os.listdir(d) == [],
             f"--check of a good run: exit {p.returncode}, {p.stdout!r} {p.stderr!r}, left {os.listdir(d)}"):
        print("ok   --check of a good run (seed 2^64-1): exit 0, no output")

# A barrier wait that holds its CPU, named with more threads than CPUs, runs but says what it
# will cost: one warning line; with a CPU per thread, or auto, nothing.
cpus = len(os.sched_getaffinity(0))
for wait, threads, warns in [("spin", cpus + 1, True), ("idle-yield", cpus + 1, True),
                             ("spin", cpus, False), ("auto", cpus + 1, False)]:
    p = subprocess.run([AIRPDES, "--mode", "dm", "--threads", str(threads), "--pes", str(threads),
                        "--barrier-wait", wait, "--end-time", "10", "--check"],
                       capture_output=True, text=True, timeout=30)
    lines = p.stderr.strip().splitlines()
    label = f"--barrier-wait {wait} with {threads} threads on {cpus} CPUs"
    if check(p.returncode == 0 and (len(lines) == 1 and lines[0].startswith("airpdes: warning: --barrier-wait "
                                                                           f"{wait} with {threads} threads")
                                    if warns else lines == []),
             f"{label}: exit {p.returncode}, stderr {lines!r} (wanted {'one warning' if warns else 'nothing'})"):
        print(f"ok   {label}: {'warned' if warns else 'no warning'}")

# --detector rq is refused where /proc/thread-self/schedstat does not exist. Shown by hiding
# /proc in a private mount namespace (needs root and unshare; otherwise not checked).
probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs none /proc"],
                       capture_output=True, text=True)
if probe.returncode != 0:
    not_checked("rq without schedstat: cannot hide /proc here (needs root and unshare -m)")
else:
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "out.json")
        p = subprocess.run(["unshare", "-m", "sh", "-c", 'mount -t tmpfs none /proc && exec "$@"', "sh",
                            AIRPDES, *SMALL, "--mode", "adm", "--threads", "2", "--detector", "rq",
                            "--json", out], capture_output=True, text=True, timeout=30)
        lines = p.stderr.strip().splitlines()
        if check(p.returncode == 2 and len(lines) == 1 and "schedstat" in lines[0] and os.listdir(d) == [],
                 f"rq without schedstat: exit {p.returncode}, stderr {lines!r}, left {os.listdir(d)}"):
            print(f"ok   rq without schedstat: {lines[0] if lines else ''}")

# Written atomically and all-or-nothing: when an output path turns into a directory during
# the run, that rename fails, so the run fails with one line on stderr and leaves no output
# and no temporary behind. The JSON, the run's record of success, is renamed last, so it
# never appears for such a run, not even for the microseconds before the clean-up (seen
# through an inotify watch, which no scheduling can hide it from).
def break_output_during_run(broken):
    with tempfile.TemporaryDirectory() as d:
        paths = {"json": os.path.join(d, "out.json"), "timeline": os.path.join(d, "tl.csv")}
        watch = DirWatch(d)
        p = subprocess.Popen([AIRPDES, "--lps-per-pe", "2000", "--end-time", "20000", "--quiet",
                              "--json", paths["json"], "--timeline", paths["timeline"]],
                             stderr=subprocess.PIPE, text=True)
        time.sleep(0.2)
        running = p.poll() is None
        os.mkdir(paths[broken])
        err = p.communicate(timeout=120)[1].strip().splitlines()
        appeared = watch.appeared()
        left = sorted(os.listdir(d))
        if not check(running, "the run ended within 0.2 s: cannot change the output path during it"):
            return
        ok = check(p.returncode == 1 and len(err) == 1 and "cannot write" in err[0],
                   f"failed rename of the {broken}: exit {p.returncode}, stderr {err!r}")
        ok &= check(left == [os.path.basename(paths[broken])] and os.listdir(paths[broken]) == [],
                    f"failed rename of the {broken} left {left}")
        ok &= check("out.json" not in appeared or broken == "json",
                    f"failed rename of the {broken}: the JSON appeared before the run failed")
        if ok:
            print(f"ok   failed final rename of the {broken}: exit 1, {err[0]}, nothing left behind"
                  f"{', the JSON never appeared' if broken == 'timeline' else ''}")


break_output_during_run("timeline")
break_output_during_run("json")

# A good run: exactly the documented keys, consistent counts, a well-formed timeline.
KEYS = {"config", "mode_adaptive", "wall_s", "start_monotonic_s", "committed_events", "processed_events", "rolled_back_events",
        "rollbacks", "efficiency", "event_rate", "gvt_rounds", "final_gvt", "barrier_handoff", "checksum",
        "threads", "pes", "model", "work_options"}
# the PI detector's own figures (its report hook); absent with other detectors and in FM
PI_KEYS = {"pi_probes", "pi_slow_probes", "pi_slow_kept_cpu", "pi_probe_s"}
THREAD_KEYS = {"id", "events", "busy_s", "inactive_s", "deactivations", "reactivations", "cpu_moves", "yield_handoffs",
               "rap_probes", "rap_slow_probes", "rap_probe_max_us", "rap_no_spare_cpu",
               "deactivation_times_s", "reactivation_times_s", "times_truncated"} | PI_KEYS
PE_KEYS = {"id", "committed_events", "iterations", "non_primary_iterations"}
j, _ = run("--mode", "ladm", "--threads", "2", "--pes", "3", "--lps-per-pe", "200",
           "--end-time", "2000", "--remote", "0.3", "--timeline-period-ms", "5", timeline=True)
if j:
    tl = j.pop("_timeline")
    check(set(j) == KEYS, f"JSON keys {sorted(j)} != {sorted(KEYS)}")
    check(all(set(t) == THREAD_KEYS for t in j["threads"]), f"thread keys {j['threads'][0].keys()}")
    check(all(set(p) == PE_KEYS for p in j["pes"]), f"pe keys {j['pes'][0].keys()}")
    check(len(j["threads"]) == 2 and len(j["pes"]) == 3, "one entry per thread and per PE")
    check(all(t.get("times_truncated") is False and len(t["deactivation_times_s"]) == t["deactivations"]
              and len(t["reactivation_times_s"]) == t["reactivations"] for t in j["threads"]),
          f"short run: time lists do not match the counts, or marked truncated: {j['threads']}")
    check(j["processed_events"] == j["committed_events"] + j["rolled_back_events"],
          "processed != committed + rolled back")
    check(all(t["pi_slow_kept_cpu"] <= t["pi_slow_probes"] <= t["pi_probes"] and t["pi_probe_s"] >= 0
              for t in j["threads"]),
          f"PI probe counts inconsistent: {j['threads']}")
    # RAP's probes while inactive: slow ones among them, and no slowest without a probe
    check(all(t["rap_no_spare_cpu"] <= t["rap_slow_probes"] <= t["rap_probes"]
              and (t["rap_probes"] > 0 or t["rap_probe_max_us"] == 0)
              for t in j["threads"]), f"RAP probe counts inconsistent: {j['threads']}")
    check(sum(p["committed_events"] for p in j["pes"]) == j["committed_events"],
          "per-PE committed events do not add up")
    check(abs(j["efficiency"] - j["committed_events"] / j["processed_events"]) < 1e-9, "efficiency")
    check(j["final_gvt"] >= 2000, f"final GVT {j['final_gvt']} below the end time")
    hand = j["barrier_handoff"]
    # one count per wait that a round's release ended: at most (threads - 1) a round
    check(hand["bucket_ns"] == 16 and len(hand["counts"]) == 65
          and 0 < sum(hand["counts"]) <= j["gvt_rounds"] * (len(j["threads"]) - 1),
          f"barrier_handoff: {sum(hand['counts'])} waits for {j['gvt_rounds']} rounds: {hand}")
    check(isinstance(j["checksum"], str) and int(j["checksum"], 16) >= 0, "checksum is a hex string")
    check(j["config"]["mode"] == "ladm" and j["config"]["pes"] == 3, "config echoes the options")
    # Each policy's options are declared in its own file: --describe lists them under it,
    # and the config records every policy's, at its default when not given.
    described = json.loads(subprocess.run([AIRPDES, "--describe"], capture_output=True, text=True,
                                          timeout=30).stdout)
    policies = [p for kind, items in described.items() if kind not in ("models", "work_options") for p in items]
    for det in described["detectors"]:
        check(det["options"], f"--describe lists no options for detector {det['name']}")
    for owner in ("ladm", "optimistic", "block"):  # a mode's, a sync's and a barrier wait's
        check(any(p["name"] == owner and p["options"] for p in policies), f"--describe lists no options for {owner}")
    for p in policies:
        for o in p["options"]:
            check(o["name"] in j["config"] and float(j["config"][o["name"]]) == float(o["default"])
                  and o["help"].startswith(p["name"] + ":"),
                  f"{p['name']}'s --{o['name']}: config {j['config'].get(o['name'])!r}, described {o}")
    names = [o["name"] for p in policies for o in p["options"]]
    given, _ = run("--mode", "adm", "--threads", "2", "--end-time", "50", "--detector", "apte", "--apte-hits", "2",
                   "--rq-threshold=0.45", "--pi-hold-ms", "7", "--n-batch", "4", "--barrier-spin-us", "9",
                   "--optimism-window", "1.5")
    check(given and tuple(given["config"][k] for k in ("apte-hits", "rq-threshold", "pi-hold-ms", "n-batch",
                                                       "barrier-spin-us", "optimism-window"))
          == (2, 0.45, 7, 4, 9, 1.5), f"given policy options not in the config: {given and given['config']}")
    check(len(names) == len(set(names)), f"two policies declare one option name: {names}")
    # which options decide the simulated events: the engine's declaration, none a policy's
    check(set(j["work_options"]) <= set(j["config"]) and not set(j["work_options"]) & set(names)
          and {"model", "pes", "remote", "seed", "end-time"} <= set(j["work_options"]),
          f"work_options {j['work_options']}: not config options, a policy's, or missing the model's shape")
    check(len(tl) >= 1, "timeline has no rows")
    check(all(a[0] < b[0] for a, b in zip(tl, tl[1:])), "timeline t_s not increasing")
    check(all(a[2] <= b[2] for a, b in zip(tl, tl[1:])), "committed events decrease in the timeline")
    check(all(1 <= r[3] <= 2 for r in tl), "active threads outside [1, threads]")
    print(f"ok   JSON keys, counts and a timeline of {len(tl)} rows")

# The per-thread time lists keep the first 4096 (de)activations; the counts go on, and
# times_truncated says the lists are cut. APTE with threshold 1, one hit and no lost-time bar
# (--apte-share 0) deactivates a thread at nearly every check (one per iteration here) and PR
# brings it back every 40 rounds of 1 iteration: thousands of cycles in a fraction of a second.
MAX_TIMES = 4096
j, _ = run("--mode", "adm", "--threads", "2", "--pes", "2", "--lps-per-pe", "10", "--end-time", "40000",
           "--batch", "1", "--gvt-interval", "1", "--detect-interval", "1", "--detector", "apte", "--apte-threshold", "1",
           "--apte-hits", "1", "--apte-share", "0", "--reactivation", "pr")
if j:
    ts = j["threads"]
    check(all(set(t) == THREAD_KEYS - PI_KEYS for t in ts),
          f"APTE run: thread keys {sorted(ts[0])}, want the PI detector's figures absent")
    check(max(t["deactivations"] for t in ts) > MAX_TIMES,
          f"could not provoke > {MAX_TIMES} deactivations: {[t['deactivations'] for t in ts]}")
    for t in ts:
        for key, times in (("deactivations", "deactivation_times_s"), ("reactivations", "reactivation_times_s")):
            check(len(t[times]) == min(t[key], MAX_TIMES),
                  f"thread {t['id']}: {len(t[times])} {times} for {t[key]} {key}")
        cut = t["deactivations"] > MAX_TIMES or t["reactivations"] > MAX_TIMES
        check(t.get("times_truncated") is cut,
              f"thread {t['id']}: times_truncated {t.get('times_truncated')} with {t['deactivations']} "
              f"deactivations, {t['reactivations']} reactivations")
    print(f"ok   time lists cut at {MAX_TIMES} and marked: "
          f"{[(t['deactivations'], t.get('times_truncated')) for t in ts]}")

# Human summary on stdout (no --quiet), nothing on stderr when stderr is not a terminal;
# counts in it agree in number ("1 thread, 1 PE", "2 threads, 2 PEs").
p = subprocess.run([AIRPDES, *SMALL], capture_output=True, text=True, timeout=30)
check(p.returncode == 0 and "committed" in p.stdout and "checksum" in p.stdout and p.stderr == "",
      f"summary: rc {p.returncode}, stdout {p.stdout!r}, stderr {p.stderr!r}")
check(", 1 thread, 1 PE x 50 LPs," in p.stdout, f"summary of a 1-thread run: {p.stdout.splitlines()[:1]}")
p = subprocess.run([AIRPDES, *SMALL, "--mode", "fm", "--threads", "2"], capture_output=True, text=True, timeout=30)
check(", 2 threads, 2 PEs x 50 LPs," in p.stdout, f"summary of a 2-thread run: {p.stdout.splitlines()[:1]}")
p = subprocess.run([AIRPDES, "--help"], capture_output=True, text=True, timeout=30)
check(p.returncode == 0 and "--detector" in p.stdout and "Examples" in p.stdout, "--help")
finish()
