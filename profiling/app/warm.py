"""Imports the pages need beyond the frame, done once per server on a background thread after the first page is
drawn (app.py), so that the first visit of each later page does not pay for them.

They are imported only while no page script runs, one module at a time, and a page that starts meanwhile waits for
that one module: two threads importing at once can break each other. Python's import locks are per module, and a
thread importing `pkg.sub` does not wait for a `pkg` that another thread is still initialising. So a page importing
`sqlalchemy.orm` while this thread is inside `sqlalchemy/__init__` (which imports SQLAlchemy's submodules) can make
each thread wait for a module the other holds. Python breaks that cycle by handing one of them the half-built
module ("partially initialized module ... has no attribute ...": see profiling.app.serve).
"""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import streamlit as st

# What the pages import beyond the frame, in the order a tour meets them: imported in the background once the first
# page is drawn, so the first visit of each later page does not pay for it (the run store's SQLAlchemy and schema,
# the Why and Indexing pages' models and parsers: about a second each on a busy machine).
WARM_MODULES = (
    "profiling.abtest",
    "profiling.app.sweep",
    "profiling.runs.convert",
    "profiling.app.why_view",
    "profiling.app.indexing",
    "profiling.app.details_view",
    "profiling.runs.store",
    "profiling.app.store_cache",
    "profiling.app.review_view",
    "profiling.app.admin",
    "profiling.app.device_view",
)


class ImportGate:
    """Page runs share it; the warm-up thread takes it alone, for one module's import at a time. A page waits at
    most for the module being imported, then runs before the next one; the warm-up thread waits until no page runs
    (under steady traffic it may never get a turn, and the pages then import what they need themselves, as
    without it)."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._pages = 0
        self._waiting = 0
        self._importing = False

    @contextmanager
    def page(self) -> Iterator[None]:
        """Around a page's run (app.py): waits for a warm-up import in progress, and holds the next off until the
        page's script has finished, stopped or rerun."""
        with self._changed:
            self._waiting += 1
            self._changed.wait_for(lambda: not self._importing)
            self._waiting -= 1
            self._pages += 1
        try:
            yield
        finally:
            with self._changed:
                self._pages -= 1
                self._changed.notify_all()

    @contextmanager
    def alone(self) -> Iterator[None]:
        """Around one warm-up import: waits until no page runs or waits to run (a page that waited for the last
        import goes first), and holds new page runs off until it is done."""
        with self._changed:
            self._changed.wait_for(lambda: self._pages == 0 and self._waiting == 0)
            self._importing = True
        try:
            yield
        finally:
            with self._changed:
                self._importing = False
                self._changed.notify_all()

    def pages_running(self) -> int:
        """How many page scripts are running now."""
        with self._changed:
            return self._pages


GATE = ImportGate()
"""The server's gate between page runs (app.py) and the warm-up imports."""


def import_between_pages(modules: Sequence[str], gate: ImportGate = GATE) -> None:
    """Import `modules` in turn, each while no page runs (`gate`); one already imported costs nothing, and one
    that fails to import is left to the page that needs it, which reports the error as it always did."""
    for name in modules:
        if name in sys.modules:
            continue
        with gate.alone():
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001, S112 - the page importing it shows the real error
                continue


@st.cache_resource(show_spinner=False)
def warm_imports() -> threading.Thread:
    """Once per server (called after the first page's script): import WARM_MODULES on a background thread, between
    page runs (import_between_pages)."""
    thread = threading.Thread(
        target=import_between_pages, args=(WARM_MODULES,), name="gemmlens-warm-imports", daemon=True
    )
    thread.start()
    return thread
