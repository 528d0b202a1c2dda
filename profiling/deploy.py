"""Several Streamlit processes behind nginx: the configuration and a runner (docs/deploy.md).

One Streamlit process runs page scripts on one core. To use more, run N processes of the same app, each on its own
port, behind nginx, which keeps each browser on one process (a Streamlit session lives in the process that holds
its websocket, and the file-upload PUTs of a session must reach that process too). Open-source nginx has no
`sticky` directive, so stickiness is a cookie nginx sets itself, naming the process that answered a browser's first
request; a browser without it is given the next process in turn, so that new browsers spread evenly. (A hash of a
random id per browser, this module's first rule, splits people unevenly: docs/load-test.md, round 17; `ip_hash`
would send everyone behind one NAT, or every client of a load test, to one process.) Each process has a group of
its own in which the others are backups, in ring order: a browser whose process is down is served by the next one,
and its cookie is re-set.

What the processes share: the run store (GEMMLENS_DB_URL, PostgreSQL: an SQLite file is one machine's and takes
one writer at a time), the cache folder (GEMMLENS_CACHE_DIR: the bundled data's derived tables and the parsed
uploads, profiling.app.precompute and profiling.app.upload_parse) and the cookie secret (STREAMLIT_SERVER_COOKIE_SECRET,
so an XSRF token or a sign-in cookie one process issued is valid in all of them).
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from profiling.app_command import streamlit_command
from profiling.errors import GemmLensError, last_line

ROUTE_COOKIE = "gemmlens_route"
COOKIE_SECRET_ENV = "STREAMLIT_SERVER_COOKIE_SECRET"
NGINX = "/usr/sbin/nginx"


def nginx_config(backends: list[str], listen: str, run_dir: Path, max_upload_mib: int = 200) -> str:
    """An nginx.conf (the whole file) that serves `listen` (host:port) from the Streamlit `backends` (host:port
    each), sticky per browser by the ROUTE_COOKIE; logs, pid and temporary files in `run_dir`."""
    pool = "\n".join(f"        server {b} max_fails=0;" for b in backends)
    # One group per process: that process first, the others as backups, so that a browser whose process is down
    # (restarting) is served by another, which its cookie then names. The backups follow in ring order from the
    # process on, so each process's browsers move to its own neighbour, not all of them to the first in the list.
    pinned = "\n".join(
        f"    upstream gemmlens_{i + 1} {{\n"
        + "\n".join(
            f"        server {o} max_fails=0{'' if o == b else ' backup'};" for o in backends[i:] + backends[:i]
        )
        + "\n    }"
        for i, b in enumerate(backends)
    )
    routes = "\n".join(f'        "{b}" gemmlens_{i};' for i, b in enumerate(backends, 1))
    return f"""# GEMM Lens behind nginx: {len(backends)} Streamlit process(es), sticky per browser (profiling/deploy.py).
worker_processes 1;
pid {run_dir}/nginx.pid;
error_log {run_dir}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {run_dir}/body;
    proxy_temp_path {run_dir}/proxy;
    fastcgi_temp_path {run_dir}/fastcgi;
    uwsgi_temp_path {run_dir}/uwsgi;
    scgi_temp_path {run_dir}/scgi;

    # A browser's {ROUTE_COOKIE} cookie names the process that served its first request. A browser without one
    # (or naming no process of this list) is given the next process in turn, so new browsers spread evenly.
    map $cookie_{ROUTE_COOKIE} $gemmlens_group {{
        default gemmlens;
{routes}
    }}
    # The process that answered: the last address tried (a refused one comes first, before a comma).
    map $upstream_addr $gemmlens_served_by {{
        "~(?<last>[^ ,]+)$" $last;
        default "";
    }}
    # The cookie is (re)set when it does not name the process that answered: a first request, or a browser
    # moved because its process was down.
    map "$cookie_{ROUTE_COOKIE}|$gemmlens_served_by" $gemmlens_set_route {{
        "~^(?<named>[^|]+)\\|(?P=named)$" "";
        "~\\|$" "";
        default "{ROUTE_COOKIE}=$gemmlens_served_by; Path=/; HttpOnly; SameSite=Lax";
    }}
    map $http_upgrade $connection_upgrade {{
        default upgrade;
        "" close;
    }}
    upstream gemmlens {{
{pool}
    }}
{pinned}
    server {{
        listen {listen};
        client_max_body_size {max_upload_mib}m;
        location / {{
            proxy_pass http://$gemmlens_group;
            proxy_http_version 1.1;
            proxy_set_header Host $host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;
            # Streamlit's websocket (/_stcore/stream): upgraded, and kept open while the page is.
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_read_timeout 1d;
            proxy_send_timeout 1d;
            # Uploads and pages stream through: no temporary files, no waiting for the whole body.
            proxy_request_buffering off;
            proxy_buffering off;
            add_header Set-Cookie $gemmlens_set_route;
        }}
    }}
}}
"""


def wait_healthy(url: str, proc: subprocess.Popen | None = None, timeout_s: float = 120) -> None:
    """Wait until `url`/_stcore/health answers ok; GemmLensError when `proc` exits or time runs out."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise GemmLensError(f"{proc.args[0]} exited with status {proc.returncode} while starting")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as answer:
                if answer.read().strip() == b"ok":
                    return
        except OSError:
            time.sleep(0.1)
    raise GemmLensError(f"{url} did not answer /_stcore/health within {timeout_s:.0f} s")


@dataclass
class Deployment:
    """N Streamlit processes of the dashboard and nginx in front of them, on this host (a context manager).

    `env` is given to every process: GEMMLENS_DB_URL (required for more than one process: one PostgreSQL store),
    GEMMLENS_CACHE_DIR and anything else. Ports: `port` for nginx, port+1 .. port+N for the processes.
    """

    processes: int
    port: int
    run_dir: Path
    env: dict[str, str] = field(default_factory=dict)
    streamlit_args: list[str] = field(default_factory=list)
    host: str = "127.0.0.1"
    nginx: str = NGINX
    procs: list[subprocess.Popen] = field(default_factory=list, init=False)
    proxy: subprocess.Popen | None = field(default=None, init=False)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def backends(self) -> list[str]:
        return [f"{self.host}:{self.port + i}" for i in range(1, self.processes + 1)]

    def __enter__(self) -> Deployment:
        if self.processes > 1 and not self.env.get("GEMMLENS_DB_URL", os.environ.get("GEMMLENS_DB_URL")):
            raise GemmLensError("several processes need one shared run store: set GEMMLENS_DB_URL (PostgreSQL)")
        if shutil.which(self.nginx) is None:
            raise GemmLensError(f"nginx is not installed ({self.nginx}); on Debian: apt-get install nginx-light")
        self.run_dir.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, **self.env}
        # One cookie secret for all (Streamlit takes it from the environment or its config file, not a flag).
        env.setdefault(COOKIE_SECRET_ENV, secrets.token_hex(32))
        try:
            for backend in self.backends:
                address, port = backend.rsplit(":", 1)
                flags = ["--server.port", port, "--server.address", address]
                with (self.run_dir / f"streamlit-{port}.log").open("ab") as log:
                    self.procs.append(
                        subprocess.Popen(
                            streamlit_command([*flags, *self.streamlit_args]),
                            env=env,
                            stdout=log,
                            stderr=subprocess.STDOUT,
                            start_new_session=True,
                        )
                    )
            conf = self.run_dir / "nginx.conf"
            conf.write_text(nginx_config(self.backends, f"{self.host}:{self.port}", self.run_dir))
            self.proxy = subprocess.Popen(
                [
                    self.nginx,
                    "-p",
                    str(self.run_dir),
                    "-e",
                    str(self.run_dir / "error.log"),
                    "-c",
                    str(conf),
                    "-g",
                    "daemon off;" + _user_directive(),
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
            for backend, proc in zip(self.backends, self.procs, strict=True):
                try:
                    wait_healthy(f"http://{backend}", proc)
                except GemmLensError as exc:
                    log = self.run_dir / f"streamlit-{backend.rsplit(':', 1)[1]}.log"
                    raise GemmLensError(f"{exc}: {last_line(log.read_text(errors='replace'))}") from None
            wait_healthy(self.url, self.proxy, timeout_s=30)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        for proc in [p for p in (self.proxy, *self.procs) if p is not None]:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM if proc is not self.proxy else signal.SIGQUIT)
        for proc in [p for p in (self.proxy, *self.procs) if p is not None]:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.procs, self.proxy = [], None


def _user_directive() -> str:
    """nginx's workers drop to `nobody` when started as root; here they keep this user, who owns run_dir."""
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        return " user root;"
    return ""


def main(argv: list[str] | None = None) -> int:
    """`python -m profiling.deploy N [PORT]`: N processes behind nginx on PORT (default 8500) until Ctrl-C."""
    args = sys.argv[1:] if argv is None else argv
    processes, port = int(args[0]) if args else 2, int(args[1]) if len(args) > 1 else 8500
    run_dir = Path(os.environ.get("GEMMLENS_RUN_DIR", f"/tmp/gemmlens-{port}"))
    with Deployment(processes, port, run_dir) as deployment:
        print(
            f"GEMM Lens: {processes} process(es) behind nginx at {deployment.url} (ports {port + 1}..{port + processes})"
        )
        try:
            while all(p.poll() is None for p in deployment.procs):
                time.sleep(1)
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
