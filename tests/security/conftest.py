"""A small but complete Timbang world for the security tests: one user per role, and one real object behind
every URL parameter (projects of each kind, assignments, runs, an export with its file, an import)."""

from __future__ import annotations

import zipfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import AbstractBaseUser
from rest_framework.authtoken.models import Token

from annotation import services
from annotation.models import Assignment, FlagRecompute, Project
from arena import services as arena_services
from datasets_app.models import Dataset, DatasetImport
from evaluation.models import BenchmarkRun, GenerationRun, JudgeRun, JudgeTemplate, ModelEndpoint
from exports.models import Export
from tests.annotation.conftest import (
    MODEL_NAMES,
    build_dataset,
    build_question_dataset,
    build_translation_dataset,
)
from webhooks.models import WebhookDelivery, WebhookEndpoint

# The columns of the permission matrix. ``annotator`` owns the assignment every token URL names and is a
# member of every project; ``annotator_peer`` is in the same rating project with its own assignment;
# ``annotator_outsider`` annotates only in a project of its own.
ROLES = (
    "anonymous",
    "annotator",
    "annotator_peer",
    "annotator_outsider",
    "reviewer",
    "project_manager",
    "researcher",
    "admin",
)
# The arena's endpoints: like model names, never shown to an annotator.
ARENA_SLUGS = ("arena-secret-left", "arena-secret-right")
_GROUP_OF = {"annotator_peer": "annotator", "annotator_outsider": "annotator"}


@dataclass
class World:
    users: dict[str, AbstractBaseUser]
    tokens: dict[str, str]
    dataset: Dataset
    rating: Project
    other_rating: Project
    translation: Project
    authoring: Project
    mcq: Project
    own_assignment: Assignment
    peer_assignment: Assignment
    endpoint: ModelEndpoint
    generation_run: GenerationRun
    judge_run: JudgeRun
    benchmark_run: BenchmarkRun
    export: Export
    dataset_import: DatasetImport
    flag_recompute: FlagRecompute
    extra: dict[str, Any] = field(default_factory=dict)


def _project(*, dataset: Dataset | None, kind: str, members, **options) -> Project:
    project = services.project_create(dataset=dataset, name=f"{kind} security", kind=kind, seed=3, **options)
    group = project.groups.order_by("id").first()
    for user in members:
        services.project_member_add(project=project, user=user, group=group)
    services.project_activate(project=project)
    project.refresh_from_db()
    return project


def build_world(make_user, tmp_path: Path) -> World:
    users = {}
    for role in ROLES[1:]:
        users[role] = make_user(
            _GROUP_OF.get(role, role), username=f"sec-{role}", email=f"{role}@example.org"
        )
    tokens = {role: Token.objects.create(user=user).key for role, user in users.items()}

    dataset = build_dataset(n_prompts=3, n_models=3, name="security-data")
    owner, peer, outsider = users["annotator"], users["annotator_peer"], users["annotator_outsider"]
    rating = _project(
        dataset=dataset,
        kind="likert",
        members=[owner, peer],
        overlap=2,
        best_pick="optional",
        criteria=["relevance", "fluency"],
    )
    other_rating = _project(
        dataset=build_dataset(n_prompts=1, n_models=2, name="security-data-2"),
        kind="pairwise",
        members=[outsider],
        overlap=1,
    )
    own = services.assignment_claim(project=rating, user=owner)
    peer_assignment = services.assignment_claim(project=rating, user=peer)
    n = len(peer_assignment.permutation)
    services.assignment_submit(
        token=peer_assignment.token,
        user=peer,
        payload={"ratings": {str(i + 1): {"relevance": 4, "fluency": 4} for i in range(n)}},
    )
    translation = _project(
        dataset=build_translation_dataset(n_units=8, translated=True),
        kind="translation_review",
        members=[owner],
        overlap=1,
    )
    authoring = _project(dataset=None, kind="question_authoring", members=[owner], overlap=1)
    spans = _project(dataset=translation.dataset, kind="translation_mqm", members=[owner], overlap=1)
    mcq = _project(
        dataset=build_question_dataset(creators=[users["reviewer"]], origin="llm"),
        kind="mcq_answer",
        members=[owner],
        overlap=1,
    )

    endpoint = ModelEndpoint.objects.create(
        slug="security-judge",
        base_url="http://127.0.0.1:9/v1",
        model_id="m",
        api_key_env="TIMBANG_MODEL_KEY_SECURITY",
    )
    generation_run = GenerationRun.objects.create(dataset=dataset, name="gen")
    generation_run.endpoints.add(endpoint)
    template = JudgeTemplate.objects.create(
        name="security-pairwise", kind="pairwise", language="en", user="{question}"
    )
    judge_run = JudgeRun.objects.create(
        judge_kind="pairwise", endpoint=endpoint, template=template, dataset=dataset
    )
    benchmark_run = BenchmarkRun.objects.create(task="mcq", endpoint=endpoint, dataset=mcq.dataset)

    zip_path = tmp_path / "export.zip"
    with zipfile.ZipFile(zip_path, "w") as archive:
        archive.writestr("README.md", "security export")
    export = Export.objects.create(project=rating, status=Export.Status.SUCCEEDED, zip_path=str(zip_path))
    dataset_import = DatasetImport.objects.create(
        name="security-import", file_format="jsonl", upload_path="x"
    )
    flag_recompute = FlagRecompute.objects.create(project=translation, status="succeeded")
    webhook = WebhookEndpoint.objects.create(
        project=rating,
        url="https://hooks.example.org/timbang",
        events=["task.submitted"],
        secret="whsec_" + "A" * 32,
    )
    delivery = WebhookDelivery.objects.create(
        endpoint=webhook, event="task.submitted", message_id="msg_security", payload={}, status="failed"
    )
    arena_endpoints = [
        ModelEndpoint.objects.create(slug=slug, base_url="http://127.0.0.1:9/v1", model_id=slug)
        for slug in ARENA_SLUGS
    ]
    arena = arena_services.arena_create(name="security arena", endpoints=arena_endpoints)
    for user in (owner, peer):
        services.project_member_add(project=arena, user=user, group=arena.groups.first())
    services.project_activate(project=arena)
    arena.refresh_from_db()
    battle = arena_services.battle_start(project=arena, user=owner, text="Halo", language="ind")
    return World(
        users=users,
        tokens=tokens,
        dataset=dataset,
        rating=rating,
        other_rating=other_rating,
        translation=translation,
        authoring=authoring,
        mcq=mcq,
        own_assignment=own,
        peer_assignment=peer_assignment,
        endpoint=endpoint,
        generation_run=generation_run,
        judge_run=judge_run,
        benchmark_run=benchmark_run,
        export=export,
        dataset_import=dataset_import,
        flag_recompute=flag_recompute,
        extra={
            "model_names": [*MODEL_NAMES[:3], *ARENA_SLUGS],
            "spans": spans,
            "webhook": webhook,
            "delivery": delivery,
            "arena": arena,
            "battle": battle,
        },
    )


@pytest.fixture
def world(make_user, tmp_path) -> World:
    return build_world(make_user, tmp_path)


@contextmanager
def connection_kept_open():
    """Requests here run inside the test's transaction. Django's test client stops the handler from
    closing "old" connections while it runs a request; schemathesis calls the WSGI app directly and the
    matrix closes responses itself, so they do the same here, or PostgreSQL's connection would be closed
    in the middle of the test's transaction. (The test client reconnects the receiver after each of its
    requests, so this wraps each call rather than the whole test.)"""
    from django.core import signals
    from django.db import close_old_connections

    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)
