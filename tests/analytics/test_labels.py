"""The dashboard shows the report's codes by their labels in the page's language; the API keeps the codes."""

from __future__ import annotations

import pytest
from django.utils import translation

from analytics.labels import Labels
from analytics.views import panels
from annotation.models import Rubric

from .test_reports import likert, pairwise  # noqa: F401 - the answered Likert and pairwise project fixtures

pytestmark = pytest.mark.django_db

NO_ESTIMATE = (
    "the Bradley-Terry estimate does not exist: some group of models never wins (or never loses) against "
    "the others"
)


def bradley_terry_report(note: str) -> dict:
    return {"sections": {"bradley_terry": {"tables": {"ratings": []}, "note": note}}}


def test_the_bradley_terry_refusal_is_shown_in_the_page_language():
    note = f"pairwise: {NO_ESTIMATE}; best_of_n: Bradley-Terry needs votes between at least two models"
    with translation.override("id"):
        (panel,) = panels(bradley_terry_report(note), project_id=1, level="ordinal")
    assert panel["note"] == (
        "Suara berpasangan: estimasi Bradley-Terry tidak ada: sekelompok model tidak pernah menang (atau tidak "
        "pernah kalah) melawan model lainnya; Pilihan terbaik dari N: Bradley-Terry memerlukan suara antara "
        "sedikitnya dua model"
    )
    with translation.override("en"):
        (panel,) = panels(bradley_terry_report(note), project_id=1, level="ordinal")
    assert panel["note"] == (
        f"Pairwise votes: {NO_ESTIMATE}; Best-of-N picks: Bradley-Terry needs votes between at least two models"
    )


def test_a_note_of_the_catalogue_is_translated_whole_and_an_unknown_one_shown_as_written():
    with translation.override("id"):
        labels = Labels()
        assert labels.note("No submitted answers yet.") != "No submitted answers yet."
        assert labels.note("pairwise: something new; other") == "pairwise: something new; other"
        assert labels.note("pairwise: a reason not listed") == "Suara berpasangan: a reason not listed"


def test_values_by_column():
    Rubric.objects.create(
        criterion="clarity", version=1, label={"id": "Kejelasan", "en": "Clarity"}, levels={}
    )
    Rubric.objects.create(
        criterion="clarity", version=2, label={"id": "Kejernihan", "en": "Clarity"}, levels={}
    )
    with translation.override("id"):
        labels = Labels()
        assert labels.value("criterion", "relevance") == "Relevansi"
        assert labels.value("criterion", "clarity") == "Kejernihan"  # the newest rubric's label
        assert labels.value("criterion", "unknown_slug") == "unknown_slug"
        assert labels.value("vote", "tie") == "Seri"
        assert labels.value("winner", "both_bad") == "Keduanya buruk"
        assert labels.value("value", "tie", {"criterion": "vote"}) == "Seri"
        assert labels.value("value", "4", {"criterion": "relevance"}) == "4"
        assert labels.value("kind", "pairwise") == "Putusan berpasangan"
        assert labels.value("source", "best_of_n") == "Pilihan terbaik dari N"
        assert labels.value("judge", "qwen-7b (run 12)") == "qwen-7b (proses 12)"
        assert labels.value("judge", "human-human") == "Antarmanusia"
        assert labels.value("judge", "my-judge") == "my-judge"
        assert labels.value("n_items", 3) == 3
        assert labels.row({"kind": "human", "judge": "ensemble"}, keep=("kind",)) == {
            "kind": "human",
            "judge": "Gabungan juri",
        }


def test_the_api_keeps_the_codes_under_indonesian(api_client_for, pairwise):  # noqa: F811
    api = api_client_for("researcher")
    body = api.get(f"/api/v1/projects/{pairwise.pk}/agreement", HTTP_ACCEPT_LANGUAGE="id").json()
    rows = body["sections"]["distributions"]["tables"]["distributions"]
    assert {(r["criterion"], r["value"]) for r in rows} >= {("vote", "tie"), ("vote", "both_bad")}
    assert {r["source"] for r in body["sections"]["bradley_terry"]["tables"]["ratings"]} == {"pairwise"}


def test_the_breakdowns_name_their_dimensions_in_the_pages_language(role_client, likert):  # noqa: F811
    client = role_client("project_manager")
    url = f"/analytics/projects/{likert.pk}/"
    indonesian = client.get(url, HTTP_ACCEPT_LANGUAGE="id").content.decode()
    table = indonesian[indonesian.index('data-table="breakdowns-') :]
    table = table[: table.index("</table>")]
    assert "<td>Kategori</td>" in table and "<td>category</td>" not in table
    english = client.get(url).content.decode()
    assert "<td>Category</td>" in english
    assert "category" in client.get(url + "breakdowns/breakdowns.csv").content.decode()  # the CSV keeps codes
