"""What if a loaded run that ran far were compared with a far baseline? A what-if for
planning (issue 14), not a verdict: the lab's slowdowns stay as they are.

On a host that moves its vCPUs apart the engine's handlers run slower when far (1.20x at
remote 0, 1.48x at remote 0.2 with no load: docs/engine-benchmarks.md, far_penalty.py).
The workflow re-runs a no-load trial that ran far, so baselines are near, while a loaded run
is kept however far it ran: its slowdown carries the host's placement as well as the load.
This reads the far no-load attempts that the re-runs discarded (each trial record's
noise.attempts) as the measure of that penalty, independent of the loaded runs: per pair of
a far attempt and the near run kept for the same trial, the extra time per unit of far share,
k = (far window / kept window - 1) / (far share - kept share). Each loaded row of Fig. 1 and
Fig. 8 that ran far (the runner's ran_far) is then divided by 1 + k * its far share (k: the
median of its remote level's pairs, or of every pair when its level has fewer than
MIN_PAIRS), and the figures' median interval half-widths are printed both ways.

    python -m analysis.placement_matched results/quick [OTHER_RUN ...]

Prints; exit 2 when a folder holds no finished run's tables."""
import statistics
import sys
from pathlib import Path

from analysis import precision
from analysis.baselines import ran_far
from analysis.stats import number, read_rows
from analysis.time_spent import kept_attempt, named_records
from workflows.experiments import load_experiment

FIGURES = ("fig01-fm-slowdown", "fig08-one-load")
MIN_PAIRS = 3  # fewer pairs at a remote level: that level takes every level's median
FAR_ATTEMPT_SHARE = 0.5  # a discarded attempt counts as far from half of its waits far


def penalty_pairs(records):
    """{remote level: [k, ...]} from the no-load trials whose discarded attempts ran far
    while the run they kept did not (records: trial records, any experiment)."""
    pairs = {}
    for d in records:
        if (d.get("profile") or {}).get("processes") or d.get("status") != "ok":
            continue
        nz = d.get("noise") or {}
        attempts, kept = nz.get("attempts") or [], kept_attempt(nz)
        if len(attempts) < 2 or not 0 <= kept < len(attempts):
            continue
        base = attempts[kept]
        if base.get("ran_far") or not isinstance(base.get("far_share"), (int, float)) or not base.get("window_s"):
            continue
        remote = str(((d.get("engine") or {}).get("config") or {}).get("remote", ""))
        for i, a in enumerate(attempts):
            share = a.get("far_share")
            if i == kept or not isinstance(share, (int, float)) or share < FAR_ATTEMPT_SHARE or not a.get("window_s"):
                continue
            if a.get("disturbed") or share <= base["far_share"]:
                continue
            pairs.setdefault(remote, []).append((a["window_s"] / base["window_s"] - 1) / (share - base["far_share"]))
    return pairs


def penalty_per_share(pairs):
    """{remote level: k} with the all-levels median under a level with fewer than MIN_PAIRS,
    and that median under the key None; {} without any pair."""
    every = [k for ks in pairs.values() for k in ks]
    if not every:
        return {}
    out = {None: statistics.median(every)}
    for level, ks in pairs.items():
        out[level] = statistics.median(ks) if len(ks) >= MIN_PAIRS else out[None]
    return out


def matched(rows, k):
    """The rows with each loaded far run's slowdown divided by 1 + k * far share (k by the
    row's remote level), and how many rows were adjusted."""
    out, n = [], 0
    for r in rows:
        r = dict(r)
        s, share = number(r.get("slowdown")), number(r.get("far_share"))
        if s is not None and share is not None and r.get("profile") != "none" and ran_far(r):
            per = k.get(str(r.get("remote", "")), k.get(None))
            if per is not None:
                r["slowdown"] = s / (1 + per * share)
                n += 1
        out.append(r)
    return out, n


def report(run):
    recs = [d for _, d in named_records(run)]
    pairs = penalty_pairs(recs)
    k = penalty_per_share(pairs)
    every = sorted(x for ks in pairs.values() for x in ks)
    lines = [f"{run}:"]
    if not k:
        return lines + ["  no far no-load attempt beside a near kept run: the far penalty is not measurable here"]
    levels = ", ".join(f"remote {lv}: {statistics.median(ks):.2f} ({len(ks)})" for lv, ks in sorted(pairs.items()))
    lines.append(f"  far penalty per unit of far share, from {len(every)} discarded far no-load attempts: median "
                 f"{k[None]:.2f} (p10-p90 {every[len(every) // 10]:.2f}-{every[(9 * len(every)) // 10]:.2f}); {levels}")
    for f in FIGURES:
        path = Path(run) / "tables" / f"{f}.csv"
        if not path.is_file():
            lines.append(f"  {f}: no table")
            continue
        rows, plot = read_rows(path), load_experiment(f)["plot"]
        adjusted, n = matched(rows, k)
        raw, _ = precision.median_half_width(rows, plot)
        new, points = precision.median_half_width(adjusted, plot)
        if raw is None:
            lines.append(f"  {f}: no point with two repetitions")
            continue
        lines.append(f"  {f}: median half-width {raw:.1%} as measured, {new:.1%} placement-matched "
                     f"({n} loaded far runs adjusted, {points} points)")
    return lines


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    if not argv:
        print("placement_matched: give one or more results/<scale> folders of finished runs (--help)", file=sys.stderr)
        return 2
    for run in argv:
        if not (Path(run) / "tables" / "summary.csv").is_file():
            print(f"placement_matched: {run}: no tables/summary.csv (give a results/<scale> folder of a finished run)",
                  file=sys.stderr)
            return 2
    for run in argv:
        print("\n".join(report(run)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
