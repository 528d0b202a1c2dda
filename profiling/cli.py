"""Command-line entry point: `python -m profiling <command> ...`.

Each command lives in `profiling/commands/<name>.py` and exposes HELP, add_arguments(parser) and run(args).
User errors (GemmLensError) print one line and exit with status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from profiling.errors import GemmLensError

COMMANDS = ("bench", "worker", "occupancy", "report", "profile", "sanitize", "compare", "tune", "ceilings")


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports bad arguments in one line (exit status 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"error: {message} (see `{self.prog} --help`)\n")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; with `only`, just that command is imported (the worker must start fast and
    must not need the dashboard's packages)."""
    parser = OneLineParser(prog="python -m profiling", description="GEMM Lens command line")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    for name in COMMANDS if only is None else (only,):
        try:
            module = importlib.import_module(f"profiling.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"profiling.commands.{name}":
                continue
            raise
        command_parser = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(command_parser)
        command_parser.set_defaults(handler=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    only = argv[0] if argv and argv[0] in COMMANDS else None
    args = build_parser(only).parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except GemmLensError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
