"""Conservative synchronisation: results equal seq for PHOLD and PCS in every mapping mode,
no event is ever rolled back (processed == committed), also under a competing CPU-bound
process; a model with zero lookahead is refused (exit 2, one line, no output file)."""
from airpdes_harness import (assert_no_rollback, assert_same, check, cpu_competitor,
                                      finish, run)

PHOLD = ["--model", "phold", "--lps-per-pe", "100", "--end-time", "300", "--seed", "5",
         "--lookahead", "0.1"]
PCS = ["--model", "pcs", "--lps-per-pe", "64", "--end-time", "1000", "--seed", "9"]

MODES = [("fm", 2, 2), ("fm", 4, 4), ("dm", 2, 4),
         ("adm", 2, 4, "--detector", "pi"), ("ladm", 2, 4, "--detector", "apte")]

_seq_cache = {}


def seq_ref(args):
    key = tuple(map(str, args))
    if key not in _seq_cache:
        _seq_cache[key] = run(*args, "--mode", "seq")[0]
    return _seq_cache[key]


def check_model(name, common, remote_args, cases, load=False):
    for remote in remote_args:
        for mode, threads, pes, *extra in cases:
            args = [*common, *remote, "--pes", pes]
            ref = seq_ref(args)
            j, _ = run(*args, "--mode", mode, "--threads", threads, *extra, "--sync", "conservative")
            label = f"{name} {' '.join(remote)} conservative {mode} {threads}t {pes}pe" + (" + CPU load" if load else "")
            assert_same(ref, j, label)
            assert_no_rollback(j, label)


check_model("phold", PHOLD, [["--remote", "0.05"], ["--remote", "0.5"]], MODES)
check_model("pcs", PCS, [[]], MODES)
with cpu_competitor():
    check_model("phold", PHOLD, [["--remote", "0.05"]], [("fm", 2, 2), ("ladm", 2, 2, "--detector", "pi")], load=True)
    check_model("pcs", PCS, [[]], [("fm", 2, 2)], load=True)

# PHOLD's optimistic and conservative runs agree too (both equal seq).
opt, _ = run(*PHOLD, "--remote", "0.05", "--pes", "2", "--mode", "fm", "--threads", "2")
con, _ = run(*PHOLD, "--remote", "0.05", "--pes", "2", "--mode", "fm", "--threads", "2", "--sync", "conservative")
assert_same(opt, con, "phold optimistic vs conservative fm")

# Zero lookahead: refused, whatever the model and mode.
for args in (["--model", "phold", "--lookahead", "0", "--mode", "fm", "--threads", "2"],
             ["--model", "pcs", "--lookahead", "0", "--mode", "dm", "--threads", "2"],
             ["--model", "phold", "--lookahead", "0", "--mode", "seq"]):
    _, err = run(*args, "--sync", "conservative", "--end-time", "10", expect_rc=2)
    check("lookahead" in err and err.count("\n") <= 1,
          f"{args}: zero lookahead not refused with one clear line: {err!r}")
# ... while optimistic runs with zero lookahead still work.
j, _ = run("--model", "pcs", "--lookahead", "0", "--mode", "fm", "--threads", "2", "--lps-per-pe", "50",
           "--end-time", "200")
check(j is not None and j["committed_events"] > 0, "optimistic PCS with zero lookahead failed")

finish()
