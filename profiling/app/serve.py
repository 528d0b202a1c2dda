"""`python -m profiling.app.serve run app.py [streamlit options]`: `streamlit run`, with the frame's modules imported
before the server starts.

Streamlit runs app.py only when the first browser connects, so a fresh server's first visitor waited for the
frame's imports (pandas, plotly, the charts and tables modules: about a second on a quiet machine, more under
load) on top of the page's own work. Here they are imported first, and the server answers its health check that
much later: a server started before its users arrive does not notice, and its first visitor does not wait for them
(docs/load-test.md, round 6, has both times).

They are imported in the main thread, before Streamlit's: two threads importing pandas at once can deadlock on
Python's import locks, and Python breaks that by handing one thread the half-initialised module (a server of a
deployment died at start with "partially initialized module 'pandas' has no attribute 'Series'").
"""

from __future__ import annotations

import importlib

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
warm.warm_imports, after the first page is drawn."""


def preload(modules: tuple[str, ...] = FRAME_MODULES) -> None:
    """Import `modules`; one that fails to import is left to the script, which shows the real error."""
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001, S112 - app.py importing it shows the real error
            continue


def main() -> None:
    preload()
    from profiling.app import memory

    memory.tune_collector()  # the imports just made are long-lived: out of the full collections' way
    from streamlit.web import cli

    cli.main(prog_name="streamlit")  # as `python -m streamlit` calls it, with this process's arguments


if __name__ == "__main__":
    main()
