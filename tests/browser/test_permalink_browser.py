"""A copied Review link opened in a real browser at 1024 and 1440 px, as a colleague would: the link is the first
request a fresh server sees (the page runs without the frame first, then inside it, and the query string must
survive both switches). The "Open / delete" tab opens on the linked run with its comments; changing the run updates
the address bar. Screenshots in docs/screenshots/review-link-<width>.png."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from profiling.app import bundles
from profiling.runs.store import RunStore
from profiling.team.roles import Identity
from tests.browser.app_page import assert_no_horizontal_scroll, choose_section, chosen_section

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "docs" / "screenshots"
RUI = Identity("rui@example.com", "runner", "Rui")


@pytest.fixture
def linked_server(tmp_path: Path, server_control) -> Iterator[tuple[str, list[int]]]:
    """A fresh server on a store holding the bundled H200 runs, the second with two comments."""
    db = tmp_path / "runs.sqlite"
    with RunStore(f"sqlite:///{db}") as store:
        h200 = next(b for b in bundles.discover_bundles() if b.name == "h200-2026-11-22")
        ids = store.import_runs(bundles.bundled_runs(h200))
        run = store.read_run(ids[1])
        store.add_comment(ids[1], "The 4096 numbers look capped: clocks were locked lower that day.", actor=RUI)
        launch = f"{run.results[0].kernel} {run.results[0].size}"
        store.add_comment(ids[1], "<b>not bold</b>: check the L2 hit rate here.", launch=launch, actor=RUI)
    env = dict(os.environ)
    env.update(GEMMLENS_GPU="off", GEMMLENS_DB_PATH=str(db))
    env.pop("GEMMLENS_DB_URL", None)
    port = server_control.free_port()
    proc = server_control.start(port, env)
    yield f"http://127.0.0.1:{port}", ids
    server_control.stop(proc)


@pytest.mark.parametrize("width", [1024, 1440])
def test_a_review_link_opens_the_same_view(width: int, browser, linked_server) -> None:
    server, ids = linked_server
    page = browser.new_page(viewport={"width": width, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{server}/Review?tab=open-delete&open={ids[1]}", wait_until="domcontentloaded")
    page.locator("h1", has_text="Review").wait_for(timeout=90_000)
    page.get_by_text(f"Comments on run #{ids[1]}").wait_for(timeout=60_000)
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(1500)
    body = page.locator("body").inner_text()
    assert page.locator('[data-testid="stException"]').count() == 0 and "Traceback" not in body
    assert chosen_section(page) == "Open / delete"
    assert "The 4096 numbers look capped" in body and "<b>not bold</b>: check the L2 hit rate" in body
    assert "rui@example.com" in body.replace("\u2060", "")  # a word joiner keeps the address from linking
    assert "tab=open-delete" in page.url and f"open={ids[1]}" in page.url
    assert_no_horizontal_scroll(page, width)
    SHOTS.mkdir(parents=True, exist_ok=True)
    height = page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    page.set_viewport_size({"width": width, "height": min(int(height) + 40, 12000)})
    page.wait_for_timeout(1500)
    shot = SHOTS / f"review-link-{width}.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 30_000
    # Another section: the address bar follows, and a comment being written waits for the reader's return (Open is
    # drawn only while chosen; the box sends its text when it loses focus).
    page.get_by_role("textbox", name="Comment").fill("half a thought")
    choose_section(page, "History")
    page.wait_for_function("() => location.search.includes('tab=history')", timeout=30_000)
    page.get_by_text(f"Comments on run #{ids[1]}").wait_for(state="detached", timeout=30_000)
    choose_section(page, "Open / delete")
    page.get_by_text(f"Comments on run #{ids[1]}").wait_for(timeout=30_000)
    assert page.get_by_role("textbox", name="Comment").input_value() == "half a thought"
    assert not errors, errors
    page.close()
