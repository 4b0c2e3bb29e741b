"""Loads the bundled sample project for `make demo`: every role, every job kind, a model, a judge, an export.

``demo_load`` builds (or rebuilds) the whole story on whatever database is configured:

- users for every role, with passwords to print, and three simulated annotators (``simulasi1`` ..
  ``simulasi3``, who cannot log in) whose answers come from ``demo.domain.simulation``;
- the sample datasets of ``demo/data``: prompts with five fictional models' responses, translation
  units with their translations, and culture questions with (category, concept) pairs to write more;
- five active projects: rating + best of five, pairwise A/B, translation review, question writing and
  question answering, with the demo annotators as members;
- simulated answers to part of each rating, pairwise, review and answering project, so the dashboards have
  data while the demo annotators still have tasks;
- the model endpoint ``demo-llm`` (llama.cpp's OpenAI-compatible server over a small GGUF model, started
  by ``scripts/demo``), and a pairwise judge run over the pairwise project's tasks once that server answers;
- a Hugging Face preference-dataset export of the pairwise project, written at once.

Running it again deletes the demo projects (answers, judge runs and all) and builds them afresh.
"""

from __future__ import annotations

import secrets
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from accounts import roles
from annotation import services as annotation_services
from annotation.models import Assignment, Membership, Project
from annotation.services.questions import concept_pairs_add, concept_pairs_read
from datasets_app.models import Dataset, Response
from datasets_app.services import ImportResult, dataset_import
from demo.domain.simulation import (
    SIMULATED_ANNOTATORS,
    SimulatedAnnotator,
    likert_payload,
    mcq_payload,
    pairwise_vote,
    response_quality,
    review_payload,
    rng_for,
)
from demo.selectors import DEMO_ENDPOINT_SLUG, MODEL_UNREACHABLE_KEY
from evaluation.models import ACTIVE_STATUSES, JudgeRun, ModelEndpoint, RunChunk
from evaluation.services import endpoint_create, endpoint_update, judge_run_start
from evaluation.services.runs import run_cancel
from exports.models import Export
from exports.options import ExportOptions
from exports.services import export_create, export_run

DEMO_DATA_DIR = Path(__file__).resolve().parent / "data"
DEMO_DATASET_NAME = "Contoh IndoPref (demo)"
DEMO_TRANSLATIONS_NAME = "Contoh terjemahan (demo)"
DEMO_QUESTIONS_NAME = "Contoh soal budaya (demo)"
DEMO_SEED = 2024

DEMO_USERS: tuple[tuple[str, tuple[str, ...], bool], ...] = (
    ("admin", (), True),
    ("manajer", (roles.PROJECT_MANAGER,), False),
    ("peneliti", (roles.RESEARCHER,), False),
    ("reviewer", (roles.REVIEWER,), False),
    ("anotator1", (roles.ANNOTATOR,), False),
    ("anotator2", (roles.ANNOTATOR,), False),
    ("anotator3", (roles.ANNOTATOR,), False),
    ("anotator4", (roles.ANNOTATOR,), False),
)
SIMULATED_GROUP = "Simulasi (demo)"
SIMULATED_FIRST_NAME = "Simulated annotator"
SIMULATED_LAST_NAME = roles.SIMULATED_LAST_NAME

RATING_PROJECT = "Demo: rating + best of five"
PAIRWISE_PROJECT = "Demo: pairwise A/B"
REVIEW_PROJECT = "Demo: translation review"
TRANSLATION_PROJECT = "Demo: translation (revisions)"
AUTHORING_PROJECT = "Demo: question writing"
ANSWERING_PROJECT = "Demo: question answering"
DEMO_PROJECTS = (
    RATING_PROJECT,
    PAIRWISE_PROJECT,
    REVIEW_PROJECT,
    TRANSLATION_PROJECT,
    AUTHORING_PROJECT,
    ANSWERING_PROJECT,
)
DEMO_GROUPS = {"Kelompok A": ("anotator1", "anotator2"), "Kelompok B": ("anotator3", "anotator4")}
JOB_GROUP = "Anotator"
SIMULATED_NOTE = (
    "Demo project: the answers of the group 'Simulasi (demo)' (users simulasi1-3) are simulated, drawn from "
    "a seeded model of annotators, not given by people."
)

# Share of the translation units the simulated reviewer takes (a verdict closes a unit, so the rest stay for
# the demo annotators), and when the simulated annotators started working.
SIMULATED_REVIEW_SHARE = 0.5
SIMULATED_HOURS_AGO = timedelta(hours=6)

DEMO_ENDPOINT_QUEUE = f"gpu.{DEMO_ENDPOINT_SLUG}"
DEMO_MODEL_ALIAS = "demo"
DEFAULT_MODEL_URL = "http://127.0.0.1:8081/v1"
JUDGE_RUN_NAME = "Demo: pairwise judge"
# The judge's explanation is capped (a schema maxLength) so that a constrained reply always reaches its
# verdict within the token budget: SmolLM2-135M otherwise repeats a phrase until max_tokens cuts it off, and a
# third of its replies had no score. 120 characters are at most about 120 tokens, plus about 20 for the JSON.
DEMO_EXPLANATION_CHARS = 120

INSTRUCTIONS = {
    RATING_PROJECT: (
        "Read the prompt, then rate every response for relevance and fluency from 1 to 5 using the rubric "
        "on the right, and pick the best one. Use the keyboard: press ? to see the shortcuts.",
        "Baca perintahnya, lalu beri nilai 1 sampai 5 untuk relevansi dan kelancaran setiap respons sesuai "
        "rubrik di samping, dan pilih respons terbaik. Gunakan papan ketik: tekan ? untuk melihat pintasan.",
    ),
    PAIRWISE_PROJECT: (
        "Compare the two answers to the prompt and vote A, B, tie or both bad. Judge what is said, not how "
        "long it is. Use the keyboard: a, b, t and x, then Enter.",
        "Bandingkan dua jawaban untuk perintah itu dan pilih A, B, seri, atau keduanya buruk. Nilailah "
        "isinya, bukan panjangnya. Gunakan papan ketik: a, b, t, dan x, lalu Enter.",
    ),
    REVIEW_PROJECT: (
        "Check each translation against its source. Accept it, fix it yourself, or reject it with the error "
        "categories and a comment for the translator. The automatic flags point at likely problems; they "
        "can be wrong.",
        "Periksa setiap terjemahan terhadap teks sumbernya. Terima, perbaiki sendiri, atau tolak dengan "
        "kategori kesalahan dan komentar untuk penerjemah. Tanda otomatis menunjuk masalah yang mungkin "
        "ada; tanda itu bisa keliru.",
    ),
    TRANSLATION_PROJECT: (
        "Revise the translations a reviewer sent back: read the reviewer's comment and error categories, "
        "then write the corrected translation in the language and register shown. Revised units go back "
        "to review.",
        "Perbaiki terjemahan yang dikembalikan peninjau: baca komentar dan kategori kesalahannya, lalu tulis "
        "terjemahan yang sudah diperbaiki dalam bahasa dan ragam yang ditunjukkan. Unit yang sudah "
        "diperbaiki kembali ditinjau.",
    ),
    AUTHORING_PROJECT: (
        "Write a multiple-choice question about Indonesian daily life that uses the concept you are given. "
        "Give five options, mark the answer and the most tempting wrong option.",
        "Tulis soal pilihan ganda tentang kehidupan sehari-hari di Indonesia yang memakai konsep yang "
        "diberikan. Buat lima pilihan, tandai jawabannya dan pilihan salah yang paling mengecoh.",
    ),
    ANSWERING_PROJECT: (
        "Answer each question with the option you think is right. Flag a question as ambiguous, with a "
        "short reason, when more than one option could be right.",
        "Jawab setiap soal dengan pilihan yang menurut Anda benar. Tandai soal sebagai ambigu, dengan "
        "alasan singkat, bila lebih dari satu pilihan bisa benar.",
    ),
}


@dataclass
class DemoUser:
    username: str
    password: str
    roles: list[str]
    is_staff: bool


@dataclass
class DemoModel:
    """Where the demo's model server is and how to judge with it."""

    url: str = DEFAULT_MODEL_URL
    model_id: str = DEMO_MODEL_ALIAS
    label: str = ""
    wait_s: float = 0.0
    judge: bool = True
    judge_orders: str = JudgeRun.OrderMode.BOTH
    judge_language: str = "en"
    # Verdicts per pair: above 1 the judge samples at IndoPref's temperature 0.6 and the judge lab can show
    # its calibration; 1 keeps the greedy run.
    judge_samples: int = 1
    max_tokens: int = 256
    # Longest judge explanation, in characters (0: no cap).
    explanation_max_chars: int = DEMO_EXPLANATION_CHARS
    # Requests sent to the model server at once: its number of slots (continuous batching).
    max_concurrency: int = 1


@dataclass
class DemoResult:
    users: list[DemoUser]
    dataset: ImportResult
    datasets: list[ImportResult] = field(default_factory=list)
    projects: list[str] = field(default_factory=list)
    simulated: dict[str, int] = field(default_factory=dict)
    endpoint: ModelEndpoint | None = None
    judge_run: JudgeRun | None = None
    judge_message: str = ""
    export: Export | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "users": [vars(u) for u in self.users],
            "dataset": self.dataset.as_dict(),
            "datasets": [d.as_dict() for d in self.datasets],
            "projects": self.projects,
            "simulated_answers": self.simulated,
            "endpoint": None
            if self.endpoint is None
            else {
                "slug": self.endpoint.slug,
                "base_url": self.endpoint.base_url,
                "model_id": self.endpoint.model_id,
            },
            "judge_run": None
            if self.judge_run is None
            else {"id": self.judge_run.pk, "status": self.judge_run.status, "items": self.judge_run.n_total},
            "judge_message": self.judge_message,
            "export": None
            if self.export is None
            else {
                "id": self.export.pk,
                "status": self.export.status,
                "folder": self.export.folder_path,
                "zip": self.export.zip_path,
                "error": self.export.error,
            },
        }


# --- users ---------------------------------------------------------------------------------------------


def _users(password: str | None) -> tuple[list[DemoUser], dict[str, Any]]:
    User = get_user_model()
    users: list[DemoUser] = []
    by_name: dict[str, Any] = {}
    # The role groups come with the migrations; a database flushed since (a test, a manual cleanup) lacks them.
    for role in roles.ALL_ROLES:
        Group.objects.get_or_create(name=role)
    for username, role_names, is_staff in DEMO_USERS:
        user, _ = User.objects.get_or_create(username=username)
        secret = password or secrets.token_urlsafe(9)
        user.set_password(secret)
        user.is_staff = is_staff
        user.is_superuser = is_staff
        user.save()
        user.groups.set(Group.objects.filter(name__in=role_names))
        users.append(DemoUser(username, secret, list(role_names) or ["admin"], is_staff))
        by_name[username] = user
    annotator = Group.objects.filter(name=roles.ANNOTATOR)
    for simulated in SIMULATED_ANNOTATORS:
        user, _ = User.objects.get_or_create(username=simulated.username)
        user.set_unusable_password()
        user.first_name, user.last_name = SIMULATED_FIRST_NAME, SIMULATED_LAST_NAME
        user.is_staff = user.is_superuser = False
        user.save()
        user.groups.set(annotator)
        by_name[simulated.username] = user
    return users, by_name


# --- datasets and projects -----------------------------------------------------------------------------


def _clear_previous() -> None:
    """Delete the demo projects and what hangs on them, so the datasets can be replaced."""
    runs = JudgeRun.objects.filter(annotation_project__name__in=DEMO_PROJECTS)
    RunChunk.objects.filter(
        run_kind=RunChunk.RunKind.JUDGE, run_id__in=list(runs.values_list("pk", flat=True))
    ).delete()
    runs.delete()
    Project.objects.filter(name__in=DEMO_PROJECTS).delete()


def _first_lines(path: Path, n: int | None) -> Path:
    if n is None:
        return path
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)[:n]
    handle = tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False, encoding="utf-8")  # noqa: SIM115
    with handle:
        handle.writelines(lines)
    return Path(handle.name)


def _import(file_name: str, name: str, kind: str, description: str, limit: int | None = None) -> ImportResult:
    path = _first_lines(DEMO_DATA_DIR / file_name, limit)
    try:
        return dataset_import(
            path=path,
            name=name,
            file_format="jsonl",
            kind=kind,
            replace=True,
            description=description,
            license="CC-BY-4.0",
            source="bundled sample (demo/data)",
        )
    finally:
        if path.parent != DEMO_DATA_DIR:
            path.unlink(missing_ok=True)


def _members(project: Project, users: dict[str, Any], groups: dict[str, Iterable[str]]) -> None:
    by_name = {group.name: group for group in project.groups.all()}
    for group_name, usernames in groups.items():
        for username in usernames:
            annotation_services.project_member_add(
                project=project, user=users[username], group=by_name[group_name]
            )
    Membership.objects.filter(project=project, group__name=SIMULATED_GROUP).update(is_simulated=True)


def _projects(
    prompts: Dataset, translations: Dataset, questions: Dataset, users: dict[str, Any]
) -> list[Project]:
    simulated = {SIMULATED_GROUP: [a.username for a in SIMULATED_ANNOTATORS]}
    annotators = [name for names in DEMO_GROUPS.values() for name in names]

    def create(
        name: str, dataset: Dataset, kind: str, groups: dict[str, Iterable[str]], **options
    ) -> Project:
        instructions_en, instructions_id = INSTRUCTIONS[name]
        project = annotation_services.project_create(
            name=name,
            dataset=dataset,
            kind=kind,
            seed=DEMO_SEED,
            groups=list(groups),
            instructions_en=instructions_en,
            instructions_id=instructions_id,
            created_by=users["manajer"],
            description=SIMULATED_NOTE if SIMULATED_GROUP in groups else "Demo project.",
            **options,
        )
        _members(project, users, groups)
        return annotation_services.project_activate(project=project)

    rating_groups = {**DEMO_GROUPS, **simulated}
    job_groups = {JOB_GROUP: annotators, **simulated}
    return [
        create(RATING_PROJECT, prompts, "likert", rating_groups, best_pick="required", overlap=2),
        create(
            PAIRWISE_PROJECT,
            prompts,
            "pairwise",
            rating_groups,
            pair_mode="sample",
            pairs_per_prompt=3,
            overlap=2,
        ),
        create(REVIEW_PROJECT, translations, "translation_review", job_groups, overlap=1),
        # Units a reviewer rejects wait here for a translator (the demo's people; nobody simulated).
        create(TRANSLATION_PROJECT, translations, "translation", {JOB_GROUP: annotators}, overlap=1),
        create(AUTHORING_PROJECT, questions, "question_authoring", {JOB_GROUP: annotators}, overlap=1),
        create(ANSWERING_PROJECT, questions, "mcq_answer", job_groups, overlap=3, max_ambiguous=2),
    ]


# --- simulated answers -----------------------------------------------------------------------------------


class _Clock:
    """The simulated annotators' working time: answers are spread over the hours before the demo loads, so
    time on task, medians and agreement over time look like a day of work."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


Participant = tuple[Any, SimulatedAnnotator, Callable[[Assignment, Any], dict[str, object]]]


def _answer_in_turns(
    project: Project, participants: list[Participant], clock: _Clock, limit: int | None = None
) -> int:
    """The participants take turns claiming and answering ``project``'s tasks until none gets one (or
    ``limit`` answers are in), as people working side by side would: the k places of a task go to
    different annotators."""
    done = 0
    active = list(participants)
    while active and (limit is None or done < limit):
        for participant in list(active):
            if limit is not None and done >= limit:
                break
            user, annotator, payload_for = participant
            assignment = annotation_services.assignment_claim(project=project, user=user, now=clock.now)
            if assignment is None:
                active.remove(participant)
                continue
            rng = rng_for(DEMO_SEED, project.kind, annotator.username, assignment.task_id)
            payload = payload_for(assignment, rng)
            seconds = round(rng.uniform(25, 140), 1)
            annotation_services.assignment_submit(
                token=assignment.token,
                user=user,
                payload=payload,
                seconds=seconds,
                now=clock.now + timedelta(seconds=seconds),
            )
            clock.advance(seconds / len(participants))
            done += 1
    return done


def _simulate(projects: dict[str, Project], users: dict[str, Any]) -> dict[str, int]:
    rating, pairwise = projects[RATING_PROJECT], projects[PAIRWISE_PROJECT]
    review, answering = projects[REVIEW_PROJECT], projects[ANSWERING_PROJECT]
    qualities = {
        r.pk: response_quality(r.model_name, f"{r.prompt_id}:{r.model_name}", seed=DEMO_SEED)
        for r in Response.objects.filter(prompt__dataset_id=rating.dataset_id)
    }

    def likert(annotator: SimulatedAnnotator):
        def answer(assignment: Assignment, rng) -> dict[str, object]:
            ids = assignment.task.response_ids
            shown = [qualities[ids[i]] for i in assignment.permutation]
            return likert_payload(shown, list(rating.criteria), annotator, rng, best_pick=True)

        return answer

    def vote(annotator: SimulatedAnnotator):
        def answer(assignment: Assignment, rng) -> dict[str, object]:
            task = assignment.task
            canonical = [qualities[task.response_a_id], qualities[task.response_b_id]]
            shown = [canonical[i] for i in assignment.permutation]
            return {"vote": pairwise_vote(shown[0], shown[1], annotator, rng)}

        return answer

    def mcq(annotator: SimulatedAnnotator):
        def answer(assignment: Assignment, rng) -> dict[str, object]:
            question = assignment.task.question
            return mcq_payload(
                question.answer_key.upper(), (question.distractor or "").upper(), annotator, rng
            )

        return answer

    def review_answer(assignment: Assignment, rng) -> dict[str, object]:
        return review_payload(assignment.task.translation_unit.flags or [], rng)

    def everyone(make) -> list[Participant]:
        return [(users[a.username], a, make(a)) for a in SIMULATED_ANNOTATORS]

    clock = _Clock(timezone.now() - SIMULATED_HOURS_AGO)
    reviewer = SIMULATED_ANNOTATORS[0]
    return {
        "likert": _answer_in_turns(rating, everyone(likert), clock),
        "pairwise": _answer_in_turns(pairwise, everyone(vote), clock),
        "mcq_answer": _answer_in_turns(answering, everyone(mcq), clock),
        "translation_review": _answer_in_turns(
            review,
            [(users[reviewer.username], reviewer, review_answer)],
            clock,
            limit=int(review.n_tasks * SIMULATED_REVIEW_SHARE),
        ),
    }


# --- model, judge, export ------------------------------------------------------------------------------


def _endpoint(model: DemoModel, user) -> ModelEndpoint:
    fields = {
        "backend": ModelEndpoint.Backend.OPENAI,
        "base_url": model.url,
        "model_id": model.model_id,
        # Its own queue, served by the model worker, so that exports and reports never wait behind it.
        "queue": DEMO_ENDPOINT_QUEUE,
        "max_concurrency": model.max_concurrency,
        "sampling_defaults": {"temperature": 0.0, "max_tokens": model.max_tokens, "seed": DEMO_SEED},
        # llama.cpp's server constrains output to a schema given with the json_object response format.
        "backend_options": {"structured_output": "json_object", "timeout_s": 300, "max_attempts": 3},
        "is_active": True,
    }
    existing = ModelEndpoint.objects.filter(slug=DEMO_ENDPOINT_SLUG).first()
    if existing is not None:
        return endpoint_update(endpoint=existing, **fields)
    return endpoint_create(user=user, slug=DEMO_ENDPOINT_SLUG, **fields)


def model_server_ready(url: str, wait_s: float = 0.0) -> bool:
    """Whether an OpenAI-compatible server answers ``GET {url}/models``, trying for up to ``wait_s``."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            if httpx.get(url.rstrip("/") + "/models", timeout=3.0).status_code == 200:
                return True
        except httpx.HTTPError:
            pass
        if time.monotonic() >= deadline:
            return False
        time.sleep(1.0)


def demo_judge_start(*, model: DemoModel, user=None) -> tuple[JudgeRun | None, str]:
    """Start the pairwise judge run over the demo's pairwise project, if the model server answers."""
    project = Project.objects.filter(name=PAIRWISE_PROJECT).first()
    endpoint = ModelEndpoint.objects.filter(slug=DEMO_ENDPOINT_SLUG).first()
    if project is None or endpoint is None:
        return None, "The demo is not loaded: run `python manage.py demo` first."
    cache.delete(MODEL_UNREACHABLE_KEY)  # while this waits, the model is starting
    if not model_server_ready(endpoint.base_url, model.wait_s):
        cache.set(MODEL_UNREACHABLE_KEY, {"waited_s": round(model.wait_s)}, timeout=None)
        return None, (
            f"No model server answers at {endpoint.base_url}; the judge run was not started. Start one with "
            f"`scripts/model-server` and then run `python manage.py demo --judge-only`."
        )
    with transaction.atomic():
        for earlier in JudgeRun.objects.filter(annotation_project=project, status__in=ACTIVE_STATUSES):
            run_cancel(run=earlier)
        run = judge_run_start(
            judge_kind="pairwise",
            endpoint=endpoint,
            annotation_project=project,
            order_mode=model.judge_orders,
            options={
                "language": model.judge_language,
                "chunk_size": 8,
                "max_tokens": model.max_tokens,
                # Greedy, as the endpoint: the run's value wins over the IndoPref template's 0.6. Sampled
                # verdicts (for the judge lab's calibration) need a temperature: IndoPref's.
                "sampling": {"temperature": 0.6 if model.judge_samples > 1 else 0.0},
                **({"samples": model.judge_samples} if model.judge_samples > 1 else {}),
                **(
                    {"explanation_max_chars": model.explanation_max_chars}
                    if model.explanation_max_chars
                    else {}
                ),
            },
            name=JUDGE_RUN_NAME + (f" ({model.label})" if model.label else ""),
            user=user,
        )
    run.refresh_from_db()
    return run, ""


def _export(project: Project, user) -> Export:
    options = ExportOptions(
        kind="hf",
        test_size=0.1,
        seed=DEMO_SEED,
        license="CC-BY-4.0",
        pretty_name="Timbang demo preferences (simulated annotations)",
    )
    record = export_create(project=project, options=options, user=user, queue=False)
    return export_run(export=record)


# --- the whole demo ------------------------------------------------------------------------------------


def demo_load(
    *,
    password: str | None = None,
    prompts: int | None = None,
    simulate: bool = True,
    model: DemoModel | None = None,
    export: bool = True,
) -> DemoResult:
    """Create (or reset) the demo. ``prompts`` keeps only the first N sample prompts (a quicker demo);
    ``model`` None skips the endpoint and the judge run. Safe to run again."""
    cache.delete(MODEL_UNREACHABLE_KEY)  # a model that failed an earlier demo is starting again, if at all
    with transaction.atomic():
        users, by_name = _users(password)
        _clear_previous()
        result = _import(
            "prompts.jsonl",
            DEMO_DATASET_NAME,
            "prompts",
            "Sample prompts in Indonesian, Sundanese and Javanese with answers from five fictional models.",
            prompts,
        )
        translations = _import(
            "translations.jsonl",
            DEMO_TRANSLATIONS_NAME,
            "translations",
            "Sample English, Indonesian, Javanese and Sundanese sentences with translations to review.",
        )
        questions = _import(
            "questions.jsonl",
            DEMO_QUESTIONS_NAME,
            "questions",
            "Sample multiple-choice questions about daily life and culture in Indonesia.",
        )
        created = _projects(result.dataset, translations.dataset, questions.dataset, by_name)
        projects = {p.name: p for p in created}
        concept_pairs_add(
            project=projects[AUTHORING_PROJECT], records=concept_pairs_read(DEMO_DATA_DIR / "concepts.jsonl")
        )
        demo = DemoResult(
            users=users,
            dataset=result,
            datasets=[result, translations, questions],
            projects=[p.name for p in created],
        )
        if simulate:
            demo.simulated = _simulate(projects, by_name)
        if model is not None:
            demo.endpoint = _endpoint(model, by_name["peneliti"])
        if export and simulate:
            demo.export = _export(projects[PAIRWISE_PROJECT], by_name["peneliti"])
    if model is not None and model.judge:
        demo.judge_run, demo.judge_message = demo_judge_start(model=model, user=by_name["peneliti"])
    return demo
