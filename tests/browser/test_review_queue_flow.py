"""A reviewer narrows the queue to one annotator of one project, accepts three items at once and sends one
back with a comment; the annotator finds it under My work, fixes it, and it comes back to the queue."""

import pytest
from django.core.cache import cache
from django.urls import reverse

from annotation import services
from annotation.models import Annotation, Assignment, Review
from tests.annotation import conftest as annotation_fixtures

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
make_project = annotation_fixtures.make_project


@pytest.fixture(autouse=True)
def _no_rate_limit_leftovers():
    cache.clear()


def _submit_all(project, user, best: int) -> None:
    while (assignment := services.assignment_claim(project=project, user=user)) is not None:
        services.assignment_submit(token=assignment.token, user=user, payload={"best": best})


def test_filter_accept_three_reject_one_and_the_fix_comes_back(
    browser, live_server, page, login, make_project, make_user
):
    project = make_project(kind="best_of_n", n_prompts=5, n_models=3, per_group=0, activate=False)
    elsewhere = make_project(kind="best_of_n", n_prompts=2, n_models=3, per_group=0, activate=False)
    elsewhere.name = "Proyek lain"
    elsewhere.save(update_fields=["name"])
    ani, budi = make_user("annotator", username="ani"), make_user("annotator", username="budi")
    for p in (project, elsewhere):
        for user in (ani, budi):
            services.project_member_add(project=p, user=user, group=p.groups.get())
        services.project_activate(project=p)
        for user in (ani, budi):
            _submit_all(p, user, best=1)

    login(page, "reviewer", username="rini")
    page.goto(reverse("annotation:review"))
    assert page.locator("[data-testid=review-count]").inner_text() == "14 items"
    page.select_option("select[name=project]", str(project.pk))
    page.click("[data-testid=review-filters] button[type=submit]")
    page.select_option("select[name=annotator]", label="ani")
    page.click("[data-testid=review-filters] button[type=submit]")
    items = page.locator("[data-testid=review-item]")
    assert page.locator("[data-testid=review-count]").inner_text() == "5 items"
    assert all("ani" in items.nth(i).locator("h2").inner_text() for i in range(5))
    # The pick sits on the response the annotator chose, under the label they saw.
    assert items.first.locator("[data-testid=best]").count() == 1
    assert "Response 1" in items.first.locator("[data-testid=review-response]").first.inner_text()

    for i in range(3):
        items.nth(i).locator("[data-testid=select-item]").check()
    page.click("[data-testid=accept-selected]")
    page.wait_for_selector("text=3 item(s) accepted.")
    assert page.locator("[data-testid=review-count]").inner_text() == "2 items"
    first = page.locator("[data-testid=review-item]").first
    first.locator("textarea[name=comment]").fill("Respons 3 lebih lengkap, periksa lagi.")
    first.get_by_role("button", name="Reject and send back").click()
    page.wait_for_selector("text=Review saved.")
    assert page.locator("[data-testid=review-count]").inner_text() == "1 item"
    assert Review.objects.filter(verdict="accept").count() == 3
    rejected = Review.objects.get(verdict="reject").assignment
    assert (rejected.annotator_id, rejected.project_id) == (ani.pk, project.pk)

    other = browser.new_context(base_url=live_server.url)
    mine = other.new_page()
    mine.set_default_timeout(10_000)
    mine.goto("/accounts/login/")
    mine.fill("#id_username", "ani")
    mine.fill("#id_password", "correct-horse-battery")
    mine.click('form[action="/accounts/login/"] button[type=submit]')
    mine.wait_for_url("**/")
    mine.locator("[data-testid=annotator-project]", has_text=project.name).locator(
        "[data-testid=my-work-link]"
    ).click()
    rows = mine.locator("[data-testid=my-work-row]")
    assert rows.count() == 5
    returned = rows.filter(has_text="Sent back")
    assert "Respons 3 lebih lengkap, periksa lagi." in returned.inner_text()
    returned.locator("[data-testid=my-work-open]").click()
    mine.wait_for_selector("#task-form")
    assert mine.locator("input[name=best][value='1']").is_checked()  # the old answer, same order
    mine.locator("input[name=best][value='3']").check()
    mine.click("[data-testid=submit]")
    mine.wait_for_load_state("networkidle")
    other.close()
    rejected.refresh_from_db()
    assert (rejected.status, rejected.round) == (Assignment.Status.SUBMITTED, 2)
    assert sorted(Annotation.objects.filter(assignment=rejected).values_list("round", flat=True)) == [1, 2]

    page.goto(reverse("annotation:review") + f"?project={project.pk}&annotator={ani.pk}&status=resubmitted")
    back = page.locator("[data-testid=review-item]")
    assert back.count() == 1
    assert "Sent back earlier with: Respons 3 lebih lengkap, periksa lagi." in back.inner_text()
    assert back.locator("[data-testid=best]").count() == 1


def test_reviewer_reads_every_criterion_under_its_label_in_both_languages(page, login, make_project):
    services.rubric_save(
        criterion="factual",
        label={"id": "Faktual", "en": "Factual"},
        question={"id": "Apakah isinya benar?", "en": "Is it correct?"},
        scale={
            "categories": [
                {"value": "yes", "label": {"id": "Ya", "en": "Yes"}},
                {"value": "no", "label": {"id": "Tidak", "en": "No"}},
                {"value": "unsure", "label": {"id": "Ragu-ragu", "en": "Unsure"}},
            ]
        },
        levels={},
        new=True,
    )
    project = make_project(n_prompts=1, n_models=2, per_group=1, criteria=["relevance", "factual"])
    user = project.annotators[0]
    assignment = services.assignment_claim(project=project, user=user)
    answer = {"1": {"relevance": 5, "factual": "unsure"}, "2": {"relevance": 2, "factual": "no"}}
    services.assignment_submit(token=assignment.token, user=user, payload={"ratings": answer})

    login(page, "reviewer", username="rini")
    page.goto(reverse("annotation:review"))
    ratings = page.locator("[data-testid=review-item] [data-testid=ratings]")
    assert ratings.all_inner_texts() == ["Relevance: 5 · Factual: Unsure", "Relevance: 2 · Factual: No"]
    page.click("[data-testid=lang-id]")
    page.wait_for_load_state()
    assert page.locator("html").get_attribute("lang") == "id"
    assert ratings.all_inner_texts() == ["Relevansi: 5 · Faktual: Ragu-ragu", "Relevansi: 2 · Faktual: Tidak"]
