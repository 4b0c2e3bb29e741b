"""The judge lab on PandaLM's pairs in headless Chromium: the first 60 pairs loaded as a pairwise project
(prompts, both models' responses, the three annotators' votes through the annotation services) with
gpt-3.5-turbo's verdicts as a judge run; the page's agreement equals a plain count, and its charts draw."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.cache import cache

from datasets_app.models import Dataset, Prompt, Response
from evaluation.models import JudgeRun, JudgeTemplate, Judgment, ModelEndpoint
from tests.analytics.conftest import work_through
from tests.annotation import conftest as annotation_fixtures

PANDALM = Path(__file__).resolve().parents[2] / ".." / "shared" / "reference-data" / "pandalm-testset"
N_PAIRS = 60
LABELS = {0: "tie", 1: "first", 2: "second"}

pytestmark = [pytest.mark.browser, pytest.mark.reference, pytest.mark.django_db(transaction=True)]
make_project = annotation_fixtures.make_project


@pytest.fixture(autouse=True)
def _clean_cache():
    cache.clear()


@pytest.fixture
def pandalm_project(make_project):
    if not PANDALM.is_dir():
        pytest.skip(f"reference data not found at {PANDALM}")
    pairs = json.loads((PANDALM / "testset-v1.json").read_text(encoding="utf-8"))[:N_PAIRS]
    judged = {
        r["idx"]: r["gpt_result"] for r in json.loads((PANDALM / "gpt-3.5-turbo-testset-v1.json").read_text())
    }
    dataset = Dataset.objects.create(name="pandalm-60")
    first_response = {}
    for r in pairs:
        model_a, model_b = r["cmp_key"].split("_", 1)
        prompt = Prompt.objects.create(
            dataset=dataset,
            external_id=str(r["idx"]),
            category=r["motivation_app"],
            language="eng",
            turns=[f"{r['instruction']}\n\n{r['input']}".strip()],
        )
        one = Response.objects.create(prompt=prompt, model_name=model_a, turns=[str(r["response1"])])
        Response.objects.create(prompt=prompt, model_name=model_b, turns=[str(r["response2"])])
        first_response[prompt.pk] = one.pk
    project = make_project(kind="pairwise", dataset=dataset, per_group=3, overlap=3)
    by_prompt = {str(r["idx"]): r for r in pairs}

    def vote(assignment, k):
        row = by_prompt[assignment.task.prompt.external_id]
        label = LABELS[row[f"annotator{k + 1}"]]
        if label == "tie":
            return {"vote": "tie"}
        first_is_a = assignment.task.response_a_id == first_response[assignment.task.prompt_id]
        return {"vote": "A" if (label == "first") == first_is_a else "B"}

    for k, user in enumerate(project.annotators):
        work_through(project, user, lambda a, k=k: vote(a, k))
    judge = ModelEndpoint.objects.create(slug="gpt-3.5-turbo", model_id="gpt-3.5-turbo")
    template = JudgeTemplate.objects.get_or_create(
        kind="pairwise", language="en", version=99, defaults={"user": "x"}
    )[0]
    run = JudgeRun.objects.create(
        judge_kind="pairwise",
        endpoint=judge,
        template=template,
        annotation_project=project,
        status="succeeded",
    )
    expected = {"right": 0, "n": 0}
    for task in project.tasks.select_related("prompt"):
        row = by_prompt[task.prompt.external_id]
        first, second = task.response_a, task.response_b
        if first.pk != first_response[task.prompt_id]:
            first, second = second, first
        result = str(judged[row["idx"]]).strip()
        verdict = {"1": "A", "2": "B", "0": "tie"}.get(result)
        Judgment.objects.create(
            judge_run=run,
            target_key=f"task:{task.pk}",
            prompt=task.prompt,
            response_a=first,  # PandaLM showed response 1 first
            response_b=second,
            annotation_task_id=task.pk,
            order="ab",
            template_kind="pairwise",
            template_version=1,
            parse_status="ok" if verdict else "error",
            verdict=verdict or "",
        )
        votes = [LABELS[row[f"annotator{k}"]] for k in (1, 2, 3)]
        top = max(votes.count(v) for v in set(votes))
        majority = {v for v in votes if votes.count(v) == top}
        majority = majority.pop() if len(majority) == 1 else "tie"
        if majority != "tie" and verdict:
            expected["n"] += 1
            expected["right"] += {"A": "first", "B": "second", "tie": "tie"}[verdict] == majority
    project.expected = expected
    project.run = run
    return project


def test_the_lab_on_pandalm_pairs(page, login, pandalm_project):
    login(page, "researcher", username="peneliti")
    page.goto(f"/analytics/projects/{pandalm_project.pk}/judge-lab/")
    for chart in ("length_bias", "ppi"):
        page.get_by_test_id(f"chart-{chart}").locator("svg").first.wait_for()
    expected = pandalm_project.expected
    bias = page.locator("[data-table=lab-judges]").inner_text()
    assert f"{expected['right'] / expected['n']:.3f} [" in bias
    assert f"\t{expected['n']}\t" in bias
    assert "People (majority)" in bias  # people's length preference beside the judge's
    assert page.locator("[data-table=lab-ppi] tbody tr").count() >= 5  # model pairs of the first 60 rows
    assert page.locator("[data-table=lab-ppi-ratings]").count() == 1
    # Calibration needs sampled verdicts: the page says how to get them.
    assert "Verdicts per item" in page.locator("main").inner_text()
    page.click("[data-testid=lang-id]")
    page.wait_for_load_state()
    page.goto(f"/analytics/projects/{pandalm_project.pk}/judge-lab/")
    main = page.locator("main").inner_text()
    assert "Peringkat berbantuan prediksi" in main and "Putusan per butir" in main
