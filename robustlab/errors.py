"""User-facing errors: the CLI prints their message and exits non-zero, without a traceback."""


class RobustlabError(Exception):
    """Base of every error caused by the user's input (bad file, unknown name, bad option)."""

    exit_code = 2


class InputError(RobustlabError, ValueError):
    """Bad input data or options; the message names the file/line/option and the fix."""
