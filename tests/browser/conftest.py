"""A real `streamlit run app.py` server and headless Chromium (Debian's chromium, Playwright's sync API)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("GEMMLENS_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int, env: dict[str, str], extra_args: Sequence[str] = ()) -> subprocess.Popen:
    """`streamlit run app.py` on localhost:port (headless), returned once /_stcore/health answers; `extra_args` are
    more Streamlit options (e.g. --secrets.files)."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            "app.py",
            "--server.headless",
            "true",
            "--server.port",
            str(port),
            "--server.address",
            "127.0.0.1",
            "--browser.gatherUsageStats",
            "false",
            *extra_args,
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited: {proc.stdout.read() if proc.stdout else ''}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
                if r.read().strip() == b"ok":
                    return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("streamlit did not answer /_stcore/health within 60 s")


def stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")
    if not (os.path.isfile(CHROMIUM) or shutil.which(CHROMIUM)):
        pytest.skip(f"chromium not found at {CHROMIUM} (apt-get install chromium)")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    env = dict(os.environ)
    env.update(GEMMLENS_GPU="off", GEMMLENS_DB_PATH=str(tmp_path_factory.mktemp("db") / "runs.sqlite"))
    env.pop("GEMMLENS_DB_URL", None)
    port = free_port()
    proc = start_server(port, env)
    yield f"http://127.0.0.1:{port}"
    stop_server(proc)


@pytest.fixture
def fresh_server(tmp_path: Path) -> Iterator[str]:
    """A server no browser has visited yet (Streamlit's first run on a server differs: see state.frame)."""
    env = dict(os.environ)
    env.update(GEMMLENS_GPU="off", GEMMLENS_DB_PATH=str(tmp_path / "runs.sqlite"))
    env.pop("GEMMLENS_DB_URL", None)
    port = free_port()
    proc = start_server(port, env)
    yield f"http://127.0.0.1:{port}"
    stop_server(proc)


@pytest.fixture(scope="session")
def server_control() -> SimpleNamespace:
    """free_port, start and stop, for a test that starts a server of its own (e.g. with sign-in configured)."""
    return SimpleNamespace(free_port=free_port, start=start_server, stop=stop_server)
