"""PCS sanity: the model simulates a cellular network plausibly. Blocking probability rises
with the call arrival rate and falls with more channels; every cell's busy channels stay
within [0, channels] at every committed state (the state keeps the lowest free count its
committed path reached, reported as min_free_channels / max_busy_channels); the outcome
figures are consistent with each other; bad PCS options are refused with exit 2. Without
--lps-per-pe the network is the paper's 36,864 cells spread over the PEs (a PE count that
does not divide it is refused); cell counts that make no torus of at least 3 x 3 (where
a hand-off could return to the cell it left) are refused."""
import subprocess

from airpdes_harness import AIRPDES, check, finish, run

BASE = ["--model", "pcs", "--mode", "seq", "--pes", "1", "--lps-per-pe", "144",
        "--end-time", "1500", "--seed", "3"]


def blocking(*extra, mode_args=()):
    j, _ = run(*BASE, *extra, *mode_args)
    if j is None:
        return None
    m = j["model"]
    ch = m["channels"]
    label = " ".join(map(str, extra)) or "defaults"
    check(m["calls_attempted"] > 1000, f"{label}: only {m['calls_attempted']} calls")
    check(0 <= m["min_free_channels"] and m["max_busy_channels"] <= ch,
          f"{label}: channel count left [0, {ch}]: {m}")
    check(m["calls_handed_off"] + m["calls_dropped"] == m["handoffs_attempted"],
          f"{label}: hand-off figures inconsistent: {m}")
    check(m["calls_blocked"] <= m["calls_attempted"], f"{label}: more blocked than attempted")
    check(abs(m["blocking_probability"] - m["calls_blocked"] / m["calls_attempted"]) < 1e-12,
          f"{label}: blocking probability is not blocked / attempted")
    check(m["calls_in_progress_at_end"] <= ch * 144, f"{label}: more calls in progress than channels")
    print(f"     {label}: blocking {m['blocking_probability']:.4f}, dropping "
          f"{m['dropping_probability']:.4f}, max busy {m['max_busy_channels']}/{ch}", flush=True)
    return m["blocking_probability"]


# Defaults are busy enough that every cell saturates at some point.
j, _ = run(*BASE)
if j is not None:
    check(j["model"]["max_busy_channels"] == 10, "default load never filled a cell's 10 channels")
    check(j["model"]["calls_blocked"] > 0 and j["model"]["calls_dropped"] > 0,
          "default load blocked or dropped nothing")

rates = [blocking("--call-rate", r) for r in (0.2, 0.4, 0.8)]
if None not in rates:
    check(rates[0] < rates[1] < rates[2], f"blocking does not rise with call rate: {rates}")
chans = [blocking("--channels", c) for c in (5, 10, 20)]
if None not in chans:
    check(chans[0] > chans[1] > chans[2], f"blocking does not fall with more channels: {chans}")

# The invariant also holds on the committed path of an optimistic parallel run, where
# events are rolled back and redone.
blocking("--channels", 3, mode_args=("--mode", "fm", "--threads", "2", "--pes", "2",
                                     "--lps-per-pe", "72"))

for bad in (["--channels", "0"], ["--channels", "x"], ["--call-rate", "-1"],
            ["--call-duration", "0"], ["--cell-residence", "nan"]):
    _, err = run(*BASE, *bad, expect_rc=2)
    check(err.count("\n") <= 1 and bad[0] in err, f"{bad}: error is not one line naming the option: {err!r}")

# The default size: the paper's 36,864 cells (192 x 192) over the PEs, visible in the JSON
# config; an explicit --lps-per-pe still wins. Short end times keep these runs fast.
for pes, threads, mode in ((1, 1, "seq"), (2, 2, "fm"), (4, 2, "ladm")):
    j, _ = run("--model", "pcs", "--mode", mode, "--threads", threads, "--pes", pes, "--end-time", "2")
    if j is not None:
        m, c = j["model"], j["config"]
        if check(c["lps-per-pe"] == 36864 // pes and (m["grid_x"], m["grid_y"]) == (192, 192),
                 f"default pcs on {pes} PE(s): lps-per-pe {c['lps-per-pe']}, grid {m['grid_x']} x {m['grid_y']}"):
            print(f"ok   default pcs on {pes} PE(s): lps-per-pe {c['lps-per-pe']} in the JSON config, 192 x 192")
j, _ = run(*BASE, "--end-time", "2")
check(j is not None and j["config"]["lps-per-pe"] == 144, "an explicit --lps-per-pe is not kept")
j, _ = run("--model", "phold", "--end-time", "2")
check(j is not None and j["config"]["lps-per-pe"] == 1000, "phold's default --lps-per-pe is no longer 1000")
help_text = subprocess.run([AIRPDES, "--help"], capture_output=True, text=True, timeout=30).stdout
pcs_help = help_text.split("\n  pcs ", 1)[-1].split("\n  ", 1)[-1].split("\nModes:")[0]
check("--lps-per-pe" in pcs_help and "36864" in pcs_help, f"--help's pcs section shows no default size: {pcs_help!r}")


def refused(args, *needles):
    """args are refused with exit 2 and one stderr line containing every needle, by a run
    and by --check alike."""
    for extra in ((), ("--check",)):
        _, err = run("--model", "pcs", "--end-time", "5", *args, *extra, expect_rc=2)
        line = err.strip()
        if check(err.count("\n") == 1 and all(n in line for n in needles),
                 f"{args} {extra}: wanted one line with {needles}, got {err!r}"):
            print(f"ok   refused {' '.join(map(str, [*args, *extra]))}: {line}")


# A PE count that does not divide 36,864: refused, naming the counts that do and --lps-per-pe.
refused(["--mode", "fm", "--threads", "5"], "--pes 5", "36864", " 4, 6, 8,", "--lps-per-pe")
refused(["--mode", "dm", "--threads", "2", "--pes", "7"], "--pes 7", "--lps-per-pe")
# Degenerate tori: a prime count (1 x n ring: a hand-off could target its own cell), a side
# of 1 or 2; each message names a --lps-per-pe that works.
refused(["--pes", "1", "--lps-per-pe", "7"], "1 x 7", "3 x 3", "--lps-per-pe 9")
refused(["--pes", "1", "--lps-per-pe", "3"], "1 x 3", "3 x 3")
refused(["--mode", "fm", "--threads", "2", "--pes", "2", "--lps-per-pe", "7"], "2 x 7", "--lps-per-pe 8")
refused(["--pes", "1", "--lps-per-pe", "8"], "2 x 4", "3 x 3")
# The smallest proper torus runs.
j, _ = run("--model", "pcs", "--pes", "1", "--lps-per-pe", "9", "--end-time", "50")
check(j is not None and (j["model"]["grid_x"], j["model"]["grid_y"]) == (3, 3), "9 cells: not a 3 x 3 torus")

finish()
