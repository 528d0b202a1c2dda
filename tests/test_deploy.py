"""Several Streamlit processes behind nginx (profiling/deploy.py, docs/deploy.md): the configuration nginx accepts,
how it routes browsers (in turn when new, then sticky, moved when their process is down), and a real deployment of 2 processes on one PostgreSQL store and one cache folder, driven by clients that speak
Streamlit's protocol (scripts/load_test.py): every session's websocket and uploads stay on one process, both
processes serve people, and an upload parsed by one process is read back by the other, not parsed again."""

from __future__ import annotations

import asyncio
import concurrent.futures
import http.server
import os
import shutil
import sys
import time
from pathlib import Path

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
    assert "proxy_pass http://$gemmlens_group;" in text
    assert text.count("server 127.0.0.1:18501 max_fails=0;") == 2  # the pool's and its own group's first
    assert text.count("server 127.0.0.1:18501 max_fails=0 backup;") == 1  # the other process's backup
    three = nginx_config(["127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"], "127.0.0.1:18500", tmp_path)
    group_2 = three[three.index("upstream gemmlens_2 {") : three.index("upstream gemmlens_3 {")]
    # Process 2 first, then its neighbours in ring order: its browsers move to process 3 when it is down.
    assert [line.split()[1] for line in group_2.splitlines()[1:4]] == ["127.0.0.1:2", "127.0.0.1:3", "127.0.0.1:1"]
    assert "127.0.0.1:3 max_fails=0 backup;" in group_2 and "127.0.0.1:2 max_fails=0;" in group_2
    assert f"$cookie_{ROUTE_COOKIE}" in text and "proxy_set_header Upgrade $http_upgrade;" in text
    (tmp_path / "nginx.conf").write_text(text)
    done = subprocess.run(
        [NGINX, "-t", "-p", str(tmp_path), "-e", str(tmp_path / "error.log"), "-c", str(tmp_path / "nginx.conf")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


@needs_nginx
def test_nginx_spreads_new_browsers_in_turn_keeps_each_on_its_process_and_moves_it_when_that_one_is_down(
    tmp_path: Path,
) -> None:
    import subprocess
    import threading
    import urllib.request
    from http.cookiejar import CookieJar

    sys.path.insert(0, str(ROOT / "scripts"))
    from load_test import NamesItsPort, free_port

    ports = [free_port() for _ in range(3)]
    backends = [f"127.0.0.1:{p}" for p in ports[1:]]
    servers = [http.server.ThreadingHTTPServer(("127.0.0.1", p), NamesItsPort) for p in ports[1:]]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    (tmp_path / "nginx.conf").write_text(nginx_config(backends, f"127.0.0.1:{ports[0]}", tmp_path))
    proxy = subprocess.Popen(
        [NGINX, "-p", str(tmp_path), "-e", str(tmp_path / "error.log"), "-c", str(tmp_path / "nginx.conf")]
        + ["-g", "daemon off;"],
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{ports[0]}"
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(url, timeout=1).read()
                break
            except OSError:
                time.sleep(0.05)
        jars = [CookieJar() for _ in range(6)]
        browsers = [urllib.request.build_opener(urllib.request.HTTPCookieProcessor(j)) for j in jars]
        first = [b.open(url + "/").read().decode() for b in browsers]
        # In turn, not by a hash of a random id: six new browsers split three and three.
        assert first == first[:2] * 3 and set(first) == {str(p) for p in ports[1:]}
        assert [[c.value for c in j if c.name == ROUTE_COOKIE] for j in jars] == [[f"127.0.0.1:{p}"] for p in first]
        assert [b.open(url + "/again").read().decode() for b in browsers] == first  # each stays
        forged = urllib.request.Request(url, headers={"Cookie": f"{ROUTE_COOKIE}=10.0.0.1:80"})
        with urllib.request.urlopen(forged) as answer:  # a cookie naming no process of the list: given one in turn
            assert answer.read().decode() in map(str, ports[1:])
            assert answer.headers["Set-Cookie"].startswith(f"{ROUTE_COOKIE}=127.0.0.1:")
        servers[0].shutdown()
        servers[0].server_close()
        assert {b.open(url + "/moved").read().decode() for b in browsers} == {str(ports[2])}
        assert [[c.value for c in j if c.name == ROUTE_COOKIE] for j in jars] == [[backends[1]]] * 6
        with browsers[0].open(url + "/settled") as answer:
            assert answer.headers["Set-Cookie"] is None  # the cookie names the process that answered: not set again
    finally:
        proxy.terminate()
        proxy.wait(timeout=10)
        for server in servers[1:]:
            server.shutdown()
            server.server_close()


def test_several_processes_refuse_to_start_without_a_shared_store(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("GEMMLENS_DB_URL", raising=False)
    with pytest.raises(GemmLensError, match="GEMMLENS_DB_URL"):
        Deployment(2, 18500, tmp_path).__enter__()


@needs_nginx
@pytest.mark.skipif(
    not PG_URL, reason='GEMMLENS_TEST_PG_URL is not set (start a server with `eval "$(.ci/postgres.sh)"`)'
)
def test_two_processes_behind_nginx_keep_sessions_and_share_parsed_uploads(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    from load_test import Person, established_connections, free_port

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
                established_connections(p.pid, int(b.rsplit(":", 1)[1]))
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


def test_a_deployment_s_ports_are_free_and_below_the_ephemeral_range() -> None:
    import socket

    sys.path.insert(0, str(ROOT / "scripts"))
    from load_test import free_port_run

    first = free_port_run(3)
    assert 20000 <= first and first + 3 <= 32000  # Linux hands out outgoing ports from 32768
    for port in range(first, first + 3):
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))  # free: binds
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        taken = held.getsockname()[1]
        held.listen()
        with pytest.raises(RuntimeError, match="no 1 free consecutive ports"):
            free_port_run(1, low=taken, high=taken + 2)  # the only candidate is taken
