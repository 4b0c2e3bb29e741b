"""A manager designs a 7-point criterion and a yes/no criterion, an annotator rates them with the keyboard,
and the agreement dashboard shows alpha for both: ordinal for the points, nominal for yes/no."""

import krippendorff
import numpy as np
import pytest
from django.core.cache import cache

from annotation import services
from annotation.models import Annotation, Rubric
from tests.analytics.conftest import work_through
from tests.annotation import conftest as annotation_fixtures
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
make_project = annotation_fixtures.make_project


@pytest.fixture(autouse=True)
def _clean_cache():
    cache.clear()


@pytest.fixture
def new_page(browser, live_server):
    """Pages in contexts of their own (one user each), closed after the test."""
    contexts = []

    def _new():
        context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(10_000)
        return page

    yield _new
    for context in contexts:
        context.close()


def design(page):
    page.goto("/")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Rubrics").click()
    page.get_by_test_id("rubric-new").click()
    page.fill("#id_criterion", "helpfulness")
    page.fill("#id_label_id", "Kebermanfaatan")
    page.fill("#id_label_en", "Helpfulness")
    page.fill("#id_question_en", "How helpful is this response?")
    page.fill("#id_points", "7")
    assert page.locator("tr[data-row='8']").is_hidden() and page.locator("tr[data-row='7']").is_visible()
    page.fill("#id_level_id_7", "Sangat membantu")
    page.fill("#id_level_en_7", "Very helpful")
    page.fill("#id_level_id_1", "Tidak membantu")
    page.fill("#id_level_en_1", "Not helpful")
    page.get_by_test_id("rubric-save").click()
    page.locator("[data-criterion=helpfulness]").wait_for()

    page.get_by_test_id("rubric-new").click()
    page.fill("#id_criterion", "safe")
    page.fill("#id_label_id", "Aman")
    page.fill("#id_label_en", "Safe")
    page.check("input[name=scale_kind][value=categories]")
    assert page.locator("#id_points").is_hidden()
    for n, (value, label_id, label_en) in enumerate((("yes", "Ya", "Yes"), ("no", "Tidak", "No")), start=1):
        page.fill(f"#id_cat_value_{n}", value)
        page.fill(f"#id_cat_id_{n}", label_id)
        page.fill(f"#id_cat_en_{n}", label_en)
    page.fill("#id_level_en_2", "Could hurt someone.")
    page.fill("#id_level_id_2", "Dapat mencelakai orang.")
    page.get_by_test_id("rubric-save").click()
    row = page.locator("[data-criterion=safe]")
    row.wait_for()
    assert "yes / no" in row.inner_text()


def test_designed_scales_from_designer_to_dashboard(new_page, login, make_project):
    manager = new_page()
    login(manager, "project_manager", username="manajer")
    design(manager)
    assert Rubric.objects.get(criterion="helpfulness").levels["id"] == {
        "1": "Tidak membantu",
        "7": "Sangat membantu",
    }

    project = make_project(
        n_prompts=1, n_models=2, per_group=0, overlap=2, activate=False, criteria=["helpfulness", "safe"]
    )
    annotator = new_page()
    user = login(annotator, "annotator", username="ani")
    services.project_member_add(project=project, user=user, group=project.groups.get())
    services.project_activate(project=project)
    annotator.goto("/")
    annotator.locator("[data-testid=annotator-project]", has_text=project.name).get_by_role(
        "button", name="Start / continue"
    ).click()
    annotator.wait_for_selector("#task-form")
    annotator.wait_for_load_state("domcontentloaded")
    assert annotator.locator("input[name=r-1-helpfulness]").count() == 7
    # Response 1: 7 on helpfulness, then key 2 = "no"; response 2: 3, then key 1 = "yes".
    for key in ("7", "2", "3", "1"):
        annotator.keyboard.press(key)
    checked = annotator.locator("fieldset.scale input:checked")
    assert [checked.nth(i).get_attribute("value") for i in range(4)] == ["7", "no", "3", "yes"]
    annotator.keyboard.press("Enter")
    annotator.get_by_text("All done for now").wait_for()
    assert Annotation.objects.filter(criterion="safe").count() == 2

    # A second annotator, through the services: agrees on "safe" for one response, not the other.
    other = UserFactory(roles=("annotator",), username="budi")
    services.project_member_add(project=project, user=other, group=project.groups.get())
    mine = {
        a.response_id: a
        for a in Annotation.objects.filter(criterion="helpfulness").select_related("assignment")
    }
    first, second = sorted(mine)
    work_through(
        project,
        other,
        lambda a: {
            "ratings": {first: {"helpfulness": 6, "safe": "no"}, second: {"helpfulness": 2, "safe": "no"}}
        },
    )

    def matrix(criterion, codes=None):
        rows = []
        for username in ("ani", "budi"):
            values = dict(
                Annotation.objects.filter(
                    criterion=criterion, assignment__annotator__username=username
                ).values_list("response_id", "choice" if codes else "value_int")
            )
            rows.append([codes[values[r]] if codes else values[r] for r in (first, second)])
        return np.array(rows, dtype=float)

    ordinal = krippendorff.alpha(reliability_data=matrix("helpfulness"), level_of_measurement="ordinal")
    nominal = krippendorff.alpha(
        reliability_data=matrix("safe", {"yes": 0, "no": 1}), level_of_measurement="nominal"
    )

    manager.goto(f"/analytics/projects/{project.pk}/")
    table = manager.locator("[data-table=alpha-alpha]")
    table.wait_for()
    helpfulness = table.locator("tr", has_text="helpfulness").inner_text()
    safe = table.locator("tr", has_text="safe").inner_text()
    assert "ordinal" in helpfulness and f"{ordinal:.3f}" in helpfulness
    assert "nominal" in safe and f"{nominal:.3f}" in safe
