"""The `airlab` command: one entry point whose subcommands live beside the code they drive.

Each module in SUBCOMMAND_MODULES exposes `register(subparsers)`, which adds its
subcommands and sets `func` on each; the function returns the process exit code.
"""
import argparse
import importlib
import sys

SUBCOMMAND_MODULES = [
    "loads.cli",          # airlab profiles, airlab load
    "workflows.trial_cli",  # airlab trial
    "workflows.doctor",   # airlab doctor
]


class UsageError(Exception):
    """Bad input from the user: reported as one line, exit code 2."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
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
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except UsageError as e:
        print(f"airlab {args.command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"airlab {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
