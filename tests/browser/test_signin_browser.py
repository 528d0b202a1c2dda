"""Sign-in in a real browser: a local OpenID Connect provider (oidc-provider-mock) started by the test, the app
started with a secrets.toml pointing at it, and headless Chromium signing in as a viewer and as an admin.

The viewer sees no delete control and no admin section; the admin moves a run to the trash and restores it, and
the audit log on the Review page names the admin for both.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

import pytest

from profiling.runs.records import SavedRun
from profiling.runs.store import RunStore
from tests.browser.app_page import choose_section

ADMIN = "ada@example.com"
VIEWER = "vera@example.com"

SECRETS = """
[auth]
redirect_uri = "http://localhost:{port}/oauth2callback"
cookie_secret = "gemmlens-browser-test-cookie-secret-0123456789"
client_id = "gemmlens-test"
client_secret = "gemmlens-test-secret"
server_metadata_url = "http://localhost:{oidc_port}/.well-known/openid-configuration"

[gemmlens.roles]
"{admin}" = "admin"
"*" = "viewer"
"""


def a_run(label: str, median_ms: float, created: str) -> SavedRun:
    result = {"kernel": "v3", "m": 1024, "n": 1024, "k": 1024, "status": "ok", "time_median_ms": median_ms}
    return SavedRun.create([result], label=label, kind="bench", created=created, device={"name": "NVIDIA H200"})


@pytest.fixture(scope="module")
def team_server(tmp_path_factory: pytest.TempPathFactory, server_control) -> Iterator[tuple[str, list[int], str]]:
    """The OIDC provider, a store with two runs, and the app signed-in users reach at http://localhost:PORT."""
    provider = pytest.importorskip("oidc_provider_mock", reason="oidc-provider-mock is not installed")
    users = [
        provider.User(sub=email, claims={"email": email, "name": email.split("@")[0].title()})
        for email in (ADMIN, VIEWER)
    ]
    tmp = tmp_path_factory.mktemp("team")
    db = tmp / "runs.sqlite"
    db_url = f"sqlite:///{db}"
    with RunStore(db_url) as store:
        ids = [
            store.save_run(a_run("baseline", 2.0, "2026-11-01T00:00:00Z")),
            store.save_run(a_run("candidate", 1.5, "2026-11-02T00:00:00Z")),
        ]
    with provider.run_server_in_thread(user_claims=users) as oidc:
        port = server_control.free_port()
        secrets = tmp / "secrets.toml"
        secrets.write_text(SECRETS.format(port=port, oidc_port=oidc.server_port, admin=ADMIN))
        env = dict(os.environ, GEMMLENS_GPU="off", GEMMLENS_DB_PATH=str(db))
        env.pop("GEMMLENS_DB_URL", None)
        proc = server_control.start(port, env, ["--secrets.files", str(secrets)])
        try:
            yield f"http://localhost:{port}", ids, db_url
        finally:
            server_control.stop(proc)


def shown(text: str) -> str:
    """Text as a person reads it: md_escape puts an invisible word joiner (U+2060) before each '@', so that no
    e-mail address in Markdown becomes a link."""
    return text.replace("\u2060", "")


def sign_in(browser, url: str, email: str):
    """A fresh browser context (its own cookies) signed in as `email` through the provider's form."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(url, wait_until="domcontentloaded")
    page.get_by_role("button", name="Sign in").click(timeout=30_000)
    page.get_by_role("heading", name="Authorize Client").wait_for(timeout=30_000)
    page.get_by_role("button", name=email).click()  # the provider's predefined user
    address = re.escape(email).replace("@", "\u2060?@")  # the word joiner md_escape adds (see shown)
    page.get_by_text(re.compile(rf"Signed in as .*{address}")).wait_for(timeout=30_000)
    return context, page, errors


def open_review(page) -> None:
    page.locator('[data-testid="stSidebarNav"] a', has_text="Review").click()
    page.locator("h1", has_text="Review").wait_for(timeout=30_000)
    choose_section(page, "Open / delete")
    page.wait_for_load_state("networkidle")


def test_viewer_sees_no_delete_and_admin_deletes_and_restores(browser, team_server) -> None:
    url, (base_id, cand_id), db_url = team_server

    context, page, errors = sign_in(browser, url, VIEWER)
    assert "(viewer)" in page.locator('[data-testid="stSidebar"]').inner_text()
    open_review(page)
    page.get_by_text("Run store:").wait_for(timeout=30_000)
    assert page.get_by_role("button", name=re.compile("Delete run")).count() == 0
    assert page.get_by_text("Admin: trash").count() == 0
    # what a viewer can still press is refused by the store itself, in one line
    page.get_by_text("Add runs: bundled measurements").click()
    page.get_by_role("button", name=re.compile("Save the bundled measurements")).click(timeout=30_000)
    refused = page.locator('[data-testid="stAlertContentError"]')
    refused.wait_for(timeout=30_000)
    assert "vera@example.com is a viewer: saving runs needs the runner or admin role" in shown(refused.inner_text())
    assert page.locator('[data-testid="stException"]').count() == 0 and not errors, errors
    context.close()

    context, page, errors = sign_in(browser, url, ADMIN)
    assert "(admin)" in page.locator('[data-testid="stSidebar"]').inner_text()
    open_review(page)
    page.get_by_role("button", name=f"Delete run #{cand_id}").click(timeout=30_000)
    page.get_by_role("button", name="Yes, delete").click(timeout=30_000)
    admin = page.get_by_text("Admin: trash (1) and audit log")
    admin.wait_for(timeout=30_000)
    admin.click()
    page.get_by_role("button", name=f"Restore run #{cand_id}").click(timeout=30_000)
    page.get_by_text("Admin: trash (0) and audit log").wait_for(timeout=30_000)
    expander = page.locator('[data-testid="stExpander"]', has_text="Admin: trash (0)")
    if not expander.locator("table").first.is_visible():
        page.get_by_text("Admin: trash (0) and audit log").click()
    table = expander.locator("table").first
    table.wait_for(timeout=30_000)
    rows = [shown(row.inner_text()).split("\t") for row in table.locator("tbody tr").all()]
    actions = [(cells[1].strip(), cells[2].strip(), cells[3].strip()) for cells in rows]
    assert actions[:2] == [(ADMIN, "restore", str(cand_id)), (ADMIN, "delete", str(cand_id))], rows
    assert page.locator('[data-testid="stException"]').count() == 0 and not errors, errors
    context.close()

    with RunStore(db_url, create=False) as store:  # the run is back, and the log names the admin
        assert [r["id"] for r in store.list_runs()] == [cand_id, base_id] and store.trash() == []
        assert [(e["actor"], e["action"]) for e in store.audit_log(2)] == [(ADMIN, "restore"), (ADMIN, "delete")]
