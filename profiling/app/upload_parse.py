"""Parse an uploaded report in a child process, so the server keeps only the result.

Reading a 20 MB raw CSV allocates hundreds of MB of short-lived strings and frames. Done in the server, the heap
stays fragmented around the few objects that survive, and the server's RSS stayed 310 MB above idle three minutes
after the uploaders had left (scripts/load_test.py, 2026-11-24), trimming or not. In a child, that memory leaves
with the child; the parent unpickles the finished report (21 MB for 6,314 launches, in 0.09 s). A parser that
crashes or hangs fails that upload alone, with a message, after PARSE_TIMEOUT_S.

The child is `python -m profiling.app.upload_parse` with the bytes on stdin and the pickled result on stdout (a
plain subprocess: multiprocessing would re-run the server's main script, app.py, in the child).
"""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from typing import Any

from profiling import errors
from profiling.errors import GemmLensError, ReportError
from profiling.paths import SOURCE_ROOT

PARSE_TIMEOUT_S = 120.0
CHILD_MODULE = "profiling.app.upload_parse"


def parse_in_child(
    name: str, data: bytes, ncu: str | None = None, timeout_s: float = PARSE_TIMEOUT_S, module: str = CHILD_MODULE
) -> Any:
    """profiling.nsight.load.load_upload(name, data) in a child process: the same result, or the same error class
    with the same message; ReportError when the child dies or runs past `timeout_s`. `module` is the child's
    entry (tests substitute one that misbehaves)."""
    header = json.dumps({"name": name, "ncu": ncu}).encode() + b"\n"
    try:
        done = subprocess.run(
            [sys.executable, "-m", module], input=header + data, capture_output=True, timeout=timeout_s,
            cwd=SOURCE_ROOT, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        raise ReportError(
            f"reading {name} took longer than {timeout_s:.0f} s and was stopped; is it an ncu report?"
        ) from None
    try:
        kind, *rest = pickle.loads(done.stdout)
    except Exception:  # noqa: BLE001 - no answer: the child died
        why = errors.last_line(done.stderr.decode(errors="replace"), limit=200) or f"exit code {done.returncode}"
        raise ReportError(f"the parser stopped while reading {name} ({why}); nothing was kept") from None
    if kind == "ok":
        return rest[0]
    error_class = getattr(errors, rest[0], ReportError)
    if not (isinstance(error_class, type) and issubclass(error_class, GemmLensError)):
        error_class = ReportError
    raise error_class(rest[1])


def _child_main() -> int:
    stream = sys.stdin.buffer
    header = json.loads(stream.readline())
    data = stream.read()
    try:
        from profiling.nsight.load import load_upload

        answer: tuple = ("ok", load_upload(header["name"], data, ncu=header.get("ncu")))
    except GemmLensError as exc:
        answer = ("error", type(exc).__name__, str(exc))
    except Exception as exc:  # noqa: BLE001 - anything else still becomes one line for the page
        answer = ("error", "ReportError", f"the report could not be read: {type(exc).__name__}: {exc}")
    sys.stdout.buffer.write(pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL))
    return 0


if __name__ == "__main__":
    sys.exit(_child_main())
