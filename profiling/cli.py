"""Command-line entry point: `gemmlens <command> ...`, the same as `python -m profiling <command> ...`.

Each command lives in `profiling/commands/<name>.py` (`app`, the dashboard launcher, in
`profiling/app_command.py`) and exposes HELP, add_arguments(parser) and run(args).
User errors (GemmLensError) print one line and exit with status 2, never a traceback; a closed stdout
(`... | head`) ends the command quietly with status 141.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys

from profiling.errors import GemmLensError

COMMANDS = (
    "app",
    "bench",
    "worker",
    "occupancy",
    "report",
    "profile",
    "sanitize",
    "compare",
    "tune",
    "ceilings",
    "source",
    "sass",
    "explain",
    "access",
    "audit",
    "compare-launches",
    "migrate",
)
_MODULES = {"app": "profiling.app_command", "compare-launches": "profiling.commands.compare_launches"}


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports bad arguments in one line (exit status 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"error: {message} (see `{self.prog} --help`)\n")


def build_parser(only: str | None = None, prog: str = "python -m profiling") -> argparse.ArgumentParser:
    """The argument parser; with `only`, just that command is imported (the worker must start fast and
    must not need the dashboard's packages)."""
    parser = OneLineParser(prog=prog, description="GEMM Lens command line")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    shown: list[str] = []
    for name in COMMANDS if only is None else (only,):
        module_name = _MODULES.get(name, f"profiling.commands.{name}")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                continue
            raise
        internal = getattr(module, "INTERNAL", False)
        # An internal command (the worker) parses as any other but is not listed: no help line, not in the choices.
        listed = {} if internal else {"help": module.HELP}
        command_parser = sub.add_parser(name, description=module.HELP, **listed)
        module.add_arguments(command_parser)
        command_parser.set_defaults(handler=module.run, takes_passthrough=getattr(module, "PASSTHROUGH", False))
        if not internal:
            shown.append(name)
    sub.metavar = "{" + ",".join(shown) + "}"
    return parser


def main(argv: list[str] | None = None, prog: str = "python -m profiling") -> int:
    argv = sys.argv[1:] if argv is None else argv
    only = argv[0] if argv and argv[0] in COMMANDS else None
    parser = build_parser(only, prog)
    try:
        # Inside the try: the numeric option types (profiling.commands) refuse bad values with InvalidInput.
        args, unknown = parser.parse_known_args(argv)
        if unknown and not args.takes_passthrough:
            parser.error(f"unrecognized arguments: {' '.join(unknown)}")
        args.passthrough = unknown
        status = int(args.handler(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
        return status
    except GemmLensError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return _stdout_closed()


def _stdout_closed() -> int:
    """The reader of stdout went away (`... | head`): stop quietly with the status a SIGPIPE death gives (141).

    stdout is pointed at /dev/null, so the interpreter's final flush of what is still buffered cannot fail
    again (the recipe in Python's `signal` documentation).
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a real file (tests capture it): nothing is left to flush
        pass
    return 128 + signal.SIGPIPE if hasattr(signal, "SIGPIPE") else 1


def gemmlens_main() -> int:
    """The `gemmlens` console command (pyproject.toml [project.scripts])."""
    return main(prog="gemmlens")
