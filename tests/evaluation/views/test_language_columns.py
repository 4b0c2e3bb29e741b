"""The benchmark run page: the per-language table (languages as columns, Avg over languages), the
breakdowns by language and by language with register, and the comparison with other runs of the dataset."""

from __future__ import annotations

import re

import pytest

from datasets_app.models import Dataset
from evaluation.models import BenchmarkResult, BenchmarkRun, ModelEndpoint, RunStatus

pytestmark = pytest.mark.django_db


def _run(dataset, slug: str, results, *, task="mcq", status=RunStatus.SUCCEEDED, config=None) -> BenchmarkRun:
    endpoint = ModelEndpoint.objects.get_or_create(slug=slug, defaults={"model_id": slug})[0]
    run = BenchmarkRun.objects.create(
        task=task,
        endpoint=endpoint,
        dataset=dataset,
        status=status,
        config=config or {"scoring": "extract"},
        n_total=len(results),
        n_done=len(results),
    )
    for i, (language, register, correct, prediction, reference) in enumerate(results):
        BenchmarkResult.objects.create(
            benchmark_run=run,
            item_key=f"q:{i}",
            category="budaya",
            language=language,
            register=register,
            correct=correct,
            prediction=prediction,
            reference=reference,
        )
    return run


def _mcq(language, register, correct):
    return (language, register, correct, "A", "A" if correct else "B")


# alpha: ind 2 of 3, jav (krama) 1 of 1 -> Avg (2/3 + 1)/2 = 0.833, all items 3/4 = 0.750.
ALPHA = [_mcq("ind", "", True), _mcq("ind", "", True), _mcq("ind", "", False), _mcq("jav", "krama", True)]
# beta: ind 3 of 3, jav (ngoko) 0 of 1 -> Avg 0.500, all items 0.750.
BETA = [_mcq("ind", "", True), _mcq("ind", "", True), _mcq("ind", "", True), _mcq("jav", "ngoko", False)]


def _table(page: str, testid: str) -> str:
    return re.search(rf'data-testid="{testid}">(.*?)</table>', page, re.S).group(1)


def _cells(row_html: str) -> list[str]:
    return [
        re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<td[^>]*>(.*?)</td>", row_html, re.S)
    ]


@pytest.mark.parametrize(
    ("lang", "names"),
    [("en", ["Indonesian", "Javanese"]), ("id", ["Bahasa Indonesia", "Bahasa Jawa"])],
)
def test_the_run_page_shows_languages_as_columns_with_the_macro_avg(role_client, lang, names):
    dataset = Dataset.objects.create(name="mcq")
    run = _run(dataset, "alpha", ALPHA)
    page = (
        role_client("researcher")
        .get(f"/evaluation/runs/benchmark/{run.pk}/", HTTP_ACCEPT_LANGUAGE=lang)
        .content.decode()
    )
    table = _table(page, "by-language")
    assert re.findall(r'<abbr title="(\w+)">([^<]+)</abbr>', table) == list(
        zip(["ind", "jav"], names, strict=True)
    )
    rows = re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>")[1], re.S)
    expected = ["alpha", "0.667", "1.000", "0.833", "0.750", "4"]
    if lang == "id":  # Indonesian pages write a decimal comma
        expected = [cell.replace(".", ",") for cell in expected]
    assert _cells(rows[0]) == expected
    assert ("Rata-rata" if lang == "id" else "Avg") in table
    assert 'data-testid="comparison"' not in page  # no other run of the dataset

    breakdowns = dict(re.findall(r'data-testid="breakdown-(\w+)"><tbody>(.*?)</tbody>', page))
    language_register = re.findall(r"<tr><td>(.*?)</td>", breakdowns["language_register"])
    assert language_register == [names[0], f"{names[1]} / Krama"]
    assert re.findall(r"<tr><td>(.*?)</td>", breakdowns["language"]) == names


def test_runs_of_the_same_dataset_are_compared_by_language_best_avg_first(role_client):
    dataset = Dataset.objects.create(name="mcq")
    alpha = _run(dataset, "alpha", ALPHA)
    beta = _run(dataset, "beta", BETA)
    _run(dataset, "gamma", BETA, status=RunStatus.FAILED)  # not succeeded: left out
    _run(dataset, "delta", BETA, config={"scoring": "logprob"})  # scored otherwise: left out
    _run(Dataset.objects.create(name="other"), "epsilon", BETA)  # another dataset
    page = role_client("researcher").get(f"/evaluation/runs/benchmark/{beta.pk}/").content.decode()
    table = _table(page, "comparison")
    rows = [_cells(row) for row in re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>")[1], re.S)]
    # Both have 3 of 4 right; alpha's Avg over languages is higher.
    assert rows == [
        [f"alpha (run {alpha.pk})", "0.667", "1.000", "0.833", "0.750", "4"],
        [f"beta (run {beta.pk})", "1.000", "0.000", "0.500", "0.750", "4"],
    ]
    assert f'href="/evaluation/runs/benchmark/{alpha.pk}/"' in table


def test_the_api_carries_the_language_table_and_the_comparison(role_client):
    dataset = Dataset.objects.create(name="mcq")
    alpha = _run(dataset, "alpha", ALPHA)
    beta = _run(dataset, "beta", BETA)
    data = role_client("researcher").get(f"/api/v1/evaluation/benchmark-runs/{alpha.pk}").json()
    table = data["tables"]["by_language"]
    assert table["languages"] == ["ind", "jav"] and table["average"] == "macro over languages"
    row = table["rows"][0]
    assert row["model"] == "alpha" and row["avg"] == pytest.approx(5 / 6) and row["overall"] == 0.75
    assert data["tables"]["language_avg"] == pytest.approx(5 / 6)
    by = data["tables"]["by"]
    assert [r["language_register"] for r in by["language_register"]] == ["ind", "jav / krama"]
    assert "category" in by and "language" in by  # the existing breakdowns stay
    compared = data["comparison"]
    assert [(r["run"], r["model"]) for r in compared["rows"]] == [(alpha.pk, "alpha"), (beta.pk, "beta")]
    assert compared["rows"][1]["avg"] == pytest.approx(0.5)


def test_a_translation_run_page_shows_corpus_chrf_pp_per_language(role_client):
    dataset = Dataset.objects.create(name="mt")
    run = _run(
        dataset,
        "mt",
        [
            ("jav", "krama", None, "ab", "abc"),
            ("jav", "krama", None, "abc", "abc"),
            ("sun", "", None, "saya makan nasi", "saya makan nasi"),
        ],
        task="translation",
        config={"scoring": "chrf", "direction": "to_source"},
    )
    BenchmarkResult.objects.filter(benchmark_run=run).update(score=0.5)
    page = role_client("researcher").get(f"/evaluation/runs/benchmark/{run.pk}/").content.decode()
    row = re.findall(r"<tr>(.*?)</tr>", _table(page, "by-language").split("<tbody>")[1], re.S)[0]
    # jav: the corpus chrF++ of its two sentences, 100 * 1085/1592 = 68.15; sun 100; Avg 84.08.
    cells = _cells(row)
    assert cells[:4] == ["mt", "68.15", "100.00", "84.08"]


def test_a_graded_judge_run_page_shows_the_mean_grade_per_model_and_language(role_client):
    from evaluation.models import JudgeRun, JudgeTemplate, Judgment
    from tests.evaluation.services.builders import make_pair_dataset

    dataset = make_pair_dataset(n_prompts=3)
    dataset.prompts.filter(external_id="q2").update(language="sun")
    endpoint = ModelEndpoint.objects.create(slug="grader", model_id="grader")
    template = JudgeTemplate.objects.get_or_create(
        kind="single_grade", language="en", version=96, defaults={"user": "x"}
    )[0]
    run = JudgeRun.objects.create(
        judge_kind="single_grade", endpoint=endpoint, template=template, dataset=dataset, status="succeeded"
    )
    grades = {"q0": 9, "q1": 5, "q2": 10}  # alpha's; beta gets 2 everywhere
    for prompt in dataset.prompts.all():
        for response in prompt.responses.all():
            Judgment.objects.create(
                judge_run=run,
                target_key=f"resp:{response.pk}:t0",
                prompt=prompt,
                response_a=response,
                turn=0,
                order="single",
                template_kind="single_grade",
                template_version=1,
                parse_status="ok",
                score=grades[prompt.external_id] if response.model_name == "alpha" else 2,
            )
    page = role_client("researcher").get(f"/evaluation/runs/judge/{run.pk}/").content.decode()
    table = _table(page, "by-language")
    assert re.findall(r'<abbr title="(\w+)">([^<]+)</abbr>', table) == [
        ("ind", "Indonesian"),
        ("sun", "Sundanese"),
    ]
    rows = [_cells(row) for row in re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>")[1], re.S)]
    # alpha: ind (9 + 5)/2 = 7, sun 10 -> Avg 8.5; all three grades 8.
    assert rows == [
        ["alpha", "7.00", "10.00", "8.50", "8.00", "3"],
        ["beta", "2.00", "2.00", "2.00", "2.00", "3"],
    ]
