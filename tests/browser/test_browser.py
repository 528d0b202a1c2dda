"""The app in a real browser: upload a real ncu CSV and see the roofline; open an exported review offline."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from profiling import charts
from profiling.analysis.ceilings import recorded_device_ceilings
from profiling.app import bundles
from profiling.charts import review_html
from tests.browser.app_page import choose_section

ROOT = Path(__file__).resolve().parents[2]
RAW_CSV = ROOT / "tests" / "fixtures" / "ncu" / "raw.csv"
SCREENSHOT = ROOT / "docs" / "screenshot-reports.png"


PAGES = [
    "Overview",
    "Kernels",
    "Benchmark",
    "Profile",
    "Roofline",
    "Occupancy",
    "Why",
    "Indexing",
    "Reports",
    "Details",
    "Review",
]
SHOTS = ROOT / "docs" / "screenshots"
UPLOAD_PAGES = ("Roofline", "Occupancy", "Reports")  # the pages an upload changes (their screenshots: -upload-)

# Every plotly chart on the page: its kernels (legend groups "kernel:<name>") and the entries of its legends (a
# chart may have several: "legend", "legend2", ... one per kernel family), and whether a legend overflows (plotly
# then draws a scroll bar).
CHARTS_JS = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(gd => ({
  kernels: [...new Set((gd.data || []).filter(t => (t.legendgroup || '').startsWith('kernel:'))
                                      .map(t => t.legendgroup.slice(7)))],
  legend: Array.from(gd.querySelectorAll('.infolayer > g[class^="legend"] text'))
              .filter(e => /^legend\\d*text$/.test(e.getAttribute('class'))).map(e => e.textContent),
  scrollbar: Array.from(gd.querySelectorAll('.infolayer > g[class^="legend"] .scrollbar'))
             .some(e => e.getBoundingClientRect().height > 0),
  width: gd.getBoundingClientRect().width,
  parent: gd.parentElement.getBoundingClientRect().width,
}))"""
CELLS_JS = """() => Array.from(document.querySelectorAll(
  '[data-testid="stDataFrame"] td, [data-testid="stDataFrame"] [role="gridcell"], [data-testid="stTable"] td, '
  + '[data-testid="stMarkdownContainer"] td')).map(e => e.textContent.trim())"""
MAIN_JS = """() => { const m = document.querySelector('[data-testid="stMain"]') || document.documentElement;
  return {scroll: m.scrollWidth, client: m.clientWidth, doc: document.documentElement.scrollWidth,
          win: window.innerWidth, height: m.scrollHeight}; }"""


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
    # Before the upload the page shows the sidebar's bundle, which may hold no ncu capture (then a notice, no table).
    page.locator('input[type="file"]').first.wait_for(state="attached", timeout=30_000)
    page.locator('input[type="file"]').first.set_input_files(str(RAW_CSV))
    page.get_by_text("1 uploaded report(s)").wait_for(timeout=30_000)
    page.get_by_text("Key metrics").first.wait_for(timeout=30_000)
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
    path.write_text(review_html.report_html(base, [cand], extra_figures=[roof]))

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
    page.set_viewport_size({"width": 1440, "height": 900})
    page.wait_for_timeout(500)
    width = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1], width  # the wide comparison table scrolls in its box, the page does not
    page.screenshot(path=str(SHOTS / "review-export-1440.png"), full_page=True)
    context.close()


def _settle(page) -> None:
    page.wait_for_load_state("networkidle")
    page.wait_for_function(
        "() => Array.from(document.querySelectorAll('.js-plotly-plot')).every(p => p.querySelector('.main-svg'))",
        timeout=30_000,
    )
    page.wait_for_timeout(800)


def _check_page(page, title: str) -> list[dict]:
    """What the issue asks of every page: no exception, no "None" cell, every roofline kernel in its legend (which
    does not scroll), no horizontal scroll. Returns the page's charts."""
    assert page.locator('[data-testid="stException"]').count() == 0, title
    assert "Traceback" not in page.locator("body").inner_text(), title
    cells = page.evaluate(CELLS_JS)
    assert "None" not in cells and "nan" not in cells, (title, [c for c in cells if c in ("None", "nan")])
    charts = page.evaluate(CHARTS_JS)
    for chart in charts:
        missing = [k for k in chart["kernels"] if k not in chart["legend"]]
        assert not missing, (title, missing)
        assert not chart["scrollbar"], (title, "the legend scrolls", chart["legend"])
        assert chart["width"] <= chart["parent"] + 1, (title, chart["width"], chart["parent"])
    main = page.evaluate(MAIN_JS)
    assert main["scroll"] <= main["client"] + 1 and main["doc"] <= main["win"], (title, main)
    return charts


SHOWN_BUNDLE = "h200-2026-11-22"
"""The bundle the screenshots show (the README describes them): its captures and its earlier run give every page
something to draw. The default, the newest bundle, is a benchmark alone."""


def _choose_bundle(page, name: str) -> None:
    """Pick the bundle `name` in the sidebar's picker (options read "<device>, measured <date> (results/<name>)")."""
    page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').first.click()
    # The list draws only the options in view, and older bundles sit below it: typing filters them in.
    page.keyboard.type(name)
    page.get_by_role("option", name=f"(results/{name})").click()
    page.get_by_text(f"(results/{name})").first.wait_for(timeout=30_000)
    _settle(page)


def _open(page, title: str) -> None:
    page.locator('[data-testid="stSidebarNav"] a', has_text=title).click()
    page.locator("h1", has_text="GEMM Lens" if title == "Overview" else title).wait_for(timeout=30_000)
    _settle(page)


def _shot(page, name: str, width: int) -> None:
    """A screenshot of the whole page: the viewport grows to the content (Streamlit scrolls its main block, not the
    document, so a full-page screenshot alone shows one screen), then returns to its size."""
    height = 0
    for _ in range(3):  # charts re-render at the new size, which can change the page's height
        grown = min(int(page.evaluate(MAIN_JS)["height"]) + 40, 12000)
        if grown <= height:
            break
        height = grown
        page.set_viewport_size({"width": width, "height": max(height, 900)})
        _settle(page)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}-{width}.png"))
    page.set_viewport_size({"width": width, "height": 900})


@pytest.mark.parametrize("width", [1024, 1440])
def test_every_page_bundled_and_after_an_upload(browser, server, width: int) -> None:
    page = browser.new_page(viewport={"width": width, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(server, wait_until="domcontentloaded")
    page.get_by_text("No GPU found").wait_for(timeout=30_000)
    _settle(page)
    _shot(page, "overview-newest", width)  # the default: the newest bundle
    _open(page, "Benchmark")  # the newest bundle is the whole catalog: a row per kernel in the % of cuBLAS chart
    _check_page(page, "Benchmark (newest bundle)")
    _shot(page, "benchmark-newest", width)
    _open(page, "Overview")
    _choose_bundle(page, SHOWN_BUNDLE)
    roofline_kernels = 0
    for title in PAGES:
        if title != "Overview":
            _open(page, title)
        if title == "Review":
            page.get_by_text("No saved runs yet").or_(page.locator("h3", has_text="Runs")).first.wait_for(
                timeout=30_000
            )
        if title == "Roofline":  # its chart waits for the bundle's captures to be read
            page.locator(".js-plotly-plot .main-svg").first.wait_for(timeout=60_000)
            _settle(page)
        if title == "Review" and page.get_by_text("No saved runs yet").count():
            page.get_by_text("Add runs: bundled measurements").click()
            page.get_by_role("button", name="Save the bundled measurements").click()
            page.get_by_text("Not compared:").wait_for(timeout=60_000)
            _settle(page)
        charts = _check_page(page, title)
        if title == "Roofline":
            roofline_kernels = max(len(c["kernels"]) for c in charts)
        if title == "Review":
            assert page.get_by_text("no kernel and size in common").count() == 0
            # The time charts are drawn once their expander opens: the screenshot shows them, as the README says.
            page.get_by_text("Time charts:").click()
            page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length >= 3", timeout=30_000)
            _settle(page)
            _check_page(page, "Review, time charts")
        _shot(page, title.lower(), width)
        if title == "Review":
            choose_section(page, "History")
            page.locator(".js-plotly-plot .main-svg").last.wait_for(timeout=30_000)
            _settle(page)
            _check_page(page, "Review, History")
            _shot(page, "review-history", width)
            choose_section(page, "Compare")
    assert roofline_kernels >= 8

    _open(page, "Reports")
    page.locator('input[type="file"]').first.set_input_files(str(RAW_CSV))
    page.get_by_text("1 uploaded report(s)").wait_for(timeout=30_000)
    _settle(page)
    for title in PAGES:
        _open(page, title)
        if title in ("Roofline", "Reports"):  # both draw the uploaded report's roofline first
            page.locator(".js-plotly-plot .main-svg").first.wait_for(timeout=30_000)
            _settle(page)
        charts = _check_page(page, f"{title} after an upload")
        if title == "Reports":  # the upload outlives a visit to other pages
            assert page.get_by_text("1 uploaded report(s)").count() > 0
        if title in ("Roofline", "Reports"):
            assert page.get_by_text("Bundled real measurements").count() == 0, title
            assert {"v1", "v5", "cublas"} <= {k for c in charts for k in c["kernels"]}
        if title in UPLOAD_PAGES:
            _shot(page, f"{title.lower()}-upload", width)
    assert not errors, errors
    page.close()


def test_a_page_url_opened_first_on_a_fresh_server(browser, fresh_server) -> None:
    """Streamlit runs a page file without app.py when a fresh server's first request is that page's URL: the page
    must still open inside the app's frame (its title and sidebar), not fail on the missing frame."""
    page = browser.new_page(viewport={"width": 1024, "height": 900})
    page.goto(f"{fresh_server}/Roofline", wait_until="domcontentloaded")
    page.locator("h1", has_text="Roofline").wait_for(timeout=60_000)
    page.wait_for_timeout(2000)
    assert page.title() == "Roofline · GEMM Lens"
    links = [" ".join(t.split()) for t in page.locator('[data-testid="stSidebarNav"] a').all_inner_texts()]
    assert len(links) == len(PAGES) and not [t for t in links if t.lower().endswith("app")], links
    assert page.locator('[data-testid="stException"]').count() == 0
    page.close()
