"""The Why page in a real browser at 1024 and 1440 px: no exception, no horizontal scroll; the stall chart on
arrival, the source view and the explanation each a tab away, the address bar following the tab; screenshots in
docs/screenshots/why-<width>.png (arrival) and why-explain-<width>.png; the static SASS in static-sass-<width>.png."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser.app_page import assert_no_horizontal_scroll, open_with_bundle

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "docs" / "screenshots"


@pytest.mark.parametrize("width", [1024, 1440])
def test_why_page_reads_at(width: int, browser, server) -> None:
    page = browser.new_page(viewport={"width": width, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    open_why(page, server)
    # On arrival: the stall breakdown only, one chart.
    page.locator(".js-plotly-plot .main-svg").first.wait_for(timeout=60_000)
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(1500)
    bars = page.locator(".js-plotly-plot").first.locator(".barlayer .trace")
    assert bars.count() >= 5  # one trace per stall reason shown
    assert "Hottest lines (top 10 by warp-stall samples)" not in page.locator("body").inner_text()
    _check(page, width)
    _shot(page, f"why-{width}.png", width)
    page.get_by_role("tab", name="Source and SASS hot spots").click()
    page.get_by_text("Hottest lines (top 10 by warp-stall samples)").wait_for(timeout=60_000)
    page.wait_for_function("() => location.search.includes('tab=source-and-sass-hot-spots')", timeout=30_000)
    _check(page, width)
    page.get_by_role("tab", name="Explain a step").click()
    # The default sidebar bundle is an H200's, so the default capture is the H200's own (results/h200-2026-11-29/why/):
    # its one step, wgmma-staged -> wgmma-streamk, 412.6 us -> 391.9 us in its raw CSV.
    page.get_by_text("wgmma-staged → wgmma-streamk: time -5% (412.6 → 391.9 us)").wait_for(timeout=60_000)
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .main-svg').length >= 1", timeout=60_000)
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(1500)
    assert "What moved, ranked by how much of the time it explains" in page.locator("body").inner_text()
    _check(page, width)
    _shot(page, f"why-explain-{width}.png", width)
    page.get_by_role("tab", name="Warp-stall breakdown").click()
    page.wait_for_function("() => !location.search.includes('tab=')", timeout=30_000)
    assert not errors, errors
    page.close()


def open_why(page, server: str) -> None:
    """The app first, then the Why page through the sidebar: a server's very first run of a deep link (/Why) can run
    the page without app.py."""
    open_with_bundle(page, server, None)
    page.locator('[data-testid="stSidebarNav"] a', has_text="Why").click()
    page.locator("h1", has_text="Why").wait_for(timeout=60_000)


def _check(page, width: int) -> None:
    body = page.locator("body").inner_text()
    assert page.locator('[data-testid="stException"]').count() == 0
    assert "Traceback" not in body
    assert_no_horizontal_scroll(page, width)


def _shot(page, name: str, width: int) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    shot = SHOTS / name
    # Streamlit scrolls inside its main section, so a full-page shot needs a viewport as tall as that section.
    height = page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    page.set_viewport_size({"width": width, "height": int(height) + 40})
    page.wait_for_timeout(1500)
    page.screenshot(path=str(shot), full_page=True)
    page.set_viewport_size({"width": width, "height": 900})
    assert shot.stat().st_size > 50_000


@pytest.mark.parametrize("width", [1024, 1440])
def test_the_cluster_step_s_capture_explains_it_by_link(width: int, browser, server) -> None:
    """A link to results/h200-2026-11-29/why_cluster's capture opens its one step, wgmma-streamk ->
    wgmma-streamk-cluster (1,503.3 -> 1,495.5 us in its raw CSV); screenshot why-cluster-explain-<width>.png."""
    from urllib.parse import urlencode

    page = browser.new_page(viewport={"width": width, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    open_with_bundle(page, server, None)  # the app's frame before the deep link, as in open_why
    query = urlencode(
        {"data": "measured h200-2026-11-29/why_cluster: why_streamk_cluster_8192", "tab": "explain-a-step"}
    )
    page.goto(f"{server}/Why?{query}", wait_until="domcontentloaded")
    page.get_by_text("wgmma-streamk → wgmma-streamk-cluster: time -1% (1,503.3 → 1,495.5 us)").wait_for(timeout=60_000)
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .main-svg').length >= 1", timeout=60_000)
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(1500)
    body = page.locator("body").inner_text()
    assert "instructions issued 182.17M → 195.97M" in body
    # Time is cycles over clock: this step took more cycles and won on the clock.
    assert "cycles +0.7% at a +1.2% SM clock (1.480 → 1.498 GHz)" in body
    _check(page, width)
    _shot(page, f"why-cluster-explain-{width}.png", width)
    assert not errors, errors
    page.close()


@pytest.mark.parametrize("width", [1024, 1440])
def test_the_grid_misses_capture_compares_cublas_with_sgemm_auto(width: int, browser, server) -> None:
    """A link to results/h200-2026-11-29/why_misses's capture (cuBLAS and sgemm-auto at three shapes, two of one M)
    opens "any two launches" at cuBLAS against sgemm-auto at 333x127x4096, GEMM against GEMM (15.0 -> 21.0 us), not
    against cuBLAS's reduction or sgemm-auto's zeroing of C; screenshot why-misses-explain-<width>.png."""
    from urllib.parse import urlencode

    page = browser.new_page(viewport={"width": width, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    open_with_bundle(page, server, None)  # the app's frame before the deep link, as in open_why
    query = urlencode({"data": "measured h200-2026-11-29/why_misses: why_misses", "tab": "explain-a-step"})
    page.goto(f"{server}/Why?{query}", wait_until="domcontentloaded")
    page.get_by_text("cublas → sgemm-auto: time +40% (15.0 → 21.0 us)").wait_for(timeout=60_000)
    # The two launch pickers can show their values a rerun after the summary (a clean clone's CI missed them twice
    # after 1.5 s): wait for them, up to a minute, instead of reading the page once.
    page.wait_for_function(
        "() => ['cublas @ 333x127x4096', 'sgemm-auto @ 333x127x4096'].every(t => document.body.innerText.includes(t))",
        timeout=60_000,
    )
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(1500)
    body = page.locator("body").inner_text()
    assert "cublas @ 333x127x4096" in body and "sgemm-auto @ 333x127x4096" in body
    assert "schedulers active 84% → 66% of the elapsed time" in body
    _check(page, width)
    _shot(page, f"why-misses-explain-{width}.png", width)
    assert not errors, errors
    page.close()


@pytest.mark.parametrize("width", [1024, 1440])
def test_the_static_sass_shows_the_code_size_at(width: int, browser, server) -> None:
    """The source view's static SASS of the default capture's kernel: the instruction mix, ending with the code's size
    in KB (whole kernel and main loop), above the per-line table, with no horizontal scroll. Screenshot
    docs/screenshots/static-sass-<width>.png."""
    page = browser.new_page(viewport={"width": width, "height": 1100})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    open_why(page, server)
    page.get_by_role("tab", name="Source and SASS hot spots").click()
    page.get_by_text("Hottest lines (top 10 by warp-stall samples)").wait_for(timeout=60_000)
    page.get_by_text("Static SASS and instruction mix").click()
    heading = page.locator("h3", has_text="Static SASS of")
    heading.wait_for(timeout=180_000)
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(2000)
    _check(page, width)
    heading.evaluate("e => e.scrollIntoView({block: 'start'})")  # heading and mix inside the viewport, to clip them
    page.wait_for_timeout(500)
    top = heading.bounding_box()
    frames = [f.bounding_box() for f in page.locator('[data-testid="stDataFrame"]').all()]
    below = sorted((f for f in frames if f and f["y"] > top["y"]), key=lambda f: f["y"])
    mix, lines = below[0], below[1]
    # The mix shows all 12 rows (the code's size last) at the page's width, and the per-line table comes under it.
    assert mix["height"] == 35 * 13 + 3 and lines["y"] > mix["y"] + mix["height"]
    assert mix["width"] == lines["width"]
    SHOTS.mkdir(parents=True, exist_ok=True)
    shot = SHOTS / f"static-sass-{width}.png"
    clip = {"x": mix["x"], "y": top["y"], "width": mix["width"], "height": mix["y"] + mix["height"] - top["y"]}
    page.mouse.move(0, 0)  # the grid's hover toolbar would cover the last row's values
    page.wait_for_timeout(300)
    page.screenshot(path=str(shot), clip=clip)
    assert shot.stat().st_size > 20_000
    assert not errors, errors
    page.close()
