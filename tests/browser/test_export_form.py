"""The export form in the browser, in Indonesian: a refused option is named in the page's language, by the
field's label, in the htmx preview and after an export is asked for; nothing is written."""

import pytest

from exports.models import Export
from tests.annotation import conftest as annotation_fixtures

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

make_project = annotation_fixtures.make_project


def test_a_refused_option_reads_in_indonesian_in_the_preview_and_on_export(page, login, make_project):
    project = make_project(n_prompts=2, n_models=2, per_group=0, activate=False, best_pick="required")
    login(page, "researcher")
    page.click("[data-testid=lang-id]")
    page.wait_for_load_state()
    page.goto("/datasets/exports/")
    page.click(f"a[href='/datasets/exports/new/{project.pk}/']")
    page.wait_for_load_state()
    assert page.locator("h1").inner_text().startswith("Ekspor")
    page.select_option("#id_strategy", "pairwise_majority")
    page.get_by_test_id("preview").click()
    error = page.locator("#preview .error")
    error.wait_for()
    text = error.inner_text()
    assert "proyek likert diekspor dengan scores atau best_vs_rest, bukan pairwise_majority" in text
    assert text.startswith("Strategi:")  # the field's label, not the option's code name
    assert "exports with" not in text
    page.select_option("#id_strategy", "")
    page.fill("#id_weights", "accuracy=2")
    page.get_by_test_id("export").click()
    page.wait_for_load_state()
    field_error = page.locator("#id_weights ~ .errorlist, .errorlist").first
    assert "kriteria yang tidak dinilai di proyek ini: accuracy" in field_error.inner_text()
    assert not Export.objects.exists()
