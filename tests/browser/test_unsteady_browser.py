"""The Benchmark page's % of cuBLAS bars over an unsteady cuBLAS, in a real browser at 1024 and 1440 px: on the
bundled H100 split-K run (h100-2026-11-25/splitk_v9), cuBLAS's launches at 64x64x8191 were unsteady (p90 1.9x p10),
so the bars there are hatched and the note under the chart's title says why and what to do; no exception, no
horizontal scroll. Screenshots of the chart in docs/screenshots/pct-unsteady-<width>.png."""

from __future__ import annotations

from pathlib import Path

import pytest

from profiling.charts.bench import UNSTEADY_LEGEND
from tests.browser.app_page import assert_no_horizontal_scroll, open_with_bundle

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "docs" / "screenshots"
BUNDLE = "h100-2026-11-25/splitk_v9"


@pytest.mark.parametrize("width", [1024, 1440])
def test_bars_over_an_unsteady_cublas_read_as_such_at(width: int, browser, server) -> None:
    page = browser.new_page(viewport={"width": width, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    open_with_bundle(page, server, BUNDLE)
    page.locator('[data-testid="stSidebarNav"] a', has_text="Benchmark").click()
    chart = page.locator(".st-key-pct_cublas .js-plotly-plot")
    chart.wait_for(timeout=60_000)
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(1500)
    body = page.locator("body").inner_text()
    assert page.locator('[data-testid="stException"]').count() == 0 and "Traceback" not in body
    title = chart.locator(".gtitle").text_content() or ""
    assert "Hatched: cuBLAS's own launches were unsteady" in title and UNSTEADY_LEGEND.endswith("rerun")
    # Six bars carry a hatch pattern (plotly draws it as an SVG pattern fill): the six kernels at 64x64x8191, drawn
    # over their plain bars; the legend's swatches stay plain.
    hatched = chart.locator(".bars path[style*='url(']")
    assert hatched.count() == 6
    assert chart.locator(".legend path[style*='url(']").count() == 0
    assert_no_horizontal_scroll(page, width)
    chart.scroll_into_view_if_needed()
    SHOTS.mkdir(parents=True, exist_ok=True)
    shot = SHOTS / f"pct-unsteady-{width}.png"
    chart.screenshot(path=str(shot))
    assert shot.stat().st_size > 20_000
    assert not errors, errors
    page.close()
