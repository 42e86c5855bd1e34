"""The ``chimera`` command line.

Each subcommand is a module of this package that defines ``register(subparsers)``: it adds
its parser and sets ``handler`` (``Callable[[argparse.Namespace], int]``) as a default.
Modules are found with :mod:`pkgutil`, so a new subcommand is a new file and nothing else
changes; modules whose name starts with ``_`` are helpers. A subcommand imports its heavy
dependencies inside its handler, never at import time, so ``chimera --help`` stays fast.

Exit status: what the handler returns (``chimera check``: 0 all passed, 1 any requirement
red); 2 for bad usage, an invalid spec or another Chimera error; 3 for an internal error
(an unexpected exception, or an :class:`~chimera.errors.InternalError` such as a failed git
command on Chimera's own snapshot store);
130 when interrupted. Errors are one line on stderr, never a traceback (set
``CHIMERA_DEBUG=1`` to see the traceback of an internal error); a file validated in one pass
(a Spec, a scripted model, a crew) gets one such line per problem.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from chimera import __version__
from chimera.errors import ChimeraError, InternalError

if TYPE_CHECKING:
    import argparse

    from chimera.cli._base import CliParser

# argparse, pkgutil and the parser class are imported where they are used: a replayed
# ``chimera check`` (chimera.cli._replay) never builds a parser.
Handler = Callable[["argparse.Namespace"], int]

EXIT_OK = 0
EXIT_RED = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130

__all__ = ["EXIT_INTERNAL", "EXIT_OK", "EXIT_RED", "EXIT_USAGE", "build_parser", "main"]


def _subcommand_registrars(only: str | None = None) -> Iterator[Callable[..., None]]:
    import importlib
    import pkgutil

    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name.startswith("_") or (only is not None and info.name != only):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        register = getattr(module, "register", None)
        if callable(register):
            yield register


def build_parser(only: str | None = None) -> CliParser:
    """The top-level parser with every subcommand module registered (sorted by name), or
    only the module named ``only``."""
    from chimera.cli._base import CliParser

    parser = CliParser(
        prog="chimera",
        description="Spec-gated autonomous changes: check a Spec of executable requirements.",
    )
    parser.add_argument("--version", action="version", version=f"chimera {__version__}")
    subparsers = parser.add_subparsers(
        dest="command", metavar="COMMAND", parser_class=CliParser, title="commands"
    )
    for register in _subcommand_registrars(only):
        register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``chimera`` command with ``argv`` (default ``sys.argv[1:]``); return the exit
    status (see the module docstring)."""
    try:
        args_list = list(argv) if argv is not None else sys.argv[1:]
        if args_list[:1] == ["check"]:
            # A re-check of an unchanged tree prints its stored output before argparse, the
            # Spec or pydantic is imported (chimera.cli._replay); None runs the normal path.
            from chimera.cli._replay import replay

            status = replay(args_list[1:])
            if status is not None:
                return status
        parser = _parser_for(args_list)
        args = parser.parse_args(args_list)
        if args_list[:1] == ["check"]:
            args.replay_argv = args_list[1:]  # the replay is keyed on the arguments as typed
        handler: Handler | None = getattr(args, "handler", None)
        if handler is None:
            choices = ", ".join(sorted(_command_names(parser)))
            _err(f"chimera: error: a command is required ({choices}); see 'chimera --help'")
            return EXIT_USAGE
        return handler(args)
    except SystemExit as exc:  # --help and --version
        return exc.code if isinstance(exc.code, int) else EXIT_OK
    except InternalError as exc:
        _err(f"chimera: internal error: {exc}")
        return EXIT_INTERNAL
    except ChimeraError as exc:
        # A file validated in one pass (a Spec, a scripted model, a crew...): every problem,
        # each on its own line at file:line:col.
        problems = getattr(exc, "problems", None)
        if isinstance(problems, list) and len(problems) > 1:
            for problem in problems:
                _err(f"chimera: error: {problem}")
        else:
            _err(f"chimera: error: {exc}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        _err("chimera: interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (``chimera check | head``); stop writing quietly.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_RED
    except Exception as exc:
        if os.environ.get("CHIMERA_DEBUG"):
            raise
        _err(
            f"chimera: internal error: {type(exc).__name__}: {exc} "
            "(set CHIMERA_DEBUG=1 for the traceback)"
        )
        return EXIT_INTERNAL


def _err(line: str) -> None:
    from chimera.cli._base import err as one_line

    one_line(line)


def _parser_for(argv: Sequence[str]) -> CliParser:
    # Importing every subcommand module costs ~0.07 s; a command whose module has its name
    # (``chimera check``) registers only that module. Anything else gets the full parser.
    import pkgutil

    first = argv[0] if argv else ""
    if first and not first.startswith("-"):
        names = {i.name for i in pkgutil.iter_modules(__path__) if not i.name.startswith("_")}
        if first in names:
            parser = build_parser(only=first)
            if first in _command_names(parser):
                return parser
    return build_parser()


def _command_names(parser: argparse.ArgumentParser) -> list[str]:
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return list(action.choices)
    return []
