"""An MQM TSV file imported as an error-span project with its raters' spans, scored from the database as
from the file, and written back byte for byte (apart from line order)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from annotation import services
from annotation.domain.error_spans import mqm_report
from annotation.domain.mqm_tsv import TsvError, read_mqm_tsv, write_mqm_tsv
from annotation.models import Annotation, Assignment, ErrorSpan, Project, SpanSuggestion, TaskSlot
from annotation.selectors.spans import span_scores_report
from datasets_app.models import Dataset, TranslationUnit
from exports.families.error_spans_selectors import error_span_records, error_span_table, segment_ratings

pytestmark = pytest.mark.django_db

HAND = Path(__file__).resolve().parents[1] / "domain" / "data" / "mqm_hand.tsv"


@pytest.fixture
def raters(make_user):
    return {name: make_user("annotator", username=f"wmt-{name}") for name in ("r1", "r2")}


def _import(raters, text=None, **kw):
    return services.mqm_tsv_import(
        text=text if text is not None else HAND.read_text(encoding="utf-8"),
        name=kw.pop("name", "WMT kecil"),
        source_language="eng",
        target_language="ind",
        users=raters,
        **kw,
    )


def test_import_makes_an_active_project_with_every_rating(raters):
    done = _import(raters)
    project = done.project
    assert (done.units, done.ratings, done.spans) == (4, 8, 8)
    assert project.kind == Project.Kind.TRANSLATION_MQM and project.status == Project.Status.ACTIVE
    assert project.n_tasks == 4 and project.overlap == 2
    unit = TranslationUnit.objects.get(
        dataset=project.dataset, translator_name="sysB", source_text__startswith="The"
    )
    assert unit.translation_text == "Pertemuan mulai jam sembilan."
    assert unit.meta["mqm_tsv"]["doc"] == "rapat" and unit.meta["mqm_tsv"]["seg_id"] == "1"
    assert Assignment.objects.filter(project=project, status="submitted").count() == 8
    assert set(TaskSlot.objects.filter(project=project).values_list("open_count", "submitted_count")) == {
        (0, 2)
    }
    omission = ErrorSpan.objects.get(assignment__project=project, side="source")
    assert (omission.start, omission.end, omission.category, omission.severity) == (
        27,
        34,
        "accuracy/omission",
        "major",
    )
    assert ErrorSpan.objects.get(assignment__project=project, start=20, end=27).comment == "angka salah"
    answers = Annotation.objects.filter(assignment__project=project)
    assert sorted(answers.values_list("choice", flat=True)) == ["errors"] * 6 + ["no_error"] * 2


def test_scores_from_the_database_equal_the_scores_from_the_file(raters):
    project = _import(raters).project
    report = mqm_report(segment_ratings(error_span_records(project)), draws=0)
    assert [(s.system, round(s.score, 6)) for s in report.systems] == [("sysA", 2.775), ("sysB", 7.75)]


def test_re_export_is_byte_stable_apart_from_ordering(raters):
    text = HAND.read_text(encoding="utf-8")
    project = _import(raters).project
    written = write_mqm_tsv(error_span_table(project, error_span_records(project)))
    assert written.splitlines()[0] == text.splitlines()[0]
    assert sorted(written.splitlines()[1:]) == sorted(text.splitlines()[1:])


def test_suggestion_columns_come_back(raters):
    header = "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\torigin\toutcome"
    text = (
        "\n".join(
            [
                header,
                "A\td\t1\t1\tr1\tfive cats\t<v>empat</v> kucing\tAccuracy/Mistranslation\tMajor\tflags\taccepted",
                "A\td\t1\t1\tr1\tfive cats\tempat <v>kucing</v>\tStyle\tMinor\tllm\tremoved",
                "A\td\t1\t1\tr2\tfive cats\tempat kucing\tNo-error\tNo-error\t\t",
            ]
        )
        + "\n"
    )
    project = _import(raters, text).project
    assert SpanSuggestion.objects.filter(task__project=project).count() == 2
    removed = ErrorSpan.objects.get(assignment__project=project, outcome="removed")
    assert removed.origin == "suggested" and removed.suggestion.source == "llm"
    written = write_mqm_tsv(error_span_table(project, error_span_records(project)))
    assert sorted(written.splitlines()) == sorted(text.splitlines())
    # The removed suggestion counts in no score: r1 has 5 points, r2 none.
    (score,) = mqm_report(segment_ratings(error_span_records(project)), draws=0).systems
    assert score.score == 2.5


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace("pukul <v>sepuluh</v>", "pukul <v>sepuluh"), "line 2, column target"),
        (lambda t: t.replace("\tcomment\n", "\tcatatan\n"), "line 1: column 'catatan' is not imported"),
        (
            lambda t: t.replace("Rapat dimulai <v>pukul sepuluh</v> .", "Rapat dimulai pukul sepuluh ."),
            "line 4, column target: the error marks no span",
        ),
        (lambda t: t.replace("\tMinor\t\n", "\tCritical\t\n", 1), "line 3, column severity: 'Critical'"),
        (
            lambda t: t.replace("Bawa cangkir sendiri<v>,</v> ya.", "Bawa cangkir<v>,</v> ya."),
            "line 6, column target: differs",
        ),
    ],
)
def test_a_bad_file_writes_nothing(raters, edit, message):
    with pytest.raises(TsvError, match=message):
        _import(raters, edit(HAND.read_text(encoding="utf-8")))
    assert not Dataset.objects.exists() and not Project.objects.exists()


def test_a_missing_rater_or_a_taken_name_writes_nothing(raters):
    with pytest.raises(services.ProjectInvalid, match="r2"):
        _import({"r1": raters["r1"]})
    _import(raters)
    with pytest.raises(services.ProjectInvalid, match="exists already"):
        _import(raters)
    assert Project.objects.count() == 1


def test_esa_import_keeps_the_scores(raters):
    lines = HAND.read_text(encoding="utf-8").splitlines()
    scores = ["score", "40", "40", "70", "100", "80", "0", "50", "50", "90", "100"]
    text = "\n".join(f"{line}\t{s}" for line, s in zip(lines, scores, strict=True)) + "\n"
    project = _import(raters, text, kind=Project.Kind.TRANSLATION_ESA).project
    assert project.kind == Project.Kind.TRANSLATION_ESA
    answers = Annotation.objects.filter(assignment__project=project)
    assert sorted(answers.values_list("value_int", flat=True)) == [0, 40, 50, 70, 80, 90, 100, 100]
    written = write_mqm_tsv(error_span_table(project, error_span_records(project)))
    assert sorted(written.splitlines()) == sorted(text.splitlines())
    assert read_mqm_tsv(written).header == tuple(text.splitlines()[0].split("\t"))


def test_the_score_page_and_api_of_an_imported_project(raters, role_client):
    project = _import(raters).project
    report = span_scores_report(project, draws=0)
    assert [(s["system"], round(s["score"], 6)) for s in report["systems"]] == [
        ("sysA", 2.775),
        ("sysB", 7.75),
    ]
    assert report["agreement"]["char_f1"] == pytest.approx(20 / 71)
    client = role_client("project_manager")
    page = client.get(reverse("annotation:manage_span_scores", args=[project.pk]), HTTP_ACCEPT_LANGUAGE="id")
    assert page.status_code == 200 and "sysA" in page.content.decode()
    api = client.get(reverse("api-span-scores", args=[project.pk]))
    assert api.status_code == 200


def test_esa_import_refuses_a_missing_or_fractional_score(raters):
    lines = HAND.read_text(encoding="utf-8").splitlines()
    scores = ["score", "40", "40", "70", "100", "80", "0", "50", "50", "90.5", "90.5"]
    text = "\n".join(f"{line}\t{s}" for line, s in zip(lines, scores, strict=True)) + "\n"
    with pytest.raises(TsvError, match="line 10, column score: an ESA import needs a whole number"):
        _import(raters, text, kind=Project.Kind.TRANSLATION_ESA)
    assert not Project.objects.exists()
