"""Builders for rating-job tests: a dataset of prompts with N model responses, a project over it."""

from __future__ import annotations

import itertools

import pytest

from annotation import services
from datasets_app.models import Dataset, Prompt, Response

_names = itertools.count(1)
MODEL_NAMES = ("zeta-secret-7b", "omega-hidden-13b", "kappa-blind-70b", "sigma-masked-3b", "delta-veiled-1b")


def build_dataset(
    *,
    n_prompts: int,
    n_models: int = 5,
    n_turns: int = 1,
    name: str | None = None,
    first_pk: int | None = None,
) -> Dataset:
    """Prompts ``ext-0000``.. with one response per model; ``first_pk`` gives ids that stand out in a scan."""
    dataset = Dataset.objects.create(
        name=name or f"rating-data-{next(_names)}", **({"pk": first_pk} if first_pk else {})
    )
    prompts = [
        Prompt(
            dataset=dataset,
            external_id=f"ext-{i:04d}",
            category="math" if i % 2 else "analysis",
            language="ind",
            turns=[f"Pertanyaan {i} giliran {t + 1}" for t in range(n_turns)],
            meta={"source_note": "meta-secret-note"},
            **({"pk": first_pk + i} if first_pk else {}),
        )
        for i in range(n_prompts)
    ]
    Prompt.objects.bulk_create(prompts)
    responses = []
    for p_index, prompt in enumerate(prompts):
        for m, model in enumerate(MODEL_NAMES[:n_models]):
            responses.append(
                Response(
                    prompt=prompt,
                    model_name=model,
                    turns=[f"Jawaban {m} untuk {p_index} giliran {t + 1}" for t in range(n_turns)],
                    meta={"model_version": "meta-secret-version"},
                    **({"pk": first_pk + 100_000 + p_index * 10 + m} if first_pk else {}),
                )
            )
    Response.objects.bulk_create(responses)
    return dataset


@pytest.fixture
def make_project(make_user):
    """Project with ``groups`` annotator groups of ``per_group`` annotators each, activated."""

    def _make(
        *,
        kind: str = "likert",
        n_prompts: int = 4,
        n_models: int = 3,
        n_turns: int = 1,
        groups: int = 1,
        per_group: int = 2,
        activate: bool = True,
        dataset: Dataset | None = None,
        **options,
    ):
        dataset = dataset or build_dataset(n_prompts=n_prompts, n_models=n_models, n_turns=n_turns)
        options.setdefault("seed", 11)
        project = services.project_create(
            dataset=dataset,
            name=f"{kind} project",
            kind=kind,
            groups=[f"G{g + 1}" for g in range(groups)],
            **options,
        )
        annotators = []
        for group in project.groups.order_by("id"):
            for _ in range(per_group):
                user = make_user("annotator")
                services.project_member_add(project=project, user=user, group=group)
                annotators.append(user)
        if activate:
            services.project_activate(project=project)
        project.refresh_from_db()
        project.annotators = annotators
        return project

    return _make


def likert_payload(n_responses: int, criteria=("relevance", "fluency"), value: int = 4, **extra) -> dict:
    return {"ratings": {str(i + 1): {c: value for c in criteria} for i in range(n_responses)}, **extra}


# --- translation and question jobs ---------------------------------------------------------------------

# Indonesian sources with Javanese Krama translations written for these tests (8 units per pair so the
# length statistics are usable; DEFAULT_MIN_PAIR_UNITS is 8).
SOURCES = [
    ("Saya makan nasi di rumah.", "Kula nedha sekul wonten griya."),
    ("Ibu pergi ke pasar pagi ini.", "Ibu tindak dhateng peken enjing menika."),
    ("Adik sedang belajar membaca.", "Adhik saweg sinau maos."),
    ("Bapak membaca koran di teras.", "Bapak maos koran wonten ing emper."),
    ("Kami menunggu bus di halte.", "Kula sami ngentosi bis wonten ing halte."),
    ("Hujan turun sejak tadi malam.", "Jawah dhawah wiwit wau dalu."),
    ("Nenek memasak sayur lodeh.", "Simbah masak janganan lodeh."),
    ("Anak-anak bermain di lapangan.", "Lare-lare sami dolanan wonten ing lapangan."),
]


def build_translation_dataset(*, n_units: int = 8, translated: bool = False, name: str | None = None):
    """Units ``u00``.. from Indonesian into Javanese Krama; with ``translated`` they carry our translations
    (status ``to_review``), otherwise they wait for a translator."""
    from datasets_app.models import TranslationUnit

    dataset = Dataset.objects.create(
        name=name or f"translations-{next(_names)}", kind=Dataset.Kind.TRANSLATIONS
    )
    TranslationUnit.objects.bulk_create(
        [
            TranslationUnit(
                dataset=dataset,
                external_id=f"u{i:02d}",
                source_text=SOURCES[i % len(SOURCES)][0],
                source_language="ind",
                target_language="jav",
                register="krama",
                translation_text=SOURCES[i % len(SOURCES)][1] if translated else "",
                translator_name="imported-translator" if translated else "",
                status="to_review" if translated else "to_translate",
            )
            for i in range(n_units)
        ]
    )
    return dataset


def build_question_dataset(
    *, creators, n_per_creator: int = 2, origin: str = "human", name: str | None = None
):
    """Accepted questions ``q-<creator>-<i>`` with key "A" and distinct options."""
    from datasets_app.models import Question

    dataset = Dataset.objects.create(name=name or f"questions-{next(_names)}", kind=Dataset.Kind.QUESTIONS)
    questions = []
    for creator in creators:
        for i in range(n_per_creator):
            questions.append(
                Question(
                    dataset=dataset,
                    external_id=f"q-{creator.get_username()}-{i}",
                    concept="ketupat",
                    category="food",
                    language="ind",
                    text=f"Apa yang biasa dimakan bersama ketupat? ({i})",
                    choices={"A": "opor ayam", "B": "es krim", "C": "roti", "D": "keju", "E": "sereal"},
                    answer_key="A",
                    distractor="B",
                    creator=creator,
                    creator_name=creator.get_username(),
                    origin=origin,
                    status="accepted",
                )
            )
    Question.objects.bulk_create(questions)
    return dataset


@pytest.fixture
def job_project(make_user):
    """A project of a translation or question job with ``members`` annotators in one group, activated."""

    def _make(*, kind: str, dataset, members=(), overlap: int = 1, activate: bool = True, **options):
        project = services.project_create(
            dataset=dataset, name=f"{kind} {next(_names)}", kind=kind, overlap=overlap, seed=5, **options
        )
        group = project.groups.get()
        for user in members:
            services.project_member_add(project=project, user=user, group=group)
        if activate and members:
            services.project_activate(project=project)
        project.refresh_from_db()
        return project

    return _make
