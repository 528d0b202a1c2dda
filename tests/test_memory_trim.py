"""The server hands freed memory back: malloc_trim is found on glibc and the trimming thread starts once."""

from __future__ import annotations

import platform
import threading

import pytest

from profiling.app import memory


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc only")
def test_malloc_trim_returns_memory_to_the_system() -> None:
    trim = memory.malloc_trim()
    assert trim is not None
    import psutil

    process = psutil.Process()
    blocks = [bytearray(64 * 1024) for _ in range(4000)]  # 256 MB in malloc'd blocks below the mmap threshold
    grown = process.memory_info().rss
    del blocks
    trim(0)
    assert process.memory_info().rss < grown - 128 * 2**20


def test_the_thread_starts_once() -> None:
    before = {t.name for t in threading.enumerate()}
    assert memory.start_trimming(3600) is (memory.malloc_trim() is not None)
    assert memory.start_trimming(3600) is (memory.malloc_trim() is not None)
    started = [t for t in threading.enumerate() if t.name == "gemmlens-malloc-trim" and t.name not in before]
    assert len(started) <= 1


def test_clear_shared_empties_tables_figures_and_uploads() -> None:
    from pathlib import Path

    from profiling.app import cache

    raw = Path(__file__).resolve().parent / "fixtures" / "ncu" / "raw.csv"
    cache.shared_uploads().parse("k", raw.name, raw.read_bytes(), lambda name, data: object())
    assert len(cache.shared_uploads()) == 1 and cache._CLEARABLE
    cache.clear_shared()
    assert len(cache.shared_uploads()) == 0


def test_outside_a_server_nobody_is_counted_and_nothing_is_cleared() -> None:
    assert memory.connected_sessions() is None


def test_the_collector_is_tuned_once_and_the_idle_clear_still_frees_what_was_frozen() -> None:
    """In a child process (the collector's settings are the process's): the objects alive at tune_collector are
    frozen, so a plain full collection leaves a cycle made of them, and collect_everything frees it and freezes the
    rest again."""
    import subprocess
    import sys

    script = """
import gc, weakref
from profiling.app import memory

class Node:
    pass

a, b = Node(), Node()
a.other, b.other = b, a
gone = weakref.ref(a)
assert memory.tune_collector() is True
assert memory.tune_collector() is False
print(gc.get_threshold()[0], gc.get_freeze_count() > 0)
del a, b
gc.collect()
print(gone() is not None)
memory.collect_everything()
print(gone() is None, gc.get_freeze_count() > 0)
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.split() == [str(memory.YOUNG_COLLECTION_THRESHOLD), "True", "True", "True", "True"]
