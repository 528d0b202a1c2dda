"""The Benchmark page's shape sweep in a real browser at 1024 and 1440 px: the bundled H100 grid drawn as a heatmap
with its wave lines and as the winner map, no exception, no horizontal scroll; screenshots in
docs/screenshots/sweep-<width>.png."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser.app_page import assert_no_horizontal_scroll

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "docs" / "screenshots"


@pytest.mark.parametrize("width", [1024, 1440])
def test_shape_sweep_reads_at(width: int, browser, server) -> None:
    page = browser.new_page(viewport={"width": width, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(server, wait_until="domcontentloaded")
    page.get_by_text("No GPU found").wait_for(timeout=60_000)
    page.locator('[data-testid="stSidebarNav"] a', has_text="Benchmark").click()
    # drawn only while its expander is open (closed on arrival)
    sweep = page.locator('[data-testid="stExpander"] summary', has_text="Shape sweep")
    sweep.wait_for(timeout=60_000)
    sweep.click()
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .main-svg').length >= 4", timeout=60_000)
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(1500)
    body = page.locator("body").inner_text()
    assert page.locator('[data-testid="stException"]').count() == 0 and "Traceback" not in body
    plots = page.locator(".js-plotly-plot")
    heat = plots.nth(plots.count() - 2)
    assert "% of cuBLAS" in heat.inner_text() and "one more whole wave" in heat.inner_text()
    assert heat.locator(".heatmaplayer").count() == 1 and heat.locator(".scatterlayer .trace").count() >= 1
    winner = plots.nth(plots.count() - 1)
    assert "Fastest kernel per shape" in winner.inner_text()
    assert_no_horizontal_scroll(page, width)
    SHOTS.mkdir(parents=True, exist_ok=True)
    sweep.scroll_into_view_if_needed()
    height = page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    page.set_viewport_size({"width": width, "height": int(height) + 40})
    page.wait_for_timeout(1500)
    shot = SHOTS / f"sweep-{width}.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 50_000
    assert not errors, errors
    page.close()
