"""The Benchmark page's A/B form in a real browser at 1024 and 1440 px: choosing A/B shows the two kernel pickers and
the rest before each pair (0 s by default, up to 60), beside sizes and repeats in one row, with no exception and no
horizontal scroll; screenshots in docs/screenshots/benchmark-ab-<width>.png."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser.app_page import assert_no_horizontal_scroll

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "docs" / "screenshots"


@pytest.mark.parametrize("width", [1024, 1440])
def test_the_ab_form_offers_a_rest_before_each_pair(width: int, browser, server) -> None:
    page = browser.new_page(viewport={"width": width, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(server, wait_until="domcontentloaded")
    page.get_by_text("No GPU found").wait_for(timeout=60_000)
    page.locator('[data-testid="stSidebarNav"] a', has_text="Benchmark").click()
    page.get_by_text("A/B", exact=True).wait_for(timeout=60_000)
    page.get_by_text("A/B", exact=True).click()
    rest = page.locator('input[aria-label="Rest before each pair (s)"]')
    rest.wait_for(timeout=60_000)
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(1000)
    assert rest.input_value() == "0.00"
    assert page.locator('input[aria-label="Repeats"]').input_value() == "30"
    form = page.locator('[data-testid="stForm"]').first
    assert "A (baseline)" in form.inner_text() and "B (candidate)" in form.inner_text()
    # Sizes, repeats and the rest share one row: their tops line up.
    tops = [
        page.locator(f'input[aria-label="{label}"]').bounding_box()["y"]
        for label in ("Square sizes (comma list)", "Repeats", "Rest before each pair (s)")
    ]
    assert max(tops) - min(tops) < 2, tops
    body = page.locator("body").inner_text()
    assert page.locator('[data-testid="stException"]').count() == 0 and "Traceback" not in body
    assert_no_horizontal_scroll(page, width)
    SHOTS.mkdir(parents=True, exist_ok=True)
    shot = SHOTS / f"benchmark-ab-{width}.png"
    form.screenshot(path=str(shot))
    assert shot.stat().st_size > 10_000
    assert not errors, errors
    page.close()
