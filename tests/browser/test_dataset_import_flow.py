"""Import in the browser: upload a CSV whose columns are not ours, see its first rows, map its columns, follow
the background import, open the dataset; a bad file's line-numbered errors on the page, nothing written.

The worker is this test: the page's request queues the task (its message is kept here instead of going to a
broker) and the test runs that task, as a worker would, while the page polls."""

import pytest

from datasets_app.models import Dataset, DatasetImport, ImportMapping, Response
from tests.browser.conftest import run_import_worker
from tests.datasets_app.alpaca import alpaca_rows, write_alpaca_csv

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def upload(page, path, name):
    page.goto("/datasets/")
    page.set_input_files("#id_file", str(path))
    page.fill("#id_name", name)
    page.click("[data-testid=upload-form] button[type=submit]")
    page.wait_for_selector("[data-testid=preview]")


def test_upload_preview_map_and_import_in_the_background(page, login, queued, tmp_path):
    login(page, "project_manager")
    path = write_alpaca_csv(tmp_path / "alpaca-id.csv", alpaca_rows(4))
    upload(page, path, "AlpacaEval ID")
    preview = page.locator("[data-testid=preview]")
    assert preview.locator("thead th").all_inner_texts() == [
        "instruction", "output_1", "generator_1", "output_2", "generator_2", "dataset",
    ]  # fmt: skip
    assert "Jelaskan peribahasa nomor 0." in preview.inner_text()
    # The suggested mapping is there; the user changes the language for every row and names the mapping.
    assert page.input_value("#col-prompt") == "instruction"
    assert page.input_value("#resp-0-model_column") == "generator_1"
    assert page.input_value("#resp-1-model_column") == "generator_2"
    page.fill("#const-language", "jav")
    page.select_option("#col-category", "")
    page.fill("#const-category", "peribahasa-jawa")
    page.fill("#save_mapping_as", "alpaca-eval")
    page.click("[data-testid=start-import]")

    page.wait_for_selector("[data-testid=import-progress]")
    assert page.inner_text("[data-testid=import-status]").startswith("Queued")
    assert Dataset.objects.count() == 0
    run_import_worker(queued)
    page.wait_for_selector("[data-testid=dataset-link]", timeout=15_000)
    assert page.inner_text("[data-testid=import-counts]") == "4 prompts, 8 responses"
    assert page.locator("[data-testid=import-progress]").count() == 0

    page.click("[data-testid=dataset-link]")
    page.wait_for_selector("#prompt-table")
    assert "4 prompts" in page.inner_text("#prompt-table")
    page.click("#prompt-table tbody a >> nth=0")
    text = page.inner_text("main")
    assert "Jelaskan peribahasa nomor 0." in text and "sahabat-ai" in text and "seallm-v3" in text
    dataset = Dataset.objects.get(name="AlpacaEval ID")
    assert set(dataset.prompts.values_list("language", "category")) == {("jav", "peribahasa-jawa")}
    assert sorted(Response.objects.filter(prompt__dataset=dataset).values_list("model_name", flat=True)) == [
        "komodo-7b", "komodo-7b", "sahabat-ai", "sahabat-ai", "sahabat-ai", "sahabat-ai", "seallm-v3", "seallm-v3",
    ]  # fmt: skip
    assert ImportMapping.objects.get(name="alpaca-eval").mapping == DatasetImport.objects.get().mapping


def test_bad_file_shows_line_numbered_errors_and_writes_nothing(page, login, queued, tmp_path):
    login(page, "researcher")
    rows = alpaca_rows(8)
    rows[2]["instruction"] = " "
    rows[6]["generator_2"] = ""
    upload(page, write_alpaca_csv(tmp_path / "bad.csv", rows), "Bad pairs")
    page.click("[data-testid=start-import]")
    page.wait_for_selector("[data-testid=import-progress]")
    run_import_worker(queued)
    page.wait_for_selector("[data-testid=import-errors]", timeout=15_000)
    assert "2 problems; nothing was written" in page.inner_text("#import-status")
    cells = [
        row.locator("td").all_inner_texts()[:2]
        for row in page.locator("[data-testid=import-errors] tbody tr").all()
    ]
    assert cells == [["line 4", "instruction (prompt)"], ["line 8", "generator_2 (responses[1].model)"]]
    assert Dataset.objects.count() == 0 and Response.objects.count() == 0
