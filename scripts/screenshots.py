"""Takes the README's screenshots of a running demo (`make demo`) in headless Chromium.

Usage:
    .venv/bin/python scripts/screenshots.py --url http://127.0.0.1:8000 --password PASS --out docs/screenshots

Logs in as the demo users through the login form and saves one PNG per page under --out. URLs and ids are
found the way a person finds them, by following links and buttons by their text, so the script follows the
pages as they are. It stops with a message naming the page when a page answers an error (an HTTP status of
400 or more, a JavaScript error) or when an annotator's page shows the name of a model.

Needs Debian's Chromium (`apt-get install chromium`) and the project's dev dependencies (Playwright).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

from playwright.sync_api import Browser, Page, Response, sync_playwright
from playwright.sync_api import Error as PlaywrightError

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-quic",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
]
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
LARGE_BYTES = 200_000

# The names `manage.py demo` gives its projects and its judge run (demo/services.py).
RATING = "Demo: rating + best of five"
PAIRWISE = "Demo: pairwise A/B"
REVIEW = "Demo: translation review"
AUTHORING = "Demo: question writing"
JUDGE_RUN = "Demo: pairwise judge"
DEMO_PROMPTS = Path(__file__).resolve().parent.parent / "demo" / "data" / "prompts.jsonl"


class ScreenshotError(Exception):
    """A page answered an error or did not show what the screenshot is for."""


def model_names(path: Path = DEMO_PROMPTS) -> set[str]:
    """The fictional model names of the sample dataset, which an annotator must never see."""
    names: set[str] = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            names.update(r["model"] for r in json.loads(line).get("responses", []))
    return names


class Shooter:
    def __init__(self, browser: Browser, base_url: str, password: str, out: Path, wait_s: float) -> None:
        self.browser = browser
        self.base_url = base_url.rstrip("/")
        self.host = urlsplit(self.base_url).netloc
        self.password = password
        self.out = out
        self.wait_s = wait_s
        self.saved: list[Path] = []
        self.hidden_names = model_names()
        self._problems: list[str] = []

    # --- browsing ---------------------------------------------------------------------------------------

    @contextmanager
    def session(self, username: str | None, *, phone: bool = False) -> Iterator[Page]:
        """A fresh browser context, logged in as ``username`` through the login form (None: logged out)."""
        options = (
            {"viewport": PHONE, "is_mobile": True, "has_touch": True} if phone else {"viewport": DESKTOP}
        )
        context = self.browser.new_context(base_url=self.base_url, locale="en-US", **options)
        page = context.new_page()
        page.set_default_timeout(20_000)
        page.on("response", self._check_response)
        page.on("pageerror", lambda exc: self._problems.append(f"JavaScript error on {page.url}: {exc}"))
        try:
            if username is not None:
                self._login(page, username)
            yield page
        finally:
            context.close()

    def _check_response(self, response: Response) -> None:
        url = urlsplit(response.url)
        if url.netloc == self.host and response.status >= 400 and url.path != "/favicon.ico":
            self._problems.append(f"{response.request.method} {url.path} answered {response.status}")

    def check(self, page: Page, what: str) -> None:
        """Fail if any request so far answered an error, or an error page is shown."""
        problems, self._problems = self._problems, []
        if problems:
            raise ScreenshotError(f"{what}: " + "; ".join(problems))
        title = page.title()
        if any(code in title for code in ("Server Error", "Page not found", "Forbidden", "Bad Request")):
            raise ScreenshotError(f"{what}: the page {page.url} shows an error ({title!r})")

    def _login(self, page: Page, username: str) -> None:
        self.goto(page, "/accounts/login/", f"login page for {username}")
        page.fill("#id_username", username)
        page.fill("#id_password", self.password)
        with page.expect_response(
            lambda r: r.request.method == "POST" and "/accounts/login/" in r.url
        ) as posted:
            page.click('form[action="/accounts/login/"] button[type=submit]')
        page.wait_for_load_state()
        if posted.value.status == 429:
            raise ScreenshotError(
                f"logging in as {username!r} was refused after too many failed attempts (LOGIN_FAILURE_LIMIT): "
                "wait for the lock to lift (LOGIN_LOCKOUT_SECONDS) and run again with the right --password"
            )
        if urlsplit(page.url).path.startswith("/accounts/login/"):
            raise ScreenshotError(
                f"cannot log in as {username!r}: check --password (the demo's DEMO_PASSWORD)"
            )
        self.check(page, f"home page of {username}")

    def goto(self, page: Page, path: str, what: str) -> None:
        response = page.goto(path)
        if response is None or not response.ok:
            status = "no answer" if response is None else response.status
            raise ScreenshotError(f"{what}: GET {path} answered {status}")
        self.check(page, what)

    def follow(self, page: Page, text: str, what: str, *, within: str = "body") -> None:
        """Click the link whose text is ``text`` (the first one, inside ``within``) and check the page."""
        link = page.locator(within).get_by_role("link", name=text, exact=False).first
        if link.count() == 0:
            raise ScreenshotError(f"{what}: no link {text!r} on {page.url}")
        link.click()
        page.wait_for_load_state()
        self.check(page, what)

    def start_task(self, page: Page, project: str) -> None:
        """Press "Start / continue" on the home page's line of ``project``: the next task opens."""
        self.goto(page, "/", f"home page before {project!r}")
        line = page.get_by_test_id("annotator-project").filter(has_text=project)
        if line.count() == 0:
            raise ScreenshotError(f"the home page lists no project {project!r} for this annotator")
        line.get_by_role("button", name="Start / continue").click()
        page.wait_for_load_state()
        self.check(page, f"task of {project!r}")
        if page.locator("#task-form").count() == 0:
            raise ScreenshotError(f"{project!r}: no task opened ({page.url}); is anything left to do?")

    def switch_language(self, page: Page, code: str) -> None:
        """Press the language button at the top right; the same page comes back in that language."""
        page.get_by_test_id(f"lang-{code}").click()
        page.wait_for_load_state()
        self.check(page, f"switching the language to {code!r}")
        if page.locator("html").get_attribute("lang") != code:
            raise ScreenshotError(f"the language switch did not change {page.url} to {code!r}")

    def assert_blind(self, page: Page, what: str) -> None:
        html = page.content()
        shown = sorted(name for name in self.hidden_names if name in html)
        if shown:
            raise ScreenshotError(f"{what}: the annotator's page shows model names {shown} ({page.url})")

    # --- saving -----------------------------------------------------------------------------------------

    def shoot(self, page: Page, name: str, *, element: str | None = None, height: int | None = None) -> None:
        """Save the viewport as ``name``.png; with ``element``, only that element (cut at ``height``
        pixels); with ``height`` alone, the top of the page that tall."""
        viewport = dict(page.viewport_size or DESKTOP)
        if height is not None:
            page.set_viewport_size({"width": viewport["width"], "height": max(height, viewport["height"])})
        page.evaluate("document.fonts.ready")
        path = self.out / f"{name}.png"
        try:
            if element is None:
                page.screenshot(path=path, type="png", full_page=False)
            else:
                target = page.locator(element).first
                if target.count() == 0:
                    raise ScreenshotError(f"{name}: no {element} on {page.url}")
                target.evaluate("el => el.scrollIntoView({block: 'start'})")
                box = target.bounding_box()
                if box is None:
                    raise ScreenshotError(f"{name}: {element} is not shown on {page.url}")
                clip_height = box["height"] if height is None else min(box["height"], height)
                clip = {"x": box["x"], "y": box["y"], "width": box["width"], "height": clip_height}
                page.screenshot(path=path, type="png", clip=clip)
        finally:
            page.set_viewport_size(viewport)
        self.saved.append(path)
        size = path.stat().st_size
        note = "  (large)" if size > LARGE_BYTES else ""
        print(f"{path}  {size // 1024} KB{note}", flush=True)

    # --- the walkthrough ------------------------------------------------------------------------------

    def login_page(self) -> None:
        with self.session(None) as page:
            self.goto(page, "/accounts/login/", "login page")
            self.shoot(page, "login")

    def annotator(self) -> None:
        with self.session("anotator1") as page:
            self.assert_blind(page, "annotator home")
            self.shoot(page, "annotator-home", element="section[data-role=annotator]", height=1100)

            self.start_task(page, RATING)
            self.assert_blind(page, "likert + best-of-five task")
            # Rate the first response, as someone part-way through the task would have.
            first = page.locator("article.response-card").first
            for scale in first.locator("fieldset.scale").all():
                scale.locator("label.choice").nth(3).click()
            self.shoot(page, "task-likert")
            page.locator("fieldset.best").evaluate("el => el.scrollIntoView({block: 'center'})")
            self.shoot(page, "task-best-pick")
            self.switch_language(page, "id")
            self.assert_blind(page, "likert task in Indonesian")
            self.shoot(page, "task-likert-id")
            self.switch_language(page, "en")

            self.start_task(page, PAIRWISE)
            self.assert_blind(page, "pairwise task")
            self.shoot(page, "task-pairwise")

            self.start_task(page, REVIEW)
            self.assert_blind(page, "translation review task")
            self._until_flagged(page)
            self.shoot(page, "task-translation-review")

            self.start_task(page, AUTHORING)
            self.shoot(page, "task-question-writing")

        with self.session("anotator2", phone=True) as page:
            self.start_task(page, PAIRWISE)
            self.assert_blind(page, "pairwise task on a phone")
            self.shoot(page, "task-phone")

    def _until_flagged(self, page: Page, tries: int = 6) -> None:
        """Skip translation units without automatic flags (others still get them) until one has flags."""
        for _ in range(tries):
            if page.locator("ul.flags").count():
                return
            page.select_option("#skip-reason", "other")
            page.locator("#skip-form button[type=submit]").click()
            page.wait_for_load_state("networkidle")
            self.check(page, "skipping a translation unit")
            if page.locator("#task-form").count() == 0:
                break
        print(
            "note: no translation unit with automatic flags came up; keeping the one shown", file=sys.stderr
        )

    def reviewer(self) -> None:
        with self.session("reviewer") as page:
            self.follow(page, "Review", "review queue", within="nav.mainnav")
            if page.get_by_test_id("review-item").count() == 0:
                raise ScreenshotError("the review queue is empty")
            self.shoot(page, "reviewer-queue", element="[data-testid=review-item]", height=1200)

    def project_manager(self) -> None:
        with self.session("manajer") as page:
            self.follow(page, "Projects", "project list", within="nav.mainnav")
            self.shoot(page, "manager-projects")
            self.follow(page, RATING, "project page", within="table")
            self.shoot(page, "manager-progress", height=1020)

            for project, name in ((PAIRWISE, "agreement-pairwise"), (RATING, "agreement-rating")):
                self.follow(page, "Agreement", "agreement dashboards", within="nav.mainnav")
                self.follow(page, project, f"agreement dashboard of {project!r}", within="table")
                self._wait_report(page, project)
                self.shoot(page, name)
                if project == PAIRWISE:
                    self.shoot(page, "agreement-judges", element="#panel-judges", height=900)

    def _wait_report(self, page: Page, project: str) -> None:
        """The report may be computed on the worker while the page polls: wait until it is shown."""
        deadline = time.monotonic() + max(self.wait_s, 60)
        while time.monotonic() < deadline:
            self.check(page, f"agreement dashboard of {project!r}")
            status = page.locator("#analytics-report").get_attribute("data-status")
            if status == "failed":
                message = page.get_by_test_id("report-progress").inner_text()
                raise ScreenshotError(f"the agreement report of {project!r} failed: {message}")
            if (
                page.get_by_test_id("report-meta").count()
                and page.get_by_test_id("report-progress").count() == 0
            ):
                break
            time.sleep(1)
        else:
            raise ScreenshotError(f"the agreement report of {project!r} was not ready in time")
        # vega-embed draws the charts after the page loads; a chart without data is hidden.
        page.wait_for_function(
            "[...document.querySelectorAll('.chart[data-chart]')]"
            ".every(el => el.hidden || el.querySelector('svg') || el.textContent.includes('unavailable'))"
        )
        broken = page.locator(".chart[data-chart]").filter(has_text="Chart unavailable")
        if broken.count():
            raise ScreenshotError(f"agreement dashboard of {project!r}: {broken.first.inner_text()}")

    def researcher(self) -> None:
        with self.session("peneliti") as page:
            self.follow(page, "Models and judges", "runs list", within="nav.mainnav")
            has_judge_run = self._wait_judge(page)
            self.shoot(page, "researcher-runs")
            if has_judge_run:
                self.follow(page, JUDGE_RUN, "judge run", within="table")
                self.shoot(page, "researcher-judge-run")
            self.follow(page, "Models and judges", "runs list", within="nav.mainnav")
            self.follow(page, "Model endpoints", "endpoints page", within="main")
            self.shoot(page, "researcher-endpoints")
            self.follow(page, "Exports", "exports page", within="nav.mainnav")
            self.shoot(page, "researcher-exports")

    def _wait_judge(self, page: Page) -> bool:
        """Wait (up to --wait seconds) until the demo's judge run has finished, so its results show.
        False if the demo has no judge run."""
        deadline = time.monotonic() + self.wait_s
        while True:
            row = page.locator("tr").filter(has=page.get_by_role("link", name=JUDGE_RUN))
            if row.count() == 0:
                print("note: the demo has no judge run (no model server?)", file=sys.stderr)
                return False
            status = row.first.locator("span.badge").inner_text().strip().lower()
            if status not in ("queued", "running"):
                return True
            if time.monotonic() >= deadline:
                print(f"note: the judge run is still {status}; taking the pages as they are", file=sys.stderr)
                return True
            print(
                f"waiting for the judge run ({row.first.locator('td').nth(3).inner_text().strip()})",
                flush=True,
            )
            time.sleep(15)
            page.reload()
            self.check(page, "runs list")

    def admin(self) -> None:
        with self.session("admin") as page:
            self.shoot(page, "admin-home")
            self.follow(page, "Admin", "Django admin", within="nav.mainnav")
            self.shoot(page, "admin")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000", help="where the demo runs")
    parser.add_argument("--password", required=True, help="the demo users' password (DEMO_PASSWORD)")
    parser.add_argument("--out", type=Path, default=Path("docs/screenshots"), help="folder for the PNG files")
    parser.add_argument(
        "--wait", type=float, default=2400, help="seconds to wait for the judge run and the agreement reports"
    )
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        shooter = Shooter(browser, args.url, args.password, args.out, args.wait)
        try:
            # The researcher's pages wait for the judge run, so the dashboards after them show its results.
            shooter.login_page()
            shooter.annotator()
            shooter.reviewer()
            shooter.researcher()
            shooter.project_manager()
            shooter.admin()
        except (ScreenshotError, PlaywrightError) as exc:
            print(f"screenshots: {exc}", file=sys.stderr)
            return 1
        finally:
            browser.close()
    print(f"{len(shooter.saved)} screenshots in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
