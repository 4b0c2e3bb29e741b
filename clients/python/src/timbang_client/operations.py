"""Every API operation the client calls: its method, its path under the site, the body fields and query
parameters it may send. The client sends nothing that is not listed here, and the repository's tests check
this list against the server's OpenAPI schema, so the two cannot drift apart unnoticed."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Operation:
    method: str
    path: str  # with {name} placeholders, as in the OpenAPI schema
    body: frozenset[str] = frozenset()
    query: frozenset[str] = frozenset()
    # "json", "multipart" or "" (no body)
    content: str = ""

    def url(self, **path_params: object) -> str:
        return self.path.format(**{k: str(v) for k, v in path_params.items()})


def _op(method: str, path: str, body: str = "", query: str = "", content: str = "") -> Operation:
    fields = frozenset(body.split())
    return Operation(
        method=method,
        path="/api/v1/" + path,
        body=fields,
        query=frozenset(query.split()),
        content=content or ("json" if fields else ""),
    )


PROJECT_FIELDS = (
    "allow_all_bad allow_edits best_pick criteria dataset description flag_settings gold_rate groups "
    "instructions_en instructions_id kind lease_minutes max_ambiguous name overlap pair_mode pairs_per_prompt "
    "seed turn_mode"
)
PROJECT_UPDATE_FIELDS = (
    "allow_all_bad allow_edits best_pick description flag_settings gold_rate instructions_en instructions_id "
    "lease_minutes max_ambiguous name overlap"
)
EXPORT_FIELDS = (
    "categories format languages license max_ambiguous min_agreement min_annotators min_margin ordering "
    "pretty_name private project provenance push_to_hub registers reliability_weights seed split strategy "
    "turn weights"
)
IMPORT_FIELDS = (
    "background description file format hub_config hub_dataset hub_revision hub_split kind license mapping "
    "mapping_from_import mapping_name name replace save_mapping_as"
)

OPERATIONS: dict[str, Operation] = {
    # datasets
    "datasets.list": _op("GET", "datasets/", query="page"),
    "datasets.upload": _op("POST", "datasets/import", IMPORT_FIELDS, content="multipart"),
    "datasets.import_status": _op("GET", "datasets/imports/{import_id}"),
    "datasets.import_cancel": _op("POST", "datasets/imports/{import_id}/cancel"),
    # projects
    "projects.list": _op("GET", "projects/", query="page"),
    "projects.create": _op("POST", "projects/create", PROJECT_FIELDS),
    "projects.get": _op("GET", "projects/{project_id}"),
    "projects.update": _op("PATCH", "projects/{project_id}/update", PROJECT_UPDATE_FIELDS),
    "projects.delete": _op("DELETE", "projects/{project_id}/delete"),
    "projects.status": _op("POST", "projects/{project_id}/status", "action"),
    "projects.progress": _op("GET", "projects/{project_id}/progress"),
    "projects.members": _op("GET", "projects/{project_id}/members", query="page"),
    "projects.member_add": _op("POST", "projects/{project_id}/members/add", "user group"),
    "projects.member_remove": _op("POST", "projects/{project_id}/members/remove", "user"),
    "projects.rubric": _op("GET", "projects/{project_id}/rubric", query="category"),
    # the annotation loop
    "annotation.next": _op("GET", "projects/{project_id}/next"),
    "annotation.submit": _op("POST", "tasks/{token}/annotations", "answer seconds", query="next"),
    "annotation.skip": _op("POST", "tasks/{token}/skip", "reason"),
    # review
    "reviews.queue": _op("GET", "reviews/", query="page project status"),
    "reviews.create": _op("POST", "reviews/create", "assignment verdict comment"),
    # model runs
    "runs.generation_start": _op(
        "POST", "evaluation/generation-runs/start", "dataset endpoints n_per_prompt name options"
    ),
    "runs.judge_start": _op(
        "POST",
        "evaluation/judge-runs/start",
        "annotation_project dataset endpoint judge_kind name options order_mode pairwise_family template",
    ),
    "runs.benchmark_start": _op(
        "POST", "evaluation/benchmark-runs/start", "dataset endpoint judge_endpoint mode name options task"
    ),
    "runs.get": _op("GET", "evaluation/{kind}-runs/{run_id}"),
    "runs.cancel": _op("POST", "evaluation/{kind}-runs/{run_id}/cancel"),
    "runs.retry": _op("POST", "evaluation/{kind}-runs/{run_id}/retry"),
    "runs.judgments": _op("GET", "evaluation/judge-runs/{run_id}/judgments", query="page"),
    "runs.verdicts": _op("GET", "evaluation/judge-runs/{run_id}/verdicts", query="page"),
    "runs.benchmark_results": _op("GET", "evaluation/benchmark-runs/{run_id}/results", query="page"),
    "endpoints.list": _op("GET", "evaluation/endpoints/", query="page"),
    "endpoints.create": _op(
        "POST",
        "evaluation/endpoints/create",
        "api_key_env backend backend_options base_url is_active max_concurrency model_id queue sampling_defaults slug",
    ),
    "endpoints.get": _op("GET", "evaluation/endpoints/{endpoint_id}"),
    # agreement
    "agreement.report": _op("GET", "projects/{project_id}/agreement", query="level"),
    "agreement.section": _op("GET", "projects/{project_id}/agreement/{section}", query="level"),
    "agreement.judge_lab": _op("GET", "projects/{project_id}/judge-lab", query="baseline ppi_share"),
    "agreement.span_scores": _op("GET", "projects/{project_id}/spans/scores", query="bootstrap seed"),
    # arena
    "arena.leaderboard": _op(
        "GET", "arena/projects/{project_id}/leaderboard", query="bootstrap seed style ties"
    ),
    # exports
    "exports.list": _op("GET", "exports/", query="page project"),
    "exports.create": _op("POST", "exports/create", EXPORT_FIELDS),
    "exports.get": _op("GET", "exports/{export_id}"),
    "exports.download": _op("GET", "exports/{export_id}/download"),
    "exports.cancel": _op("POST", "exports/{export_id}/cancel"),
    "exports.retry": _op("POST", "exports/{export_id}/retry"),
    # webhooks
    "webhooks.list": _op("GET", "webhooks/", query="page project"),
    "webhooks.create": _op("POST", "webhooks/create", "description events project url"),
    "webhooks.get": _op("GET", "webhooks/{hook_id}"),
    "webhooks.update": _op("PATCH", "webhooks/{hook_id}/update", "active description events url"),
    "webhooks.delete": _op("DELETE", "webhooks/{hook_id}/delete"),
    "webhooks.rotate_secret": _op("POST", "webhooks/{hook_id}/rotate-secret"),
    "webhooks.deliveries": _op("GET", "webhooks/{hook_id}/deliveries", query="page"),
    "webhooks.redeliver": _op("POST", "webhooks/deliveries/{delivery_id}/redeliver"),
}
