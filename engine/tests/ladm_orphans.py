"""LADM helps orphan PEs without running them past its primary PE. One thread on 2 or 4
PEs has orphans all the time and nobody to roll back against but its own interleaving of
the PEs, so its efficiency must match adm's (which runs the PEs in turn). When a thread
ran each orphan a fixed --n-batch iterations, the orphan overshot the primary by up to 9
batches of simulated time and the primary's messages reached it as stragglers (8-46%
efficiency here). With one thread a run is deterministic, rollbacks included, so the
bounds below are not timing-dependent."""
from airpdes_harness import check, finish, run

BASE = ["--threads", "1", "--lps-per-pe", "100", "--end-time", "1000", "--seed", "3"]

for pes in (2, 4):
    for remote in (0.1, 0.4):
        args = [*BASE, "--pes", pes, "--remote", remote]
        ladm, _ = run(*args, "--mode", "ladm")
        adm, _ = run(*args, "--mode", "adm")
        if ladm is None or adm is None:
            continue
        label = f"1 thread, {pes} PEs, remote {remote}"
        helped = sum(p["non_primary_iterations"] for p in ladm["pes"])
        check(helped > 0 and ladm["pes"][0]["non_primary_iterations"] == 0,
              f"{label}: the thread did not keep its primary and help the orphans ({helped})")
        if check(ladm["efficiency"] >= 0.85 and ladm["efficiency"] >= adm["efficiency"] - 0.03,
                 f"{label}: ladm efficiency {ladm['efficiency']:.3f} ({ladm['rollbacks']} rollbacks), "
                 f"adm {adm['efficiency']:.3f} ({adm['rollbacks']} rollbacks)"):
            print(f"ok   {label}: ladm efficiency {ladm['efficiency']:.3f} ({ladm['rollbacks']} rollbacks), "
                  f"adm {adm['efficiency']:.3f}", flush=True)

finish()
