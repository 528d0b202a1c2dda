"""Derived tables of the bundled data, computed once and kept on disk as Parquet, keyed by content (and the parsed
bundled `.ncu-rep` reports, kept as pickles the same way: `cached_object`).

Parsing the bundled ncu captures costs seconds (the Why page's source pages, the Indexing page's measured table),
which every fresh server paid again on its first visits. Here each derived table set is built once, at install or
deploy time (`python -m profiling.app.prebuild`) or on first use, into the cache folder (GEMMLENS_CACHE_DIR, else
$XDG_CACHE_HOME/gemmlens, else ~/.cache/gemmlens), and every later server start and every process of a
multi-process deployment reads it back.

The key of a table set is the SHA-256 of its input files' bytes and of the source of the code that derives it, so
new captures or a changed parser get new tables without anyone clearing the cache. A set is written to a temporary
folder and renamed into place: processes that build the same set at once never see half of one, and the loser of
the race uses the winner's. Where the cache folder cannot be written the tables are built and used, not stored.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import shutil
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    import pandas as pd

T = TypeVar("T")
CACHE_ENV = "GEMMLENS_CACHE_DIR"
_DONE = "complete"


def cache_root() -> Path:
    """The cache folder: GEMMLENS_CACHE_DIR, else $XDG_CACHE_HOME/gemmlens, else ~/.cache/gemmlens."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "gemmlens"


def content_key(files: Iterable[Path], code: Iterable[ModuleType] = ()) -> str:
    """SHA-256 (hex, 32 digits) of the files' names and bytes and of the source of the code packages: every `.py`
    file in the folder of each module given (so any change to the parser or models there makes a new key)."""
    digest = hashlib.sha256()
    for path in files:
        digest.update(Path(path).name.encode() + b"\0")
        digest.update(Path(path).read_bytes())
    for module in code:
        for source in sorted(Path(module.__file__ or "").parent.glob("*.py")):
            digest.update(source.name.encode() + b"\0" + source.read_bytes())
    return digest.hexdigest()[:32]


def cached_tables(
    kind: str, key: str, build: Callable[[], dict[str, pd.DataFrame]], root: Path | None = None
) -> dict[str, pd.DataFrame]:
    """The table set `kind`/`key` from the cache, or `build()` written there first; {name: DataFrame}."""
    import pandas as pd

    folder = (root or cache_root()) / kind / key
    if (folder / _DONE).is_file():
        try:
            return {p.stem: pd.read_parquet(p) for p in sorted(folder.glob("*.parquet"))}
        except (OSError, ValueError):  # a damaged entry: build it again below
            shutil.rmtree(folder, ignore_errors=True)
    tables = build()
    _store(folder, tables)
    return tables


def cached_object(kind: str, key: str, build: Callable[[], T], root: Path | None = None) -> T:
    """The object `kind`/`key` from the cache, or `build()` written there first, pickled.

    For what is an object graph rather than tables (a parsed ncu report: launches of ~300 metrics each). Like the
    parsed uploads (profiling.app.upload_parse) the folder holds pickles this server's own processes wrote, so it
    must be writable by the server's user alone. The key covers the input's bytes and the parser's code, so a
    pickle is only ever read back by the code that wrote it."""
    path = (root or cache_root()) / kind / f"{key}.pickle"
    try:
        return pickle.loads(path.read_bytes())
    except FileNotFoundError:
        pass
    except Exception:  # noqa: BLE001 - a damaged or cut-off entry: build it again below
        path.unlink(missing_ok=True)
    value = build()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        staging = path.with_suffix(f".{os.getpid()}.tmp")
        staging.write_bytes(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
        os.replace(staging, path)  # atomic: a reader never sees half of one
    except OSError:
        pass  # a read-only or full disk: the object still serves this process
    return value


def _store(folder: Path, tables: dict[str, pd.DataFrame]) -> None:
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    except OSError:
        return  # a read-only or full disk: the tables still serve this process
    try:
        for name, frame in tables.items():
            frame.to_parquet(staging / f"{name}.parquet", index=False)
        (staging / _DONE).write_text("")
        os.rename(staging, folder)
    except OSError:  # another process put the same set in place first (or the disk is full): theirs serves
        shutil.rmtree(staging, ignore_errors=True)
