"""Wait for a child process so that a signal's Python handler always ends the wait.

A blocking os.wait4() ends early only if the signal interrupts that very system call. Python
runs a handler at its next bytecode, so a signal that arrives just before the call (after the
last check), or that the kernel hands to another thread, leaves the handler pending until the
child exits: for an engine run, minutes. Here the handler's C part writes a byte to a
wakeup pipe (signal.set_wakeup_fd) and the wait polls that pipe beside the child's pidfd, so
a signal at any instant wakes it; the handler then runs (raising, for the trial runner's
SIGINT/SIGTERM) as soon as poll() returns. Handlers run in the main thread only, so from any
other thread this is a plain os.wait4()."""
import os
import select
import signal
import threading


def wait4(pid):
    """os.wait4(pid, 0): (pid, status, rusage), interruptible by a signal at any instant."""
    if threading.current_thread() is not threading.main_thread():
        return os.wait4(pid, 0)
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):  # kernel before 5.3, or a child already reaped
        return os.wait4(pid, 0)
    r, w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        old = signal.set_wakeup_fd(w, warn_on_full_buffer=False)
        try:
            poller = select.poll()
            poller.register(pidfd, select.POLLIN)
            poller.register(r, select.POLLIN)
            while True:
                # A handler that raises does so on return from poll(); one that does not
                # (or a signal without a Python handler) just wakes us to wait again.
                if any(fd == pidfd for fd, _ in poller.poll()):
                    return os.wait4(pid, 0)
                try:
                    while os.read(r, 512):
                        pass
                except BlockingIOError:
                    pass
        finally:
            signal.set_wakeup_fd(old)
    finally:
        for fd in (pidfd, r, w):
            os.close(fd)
