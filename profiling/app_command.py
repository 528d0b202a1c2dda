"""`gemmlens app [streamlit run options]`: start the dashboard from a checkout or an installed copy.

Lives beside cli.py rather than in commands/ because it is a launcher: it hands the process over to
`streamlit run` and takes no part in the GPU work.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tomllib
from pathlib import Path

from profiling.errors import GemmLensError
from profiling.paths import APP_SCRIPT, STREAMLIT_CONFIG

HELP = "start the Streamlit dashboard; other options go to `streamlit run` (e.g. --server.port 8600)"
# cli.py hands the arguments it does not know to `run` as args.passthrough instead of refusing them.
PASSTHROUGH = True


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = f"Runs `streamlit run {APP_SCRIPT}` with the settings of {STREAMLIT_CONFIG}."


def config_flags(config_file: Path = STREAMLIT_CONFIG) -> list[str]:
    """The settings of .streamlit/config.toml as `streamlit run` flags.

    Streamlit reads .streamlit/ only from the working directory (and ~), which an installed copy started
    elsewhere does not have; as flags they apply wherever `gemmlens app` starts.
    """
    try:
        config = tomllib.loads(config_file.read_text())
    except OSError:
        return []
    except tomllib.TOMLDecodeError as exc:
        raise GemmLensError(f"{config_file} is not valid TOML: {exc}") from None
    flags = []
    for section, options in config.items():
        for name, value in options.items():
            text = str(value).lower() if isinstance(value, bool) else str(value)
            flags.append(f"--{section}.{name}={text}")
    return flags


SERVE_MODULE = "profiling.app.serve"
"""`streamlit run` with the dashboard's modules imported while the server starts (profiling/app/serve.py)."""


def streamlit_command(passthrough: list[str]) -> list[str]:
    """The `streamlit run` command line (through SERVE_MODULE); options given to `gemmlens app` come last, so they
    win."""
    return [sys.executable, "-m", SERVE_MODULE, "run", str(APP_SCRIPT), *config_flags(), *passthrough]


def history_check() -> list[str]:
    """At start, for a PostgreSQL store (GEMMLENS_DB_URL): the warnings of the app's database role, printed on
    stderr, where it could rewrite the audit log (profiling.runs.privileges). An SQLite file is left to the app,
    which creates it on first use; a store that cannot be opened is reported by the pages too."""
    url = os.environ.get("GEMMLENS_DB_URL", "").strip()
    if not url.startswith("postgresql"):
        return []
    from profiling.runs.store import RunStore

    try:
        with RunStore(url) as store:
            warnings = store.warnings
    except GemmLensError as exc:
        warnings = [str(exc)]
    for line in warnings:
        print(f"warning: {line}", file=sys.stderr)
    return warnings


def run(args: argparse.Namespace) -> int:
    if not APP_SCRIPT.is_file():
        raise GemmLensError(f"the dashboard is missing: no {APP_SCRIPT}; reinstall GEMM Lens")
    if importlib.util.find_spec("streamlit") is None:
        raise GemmLensError("streamlit is not installed; install GEMM Lens's requirements (pip install .)")
    history_check()
    command = streamlit_command(args.passthrough)
    sys.stdout.flush()
    sys.stderr.flush()
    # Replace this process, so Ctrl-C and kill reach Streamlit directly.
    os.execv(command[0], command)
    return 0  # not reached
