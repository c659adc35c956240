"""Errors every layer may raise."""


class UsageError(Exception):
    """Bad input from the user: reported as one line, exit code 2."""
