"""The Indexing page in a real browser, no GPU: the ladder's two indexing lessons (v1 against v1-coalesced, v3
against v4) at 1024 and 1440 px: no exception, every picture drawn, no horizontal scroll; screenshots go to
docs/screenshots/indexing-*.png."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "docs" / "screenshots"

# page elements that must never scroll sideways: the document and Streamlit's main area
NO_SIDEWAYS_SCROLL = """() => [document.documentElement, document.querySelector('[data-testid="stMain"]'),
    document.querySelector('[data-testid="stAppViewContainer"]')].filter(Boolean)
    .filter(el => el.scrollWidth > el.clientWidth + 1).map(el => el.getAttribute('data-testid') || el.tagName)"""


@pytest.mark.parametrize("width", [1024, 1440])
@pytest.mark.parametrize("kernel,other", [("v3", "v4"), ("v1", "v1-coalesced")])
def test_indexing_page_pair(browser, server, kernel: str, other: str, width: int) -> None:
    page = browser.new_page(viewport={"width": width, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(server, wait_until="domcontentloaded")
    page.get_by_text("No GPU found").wait_for(timeout=60_000)
    page.locator('[data-testid="stSidebarNav"] a', has_text="Indexing").click()
    page.locator("h1", has_text="Indexing").wait_for(timeout=60_000)
    page.locator('[data-testid="stSelectbox"]', has_text="Kernel").click()
    page.get_by_role("option", name=kernel, exact=True).click()
    page.get_by_text(f"{kernel} at 1024 x 1024 x 1024").first.wait_for(timeout=90_000)
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .main-svg').length >= 2", timeout=90_000)
    # the sections are tabs, only the open one drawn: the comparison with the captures, then the warp lane by lane
    page.get_by_role("tab", name="Predicted against measured").click()
    page.get_by_text("agrees within").first.wait_for(timeout=60_000)
    page.locator('[data-testid="stDataFrame"]').first.wait_for(timeout=60_000)
    assert page.locator('[data-testid="stException"]').count() == 0
    page.get_by_role("tab", name="Lane by lane").click()
    page.get_by_text("Predicted, per instruction of this warp").wait_for(timeout=60_000)
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .main-svg').length >= 1", timeout=90_000)
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(1000)
    assert page.locator('[data-testid="stException"]').count() == 0
    body = page.locator("body").inner_text()
    assert f"{kernel}: " in body and f"{other}: " in body  # the instruction's cost for both kernels
    assert "tab=lane-by-lane" in page.url
    pair = page.locator(".js-plotly-plot").first
    titles = pair.evaluate("el => Array.from(el.querySelectorAll('text')).map(t => t.textContent)")
    assert any(t.startswith(f"{kernel}:") for t in titles) and any(t.startswith(f"{other}:") for t in titles)
    assert page.evaluate(NO_SIDEWAYS_SCROLL) == []
    SHOTS.mkdir(parents=True, exist_ok=True)
    # Streamlit scrolls inside its main area, so the whole page fits only in a viewport as tall as that area
    height = page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    page.set_viewport_size({"width": width, "height": min(int(height) + 40, 8000)})
    page.wait_for_timeout(1500)
    shot = SHOTS / f"indexing-{kernel}-vs-{other}-{width}.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 50_000
    assert not errors, errors
    page.close()
