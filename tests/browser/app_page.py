"""Opening the app in a browser page the way the browser tests need it."""

from __future__ import annotations

from typing import Any


def open_with_bundle(page: Any, server: str, bundle: str | None) -> None:
    """Load the app at `server` (with `bundle` chosen by the link) and wait until it has drawn its first page; with a
    bundle, also until the sidebar shows it: the link's bundle is applied by the app's first complete run, and
    switching pages before it lands keeps the default bundle (seen in CI)."""
    page.goto(f"{server}/?bundle={bundle}" if bundle else server, wait_until="domcontentloaded")
    page.get_by_text("No GPU found").wait_for(timeout=60_000)
    if bundle:
        page.wait_for_function(
            "name => (document.querySelector('[data-testid=stSidebar] input[aria-label=\"Bundled measurements\"]')"
            " || {}).value?.endsWith(`(results/${name})`)",
            arg=bundle,
            timeout=60_000,
        )
        page.wait_for_load_state("networkidle")


def choose_section(page: Any, label: str) -> None:
    """Click `label` in a page's section switcher (permalink.sections: a segmented control, a radio group to
    assistive technology, not tabs)."""
    page.locator('[data-testid="stButtonGroup"]').get_by_role("radio", name=label, exact=True).click()


def chosen_section(page: Any) -> str:
    """The label of the section a page's switcher shows as chosen."""
    return page.locator('[data-testid="stButtonGroup"] [role="radio"][aria-checked="true"]').inner_text().strip()


def assert_no_horizontal_scroll(page: Any, width: int) -> None:
    """The page is no wider than the viewport of `width` px: nothing makes the reader scroll sideways."""
    scroll = page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert scroll <= 0, f"horizontal scroll of {scroll} px at {width} px"
