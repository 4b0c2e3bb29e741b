"""Every URL pattern x every role, against an explicit table of who may reach what.

A new URL pattern that is not in ``PAGES`` or ``API`` fails ``test_every_url_pattern_is_classified``, so
each new page or API operation gets a row here before it ships. Each request runs in a savepoint that is
rolled back, so one role's POST (a delete, a status change) does not change what the next role sees.

Cells: ``A`` allowed (a 2xx/3xx other than a redirect to the login page, a 400 for the empty or minimal
input sent, a 409 for a state conflict), ``P`` public (anything below 400, a login redirect included), ``L`` anonymous page: redirect to the login page, ``U`` anonymous
API call: 401 or 403, ``F`` 403, ``N`` 404 (the object exists but is not the caller's).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core import signing
from django.db import transaction
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from rest_framework.test import APIClient

from annotation.models import StudyImport
from annotation.views.tool_imports import UPLOAD_SALT as STUDY_UPLOAD_SALT
from datasets_app.views import UPLOAD_SALT
from tests.security.conftest import ROLES, World, connection_kept_open

pytestmark = pytest.mark.django_db

# Patterns tested elsewhere: Django's admin (its own staff check), the language switch, the API
# schema and its viewers (public by design; see test_schema_and_language_switch_are_public) and the site
# icon (tests/config/test_static_pages.py).
SEPARATE = {"set_language", "schema", "api-docs", "api-redoc", "api-redoc-bundle", "favicon"}


@dataclass(frozen=True)
class Row:
    method: str
    cells: str  # one letter per role, in ROLES order, space separated
    kwargs: Callable[[World], dict[str, Any]] = lambda w: {}
    data: Callable[[World], dict[str, Any]] = lambda w: {}


def rating(w: World) -> dict[str, int]:
    return {"project_id": w.rating.pk}


def translation(w: World) -> dict[str, int]:
    return {"project_id": w.translation.pk}


def authoring(w: World) -> dict[str, int]:
    return {"project_id": w.authoring.pk}


def mcq(w: World) -> dict[str, int]:
    return {"project_id": w.mcq.pk}


def spans(w: World) -> dict[str, int]:
    return {"project_id": w.extra["spans"].pk}


def arena(w: World) -> dict[str, int]:
    return {"project_id": w.extra["arena"].pk}


def own_battle(w: World) -> dict[str, str]:
    return {"token": w.extra["battle"].token}


def own_token(w: World) -> dict[str, str]:
    return {"token": w.own_assignment.token}


def likert_answer(w: World) -> dict[str, Any]:
    n = len(w.own_assignment.permutation)
    return {"answer": {"ratings": {str(i + 1): {"relevance": 3, "fluency": 3} for i in range(n)}}}


def pending_upload_token() -> str:
    """A file uploaded on the Datasets page and waiting for its column mapping."""
    folder = Path(settings.UPLOADS_DIR)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "matrix-preview.csv"
    path.write_text("instruction,output_1\nHalo?,Halo!\n", encoding="utf-8")
    pending = {"path": str(path), "format": "csv", "filename": "p.csv", "name": "p", "replace": False}
    return signing.dumps(pending, salt=UPLOAD_SALT)


def pending_study_token() -> str:
    """A study from another tool uploaded on the import page and waiting for its preview."""
    folder = Path(settings.UPLOADS_DIR)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "matrix-study.json"
    path.write_text('[{"id": 1, "data": {"text": "Halo"}, "annotations": []}]', encoding="utf-8")
    pending = {
        "path": str(path),
        "tool": "label_studio",
        "filename": "s.json",
        "name": "s",
        "language": "ind",
    }
    return signing.dumps(pending, salt=STUDY_UPLOAD_SALT)


def study_import(w: World) -> dict[str, int]:
    """A study import that failed (its upload gone: a retry is refused, which is an allowed answer)."""
    job = StudyImport.objects.create(
        tool="label_studio", name="matrix-study", upload_path="/nonexistent/s.json", status="failed"
    )
    return {"import_id": job.pk}


#                         anon  ann  peer  outsider  reviewer  pm  researcher  admin
DATA = "L F F F F A A A"  # datasets, exports, runs, endpoints, analytics: project managers and researchers
MANAGE = "L F F F F A F A"  # project management: project managers only
REVIEW = "L F F F A A F A"  # review queues: reviewers and project managers
DATA_API = DATA.replace("L", "U")
MANAGE_API = MANAGE.replace("L", "U")

PAGES: dict[str, Row] = {
    "home": Row("GET", "L A A A A A A A"),
    "login": Row("GET", "P P P P P P P P"),
    "logout": Row("POST", "P P P P P P P P"),
    "accounts:people": Row("GET", MANAGE),
    "accounts:person_active": Row(
        "POST", MANAGE, lambda w: {"user_id": w.users["annotator_outsider"].pk}, lambda w: {"active": "1"}
    ),
    "accounts:person_password_reset": Row(
        "POST", MANAGE, lambda w: {"user_id": w.users["annotator_outsider"].pk}
    ),
    "accounts:account": Row("GET", "L A A A A A A A"),
    "accounts:account_token_create": Row("POST", "L A A A A A A A"),
    "accounts:account_token_revoke": Row("POST", "L A A A A A A A"),
    "accounts:password_reset_confirm": Row(
        "GET", "P P P P P P P P", lambda w: {"uidb64": "MQ", "token": "x-y"}
    ),
    "accounts:password_reset_complete": Row("GET", "P P P P P P P P"),
    # datasets and preference exports
    "datasets:list": Row("GET", DATA),
    "datasets:detail": Row("GET", DATA, lambda w: {"dataset_id": w.dataset.pk}),
    "datasets:import_upload": Row("POST", DATA),
    "datasets:import_hub": Row("POST", DATA),
    "datasets:import_preview": Row("GET", DATA, lambda w: {"token": pending_upload_token()}),
    "datasets:import_detail": Row("GET", DATA, lambda w: {"import_id": w.dataset_import.pk}),
    "datasets:import_cancel": Row("POST", DATA, lambda w: {"import_id": w.dataset_import.pk}),
    "datasets:prompt": Row(
        "GET", DATA, lambda w: {"dataset_id": w.dataset.pk, "prompt_id": w.dataset.prompts.first().pk}
    ),
    "exports:export_list": Row("GET", DATA),
    "exports:export_new": Row("GET", DATA, rating),
    "exports:export_preview": Row("POST", DATA, rating, lambda w: {"format": "hf"}),
    "exports:export_detail": Row("GET", DATA, lambda w: {"export_id": w.export.pk}),
    "exports:export_download": Row("GET", DATA, lambda w: {"export_id": w.export.pk}),
    "exports:export_cancel": Row("POST", DATA, lambda w: {"export_id": w.export.pk}),
    "exports:export_retry": Row("POST", DATA, lambda w: {"export_id": w.export.pk}),
    # webhooks: project managers
    "webhooks:list": Row("GET", MANAGE),
    "webhooks:detail": Row("GET", MANAGE, lambda w: {"hook_id": w.extra["webhook"].pk}),
    "webhooks:rotate": Row("POST", MANAGE, lambda w: {"hook_id": w.extra["webhook"].pk}),
    "webhooks:active": Row("POST", MANAGE, lambda w: {"hook_id": w.extra["webhook"].pk}),
    "webhooks:delete": Row("POST", MANAGE, lambda w: {"hook_id": w.extra["webhook"].pk}),
    "webhooks:redeliver": Row("POST", MANAGE, lambda w: {"delivery_id": w.extra["delivery"].pk}),
    # the annotator loop: members only, tokens of the owner only (admins are annotators too, not members)
    "annotation:start": Row("GET", "L A A N F F F N", rating),
    "annotation:task": Row("GET", "L A N N F F F N", own_token),
    "annotation:submit": Row("POST", "L A N N F F F N", own_token),
    "annotation:skip": Row("POST", "L A N N F F F N", own_token, lambda w: {"reason": "other"}),
    "annotation:my_work": Row("GET", "L A A N F F F N", rating),
    "annotation:my_work_edit": Row("POST", "L A N N F F F N", own_token),
    # the arena: members only, battles of their owner only (a vote or a next message before both answers
    # are complete is refused with a redirect back to the battle)
    "arena:project": Row("GET", "L A A N F F F N", arena),
    "arena:battle": Row("GET", "L A N N F F F N", own_battle),
    "arena:stream": Row("GET", "L A N N F F F N", own_battle),
    "arena:vote": Row("POST", "L A N N F F F N", own_battle, lambda w: {"vote": "A"}),
    "arena:continue": Row("POST", "L A N N F F F N", own_battle, lambda w: {"text": "Lagi"}),
    "arena:manage_create": Row("GET", MANAGE),
    "arena:manage_detail": Row("GET", "L F F F A A A A", arena),
    "arena:battle_exclude": Row(
        "POST", "L F F F A A F A", lambda w: {"battle_id": w.extra["battle"].pk}, lambda w: {"reason": "spam"}
    ),
    "arena:manage_battles_csv": Row("GET", DATA, arena),
    # project management
    "annotation:manage_list": Row("GET", MANAGE),
    "annotation:manage_create": Row("GET", MANAGE),
    "annotation:manage_mqm_import": Row("GET", MANAGE),
    "annotation:study_import": Row("GET", MANAGE),
    "annotation:study_import_preview": Row("GET", MANAGE, lambda w: {"token": pending_study_token()}),
    "annotation:study_import_detail": Row("GET", MANAGE, study_import),
    "annotation:study_import_cancel": Row("POST", MANAGE, study_import),
    "annotation:study_import_retry": Row("POST", MANAGE, study_import),
    "annotation:rubric_list": Row("GET", MANAGE),
    "annotation:rubric_create": Row("GET", MANAGE),
    "annotation:rubric_edit": Row("GET", MANAGE, lambda w: {"criterion": "relevance"}),
    "annotation:manage_detail": Row("GET", MANAGE, rating),
    "annotation:manage_status": Row("POST", MANAGE, rating, lambda w: {"action": "pause"}),
    "annotation:manage_group_add": Row("POST", MANAGE, rating, lambda w: {"name": "G9"}),
    "annotation:manage_member_add": Row("POST", MANAGE, rating),
    "annotation:manage_member_remove": Row(
        "POST", MANAGE, rating, lambda w: {"user": w.users["annotator_peer"].pk}
    ),
    "annotation:manage_reclaim": Row("POST", MANAGE, rating),
    "annotation:manage_quality_settings": Row("POST", MANAGE, rating),
    "annotation:manage_quality_csv": Row("GET", MANAGE, rating),
    "annotation:manage_qualification": Row("POST", MANAGE, rating),
    "annotation:manage_gold_import": Row("POST", MANAGE, rating),
    "annotation:manage_gold_rate": Row("POST", MANAGE, rating, lambda w: {"gold_rate": "0.1"}),
    "annotation:manage_gold_tasks": Row("GET", MANAGE, rating),
    "annotation:manage_gold_task": Row(
        "GET", MANAGE, lambda w: {"project_id": w.rating.pk, "task_id": w.rating.tasks.first().pk}
    ),
    "annotation:manage_flags_recompute": Row("POST", MANAGE, translation),
    "annotation:manage_flags_progress": Row("GET", MANAGE, translation),
    "annotation:manage_flags_cancel": Row(
        "POST", MANAGE, lambda w: {**translation(w), "run_id": w.flag_recompute.pk}
    ),
    "annotation:manage_flags_retry": Row(
        "POST", MANAGE, lambda w: {**translation(w), "run_id": w.flag_recompute.pk}
    ),
    "annotation:manage_flag_settings": Row("POST", MANAGE, translation),
    "annotation:manage_span_scores": Row("GET", MANAGE, spans),
    "annotation:manage_span_settings": Row("POST", MANAGE, spans),
    "annotation:manage_attention_checks": Row("POST", MANAGE, spans),
    "evaluation:span-prefill": Row("GET", DATA, spans),
    "annotation:manage_pairs_upload": Row("POST", MANAGE, authoring),
    "annotation:manage_conflicts_csv": Row("GET", MANAGE, mcq),
    "annotation:manage_taxonomy_labels_csv": Row("GET", MANAGE, mcq),
    "annotation:manage_error_taxonomy": Row(
        "POST", MANAGE, mcq, lambda w: {"taxonomy": "typo | Typo | Salah ketik | question, options"}
    ),
    # review
    "annotation:review": Row("GET", REVIEW),
    "annotation:review_llm": Row("GET", REVIEW, mcq),
    "annotation:review_accept_many": Row("POST", REVIEW, data=lambda w: {"selected": [w.peer_assignment.pk]}),
    "annotation:review_submit": Row(
        "POST", REVIEW, lambda w: {"assignment_id": w.peer_assignment.pk}, lambda w: {"verdict": "accept"}
    ),
    # evaluation runs and analytics
    "evaluation:runs": Row("GET", DATA),
    "evaluation:endpoints": Row("GET", DATA),
    "evaluation:endpoint-create": Row("GET", DATA),
    "evaluation:endpoint-edit": Row("GET", DATA, lambda w: {"endpoint_id": w.endpoint.pk}),
    "evaluation:run-start": Row("GET", DATA),
    "evaluation:aspects": Row("GET", DATA),
    "evaluation:aspect-edit": Row("GET", DATA, lambda w: {"category": "coding"}),
    "evaluation:run": Row("GET", DATA, lambda w: {"kind": "judge", "run_id": w.judge_run.pk}),
    "evaluation:run-cancel": Row(
        "POST", DATA, lambda w: {"kind": "generation", "run_id": w.generation_run.pk}
    ),
    "evaluation:run-retry": Row(
        "POST", DATA, lambda w: {"kind": "generation", "run_id": w.generation_run.pk}
    ),
    "evaluation:prompt-templates": Row("GET", DATA),
    "analytics:list": Row("GET", DATA),
    "analytics:project": Row("GET", DATA, rating),
    "analytics:judge-lab": Row("GET", DATA, rating),
    "analytics:retry": Row("POST", DATA, rating),
    "analytics:leaderboard": Row("GET", DATA, arena),
    "analytics:cancel": Row("POST", DATA, rating),
    "analytics:csv": Row(
        "GET",
        DATA,
        lambda w: {"project_id": w.rating.pk, "section": "alpha", "table": "alpha"},
    ),
}

API: dict[str, Row] = {
    # every signed-in user rotates their own API token
    "api-token-rotate": Row("POST", "U A A A A A A A"),
    "api-token-revoke": Row("POST", "U A A A A A A A"),
    # datasets, imports, exports
    "api-dataset-list": Row("GET", DATA_API),
    "api-dataset-import": Row("POST", DATA_API),
    "api-import-mapping-list": Row("GET", DATA_API),
    "api-dataset-import-detail": Row("GET", DATA_API, lambda w: {"import_id": w.dataset_import.pk}),
    "api-dataset-import-cancel": Row("POST", DATA_API, lambda w: {"import_id": w.dataset_import.pk}),
    "api-job-detail": Row("GET", DATA_API, lambda w: {"job": "export", "job_id": w.export.pk}),
    "api-job-cancel": Row("POST", DATA_API, lambda w: {"job": "export", "job_id": w.export.pk}),
    "api-job-retry": Row("POST", DATA_API, lambda w: {"job": "export", "job_id": w.export.pk}),
    "api-export-cancel": Row("POST", DATA_API, lambda w: {"export_id": w.export.pk}),
    "api-export-retry": Row("POST", DATA_API, lambda w: {"export_id": w.export.pk}),
    "api-export-list": Row("GET", DATA_API),
    "api-export-preview": Row("POST", DATA_API, data=lambda w: {"project": w.rating.pk}),
    "api-export-create": Row("POST", DATA_API),
    "api-export-detail": Row("GET", DATA_API, lambda w: {"export_id": w.export.pk}),
    "api-export-download": Row("GET", DATA_API, lambda w: {"export_id": w.export.pk}),
    # projects
    "api-project-list": Row("GET", "U A A A F A F A"),  # annotators: their own projects
    "api-project-create": Row("POST", MANAGE_API),
    "api-study-import": Row("POST", MANAGE_API),
    "api-study-import-detail": Row("GET", MANAGE_API, study_import),
    "api-study-import-cancel": Row("POST", MANAGE_API, study_import),
    "api-study-import-retry": Row("POST", MANAGE_API, study_import),
    "api-project-detail": Row("GET", MANAGE_API, rating),
    "api-project-update": Row("PATCH", MANAGE_API, rating, lambda w: {"name": "renamed"}),
    "api-project-delete": Row("DELETE", MANAGE_API, rating),
    "api-project-status": Row("POST", MANAGE_API, rating, lambda w: {"action": "pause"}),
    "api-project-progress": Row("GET", MANAGE_API, rating),
    "api-project-quality": Row("GET", MANAGE_API, rating),
    "api-member-list": Row("GET", MANAGE_API, rating),
    "api-member-add": Row("POST", MANAGE_API, rating),
    "api-member-remove": Row("POST", MANAGE_API, rating),
    "api-concept-pairs-add": Row("POST", MANAGE_API, authoring),
    "api-mqm-import": Row("POST", MANAGE_API),
    "api-mcq-report": Row("GET", MANAGE_API, mcq),
    "api-translation-report": Row("GET", MANAGE_API, translation),
    "api-span-scores": Row("GET", MANAGE_API, spans),
    "api-attention-checks": Row("POST", MANAGE_API, spans),
    "api-span-prefill": Row("GET", DATA_API, spans),
    "api-flag-recompute-start": Row("POST", MANAGE_API, translation),
    "api-flag-recompute-detail": Row("GET", MANAGE_API, lambda w: {"run_id": w.flag_recompute.pk}),
    "api-flag-recompute-cancel": Row("POST", MANAGE_API, lambda w: {"run_id": w.flag_recompute.pk}),
    "api-flag-recompute-retry": Row("POST", MANAGE_API, lambda w: {"run_id": w.flag_recompute.pk}),
    "api-project-rubric": Row("GET", MANAGE_API, rating),
    "api-review-queue": Row("GET", REVIEW.replace("L", "U")),
    "api-review-create": Row("POST", REVIEW.replace("L", "U")),
    # the annotator loop over the API
    "api-next-task": Row("GET", "U A A N F F F N", rating),
    "api-annotation-create": Row("POST", "U A N N F F F N", own_token, likert_answer),
    "api-task-skip": Row("POST", "U A N N F F F N", own_token, lambda w: {"reason": "other"}),
    # the arena over the API
    "api-arena-battle-start": Row("POST", "U A A N F F F N", arena),
    "api-arena-battle-detail": Row("GET", "U A N N F F F N", own_battle),
    "api-arena-battle-continue": Row("POST", "U A N N F F F N", own_battle),
    "api-arena-battle-vote": Row("POST", "U A N N F F F N", own_battle),
    "api-arena-battle-rows": Row("GET", DATA_API, arena),
    # evaluation
    "api-endpoint-list": Row("GET", DATA_API),
    "api-endpoint-create": Row("POST", DATA_API),
    "api-endpoint-detail": Row("GET", DATA_API, lambda w: {"endpoint_id": w.endpoint.pk}),
    "api-endpoint-update": Row(
        "PATCH", DATA_API, lambda w: {"endpoint_id": w.endpoint.pk}, lambda w: {"max_concurrency": 2}
    ),
    "api-generation-run-list": Row("GET", DATA_API),
    "api-generation-run-start": Row("POST", DATA_API),
    "api-judge-run-list": Row("GET", DATA_API),
    "api-judge-run-start": Row("POST", DATA_API),
    "api-benchmark-run-list": Row("GET", DATA_API),
    "api-benchmark-run-start": Row("POST", DATA_API),
    "api-run-detail": Row("GET", DATA_API, lambda w: {"kind": "benchmark", "run_id": w.benchmark_run.pk}),
    "api-run-cancel": Row("POST", DATA_API, lambda w: {"kind": "generation", "run_id": w.generation_run.pk}),
    "api-run-retry": Row("POST", DATA_API, lambda w: {"kind": "generation", "run_id": w.generation_run.pk}),
    "api-judgment-list": Row("GET", DATA_API, lambda w: {"run_id": w.judge_run.pk}),
    "api-judgment-csv": Row("GET", DATA_API, lambda w: {"run_id": w.judge_run.pk}),
    "api-verdict-list": Row("GET", DATA_API, lambda w: {"run_id": w.judge_run.pk}),
    "api-verdict-csv": Row("GET", DATA_API, lambda w: {"run_id": w.judge_run.pk}),
    "api-benchmark-result-list": Row("GET", DATA_API, lambda w: {"run_id": w.benchmark_run.pk}),
    "api-benchmark-result-csv": Row("GET", DATA_API, lambda w: {"run_id": w.benchmark_run.pk}),
    # agreement analytics
    "api-agreement": Row("GET", DATA_API, rating),
    "api-judge-lab": Row("GET", DATA_API, rating),
    "api-arena-leaderboard": Row("GET", DATA_API, arena),
    "api-agreement-cancel": Row("POST", DATA_API, rating),
    "api-agreement-retry": Row("POST", DATA_API, rating),
    "api-agreement-section": Row("GET", DATA_API, lambda w: {"project_id": w.rating.pk, "section": "alpha"}),
    "api-agreement-csv": Row("GET", DATA_API, lambda w: {"project_id": w.rating.pk, "section": "alpha"}),
    # webhooks
    "api-webhook-list": Row("GET", MANAGE_API),
    "api-webhook-create": Row("POST", MANAGE_API),
    "api-webhook-detail": Row("GET", MANAGE_API, lambda w: {"hook_id": w.extra["webhook"].pk}),
    "api-webhook-update": Row(
        "PATCH", MANAGE_API, lambda w: {"hook_id": w.extra["webhook"].pk}, lambda w: {"description": "x"}
    ),
    "api-webhook-delete": Row("DELETE", MANAGE_API, lambda w: {"hook_id": w.extra["webhook"].pk}),
    "api-webhook-rotate": Row("POST", MANAGE_API, lambda w: {"hook_id": w.extra["webhook"].pk}),
    "api-webhook-deliveries": Row("GET", MANAGE_API, lambda w: {"hook_id": w.extra["webhook"].pk}),
    "api-webhook-redeliver": Row("POST", MANAGE_API, lambda w: {"delivery_id": w.extra["delivery"].pk}),
}


def url_pattern_names() -> set[str]:
    """Every routable pattern's (namespaced) name, or its route where it has none; admin excluded."""
    found: set[str] = set()

    def walk(patterns, namespace: str, route: str) -> None:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                if pattern.app_name == "admin":
                    continue
                inner = ":".join(filter(None, [namespace, pattern.namespace]))
                walk(pattern.url_patterns, inner, route + str(pattern.pattern))
            elif isinstance(pattern, URLPattern):
                if pattern.name:
                    found.add(f"{namespace}:{pattern.name}" if namespace else pattern.name)
                else:
                    found.add(route + str(pattern.pattern))

    walk(get_resolver().url_patterns, "", "")
    return found


def test_every_url_pattern_is_classified():
    patterns = url_pattern_names() - SEPARATE
    tabled = set(PAGES) | set(API)
    assert not set(PAGES) & set(API)
    assert patterns - tabled == set(), "new URL patterns: add a row to PAGES or API"
    assert tabled - patterns == set(), "rows for URL patterns that no longer exist"
    for row in [*PAGES.values(), *API.values()]:
        assert len(row.cells.split()) == len(ROLES)


def _login_redirect(response) -> bool:
    return response.status_code == 302 and response["Location"].startswith(reverse("login"))


def outcome_matches(cell: str, response) -> bool:
    code = response.status_code
    if cell == "A":
        return code < 500 and code not in (401, 403, 404, 405) and not _login_redirect(response)
    if cell == "P":
        return code < 400
    if cell == "L":
        return _login_redirect(response)
    if cell == "U":
        return code in (401, 403)
    return code == {"F": 403, "N": 404}[cell]


def _send(client, row: Row, url: str, data: dict[str, Any], *, as_json: bool):
    method = row.method.lower()
    if method == "get":
        return client.get(url)
    if as_json:
        return getattr(client, method)(url, json.dumps(data), content_type="application/json")
    return getattr(client, method)(url, data)


def _request(client, row: Row, url: str, data: dict[str, Any], *, as_json: bool):
    """One request inside a savepoint that is rolled back afterwards."""
    with transaction.atomic():
        try:
            response = _send(client, row, url, data, as_json=as_json)
        finally:
            transaction.set_rollback(True)
    with connection_kept_open():
        response.close()
    return response


def _clients(world: World, role: str, *, api: bool) -> list[tuple[str, Any]]:
    if role == "anonymous":
        return [("anonymous", Client())]
    session = Client()
    session.force_login(world.users[role])
    if not api:
        return [("session", session)]
    token = APIClient()
    token.credentials(HTTP_AUTHORIZATION=f"Token {world.tokens[role]}")
    return [("session", session), ("token", token)]


def _forbidden_strings(world: World) -> list[str]:
    """What must never reach an annotator: model names and dataset names."""
    return [*world.extra["model_names"], world.dataset.name, world.rating.dataset.name]


def check_table(world: World, table: dict[str, Row], *, api: bool) -> list[str]:
    mismatches = []
    forbidden = _forbidden_strings(world)
    for name, row in sorted(table.items()):
        url = reverse(name, kwargs=row.kwargs(world))
        data = row.data(world)
        for role, cell in zip(ROLES, row.cells.split(), strict=True):
            for auth, client in _clients(world, role, api=api):
                response = _request(client, row, url, data, as_json=api)
                if not outcome_matches(cell, response):
                    where = response.get("Location", "")
                    mismatches.append(
                        f"{name} {row.method} as {role} ({auth}): expected {cell}, got "
                        f"{response.status_code} {where}".rstrip()
                    )
                if role.startswith("annotator") and not getattr(response, "streaming", False):
                    text = response.content.decode(errors="replace")
                    leaked = [s for s in forbidden if s in text]
                    if leaked:
                        mismatches.append(f"{name} as {role} shows {leaked}")
    return mismatches


def test_pages_by_role(world):
    mismatches = check_table(world, PAGES, api=False)
    assert not mismatches, "\n".join(mismatches)


def test_api_by_role_with_session_and_token_auth(world):
    mismatches = check_table(world, API, api=True)
    assert not mismatches, "\n".join(mismatches)


def test_another_annotators_token_is_not_found_anywhere(world):
    """The peer's own token works for the peer and is 404 for the owner, on every token address."""
    peer_token = world.peer_assignment.token
    owner = Client()
    owner.force_login(world.users["annotator"])
    api = APIClient()
    api.force_authenticate(world.users["annotator"])
    assert owner.get(reverse("annotation:task", args=[peer_token])).status_code == 404
    assert owner.post(reverse("annotation:submit", args=[peer_token]), {}).status_code == 404
    assert owner.post(reverse("annotation:skip", args=[peer_token]), {}).status_code == 404
    answer = likert_answer(world)
    assert api.post(f"/api/v1/tasks/{peer_token}/annotations", answer, format="json").status_code == 404
    assert api.post(f"/api/v1/tasks/{peer_token}/skip", {"reason": "x"}, format="json").status_code == 404
    # A token that exists nowhere answers the same as someone else's: nothing tells them apart.
    assert owner.get(reverse("annotation:task", args=["no-such-token"])).status_code == 404
    peer = Client()
    peer.force_login(world.users["annotator_peer"])
    assert peer.get(reverse("annotation:task", args=[peer_token])).status_code == 200


def test_admin_site_is_staff_only(world):
    anonymous = Client().get("/admin/")
    assert anonymous.status_code == 302 and "/admin/login/" in anonymous["Location"]
    for role in ("annotator", "reviewer", "project_manager", "researcher"):
        client = Client()
        client.force_login(world.users[role])
        response = client.get("/admin/")
        assert response.status_code == 302 and "/admin/login/" in response["Location"], role
    admin = Client()
    admin.force_login(world.users["admin"])
    assert admin.get("/admin/").status_code == 200


def test_schema_and_language_switch_are_public(world):
    """The schema describes operations, never data: no model, dataset or user name is in it."""
    for url in ("/api/schema/", "/api/docs/", "/api/redoc/"):
        response = Client().get(url)
        assert response.status_code == 200, url
        text = response.content.decode()
        for secret in [*_forbidden_strings(world), world.users["annotator"].get_username()]:
            assert secret not in text, (url, secret)
    switched = Client().post(reverse("set_language"), {"language": "id", "next": "/"})
    assert switched.status_code == 302
