"""A whole study in the browser, from an empty database with one manager account and nothing else: the
manager imports a CSV whose columns need mapping, designs a 7-point criterion (Indonesian and English
levels) and a yes/no criterion, creates a likert project with two groups, adds two annotators on the
people page and puts one in each group; each annotator sets a password from the e-mailed link, logs in and
rates every task with the keyboard (one of them in Indonesian); the agreement dashboard shows alpha for both
criteria, ordinal for the points and nominal for yes/no.

No admin, no command line, no service called from the test: the only thing the test does besides the
browser is what a worker does, running the import task the upload page queued."""

from __future__ import annotations

import re

import krippendorff
import numpy as np
import pytest
from django.contrib.auth.models import Group
from django.core import mail
from django.core.cache import cache

from accounts.roles import ALL_ROLES
from annotation.models import Annotation, Project
from tests.browser.conftest import run_import_worker
from tests.datasets_app.alpaca import alpaca_rows, write_alpaca_csv

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "Rambutan-manis-42"
MODELS = ("sahabat-ai", "komodo-7b", "seallm-v3")  # the models named in the CSV
ADD_EN = "Add and send the set-password link"
ADD_ID = "Tambahkan dan kirim tautan pembuatan kata sandi"
YES_NO = {"1": "yes", "2": "no"}  # the keys of the yes/no criterion's categories


@pytest.fixture(autouse=True)
def _clean_cache():
    cache.clear()


@pytest.fixture
def problems():
    """Errors any page wrote to the browser console (a blocked script, a failed request)."""
    return []


@pytest.fixture
def new_page(browser, live_server, problems):
    """Pages in browser contexts of their own (one person each), closed after the test."""
    contexts = []

    def _new():
        context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(10_000)
        page.on("console", lambda m: m.type == "error" and problems.append(m.text))
        return page

    yield _new
    for context in contexts:
        context.close()


def nav(page, name):
    page.locator("nav.mainnav").get_by_role("link", name=name, exact=True).click()


def import_dataset(page, queued, tmp_path):
    nav(page, "Datasets")
    path = write_alpaca_csv(tmp_path / "peribahasa.csv", alpaca_rows(3))
    page.set_input_files("#id_file", str(path))
    page.fill("#id_name", "Peribahasa")
    page.click("[data-testid=upload-form] button[type=submit]")
    page.wait_for_selector("[data-testid=preview]")
    page.select_option("#col-prompt", "instruction")
    page.select_option("#resp-0-model_column", "generator_1")
    page.select_option("#resp-1-model_column", "generator_2")
    page.fill("#const-language", "ind")
    page.click("[data-testid=start-import]")
    page.wait_for_selector("[data-testid=import-progress]")
    run_import_worker(queued)  # the worker's part
    page.wait_for_selector("[data-testid=dataset-link]", timeout=15_000)
    assert page.inner_text("[data-testid=import-counts]") == "3 prompts, 6 responses"


def design_rubrics(page):
    nav(page, "Rubrics")
    page.get_by_test_id("rubric-new").click()
    page.fill("#id_criterion", "helpfulness")
    page.fill("#id_label_id", "Kebermanfaatan")
    page.fill("#id_label_en", "Helpfulness")
    page.fill("#id_question_id", "Seberapa membantu jawaban ini?")
    page.fill("#id_question_en", "How helpful is this response?")
    page.fill("#id_points", "7")
    page.fill("#id_level_id_1", "Tidak membantu")
    page.fill("#id_level_en_1", "Not helpful")
    page.fill("#id_level_id_7", "Sangat membantu")
    page.fill("#id_level_en_7", "Very helpful")
    page.get_by_test_id("rubric-save").click()
    page.locator("[data-criterion=helpfulness]").wait_for()

    page.get_by_test_id("rubric-new").click()
    page.fill("#id_criterion", "safe")
    page.fill("#id_label_id", "Aman")
    page.fill("#id_label_en", "Safe")
    page.check("input[name=scale_kind][value=categories]")
    for n, (value, label_id, label_en) in enumerate((("yes", "Ya", "Yes"), ("no", "Tidak", "No")), start=1):
        page.fill(f"#id_cat_value_{n}", value)
        page.fill(f"#id_cat_id_{n}", label_id)
        page.fill(f"#id_cat_en_{n}", label_en)
    page.get_by_test_id("rubric-save").click()
    page.locator("[data-criterion=safe]").wait_for()


def create_project(page):
    nav(page, "Projects")
    page.get_by_role("link", name="New project").click()
    page.get_by_role("link", name="Likert rating").click()
    page.select_option("#id_dataset", label="Peribahasa")
    page.get_by_test_id("dataset-summary").wait_for()
    assert page.get_by_test_id("n-items").inner_text() == "3"
    page.fill("#id_name", "Studi peribahasa")
    for box in page.locator("input[name=criteria]").all():
        box.uncheck()
    page.check("input[name=criteria][value=helpfulness]")
    page.check("input[name=criteria][value=safe]")
    # The preview is the annotator's card: responses by position, the designed scales, no model name.
    preview = page.get_by_test_id("task-preview")
    preview.locator("input[name=r-1-safe]").first.wait_for()
    assert preview.locator("input[name=r-1-helpfulness]").count() == 7
    assert preview.locator("input[name=r-2-safe]").count() == 2
    assert preview.locator("input[name^=r-1-relevance]").count() == 0
    assert preview.locator(".response-card h3").all_inner_texts() == ["Response 1", "Response 2"]
    assert "Yes" in preview.inner_text() and not any(m in preview.inner_html() for m in MODELS)
    page.select_option("#id_best_pick", "off")
    page.fill("#id_overlap", "2")
    page.fill("#id_groups", "Jawa, Sunda")
    page.get_by_role("button", name="Create project").click()
    page.wait_for_url(re.compile(r".*/annotate/manage/\d+/$"))


def add_person(page, username, first_name, *, people="People", role="Annotator", add=ADD_EN):
    nav(page, people)
    page.fill("#id_username", username)
    page.fill("#id_first_name", first_name)
    page.fill("#id_email", f"{username}@example.org")
    page.fill("#id_language", "ind")
    page.get_by_role("checkbox", name=role, exact=True).check()
    page.get_by_role("button", name=add).click()
    page.locator(f"tr[data-username={username}]").wait_for()


def set_password_link(username):
    message = next(m for m in mail.outbox if f"{username}@example.org" in m.to)
    return re.search(r"https?://\S+/accounts/reset/\S+/", message.body).group(0)


def rate_everything(page, keys_per_task):
    """Rate each task shown with the keyboard (the next one is swapped in); returns how many were rated."""
    page.wait_for_load_state("load")  # the form can be in the DOM before the deferred annotator.js has run
    for keys in keys_per_task:
        form = page.locator("#task-form")
        form.wait_for()
        assert form.locator("input[name$=-helpfulness]").count() == 14  # 7 points x 2 responses
        before = page.get_by_test_id("progress").inner_text()
        for key in keys:
            page.keyboard.press(key)
        checked = page.locator("fieldset.scale input:checked")
        expected = [keys[0], YES_NO[keys[1]], keys[2], YES_NO[keys[3]]]
        assert [checked.nth(i).get_attribute("value") for i in range(checked.count())] == expected
        page.keyboard.press("Enter")
        page.wait_for_function(
            "before => { const p = document.querySelector('[data-testid=progress]');"
            " return !document.getElementById('task-form') || (p && p.innerText !== before); }",
            arg=before,
        )
    return page.locator("#task-form").count() == 0


def test_a_study_from_an_empty_database(new_page, login, queued, tmp_path, problems):
    # An empty database as migrations leave it: the role groups of accounts.0001 (a live-server test
    # before this one may have flushed them).
    for name in ALL_ROLES:
        Group.objects.get_or_create(name=name)
    manager = new_page()
    login(manager, "project_manager", username="manajer")

    import_dataset(manager, queued, tmp_path)
    design_rubrics(manager)
    create_project(manager)
    project = Project.objects.get(name="Studi peribahasa")
    assert project.criteria == ["helpfulness", "safe"]
    assert sorted(project.groups.values_list("name", flat=True)) == ["Jawa", "Sunda"]

    add_person(manager, "sekar", "Sekar")
    assert manager.locator("tr[data-username=sekar]").inner_text().split("\t")[3] == "Annotator"
    manager.click("[data-testid=lang-id]")  # the second one in Indonesian
    manager.wait_for_load_state()
    add_person(manager, "bagus", "Bagus", people="Orang", role="Anotator", add=ADD_ID)
    assert manager.locator("tr[data-username=bagus]").inner_text().split("\t")[3] == "Anotator"
    manager.click("[data-testid=lang-en]")
    manager.wait_for_load_state()
    nav(manager, "Projects")
    manager.get_by_role("link", name="Studi peribahasa").click()
    for username, group in (("sekar", "Jawa"), ("bagus", "Sunda")):
        manager.select_option("#id_users", label=f"{username} ({username.title()})")
        manager.select_option("#id_group", label=group)
        with manager.expect_navigation():
            manager.get_by_role("button", name="Add to group").click()
    with manager.expect_navigation():
        manager.get_by_role("button", name="Activate").click()
    assert manager.get_by_test_id("status").inner_text() == "Active"

    # Each annotator: the e-mailed link, a password, the login form, then every task with the keyboard.
    answers = {
        "sekar": [("7", "1", "2", "2"), ("6", "1", "1", "2"), ("5", "2", "3", "1")],
        "bagus": [("7", "1", "1", "2"), ("5", "1", "2", "2"), ("6", "2", "3", "2")],
    }
    for username in ("sekar", "bagus"):
        page = new_page()
        page.goto(set_password_link(username))
        page.fill("#id_new_password1", PASSWORD)
        page.fill("#id_new_password2", PASSWORD)
        page.get_by_role("button", name="Set password").click()
        page.get_by_role("heading", name="Password set").wait_for()
        page.get_by_role("main").get_by_role("link", name="Log in").click()
        page.fill("#id_username", username)
        page.fill("#id_password", PASSWORD)
        page.click('form[action="/accounts/login/"] button[type=submit]')
        page.wait_for_url("**/")
        if username == "bagus":
            page.click("[data-testid=lang-id]")
            page.wait_for_load_state()
        page.goto("/")
        page.get_by_test_id("annotator-project").get_by_role("button").first.click()
        page.wait_for_selector("#task-form")
        html = page.content()
        assert not any(model in html for model in MODELS)  # blinded
        if username == "bagus":
            text = page.inner_text("#task-form")
            assert "Kebermanfaatan" in text and "Aman" in text and "Sangat membantu" in text
            assert "Helpfulness" not in text and "Respons 1" in text
        assert rate_everything(page, answers[username])  # nothing left
        listed = page.request.get("/api/v1/projects/")  # what a script of theirs reads, blinded too
        assert listed.ok and "Studi peribahasa" in listed.text()
        assert not any(model in listed.text() for model in MODELS)
        assert Annotation.objects.filter(assignment__annotator__username=username).count() == 12

    def matrix(criterion, field, codes=None):
        rows = []
        units = sorted(
            set(
                Annotation.objects.filter(criterion=criterion).values_list(
                    "assignment__task_id", "response_id"
                )
            )
        )
        for username in ("sekar", "bagus"):
            values = {
                (task, response): value
                for task, response, value in Annotation.objects.filter(
                    criterion=criterion, assignment__annotator__username=username
                ).values_list("assignment__task_id", "response_id", field)
            }
            rows.append([codes[values[u]] if codes else values[u] for u in units])
        return np.array(rows, dtype=float)

    ordinal = krippendorff.alpha(
        reliability_data=matrix("helpfulness", "value_int"), level_of_measurement="ordinal"
    )
    nominal = krippendorff.alpha(
        reliability_data=matrix("safe", "choice", {"yes": 0, "no": 1}), level_of_measurement="nominal"
    )

    assert np.isfinite(ordinal) and np.isfinite(nominal)
    manager.goto("/")
    nav(manager, "Agreement")
    manager.get_by_role("link", name="Studi peribahasa").click()
    table = manager.locator("[data-table=alpha-alpha]")
    table.wait_for()
    helpfulness = table.locator("tr", has_text="helpfulness").inner_text()
    safe = table.locator("tr", has_text="safe").inner_text()
    assert "ordinal" in helpfulness and f"{ordinal:.3f}" in helpfulness
    assert "nominal" in safe and f"{nominal:.3f}" in safe
    assert problems == []
