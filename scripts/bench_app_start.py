"""Benchmark (not a test): cold start to the first rendered page, and page switches, with bundled data.

Starts `streamlit run app.py` as a user would and drives headless Chromium (Debian's chromium package,
Playwright's sync API). Cold start = from launching the server process to the Overview page showing its
device table (its chart follows; also printed); a page switch = from clicking a sidebar link to that page's title and main content
(a chart with points, or its table) being drawn. Targets: cold start < 3 s, page switch < 1 s.

    python scripts/bench_app_start.py [--runs 3] [--gpu-off]

Without chromium or playwright it falls back to streamlit.testing's AppTest (script time only, no browser).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "browser"))

from conftest import CHROMIUM, CHROMIUM_ARGS, free_port, stop_server  # noqa: E402

# page link text -> CSS selector of content that proves the page is drawn
SWITCHES = {
    "Kernels": '[data-testid="stCode"]',
    "Benchmark": ".js-plotly-plot .point",
    "Roofline": ".js-plotly-plot .point",
    "Occupancy": ".js-plotly-plot .point",
    "Reports": ".js-plotly-plot .point",
    "Profile": '[data-testid="stDataFrame"]',
    "Review": '[data-testid="stAlert"], [data-testid="stDataFrame"]',
}


def wait_health(port: int, proc: subprocess.Popen, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("streamlit exited during start-up")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1) as r:
                if r.read().strip() == b"ok":
                    return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError("streamlit did not start")


def browser_run(browser, env: dict[str, str]) -> tuple[float, float, float, dict[str, float]]:
    """(cold start s, server ready s, whole Overview incl. its chart s, {page: switch s}) for one fresh server."""
    port = free_port()
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    t0 = time.perf_counter()
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
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_health(port, proc)
        ready = time.perf_counter() - t0
        page.goto(f"http://127.0.0.1:{port}/", wait_until="commit")
        page.locator('[data-testid="stMarkdown"] table').first.wait_for(timeout=60_000)
        cold = time.perf_counter() - t0
        page.locator(".js-plotly-plot .point").first.wait_for(timeout=60_000)
        drawn = time.perf_counter() - t0
        switches = {}
        for name, selector in SWITCHES.items():
            link = page.locator('[data-testid="stSidebarNav"] a', has_text=name).first
            t1 = time.perf_counter()
            link.click()
            page.wait_for_function(
                "([title, sel]) => { const h = document.querySelector('h1');"
                " return h && h.innerText.trim() === title && document.querySelector(sel) !== null; }",
                arg=[name, selector],
                timeout=30_000,
                polling="raf",
            )
            switches[name] = time.perf_counter() - t1
        return cold, ready, drawn, switches
    finally:
        page.close()
        stop_server(proc)


def apptest_run() -> tuple[float, dict[str, float]]:
    """Script-only timings: the Overview's first run, then each page's run (AppTest, no browser)."""
    t0 = time.perf_counter()
    AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    cold = time.perf_counter() - t0
    pages = {}
    for path in sorted((ROOT / "pages").glob("*.py")):
        t1 = time.perf_counter()
        AppTest.from_file(str(path), default_timeout=60).run()
        pages[path.stem.split("_", 1)[1]] = time.perf_counter() - t1
    return cold, pages


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="fresh servers to time (default 3)")
    parser.add_argument("--gpu-off", action="store_true", help="skip the GPU probe (GEMMLENS_GPU=off)")
    args = parser.parse_args()
    env = dict(os.environ)
    env["GEMMLENS_DB_PATH"] = str(Path(tempfile.mkdtemp(prefix="gemmlens-bench-")) / "runs.sqlite")
    if args.gpu_off:
        env["GEMMLENS_GPU"] = "off"
    try:  # optional: without Playwright the script falls back to AppTest timings
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    if sync_playwright is None or not os.path.exists(CHROMIUM):
        print("playwright or chromium missing: AppTest script timings only (no server, no browser)")
        os.environ.update(env)
        cold, pages = apptest_run()
        print(f"overview first run: {cold:.2f} s (target < 3 s)")
        for name, seconds in pages.items():
            print(f"  {name:<10} {seconds:.2f} s")
        return 0
    colds, readies, drawns, switches = [], [], [], {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        for _ in range(args.runs):
            cold, ready, drawn, times = browser_run(browser, env)
            colds.append(cold)
            drawns.append(drawn)
            readies.append(ready)
            for name, seconds in times.items():
                switches.setdefault(name, []).append(seconds)
        browser.close()
    print(
        f"GEMM Lens start-up and page switches, {args.runs} fresh server(s), bundled data, "
        f"GPU probe {'off' if args.gpu_off else 'on'}"
    )
    print(f"server ready (/_stcore/health): median {statistics.median(readies):.2f} s")
    print(
        f"cold start to Overview drawn:   median {statistics.median(colds):.2f} s, max {max(colds):.2f} s"
        f"  (target < 3 s)"
    )
    print(f"Overview complete (its chart drawn): median {statistics.median(drawns):.2f} s")
    print("page switch (click -> title and content drawn; first visit in a session, then cached):")
    worst = 0.0
    for name, values in switches.items():
        worst = max(worst, max(values))
        print(f"  {name:<10} median {statistics.median(values):.2f} s, max {max(values):.2f} s")
    print(f"worst page switch: {worst:.2f} s (target < 1 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
