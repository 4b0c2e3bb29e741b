"""Pages of the translation and question jobs: task forms, permissions, manager reports, blinding."""

import io
import json
import re
import zipfile

import pytest
from django.core.management import call_command
from django.urls import reverse
from rest_framework.test import APIClient

from annotation import services
from annotation.models import Assignment, Project, QuestionErrorReview
from datasets_app.models import Question, TranslationUnit
from exports.models import Export
from tests.annotation.conftest import build_question_dataset, build_translation_dataset

pytestmark = pytest.mark.django_db


def http_text(response) -> str:
    return " ".join(f"{k}: {v}" for k, v in response.items()) + "\n" + response.content.decode()


def scan(text: str, forbidden: list[str], where: str) -> None:
    leaked = [s for s in forbidden if s and s in text]
    assert not leaked, f"{where} shows {leaked[:5]}"


@pytest.fixture
def translation_setup(make_user, job_project):
    dataset = build_translation_dataset(n_units=2, name="dataset-secret-translations")
    translator = make_user("annotator", username="translator-secret-name")
    reviewer = make_user("annotator", username="reviewer-one")
    translate = job_project(kind="translation", dataset=dataset, members=[translator])
    review = job_project(kind="translation_review", dataset=dataset, members=[reviewer])
    return dataset, translate, review, translator, reviewer


def test_translator_and_reviewer_pages_post_forms_and_stay_blind(client, translation_setup):
    dataset, translate, review, translator, reviewer = translation_setup
    units = list(TranslationUnit.objects.filter(dataset=dataset))
    forbidden = [
        dataset.name,
        translator.get_username(),
        *(u.external_id for u in units),
    ]
    client.force_login(translator)
    started = client.post(reverse("annotation:start", args=[translate.pk]))
    page = client.get(started["Location"])
    body = page.content.decode()
    # Which of the two units comes first depends on the translator's shuffled order (seeded by user id).
    claimed = Assignment.objects.select_related("task__translation_unit").get(annotator=translator)
    source = claimed.task.translation_unit.source_text
    assert 'name="translation"' in body and source in body and "Krama" in body
    scan(http_text(page), [forbidden[0], *forbidden[2:]], "translator page")
    token = claimed.token
    invalid = client.post(
        reverse("annotation:submit", args=[token]), {"translation": " "}, HTTP_HX_REQUEST="true"
    )
    assert "Write the translation." in invalid.content.decode()
    done = client.post(
        reverse("annotation:submit", args=[token]),
        {"translation": "Kula nedha 5 sekul."},
        HTTP_HX_REQUEST="true",
    )
    assert done.status_code == 200

    client.force_login(reviewer)
    started = client.post(reverse("annotation:start", args=[review.pk]))
    page = client.get(started["Location"])
    body = page.content.decode()
    scan(http_text(page), forbidden, "reviewer page")
    assert "Kula nedha 5 sekul." in body and 'data-flag="number_mismatch"' in body and "T-" in body
    review_token = Assignment.objects.get(annotator=reviewer).token
    rejected = client.post(
        reverse("annotation:submit", args=[review_token]),
        {"verdict": "reject", "error_categories": ["fluency", "typo_mechanics"], "comment": "Angka."},
        HTTP_HX_REQUEST="true",
    )
    scan(http_text(rejected), forbidden, "after the verdict")
    assert TranslationUnit.objects.get(translator=translator).status == "revise"

    client.force_login(translator)
    page = client.get(reverse("annotation:task", args=[token]))
    body = page.content.decode()
    assert "A reviewer sent this back:" in body and "Fluency, Typo / mechanics" in body and "Angka." in body
    assert "reviewer-one" not in body


def test_translation_and_review_errors_speak_indonesian(client, translation_setup):
    dataset, translate, review, translator, reviewer = translation_setup
    client.cookies["django_language"] = "id"
    client.force_login(translator)
    client.post(reverse("annotation:start", args=[translate.pk]))
    token = Assignment.objects.get(annotator=translator).token
    empty = client.post(
        reverse("annotation:submit", args=[token]), {"translation": " "}, HTTP_HX_REQUEST="true"
    )
    assert "Tulis terjemahannya." in empty.content.decode()
    client.post(
        reverse("annotation:submit", args=[token]), {"translation": "Kula nedha."}, HTTP_HX_REQUEST="true"
    )

    client.force_login(reviewer)
    client.post(reverse("annotation:start", args=[review.pk]))
    review_token = Assignment.objects.get(annotator=reviewer).token
    bare = client.post(
        reverse("annotation:submit", args=[review_token]), {"verdict": "reject"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "Pilih setidaknya satu kategori kesalahan." in bare
    assert "Jelaskan apa yang perlu diubah oleh penerjemah." in bare
    assert "Choose at least one error category." not in bare
    assert TranslationUnit.objects.get(translator=translator).status != "revise"  # nothing was recorded


def test_someone_elses_task_is_a_404_and_annotators_cannot_manage(client, translation_setup, make_user):
    dataset, translate, review, translator, reviewer = translation_setup
    work = services.assignment_claim(project=translate, user=translator)
    client.force_login(reviewer)
    assert client.get(reverse("annotation:task", args=[work.token])).status_code == 404
    assert (
        client.post(reverse("annotation:submit", args=[work.token]), {"translation": "x"}).status_code == 404
    )
    assert client.get(reverse("annotation:manage_detail", args=[review.pk])).status_code == 403
    assert (
        client.post(reverse("exports:export_new", args=[review.pk]), {"kind": "parallel-corpus"}).status_code
        == 403
    )
    api = APIClient()
    api.force_authenticate(reviewer)
    assert (
        api.post(
            f"/api/v1/tasks/{work.token}/annotations", {"answer": {"translation": "x"}}, format="json"
        ).status_code
        == 404
    )


def test_manager_sees_the_translation_report_and_exports_the_corpus(
    client, translation_setup, make_user, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.EXPORTS_DIR = tmp_path
    dataset, translate, review, translator, reviewer = translation_setup
    for _ in range(2):
        work = services.assignment_claim(project=translate, user=translator)
        services.assignment_submit(
            token=work.token, user=translator, payload={"translation": "Kula nedha sekul."}
        )
        check = services.assignment_claim(project=review, user=reviewer)
        services.assignment_submit(
            token=check.token,
            user=reviewer,
            payload={"verdict": "fix", "fixed_text": "Kula nedha sekul wonten griya."},
        )
    client.force_login(make_user("project_manager"))
    page = client.get(reverse("annotation:manage_detail", args=[review.pk]))
    body = page.content.decode()
    assert page.status_code == 200
    assert 'data-testid="flags-by-pair"' in body and 'data-testid="translators"' in body
    assert "<ins>" in body and "wonten griya" in body  # the fix shown as a word diff
    # The page's export button queues the parallel-corpus export like every other export (a POST).
    assert f'action="{reverse("exports:export_new", args=[review.pk])}"' in body
    with django_capture_on_commit_callbacks(execute=True):
        started = client.post(reverse("exports:export_new", args=[review.pk]), {"kind": "parallel-corpus"})
    export = Export.objects.get(project=review)
    assert started.status_code == 302 and started["Location"] == reverse(
        "exports:export_detail", args=[export.pk]
    )
    assert (export.kind, export.status, export.counts.get("rows")) == ("parallel-corpus", "succeeded", 2)
    download = client.get(reverse("exports:export_download", args=[export.pk]))
    assert download.status_code == 200 and download["Content-Disposition"].endswith('.zip"')
    with zipfile.ZipFile(io.BytesIO(b"".join(download.streaming_content))) as archive:
        assert "data/train-00000-of-00001.parquet" in archive.namelist()
    recompute = client.post(reverse("annotation:manage_flags_recompute", args=[review.pk]))
    assert recompute.status_code == 302
    progress = client.get(reverse("annotation:manage_flags_progress", args=[review.pk]))
    assert 'id="recompute"' in progress.content.decode() and "<html" not in progress.content.decode()
    saved = client.post(
        reverse("annotation:manage_flag_settings", args=[review.pk]),
        {
            "length_z_threshold": "2.5",
            "back_translation_threshold": "0.85",
            "markers_ngoko": "aku\nkowe, ora",
        },
    )
    assert saved.status_code == 302
    review.refresh_from_db()
    assert review.flag_settings["length_z_threshold"] == 2.5
    assert review.flag_settings["back_translation_threshold"] == 0.85
    assert review.flag_settings["register_markers"]["ngoko"] == ["aku", "kowe", "ora"]


def test_manager_sets_the_back_translation_measure_and_sees_its_flags_in_both_languages(
    client, translation_setup, make_user, django_capture_on_commit_callbacks
):
    dataset, translate, review, translator, reviewer = translation_setup
    close, far = TranslationUnit.objects.filter(dataset=dataset).order_by("external_id")
    # u00 "Saya makan nasi di rumah.", u01 "Ibu pergi ke pasar pagi ini."; back-translations into Indonesian.
    close.translation_text, close.meta = (
        "Kula nedha sekul wonten griya.",
        {"back_translation": "Di rumah saya makan nasi."},
    )
    far.translation_text, far.meta = (
        "Ibu tindak dhateng peken.",
        {"back_translation": "Kereta berangkat setiap pagi."},
    )
    TranslationUnit.objects.bulk_update([close, far], ["translation_text", "meta"])
    client.force_login(make_user("project_manager"))
    settings_url = reverse("annotation:manage_flag_settings", args=[review.pk])
    page_url = reverse("annotation:manage_detail", args=[review.pk])
    form = {
        "length_z_threshold": "3.5",
        "back_translation_measure": "chrf",
        "back_translation_threshold": "0.5",
    }
    assert client.post(settings_url, form).status_code == 302
    review.refresh_from_db()
    assert review.flag_settings["back_translation_measure"] == "chrf"
    assert review.flag_settings["back_translation_threshold"] == 0.5
    body = client.get(page_url).content.decode()
    assert '<option value="chrf" selected>' in body  # the form shows the project's measure
    assert 'data-testid="back-translation-flags"' in body and "No back-translation flags." in body

    # Bad values are refused with the reason, and the settings stay as they were.
    for bad, reason in [
        ({"back_translation_embedding_threshold": "1.5"}, "Ensure this value is less than or equal to 1."),
        (
            {"back_translation_embedding_threshold": "0"},
            "Ensure this value is greater than or equal to 0.01.",
        ),
        (
            {"back_translation_measure": "labse"},
            "Select a valid choice. labse is not one of the available choices.",
        ),
    ]:
        refused = client.post(settings_url, {**form, **bad}, follow=True)
        assert reason in refused.content.decode()
        review.refresh_from_db()
        assert review.flag_settings["back_translation_measure"] == "chrf"
        assert "back_translation_embedding_threshold" not in review.flag_settings

    form = {**form, "back_translation_measure": "embedding", "back_translation_embedding_threshold": "0.9"}
    assert client.post(settings_url, form).status_code == 302
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("annotation:manage_flags_recompute", args=[review.pk]))
    far.refresh_from_db()
    [flag] = [f for f in far.flags if f["code"] == "low_back_translation"]
    assert flag["details"]["measure"] == "embedding"
    similarity = flag["details"]["similarity"]
    shown = f"{similarity:.3f}"

    body = client.get(page_url).content.decode()
    table = body[body.index('data-testid="back-translation-flags"') :]
    table = table[: table.index("</table>")]
    assert "Back-translation differs" in body  # the column of the flags-per-language table
    assert "<th>Measure</th>" in table and "Similarity</th>" in table
    assert 'data-measure="embedding"' in table and "u01" in table and "u00" not in table
    assert "sentence embedding (multilingual-e5-small)" in table
    assert f">{shown}<" in table and ">0.90<" in table
    assert "Kereta berangkat setiap pagi." in table
    assert "1 unit's back-translation is less similar to its source than the threshold" in body

    client.cookies["django_language"] = "id"
    body = client.get(page_url).content.decode()
    table = body[body.index('data-testid="back-translation-flags"') :]
    table = table[: table.index("</table>")]
    assert "Terjemahan balik berbeda" in body
    assert "<th>Ukuran</th>" in table and "Kemiripan</th>" in table
    assert "embedding kalimat (multilingual-e5-small)" in table
    assert f">{shown.replace('.', ',')}<" in table and ">0,90<" in table

    report = APIClient()
    report.force_authenticate(make_user("project_manager"))
    data = report.get(f"/api/v1/projects/{review.pk}/translation/report").json()
    assert data["back_translation_flagged"] == 1
    [row] = data["back_translation_flags"]
    assert (row["unit"], row["measure"], row["similarity"], row["threshold"]) == (
        "u01",
        "embedding",
        similarity,
        0.9,
    )


def test_mcq_page_keys_blinding_heatmap_and_csv(client, make_user, job_project):
    creator = make_user("annotator", username="creator-secret-name")
    answerer = make_user("annotator")
    dataset = build_question_dataset(creators=[creator], n_per_creator=2, name="dataset-secret-questions")
    project = job_project(kind="mcq_answer", dataset=dataset, members=[answerer], overlap=1)
    forbidden = [
        creator.get_username(),
        dataset.name,
        *Question.objects.values_list("external_id", flat=True),
    ]
    client.force_login(answerer)
    api = APIClient()
    api.force_authenticate(answerer)
    for choice in ("A", "D"):
        payload = api.get(f"/api/v1/projects/{project.pk}/next")
        scan(json.dumps(payload.json(), ensure_ascii=False), forbidden, "next payload")
        token = payload.json()["task"]
        page = client.get(reverse("annotation:task", args=[token]))
        body = page.content.decode()
        scan(http_text(page), forbidden, "mcq page")
        assert 'data-key="a"' in body and 'data-key="e"' in body and 'data-key="x"' in body
        client.post(reverse("annotation:submit", args=[token]), {"choice": choice}, HTTP_HX_REQUEST="true")
    manager = make_user("project_manager")
    client.force_login(manager)
    body = client.get(reverse("annotation:manage_detail", args=[project.pk])).content.decode()
    assert 'data-testid="heatmap"' in body and 'class="num heat-10"' in body
    csv = client.get(reverse("annotation:manage_conflicts_csv", args=[project.pk]))
    assert csv.content.decode().splitlines() == [
        "creator," + answerer.get_username(),
        "creator-secret-name,1",
    ]


def test_authoring_pages_upload_write_and_review(client, make_user, job_project):
    author, reviewer, manager = make_user("annotator"), make_user("reviewer"), make_user("project_manager")
    project = job_project(kind="question_authoring", dataset=None, members=[author])
    client.force_login(manager)
    upload = client.post(
        reverse("annotation:manage_pairs_upload", args=[project.pk]),
        {"file": _file("pairs.csv", "category,concept\nfood,ketupat\n,batik\n"), "language": "ind"},
        follow=True,
    )
    assert "line 3: category: is required" in upload.content.decode()
    client.post(
        reverse("annotation:manage_pairs_upload", args=[project.pk]),
        {"file": _file("pairs.jsonl", '{"category": "food", "concept": "ketupat"}\n'), "language": "ind"},
    )
    assert project.concept_pairs.count() == 1

    client.force_login(author)
    started = client.post(reverse("annotation:start", args=[project.pk]))
    body = client.get(started["Location"]).content.decode()
    assert "ketupat" in body and 'data-key="A"' in body and 'name="choice_E"' in body
    token = Assignment.objects.get(annotator=author).token
    form = {
        "question": "Ketupat biasanya disajikan dengan apa?",
        **{f"choice_{k}": v for k, v in zip("ABCDE", ["opor", "rendang", "es", "roti", "keju"], strict=True)},
        "answer": "A",
        "distractor": "A",
    }
    invalid = client.post(
        reverse("annotation:submit", args=[token]), form, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "Distractor: The distractor must be a different option from the answer." in invalid
    client.post(
        reverse("annotation:submit", args=[token]), {**form, "distractor": "B"}, HTTP_HX_REQUEST="true"
    )

    client.force_login(reviewer)
    queue = client.get(reverse("annotation:review")).content.decode()
    assert "Ketupat biasanya disajikan dengan apa?" in queue and "Return to the author" in queue
    assignment = Assignment.objects.get(annotator=author)
    client.post(reverse("annotation:review_submit", args=[assignment.pk]), {"verdict": "accept"})
    assert Question.objects.get().status == "accepted"


def _file(name: str, text: str):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(name, text.encode(), content_type="text/plain")


def test_llm_question_review_page(client, make_user, job_project):
    dataset = build_question_dataset(creators=[make_user("annotator")], n_per_creator=1, origin="llm")
    project = job_project(kind="mcq_answer", dataset=dataset, members=[make_user("annotator")])
    client.force_login(make_user("reviewer"))
    page = client.get(reverse("annotation:review_llm", args=[project.pk]))
    assert page.status_code == 200 and 'data-testid="llm-question"' in page.content.decode()
    question = Question.objects.get()
    client.post(
        reverse("annotation:review_llm", args=[project.pk]),
        {
            "question": question.pk,
            "error_types": ["context"],
            "option_error_types": ["invalid_options"],
            "primary_error": "invalid_options",
        },
    )
    review = QuestionErrorReview.objects.get()
    assert (review.errors, review.option_errors) == (["context"], ["invalid_options"])
    body = client.get(reverse("annotation:review_llm", args=[project.pk])).content.decode()
    assert "0 of 1 reviewed questions have no error" in body
    assert 'data-testid="taxonomy"' in body and 'data-testid="option-taxonomy"' in body
    # "Invalid options" is offered for the options only.
    assert 'name="option_error_types" value="invalid_options"' in body
    assert 'name="error_types" value="invalid_options"' not in body


def test_error_shares_one_label_per_question_on_the_pages_csv_and_api(
    client, make_user, job_project, tmp_path
):
    dataset = build_question_dataset(creators=[make_user("annotator")], n_per_creator=3, origin="llm")
    project = job_project(kind="mcq_answer", dataset=dataset, members=[make_user("annotator")])
    reviewer = make_user("reviewer")
    q0, q1, q2 = Question.objects.order_by("id")
    url = reverse("annotation:review_llm", args=[project.pk])
    client.force_login(reviewer)
    # Two errors and no main one: refused, nothing saved.
    refused = client.post(
        url, {"question": q0.pk, "error_types": ["fluency", "context"]}, follow=True
    ).content.decode()
    assert "Several errors are ticked: choose the main one." in refused
    assert not QuestionErrorReview.objects.exists()
    client.post(url, {"question": q0.pk, "error_types": ["fluency", "context"], "primary_error": "context"})
    client.post(url, {"question": q1.pk})
    # A review saved before the main error was asked for: typo and fluency, fluency first in the taxonomy.
    QuestionErrorReview.objects.create(
        project=project, question=q2, reviewer=reviewer, errors=["fluency"], option_errors=["typo"]
    )
    assert QuestionErrorReview.objects.get(question=q0).primary_error == "context"
    page = client.get(url).content.decode()
    assert '<option value="context" selected>' in page

    client.force_login(make_user("project_manager"))
    manage = reverse("annotation:manage_detail", args=[project.pk])
    body = client.get(manage).content.decode()
    table = re.search(r'<table class="table" data-testid="taxonomy-shares">.*?</table>', body, re.S).group(0)
    rows = re.findall(
        r"<tr><td>([^<]*)</td><td class=\"num\">(\d+)</td><td class=\"num\">([^<]*)</td></tr>", table
    )
    # 3 questions, one each: fluency, context, no error; 33.3% each and the leftover tenth to fluency.
    assert [row for row in rows if row[1] != "0"] == [
        ("Fluency", "1", "33.4%"),
        ("Context", "1", "33.3%"),
        ("No error", "1", "33.3%"),
    ]
    assert len(rows) == 9 and "100.0%" in table
    assert "1 earlier review ticks several errors without a main error" in body
    assert "largest-remainder method" in body
    client.cookies["django_language"] = "id"
    body_id = client.get(manage).content.decode()
    assert "Satu label per pertanyaan" in body_id and "metode sisa terbesar" in body_id
    table_id = re.search(r'data-testid="taxonomy-shares">.*?</table>', body_id, re.S).group(0)
    assert "<td>Kelancaran</td>" in table_id and "33,4%" in table_id and "Tanpa kesalahan" in table_id
    assert "100,0%" in table_id

    csv_text = client.get(
        reverse("annotation:manage_taxonomy_labels_csv", args=[project.pk])
    ).content.decode()
    assert csv_text.splitlines()[1:] == [
        f"{q0.external_id},context",
        f"{q1.external_id},no_error",
        f"{q2.external_id},fluency",
    ]
    api = APIClient()
    api.force_authenticate(make_user("project_manager"))
    shares = api.get(f"/api/v1/projects/{project.pk}/answers/report").json()["taxonomy_shares"]
    assert [(r["label"], r["count"], r["percent"]) for r in shares["rows"] if r["count"]] == [
        ("fluency", 1, 33.4),
        ("context", 1, 33.3),
        ("no_error", 1, 33.3),
    ]
    assert (shares["n_questions"], shares["n_fallback"], shares["rounding"]) == (3, 1, "largest_remainder")
    # The command gives the same table from the downloaded labels.
    (tmp_path / "labels.csv").write_text(csv_text, encoding="utf-8")
    out = io.StringIO()
    call_command("taxonomy_shares", "--input", str(tmp_path / "labels.csv"), "--json", stdout=out)
    assert json.loads(out.getvalue())["rows"] == shares["rows"]


def test_manager_edits_the_error_taxonomy_from_the_manage_page(client, make_user, job_project):
    dataset = build_question_dataset(creators=[make_user("annotator")], n_per_creator=1, origin="llm")
    project = job_project(kind="mcq_answer", dataset=dataset, members=[make_user("annotator")])
    client.force_login(make_user("project_manager"))
    page = client.get(reverse("annotation:manage_detail", args=[project.pk])).content.decode()
    # id-csqa's taxonomy is the default, shown for editing.
    assert "invalid_options | Invalid options | Pilihan tidak valid | options" in page
    url = reverse("annotation:manage_error_taxonomy", args=[project.pk])
    client.post(
        url, {"taxonomy": "typo | Typo | Salah ketik | question, options\nbias | Bias | Bias | question"}
    )
    project.refresh_from_db()
    assert [(c["code"], c["applies_to"]) for c in project.error_taxonomy] == [
        ("typo", ["question", "options"]),
        ("bias", ["question"]),
    ]
    # A bad line is refused with its line number; the saved taxonomy stays as it was.
    response = client.post(url, {"taxonomy": "typo | Typo | Salah ketik\nBad Code | X | Y"}, follow=True)
    assert "line 2: code must be lower-case letters" in response.content.decode()
    project.refresh_from_db()
    assert [c["code"] for c in project.error_taxonomy] == ["typo", "bias"]


def test_manager_creates_a_translation_review_project_from_the_form(client, make_user):
    dataset = build_translation_dataset(n_units=3, translated=True)
    client.force_login(make_user("project_manager"))
    assert client.get(reverse("annotation:manage_create")).status_code == 200
    response = client.post(
        reverse("annotation:manage_create"),
        {
            "dataset": dataset.pk,
            "name": "Tinjau",
            "kind": "translation_review",
            "overlap": 3,  # one reviewer per unit: the form makes it 1
            "groups": "A",
            "best_pick": "off",
            "pair_mode": "all",
            "pairs_per_prompt": 3,
            "turn_mode": "overall",
            "lease_minutes": 30,
            "gold_rate": 0,
        },
    )
    assert response.status_code == 302, response.content.decode()[:1500]
    project = Project.objects.get(name="Tinjau")
    assert (project.kind, project.overlap, project.n_tasks) == ("translation_review", 1, 3)
    assert client.get(reverse("annotation:manage_list")).status_code == 200


def test_the_review_queue_names_a_translation_verdict_and_its_errors_in_indonesian(
    client, translation_setup, make_user
):
    dataset, translate, review, translator, reviewer = translation_setup
    client.force_login(translator)
    client.post(reverse("annotation:start", args=[translate.pk]))
    token = Assignment.objects.get(annotator=translator).token
    client.post(reverse("annotation:submit", args=[token]), {"translation": "Kula."}, HTTP_HX_REQUEST="true")
    client.force_login(reviewer)
    client.post(reverse("annotation:start", args=[review.pk]))
    client.post(
        reverse("annotation:submit", args=[Assignment.objects.get(annotator=reviewer).token]),
        {"verdict": "reject", "error_categories": ["translation_error", "typo_mechanics"], "comment": "x"},
        HTTP_HX_REQUEST="true",
    )
    client.force_login(make_user("reviewer"))
    client.cookies["django_language"] = "id"
    page = client.get(reverse("annotation:review"), {"project": review.pk}).content.decode()
    answer = re.search(r'<dl class="answer" data-testid="review-answer">(.*?)</dl>', page, flags=re.S).group(
        1
    )
    assert "<dd>Tolak</dd>" in answer
    assert "<dd>Kesalahan terjemahan, Salah ketik / ejaan dan tanda baca</dd>" in answer
    assert "translation_error" not in answer and "reject" not in answer
