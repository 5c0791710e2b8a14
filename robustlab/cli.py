"""The ``robustlab`` command line, in the style of ``textattack``.

A practitioner tool's subcommand lives in its own module under :mod:`robustlab.commands`; a study
kind's lives in its study package, which declares it (:class:`robustlab.studies.kind.StudyKind`,
found through the registry :mod:`robustlab.studies`). Each exposes ``register(subparsers)``; this file only discovers them, so commands stay thin adapters over the
Python API that the TUI uses too. Errors caused by the user's input (:class:`RobustlabError`)
print one clear message and exit with code 2; nothing is left half-written by the commands.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import functools
import importlib
import os
import pkgutil
import signal
import sqlite3
import sys
import warnings
from typing import Any

from robustlab.errors import RobustlabError
from robustlab.procs import answer_ctrl_c
from robustlab.textfmt import echo, printable
from robustlab.trust import REGISTERED_ONLY_ENV, harden_process
from robustlab.version import __version__


class Parser(argparse.ArgumentParser):
    """robustlab's parsers never guess an option from a prefix (``allow_abbrev=False``).

    argparse would read ``--data`` as whichever of ``--dataset``/``--dataset-format``/… it
    prefixes, or refuse it as ambiguous; only the spellings a command declares (aliases
    included, docs/cli.md) are accepted. Subcommand parsers inherit the class.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def parse_args(self, args: Any = None, namespace: Any = None) -> argparse.Namespace:
        argv = sys.argv[1:] if args is None else list(args)
        ns, extras = self.parse_known_args(argv, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}"
                       + _prefix_hint(self, argv, extras))
        return ns

    def _print_message(self, message: str, file: Any = None) -> None:
        """Usage errors quote the arguments (``invalid choice: 'x'``), which may come from a
        stored command or a plan: printed :func:`~robustlab.textfmt.printable`."""
        super()._print_message(printable(message, lines=True) if message else message, file)


def _prefix_hint(parser: argparse.ArgumentParser, argv: list[str], extras: list[str]) -> str:
    """``--num-ex`` -> " (did you mean --num-examples? …)": a shortened option is refused, never
    guessed, but the message names the option it shortens (a command typed, or stored by a run
    directory, when robustlab still completed prefixes)."""
    leaf = parser
    for tok in argv:  # the (sub)command parser the options belong to
        subs = [a for a in leaf._actions if isinstance(a, argparse._SubParsersAction)]
        if subs and tok in subs[0].choices:
            leaf = subs[0].choices[tok]
    hints = []
    for extra in extras:
        flag = extra.split("=", 1)[0]
        if not flag.startswith("--"):
            continue
        full = sorted({o for o, a in leaf._option_string_actions.items() if o.startswith(flag)})
        if full and len({leaf._option_string_actions[o].dest for o in full}) == 1:
            hints.append(f"{full[0]} for {flag}")
    if not hints:
        return ""
    return f" (options are never abbreviated: write {', '.join(hints)})"


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The full parser, or with ``only`` (a key of :func:`_command_module`) the parser with just
    that command registered (a command then imports nothing of the others: ``robustlab perturb``
    starts without numpy). Commands are listed by key: a module of :mod:`robustlab.commands`
    (practitioner tools) or a study kind's name (its command, declared in its package)."""
    parser = Parser(
        prog="robustlab",
        description="Robustness testing for NLP models: perturbations, learnability/CENT, "
        "second-order attacks, counterfactual bias and cross-domain consistency.",
    )
    parser.add_argument("--version", action="version", version=f"robustlab {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    tools = _tool_modules()
    commands: dict[str, Any] = {}
    if only is None or only in tools:
        commands |= {name: functools.partial(importlib.import_module,
                                             f"robustlab.commands.{name}") for name in tools}
    if only is None or only not in tools:  # the commands study packages declare themselves
        for key, kind in _kind_commands().items():
            if key in commands:
                raise TypeError(f"study kind {kind.name!r} declares a command that "
                                f"robustlab.commands.{key} already registers")
            commands[key] = functools.partial(kind.part, "command")
    for key in sorted(commands):
        if only is None or key == only:
            commands[key]().register(sub)
    # the TUI's forms are built from the whole parser: handed to it here, so robustlab.tui
    # never imports this module (layering: cli -> commands -> tui)
    parser.set_defaults(build_parser=build_parser)
    return parser


def _tool_modules() -> list[str]:
    """The practitioner tools' command modules (:mod:`robustlab.commands`)."""
    import robustlab.commands as pkg

    return sorted(m.name for m in pkgutil.iter_modules(pkg.__path__) if not m.name.startswith("_"))


def _kind_commands() -> dict[str, Any]:
    """The study kinds that declare a command (the registry), by key (``cross-domain`` ->
    cross_domain)."""
    from robustlab.studies import kinds

    return {kind.name.replace("-", "_"): kind for kind in kinds().values()
            if kind.command is not None}


def _command_module(argv: list[str]) -> str | None:
    """The key of the command ``argv`` names when it is one: a tool module (``perturb``) or a
    study kind by name or alias (``cross-domain`` -> cross_domain, ``robustness`` ->
    learnability); None when it takes the whole parser to know."""
    if not argv or argv[0].startswith("-"):
        return None
    name = argv[0].replace("-", "_")
    if name in _tool_modules():
        return name
    from robustlab.studies import find

    kind = find(argv[0])
    return kind.name.replace("-", "_") if kind is not None and kind.command is not None else None


#: the command running in this process (for the line printed on a Ctrl-C at shutdown)
_SHUTDOWN: dict[str, Any] = {"command": None, "interrupted": False}


def _interrupted_at_shutdown(signum: int, frame: Any) -> None:
    """SIGINT after the command returned (its exit handlers still running: torch, Ray, pools):
    the usual one line, once; the handlers finish, and the exit code becomes 130."""
    if not _SHUTDOWN["interrupted"]:
        name = f"robustlab {_SHUTDOWN['command']}" if _SHUTDOWN["command"] else "robustlab"
        echo(f"{name}: interrupted; finished results are kept.", file=sys.stderr, flush=True)
    _SHUTDOWN["interrupted"] = True


def _exit_130_if_interrupted() -> None:
    """The last exit handler (registered before any library's): exit 130 after a Ctrl-C at
    shutdown. ``os._exit`` only skips what is left of the interpreter's teardown."""
    if _SHUTDOWN["interrupted"]:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(130)


def main(argv: list[str] | None = None) -> int:
    """The ``robustlab`` command. As the process's entry point (``argv`` None) a Ctrl-C after
    the command returned, during the libraries' exit handlers (torch's ``dump_compile_times``
    printed a KeyboardInterrupt traceback and the process exited 0), prints the usual line
    and exits 130 once the handlers are done."""
    if argv is not None:
        return _main(list(argv))
    harden_process()  # the process's entry: no import path or pickle from the working directory
    answer_ctrl_c()  # a background job (`nohup robustlab … &`) inherits SIGINT ignored
    atexit.register(_exit_130_if_interrupted)  # first registered, so it runs last
    try:
        rc = _main(sys.argv[1:])
    except SystemExit:
        signal.signal(signal.SIGINT, _interrupted_at_shutdown)
        raise
    signal.signal(signal.SIGINT, _interrupted_at_shutdown)
    if rc == 130:  # interrupted (its line printed): exit 130 from the last exit handler, before
        # the interpreter's teardown -- which sets SIGINT back to SIG_DFL -- can end the process
        # by SIGINT (-2) instead (seen in 1 of 12 background-job stops)
        _SHUTDOWN["interrupted"] = True
    try:  # what stdout still buffers goes out now, where a closed pipe is handled
        sys.stdout.flush()
    except BrokenPipeError:
        return _quiet_broken_pipe()
    return rc


def _show_warning(message: Any, category: type[Warning], filename: str, lineno: int,
                  file: Any = None, line: str | None = None) -> None:
    """``warnings.showwarning`` for robustlab's commands: a library's warning may quote data
    (matplotlib's "Glyph 14 (\\x0e) missing" quotes a perturbation label), so it reaches the
    terminal through :func:`~robustlab.textfmt.printable` like every text robustlab prints."""
    text = warnings.formatwarning(message, category, filename, lineno, line)
    try:
        (file or sys.stderr).write(printable(text, lines=True))
    except (OSError, ValueError):  # stderr closed: a warning is not worth a crash
        pass


def _has_run(args: argparse.Namespace) -> bool:
    """Whether the command has a run store that keeps finished cells (a study's ``--out``, the
    run ``resume`` continues): only then is "rerun to resume" true after an error."""
    from robustlab.runs.store import is_run_dir

    for name in ("out", "run_dir", "dir"):
        value = getattr(args, name, None)
        if isinstance(value, str) and value:
            try:
                if is_run_dir(value):
                    return True
            except OSError:
                pass
    return False


def _main(argv: list[str]) -> int:
    warnings.showwarning = _show_warning
    only = _command_module(argv)
    parser = build_parser(only)
    if only is not None and argv[0] not in parser._subparsers._group_actions[0].choices:
        parser = build_parser()  # the module registers its command under another name
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 1
    _SHUTDOWN["command"] = args.command
    # specs typed on this command line may name a module:Class, unless the TUI launched it from
    # a form (then they are data: registered names only; see robustlab.trust)
    args.trusted = os.environ.get(REGISTERED_ONLY_ENV) != "1"
    try:
        check = getattr(args, "check", None)
        if callable(check):  # the command's pre-run checks: nothing exists yet when one fails
            check(args)
        rc = args.func(args)
    except RobustlabError as exc:
        echo(f"robustlab {args.command}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:  # `robustlab failures RUN | head`: the reader has what it wanted
        return _quiet_broken_pipe()
    except (OSError, sqlite3.OperationalError) as exc:
        # the environment failed mid-run (disk full, file system gone read-only, permissions):
        # one line, not a traceback; finished cells are in the run store and a rerun resumes
        where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
        hint = ("; finished results are kept: fix this and rerun the same command to resume"
                if _has_run(args) else "")
        echo(f"robustlab {args.command}: error: {getattr(exc, 'strerror', None) or exc}{where}"
             f"{hint}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        echo(f"robustlab {args.command}: interrupted; finished results are kept.", file=sys.stderr)
        return 130
    return int(rc or 0)


def _quiet_broken_pipe() -> int:
    """A closed stdout ends the command quietly: stdout points at /dev/null so the interpreter's
    final flush cannot raise again, and the exit status is 141 (128 + SIGPIPE, as a shell reports
    a command a pipe's reader stopped), so ``set -o pipefail`` still sees it."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return 141


if __name__ == "__main__":
    sys.exit(main())
