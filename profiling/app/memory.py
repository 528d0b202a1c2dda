"""Hand freed memory back to the operating system while the server runs.

glibc keeps memory that Python and pandas free (a parsed upload's temporaries, a closed session's file bytes) in
its heap for reuse, so the server's RSS stays at its peak long after everyone has left: 633 MB against 285 MB idle,
three minutes after five people uploaded a 20 MB report (scripts/load_test.py, 2026-11-24). `malloc_trim(0)`
returns the free pages; one daemon thread per server calls it every TRIM_INTERVAL_S seconds. Elsewhere than glibc
it is a no-op.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
import time
from collections.abc import Callable

TRIM_INTERVAL_S = 20.0
_started = threading.Event()


def malloc_trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim, or None where there is no glibc (macOS, musl, Windows)."""
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


def start_trimming(interval_s: float = TRIM_INTERVAL_S) -> bool:
    """Start the server's trimming thread once (later calls do nothing); False where there is no malloc_trim."""
    trim = malloc_trim()
    if trim is None or _started.is_set():
        return trim is not None
    _started.set()

    def loop() -> None:
        while True:
            time.sleep(interval_s)
            trim(0)

    threading.Thread(target=loop, name="gemmlens-malloc-trim", daemon=True).start()
    return True
