"""A SIGINT that arrives before the trial runner takes the signals over is not lost.

Until `run_trial` installs its own handler, Python turns SIGINT into KeyboardInterrupt at
the next bytecode it runs, wherever that is. When that is inside a weakref callback, such as
the one importlib runs to drop a module's import lock (`_get_module_lock.<locals>.cb`),
Python prints "Exception ignored in ..." and goes on: the runner then ran the whole engine
run before anything noticed. A CI run saw a SIGINT at 0.2 s leave a trial running past
120 s, its runner answering only the SIGTERM that came later; beside a 2-core CPU hog the
code of c736226 did so for 3 of 400 SIGINTs at random instants in the first 0.7 s, each
swallowed in that callback.

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
