"""PCS determinism: committed events, checksum and the model's outcome are identical in seq
and in every parallel mode and thread count, with and without a competing CPU-bound
process. PCS depends only on the total cell count (not on how cells are split into PEs),
so runs with different PE counts but the same 256 cells must also agree."""
from airpdes_harness import assert_same, cpu_competitor, finish, run

CELLS = 256
COMMON = ["--model", "pcs", "--end-time", "1500", "--seed", "7", "--gvt-interval", "32"]


def shape(threads, pes):
    return ["--threads", threads, "--pes", pes, "--lps-per-pe", CELLS // pes]


ref, _ = run(*COMMON, "--mode", "seq", *shape(1, 4))
print("seq reference:", ref and ref["committed_events"], ref and ref["model"]["blocking_probability"])
assert_same(ref, run(*COMMON, "--mode", "seq", *shape(1, 1))[0], "seq 1 PE")

RUNS = [
    ("fm", 1, 1), ("fm", 2, 2), ("fm", 4, 4),
    ("dm", 2, 4), ("dm", 3, 4),
    ("adm", 2, 4, "--detector", "pi", "--reactivation", "rap"),
    ("adm", 2, 2, "--detector", "apte", "--reactivation", "pr"),
    ("ladm", 2, 4, "--detector", "pi", "--reactivation", "rap"),
    ("ladm", 2, 2, "--detector", "rq", "--reactivation", "pr"),
]
for mode, threads, pes, *extra in RUNS:
    label = f"{mode} {threads}t {pes}pe {' '.join(extra)}".strip()
    assert_same(ref, run(*COMMON, "--mode", mode, *shape(threads, pes), *extra)[0], label)

# Other seeds and parameters: zero lookahead (legal for optimistic runs) and a heavily
# blocking network, where hand-offs are dropped and channels are always full.
for extra in (["--seed", "8"], ["--lookahead", "0"], ["--channels", "3", "--call-rate", "0.6"]):
    args = [*COMMON, *extra]
    ref2, _ = run(*args, "--mode", "seq", *shape(1, 1))
    for mode, threads, pes in (("fm", 2, 2), ("fm", 4, 4), ("ladm", 2, 4)):
        assert_same(ref2, run(*args, "--mode", mode, *shape(threads, pes))[0],
                    f"{' '.join(extra)}: {mode} {threads}t {pes}pe")

with cpu_competitor():
    for mode, threads, pes, *extra in [("fm", 2, 2), ("dm", 2, 4), ("adm", 2, 4, "--detector", "apte"),
                                       ("ladm", 2, 2, "--detector", "pi")]:
        label = f"{mode} {threads}t {pes}pe {' '.join(extra)} + CPU load".replace("  ", " ")
        assert_same(ref, run(*COMMON, "--mode", mode, *shape(threads, pes), *extra)[0], label)

finish()
