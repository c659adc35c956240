"""The signals that end a run of the lab's before its time, and that every part of it
answers by stopping what it started: Ctrl-C (SIGINT), `kill` (SIGTERM) and a hang-up
(SIGHUP: the terminal closed or the ssh session dropped, the usual way a long `make
reproduce` loses its user). SIGHUP used to take its default action: the trial runner died
at once, the engine and perf ran on to their end and the trial's cgroups stayed."""
import signal

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
