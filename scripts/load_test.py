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

    python scripts/load_test.py                        # 1, 10 and 20 people, upload, then 3 minutes of leave
    python scripts/load_test.py --people 20 --no-upload --watch 0
    python scripts/load_test.py --url http://host:8501 --people 5 --no-upload --watch 0

Prints one JSON line per scenario and a Markdown table at the end; the load average is printed beside each result
(this machine's CPUs are shared).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
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


def start_server(port: int, db_path: Path, extra_args: list[str]) -> subprocess.Popen:
    """`streamlit run app.py` headless, GPU work off, on a seeded temporary run store; returns once healthy."""
    store = RunStore(f"sqlite:///{db_path}")
    for bundle in discover_bundles():
        store.import_runs(bundled_runs(bundle))
    store.close()
    env = {**os.environ, "GEMMLENS_GPU": "off", "GEMMLENS_DB_PATH": str(db_path)}
    env.pop("GEMMLENS_DB_URL", None)
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
           "--server.port", str(port), "--server.address", "127.0.0.1", *extra_args]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"streamlit exited: {proc.stderr.read().decode()[-2000:]}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/_stcore/health", timeout=1).text.strip() == "ok":
                return proc
        except httpx.HTTPError:
            time.sleep(0.1)
    raise SystemExit("streamlit did not start in 60 s")


class MemorySampler:
    """RSS of a process and its children, sampled every `period_s` in a thread; keeps the peak."""

    def __init__(self, pid: int | None, period_s: float = 0.25) -> None:
        self.proc = psutil.Process(pid) if pid else None
        self.period_s, self.peak, self._stop = period_s, 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def rss(self) -> int:
        if self.proc is None:
            return 0
        total = 0
        for p in [self.proc, *self.proc.children(recursive=True)]:
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
        times = self.proc.cpu_times()
        return times.user + times.system

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

    async def __aenter__(self) -> Person:
        self.http = httpx.AsyncClient(base_url=self.base, timeout=120)
        await self.http.get("/_stcore/health")  # sets the XSRF cookie, as the page load does in a browser
        self.ws = await connect(self.base.replace("http", "ws", 1) + "/_stcore/stream", subprotocols=["streamlit"],
                                max_size=None, open_timeout=60, ping_interval=None)  # fmt: skip
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.ws.close()
        await self.http.aclose()

    async def visit(self, page: str = "", widget_states: list[Any] | None = None) -> float:
        """Run `page` (its name; "" = the default page) and wait for its script to finish; returns seconds."""
        msg = BackMsg()
        msg.rerun_script.query_string = ""
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
        fwd.ParseFromString(await asyncio.wait_for(self.ws.recv(), timeout=300))
        kind = fwd.WhichOneof("type")
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
        put = await self.http.put(urls.upload_url, files={"file": (name, data, "text/csv")},
                                  headers={"X-Xsrftoken": xsrf} if xsrf else {})  # fmt: skip
        put.raise_for_status()
        state = BackMsg().rerun_script.widget_states.widgets.add()
        state.id = self.uploader_id
        info = state.file_uploader_state_value.uploaded_file_info.add()
        info.name, info.size, info.file_id = name, len(data), urls.file_id
        info.file_urls.CopyFrom(urls)
        return await self.visit("Reports", [state])


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
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * len(ordered))) - 1)]
    return {"visits": len(times), "p50_s": round(statistics.median(ordered), 3), "p95_s": round(p95, 3),
            "max_s": round(ordered[-1], 3)}  # fmt: skip


def load() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


async def tour_scenario(base: str, people: int, tours: int, memory: MemorySampler) -> dict[str, Any]:
    memory.reset_peak()
    visits: list[float] = []
    by_page: dict[str, list[float]] = {}
    crowd = [Person(base) for _ in range(people)]
    for p in crowd:
        await p.__aenter__()
    try:
        await asyncio.gather(*(p.visit() for p in crowd))  # the landing page gives the page list
        start, cpu = time.perf_counter(), memory.cpu_s()
        await asyncio.gather(*(tour(p, tours, visits, by_page=by_page) for p in crowd))
        wall, cpu = time.perf_counter() - start, memory.cpu_s() - cpu
        held = memory.rss()
    finally:
        for p in crowd:
            await p.__aexit__()
    errors = sum(len(p.errors) for p in crowd)
    return {"scenario": f"tour x{people}", **summary(visits), "visits_per_s": round(len(visits) / wall, 2),
            "server_cpu_ms_per_visit": round(1000 * cpu / max(1, len(visits))),
            "errors": errors, "peak_rss_mb": round(memory.peak / 1e6), "rss_connected_mb": round(held / 1e6),
            "p50_by_page_s": {k: round(statistics.median(v), 3) for k, v in by_page.items()}, "load": load()}  # fmt: skip


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
    return {"scenario": f"upload {len(data) / 1e6:.0f} MB x{uploaders} (+{bystanders} touring)",
            "upload_visit_s": [round(t, 2) for t in upload_times], "roofline_after_upload_s": [round(t, 2) for t in
            roofline_times], "bystanders": summary(bystander_visits), "errors": len(errors),
            "first_error": errors[0] if errors else None, "rss_before_mb": round(before / 1e6),
            "peak_rss_mb": round(memory.peak / 1e6), "rss_held_mb": round(held / 1e6),
            "held_per_file_size": round((held - before) / len(data), 2), "load": load()}  # fmt: skip


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
    return {"scenario": "after everyone left", "idle_rss_mb": round(idle / 1e6), "samples_s_mb": samples,
            "within_100mb_of_idle_after_s": back_at, "load": load()}  # fmt: skip


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


async def main_async(args: argparse.Namespace) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    tmp = Path(tempfile.mkdtemp(prefix="gemmlens-load-"))
    proc = None
    if args.url:
        base, pid = args.url.rstrip("/"), args.server_pid
    else:
        port = free_port()
        proc = start_server(port, tmp / "runs.sqlite", args.server_arg)
        base, pid = f"http://127.0.0.1:{port}", proc.pid
    memory = MemorySampler(pid)
    try:
        async with Person(base) as warm:  # fills the server-wide caches of the bundled data, as a first visitor
            await warm.visit()
            await tour(warm, 1, [])
        await asyncio.sleep(3)
        idle = memory.rss()
        print(json.dumps({"scenario": "idle after one warm-up tour", "rss_mb": round(idle / 1e6), "load": load()}))
        for people in args.people:
            results.append(await tour_scenario(base, people, args.tours, memory))
            print(json.dumps(results[-1]), flush=True)
        if not args.no_upload:
            data = upload_file(args.upload_mb)
            results.append(await upload_scenario(base, args.uploaders, args.bystanders, data, memory))
            print(json.dumps(results[-1]), flush=True)
            held = held_by_parsed_upload(data)
            print(json.dumps({"scenario": "one parse in a fresh process", **held, "load": load()}), flush=True)
            del data
        if args.watch:
            results.append(leave_watch(memory, idle, args.watch))
            print(json.dumps(results[-1]), flush=True)
    finally:
        memory.stop()
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=30)
        for f in tmp.iterdir():
            f.unlink()
        tmp.rmdir()
    return results


def markdown(results: list[dict[str, Any]]) -> str:
    rows = ["| scenario | visits | p50 (s) | p95 (s) | max (s) | errors | peak RSS (MB) | load avg |",
            "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for r in results:
        if "visits" in r or "bystanders" in r:
            s = r.get("bystanders", r)
            rows.append(f"| {r['scenario']} | {s.get('visits', 0)} | {s.get('p50_s', '')} | {s.get('p95_s', '')} | "
                        f"{s.get('max_s', '')} | {r['errors']} | {r['peak_rss_mb']} | {r['load']} |")  # fmt: skip
    return "\n".join(rows)


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
    args = parser.parse_args(argv)
    print(f"{os.cpu_count()} CPUs; load average {load()}", flush=True)
    results = asyncio.run(main_async(args))
    print(markdown(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
