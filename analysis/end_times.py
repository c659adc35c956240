"""Did two runs simulate the same work? Each run calibrates every configuration's end time on
the machine as it runs (workflows/calibration.py), so two runs of one commit on one machine
end the same configuration at different simulated times when the host ran at another speed
during the pilots: in the 596db0d pair run B ended 9 of 10 configurations 5-16% earlier than
run A (its machine probe's chase 12.9 ns against 11.8), and the 87ed445 run ended remote-0.4
PHOLD at 27800 against 24600 and 24800 in the a185202 pair. The runs' committed events and
run lengths then differ by design. What is measured per trial need not: ADM's efficiency
under one load at remote 0.4 was 0.9729-0.9751 at end time 24600 and 0.9713-0.9746 at 27800
(3 interleaved rounds, 30 Nov), so the end time did not make `adm_efficiency` differ by z
4.0 between two of those runs; three repetitions' standard error did."""
import json
import statistics
from pathlib import Path

# Two runs' end times for the same work closer than this are the same run length for the
# analysis (the end time has three significant digits, and pilots differ by a few per cent).
SAME_WITHIN = 0.05


def end_times(run):
    """{(work as JSON, target_s): (end_time, work)} from a run's calibration folder
    (results/<scale>/calibration/*.json); records without a work or end time are skipped."""
    out = {}
    for path in sorted((Path(run) / "calibration").glob("*.json")):
        try:
            rec = json.loads(path.read_text())
            work, end, target = rec["work"], float(rec["end_time"]), float(rec["target_s"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        out[(json.dumps(work, sort_keys=True), target)] = (end, work)
    return out


def work_name(work):
    """A short name of a configuration's work: its model and the options that set it apart."""
    rest = ", ".join(f"{k} {v}" for k, v in work.items() if k not in ("model", "pes"))
    return f"{work.get('model', '?')} ({rest})" if rest else work.get("model", "?")


def compare(a, b):
    """The end times of the work both runs calibrated, B over A: {n, median, min, max,
    differ: [(ratio, name), ...] beyond SAME_WITHIN, largest first}, or None when they share
    none."""
    ea, eb = end_times(a), end_times(b)
    both = sorted(ea.keys() & eb.keys())
    if not both:
        return None
    ratios = [(eb[k][0] / ea[k][0], work_name(ea[k][1])) for k in both]
    values = [r for r, _ in ratios]
    differ = sorted((x for x in ratios if abs(x[0] - 1) > SAME_WITHIN), key=lambda x: -abs(x[0] - 1))
    return {"n": len(both), "median": statistics.median(values), "min": min(values), "max": max(values),
            "differ": differ}


def line(a, b):
    """One sentence for a pair's report."""
    c = compare(a, b)
    if c is None:
        return "Calibrated end times: the runs calibrated no work in common."
    text = (f"Calibrated end times of the same work, B over A: median {c['median']:.3f} "
            f"({c['min']:.3f}-{c['max']:.3f}) over {c['n']} configuration{'s' if c['n'] != 1 else ''}")
    if not c["differ"]:
        return text + f"; none differs by more than {SAME_WITHIN:.0%}."
    listed = "; ".join(f"{name} {r:.3f}" for r, name in c["differ"])
    n = len(c["differ"])
    return (text + f"; {n} differ{'s' if n == 1 else ''} by more than {SAME_WITHIN:.0%} ({listed}): the runs simulated "
            "different amounts of that work (the host's speed while calibrating), so compare its committed events "
            "and run times between the runs only as rates.")
