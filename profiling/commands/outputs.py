"""Where commands that do GPU work put what it produced (`--json FILE`, `--save LABEL`, `tune --record`,
`profile -o`): each destination is checked before the work starts, so a bad path costs nothing, and a destination
that fails afterwards anyway (a full disk, a store gone read-only) never loses the results: they are kept in a
file of the temporary folder, which the one-line error names.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from profiling.errors import GemmLensError, InvalidInput


def check_output_file(path: str | Path | None, flag: str) -> None:
    """InvalidInput, in one line naming `flag`, unless `path` can be written (None: no such output asked for).

    A regular file is tried for real (created and removed again, or opened for appending, which changes nothing);
    a device or pipe only by its permission, since opening a pipe without a reader would wait."""
    if path is None:
        return
    p = Path(path)
    before = f"{flag} {path}"
    if p.is_dir():
        raise InvalidInput(f"{before} is a folder: name a file in it (e.g. {p / 'results.json'}); nothing was run")
    check_output_folder(p.parent, flag, for_file=path)
    try:
        if not p.exists():
            os.close(os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
            p.unlink()
        elif p.is_file():
            with open(p, "a"):
                pass
        elif not os.access(p, os.W_OK):
            raise PermissionError(13, "Permission denied")
    except OSError as exc:
        raise InvalidInput(f"{before} cannot be written ({exc.strerror or exc}); nothing was run") from None


def check_output_folder(folder: str | Path, flag: str, *, for_file: str | Path | None = None) -> None:
    """InvalidInput unless `folder` exists (or can be created, for a folder of our own) and this user may write
    in it."""
    folder = Path(folder)
    what = f"{flag} {for_file}: its folder {folder}" if for_file is not None else f"{flag}: the folder {folder}"
    if not folder.exists():
        if for_file is not None:
            raise InvalidInput(f"{what} does not exist; create it first (nothing was run)")
        existing = next((p for p in folder.parents if p.exists()), None)
        if existing is None or not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
            raise InvalidInput(f"{what} cannot be created here ({existing} is not writable); nothing was run")
        return
    if not folder.is_dir():
        raise InvalidInput(f"{what} is not a folder; nothing was run")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InvalidInput(f"{what} is not writable by this user; nothing was run")


def check_store_writable(flag: str = "--save") -> None:
    """InvalidInput unless the run store (GEMMLENS_DB_URL or the local SQLite file) opens for writing; opening it
    creates or migrates it, as the save afterwards would."""
    from profiling.runs.store import open_store

    try:
        with open_store() as store:
            if store.read_only:
                raise InvalidInput(
                    f"{flag}: the run store {store.display_url} is read-only ({store.read_only_reason}); nothing was run"
                )
            warn_history_rewritable(store)
    except InvalidInput:
        raise
    except GemmLensError as exc:
        raise InvalidInput(f"{flag}: {exc}; nothing was run") from None


def warn_history_rewritable(store: Any) -> None:
    """The store's warning, on stderr, where its database role could rewrite the audit log (RunStore.warnings)."""
    for line in getattr(store, "warnings", ()):
        print(f"warning: {line}", file=sys.stderr)


def keep_elsewhere(text: str, kind: str = "results") -> str:
    """Write `text` to a new file in the temporary folder and return its path; where even that fails, print it on
    stdout and say so."""
    try:
        fd, name = tempfile.mkstemp(prefix=f"gemmlens-{kind}-", suffix=".json")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        return name
    except OSError:
        print(text)
        return "stdout (above)"


def write_output(path: str | Path, text: str) -> None:
    """Write `text` to `path`; where that fails, keep it elsewhere (keep_elsewhere) and raise InvalidInput naming
    both."""
    try:
        Path(path).write_text(text)
    except OSError as exc:
        kept = keep_elsewhere(text)
        raise InvalidInput(f"cannot write {path}: {exc.strerror or exc}; the results were kept in {kept}") from None
