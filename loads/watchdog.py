"""Kill what is left of a load set once its launcher is gone, however it went.

    python -m loads.watchdog TAG      (stdin: the read end of a pipe the launcher holds)

PR_SET_PDEATHSIG only reaches a launcher's direct children: when the launcher is killed
outright (SIGKILL, OOM), a load's own children (a shell's programs, stress-ng workers,
srun steps) would live on. The watchdog runs in its own session and blocks reading the
pipe; end of file means the launcher has exited or died, and it then SIGKILLs every
process tagged AIRLAB_LOAD_SET=TAG until none is left. After a normal stop there is
nothing left to kill and it exits at once."""
import os
import signal
import sys
import time

from airbase import proctags

GIVE_UP_S = 10.0


def main():
    tag = sys.argv[1]
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_IGN)  # a terminal's Ctrl-C is the launcher's business
    try:
        while os.read(0, 4096):
            pass
    except OSError:
        pass
    deadline = time.monotonic() + GIVE_UP_S
    while time.monotonic() < deadline:
        pids = proctags.find("AIRLAB_LOAD_SET", tag)
        if not pids:
            return 0
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.05)
    return 1


if __name__ == "__main__":
    sys.exit(main())
