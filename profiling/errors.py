"""Error types whose messages are written for the user: what went wrong and what to do about it, and the
helpers that cut any message down to the one line such an error shows."""

from __future__ import annotations


class GemmLensError(Exception):
    """Base class: the message is shown as-is in the page and on the command line (exit status 2)."""


class InvalidInput(GemmLensError):
    """Arguments, sizes or files the user gave are not acceptable."""


class WorkerError(GemmLensError):
    """The GPU worker child process failed, crashed or timed out."""


class ReportError(GemmLensError):
    """An Nsight Compute report could not be read."""


class NcuError(GemmLensError):
    """Running Nsight Compute or compute-sanitizer failed."""


def first_line(text: object, limit: int = 400) -> str:
    """The first non-empty line of `text`, stripped and cut to `limit` characters ("" when there is none)."""
    return _cut(next((ln.strip() for ln in str(text).splitlines() if ln.strip()), ""), limit)


def last_line(text: object, limit: int = 400) -> str:
    """The last non-empty line of `text` (where tools put their verdict), stripped and cut to `limit` characters."""
    lines = [ln.strip() for ln in str(text).splitlines() if ln.strip()]
    return _cut(lines[-1] if lines else "", limit)


def error_line(exc: BaseException, limit: int = 400) -> str:
    """The first line of an exception's message for a one-line report; its type name when the message is empty."""
    return first_line(exc, limit) or type(exc).__name__


def _cut(line: str, limit: int) -> str:
    return line if len(line) <= limit else line[: limit - 1] + "…"
