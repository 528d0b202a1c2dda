"""`python -m profiling.app.serve run app.py [streamlit options]`: `streamlit run`, with the dashboard's modules
imported on a background thread while the server starts.

Streamlit runs app.py only when the first browser connects, so a fresh server's first visitor waited for the
frame's imports (pandas, plotly, the charts and tables modules, SQLAlchemy and the run store's schema: about a
second on a quiet machine, several under load) on top of the page's own work. Here they are imported as soon as
the process starts, during the second Streamlit takes to answer its health check, and app.py finds them loaded.
Python's import lock makes the first script wait for a module still being imported, never import it twice; a
module that fails to import is left to the script, which shows the real error.
"""

from __future__ import annotations

import importlib
import threading

from profiling.app.warm import WARM_MODULES

FRAME_MODULES = (
    "pandas",
    "plotly.graph_objects",
    "profiling.app.cache",
    "profiling.app.ui",
    "profiling.app.auth",
    "profiling.app.permalink",
    "profiling.app.state",
    "profiling.app.memory",
)
"""What app.py imports before any page runs, in the order it needs them; WARM_MODULES (the pages') follow."""


def preload(modules: tuple[str, ...] = (*FRAME_MODULES, *WARM_MODULES)) -> threading.Thread:
    """Import `modules` on a daemon thread; returns the started thread."""

    def run() -> None:
        for name in modules:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001, S112 - the script importing it shows the real error
                continue

    thread = threading.Thread(target=run, name="gemmlens-preload", daemon=True)
    thread.start()
    return thread


def main() -> None:
    preload()
    from streamlit.web import cli

    cli.main(prog_name="streamlit")  # as `python -m streamlit` calls it, with this process's arguments


if __name__ == "__main__":
    main()
