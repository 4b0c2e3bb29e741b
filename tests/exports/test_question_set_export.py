"""The final question set of a question project as a recorded export: the exclusion rule, answer
statistics, card, pseudonyms, offline loading, the stored limit, authoring projects, page and API."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from django.urls import reverse
from huggingface_hub import DatasetCard

from annotation import services
from datasets_app.models import Question
from exports.models import Export
from exports.selectors import annotator_pseudonym
from exports.services import ExportInvalid, ExportOptions, export_create, export_preview
from tests.annotation.conftest import build_question_dataset
from tests.exports.conftest import exported_text, load_offline

pytestmark = pytest.mark.django_db

CREATOR = ("ayu.pembuat", "ayu.pembuat@example.org")
ANSWERERS = (
    ("rina.penjawab", "rina.penjawab@example.org"),
    ("joko.penjawab", "joko.penjawab@example.org"),
    ("made.penjawab", "made.penjawab@example.org"),
)
# Answers per question (by the last character of its id) and answerer; "!" flags it ambiguous. The key is
# A. q1 gets its second flag from answerer 1 (2 > max_ambiguous 1): it is excluded and never reaches
# answerer 2.
PLAN = {
    "0": ("A", "A", "C"),
    "1": ("A!", "B!", None),
    "2": ("B", "B!", "A"),
}


def _answer(project, user, index: int) -> None:
    while (work := services.assignment_claim(project=project, user=user)) is not None:
        spec = PLAN[work.task.question.external_id[-1]][index]
        payload = {"choice": spec[0]}
        if spec.endswith("!"):
            payload.update(ambiguous=True, comment="Dua jawaban bisa benar.")
        services.assignment_submit(token=work.token, user=user, payload=payload)


@pytest.fixture
def answering(make_user):
    """Questions q0 (food), q1 (food), q2 (place) and q3 (returned: no answering task) by one creator;
    an answering project with three answerers, overlap 3 and max_ambiguous 1, answered after ``PLAN``."""
    creator = make_user("annotator", username=CREATOR[0], email=CREATOR[1])
    dataset = build_question_dataset(creators=[creator], n_per_creator=4)
    by_id = {q.external_id[-1]: q for q in Question.objects.filter(dataset=dataset)}
    # The builder's ids hold the creator's username; these questions get neutral ids.
    for suffix, question in by_id.items():
        Question.objects.filter(pk=question.pk).update(external_id=f"soal-{suffix}")
    Question.objects.filter(pk=by_id["2"].pk).update(category="place", concept="pura", language="ban")
    Question.objects.filter(pk=by_id["3"].pk).update(status="returned")
    answerers = [make_user("annotator", username=u, email=e) for u, e in ANSWERERS]
    project = services.project_create(
        dataset=dataset, name="Jawab", kind="mcq_answer", overlap=3, seed=11, max_ambiguous=1
    )
    for user in answerers:
        services.project_member_add(project=project, user=user, group=project.groups.get())
    services.project_activate(project=project)
    for index, user in enumerate(answerers):
        _answer(project, user, index)
    project.refresh_from_db()
    project.creator = creator
    return project


def _run(project, settings, tmp_path, capture, **options) -> Export:
    settings.EXPORTS_DIR = tmp_path / "exports"
    with capture(execute=True):
        record = export_create(project=project, options=ExportOptions(kind="", **options))
    record.refresh_from_db()
    assert record.status == "succeeded", record.error
    return record


def test_question_set_rows_card_and_offline_load(
    answering, settings, tmp_path, django_capture_on_commit_callbacks
):
    record = _run(answering, settings, tmp_path, django_capture_on_commit_callbacks)
    assert (record.kind, record.options["max_ambiguous"], record.filters) == (
        "question-set",
        1,
        {"max_ambiguous": 1},
    )
    folder = Path(record.folder_path)
    loaded = load_offline(folder, tmp_path)
    assert loaded["train"]["columns"] == [
        "id",
        "concept",
        "category",
        "language",
        "question",
        "choice_a",
        "choice_b",
        "choice_c",
        "choice_d",
        "choice_e",
        "answer",
        "distractor",
        "creator",
        "origin",
        "n_answers",
        "accuracy",
        "n_ambiguous",
    ]
    rows = {r["id"][-1]: r for r in loaded["train"]["rows"]}
    # q1 was excluded by the ambiguity rule, q3 was never accepted.
    assert sorted(rows) == ["0", "2"]
    creator = annotator_pseudonym(project=answering, user_id=answering.creator.pk)
    # q0: A, A, C against key A: 2 of 3 right. q2: B, B, A: 1 of 3 right, one flag.
    assert {
        k: (r["category"], r["language"], r["creator"], r["origin"], r["n_answers"], r["n_ambiguous"])
        for k, r in rows.items()
    } == {
        "0": ("food", "ind", creator, "human", 3, 0),
        "2": ("place", "ban", creator, "human", 3, 1),
    }
    assert rows["0"]["accuracy"] == pytest.approx(2 / 3) and rows["2"]["accuracy"] == pytest.approx(1 / 3)
    assert (rows["2"]["concept"], rows["2"]["answer"], rows["2"]["distractor"]) == ("pura", "A", "B")
    assert [rows["0"][f"choice_{c}"] for c in "abcde"] == ["opor ayam", "es krim", "roti", "keju", "sereal"]

    card = DatasetCard.load(folder / "README.md")
    assert card.data.language == ["ban", "ind"]
    assert card.data.task_categories == ["multiple-choice", "question-answering"]
    assert "| food | 1 |" in card.text and "| place | 1 |" in card.text
    assert "at most 1 answers" in card.text and "1 excluded" in card.text
    assert record.counts["categories"] == {"food": 1, "place": 1}
    assert record.counts["not_accepted"] == {"excluded": 1} and record.counts["questions"] == 3

    texts = exported_text(folder)
    with zipfile.ZipFile(record.zip_path) as archive:
        assert sorted(archive.namelist()) == ["README.md", "data/train-00000-of-00001.parquet"]
        texts["zip"] = b"".join(archive.read(n) for n in archive.namelist()).decode("latin-1")
    # build_question_dataset stores the creator's username as creator_name too: it must not go out.
    for secret in (*CREATOR, *(s for pair in ANSWERERS for s in pair)):
        assert not [path for path, text in texts.items() if secret in text], secret


def test_a_stricter_limit_is_stored_and_drops_flagged_questions(
    answering, settings, tmp_path, django_capture_on_commit_callbacks
):
    preview = export_preview(project=answering, options=ExportOptions(kind="", max_ambiguous=0))
    # q2 has one flag: over a limit of 0.
    assert (preview["rows"], preview["over_ambiguous"], preview["categories"]) == (1, 1, {"food": 1})
    record = _run(answering, settings, tmp_path, django_capture_on_commit_callbacks, max_ambiguous=0)
    assert record.options["max_ambiguous"] == 0 and record.counts["rows"] == 1
    again = export_create(project=answering, options=ExportOptions.from_dict(record.options), queue=False)
    assert again.options == record.options
    with pytest.raises(ExportInvalid) as caught:
        export_create(project=answering, options=ExportOptions(kind="parallel-corpus"))
    assert "format" in caught.value.errors


def test_authoring_project_exports_its_accepted_questions_with_answers_from_answering_projects(
    make_user, settings, tmp_path, django_capture_on_commit_callbacks
):
    author, reviewer, answerer = make_user("annotator"), make_user("reviewer"), make_user("annotator")
    authoring = services.project_create(dataset=None, name="Tulis soal", kind="question_authoring", overlap=1)
    services.project_member_add(project=authoring, user=author, group=authoring.groups.get())
    services.concept_pairs_add(
        project=authoring,
        records=[
            ("line 1", {"category": "food", "concept": "ketupat"}),
            ("line 2", {"category": "place", "concept": "pura"}),
        ],
    )
    services.project_activate(project=authoring)
    answering = services.project_create(
        dataset=authoring.dataset, name="Jawab soal", kind="mcq_answer", overlap=1
    )
    services.project_member_add(project=answering, user=answerer, group=answering.groups.get())
    services.project_activate(project=answering)
    question = {
        "question": "Makanan apa yang biasa disajikan bersama ketupat saat Lebaran?",
        "choices": {"A": "opor ayam", "B": "rendang", "C": "es krim", "D": "roti bakar", "E": "sereal"},
        "answer": "A",
        "distractor": "B",
    }
    work = services.assignment_claim(project=authoring, user=author)
    services.assignment_submit(
        token=work.token,
        user=author,
        payload={**question, "question": f"Apa hubungan {work.task.concept_pair.concept} dengan Lebaran?"},
    )
    services.review_create(assignment=work, reviewer=reviewer, verdict="accept")
    # The second pair's question stays in review: not in the set.
    other = services.assignment_claim(project=authoring, user=author)
    services.assignment_submit(
        token=other.token,
        user=author,
        payload={**question, "question": f"Di mana {other.task.concept_pair.concept} berada?"},
    )
    answer = services.assignment_claim(project=answering, user=answerer)
    services.assignment_submit(token=answer.token, user=answerer, payload={"choice": "C"})

    record = _run(authoring, settings, tmp_path, django_capture_on_commit_callbacks)
    rows = load_offline(Path(record.folder_path), tmp_path)["train"]["rows"]
    assert len(rows) == 1
    row = rows[0]
    assert row["concept"] == work.task.concept_pair.concept
    assert row["creator"] == annotator_pseudonym(project=authoring, user_id=author.pk)
    # The one answer (C, key A) came from the answering project over the same dataset.
    assert (row["n_answers"], row["accuracy"], row["n_ambiguous"]) == (1, 0.0, 0)
    assert record.counts["not_accepted"] == {"in_review": 1}


def test_export_page_and_api_offer_the_question_set(
    answering, role_client, api_client_for, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.EXPORTS_DIR = tmp_path / "exports"
    client = role_client("researcher")
    page = client.get(reverse("exports:export_new", args=[answering.pk])).content.decode()
    assert (
        'value="question-set"' in page and 'name="max_ambiguous"' in page and 'name="test_size"' not in page
    )
    form = {"kind": "question-set", "max_ambiguous": "0", "license": "", "pretty_name": "", "push_to_hub": ""}
    preview = client.post(
        reverse("exports:export_preview", args=[answering.pk]), form, HTTP_HX_REQUEST="true"
    )
    assert "1 question" in preview.content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("exports:export_new", args=[answering.pk]), form)
    assert response.status_code == 302
    record = Export.objects.get()
    assert (record.kind, record.status, record.options["max_ambiguous"]) == ("question-set", "succeeded", 0)

    api = api_client_for("project_manager")
    with django_capture_on_commit_callbacks(execute=True):
        created = api.post("/api/v1/exports/create", {"project": answering.pk}, format="json")
    assert created.status_code == 202
    body = api.get(f"/api/v1/exports/{created.json()['id']}").json()
    assert (body["format"], body["options"]["max_ambiguous"], body["counts"]["rows"]) == (
        "question-set",
        1,
        2,
    )
    refused = api.post(
        "/api/v1/exports/preview", {"project": answering.pk, "split": "test=0.2"}, format="json"
    )
    assert refused.status_code == 400 and "split" in refused.json()["errors"]
