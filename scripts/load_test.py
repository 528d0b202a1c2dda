"""Load test (not a unit test): many people at once on one `streamlit run app.py` server.

Each person is a websocket client of Streamlit's own protocol (/_stcore/stream, binary BackMsg/ForwardMsg protobufs
from streamlit.proto, as the browser speaks it), so a visit is timed on the server's side of the wire: from sending
the `rerun_script` BackMsg of a page to the ForwardMsg `script_finished` of that run. Browser rendering is left
out. Widgets keep their defaults (no widget state is sent, except the file uploader's in the upload scenario).

Scenarios (all against one fresh server unless --url is given; its run store is a temporary SQLite file seeded
with the bundled benchmark runs, so the Review page compares runs and builds its exports as it does in use):

- tour: N people at once, each touring every page `--tours` times back to back (no think time, the worst case);
  p50/p95/max visit time, errors, and the server's peak RSS (psutil, server process and its children).
- upload: `--uploaders` people upload the same raw CSV of `--upload-mb` MB (built from the real capture
  tests/fixtures/ncu/raw.csv: its header and units rows, its launch rows repeated with new IDs, as
  scripts/bench_parse.py does) through the file uploader's own route, while `--bystanders` people tour the
  bundled pages; the upload visit (rerun with the file until the page is drawn), the bystanders' visits, the peak
  RSS, and the RSS held while the uploaders stay connected.
- leave: after everyone disconnects, the RSS every 10 s for `--watch` seconds, against the idle RSS measured
  after one warm-up tour (bundled data cached, no one connected).
- messages (`--messages`): what a later visit of each page sends, counted by kind with their bytes (one person,
  each page visited twice): Streamlit's work per visit grows with the number of messages.
- explain (`--explain N`): the Why page opened at Explain a step (its link, `?tab=explain-a-step`), first by one
  person on the freshly warmed server (the step is built then), then by N people at once, `--explain-visits` times
  each back to back.
- first visits (`--first-visits N`): N fresh servers of GEMM Lens and of the minimal app in turn (and of another
  checkout with `--before DIR`, for a before/after in one run); one person visits every page once, then again.
  Each page's first visit (seconds, and the server's CPU seconds during it) is printed against the minimal app's
  cold first visit (its first page) and against the minimal app's first visit of the same page.
- pooled (`--pooled R`): R runs of each `--people` tour against GEMM Lens and the minimal app in turn (and the
  tree of `--before DIR`), on the same servers, every visit kept; each run's p95 and p50 ratio, and the p95 and
  p50 of all runs' visits pooled over the minimal app's, with a 95 % bootstrap interval (scripts/load_stats.py):
  one run's p95 ratio swings with the minimal app's own p95 more than a change of a few percent.
- processes (`--processes 1 2`): GEMM Lens behind nginx (profiling/deploy.py) with 1 and 2 processes on one
  PostgreSQL store, `--process-rounds` rounds in turn, a fresh deployment each time. One process is toured by the
  first of `--process-people`, more processes by each of them; every run prints how many people each process
  held. Per round, the throughput of N processes over one process's with as many people, and at one process's
  p95 (read between the people levels whose p95s bracket it); the medians over rounds with a bootstrap interval.

    python scripts/load_test.py                        # 1, 10 and 20 people, upload, then 3 minutes of leave
    python scripts/load_test.py --people 20 --no-upload --watch 0
    python scripts/load_test.py --url http://host:8501 --people 5 --no-upload --watch 0
    python scripts/load_test.py --people --no-upload --watch 0 --first-visits 3 --before ../gemmlens-before
    python scripts/load_test.py --people 20 --no-upload --watch 0 --first-visits 0 --pooled 10 --before /tmp/b
    python scripts/load_test.py --people --no-upload --watch 0 --first-visits 0 --no-reference \
        --processes 1 2 --process-people 40 56 72 --process-rounds 6 --process-tours 3

Prints one JSON line per scenario and a Markdown table at the end; the load average is printed beside each result
(this machine's CPUs are shared).
"""

from __future__ import annotations

import argparse
import asyncio
import http.server
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import connect

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bench_parse import write_big_csv  # noqa: E402
from load_stats import median_ratio_over_rounds, nearest_rank, pooled_ratio, rate_at_p95  # noqa: E402

from profiling.app.bundles import bundled_runs, discover_bundles  # noqa: E402
from profiling.runs.store import RunStore  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "ncu" / "raw.csv"
FINISHED = {ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_WITH_COMPILE_ERROR}


# ---------------------------------------------------------------------------------------------
# The server and its memory
# ---------------------------------------------------------------------------------------------


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def free_port_run(count: int, low: int = 20000, high: int = 32000) -> int:
    """The first of `count` consecutive ports on 127.0.0.1 that all bind now, below Linux's ephemeral range
    (32768 and up): a deployment's ports chosen there can be taken, between the check and the server's start, by
    the outgoing side of one of the thousands of connections a tour makes (a run died on "Port 33936 is not
    available")."""
    import random
    import socket

    for _ in range(200):
        first = random.randrange(low, high - count)
        try:
            for port in range(first, first + count):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", port))
        except OSError:
            continue
        return first
    raise RuntimeError(f"no {count} free consecutive ports between {low} and {high}")


APPS = {"gemmlens": "app.py", "minimal": "scripts/minimal_app.py"}
"""The app under test and the in-run reference: a minimal Streamlit app with the same page titles (a title, a
20-row dataframe, a 100-point plotly line and an uploader per page), the floor any Streamlit app pays here."""


def seed_store(db_path: Path) -> None:
    """A run store holding every bundled benchmark run, so the Review page compares runs as it does in use."""
    store = RunStore(f"sqlite:///{db_path}")
    for bundle in discover_bundles():
        store.import_runs(bundled_runs(bundle))
    store.close()


def start_server(
    port: int,
    db_path: Path,
    extra_args: list[str],
    app: str = "gemmlens",
    env_extra: dict[str, str] | None = None,
    root: Path = ROOT,
    tuned_minimal: bool = False,
) -> subprocess.Popen:
    """`streamlit run APP` headless, GPU work off, on a seeded run store (db_path, seeded once by the caller or
    here when it does not exist), from the tree `root` (another checkout: its own code, for a before/after);
    returns once healthy, with the seconds from launch to health as `started_s`."""
    if not db_path.exists():
        seed_store(db_path)
    env = {**os.environ, "GEMMLENS_GPU": "off", "GEMMLENS_DB_PATH": str(db_path), **(env_extra or {})}
    if not (env_extra or {}).get("GEMMLENS_DB_URL"):
        env.pop("GEMMLENS_DB_URL", None)
    # GEMM Lens starts as `gemmlens app` and the deployment start it (profiling.app.serve) where the tree has that.
    # `tuned_minimal`: the minimal app started the same way, so that both servers run with GEMM Lens's collector
    # tuning and the comparison is of the pages alone.
    serve = (
        "profiling.app.serve"
        if (app != "minimal" or tuned_minimal) and (root / "profiling" / "app" / "serve.py").is_file()
        else "streamlit"
    )
    cmd = [
        sys.executable,
        "-m",
        serve,
        "run",
        APPS.get(app, APPS["gemmlens"]),
        "--server.headless",
        "true",
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        *extra_args,
    ]
    launched = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"streamlit exited: {proc.stderr.read().decode()[-2000:]}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/_stcore/health", timeout=1).text.strip() == "ok":
                proc.started_s = time.perf_counter() - launched  # type: ignore[attr-defined]
                return proc
        except httpx.HTTPError:
            time.sleep(0.05)
    raise SystemExit("streamlit did not start in 120 s")


def stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class MemorySampler:
    """RSS of a process and its children, sampled every `period_s` in a thread; keeps the peak."""

    def __init__(self, pid: int | None, period_s: float = 0.25, more_pids: tuple[int, ...] = ()) -> None:
        self.proc = psutil.Process(pid) if pid else None
        self.more = [psutil.Process(p) for p in more_pids]  # the other server processes of a deployment
        self.period_s, self.peak, self._stop = period_s, 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def rss(self) -> int:
        if self.proc is None:
            return 0
        total = 0
        for p in [q for top in (self.proc, *self.more) for q in (top, *top.children(recursive=True))]:
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass
        return total

    def cpu_s(self) -> float:
        """CPU seconds (user + system) the server has used so far: per visit, a cost the other load on a shared
        machine does not inflate as much as the wall time."""
        if self.proc is None:
            return 0.0
        return sum(t.user + t.system for t in (p.cpu_times() for p in (self.proc, *self.more)))

    def reset_peak(self) -> None:
        self.peak = self.rss()

    def _run(self) -> None:
        while not self._stop.wait(self.period_s):
            self.peak = max(self.peak, self.rss())

    def stop(self) -> None:
        self._stop.set()


# ---------------------------------------------------------------------------------------------
# One person: a websocket session speaking Streamlit's protocol
# ---------------------------------------------------------------------------------------------


@dataclass
class Person:
    base: str  # http://host:port
    pages: dict[str, str] = field(default_factory=dict)  # page name -> page_script_hash
    session_id: str = ""
    uploader_id: str = ""
    errors: list[str] = field(default_factory=list)
    sent: list[tuple[str, int]] | None = None  # when a list: (kind, bytes) of every ForwardMsg received

    async def __aenter__(self) -> Person:
        self.http = httpx.AsyncClient(base_url=self.base, timeout=120)
        await self.http.get("/_stcore/health")  # sets the XSRF cookie, as the page load does in a browser
        # The browser sends its cookies with the websocket: behind nginx (profiling/deploy.py) the route cookie
        # keeps the session's websocket and uploads on the process that served its page.
        cookies = "; ".join(f"{name}={value}" for name, value in self.http.cookies.items())
        self.ws = await connect(
            self.base.replace("http", "ws", 1) + "/_stcore/stream",
            subprotocols=["streamlit"],
            max_size=None,
            open_timeout=60,
            ping_interval=None,
            additional_headers={"Cookie": cookies} if cookies else None,
        )
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.ws.close()
        await self.http.aclose()

    async def visit(self, page: str = "", widget_states: list[Any] | None = None, query: str = "") -> float:
        """Run `page` (its name; "" = the default page) with the URL's `query` string, and wait for its script to
        finish; returns seconds."""
        msg = BackMsg()
        msg.rerun_script.query_string = query
        msg.rerun_script.page_script_hash = self.pages.get(page, "")
        if widget_states:
            msg.rerun_script.widget_states.widgets.extend(widget_states)
        start = time.perf_counter()
        await self.ws.send(msg.SerializeToString())
        while True:
            fwd = await self._receive()
            if fwd.WhichOneof("type") == "script_finished" and fwd.script_finished in FINISHED:
                return time.perf_counter() - start

    async def _receive(self) -> ForwardMsg:
        fwd = ForwardMsg()
        fwd.ParseFromString(raw := await asyncio.wait_for(self.ws.recv(), timeout=300))
        kind = fwd.WhichOneof("type")
        if self.sent is not None:
            self.sent.append((message_kind(fwd), len(raw)))
        if kind == "new_session":
            self.session_id = fwd.new_session.initialize.session_id or self.session_id
        elif kind == "navigation":
            self.pages = {p.page_name: p.page_script_hash for p in fwd.navigation.app_pages}
        elif kind == "delta" and fwd.delta.WhichOneof("type") == "new_element":
            element = fwd.delta.new_element
            which = element.WhichOneof("type")
            if which == "exception":
                self.errors.append(f"{element.exception.type}: {element.exception.message}")
            elif which == "alert" and element.alert.format == 1:  # ERROR
                self.errors.append(element.alert.body[:200])
            elif which == "file_uploader":
                self.uploader_id = element.file_uploader.id
        return fwd

    async def upload(self, name: str, data: bytes) -> float:
        """Upload `data` through the uploader's own route (file URL request, multipart PUT), then rerun the
        current page with it in the uploader; returns the seconds of that rerun (the parse and the drawing)."""
        msg = BackMsg()
        request_id = uuid.uuid4().hex
        msg.file_urls_request.request_id = request_id
        msg.file_urls_request.file_names.append(name)
        msg.file_urls_request.session_id = self.session_id
        await self.ws.send(msg.SerializeToString())
        while True:
            fwd = await self._receive()
            if fwd.WhichOneof("type") == "file_urls_response" and fwd.file_urls_response.response_id == request_id:
                urls = fwd.file_urls_response.file_urls[0]
                break
        xsrf = self.http.cookies.get("_streamlit_xsrf")
        put = await self.http.put(
            urls.upload_url, files={"file": (name, data, "text/csv")}, headers={"X-Xsrftoken": xsrf} if xsrf else {}
        )
        put.raise_for_status()
        state = BackMsg().rerun_script.widget_states.widgets.add()
        state.id = self.uploader_id
        info = state.file_uploader_state_value.uploaded_file_info.add()
        info.name, info.size, info.file_id = name, len(data), urls.file_id
        info.file_urls.CopyFrom(urls)
        return await self.visit("Reports", [state])


def message_kind(fwd: ForwardMsg) -> str:
    """A ForwardMsg's kind as the message counts name it: a delta by its element or block ("delta:markdown"),
    anything else by its type ("page_info_changed")."""
    kind = fwd.WhichOneof("type")
    if kind != "delta":
        return kind
    delta = fwd.delta.WhichOneof("type")
    if delta == "new_element":
        return f"delta:{fwd.delta.new_element.WhichOneof('type')}"
    if delta == "add_block":
        return f"block:{fwd.delta.add_block.WhichOneof('type')}"
    return f"delta:{delta}"


async def tour(
    person: Person,
    tours: int,
    visits: list[float],
    stop: asyncio.Event | None = None,
    by_page: dict[str, list[float]] | None = None,
) -> None:
    """Visit every page in order, `tours` times (or until `stop` is set); times go to `visits` (and `by_page`)."""
    n = 0
    while (stop is None and n < tours) or (stop is not None and not stop.is_set()):
        for page in list(person.pages) or [""]:
            seconds = await person.visit(page)
            visits.append(seconds)
            if by_page is not None:
                by_page.setdefault(page, []).append(seconds)
        n += 1


# ---------------------------------------------------------------------------------------------
# Scenarios
# ---------------------------------------------------------------------------------------------


def summary(times: list[float]) -> dict[str, float]:
    if not times:
        return {"visits": 0}
    ordered = sorted(times)
    p95 = nearest_rank(ordered, 0.95)
    return {
        "visits": len(times),
        "p50_s": round(statistics.median(ordered), 3),
        "p95_s": round(p95, 3),
        "max_s": round(ordered[-1], 3),
    }


def _busy_cpu_s() -> float:
    """CPU seconds the whole machine has spent busy (user, system, and the rest but idle and iowait), all cores."""
    times = psutil.cpu_times()
    return sum(times) - times.idle - getattr(times, "iowait", 0.0)


def load() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


async def tour_scenario(
    base: str,
    people: int,
    tours: int,
    memory: MemorySampler,
    visits: list[float] | None = None,
    connected: Callable[[], dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """`people` touring every page `tours` times at once; each visit's seconds also go to `visits` when given;
    what `connected` returns, called once everyone is connected, joins the result."""
    memory.reset_peak()
    visits = [] if visits is None else visits
    by_page: dict[str, list[float]] = {}
    crowd = [Person(base) for _ in range(people)]
    for p in crowd:
        await p.__aenter__()
    try:
        await asyncio.gather(*(p.visit() for p in crowd))  # the landing page gives the page list
        seen = connected() if connected else {}
        start, cpu, client, machine = time.perf_counter(), memory.cpu_s(), time.process_time(), _busy_cpu_s()
        await asyncio.gather(*(tour(p, tours, visits, by_page=by_page) for p in crowd))
        wall, cpu = time.perf_counter() - start, memory.cpu_s() - cpu
        client, machine = time.process_time() - client, _busy_cpu_s() - machine
        held = memory.rss()
    finally:
        for p in crowd:
            await p.__aexit__()
    errors = sum(len(p.errors) for p in crowd)
    return {
        "scenario": f"tour x{people}",
        **summary(visits),
        "visits_per_s": round(len(visits) / wall, 2),
        "server_cpu_ms_per_visit": round(1000 * cpu / max(1, len(visits))),
        # On a machine of few cores the people's own process competes with the servers for them.
        "server_cores_used": round(cpu / wall, 2),
        "load_generator_cores_used": round(client / wall, 2),
        "machine_cores_busy": round(machine / wall, 2),  # every process: servers, people, proxy, database
        "errors": errors,
        "peak_rss_mb": round(memory.peak / 1e6),
        "rss_connected_mb": round(held / 1e6),
        "p50_by_page_s": {k: round(statistics.median(v), 3) for k, v in by_page.items()},
        **seen,
        "load": load(),
    }


EXPLAIN_QUERY = "tab=explain-a-step"
"""The Why page's link to its Explain a step section (permalink.tabs: the tab's slug), at its default step."""


async def explain_scenario(base: str, people: int, visits_each: int) -> dict[str, Any]:
    """The Why page opened at Explain a step: once by one person (the server's first explain: the step is built
    then), then by `people` at once, `visits_each` times each back to back."""
    crowd = [Person(base) for _ in range(people)]
    for p in crowd:
        await p.__aenter__()
    times: list[float] = []
    try:
        await asyncio.gather(*(p.visit() for p in crowd))  # the landing page gives the page list
        first = await crowd[0].visit("Why", query=EXPLAIN_QUERY)

        async def explain(p: Person) -> None:
            for _ in range(visits_each):
                times.append(await p.visit("Why", query=EXPLAIN_QUERY))

        await asyncio.gather(*(explain(p) for p in crowd))
    finally:
        for p in crowd:
            await p.__aexit__()
    return {
        "scenario": f"explain x{people}",
        "first_explain_s": round(first, 3),
        **summary(times),
        "errors": sum(len(p.errors) for p in crowd),
        "load": load(),
    }


async def upload_scenario(
    base: str, uploaders: int, bystanders: int, data: bytes, memory: MemorySampler
) -> dict[str, Any]:
    memory.reset_peak()
    before = memory.rss()
    stop, bystander_visits = asyncio.Event(), []
    watchers = [Person(base) for _ in range(bystanders)]
    crowd = [Person(base) for _ in range(uploaders)]
    for p in [*watchers, *crowd]:
        await p.__aenter__()
        await p.visit()
    try:
        watching = [asyncio.create_task(tour(p, 0, bystander_visits, stop)) for p in watchers]
        for p in crowd:
            await p.visit("Reports")

        async def one(p: Person) -> float:
            return await p.upload("big_raw.csv", data)

        upload_times = await asyncio.gather(*(one(p) for p in crowd))
        roofline_times = [await p.visit("Roofline") for p in crowd]
        stop.set()
        await asyncio.gather(*watching)
        await asyncio.sleep(2)
        held = memory.rss()
    finally:
        for p in [*watchers, *crowd]:
            await p.__aexit__()
    errors = [e for p in [*watchers, *crowd] for e in p.errors]
    return {
        "scenario": f"upload {len(data) / 1e6:.0f} MB x{uploaders} (+{bystanders} touring)",
        "upload_visit_s": [round(t, 2) for t in upload_times],
        "roofline_after_upload_s": [round(t, 2) for t in roofline_times],
        "bystanders": summary(bystander_visits),
        "errors": len(errors),
        "first_error": errors[0] if errors else None,
        "rss_before_mb": round(before / 1e6),
        "peak_rss_mb": round(memory.peak / 1e6),
        "rss_held_mb": round(held / 1e6),
        "held_per_file_size": round((held - before) / len(data), 2),
        "load": load(),
    }


def leave_watch(memory: MemorySampler, idle: int, seconds: int) -> dict[str, Any]:
    samples, start, back_at = [], time.monotonic(), None
    while True:
        elapsed = time.monotonic() - start
        rss = memory.rss()
        samples.append((round(elapsed), round(rss / 1e6)))
        if back_at is None and rss - idle <= 100e6:
            back_at = round(elapsed)
        if elapsed >= seconds:
            break
        time.sleep(10)
    return {
        "scenario": "after everyone left",
        "idle_rss_mb": round(idle / 1e6),
        "samples_s_mb": samples,
        "within_100mb_of_idle_after_s": back_at,
        "load": load(),
    }


async def first_visits(
    base: str, pid: int | None = None
) -> tuple[dict[str, float], dict[str, float], dict[str, float], list[str]]:
    """One person on a fresh server: every page once in menu order (the first visits, each page's cold cost),
    then every page again (later visits); ({page: first s}, {page: later s}, {page: the server's CPU seconds
    during its first visit}, errors). The CPU seconds (of the server process `pid`, user + system) are what the
    first visit costs whatever else the machine runs: on a shared machine its wall time is inflated by the load."""
    first: dict[str, float] = {}
    later: dict[str, float] = {}
    cpu: dict[str, float] = {}
    server = psutil.Process(pid) if pid else None

    def cpu_s() -> float:
        if server is None:
            return 0.0
        times = server.cpu_times()
        return times.user + times.system

    async with Person(base) as person:
        before = cpu_s()
        seconds = await person.visit()  # the default page; its run also sends the page list
        names = list(person.pages)
        first[names[0] if names else ""] = seconds
        cpu[names[0] if names else ""] = cpu_s() - before
        for page in names[1:]:
            before = cpu_s()
            first[page] = await person.visit(page)
            cpu[page] = cpu_s() - before
        for page in names:
            later[page] = await person.visit(page)
        return first, later, cpu, person.errors


async def first_visit_scenario(
    apps: list[str], runs: int, db_path: Path, extra_args: list[str], roots: dict[str, Path] | None = None
) -> dict[str, Any]:
    """Fresh servers of each app in turn (`runs` rounds, apps interleaved so all see the same machine load): the
    seconds from launch to health, and each page's first and later visit, medians over the rounds. `roots` maps an
    app name other than those of APPS to another tree of GEMM Lens ("before": the code before a change).

    Each GEMM Lens tree's first visits are divided by the minimal app's cold first visit (its first page: Python,
    Streamlit's script machinery, pandas and plotly loaded for the first time), what the first page of any
    Streamlit app costs; and by the minimal app's first visit of the same page (Streamlit warm, nothing but
    the page's own elements)."""
    raw: dict[str, dict[str, Any]] = {
        a: {"started_s": [], "first": {}, "later": {}, "cpu": {}, "errors": []} for a in apps
    }
    for _ in range(runs):
        for app in apps:
            proc = start_server(free_port(), db_path, extra_args, app=app, root=(roots or {}).get(app, ROOT))
            try:
                base = f"http://127.0.0.1:{proc.args[proc.args.index('--server.port') + 1]}"
                first, later, cpu, errors = await first_visits(base, proc.pid)
            finally:
                stop_server(proc)
            raw[app]["started_s"].append(proc.started_s)  # type: ignore[attr-defined]
            raw[app]["errors"] += errors
            for page, t in first.items():
                raw[app]["first"].setdefault(page, []).append(t)
            for page, t in later.items():
                raw[app]["later"].setdefault(page, []).append(t)
            for page, t in cpu.items():
                raw[app]["cpu"].setdefault(page, []).append(t)
    out: dict[str, Any] = {"scenario": f"first visits ({runs} fresh servers each)", "load": load()}
    for app, r in raw.items():
        out[app] = {
            "started_s": round(statistics.median(r["started_s"]), 2),
            "errors": len(r["errors"]),
            "first_s": {k: round(statistics.median(v), 3) for k, v in r["first"].items()},
            "later_s": {k: round(statistics.median(v), 3) for k, v in r["later"].items()},
            "first_cpu_s": {k: round(statistics.median(v), 3) for k, v in r["cpu"].items()},
        }
    if "minimal" in out:
        ref = out["minimal"]["first_s"]
        cold = next(iter(ref.values()), 0.0)
        for app in (a for a in apps if a != "minimal"):
            first = out[app]["first_s"]
            out[app]["first_vs_minimal_page"] = {k: round(v / ref[k], 2) for k, v in first.items() if ref.get(k)}
            out[app]["first_vs_minimal_cold"] = {k: round(v / cold, 2) for k, v in first.items()} if cold else {}
            ref_cpu = out["minimal"]["first_cpu_s"]
            cold_cpu = next(iter(ref_cpu.values()), 0.0)
            out[app]["first_cpu_vs_minimal_cold"] = (
                {k: round(v / cold_cpu, 2) for k, v in out[app]["first_cpu_s"].items()} if cold_cpu else {}
            )
    return out


async def page_cpu_scenario(server: Any, repeats: int) -> dict[str, Any]:
    """One person visits each page `repeats` times in a row on a warm server; the server's CPU milliseconds per visit
    of each page (the mean over the visits). Visits are one at a time, so each CPU delta is that page's own cost: a
    figure the other load on a shared machine inflates far less than wall time."""
    per_page: dict[str, float] = {}
    async with Person(server.base) as person:
        await person.visit()
        for page in list(person.pages):
            await person.visit(page)  # a first visit of the session fills its caches
            before = server.memory.cpu_s()  # counted in clock ticks (10 ms): the mean over the visits, not each
            for _ in range(repeats):
                await person.visit(page)
            per_page[page] = round(1000 * (server.memory.cpu_s() - before) / repeats, 1)
        errors = len(person.errors)
    return {
        "scenario": f"server CPU per visit ({repeats} visits per page, one person)",
        "app": server.app,
        "cpu_ms_by_page": per_page,
        "cpu_ms_mean_page": round(statistics.mean(per_page.values()), 1),
        "errors": errors,
        "load": load(),
    }


async def messages_scenario(server: Any) -> dict[str, Any]:
    """What a later visit of each page sends: one person visits each page twice, and the ForwardMsgs of the
    second visit (from the rerun to script_finished) are counted, with their bytes and their kinds. Each message
    costs the server a build, a hash, a hand-over to the event loop and a send, whatever it holds."""
    counts: dict[str, dict[str, Any]] = {}
    async with Person(server.base) as person:
        await person.visit()
        for page in list(person.pages):
            await person.visit(page)
            person.sent = []
            await person.visit(page)
            kinds: dict[str, int] = {}
            for kind, _ in person.sent:
                kinds[kind] = kinds.get(kind, 0) + 1
            counts[page] = {
                "messages": len(person.sent),
                "bytes": sum(n for _, n in person.sent),
                "kinds": dict(sorted(kinds.items(), key=lambda kv: -kv[1])),
            }
            person.sent = None
        errors = len(person.errors)
    return {
        "scenario": "messages a later visit sends (one person)",
        "app": server.app,
        "messages_by_page": {page: c["messages"] for page, c in counts.items()},
        "bytes_by_page": {page: c["bytes"] for page, c in counts.items()},
        "kinds_by_page": {page: c["kinds"] for page, c in counts.items()},
        "errors": errors,
        "load": load(),
    }


def postgres_url() -> tuple[str, Any]:
    """A PostgreSQL store for the processes scenario: GEMMLENS_TEST_PG_URL, else a throwaway server of
    .ci/postgres.sh; (url, how to stop it)."""
    if os.environ.get("GEMMLENS_TEST_PG_URL"):
        return os.environ["GEMMLENS_TEST_PG_URL"], lambda: None
    done = subprocess.run(["bash", str(ROOT / ".ci" / "postgres.sh")], capture_output=True, text=True, check=True)
    exports = dict(line.removeprefix("export ").split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    env = {**os.environ, **exports}
    return exports["GEMMLENS_TEST_PG_URL"], lambda: subprocess.run(
        ["bash", str(ROOT / ".ci" / "postgres.sh"), "stop"], env=env, capture_output=True, check=False
    )


async def processes_scenario(
    counts: list[int],
    people: list[int],
    tours: int,
    rounds: int,
    pg_url: str,
    cache_dir: Path,
    extra_args: list[str],
) -> list[dict[str, Any]]:
    """People touring GEMM Lens behind nginx with 1, 2, ... Streamlit processes sharing one PostgreSQL store and
    one cache folder (profiling/deploy.py), each count `rounds` times in turn (1, 2, 1, 2 ...) so that all see the
    same machine load. One process is toured by `people[0]` people; more processes by every number in `people`,
    so that their throughput can be read at one process's p95 (process_ratios). Each process is warmed by one
    tour on its own port first, and every number of people gets a fresh deployment."""
    from profiling.deploy import Deployment

    out = []
    env = {"GEMMLENS_GPU": "off", "GEMMLENS_DB_URL": pg_url, "GEMMLENS_CACHE_DIR": str(cache_dir)}
    for round_index in range(rounds):
        for n in counts:
            for crowd in people[:1] if n == 1 else people:
                port = free_port_run(n + 1)
                with tempfile.TemporaryDirectory(prefix="gemmlens-nginx-") as run_dir:
                    with Deployment(n, port, Path(run_dir), env=env, streamlit_args=extra_args) as deployment:
                        for backend in deployment.backends:
                            async with Person(f"http://{backend}") as warm:
                                await warm.visit()
                                await tour(warm, 1, [])
                        pids = [p.pid for p in deployment.procs]
                        memory = MemorySampler(pids[0], more_pids=tuple(pids[1:]))
                        try:
                            result = await tour_scenario(
                                deployment.url, crowd, tours, memory, connected=lambda d=deployment: _split(d)
                            )
                        finally:
                            memory.stop()
                split = "/".join(map(str, result.get("people_per_process", []))) if n > 1 else ""
                result["scenario"] = f"tour x{crowd}, {n} process{'es' if n > 1 else ''} behind nginx" + (
                    f" (people per process {split})" if split else ""
                )
                result.update(processes=n, people=crowd, round=round_index)
                out.append(result)
                print(json.dumps(result), flush=True)
    return out


def process_ratios(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each process count against one process, per round (both measured back to back), then the median over rounds
    with its bootstrap interval (load_stats.median_ratio_over_rounds): the throughput with as many people as one
    process had, its p95 then, and the throughput at one process's p95 (load_stats.rate_at_p95 over the count's
    numbers of people)."""
    one = {r["round"]: r for r in runs if r["processes"] == 1}
    if not one:
        return []
    base_people = next(iter(one.values()))["people"]
    out = []
    for n in sorted({r["processes"] for r in runs} - {1}):
        of_n = [r for r in runs if r["processes"] == n]
        at_base = [r for r in of_n if r["people"] == base_people]
        same_people, p95_ratios, at_p95, bounds = [], [], [], []
        for round_index, base in sorted(one.items()):
            levels = [r for r in of_n if r["round"] == round_index]
            same = [r for r in levels if r["people"] == base_people]
            if same:
                same_people.append(same[0]["visits_per_s"] / base["visits_per_s"])
                p95_ratios.append(same[0]["p95_s"] / base["p95_s"])
            if levels:
                rate, bound = rate_at_p95([(r["p95_s"], r["visits_per_s"]) for r in levels], base["p95_s"])
                at_p95.append(rate / base["visits_per_s"])
                bounds.append(bound)
        if not same_people:
            continue
        throughput = median_ratio_over_rounds(same_people)
        same_p95 = median_ratio_over_rounds(at_p95)
        out.append(
            {
                "scenario": f"{n} processes against 1",
                "processes": n,
                "rounds": throughput.rounds,
                "people": base_people,
                "visits_per_s": round(statistics.median(r["visits_per_s"] for r in at_base), 2),
                "p95_s": round(statistics.median(r["p95_s"] for r in at_base), 3),
                "throughput_ratio": round(throughput.ratio, 2),
                "throughput_interval": [round(throughput.low, 2), round(throughput.high, 2)],
                "p95_ratio": round(statistics.median(p95_ratios), 2),
                "people_levels": sorted({r["people"] for r in of_n}),
                "same_p95_throughput_ratio": round(same_p95.ratio, 2),
                "same_p95_interval": [round(same_p95.low, 2), round(same_p95.high, 2)],
                "same_p95_reads": {b: bounds.count(b) for b in sorted(set(bounds))},
                "load": load(),
            }
        )
    return out


def established_connections(pid: int, port: int) -> int:
    """Open TCP connections to `port` that process `pid` accepted (behind nginx: one per websocket or request)."""
    conns = psutil.Process(pid).net_connections(kind="tcp")
    return sum(1 for c in conns if c.status == psutil.CONN_ESTABLISHED and c.laddr and c.laddr.port == port)


def _split(deployment: Any) -> dict[str, Any]:
    """How many people each process holds: its open connections through nginx (each person's websocket), in the
    deployment's order of processes."""
    return {
        "people_per_process": [
            established_connections(proc.pid, int(backend.rsplit(":", 1)[1]))
            for proc, backend in zip(deployment.procs, deployment.backends, strict=True)
        ]
    }


class NamesItsPort(http.server.BaseHTTPRequestHandler):
    """A stand-in process behind nginx: answers every GET with its own port, so that a client sees where nginx
    sent it (tests/test_deploy.py, docs/load-test-runs/round17/hash_split.py)."""

    def do_GET(self) -> None:
        body = str(self.server.server_port).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


# Run in a fresh interpreter: the memory a parsed upload holds once its bytes are gone (tracemalloc counts every
# Python allocation, numpy's included), and the parse's own seconds, as the app does it (usecases.load_upload).
_HELD = """
import gc, json, sys, time, tracemalloc
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from profiling import usecases
# A first, small parse imports the parser's modules (pandas, pyarrow: about 25 MB), a server's one-time cost that
# is not the report's.
usecases.load_upload("warm.csv", (Path(sys.argv[1]) / "tests" / "fixtures" / "ncu" / "raw.csv").read_bytes())
data = open(sys.argv[2], "rb").read()
size = len(data)
start = time.perf_counter()
report = usecases.load_upload("big_raw.csv", data)
seconds = time.perf_counter() - start  # timed without tracemalloc, which slows allocation-heavy code 2x
del report
gc.collect()
tracemalloc.start()
base = tracemalloc.get_traced_memory()[0]
report = usecases.load_upload("big_raw.csv", data)
del data
gc.collect()
held = tracemalloc.get_traced_memory()[0] - base  # the report alone (the uploader holds the file's bytes too)
print(json.dumps({"parse_s": round(seconds, 2), "launches": len(report.launches), "held_bytes": held,
                  "held_per_file_size": round(held / size, 2)}))
"""


def held_by_parsed_upload(data: bytes) -> dict[str, Any]:
    """Parse `data` in a fresh process; the parse's seconds and the bytes its report holds (x the file size)."""
    with tempfile.NamedTemporaryFile(suffix=".csv", delete=False) as fh:
        fh.write(data)
    try:
        done = subprocess.run([sys.executable, "-c", _HELD, str(ROOT), fh.name], capture_output=True, text=True)
        if done.returncode != 0:
            return {"error": done.stderr.strip().splitlines()[-1]}
        return json.loads(done.stdout.strip().splitlines()[-1])
    finally:
        os.unlink(fh.name)


def upload_file(size_mb: float) -> bytes:
    path = Path(tempfile.mkdtemp(prefix="gemmlens-load-")) / "big_raw.csv"
    try:
        write_big_csv(FIXTURE, int(size_mb * 1e6), path)
        return path.read_bytes()
    finally:
        path.unlink(missing_ok=True)
        path.parent.rmdir()


class Server:
    """A server under test: started here (and stopped) or given by --url; its memory sampler."""

    def __init__(self, app: str, args: argparse.Namespace, db_path: Path, root: Path = ROOT) -> None:
        self.app, self.proc = app, None
        if args.url and app == "gemmlens":
            self.base, pid = args.url.rstrip("/"), args.server_pid
        else:
            port = free_port()
            self.proc = start_server(
                port, db_path, args.server_arg, app=app, root=root, tuned_minimal=args.tuned_minimal
            )
            self.base, pid = f"http://127.0.0.1:{port}", self.proc.pid
        self.memory = MemorySampler(pid)
        self.idle = 0

    async def warm_up(self) -> None:
        """One tour fills the server-wide caches of the bundled data, as a first visitor does."""
        async with Person(self.base) as warm:
            await warm.visit()
            await tour(warm, 1, [])
        await asyncio.sleep(3)
        self.idle = self.memory.rss()
        print(
            json.dumps(
                {
                    "scenario": f"{self.app}: idle after one warm-up tour",
                    "rss_mb": round(self.idle / 1e6),
                    "load": load(),
                }
            ),
            flush=True,
        )

    def stop(self) -> None:
        self.memory.stop()
        if self.proc is not None:
            stop_server(self.proc)


async def pooled_scenario(
    servers: list[Server], people: int, tours: int, rounds: int, save: str | None = None
) -> dict[str, Any]:
    """`rounds` runs of the tour scenario against each server in turn (the order reversed every other round, so a
    drift of the machine's load falls on all alike), every visit kept: each run's p95 and p50 ratio against the
    minimal app (the last server), and the p95 and p50 of all runs' visits pooled, over the minimal app's, with
    a 95 % interval from resampling runs (load_stats.pooled_ratio). `save`: a JSON file for every visit's seconds
    by app and run, to pool several invocations afterwards."""
    kept: dict[str, list[list[float]]] = {s.app: [] for s in servers}
    runs: list[dict[str, Any]] = []
    for n in range(rounds):
        row: dict[str, Any] = {"run": n + 1, "utc": time.strftime("%H:%M:%S", time.gmtime()), "load": load()}
        for server in servers if n % 2 == 0 else servers[::-1]:
            visits: list[float] = []
            result = await tour_scenario(server.base, people, tours, server.memory, visits)
            kept[server.app].append(visits)
            row[server.app] = {k: result[k] for k in ("p50_s", "p95_s", "errors", "server_cpu_ms_per_visit")}
        row["load_after"] = load()
        ref = row["minimal"]
        row["p95_ratio"] = {a: round(row[a]["p95_s"] / ref["p95_s"], 2) for a in kept if a != "minimal"}
        row["p50_ratio"] = {a: round(row[a]["p50_s"] / ref["p50_s"], 2) for a in kept if a != "minimal"}
        runs.append(row)
        print(json.dumps({"scenario": f"pooled tour x{people}: run {n + 1}", **row}), flush=True)
    if save:
        Path(save).write_text(json.dumps({"people": people, "runs": runs, "visits_s": kept}))
    pooled = {}
    for app in (a for a in kept if a != "minimal"):
        pooled[app] = {f"p{round(q * 100)}": asdict(pooled_ratio(kept[app], kept["minimal"], q=q)) for q in (0.95, 0.5)}
        if app == "gemmlens" and "before" in kept:  # the change itself: after over before, runs paired alike
            pooled["after / before"] = {"p95": asdict(pooled_ratio(kept[app], kept["before"], q=0.95))}
    return {"scenario": f"pooled tour x{people}, {rounds} runs", "people": people, "runs": runs, "pooled": pooled}


def pooled_markdown(r: dict[str, Any]) -> str:
    """The pooled mode's tables: each run's p50 / p95 per app and ratios, then the pooled ratios with intervals."""
    apps = [a for a in r["runs"][0] if isinstance(r["runs"][0][a], dict) and "p95_s" in r["runs"][0][a]]
    ours = [a for a in apps if a != "minimal"]
    head = ["run", "time (UTC)", "load avg", *[f"{a} p50 / p95 (s)" for a in apps]]
    head += [f"{a} p95 ratio" for a in ours] + [f"{a} p50 ratio" for a in ours]
    out = f"{r['scenario']}\n\n| " + " | ".join(head) + " |\n|" + "---|" * len(head) + "\n"
    for row in r["runs"]:
        cells = [row["run"], row["utc"], f"{row['load'].split('/')[0]}-{row['load_after'].split('/')[0]}"]
        cells += [f"{row[a]['p50_s']} / {row[a]['p95_s']}" for a in apps]
        cells += [row["p95_ratio"][a] for a in ours] + [row["p50_ratio"][a] for a in ours]
        out += "| " + " | ".join(str(c) for c in cells) + " |\n"
    out += "\n| pooled | percentile | ratio | 95 % interval (runs resampled) | pooled (s) | reference pooled (s) |\n"
    out += "|---|---|---|---|---|---|\n"
    for app, by_q in r["pooled"].items():
        name = app if "/" in app else f"{app} / minimal"
        for q, x in by_q.items():
            out += (
                f"| {name} | {q} | {x['ratio']:.3f} | {x['low']:.3f}-{x['high']:.3f} | {x['ours_s']:.3f} | "
                f"{x['ref_s']:.3f} |\n"
            )
    return out


def versus(ours: dict[str, Any], ref: dict[str, Any]) -> dict[str, Any]:
    """GEMM Lens's tour against the minimal app's with as many people, measured back to back."""
    return {
        "scenario": f"{ours['scenario']}: GEMM Lens / minimal app",
        "p50_ratio": round(ours["p50_s"] / ref["p50_s"], 2),
        "p95_ratio": round(ours["p95_s"] / ref["p95_s"], 2),
        "minimal_p50_s": ref["p50_s"],
        "minimal_p95_s": ref["p95_s"],
        "load": load(),
    }


async def main_async(args: argparse.Namespace) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    tmp = Path(tempfile.mkdtemp(prefix="gemmlens-load-"))
    db_path = tmp / "runs.sqlite"

    def report(result: dict[str, Any]) -> None:
        results.append(result)
        print(json.dumps(result), flush=True)

    servers: list[Server] = []
    try:
        seed_store(db_path)
        apps = ["gemmlens", "minimal"] if args.reference else ["gemmlens"]
        if args.first_visits and not args.url:
            roots = {"before": Path(args.before).resolve()} if args.before else {}
            report(await first_visit_scenario([*roots, *apps], args.first_visits, db_path, args.server_arg, roots))
        if args.pooled and args.before and not args.url:
            apps = ["before", *apps]  # served from the other tree, beside this one and the minimal app
        if args.people or not args.no_upload or args.watch or args.page_cpu or args.messages or args.explain:
            roots = {"before": Path(args.before).resolve()} if args.before else {}
            servers = [Server(app, args, db_path, roots.get(app, ROOT)) for app in apps]
            for server in servers:
                await server.warm_up()
        ours = next((s for s in servers if s.app == "gemmlens"), None)
        if ours is not None and args.explain:
            report(await explain_scenario(ours.base, args.explain, args.explain_visits))
        if args.messages:
            for server in servers:
                report(await messages_scenario(server))
        if args.page_cpu:
            runs = [await page_cpu_scenario(server, args.page_cpu) for server in servers]
            for run in runs:
                report(run)
            ref = next((r["cpu_ms_by_page"] for r in runs if r["app"] == "minimal"), None)
            for run in runs if ref else []:
                if run["app"] != "minimal":
                    report(
                        {
                            "scenario": f"server CPU per visit: {run['app']} / minimal app",
                            "load": load(),
                            "ratio_by_page": {
                                k: round(v / ref[k], 1) for k, v in run["cpu_ms_by_page"].items() if ref.get(k)
                            },
                        }
                    )
        if args.pooled and servers:
            for people in args.people:
                save = args.save_visits and args.save_visits.replace(".json", f"-x{people}.json")
                report(await pooled_scenario(servers, people, args.tours, args.pooled, save))
        for people in [] if args.pooled else args.people:
            runs = []
            for server in servers:  # back to back, so both see the same load on a shared machine
                runs.append(await tour_scenario(server.base, people, args.tours, server.memory))
                runs[-1]["app"] = server.app
                report(runs[-1])
            if len(runs) == 2:
                report(versus(runs[0], runs[1]))
        if ours is not None and not args.no_upload:
            data = upload_file(args.upload_mb)
            report(await upload_scenario(ours.base, args.uploaders, args.bystanders, data, ours.memory))
            held = held_by_parsed_upload(data)
            print(json.dumps({"scenario": "one parse in a fresh process", **held, "load": load()}), flush=True)
            del data
        if ours is not None and args.watch:
            report(leave_watch(ours.memory, ours.idle, args.watch))
        for server in servers:  # the deployments below need the machine to themselves
            server.stop()
        servers = []
        if args.processes:
            pg_url, stop_pg = postgres_url()
            try:
                store = RunStore(pg_url)
                if not store.count_runs():
                    for bundle in discover_bundles():
                        store.import_runs(bundled_runs(bundle))
                store.close()
                runs = await processes_scenario(
                    args.processes,
                    args.process_people,
                    args.process_tours or args.tours,
                    args.process_rounds,
                    pg_url,
                    tmp / "cache",
                    args.server_arg,
                )
                results.extend(runs)
                for ratio in process_ratios(runs):
                    report(ratio)
            finally:
                stop_pg()
    finally:
        for server in servers:
            server.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return results


def markdown(results: list[dict[str, Any]]) -> str:
    rows = [
        "| scenario | app | visits | p50 (s) | p95 (s) | max (s) | visits/s | errors | peak RSS (MB) | load avg |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        if "visits" in r or "bystanders" in r:
            s = r.get("bystanders", r)
            rows.append(
                f"| {r['scenario']} | {r.get('app', 'gemmlens')} | {s.get('visits', 0)} | {s.get('p50_s', '')} | "
                f"{s.get('p95_s', '')} | {s.get('max_s', '')} | {r.get('visits_per_s', '')} | {r['errors']} | "
                f"{r.get('peak_rss_mb', '')} | {r['load']} |"
            )
    out = "\n".join(rows)
    ratios = [r for r in results if "p50_ratio" in r]
    if ratios:
        out += "\n\n| tour | p50 GEMM Lens / minimal | p95 GEMM Lens / minimal | load avg |\n|---|---|---|---|\n"
        out += "\n".join(
            f"| {r['scenario'].split(':')[0]} | {r['p50_ratio']} | {r['p95_ratio']} | {r['load']} |" for r in ratios
        )
    scaling = [r for r in results if "throughput_ratio" in r]
    if scaling:
        out += (
            "\n\n| processes | rounds | people | visits/s | p95 (s) | throughput / 1 process (95 % interval) | "
            "p95 / 1 process | people levels | throughput / 1 process at its p95 (95 % interval) | read as | "
            "load avg |\n|---|---|---|---|---|---|---|---|---|---|---|\n"
        )
        out += "\n".join(
            f"| {r['processes']} | {r['rounds']} | {r['people']} | {r['visits_per_s']} | {r['p95_s']} | "
            f"{r['throughput_ratio']} ({r['throughput_interval'][0]}-{r['throughput_interval'][1]}) | "
            f"{r['p95_ratio']} | {', '.join(map(str, r['people_levels']))} | {r['same_p95_throughput_ratio']} "
            f"({r['same_p95_interval'][0]}-{r['same_p95_interval'][1]}) | "
            f"{', '.join(f'{k} x{v}' for k, v in r['same_p95_reads'].items())} | {r['load']} |"
            for r in scaling
        )
    for r in results:
        if r.get("scenario", "").startswith("first visits"):
            out += "\n\n" + first_visit_markdown(r)
        elif "pooled" in r:
            out += "\n\n" + pooled_markdown(r)
    return out


def first_visit_markdown(r: dict[str, Any]) -> str:
    """The first-visit table: each page's first and later visit per GEMM Lens tree ("before" when given), its first
    visit over the minimal app's cold first visit and over the minimal app's first visit of the same page."""
    trees = [t for t in ("before", "gemmlens") if t in r]
    ref = r.get("minimal")
    started = ", ".join(f"{t} {r[t]['started_s']} s" for t in [*trees, *(["minimal"] if ref else [])])
    out = f"{r['scenario']}, load avg {r['load']}; launch to health: {started}"
    if ref:
        cold = next(iter(ref["first_s"].items()), ("", ""))
        cold_cpu = ref.get("first_cpu_s", {}).get(cold[0], "")
        out += f"; the minimal app's cold first visit ({cold[0]}): {cold[1]} s, {cold_cpu} s of server CPU"
    head = ["page"]
    for t in trees:
        name = "after" if t == "gemmlens" and "before" in r else t
        head += [f"{name} first (s)", f"{name} later (s)"]
        if ref:
            head += [f"{name} / minimal cold first", f"{name} / minimal same page"]
        head += [f"{name} first: server CPU (s)"] + ([f"{name} CPU / minimal cold first CPU"] if ref else [])
    if ref:
        head += ["minimal first (s)", "minimal first: server CPU (s)"]
    out += "\n\n| " + " | ".join(head) + " |\n|" + "---|" * len(head) + "\n"
    for page in r[trees[-1]]["first_s"]:
        row = [page]
        for t in trees:
            x = r[t]
            row += [x["first_s"].get(page, ""), x["later_s"].get(page, "")]
            if ref:
                row += [
                    x.get("first_vs_minimal_cold", {}).get(page, ""),
                    x.get("first_vs_minimal_page", {}).get(page, ""),
                ]
            row.append(x.get("first_cpu_s", {}).get(page, ""))
            if ref:
                row.append(x.get("first_cpu_vs_minimal_cold", {}).get(page, ""))
        if ref:
            row += [ref["first_s"].get(page, ""), ref.get("first_cpu_s", {}).get(page, "")]
        out += "| " + " | ".join(str(v) for v in row) + " |\n"
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", help="an already running server (default: start one)")
    parser.add_argument("--server-pid", type=int, help="with --url: the server's process id, for its RSS")
    parser.add_argument("--people", type=int, nargs="*", default=[1, 10, 20])
    parser.add_argument("--tours", type=int, default=2, help="tours of every page per person")
    parser.add_argument("--no-upload", action="store_true")
    parser.add_argument("--upload-mb", type=float, default=20.0)
    parser.add_argument("--uploaders", type=int, default=5)
    parser.add_argument("--bystanders", type=int, default=1)
    parser.add_argument("--watch", type=int, default=180, help="seconds of RSS samples after everyone left")
    parser.add_argument("--server-arg", action="append", default=[], help="extra `streamlit run` option")
    parser.add_argument(
        "--first-visits",
        type=int,
        default=1,
        metavar="N",
        help="rounds of fresh servers for the first-visit times per page (0: none; default 1)",
    )
    parser.add_argument(
        "--no-reference", dest="reference", action="store_false", help="skip the minimal Streamlit app's run"
    )
    parser.add_argument(
        "--processes",
        type=int,
        nargs="*",
        default=[],
        metavar="N",
        help="also tour behind nginx with N Streamlit processes on one PostgreSQL store, e.g. --processes 1 2",
    )
    parser.add_argument(
        "--page-cpu",
        type=int,
        default=0,
        metavar="N",
        help="server CPU ms per visit of each page, N visits per page by one person (0: skip)",
    )
    parser.add_argument(
        "--messages", action="store_true", help="count the messages a later visit of each page sends (one person)"
    )
    parser.add_argument(
        "--before",
        metavar="DIR",
        help="first visits and --pooled: also the GEMM Lens checkout in DIR (the code before a change), in turn",
    )
    parser.add_argument(
        "--pooled",
        type=int,
        default=0,
        metavar="R",
        help="R runs of each --people tour against GEMM Lens and the minimal app in turn (and --before's tree), "
        "every visit kept: per-run ratios, pooled p95 and p50 ratios with a bootstrap interval",
    )
    parser.add_argument("--save-visits", metavar="FILE.json", help="--pooled: every visit's seconds, by app and run")
    parser.add_argument(
        "--tuned-minimal",
        action="store_true",
        help="start the minimal app as GEMM Lens starts (profiling.app.serve: imports first, the collector tuned)",
    )
    parser.add_argument(
        "--explain", type=int, default=0, metavar="N", help="N people at once on the Why page's Explain a step"
    )
    parser.add_argument("--explain-visits", type=int, default=10, help="visits of Explain a step per person")
    parser.add_argument(
        "--process-people",
        type=int,
        nargs="+",
        default=[40],
        help="people in the processes scenario: one process gets the first number, more processes every number, "
        "so their throughput is also read at one process's p95 (e.g. 40 56 72)",
    )
    parser.add_argument(
        "--process-tours", type=int, default=0, help="tours of every page per person there (0: --tours)"
    )
    parser.add_argument("--process-rounds", type=int, default=1, help="rounds of the process counts, in turn")
    args = parser.parse_args(argv)
    print(f"{os.cpu_count()} CPUs; load average {load()}", flush=True)
    results = asyncio.run(main_async(args))
    print(markdown(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
