"""Parse an uploaded report in a child process, so the server keeps only the result.

Reading a 20 MB raw CSV allocates hundreds of MB of short-lived strings and frames. Done in the server, the heap
stays fragmented around the few objects that survive, and the server's RSS stayed 310 MB above idle three minutes
after the uploaders had left (scripts/load_test.py, 2026-11-24), trimming or not. In a child, that memory leaves
with the child; the parent unpickles the finished report (21 MB for 6,314 launches, in 0.09 s). A parser that
crashes or hangs fails that upload alone, with a message, after PARSE_TIMEOUT_S.

The child is `python -m profiling.app.upload_parse` with the bytes on stdin and the pickled result on stdout (a
plain subprocess: multiprocessing would re-run the server's main script, app.py, in the child).

Several server processes (docs/deploy.md) share one folder of parsed uploads on disk (`parse_shared`): the
child's answer is kept there under the upload's key (the SHA-256 of its name and bytes), so a file parsed by one
process is read back by every other, never parsed again; a file lock makes processes that get the same file at
once wait for one parse. The key includes the code that built the answer (`code_version`): a pickle of other
classes (a server before an upgrade) is never read back. The folder holds pickles the server's own children wrote: it must be writable by the
server's user alone (GEMMLENS_CACHE_DIR, see profiling.app.precompute).
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path
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
    return _answer(name, _child_answer(name, data, ncu, timeout_s, module))


def _child_answer(name: str, data: bytes, ncu: str | None, timeout_s: float, module: str) -> bytes:
    """The child's pickled answer, or ReportError when it ran too long."""
    header = json.dumps({"name": name, "ncu": ncu}).encode() + b"\n"
    try:
        done = subprocess.run(
            [sys.executable, "-m", module],
            input=header + data,
            capture_output=True,
            timeout=timeout_s,
            cwd=SOURCE_ROOT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ReportError(
            f"reading {name} took longer than {timeout_s:.0f} s and was stopped; is it an ncu report?"
        ) from None
    if not done.stdout:
        why = errors.last_line(done.stderr.decode(errors="replace"), limit=200) or f"exit code {done.returncode}"
        raise ReportError(f"the parser stopped while reading {name} ({why}); nothing was kept")
    return done.stdout


def _answer(name: str, answer: bytes) -> Any:
    """The report in a child's pickled answer, or its error raised again."""
    try:
        kind, *rest = pickle.loads(answer)
    except Exception:  # noqa: BLE001 - a cut-off answer: the child died while writing it
        raise ReportError(f"the parser stopped while reading {name}; nothing was kept") from None
    if kind == "ok":
        return rest[0]
    error_class = getattr(errors, rest[0], ReportError)
    if not (isinstance(error_class, type) and issubclass(error_class, GemmLensError)):
        error_class = ReportError
    raise error_class(rest[1])


@functools.cache
def code_version() -> str:
    """SHA-256 (hex, 16 digits) of every `.py` file of the packages a parsed report's objects come from (profiling,
    and kernels for the operations its launches name): a change to any of their classes makes new keys, where an old
    pickle would be read into the new classes and miss their new fields."""
    digest = hashlib.sha256()
    for package in ("profiling", "kernels"):
        for source in sorted((SOURCE_ROOT / package).rglob("*.py")):
            digest.update(source.relative_to(SOURCE_ROOT).as_posix().encode() + b"\0" + source.read_bytes())
    return digest.hexdigest()[:16]


SHARED_DIR = "uploads"
"""The folder of parsed uploads under the cache folder (profiling.app.precompute.cache_root)."""
SHARED_BYTES = 2 * 10**9
"""What the shared folder may hold; the least recently used answers go first."""


def parse_shared(key: str, name: str, data: bytes, folder: Path | None = None, module: str = CHILD_MODULE) -> Any:
    """parse_in_child, through the folder of parsed uploads that every server process shares: a key another
    process (or this one, earlier) parsed is read from there; otherwise one parse, its answer kept for the others.
    Errors are not kept (a later try parses again). Without a usable folder it parses as parse_in_child does."""
    from profiling.app.precompute import cache_root

    folder = folder or cache_root() / SHARED_DIR
    # The key holds the user's file name: never a path.
    stem = hashlib.sha256(f"{key}\0{code_version()}".encode()).hexdigest()[:40]
    try:
        folder.mkdir(parents=True, exist_ok=True)
        lock = open(folder / f"{stem}.lock", "wb")  # noqa: SIM115 - held across the parse, closed below
    except OSError:
        return parse_in_child(name, data, module=module)
    path = folder / f"{stem}.pickle"
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one parse per key across processes; the others wait and read its answer
        try:
            answer = path.read_bytes()
        except OSError:
            answer = None
        if answer is not None:
            os.utime(path)  # recently used: pruned last
            return _answer(name, answer)
        answer = _child_answer(name, data, None, PARSE_TIMEOUT_S, module)
        report = _answer(name, answer)  # an error raises here: nothing is kept
        _keep(folder, path, answer)
        return report


def _keep(folder: Path, path: Path, answer: bytes) -> None:
    """Write the answer atomically (a reader never sees half of one), then prune the folder to SHARED_BYTES."""
    try:
        staging = path.with_suffix(f".{os.getpid()}.tmp")
        staging.write_bytes(answer)
        os.replace(staging, path)
        kept = sorted(folder.glob("*.pickle"), key=lambda p: p.stat().st_mtime, reverse=True)
        total = 0
        for old in kept:
            total += old.stat().st_size
            if total > SHARED_BYTES and old != path:
                old.unlink(missing_ok=True)
                (folder / f"{old.stem}.lock").unlink(missing_ok=True)
    except OSError:
        pass  # a full disk or a file pruned by another process meanwhile: this parse still serves


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
