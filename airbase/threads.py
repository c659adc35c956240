"""Helper threads that leave the stop signals (SIGINT, SIGTERM, SIGHUP) to the main thread.

Python runs signal handlers only in the main thread, but the kernel may hand a signal sent
to the process to any thread that does not block it. When a helper thread (a timer, a
load scheduler, a sampler) takes it, the handler waits until the main thread wakes up by
itself: a runner blocked in wait4() on a long engine run ignored a SIGINT for a minute
(tests/test_trial_runner.py, interrupted under cpuset). A thread inherits its creator's
signal mask, so starting helpers with those signals blocked sends them to the main thread
only. A process started from such a thread inherits the mask across exec: its preexec_fn
calls unblock_in_child(), or SIGTERM could never stop it."""
import signal
import threading

from airbase.stop_signals import STOP_SIGNALS

MAIN_THREAD_SIGNALS = set(STOP_SIGNALS)


def start(thread: threading.Thread) -> threading.Thread:
    """Start `thread` (a Thread or Timer) with the stop signals blocked in it."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, MAIN_THREAD_SIGNALS)
    try:
        thread.start()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
    return thread


def unblock_in_child():
    """For a preexec_fn: give a child started from a helper thread the signals back."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, MAIN_THREAD_SIGNALS)
