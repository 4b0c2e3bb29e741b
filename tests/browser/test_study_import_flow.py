"""Moving a study in from another tool in the browser, in English and in Indonesian: upload a Label Studio
export with the tool chosen, see what was found, choose the fields, import in the background, follow the
import's page to the new project; a bad
file shows every problem by file, record and field, and nothing is written."""

import json

import pytest

from annotation.models import Annotation, Project
from tests.annotation.tool_studies import files

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WORDS = {
    "en": {"link": "Import a study from another tool", "upload": "Upload and preview", "found": "What was found",
           "import": "Import the study with its answers", "problems": "2 problems. Nothing was written.",
           "missing": "Missing: whose answer is this?", "rating": "Expected a whole number from 1; got 2.5.",
           "done": "4 items, 3 annotators, 11 answers imported."},
    "id": {"link": "Impor studi dari alat lain", "upload": "Unggah dan pratinjau", "found": "Yang ditemukan",
           "import": "Impor studi beserta jawabannya", "problems": "2 masalah. Tidak ada yang ditulis.",
           "missing": "Tidak ada: jawaban siapa ini?", "rating": "Diharapkan bilangan bulat mulai dari 1; didapat 2.5.",
           "done": "4 butir, 3 anotator, 11 jawaban diimpor."},
}  # fmt: skip


def _open_upload(page, login, lang, settings, tmp_path):
    settings.UPLOADS_DIR = tmp_path / "uploads"
    login(page, "project_manager", username="manajer")
    if lang == "id":
        page.click("[data-testid=lang-id]")
        page.wait_for_load_state()
    page.goto("/annotate/manage/")
    page.get_by_role("link", name=WORDS[lang]["link"]).click()
    page.wait_for_selector("[data-testid=study-upload-form]")


@pytest.mark.parametrize("lang", ["en", "id"])
def test_label_studio_study_imported_through_the_page(page, login, lang, settings, tmp_path):
    _open_upload(page, login, lang, settings, tmp_path)
    path = files.write_json(tmp_path / "label-studio-export.json", files.label_studio_rating_tasks())
    page.select_option("#id_tool", "label_studio")
    page.set_input_files("#id_file", str(path))
    page.fill("#id_name", f"Studi {lang}")
    page.select_option("#id_language", "jav")
    page.get_by_role("button", name=WORDS[lang]["upload"]).click()
    page.wait_for_selector("[data-testid=study-summary]")
    summary = page.get_by_test_id("study-summary")
    assert WORDS[lang]["found"] in summary.inner_text()
    assert page.inner_text("[data-testid=n-answers]") == "11"
    assert page.inner_text("[data-testid=n-annotators]") == "3"
    assert page.input_value("#prompt_field") == "prompt"
    # Choose the item id field and read again: the items keep their own ids.
    page.select_option("#item_id_field", "item")
    page.click("[data-testid=field-mapping] button[type=submit]")
    page.wait_for_selector("[data-testid=study-items]")
    assert page.locator("[data-testid=study-items] tbody tr td >> nth=0").inner_text() == "p1"
    page.get_by_role("button", name=WORDS[lang]["import"]).click()
    # The import runs in the background; its page shows where it stands, then links to the project.
    page.wait_for_url("**/annotate/manage/imports/*/")
    page.wait_for_selector("#study-import-status[data-status=succeeded]")
    assert WORDS[lang]["done"] in page.inner_text("[data-testid=study-import-counts]")
    page.click("[data-testid=study-project-link]")
    page.wait_for_url("**/annotate/manage/*/")
    project = Project.objects.get(name=f"Studi {lang}")
    assert project.status == "active" and project.criteria == ["quality", "correct"]
    assert set(project.dataset.prompts.values_list("external_id", "language")) == {
        ("p1", "jav"), ("p2", "jav"), ("p3", "jav"), ("p4", "jav"),
    }  # fmt: skip
    assert Annotation.objects.filter(assignment__project=project).count() == 19
    assert f"Studi {lang}" in page.inner_text("main")


@pytest.mark.parametrize("lang", ["en", "id"])
def test_bad_export_lists_every_problem_and_writes_nothing(page, login, lang, settings, tmp_path):
    _open_upload(page, login, lang, settings, tmp_path)
    tasks = files.label_studio_rating_tasks()
    tasks[1]["annotations"][2]["result"][0]["value"]["rating"] = 2.5
    tasks[3]["annotations"][1]["completed_by"] = None
    path = tmp_path / "rusak.json"
    path.write_text(json.dumps(tasks), encoding="utf-8")
    page.select_option("#id_tool", "label_studio")
    page.set_input_files("#id_file", str(path))
    page.fill("#id_name", "Rusak")
    page.get_by_role("button", name=WORDS[lang]["upload"]).click()
    page.wait_for_selector("[data-testid=study-problems]")
    assert WORDS[lang]["problems"] in page.inner_text("[data-testid=study-problems]")
    rows = [
        r.locator("td").all_inner_texts()[:3]
        for r in page.locator("[data-testid=study-problems] tbody tr").all()
    ]
    assert rows == [
        ["rusak.json", "task 4 annotation 412", "completed_by"],
        ["rusak.json", "task 2 annotation 213", "result[0].value.rating"],
    ]
    messages = page.locator("[data-testid=study-problems] tbody tr td:nth-child(4)").all_inner_texts()
    assert messages == [WORDS[lang]["missing"], WORDS[lang]["rating"]]
    assert page.locator("[data-testid=study-confirm]").count() == 0
    assert not Project.objects.exists()
