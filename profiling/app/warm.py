"""Imports the pages need beyond the frame, done once per server on a background thread after the first page is
drawn (app.py), so that the first visit of each later page does not pay for them."""

from __future__ import annotations

import importlib
import threading

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


@st.cache_resource(show_spinner=False)
def warm_imports() -> threading.Thread:
    """Once per server (called after the first page's script): import WARM_MODULES on a background thread.

    Python's import lock makes a page that needs one of them meanwhile wait for that import, never import it twice;
    a module that fails to import is left to the page that needs it, which reports the error as it always did.
    """

    def run() -> None:
        for name in WARM_MODULES:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001, S112 - the page importing it shows the real error
                continue

    thread = threading.Thread(target=run, name="gemmlens-warm-imports", daemon=True)
    thread.start()
    return thread
