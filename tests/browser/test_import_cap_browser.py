"""Review's run import in a real browser at 1024 and 1440 px: a file over the 25 MB cap is refused by the browser
itself (st.file_uploader's max_upload_size) with Streamlit's message, and no byte of it is sent to the server; a
real export under the cap is sent and offered for import. Screenshots in
docs/screenshots/review-import-cap-<width>.png."""

from __future__ import annotations

from pathlib import Path

import pytest

from profiling.runs.convert import read_run_file
from profiling.runs.export import MAX_IMPORT_BYTES, export_runs_json

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "docs" / "screenshots"
BENCH = ROOT / "results" / "h100-2026-11-24" / "sgemm95_round1" / "bench.json"


def _open_import(page, server: str) -> None:
    page.goto(server, wait_until="domcontentloaded")
    page.get_by_text("No GPU found").wait_for(timeout=60_000)
    page.locator('[data-testid="stSidebarNav"] a', has_text="Review").click()
    page.locator("h1", has_text="Review").wait_for(timeout=60_000)
    page.get_by_text("Add runs: bundled measurements or an exported JSON").click()
    page.get_by_text("Import runs (JSON exported from this page, up to 25 MB)").wait_for(timeout=60_000)


@pytest.mark.parametrize("width", [1024, 1440])
def test_an_import_over_the_cap_never_leaves_the_browser(width: int, browser, server, tmp_path: Path) -> None:
    page = browser.new_page(viewport={"width": width, "height": 900})
    errors: list[str] = []
    sent: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("request", lambda request: sent.append(request.url) if "upload_file" in request.url else None)
    _open_import(page, server)

    big = tmp_path / "runs.json"
    with big.open("wb") as fh:  # one byte over the cap; what it holds is never read
        fh.truncate(MAX_IMPORT_BYTES + 1)
    page.locator('input[type="file"]').first.set_input_files(str(big))
    refusal = page.get_by_text("File must be 25.0MB or smaller.")
    refusal.wait_for(timeout=30_000)
    page.wait_for_timeout(1500)
    assert sent == []
    assert page.get_by_role("button", name="Import", exact=True).count() == 0
    page.get_by_text("runs.json", exact=True).hover()  # the refused file's chip shows the message on hover
    page.wait_for_timeout(1000)
    SHOTS.mkdir(parents=True, exist_ok=True)
    shot = SHOTS / f"review-import-cap-{width}.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 20_000

    # The same field takes a real export under the cap: it is sent, and Import is offered.
    small = tmp_path / "export.json"
    small.write_text(export_runs_json([read_run_file(BENCH)]))
    page.reload(wait_until="domcontentloaded")
    _open_import(page, server)
    page.locator('input[type="file"]').first.set_input_files(str(small))
    page.get_by_role("button", name="Import", exact=True).wait_for(timeout=60_000)
    assert any("upload_file" in url for url in sent)
    assert not errors, errors
    page.close()
