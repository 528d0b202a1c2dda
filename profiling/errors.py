"""Error types whose messages are written for the user: what went wrong and what to do about it."""

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
