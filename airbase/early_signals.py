"""A SIGINT that arrives before the trial runner takes the signals over is not lost.

Until `run_trial` installs its own handler, Python turns SIGINT into KeyboardInterrupt at
the next bytecode it runs, wherever that is: inside an import, a library's clean-up, code
that clears errors. Where that exception is swallowed, the runner goes on and runs the
whole engine run before anything notices (a CI run saw a SIGINT at 0.2 s, in the start-up,
leave a trial running past 120 s, its runner answering only the SIGTERM that came later).

So the `airlab` command's first act notes every such SIGINT (and still raises
KeyboardInterrupt, as Python would); `run_trial` asks `first()` once it holds the signals,
and a noted one interrupts the trial before anything has started. SIGTERM needs no note:
until then its default action ends the process at once."""
import signal

_seen = []


def _note_then_raise(signum, frame):
    _seen.append(signum)
    raise KeyboardInterrupt


def note_from_now():
    """Note every SIGINT from now on. Leaves an inherited SIG_IGN alone (a shell's background
    job ignores Ctrl-C at the terminal on purpose)."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _note_then_raise)


def first():
    """The name of the first signal noted (e.g. 'SIGINT'), or None."""
    return signal.Signals(_seen[0]).name if _seen else None
