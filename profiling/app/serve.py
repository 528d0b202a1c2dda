"""`python -m profiling.app.serve run app.py [streamlit options]`: `streamlit run`, with the dashboard's modules
imported on a background thread while the server starts.

Streamlit runs app.py only when the first browser connects, so a fresh server's first visitor waited for the
frame's imports (pandas, plotly, the charts and tables modules: about a second on a quiet machine, more under
load) on top of the page's own work. Here they are imported as soon as the process starts, while Streamlit
starts its server and a browser loads the page's scripts, and app.py finds them loaded. The two threads share one
interpreter lock, so the server answers its health check later by part of what the imports cost: a server started
before its users arrive does not notice (docs/load-test.md, round 6, has both times).
Python's import lock makes the first script wait for a module still being imported, never import it twice; a
module that fails to import is left to the script, which shows the real error.
"""

from __future__ import annotations

import importlib
import threading

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
"""What app.py imports before any page runs, in the order it needs them. The other pages' modules are left to
warm.warm_imports, after the first page is drawn: imported here too, they held up the server's start (one
interpreter lock for both threads) more than they saved."""


def preload(modules: tuple[str, ...] = FRAME_MODULES) -> threading.Thread:
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
