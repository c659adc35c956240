"""Snakemake's job-rate timers, cancelled when a run is over.

Snakemake re-examines its ready jobs on a timer (max-jobs-per-timespan; every 10 s in
profiles/default, which keeps it idle while trials run) and starts a new
`threading.Timer`, a non-daemon thread, at each pass of its scheduling loop. Python's exit
waits for non-daemon threads, so every workflow ended up to 10 s after its last job: about
10 s of each `make reproduce`, and of each of the test suite's workflow runs. The Snakefile
calls `cancel_rate_limit_timers` from onsuccess and onerror, when nothing is left for the
timers to wake."""
import threading


def cancel_rate_limit_timers():
    """Cancel every pending `threading.Timer` of this process (Snakemake starts no other
    kind); returns how many there were."""
    timers = [t for t in threading.enumerate() if isinstance(t, threading.Timer)]
    for t in timers:
        t.cancel()
    return len(timers)
