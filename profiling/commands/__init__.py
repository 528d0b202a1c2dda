"""The CLI's commands, one module each (HELP, add_arguments, run), and what they share."""

from __future__ import annotations

import sys


def print_progress(progress: float | None = None, message: str | None = None, item: object = None) -> None:
    """A use case's progress lines on stderr, so stdout keeps only the result."""
    if message:
        print(f"  {message}", file=sys.stderr, flush=True)
