"""The `airlab` command: one entry point whose subcommands live beside the code they drive.

Each module in SUBCOMMAND_MODULES exposes `register(subparsers)`, which adds its
subcommands and sets `func` on each; the function returns the process exit code.
"""
import argparse
import importlib
import os
import sys

SUBCOMMAND_MODULES = [
    "loads.cli",          # airlab profiles, airlab load
    "workflows.trial_cli",  # airlab trial
    "workflows.doctor",   # airlab doctor
    "workflows.noise_check",  # airlab noise-check
    "workflows.reproduce_again",  # airlab reproduce-again
]


from airbase.errors import UsageError  # noqa: F401 (the subcommands raise it)


class _Parser(argparse.ArgumentParser):
    """argparse, but bad usage is one line (the project's rule) instead of the usage block
    plus the error; the subcommands' parsers are of this class too (add_subparsers)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="airlab",
        description="airlab: interference laboratory for parallel discrete event simulation.",
        epilog="Run 'airlab COMMAND --help' for each command. The workflow: "
               "'snakemake --cores all reproduce_figures'.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv=None) -> int:
    # Before the subcommands' imports: a SIGINT from now on is noted, not only raised
    from airbase import early_signals
    early_signals.note_from_now()
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # named after the subcommand, where parse_args would blame plain `airlab`
        prog = f"airlab {args.command}" if getattr(args, "command", None) else "airlab"
        print(f"{prog}: error: unrecognized arguments: {' '.join(extra)} (see '{prog} --help')", file=sys.stderr)
        return 2
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        rc = int(args.func(args) or 0)
        sys.stdout.flush()  # here, so a reader gone away is met below, not at interpreter exit
        return rc
    except UsageError as e:
        print(f"airlab {args.command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"airlab {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`airlab doctor | head`): what the command holds was released
        # on the way here; stop quietly, as a shell tool does (128 + SIGPIPE), and keep
        # Python's exit-time flush from raising again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
