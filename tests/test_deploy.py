"""Several Streamlit processes behind nginx (profiling/deploy.py, docs/deploy.md): the configuration nginx accepts,
and a real deployment of 2 processes on one PostgreSQL store and one cache folder, driven by clients that speak
Streamlit's protocol (scripts/load_test.py): every session's websocket and uploads stay on one process, both
processes serve people, and an upload parsed by one process is read back by the other, not parsed again."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import shutil
import sys
from pathlib import Path

import psutil
import pytest

from profiling.deploy import NGINX, ROUTE_COOKIE, Deployment, nginx_config
from profiling.errors import GemmLensError

ROOT = Path(__file__).resolve().parent.parent
RAW = ROOT / "tests" / "fixtures" / "ncu" / "raw.csv"
PG_URL = os.environ.get("GEMMLENS_TEST_PG_URL", "").strip()
needs_nginx = pytest.mark.skipif(shutil.which(NGINX) is None, reason=f"nginx is not installed ({NGINX})")


@needs_nginx
def test_nginx_accepts_the_configuration(tmp_path: Path) -> None:
    import subprocess

    text = nginx_config(["127.0.0.1:18501", "127.0.0.1:18502"], "127.0.0.1:18500", tmp_path)
    assert "hash $gemmlens_route consistent;" in text and text.count("server 127.0.0.1:185") == 2
    assert f"$cookie_{ROUTE_COOKIE}" in text and "proxy_set_header Upgrade $http_upgrade;" in text
    (tmp_path / "nginx.conf").write_text(text)
    done = subprocess.run(
        [NGINX, "-t", "-p", str(tmp_path), "-e", str(tmp_path / "error.log"), "-c", str(tmp_path / "nginx.conf")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_several_processes_refuse_to_start_without_a_shared_store(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("GEMMLENS_DB_URL", raising=False)
    with pytest.raises(GemmLensError, match="GEMMLENS_DB_URL"):
        Deployment(2, 18500, tmp_path).__enter__()


def _established(pid: int, port: int) -> int:
    """Open TCP connections to `port` that process `pid` accepted (nginx's, one per websocket or request)."""
    conns = psutil.Process(pid).net_connections(kind="tcp")
    return sum(1 for c in conns if c.status == psutil.CONN_ESTABLISHED and c.laddr and c.laddr.port == port)


@needs_nginx
@pytest.mark.skipif(
    not PG_URL, reason='GEMMLENS_TEST_PG_URL is not set (start a server with `eval "$(.ci/postgres.sh)"`)'
)
def test_two_processes_behind_nginx_keep_sessions_and_share_parsed_uploads(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    from load_test import Person, free_port

    cache = tmp_path / "cache"
    env = {"GEMMLENS_GPU": "off", "GEMMLENS_DB_URL": PG_URL, "GEMMLENS_CACHE_DIR": str(cache)}
    port = free_port()
    data = RAW.read_bytes()

    async def scenario(deployment: Deployment) -> None:
        people = [Person(deployment.url) for _ in range(12)]
        for person in people:
            await person.__aenter__()
        try:
            for person in people:
                assert ROUTE_COOKIE in person.http.cookies  # nginx gave each browser its route
                await person.visit()
            # Every session's websocket is on one process, and both processes have some.
            per_process = [
                _established(p.pid, int(b.rsplit(":", 1)[1]))
                for p, b in zip(deployment.procs, deployment.backends, strict=True)
            ]
            assert sum(per_process) >= len(people) and all(n > 0 for n in per_process), per_process
            # An upload reaches the session's own process (another process refuses an unknown session's file).
            first, second = (
                people[0],
                next(p for p in people[1:] if p.http.cookies[ROUTE_COOKIE] != people[0].http.cookies[ROUTE_COOKIE]),
            )
            await first.visit("Reports")
            await first.upload("raw.csv", data)
            kept = list((cache / "uploads").glob("*.pickle"))
            assert len(kept) == 1
            parsed_once = kept[0].stat().st_ino
            for person in people[1:]:  # the others, on either process, get the same file's report
                await person.visit("Reports")
                await person.upload("raw.csv", data)
            assert [p.stat().st_ino for p in (cache / "uploads").glob("*.pickle")] == [parsed_once]
            assert all(not p.errors for p in people), [p.errors for p in people if p.errors]
            assert second.uploader_id
        finally:
            for person in people:
                await person.__aexit__()

    with Deployment(2, port, tmp_path / "run", env=env) as deployment:
        # In its own thread: a browser test earlier in the session can leave an event loop running in this one.
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            pool.submit(asyncio.run, scenario(deployment)).result()
