"""The Details page in a real browser at 1024 and 1440 px, on the bundled v4 `.ncu-rep` (read by the ncu-report
wheel, no ncu): the Details view, the metric browser and the comparison; and the Why page's source view with a
column per stall reason. Screenshots in docs/screenshots/details-*-<width>.png."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.browser.app_page import assert_no_horizontal_scroll, open_with_bundle

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "docs" / "screenshots"


def _open(browser, server, width: int, title: str, bundle: str | None = None):
    """`title`'s page, reached through the sidebar; with `bundle`, that bundle chosen in the sidebar (by the link)."""
    page = browser.new_page(viewport={"width": width, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    open_with_bundle(page, server, bundle)
    page.locator('[data-testid="stSidebarNav"] a', has_text=title).click()
    page.locator("h1", has_text=title).wait_for(timeout=60_000)
    return page, errors


def _shot(page, name: str) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    shot = SHOTS / name
    width = page.viewport_size["width"]
    # Streamlit scrolls inside its main section, so a full-page shot needs a viewport as tall as that section.
    height = page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    page.set_viewport_size({"width": width, "height": min(int(height) + 40, 6000)})
    page.wait_for_timeout(1500)
    page.screenshot(path=str(shot), full_page=True)
    page.set_viewport_size({"width": width, "height": 900})
    return shot


def _no_errors(page, errors: list[str], width: int) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0
    assert "Traceback" not in page.locator("body").inner_text()
    assert_no_horizontal_scroll(page, width)
    assert not errors, errors


@pytest.mark.parametrize("width", [1024, 1440])
def test_details_metrics_and_compare_tabs_read_at(width: int, browser, server) -> None:
    # The H200 bundle results/h200-2026-11-22: its CSV captures are compared below (the newest bundle, the default, has none).
    page, errors = _open(browser, server, width, "Details", bundle="h200-2026-11-22")
    page.get_by_text("Rules (19), largest estimated speedup first").wait_for(timeout=60_000)
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .main-svg').length >= 3", timeout=60_000)
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(1500)
    body = page.locator("body").inner_text()
    assert "limited by registers" in body and "HighPipeUtilization" in body
    chart = page.locator(".js-plotly-plot", has_text="Memory chart")
    assert chart.locator(".annotation").count() >= 9  # five boxes and four flows
    _no_errors(page, errors, width)
    assert _shot(page, f"details-{width}.png").stat().st_size > 50_000

    page.get_by_role("tab", name="Metrics").click()
    box = page.get_by_label("Search metric name or label")
    box.fill("l2 hit rate")
    box.press("Enter")
    page.get_by_text("1 of 2,212 metrics").wait_for(timeout=60_000)
    page.wait_for_timeout(1500)
    _no_errors(page, errors, width)
    assert _shot(page, f"details-metrics-{width}.png").stat().st_size > 30_000

    # The bundled CSV captures hold ten launches of the ladder: compare two of them.
    page.locator('[data-testid="stSelectbox"]', has_text="Data").click()
    page.get_by_role("option", name=re.compile("ncu CSV captures")).click()
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(2000)
    assert "details_source=" in page.url  # the selection is in the link (bind="query-params")
    page.get_by_role("tab", name="Compare launches").click()
    page.get_by_text("Green: better by the metric's direction").wait_for(timeout=60_000)
    page.wait_for_timeout(1500)
    _no_errors(page, errors, width)
    assert _shot(page, f"details-compare-{width}.png").stat().st_size > 30_000
    page.close()


@pytest.mark.parametrize("width", [1024, 1440])
def test_why_source_view_has_stall_columns_at(width: int, browser, server) -> None:
    page, errors = _open(browser, server, width, "Why")
    page.get_by_role("tab", name="Source and SASS hot spots").click()
    page.get_by_text("Source, line by line").first.wait_for(timeout=60_000)
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(1500)
    heading = page.get_by_text("Source, line by line").first
    heading.scroll_into_view_if_needed()
    page.wait_for_timeout(1000)
    _no_errors(page, errors, width)
    SHOTS.mkdir(parents=True, exist_ok=True)
    shot = SHOTS / f"why-source-columns-{width}.png"
    # The grid draws its cells on a canvas: the screenshot, read by eye, shows the per-reason columns.
    page.screenshot(path=str(shot), full_page=False)
    assert shot.stat().st_size > 30_000
    page.close()
