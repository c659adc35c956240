"""A short helper command whose wait can never outlast the runner's interrupt.

subprocess.run kills its child on an exception (the trial runner's SIGINT/SIGTERM/SIGHUP
become one) but then, in Popen.__exit__, waits for it without a limit; an exception raised
between Popen's start and run's `try` skips the kill altogether. A suite run of the
interrupt tests (3 Dec) saw a runner interrupted during the `perf stat -- true` probe sit
in that wait for 120 s, its stop signals already ignored, so nothing could end it. Here
the child is killed on any exception and waited for at most KILL_WAIT_S; a child that
still has not gone is left to the trial's sweep (workflows/setups/leftovers.py)."""
import subprocess

KILL_WAIT_S = 5.0


def run(argv, timeout, **kw):
    """subprocess.run(argv, capture_output=True, timeout=timeout, stdin=DEVNULL, **kw), but
    any exception (TimeoutExpired, an interrupt) kills the child and waits at most
    KILL_WAIT_S for it before the exception goes on."""
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)
    try:
        out, err = proc.communicate(timeout=timeout)
    except BaseException:
        proc.kill()
        try:
            proc.wait(KILL_WAIT_S)
        except subprocess.TimeoutExpired:
            pass
        for f in (proc.stdout, proc.stderr):
            f.close()
        raise
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)
