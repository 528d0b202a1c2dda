"""A run whose label, notes and device name are Markdown links, an image and HTML (the hostile corpus file
tests/fixtures/hostile/handmade_markdown_in_labels.runs.json) on the Review page in a real browser at 1024 and
1440 px: the not-comparable warning shows the label as text, and the page holds no link or image to the attacker's
host. Screenshots in docs/screenshots/review-hostile-labels-<width>.png."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from profiling.runs.export import read_runs_json
from profiling.runs.store import RunStore

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "docs" / "screenshots"
CORPUS_FILE = ROOT / "tests" / "fixtures" / "hostile" / "handmade_markdown_in_labels.runs.json"


@pytest.fixture(scope="module")
def hostile_server(tmp_path_factory: pytest.TempPathFactory, server_control) -> Iterator[str]:
    db = tmp_path_factory.mktemp("hostile") / "runs.sqlite"
    with RunStore(f"sqlite:///{db}") as store:
        store.import_runs(read_runs_json(CORPUS_FILE.read_bytes(), CORPUS_FILE.name))
    env = dict(os.environ)
    env.update(GEMMLENS_GPU="off", GEMMLENS_DB_PATH=str(db))
    env.pop("GEMMLENS_DB_URL", None)
    port = server_control.free_port()
    proc = server_control.start(port, env)
    yield f"http://127.0.0.1:{port}"
    server_control.stop(proc)


@pytest.mark.parametrize("width", [1024, 1440])
def test_hostile_labels_show_as_text(width: int, browser, hostile_server) -> None:
    page = browser.new_page(viewport={"width": width, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(hostile_server, wait_until="domcontentloaded")
    page.get_by_text("No GPU found").wait_for(timeout=60_000)
    page.locator('[data-testid="stSidebarNav"] a', has_text="Review").click()
    page.locator("h1", has_text="Review").wait_for(timeout=60_000)
    warning = page.locator('[data-testid="stAlertContentWarning"]', has_text="phish")
    warning.first.wait_for(timeout=60_000)
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(1500)
    shown = warning.first.inner_text().replace("\u2060", "")  # the invisible word joiner that stops autolinks
    assert shown.startswith("[phish](http://evil.example) ![px](http://evil.example/px.png)")
    assert page.locator('a[href*="evil.example"]').count() == 0
    assert page.locator('img[src*="evil.example"], img[src="x"]').count() == 0
    assert page.locator('[data-testid="stException"]').count() == 0
    SHOTS.mkdir(parents=True, exist_ok=True)
    height = page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    page.set_viewport_size({"width": width, "height": min(int(height) + 40, 12000)})
    page.wait_for_timeout(1500)
    shot = SHOTS / f"review-hostile-labels-{width}.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 50_000
    assert not errors, errors
    page.close()
