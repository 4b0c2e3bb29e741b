"""The translation review loop: translate, review (accept / fix / reject), revise, flags, export."""

import json
import re

import pytest

from annotation import services
from annotation.models import Annotation, Assignment, FlagRecompute, TranslationRound
from datasets_app.models import TranslationUnit
from datasets_app.services import ImportFailed, dataset_import
from tests.annotation.conftest import build_translation_dataset

pytestmark = pytest.mark.django_db


@pytest.fixture
def pair(make_user, job_project):
    """One unit to translate, a translation project with one translator and a review project with one
    reviewer over the same dataset."""
    dataset = build_translation_dataset(n_units=1)
    translator, reviewer = make_user("annotator"), make_user("annotator")
    translate = job_project(kind="translation", dataset=dataset, members=[translator])
    review = job_project(kind="translation_review", dataset=dataset, members=[reviewer])
    return dataset, translate, review, translator, reviewer


def test_reject_sends_the_unit_back_to_its_translator_and_the_revision_back_to_its_reviewer(pair):
    dataset, translate, review, translator, reviewer = pair
    unit = TranslationUnit.objects.get(dataset=dataset)
    # Nothing to review before the unit is translated.
    assert services.assignment_claim(project=review, user=reviewer) is None

    work = services.assignment_claim(project=translate, user=translator)
    assert work.task.translation_unit_id == unit.pk
    services.assignment_submit(token=work.token, user=translator, payload={"translation": "Kula nedha sega."})
    unit.refresh_from_db()
    assert (unit.status, unit.translator_id, unit.translation_text) == (
        "to_review",
        translator.pk,
        "Kula nedha sega.",
    )

    check = services.assignment_claim(project=review, user=reviewer)
    reject = {"verdict": "reject", "error_categories": ["fluency", "context"], "comment": "Sekul, not sega."}
    services.assignment_submit(token=check.token, user=reviewer, payload=reject)
    unit.refresh_from_db()
    assert unit.status == "revise"
    work.refresh_from_db()
    assert (work.status, work.round) == ("assigned", 2)  # back to the same translator, as round 2

    again = services.assignment_claim(project=translate, user=translator)
    assert again.pk == work.pk
    services.assignment_submit(
        token=work.token, user=translator, payload={"translation": "Kula nedha sekul."}
    )
    check.refresh_from_db()
    assert (check.status, check.round) == ("assigned", 2)  # the same reviewer sees the revision
    assert services.assignment_claim(project=review, user=reviewer).pk == check.pk
    services.assignment_submit(token=check.token, user=reviewer, payload={"verdict": "accept"})

    unit.refresh_from_db()
    assert (unit.status, unit.translation_text) == ("accepted", "Kula nedha sekul.")
    rounds = list(TranslationRound.objects.filter(unit=unit).order_by("round"))
    assert [(r.round, r.translation_text, r.verdict, r.error_categories) for r in rounds] == [
        (1, "Kula nedha sega.", "reject", ["fluency", "context"]),
        (2, "Kula nedha sekul.", "accept", []),
    ]
    assert all(r.translator_id == translator.pk and r.reviewer_id == reviewer.pk for r in rounds)
    # Long-format rows of the reviewer: one verdict per round, the categories of the rejection.
    rows = sorted(Annotation.objects.filter(assignment=check).values_list("round", "criterion", "choice"))
    assert rows == [
        (1, "comment", ""),
        (1, "error.context", ""),
        (1, "error.fluency", ""),
        (1, "verdict", "reject"),
        (2, "verdict", "accept"),
    ]
    # Both places are used once: k = 1 in each project.
    assert check.slot_id and work.slot_id
    assert Assignment.objects.get(pk=check.pk).status == "submitted"


def test_nobody_reviews_their_own_translation(make_user, job_project):
    dataset = build_translation_dataset(n_units=1)
    polyglot = make_user("annotator")
    translate = job_project(kind="translation", dataset=dataset, members=[polyglot])
    review = job_project(kind="translation_review", dataset=dataset, members=[polyglot])
    work = services.assignment_claim(project=translate, user=polyglot)
    services.assignment_submit(token=work.token, user=polyglot, payload={"translation": "Kula nedha sekul."})
    assert services.assignment_claim(project=review, user=polyglot) is None


def test_fix_keeps_the_edited_text_and_recomputes_flags(pair):
    dataset, translate, review, translator, reviewer = pair
    work = services.assignment_claim(project=translate, user=translator)
    # "lima" (5) in the source is missing from the translation: a number flag on the unit and the round.
    unit = TranslationUnit.objects.get(dataset=dataset)
    unit.source_text = "Saya makan lima ketupat."
    unit.save()
    services.assignment_submit(
        token=work.token, user=translator, payload={"translation": "Kula nedha ketupat."}
    )
    unit.refresh_from_db()
    assert [f["code"] for f in unit.flags] == ["number_mismatch"]
    assert unit.flags[0]["details"]["missing_in_translation"] == ["5"]
    assert "lima" not in unit.flags[0]["message_en"] and "5" in unit.flags[0]["message_en"]
    assert TranslationRound.objects.get(unit=unit).flags == unit.flags

    check = services.assignment_claim(project=review, user=reviewer)
    fixed = "Kula nedha gangsal ketupat."
    services.assignment_submit(
        token=check.token, user=reviewer, payload={"verdict": "fix", "fixed_text": fixed}
    )
    unit.refresh_from_db()
    assert (unit.status, unit.translation_text, unit.flags) == ("accepted", fixed, [])
    last = TranslationRound.objects.get(unit=unit)
    assert (last.verdict, last.translation_text, last.fixed_text) == ("fix", "Kula nedha ketupat.", fixed)


def test_review_answers_are_checked(pair):
    dataset, translate, review, translator, reviewer = pair
    work = services.assignment_claim(project=translate, user=translator)
    services.assignment_submit(
        token=work.token, user=translator, payload={"translation": "Kula nedha sekul."}
    )
    check = services.assignment_claim(project=review, user=reviewer)
    with pytest.raises(services.SubmissionInvalid) as caught:
        services.assignment_submit(token=check.token, user=reviewer, payload={"verdict": "reject"})
    assert set(caught.value.errors) == {"error_categories", "comment"}
    with pytest.raises(services.SubmissionInvalid) as caught:
        services.assignment_submit(
            token=check.token, user=reviewer, payload={"verdict": "fix", "fixed_text": "Kula nedha sekul."}
        )
    assert set(caught.value.errors) == {"fixed_text"}
    with pytest.raises(services.SubmissionInvalid) as caught:
        services.assignment_submit(
            token=check.token,
            user=reviewer,
            payload={"verdict": "reject", "error_categories": ["made_up"], "comment": "x"},
        )
    assert set(caught.value.errors) == {"error_categories"}
    assert TranslationUnit.objects.get(dataset=dataset).status == "to_review"


def test_translator_edits_until_reviewed_then_not(pair):
    dataset, translate, review, translator, reviewer = pair
    work = services.assignment_claim(project=translate, user=translator)
    services.assignment_submit(token=work.token, user=translator, payload={"translation": "Kula nedha sega."})
    same = services.assignment_submit(
        token=work.token, user=translator, payload={"translation": "Kula nedha sega."}
    )
    edited = services.assignment_submit(
        token=work.token, user=translator, payload={"translation": "Kula nedha sekul."}
    )
    assert (same.outcome, edited.outcome) == ("unchanged", "edited")
    assert TranslationRound.objects.get().translation_text == "Kula nedha sekul."
    check = services.assignment_claim(project=review, user=reviewer)
    services.assignment_submit(token=check.token, user=reviewer, payload={"verdict": "accept"})
    with pytest.raises(services.AssignmentClosed):
        services.assignment_submit(token=work.token, user=translator, payload={"translation": "Lain."})


def test_imported_translations_are_round_one_and_a_rejection_waits_for_any_translator(make_user, job_project):
    dataset = build_translation_dataset(n_units=1, translated=True)
    reviewer, translator = make_user("annotator"), make_user("annotator")
    review = job_project(kind="translation_review", dataset=dataset, members=[reviewer])
    check = services.assignment_claim(project=review, user=reviewer)
    services.assignment_submit(
        token=check.token,
        user=reviewer,
        payload={"verdict": "reject", "error_categories": ["typo_mechanics"], "comment": "Typo."},
    )
    first = TranslationRound.objects.get()
    assert (first.round, first.translator_name, first.verdict) == (1, "imported-translator", "reject")
    translate = job_project(kind="translation", dataset=dataset, members=[translator])
    work = services.assignment_claim(project=translate, user=translator)
    services.assignment_submit(
        token=work.token, user=translator, payload={"translation": "Kula nedha sekul wonten griya."}
    )
    assert list(TranslationRound.objects.order_by("round").values_list("round", "translator_id")) == [
        (1, None),
        (2, translator.pk),
    ]
    check.refresh_from_db()
    assert (check.status, check.round) == ("assigned", 2)


def test_flags_are_computed_on_import(tmp_path):
    rows = [
        {"id": f"u{i}", "source": s, "target_language": "jav", "register": "krama", "translation": t}
        for i, (s, t) in enumerate(
            [
                ("Saya membeli 3 buku.", "Kula tumbas buku."),  # 3 is missing
                ("Dia datang kemarin.", "Panjenengan/piyambakipun rawuh wingi."),  # alternatives with "/"
                ("Kami pulang.", "Kula sami wangsul."),
            ]
        )
    ]
    path = tmp_path / "units.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    dataset_import(path=path, name="flagged")
    flags = {u.external_id: [f["code"] for f in u.flags] for u in TranslationUnit.objects.all()}
    assert flags == {"u0": ["number_mismatch"], "u1": ["slash_alternative"], "u2": []}
    stored = TranslationUnit.objects.get(external_id="u0").flags[0]
    assert set(stored) == {"code", "severity", "title_en", "title_id", "message_en", "message_id", "details"}
    assert stored["title_id"] == "Angka berbeda"


def test_a_bad_line_in_a_translation_file_writes_nothing(tmp_path):
    good = {
        "id": "u1",
        "source": "Saya membeli 3 buku.",
        "target_language": "jav",
        "translation": "Kula tumbas buku.",
    }
    bad = {"id": "u2", "source": "Halo.", "target_language": "xx"}
    path = tmp_path / "units.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    with pytest.raises(ImportFailed) as caught:
        dataset_import(path=path, name="broken")
    problem = caught.value.errors[0]
    assert (problem.location, problem.field) == ("line 2", "target_language")
    assert not TranslationUnit.objects.exists()


def test_recompute_flags_for_a_project_in_the_background(
    make_user, job_project, django_capture_on_commit_callbacks
):
    dataset = build_translation_dataset(n_units=10, translated=True)
    project = job_project(kind="translation_review", dataset=dataset, members=[make_user("annotator")])
    # Our word list marks "kula" as Ngoko here: every Krama translation with "kula" now reads as Ngoko.
    services.project_update(
        project=project, flag_settings={"register_markers": {"ngoko": ["kula"], "krama": []}}
    )
    assert not TranslationUnit.objects.exclude(flags=[]).exists()
    with django_capture_on_commit_callbacks(execute=True):
        run = services.flag_recompute_queue(project=project)
    run.refresh_from_db()
    assert (run.status, run.total, run.done) == (FlagRecompute.Status.SUCCEEDED, 10, 10)
    with_kula = [
        u for u in TranslationUnit.objects.filter(dataset=dataset) if "kula" in u.translation_text.lower()
    ]
    # SOURCES 0 and 4 contain "Kula"; units 0, 4 and 8 use them (10 units over 8 sources).
    assert len(with_kula) == 3 == run.n_flagged
    assert all([f["code"] for f in u.flags] == ["register_mismatch"] for u in with_kula)
    FlagRecompute.objects.create(project=project)  # one still queued: a second is refused
    with pytest.raises(services.AnnotationError):
        services.flag_recompute_queue(project=project)


def test_back_translation_flag_by_chrf_uses_the_units_back_translation_and_the_projects_threshold(
    make_user, job_project, django_capture_on_commit_callbacks
):
    dataset = build_translation_dataset(n_units=2, translated=True)
    project = job_project(
        kind="translation_review",
        dataset=dataset,
        members=[make_user("annotator")],
        flag_settings={"back_translation_measure": "chrf"},
    )
    first, second = TranslationUnit.objects.filter(dataset=dataset).order_by("external_id")
    # chrF++ of a back-translation equal to the source is 1; with one word dropped it falls below 0.9.
    first.meta = {"back_translation": first.source_text}
    first.save()
    words = second.source_text.split()
    second.meta = {"back_translation": " ".join(words[:-1])}
    second.save()
    with django_capture_on_commit_callbacks(execute=True):
        services.flag_recompute_queue(project=project)
    first.refresh_from_db()
    second.refresh_from_db()
    assert first.flags == []
    [flag] = [f for f in second.flags if f["code"] == "low_back_translation"]
    similarity = flag["details"]["similarity"]
    assert similarity < 0.9 and flag["details"]["measure"] == "chrf"
    # The project lowers its threshold below that similarity: the flag goes.
    services.project_update(
        project=project,
        flag_settings={"back_translation_measure": "chrf", "back_translation_threshold": similarity - 0.01},
    )
    with django_capture_on_commit_callbacks(execute=True):
        services.flag_recompute_queue(project=project)
    second.refresh_from_db()
    assert [f for f in second.flags if f["code"] == "low_back_translation"] == []


# Indonesian back-translations of the units' Javanese translations (sources: tests/annotation/conftest.py).
PARAPHRASE = "Di rumah saya makan nasi."  # of "Saya makan nasi di rumah."
UNRELATED = "Kereta berangkat setiap pagi."  # of "Ibu pergi ke pasar pagi ini." (another sentence's)


def _back_flags(unit: TranslationUnit) -> list[dict]:
    unit.refresh_from_db()
    return [f for f in unit.flags if f["code"] == "low_back_translation"]


def test_back_translation_flag_by_sentence_embedding_and_the_switch_of_measure_and_threshold(
    make_user, job_project, django_capture_on_commit_callbacks
):
    dataset = build_translation_dataset(n_units=2, translated=True)
    project = job_project(kind="translation_review", dataset=dataset, members=[make_user("annotator")])
    assert "back_translation_measure" not in project.flag_settings  # a new project: the embedding default
    close, far = TranslationUnit.objects.filter(dataset=dataset).order_by("external_id")
    close.meta = {"back_translation": PARAPHRASE}
    close.save()
    far.meta = {"back_translation": UNRELATED}
    far.save()

    def recompute(**settings) -> None:
        if settings:
            services.project_update(project=project, flag_settings=settings)
        with django_capture_on_commit_callbacks(execute=True):
            services.flag_recompute_queue(project=project)

    recompute()
    assert _back_flags(close) == []
    [flag] = _back_flags(far)
    similarity = flag["details"]["similarity"]
    assert flag["details"]["measure"] == "embedding" and flag["details"]["threshold"] == 0.9
    assert 0.6 < similarity < 0.9
    assert "sentence embedding (multilingual-e5-small)" in flag["message_en"]
    assert "embedding kalimat (multilingual-e5-small)" in flag["message_id"]
    assert flag["title_en"] == "Back-translation differs" and flag["title_id"] == "Terjemahan balik berbeda"

    # The embedding threshold below the unrelated pair's similarity: no flag; the chrF++ threshold is not used.
    recompute(
        back_translation_embedding_threshold=round(similarity - 0.01, 4), back_translation_threshold=1.0
    )
    assert _back_flags(close) == [] and _back_flags(far) == []
    # Raised to 0.9999: the paraphrase is flagged too, with the project's threshold in the flag.
    recompute(back_translation_embedding_threshold=0.9999)
    assert [f["details"]["threshold"] for f in _back_flags(close)] == [0.9999]
    # chrF++ at 0.9 flags the paraphrase as well: other word order, few shared character n-grams.
    recompute(back_translation_measure="chrf", back_translation_embedding_threshold=0.1)
    [flag] = _back_flags(close)
    assert flag["details"]["measure"] == "chrf" and flag["details"]["similarity"] < 0.9
    assert "chrF++" in flag["message_en"]


def test_a_submitted_translation_gets_the_embedding_back_translation_flag(pair):
    dataset, translate, review, translator, reviewer = pair
    unit = TranslationUnit.objects.get(dataset=dataset)
    unit.meta = {
        "back_translation": "Kereta berangkat setiap pagi."
    }  # unrelated to "Saya makan nasi di rumah."
    unit.save()
    work = services.assignment_claim(project=translate, user=translator)
    services.assignment_submit(
        token=work.token, user=translator, payload={"translation": "Kula nedha sekul."}
    )
    [flag] = _back_flags(unit)
    assert flag["details"]["measure"] == "embedding" and flag["details"]["similarity"] < 0.9


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            {"back_translation_embedding_threshold": 1.5},
            "sentence-embedding similarity: a number above 0 and at most 1, not 1.5",
        ),
        ({"back_translation_embedding_threshold": 0}, "above 0 and at most 1, not 0"),
        ({"back_translation_embedding_threshold": -0.2}, "above 0 and at most 1, not -0.2"),
        ({"back_translation_embedding_threshold": "0.9"}, "above 0 and at most 1, not '0.9'"),
        ({"back_translation_threshold": 1.5}, "back_translation_threshold is a chrF++ similarity"),
        (
            {"back_translation_measure": "labse"},
            "back_translation_measure must be 'embedding' or 'chrf', not 'labse'",
        ),
        (
            {"back_translation_measure": None},
            "back_translation_measure must be 'embedding' or 'chrf', not None",
        ),
    ],
)
def test_bad_back_translation_settings_are_refused_and_nothing_is_written(
    make_user, job_project, settings, message
):
    dataset = build_translation_dataset(n_units=1, translated=True)
    project = job_project(kind="translation_review", dataset=dataset, members=[make_user("annotator")])
    services.project_update(project=project, flag_settings={"back_translation_measure": "chrf"})
    with pytest.raises(services.ProjectInvalid, match=re.escape(message)):
        services.project_update(project=project, flag_settings=settings)
    project.refresh_from_db()
    assert project.flag_settings == {"back_translation_measure": "chrf"}
    with pytest.raises(services.ProjectInvalid, match=re.escape(message)):
        job_project(kind="translation_review", dataset=dataset, flag_settings=settings)
