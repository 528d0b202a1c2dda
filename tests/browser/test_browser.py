"""The app in a real browser: upload a real ncu CSV and see the roofline; open an exported review offline."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from profiling import charts
from profiling.analysis.ceilings import recorded_device_ceilings
from profiling.app import bundles
from profiling.runs import review

ROOT = Path(__file__).resolve().parents[2]
RAW_CSV = ROOT / "tests" / "fixtures" / "ncu" / "raw.csv"
SCREENSHOT = ROOT / "docs" / "screenshot-reports.png"


PAGES = ["Overview", "Kernels", "Benchmark", "Profile", "Roofline", "Occupancy", "Why", "Indexing", "Reports", "Review"]


def test_sidebar_lists_every_page_and_each_opens(browser, server) -> None:
    page = browser.new_page(viewport={"width": 1024, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(server, wait_until="domcontentloaded")
    page.get_by_text("No GPU found").wait_for(timeout=30_000)
    links = page.locator('[data-testid="stSidebarNav"] a')
    # each link reads "<icon ligature>\n<title>": the frame names its start page Overview, not "app"
    assert [links.nth(i).inner_text().splitlines()[-1] for i in range(links.count())] == PAGES
    for title in PAGES[1:]:
        page.locator('[data-testid="stSidebarNav"] a', has_text=title).click()
        page.locator("h1", has_text=title).wait_for(timeout=30_000)
        page.wait_for_load_state("networkidle")
        assert page.locator('[data-testid="stException"]').count() == 0, title
        assert page.title() == f"{title} · GEMM Lens"
    assert not errors, errors
    page.close()


def test_upload_shows_roofline(browser, server) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{server}/Reports", wait_until="domcontentloaded")
    page.get_by_text("Key metrics").first.wait_for(timeout=30_000)
    page.locator('input[type="file"]').first.set_input_files(str(RAW_CSV))
    page.get_by_text("1 uploaded report(s)").wait_for(timeout=30_000)
    plot = page.locator(".js-plotly-plot").first
    plot.wait_for(timeout=30_000)
    points = plot.locator(".scatterlayer .trace .point")
    page.wait_for_function(
        "() => document.querySelectorAll('.js-plotly-plot .scatterlayer .trace .point').length >= 30",
        timeout=30_000,
    )
    assert points.count() >= 30  # 10 launches x L1, L2, DRAM
    assert "raw.csv" in page.locator("body").inner_text()
    plot.scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    page.screenshot(path=str(SCREENSHOT), full_page=True)
    assert SCREENSHOT.stat().st_size > 20_000
    assert not errors, errors
    page.close()


def test_exported_review_html_renders_offline(browser, tmp_path: Path) -> None:
    bundle = next(b for b in bundles.discover_bundles() if b.name == "h200-2026-11-22")
    base = replace(bundles.bundled_runs(bundle)[1], id=1)
    faster = tuple(replace(r, time_median_ms=r.time_median_ms * 0.9) for r in base.results)
    cand = replace(base, id=2, label="candidate", results=faster)
    roof = charts.review_roofline(base, [cand], recorded_device_ceilings(base.device, base.device_name))
    path = tmp_path / "review.html"
    path.write_text(review.report_html(base, [cand], extra_figures=[roof]))

    context = browser.new_context(offline=True)  # the report must carry plotly.js itself
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(path.as_uri())
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .main-svg').length >= 3", timeout=30_000)
    plots = page.locator(".js-plotly-plot")
    assert plots.count() == 3  # time bars, time change, roofline
    n = len(base.results)
    assert plots.nth(0).locator(".bars .point").count() == 2 * n  # every result of both runs
    assert plots.nth(2).locator(".scatterlayer .point").count() >= 2 * n  # candidate and baseline points
    assert "GEMM Lens review" in page.title()
    assert not errors, errors
    context.close()
