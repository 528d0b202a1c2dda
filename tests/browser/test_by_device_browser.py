"""The Review page's "By device" tab in a real browser at 1024 and 1440 px, on a store holding one mixed H100 + H200
sweep built from real measurements (tests/test_review_by_device.py explains the derived host/GPU tags): the table
and the grouped bar chart render, no exception, no horizontal scroll; screenshots in
docs/screenshots/review-by-device-<width>.png."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from profiling.runs.store import RunStore
from tests.browser.app_page import assert_no_horizontal_scroll, choose_section
from tests.test_review_by_device import mixed_shares, sweep_run

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "docs" / "screenshots"


@pytest.fixture(scope="module")
def mixed_server(tmp_path_factory: pytest.TempPathFactory, server_control) -> Iterator[str]:
    db = tmp_path_factory.mktemp("bydevice") / "runs.sqlite"
    with RunStore(f"sqlite:///{db}") as store:
        sweep_run(mixed_shares(), store)
    env = dict(os.environ)
    env.update(GEMMLENS_GPU="off", GEMMLENS_DB_PATH=str(db))
    env.pop("GEMMLENS_DB_URL", None)
    port = server_control.free_port()
    proc = server_control.start(port, env)
    yield f"http://127.0.0.1:{port}"
    server_control.stop(proc)


@pytest.mark.parametrize("width", [1024, 1440])
def test_by_device_tab_reads_at(width: int, browser, mixed_server) -> None:
    page = browser.new_page(viewport={"width": width, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(mixed_server, wait_until="domcontentloaded")
    page.get_by_text("No GPU found").wait_for(timeout=60_000)
    page.locator('[data-testid="stSidebarNav"] a', has_text="Review").click()
    page.locator("h1", has_text="Review").wait_for(timeout=60_000)
    choose_section(page, "By device")
    # The section is drawn only once chosen: wait for its own chart (Compare's charts were in the page).
    page.locator(".js-plotly-plot", has_text="GPU model").locator(".main-svg").first.wait_for(timeout=60_000)
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(1500)
    body = page.locator("body").inner_text()
    assert page.locator('[data-testid="stException"]').count() == 0 and "Traceback" not in body
    assert "H100 80GB HBM3" in body and "H200" in body  # the caption names both GPU models
    chart = page.locator(".js-plotly-plot", has_text="GPU model")
    assert chart.count() == 1 and "TFLOP/s" in chart.inner_text() and chart.locator(".barlayer .trace").count() == 2
    assert_no_horizontal_scroll(page, width)
    SHOTS.mkdir(parents=True, exist_ok=True)
    height = page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    page.set_viewport_size({"width": width, "height": min(int(height) + 40, 12000)})
    page.wait_for_timeout(1500)
    shot = SHOTS / f"review-by-device-{width}.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 50_000
    assert not errors, errors
    page.close()
