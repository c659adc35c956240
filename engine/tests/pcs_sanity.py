"""PCS sanity: the model simulates a cellular network plausibly. Blocking probability rises
with the call arrival rate and falls with more channels; every cell's busy channels stay
within [0, channels] at every committed state (the state keeps the lowest free count its
committed path reached, reported as min_free_channels / max_busy_channels); the outcome
figures are consistent with each other; bad PCS options are refused with exit 2."""
from airpdes_harness import check, finish, run

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

finish()
