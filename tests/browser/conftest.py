"""Headless Chromium (Debian's package) driven by Playwright against pytest-django's live server."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-quic",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
]


# Playwright's sync API keeps an event loop running in the main thread for the whole session (the browser
# is session-scoped), so every later ORM call in this process, test setup and teardown included, would be
# refused as "async". The ORM calls here are ordinary synchronous calls; allow them for this test process.
# Subprocesses that must not inherit it (the `check --deploy` test) remove it from their environment.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def shot(page, name: str, *, full_page: bool = True) -> None:
    """With TIMBANG_SCREENSHOTS_DIR set, keep a screenshot of the page for the guides (docs/screenshots)."""
    folder = os.environ.get("TIMBANG_SCREENSHOTS_DIR")
    if folder:
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=full_page)


def pytest_collection_modifyitems(config, items):
    # The hook sees every test of the session, not only this folder's: skip the browser tests alone.
    if not os.path.exists(CHROMIUM):
        skip = pytest.mark.skip(
            reason="Debian's chromium is not installed (apt-get install chromium chromium-driver)"
        )
        for item in items:
            if HERE in item.path.parents:
                item.add_marker(skip)


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, live_server):
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield page
    context.close()


@pytest.fixture
def phone_page(browser, live_server):
    context = browser.new_context(
        base_url=live_server.url, viewport={"width": 390, "height": 844}, is_mobile=True
    )
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield page
    context.close()


@pytest.fixture
def login(make_user):
    """Log a page in through the real login form."""

    def _login(page, *roles: str, username: str = "tester", password: str = "correct-horse-battery"):
        user = make_user(*roles, username=username)
        page.goto("/accounts/login/")
        page.fill("#id_username", username)
        page.fill("#id_password", password)
        page.click('form[action="/accounts/login/"] button[type=submit]')
        page.wait_for_url("**/")
        return user

    return _login


@pytest.fixture
def queued(monkeypatch, settings, tmp_path):
    """The messages the Datasets pages send to the import worker, kept here instead of sent to a broker;
    ``run_import_worker`` then does the worker's part."""
    from datasets_app import tasks

    settings.UPLOADS_DIR = tmp_path / "uploads"
    sent: list[dict] = []
    monkeypatch.setattr(
        tasks.dataset_import_run_task,
        "apply_async",
        lambda args, task_id, queue: sent.append({"args": args, "task_id": task_id, "queue": queue}),
    )
    return sent


def run_import_worker(sent: list[dict]) -> None:
    """Run the first queued import the way the default worker would."""
    from datasets_app import tasks

    message = sent.pop(0)
    assert message["queue"] == "default"
    tasks.dataset_import_run_task.apply(args=message["args"], task_id=message["task_id"])
