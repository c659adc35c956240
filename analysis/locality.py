"""What a locality figure (Fig. 9) shows: the hardware cache misses perf counted where the
machine has the counters, as the paper measured; else the engine's own locality figure (the
share of PE iterations run by a thread other than the PE's primary), with the reason the
counters are missing. A VM usually has none, so the choice is made from what the trials
recorded, and titles, axis labels and captions say which one is shown and why."""
from collections import Counter

# perf's generic event first, then the last-level cache's (some CPUs count only that one)
EVENTS = ("cache-misses", "LLC-load-misses")
ENGINE_FIGURE = "PE iterations off the primary thread"


def from_perf(perf):
    """(misses, event, note) of one trial's perf record: the first of EVENTS perf counted,
    else (None, "", why no cache counter was counted)."""
    for event in EVENTS:
        c = perf.get(event) or {}
        if c.get("status") == "ok" and c.get("value") is not None:
            return c["value"], event, ""
    c = perf.get(EVENTS[0]) or {}
    status = c.get("status") or "unavailable"
    if status in ("not supported", "not counted"):
        return None, "", f"hardware cache counters {status} here (perf: <{status}>)"
    return None, "", f"no perf counters here ({c.get('reason') or 'perf did not report them'})"


def _most(values, default):
    values = [v for v in values if v]
    return Counter(values).most_common(1)[0][0] if values else default


def choose(rows):
    """For a table's rows: {"y": column drawn, "label": axis label, "shown": what it is,
    "why": why this one}. Cache misses when any successful trial counted them."""
    ok = [r for r in rows if r.get("status") == "ok"]
    counted = [r for r in ok if str(r.get("cache_misses", "")) != ""]
    if counted:
        event = _most((r.get("cache_counter") for r in counted), EVENTS[0])
        return {"y": "cache_misses", "label": f"cache misses (perf {event}, whole run)",
                "shown": f"cache misses (perf {event})",
                "why": "the machine's hardware cache counters work here"}
    why = _most((r.get("cache_note") for r in ok), "no trial recorded cache counters")
    return {"y": "locality", "label": ENGINE_FIGURE, "why": why,
            "shown": f"the engine's locality figure ({ENGINE_FIGURE})"}


def title_lines(shown):
    """The lines a figure's title adds: what is shown and, for the stand-in, why."""
    if shown["y"] == "cache_misses":
        return [f"shown: {shown['shown']}"]
    return [f"shown: {shown['shown']}", f"not cache misses: {shown['why']}"]


def sentence(shown):
    """The caption's sentence saying what is shown and why."""
    if shown["y"] == "cache_misses":
        return f"Shown: {shown['shown']}; {shown['why']}."
    return f"Shown: {shown['shown']}, not cache misses: {shown['why']}."
