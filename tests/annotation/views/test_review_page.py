"""The review queue shows every answer shape of every job kind that reaches it, and never fails on one.

Answers are made with the real services (claim, submit), one project per shape, so what the page reads is
what annotators store.
"""

from __future__ import annotations

import html
import re

import pytest
from django.urls import reverse

from annotation import services
from annotation.models import Assignment
from tests.annotation.conftest import build_question_dataset, build_translation_dataset, likert_payload
from tests.annotation.scaled import seven_point_and_yes_no

pytestmark = pytest.mark.django_db

QUESTION = {
    "question": "Makanan apa yang biasa disajikan bersama ketupat saat Lebaran?",
    "choices": {"A": "opor ayam", "B": "rendang", "C": "es krim", "D": "roti bakar", "E": "sereal"},
    "answer": "A",
    "distractor": "B",
}
# Shape name -> project options and the payload its annotator submits.
RATING_SHAPES = {
    "likert": ({"kind": "likert"}, likert_payload(3, value=4)),
    "likert-comment": (
        {"kind": "likert", "best_pick": "optional"},
        likert_payload(3, value=2, best=2, comment="Komentar likert: respons 2 paling jelas."),
    ),
    "likert-all-bad-comment": (
        {"kind": "likert", "best_pick": "optional", "allow_all_bad": True},
        likert_payload(3, value=1, best="all_bad", comment="Komentar likert: semuanya buruk."),
    ),
    "best-of-n": ({"kind": "best_of_n"}, {"best": 3}),
    "best-of-n-comment": ({"kind": "best_of_n"}, {"best": 1, "comment": "Komentar terbaik: yang pertama."}),
    "best-of-n-all-bad": ({"kind": "best_of_n", "allow_all_bad": True}, {"best": "all_bad"}),
    "best-of-n-all-bad-comment": (
        {"kind": "best_of_n", "allow_all_bad": True},
        {"best": "all_bad", "comment": "Komentar terbaik: tidak ada yang benar."},
    ),
    "pairwise": ({"kind": "pairwise", "n_models": 2}, {"vote": "A"}),
    "pairwise-rationale": (
        {"kind": "pairwise", "n_models": 2},
        {"vote": "tie", "rationale": "Alasan: keduanya sama baiknya."},
    ),
    "pairwise-per-turn-rationale": (
        {"kind": "pairwise", "n_models": 2, "n_turns": 2, "turn_mode": "per_turn"},
        {"vote": "both_bad", "rationale": "Alasan: giliran ini salah semua."},
    ),
}


RATED = (
    '<span data-criterion="relevance">Relevance: <strong>{0}</strong></span> · '
    '<span data-criterion="fluency">Fluency: <strong>{0}</strong></span>'
)


def _submit_rating(make_project, options: dict, payload: dict) -> Assignment:
    options = {"n_prompts": 1, "n_models": 3, "per_group": 1, "overlap": 1, **options}
    project = make_project(**options)
    user = project.annotators[0]
    assignment = services.assignment_claim(project=project, user=user)
    services.assignment_submit(token=assignment.token, user=user, payload=payload)
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.SUBMITTED
    return assignment


def _items(page: str) -> list[str]:
    return re.findall(r'<article class="card review-item".*?</article>', page, flags=re.S)


@pytest.fixture
def queue(make_project, make_user, job_project):
    """One submitted answer of every shape, plus submitted work of the kinds reviewed elsewhere."""
    rated = {name: _submit_rating(make_project, *shape) for name, shape in RATING_SHAPES.items()}

    author = make_user("annotator")
    authoring = job_project(kind="question_authoring", dataset=None, members=[author])
    services.concept_pairs_add(
        project=authoring, records=[("line 1", {"category": "food", "concept": "ketupat"})]
    )
    work = services.assignment_claim(project=authoring, user=author)
    override = {
        **QUESTION,
        "question": "Apa lauk untuk berketupat saat Lebaran?",
        "concept_override": True,
        "override_comment": "Bentuk kerja dari ketupat.",
    }
    services.assignment_submit(token=work.token, user=author, payload=override)
    rated["question-authoring"] = work

    # Translation, translation review and answering work reaches the same queue.
    translator, checker, answerer = make_user("annotator"), make_user("annotator"), make_user("annotator")
    dataset = build_translation_dataset(n_units=1)
    translate = job_project(kind="translation", dataset=dataset, members=[translator])
    review = job_project(kind="translation_review", dataset=dataset, members=[checker])
    done = services.assignment_claim(project=translate, user=translator)
    services.assignment_submit(
        token=done.token, user=translator, payload={"translation": "Kula nedha sekul."}
    )
    check = services.assignment_claim(project=review, user=checker)
    services.assignment_submit(
        token=check.token,
        user=checker,
        payload={"verdict": "reject", "error_categories": ["fluency"], "comment": "Terjemahan kaku."},
    )
    mcq = job_project(
        kind="mcq_answer",
        dataset=build_question_dataset(creators=[make_user("annotator")]),
        members=[answerer],
    )
    answer = services.assignment_claim(project=mcq, user=answerer)
    services.assignment_submit(
        token=answer.token,
        user=answerer,
        payload={"choice": "B", "ambiguous": True, "comment": "Dua jawaban bisa benar."},
    )
    elsewhere = [done, check, answer]
    return rated, elsewhere


def test_every_answer_shape_shows_on_its_projects_queue(client, make_user, queue):
    rated, _ = queue
    client.force_login(make_user("reviewer"))
    for name, assignment in rated.items():
        response = client.get(reverse("annotation:review"), {"project": assignment.project_id})
        assert response.status_code == 200, name
        items = _items(response.content.decode())
        assert len(items) == 1, name
        item = html.unescape(items[0])
        assert reverse("annotation:review_submit", args=[assignment.pk]) in item, name
        expected = {
            "likert": [RATED.format(4)],
            "likert-comment": [
                RATED.format(2),
                'Response 2 <span class="badge" data-testid="best">Best</span>',
                "respons 2 paling jelas",
            ],
            "likert-all-bad-comment": [
                RATED.format(1),
                "<dd>All bad</dd>",
                "Komentar likert: semuanya buruk.",
            ],
            "best-of-n": ['Response 3 <span class="badge" data-testid="best">Best</span>'],
            "best-of-n-comment": [
                'Response 1 <span class="badge" data-testid="best">Best</span>',
                "Komentar terbaik: yang pertama.",
            ],
            "best-of-n-all-bad": ["<dd>All bad</dd>"],
            "best-of-n-all-bad-comment": ["<dd>All bad</dd>", "Komentar terbaik: tidak ada yang benar."],
            "pairwise": ["<dt>Vote</dt><dd>A</dd>"],
            "pairwise-rationale": ["<dt>Vote</dt><dd>Tie</dd>", "Alasan: keduanya sama baiknya."],
            "pairwise-per-turn-rationale": ["<dd>Both bad</dd>", "Alasan: giliran ini salah semua."],
            "question-authoring": [
                "Apa lauk untuk berketupat saat Lebaran?",
                "opor ayam",
                "Bentuk kerja dari ketupat.",
            ],
        }[name]
        for text in expected:
            assert text in item, (name, text)
        if "comment" not in name and "rationale" not in name and name != "question-authoring":
            assert "<dt>Comment</dt>" not in item, name


def test_the_whole_queue_shows_work_of_every_kind(client, make_user, queue):
    rated, elsewhere = queue
    client.force_login(make_user("reviewer"))
    response = client.get(reverse("annotation:review"))
    assert response.status_code == 200
    page = html.unescape(response.content.decode())
    submitted = [a for a in elsewhere if Assignment.objects.get(pk=a.pk).status == "submitted"]
    # The translator's work went back to them with the review's rejection; the review and the answer wait.
    assert [a.project.kind for a in submitted] == ["translation_review", "mcq_answer"]
    assert len(_items(page)) == len(rated) + len(submitted)
    for assignment in [*rated.values(), *submitted]:
        assert reverse("annotation:review_submit", args=[assignment.pk]) in page
    check, answer = submitted
    item = next(i for i in _items(page) if reverse("annotation:review_submit", args=[check.pk]) in i)
    assert "<dd>Reject</dd>" in item and "Terjemahan kaku." in item and "Fluency" in item
    assert "Translations are sent back in their translation review job." in item
    item = next(i for i in _items(page) if reverse("annotation:review_submit", args=[answer.pk]) in i)
    assert re.search(r"<strong>B\.</strong>[^<]*<span class=\"badge\" data-testid=\"answer-choice\">", item)
    assert "Dua jawaban bisa benar." in item and "<dt>Ambiguous</dt>" in item


def test_every_criterion_shows_under_its_label_in_the_pages_language(client, make_user, make_project):
    seven_point_and_yes_no()
    project = make_project(
        n_prompts=1, n_models=3, per_group=1, criteria=["relevance", "helpfulness", "safe"]
    )
    user = project.annotators[0]
    assignment = services.assignment_claim(project=project, user=user)
    ratings = {
        "1": {"relevance": 4, "helpfulness": 7, "safe": "no"},
        "2": {"relevance": 2, "helpfulness": 3, "safe": "yes"},
        "3": {"relevance": 5, "helpfulness": 1, "safe": "yes"},
    }
    services.assignment_submit(token=assignment.token, user=user, payload={"ratings": ratings})
    client.force_login(make_user("reviewer"))
    for lang, expected in (
        ("en", ["Relevance: 4", "Helpfulness: 7", "Safe: No", "Relevance: 2", "Safe: Yes"]),
        ("id", ["Relevansi: 4", "Kebermanfaatan: 7", "Aman: Tidak", "Relevansi: 2", "Aman: Ya"]),
    ):
        client.cookies["django_language"] = lang
        page = client.get(reverse("annotation:review"), {"project": project.pk}).content.decode()
        (item,) = _items(page)
        shown = [
            re.sub(r"<[^>]+>", "", html.unescape(p))
            for p in re.findall(r'<p class="answer" data-testid="ratings">(.*?)</p>', item)
        ]
        # One line per response in the order the annotator saw them, every criterion of every kind on it.
        assert len(shown) == 3, lang
        assert shown[0].split(" · ") == expected[:3], lang
        assert shown[1].split(" · ")[0] == expected[3] and shown[1].split(" · ")[2] == expected[4], lang
        assert "safe" not in " ".join(shown) and "helpfulness" not in " ".join(shown), lang
