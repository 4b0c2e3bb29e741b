"""Judge results by language on the dashboard: accuracy by language and by language with register beside
the category breakdown, the table with languages as columns and Avg over them, and SeaBench's table of
single-answer grades per model and language; in the report JSON (API) and on the page in both languages."""

from __future__ import annotations

import re

import pytest

from analytics import services
from datasets_app.models import Prompt
from evaluation.models import JudgeRun, JudgeTemplate, Judgment, ModelEndpoint, PairVerdict

from .conftest import work_through

pytestmark = pytest.mark.django_db

# Per response model, its grades on prompts 0, 1, 2 (None: the judge's output did not parse).
GRADES = {"zeta-secret-7b": (8, 6, 10), "omega-hidden-13b": (3, 5, None)}


@pytest.fixture
def judged(make_project):
    """Three pairwise tasks, every annotator voting A; prompts 0 and 1 in Indonesian, prompt 2 in Javanese
    Krama. A pairwise judge says A, B, A (right, wrong, right); a single-answer judge grades every response."""
    project = make_project(kind="pairwise", n_prompts=3, n_models=2, per_group=3, overlap=3)
    tasks = list(project.tasks.order_by("prompt__external_id"))
    Prompt.objects.filter(pk=tasks[2].prompt_id).update(language="jav", register="krama")
    for user in project.annotators:
        work_through(project, user, lambda a: {"vote": "A"})
    endpoint = ModelEndpoint.objects.create(slug="judge-x", model_id="judge-x")

    def template(kind):
        return JudgeTemplate.objects.get_or_create(
            kind=kind, language="en", version=97, defaults={"user": "x"}
        )[0]

    run = JudgeRun.objects.create(
        judge_kind="pairwise", endpoint=endpoint, template=template("pairwise"), annotation_project=project
    )
    for task, verdict in zip(tasks, ("A", "B", "A"), strict=True):
        PairVerdict.objects.create(
            judge_run=run,
            target_key=f"task:{task.pk}",
            prompt=task.prompt,
            response_a=task.response_a,
            response_b=task.response_b,
            annotation_task_id=task.pk,
            verdict=verdict,
            consistency="consistent",
        )
    graded = JudgeRun.objects.create(
        judge_kind="single_grade",
        endpoint=endpoint,
        template=template("single_grade"),
        dataset=project.dataset,
    )
    for index, task in enumerate(tasks):
        for response in (task.response_a, task.response_b):
            grade = GRADES[response.model_name][index]
            Judgment.objects.create(
                judge_run=graded,
                target_key=f"resp:{response.pk}:t0",
                prompt=task.prompt,
                response_a=response,
                turn=0,
                order="single",
                template_kind="single_grade",
                template_version=1,
                parse_status="ok" if grade is not None else "error",
                score=grade,
            )
    project.pairwise_run, project.graded_run = run, graded
    return project


def test_judge_accuracy_by_language_with_the_macro_avg(judged):
    report = services.compute_report(project=judged, level="ordinal", draws=0, bt_draws=0)
    tables = report["sections"]["judges"]["tables"]
    name = f"judge-x (run {judged.pairwise_run.pk})"
    by_language = {(r["judge"], r["language"]): r for r in tables["by_language"]}
    assert by_language[(name, "ind")]["accuracy"] == pytest.approx(1 / 2)
    assert by_language[(name, "jav")]["accuracy"] == 1.0
    registers = {r["language_register"] for r in tables["by_language_register"] if r["judge"] == name}
    assert registers == {"ind", "jav / krama"}
    assert {r["category"] for r in tables["by_category"]} == {"analysis", "math"}  # kept beside
    wide = {r["judge"]: r for r in tables["accuracy_by_language"]}
    # Pairwise judge: ind 1 of 2, jav 1 of 1 -> Avg (1/2 + 1)/2 = 0.75; over the items 2 of 3.
    assert (wide[name]["ind"], wide[name]["jav"]) == (0.5, 1.0)
    assert wide[name]["avg"] == pytest.approx(0.75) and wide[name]["overall"] == pytest.approx(2 / 3)


def test_seabench_grades_per_model_and_language(judged):
    report = services.compute_report(project=judged, level="ordinal", draws=0, bt_draws=0)
    rows = {r["model"]: r for r in report["sections"]["judges"]["tables"]["grades_by_language"]}
    judge = f"judge-x (run {judged.graded_run.pk})"
    zeta, omega = rows["zeta-secret-7b"], rows["omega-hidden-13b"]
    assert zeta["judge"] == judge
    # zeta: ind (8 + 6)/2 = 7, jav 10 -> Avg 8.5; over its grades (8 + 6 + 10)/3 = 8.
    assert (zeta["ind"], zeta["jav"], zeta["avg"], zeta["overall"], zeta["n"]) == (7.0, 10.0, 8.5, 8.0, 3)
    # omega: ind (3 + 5)/2 = 4; its only Javanese grade did not parse: no value there, so no Avg.
    assert (omega["ind"], omega["jav"], omega["avg"], omega["overall"]) == (4.0, None, None, 4.0)


@pytest.mark.parametrize(
    ("lang", "names", "avg"),
    [
        ("en", ("Indonesian", "Javanese"), "Avg (mean over languages)"),
        ("id", ("Bahasa Indonesia", "Bahasa Jawa"), "Rata-rata (rerata atas bahasa)"),
    ],
)
def test_the_dashboard_shows_languages_as_columns_in_the_page_language(role_client, judged, lang, names, avg):
    client = role_client("project_manager")
    html = client.get(f"/analytics/projects/{judged.pk}/", HTTP_ACCEPT_LANGUAGE=lang).content.decode()
    for table in ("judges-accuracy_by_language", "judges-grades_by_language"):
        part = html[html.index(f'data-table="{table}"') :]
        part = part[: part.index("</table>")]
        headings = re.findall(r"<th>([^<]*)</th>", part)
        assert names[0] in headings and names[1] in headings and avg in headings
        assert "ind" not in headings and "avg" not in headings
    part = html[html.index('data-table="judges-by_language_register"') :]
    part = part[: part.index("</table>")]
    assert f"<td>{names[1]} / Krama</td>" in part
    csv_text = client.get(f"/analytics/projects/{judged.pk}/judges/accuracy_by_language.csv").content.decode()
    assert csv_text.splitlines()[0].split(",")[:5] == ["judge", "ind", "jav", "avg", "overall"]


def test_the_api_carries_the_language_tables(api_client_for, judged):
    body = api_client_for("researcher").get(f"/api/v1/projects/{judged.pk}/agreement").json()
    tables = body["sections"]["judges"]["tables"]
    assert {
        "by_category",
        "by_language",
        "by_language_register",
        "accuracy_by_language",
        "grades_by_language",
    } <= set(tables)
    assert {r["language"] for r in tables["by_language"]} == {"ind", "jav"}  # codes, not names
