"""A submit that meets a database outage: the annotator is told, keeps the answer and sends it again."""

import pytest
from django.core.cache import cache
from django.db import OperationalError
from django.test import RequestFactory

from annotation import services
from annotation.models import Assignment
from config.middleware import DatabaseUnavailableMiddleware
from tests.annotation import conftest as annotation_fixtures

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
make_project = annotation_fixtures.make_project


@pytest.fixture(autouse=True)
def _no_rate_limit_leftovers():
    cache.clear()


# Policy violations the page reports, also those of what its scripts parse later.
WATCH = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", function (e) {
  window.__violations.push(e.violatedDirective + " " + (e.blockedURI || "inline") + " " + (e.sample || ""));
});
"""


def outage_answer(request) -> dict:
    """What the server answers to this request (its address and htmx's headers) while the database is
    unavailable."""
    headers = {
        f"HTTP_{name.upper().replace('-', '_')}": value
        for name, value in request.headers.items()
        if name.lower().startswith(("hx-", "accept"))
    }
    response = DatabaseUnavailableMiddleware(lambda request: None).process_exception(
        RequestFactory().post(request.url, **headers),
        OperationalError("the database system is shutting down"),
    )
    return {"status": response.status_code, "headers": dict(response.items()), "body": response.content}


def test_the_outage_message_appears_and_the_same_answer_goes_through_afterwards(page, login, make_project):
    page.context.add_init_script(WATCH)
    console: list[str] = []
    page.on("console", lambda m: "Content Security Policy" in m.text and console.append(m.text))
    project = make_project(n_prompts=2, n_models=2, per_group=0, activate=False)
    user = login(page, "annotator", username="ani")
    services.project_member_add(project=project, user=user, group=project.groups.get())
    services.project_activate(project=project)
    page.goto("/")
    page.locator("[data-testid=annotator-project]", has_text=project.name).get_by_role(
        "button", name="Start / continue"
    ).click()
    page.wait_for_selector("#task-form")
    # The page's keys work once its script has highlighted the first scale.
    page.wait_for_selector("fieldset.scale.current")
    for key in ("4", "5", "3", "2"):
        page.keyboard.press(key)
    page.wait_for_function("document.querySelectorAll('fieldset.scale input:checked').length === 4")

    submit_url = "**/annotate/t/*/submit"
    page.route(submit_url, lambda route: route.fulfill(**outage_answer(route.request)))
    with page.expect_response(lambda response: response.url.endswith("/submit")) as answered:
        page.keyboard.press("Enter")
    assert answered.value.status == 503  # the submit was sent and met the outage
    alert = page.locator("[data-role=unavailable]")
    alert.wait_for()
    assert "The database is unavailable at the moment." in alert.inner_text()
    # Reading the message out of the answer applies no style the task page's policy refuses.
    assert page.evaluate("window.__violations") == [] and console == []
    assert page.locator("fieldset.scale input:checked").count() == 4  # the answer is still there
    assert not Assignment.objects.filter(status="submitted").exists()

    page.unroute(submit_url)
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=progress]').innerText === '1 of 2 done'"
    )
    assert page.locator("[data-role=unavailable]").count() == 0
    assert Assignment.objects.filter(status="submitted").count() == 1
