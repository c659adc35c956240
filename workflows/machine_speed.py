"""How fast the machine's CPUs were just before and just after the engine ran: the trial's
`machine_speed` object.

A virtual machine has slow phases that its own accounting cannot see: in the 7a3b582 pair
(docs/workflow.md) run A's last minutes ran every no-load engine run 10-20% slower, with
15-18% more CPU time per event, no foreign CPU and next to no steal: the host's other
guests shared the cores or caches. `airprobe` (engine/tools/airprobe.c, ~30 ms) times a
pointer chase and a multiply chain on every CPU's own clock and a cache-line ping-pong
between two CPUs; the runner records it before the loads start and after they stop, so the
analysis can compare a trial's machine with the rest of the run's (analysis/machine_speed.py).

Recorded, never fatal: a probe that cannot run (no binary, a CPU it may not pin to) leaves
its reason in place of the figures, and the trial goes on."""
import json
import subprocess

from airbase import bounded_run
from airbase.paths import ENGINE_BUILD

AIRPROBE = ENGINE_BUILD / "airprobe"
PROBE_TIMEOUT_S = 10.0


def probe(steps=None):
    """One airprobe run: {"chase_ns": mean over CPUs, "compute_ns": ..., "pingpong_ns": ...,
    "cpus": [...]} or {"error": why}."""
    argv = [str(AIRPROBE)] + (["--steps", str(steps)] if steps else [])
    try:
        r = bounded_run.run(argv, timeout=PROBE_TIMEOUT_S, text=True)
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"error": f"airprobe could not run: {e}"}
    if r.returncode != 0:
        return {"error": (r.stderr.strip().splitlines() or [f"airprobe exited {r.returncode}"])[-1]}
    try:
        out = json.loads(r.stdout)
        cpus = out["cpus"]
        return {"chase_ns": round(sum(c["chase_ns"] for c in cpus) / len(cpus), 3),
                "compute_ns": round(sum(c["compute_ns"] for c in cpus) / len(cpus), 4),
                "pingpong_ns": out["pingpong_ns"], "cpus": cpus, "wall_s": out["wall_s"]}
    except (ValueError, KeyError, TypeError, ZeroDivisionError) as e:
        return {"error": f"airprobe printed something unexpected ({e}): {r.stdout[:200]!r}"}
