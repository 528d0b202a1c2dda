"""The Benchmark page's split of a timing in rounds by the kernel run just before each launch, in a real browser at
1024 and 1440 px, on the bundled H200 grid timed in rounds (session 30): the expander opens on the table, whose
columns fit without a horizontal scroll of the page. Screenshots of the opened section in
docs/screenshots/rounds-split-<width>.png."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser.app_page import assert_no_horizontal_scroll, open_with_bundle

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "docs" / "screenshots"
BUNDLE = "h200-2026-11-30/grid_interleaved"
LABEL = "Launches by the kernel run just before them (timed in rounds)"


@pytest.mark.parametrize("width", [1024, 1440])
def test_the_split_opens_under_the_results_at(width: int, browser, server) -> None:
    page = browser.new_page(viewport={"width": width, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    open_with_bundle(page, server, BUNDLE)
    page.locator('[data-testid="stSidebarNav"] a', has_text="Benchmark").click()
    expander = page.locator('[data-testid="stExpander"]', has_text=LABEL)
    expander.wait_for(timeout=60_000)
    expander.get_by_text(LABEL).click()
    grid = expander.locator('[data-testid="stDataFrame"]')
    grid.wait_for(timeout=60_000)
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(1500)
    body = page.locator("body").inner_text()
    assert page.locator('[data-testid="stException"]').count() == 0 and "Traceback" not in body
    assert "same code: true" in expander.inner_text()
    assert_no_horizontal_scroll(page, width)
    SHOTS.mkdir(parents=True, exist_ok=True)
    shot = SHOTS / f"rounds-split-{width}.png"
    expander.screenshot(path=str(shot))
    assert shot.stat().st_size > 20_000
    assert not errors, errors
    page.close()
