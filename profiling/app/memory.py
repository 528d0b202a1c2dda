"""Give memory back once people have left.

Three minutes after five people uploaded a 20 MB report and left, the server still held 596 MB against 285 MB
idle (scripts/load_test.py, 2026-11-24): the shared caches kept the upload's parsed report and every table and
figure drawn from it (their TTL is 30 minutes), and glibc kept the freed heap. One daemon thread per server, every
TRIM_INTERVAL_S seconds: once no session has been connected for IDLE_CLEAR_S, it empties the shared caches (the
next visitor rebuilds what they look at; the GPU queue and the run store are untouched), then `malloc_trim(0)`
hands the free pages back to the system (glibc only; elsewhere a no-op).

It also sets how Python's cyclic collector runs in the server (tune_collector): its full collections walked every
module's objects, a pause of about 80 ms in the page running at the time (docs/load-test.md, round 10).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
import threading
import time
from collections.abc import Callable

TRIM_INTERVAL_S = 20.0
IDLE_CLEAR_S = 60.0
_started = threading.Event()
_collector_tuned = threading.Event()

YOUNG_COLLECTION_THRESHOLD = 10_000
"""Allocations between two collections of Python's youngest generation (Python's default: 700). A visit allocates
hundreds of thousands of short-lived objects (protobuf messages, plotly and Arrow buffers), nearly all freed by
reference counting: at 700 the collector ran about 4 times a visit and promoted what was still alive at that
moment, which set off a full collection every 40 or so visits."""


def tune_collector() -> bool:
    """Once per process (later calls do nothing; False then): freeze what is alive now and collect young objects
    less often.

    A full collection walks every tracked object the process holds; the modules a server imports (pandas, plotly,
    SQLAlchemy, Streamlit: hundreds of thousands of objects, none of them garbage) made each one an 80 ms pause in
    whatever page was running. `gc.freeze` moves them out of the collector's sight: called after the imports and
    before any cache is filled, and undone on each idle clear (start_trimming), so nothing stays frozen that a
    later collection should free."""
    if _collector_tuned.is_set():
        return False
    _collector_tuned.set()
    gc.collect()
    gc.freeze()
    _young, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, middle, old)
    return True


def collect_everything() -> None:
    """A full collection that reaches frozen objects too, then what survives frozen again (tune_collector):
    for the idle clear, when the shared caches have just been emptied and no page runs."""
    frozen = gc.get_freeze_count() > 0
    if frozen:
        gc.unfreeze()
    gc.collect()
    if frozen:
        gc.freeze()


def connected_sessions() -> int | None:
    """Browser sessions connected to this Streamlit server now; None outside a running server."""
    try:
        from streamlit import runtime

        if not runtime.exists():
            return None
        return len(runtime.get_instance()._session_mgr.list_active_sessions())  # noqa: SLF001 - no public count
    except Exception:  # noqa: BLE001 - an internal that moved: never clear on a guess
        return None


@functools.cache
def malloc_trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim, or None where there is no glibc (macOS, musl, Windows). Looked up once per process:
    find_library runs `ldconfig -p` in a child process, and app.py calls start_trimming on every page run."""
    name = ctypes.util.find_library("c")
    if not name:
        return None
    try:
        libc = ctypes.CDLL(name)
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


def start_trimming(
    interval_s: float = TRIM_INTERVAL_S, on_idle: Callable[[], None] | None = None, idle_s: float = IDLE_CLEAR_S
) -> bool:
    """Start the server's memory thread once (later calls do nothing): `on_idle` runs once per idle spell of
    `idle_s` with nobody connected, then free heap is trimmed. False where there is no malloc_trim."""
    trim = malloc_trim()
    if _started.is_set():
        return trim is not None
    _started.set()

    def loop() -> None:
        idle_since: float | None = None
        cleared = False
        while True:
            time.sleep(interval_s)
            people = connected_sessions()
            if people == 0:
                idle_since = idle_since or time.monotonic()
                if on_idle is not None and not cleared and time.monotonic() - idle_since >= idle_s:
                    on_idle()
                    collect_everything()
                    cleared = True
            else:
                idle_since, cleared = None, False
            if trim is not None:
                trim(0)

    threading.Thread(target=loop, name="gemmlens-malloc-trim", daemon=True).start()
    return trim is not None
