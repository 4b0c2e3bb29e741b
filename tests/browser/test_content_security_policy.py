"""Every page each role may open runs in Chromium under the Content-Security-Policy without a violation or a
console error: the pages of the permission matrix (tests/security/pages.py), the annotator's task page with
a real task, an agreement dashboard with its charts drawn, the API viewers, and the admin site.

One browser, one context per role, logged in through the login form.
"""

from __future__ import annotations

import itertools

import pytest
from django.core.cache import cache
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from tests.analytics.conftest import work_through
from tests.analytics.test_reports import likert_answers
from tests.annotation import conftest as annotation_fixtures
from tests.security.conftest import build_world
from tests.security.pages import API_VIEWERS, Page, html_pages

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
make_project = annotation_fixtures.make_project

VIEWER_ROLES = {"anonymous", "project_manager"}
PASSWORD = "correct-horse-battery"  # tests/factories.py
# Collects what the page reports before any of its own scripts run: policy violations (also those of
# content htmx swaps in later) and uncaught errors.
WATCH = """
window.__problems = [];
document.addEventListener("securitypolicyviolation", function (e) {
  window.__problems.push("CSP violation: " + e.violatedDirective + " blocked " + (e.blockedURI || "inline")
    + " at " + e.sourceFile + ":" + e.lineNumber + " " + (e.sample || ""));
});
"""
REPORTED = "() => new Promise(done => setTimeout(() => done(window.__problems || []), 50))"


def console_error(message) -> bool:
    """An error in the console, other than the browser's own request for /favicon.ico (the site has none)."""
    return message.type == "error" and not message.location.get("url", "").endswith("/favicon.ico")


@pytest.fixture(autouse=True)
def _no_rate_limit_leftovers():
    cache.clear()


@pytest.fixture
def answered(make_project):
    """A project two annotators rated, so that its dashboard draws every chart it has."""
    project = make_project(n_prompts=3, n_models=2, per_group=2, overlap=2, criteria=["relevance", "fluency"])
    c1, c2 = project.annotators
    work_through(project, c1, likert_answers(project, "c1"))
    work_through(project, c2, likert_answers(project, "c2"))
    return project


def open_context(browser, live_server, world, role: str, problems: list[str]):
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    context.add_init_script(WATCH)
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.on("console", lambda m: console_error(m) and problems.append(f"console error: {m.text}"))
    page.on("pageerror", lambda e: problems.append(f"uncaught: {e}"))
    if role != "anonymous":
        page.goto("/accounts/login/")
        page.fill("#id_username", world.users[role].get_username())
        page.fill("#id_password", PASSWORD)
        page.click('form[action="/accounts/login/"] button[type=submit]')
        page.wait_for_url("**/")
    return context, page


def settle(page, name: str) -> None:
    """Wait until what the page draws by script is drawn."""
    if name == "annotation:task":
        page.wait_for_selector("#task-form fieldset.scale")
        page.keyboard.press("i")  # a shortcut: annotator.js toggles the instructions
        page.wait_for_selector("#instructions", state="visible")
    elif name == "dashboard-with-charts":
        chart = page.get_by_test_id("chart-alpha")
        chart.locator("svg").first.wait_for()
        page.get_by_test_id("chart-distributions").locator("svg").first.wait_for()
        # A tooltip: vega-tooltip's element, styled by css/charts.css, not by a <style> of its own.
        chart.locator("svg .mark-symbol path").first.hover()
        page.wait_for_selector("#vg-tooltip-element.visible")
        page.select_option("#level", "interval")  # data-autosubmit: site.js sends the form
        page.wait_for_url("**level=interval")
        page.get_by_test_id("chart-alpha").locator("svg").first.wait_for()
    elif name == "api-docs":
        page.wait_for_selector(".swagger-ui .opblock-tag")
    elif name == "api-redoc":
        page.wait_for_selector(".api-content h1")


def test_every_page_of_every_role_runs_under_the_policy(browser, live_server, make_user, tmp_path, answered):
    world = build_world(make_user, tmp_path)
    # The API viewers are the same public page for everyone (the header test looks at them for every role):
    # opened here by a visitor and by a project manager, whose menu links to them.
    pages = [p for p in html_pages(world) if p.name not in API_VIEWERS or p.role in VIEWER_ROLES]
    dashboard = f"/analytics/projects/{answered.pk}/"
    admin_pages = [
        "/admin/",
        "/admin/annotation/project/",
        f"/admin/annotation/project/{answered.pk}/change/",
    ]
    extra = [Page(role, "dashboard-with-charts", dashboard) for role in ("project_manager", "researcher")]
    extra += [Page("admin", "admin", url) for url in admin_pages]
    pages = sorted([*pages, *extra], key=lambda p: p.role)
    assert {p.name for p in pages} >= {"annotation:task", "api-docs", "api-redoc", "dashboard-with-charts"}

    problems: list[str] = []
    opened = 0
    for role, role_pages in itertools.groupby(pages, key=lambda p: p.role):
        seen: list[str] = []
        context, page = open_context(browser, live_server, world, role, seen)
        try:
            for target in role_pages:
                response = page.goto(target.url)
                assert response is not None and response.status < 400, (target, response and response.status)
                assert "content-security-policy" in response.headers
                try:
                    settle(page, target.name)
                except PlaywrightTimeoutError as exc:  # reported with what the page said, not alone
                    seen.append(f"not drawn: {exc.message.splitlines()[0]}")
                seen.extend(page.evaluate(REPORTED))
                problems.extend(f"{role} {target.name} {target.url}: {p}" for p in seen)
                seen.clear()
                opened += 1
        finally:
            context.close()
    assert problems == [], "\n".join(problems)
    assert opened == len(pages) > 60


def test_the_watch_reports_a_refused_inline_script(browser, live_server):
    """The check above would see a violation: an inline script slipped into a real page is refused."""
    problems: list[str] = []
    context = browser.new_context(base_url=live_server.url)
    context.add_init_script(WATCH)
    page = context.new_page()
    page.on("console", lambda m: m.type == "error" and problems.append(m.text))

    def with_inline_script(route):
        response = route.fetch()
        body = response.text().replace("</main>", "<script>document.title = 'ran';</script></main>")
        route.fulfill(response=response, body=body)

    page.route("**/accounts/login/", with_inline_script)
    page.goto("/accounts/login/")
    reported = page.evaluate(REPORTED)
    title = page.title()
    context.close()
    assert title != "ran"
    assert len(reported) == 1 and reported[0].startswith("CSP violation: script-src")
    assert any("Content Security Policy" in text for text in problems)
