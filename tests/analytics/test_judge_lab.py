"""The judge lab over a project's database rows: the frames its service builds from human votes and a
pairwise judge run that sampled three verdicts per item in both orders, the figures (derived by hand
below), the page in English and Indonesian, and the JSON API."""

from __future__ import annotations

import pytest

from analytics import services
from datasets_app.models import Dataset, Prompt, Response
from evaluation.models import JudgeRun, JudgeTemplate, Judgment, ModelEndpoint
from tests.analytics.conftest import work_through

pytestmark = pytest.mark.django_db

# Per prompt: the three annotators' preferred model (or tie), and the judge's pick in each of its three
# samples (the same pick in both orders). Human majorities: p0 alpha, p1 alpha, p2 beta, p3 beta, p4 alpha,
# p5 a three-way split (tie). The judge is right on p0, p1, p3, p4 and wrong on p2: 4 of 5.
PEOPLE = {
    0: ("alpha", "alpha", "alpha"),
    1: ("alpha", "alpha", "beta"),
    2: ("beta", "beta", "beta"),
    3: ("beta", "beta", "alpha"),
    4: ("alpha", "tie", "alpha"),
    5: ("beta", "alpha", "tie"),
}
JUDGE = {
    0: ("alpha", "alpha", "alpha"),
    1: ("alpha", "alpha", "alpha"),
    2: ("alpha", "alpha", "alpha"),
    3: ("beta", "beta", "beta"),
    4: ("alpha", "alpha", "beta"),
    5: ("alpha", "alpha", "alpha"),
}


def lab_dataset() -> Dataset:
    dataset = Dataset.objects.create(name="lab-data")
    for i in range(6):
        prompt = Prompt.objects.create(
            dataset=dataset,
            external_id=f"p{i}",
            category="math" if i % 2 else "analysis",
            language="jav" if i < 3 else "ind",
            register="krama" if i < 3 else "",
            turns=[f"Pitakon {i}"],
        )
        # alpha answers at length, beta briefly.
        Response.objects.create(prompt=prompt, model_name="alpha", turns=["a" * 40])
        Response.objects.create(prompt=prompt, model_name="beta", turns=["b" * 10])
    return dataset


@pytest.fixture
def lab_project(make_project):
    project = make_project(kind="pairwise", dataset=lab_dataset(), per_group=3, overlap=3)
    index = {task.pk: int(task.prompt.external_id[1:]) for task in project.tasks.select_related("prompt")}

    def vote(assignment, c):
        wanted = PEOPLE[index[assignment.task_id]][c]
        if wanted == "tie":
            return {"vote": "tie"}
        return {"vote": "A" if assignment.task.response_a.model_name == wanted else "B"}

    for c, user in enumerate(project.annotators):
        work_through(project, user, lambda a, c=c: vote(a, c))
    ModelEndpoint.objects.create(slug="alpha", model_id="alpha", family="qwen")
    ModelEndpoint.objects.create(slug="beta", model_id="beta", family="llama")
    judge = ModelEndpoint.objects.create(slug="juri-x", model_id="juri-x", family="qwen")
    template = JudgeTemplate.objects.get_or_create(
        kind="pairwise", language="en", version=99, defaults={"user": "x"}
    )[0]
    run = JudgeRun.objects.create(
        judge_kind="pairwise",
        endpoint=judge,
        template=template,
        annotation_project=project,
        status="succeeded",
        config={"samples": 3},
    )
    for task in project.tasks.select_related("prompt", "response_a", "response_b"):
        for sample, pick in enumerate(JUDGE[index[task.pk]]):
            verdict = "A" if task.response_a.model_name == pick else "B"
            for order in ("ab", "ba"):
                Judgment.objects.create(
                    judge_run=run,
                    target_key=f"task:{task.pk}" + (f"#{sample}" if sample else ""),
                    prompt=task.prompt,
                    response_a=task.response_a,
                    response_b=task.response_b,
                    annotation_task_id=task.pk,
                    order=order,
                    sample=sample,
                    template_kind="pairwise",
                    template_version=1,
                    parse_status="ok",
                    verdict=verdict,
                )
    project.lab_run = run
    return project


def test_inputs_key_judgments_and_votes_by_the_same_pair(lab_project):
    inputs = services.judge_lab_inputs(project=lab_project)
    assert len(inputs.human) == 18 and len(inputs.judge) == 36
    assert set(inputs.human["item"]) == set(inputs.judge["item"]) == set(inputs.items["item"])
    assert sorted(inputs.judge["sample"].unique()) == [0, 1, 2]
    assert set(inputs.judge["order"]) == {"ab", "ba"}
    assert inputs.models == ["alpha", "beta"]
    assert inputs.families[f"juri-x (run {lab_project.lab_run.pk})"] == "qwen"
    assert inputs.families["alpha"] == "qwen"
    lengths = inputs.items.assign(
        alpha=[
            a if m == "alpha" else b
            for m, a, b in zip(
                inputs.items["model_a"], inputs.items["length_a"], inputs.items["length_b"], strict=True
            )
        ]
    )
    assert set(lengths["alpha"]) == {40.0}
    assert set(inputs.items["language"]) == {"jav", "ind"}


def test_every_figure_of_the_project(lab_project):
    report = services.judge_lab_report(project=lab_project, baseline="beta")
    (name,) = report["judges"]
    entry = report["judges"][name]
    assert (entry["accuracy"]["n_correct"], entry["accuracy"]["n"]) == (4, 5)
    # Each sample picks the same model in both orders: half the decisive outputs pick the first shown,
    # and every item is consistent.
    assert entry["position"]["first_position_rate"] == 0.5
    assert entry["position"]["consistency"]["consistent"] == 1.0
    # Calibration over p0-p4 (six verdicts each): confidence 1, 1, 1, 1, 4/6; right but for p2.
    # Bin 9: 4 items, accuracy 3/4, gap 1/4; bin 6: one item, confidence 2/3, right, gap 1/3.
    # ECE = 4/5 * 1/4 + 1/5 * 1/3 = 4/15; Brier = (1 + 1/9) / 5 = 2/9.
    calibration = entry["calibration"]
    assert calibration["ece"] == pytest.approx(4 / 15) and calibration["brier"] == pytest.approx(2 / 9)
    assert calibration["samples"] == [6, 6]
    # Own family (qwen = alpha): the judge picks alpha on 5 of 6 items, people on 3 of 5.
    own = entry["self_preference"]
    assert (own["family"], own["judge_rate"], own["human_rate"]) == (
        "qwen",
        pytest.approx(5 / 6),
        pytest.approx(3 / 5),
    )
    # alpha is always the longer answer.
    assert entry["length"]["longer_win_rate"] == pytest.approx(5 / 6)
    assert report["human_length"]["longer_win_rate"] == pytest.approx(3 / 5)
    rows = {(r["kind"], r["model"]): r for r in report["length_controlled"]["rows"]}
    assert rows["judge", "alpha"]["raw"] == pytest.approx(5 / 6)
    assert rows["human", "alpha"]["raw"] == pytest.approx(3.5 / 6)
    (ppi,) = report["ppi"]
    assert (ppi["model_x"], ppi["model_y"], ppi["n_labeled"], ppi["n_unlabeled"]) == ("alpha", "beta", 6, 0)
    languages = {(r["slice"]) for r in report["judge_choice"]["language_register"]}
    assert languages == {"jav / krama", "ind"}


def test_bad_parameters_are_refused(lab_project):
    with pytest.raises(ValueError, match="not a model of this project"):
        services.judge_lab_report(project=lab_project, baseline="gamma")
    with pytest.raises(ValueError, match="share of human items"):
        services.judge_lab_report(project=lab_project, ppi_human_share=0.3)


def test_page_in_english_and_indonesian(role_client, lab_project):
    client = role_client("researcher")
    url = f"/analytics/projects/{lab_project.pk}/judge-lab/"
    english = client.get(url).content.decode()
    assert "Judge lab" in english and "Length bias" in english and "Calibration" in english
    assert 'data-chart="reliability"' in english and 'data-chart="length_bias"' in english
    assert "0.800 [" in english  # agreement 4/5 with its interval
    assert f"juri-x (run {lab_project.lab_run.pk})" in english
    indonesian = client.get(url, HTTP_ACCEPT_LANGUAGE="id").content.decode()
    assert "Lab juri" in indonesian and "Kalibrasi" in indonesian and "Bias panjang" in indonesian
    assert f"juri-x (proses {lab_project.lab_run.pk})" in indonesian
    assert "Length bias" not in indonesian
    assert client.get(url + "?baseline=gamma").status_code == 400
    dashboard = client.get(f"/analytics/projects/{lab_project.pk}/").content.decode()
    assert f'href="{url}"' in dashboard


def test_annotators_cannot_open_the_lab(role_client, lab_project):
    assert role_client("annotator").get(f"/analytics/projects/{lab_project.pk}/judge-lab/").status_code == 403


def test_api_returns_the_report(api_client_for, lab_project):
    client = api_client_for("project_manager")
    body = client.get(f"/api/v1/projects/{lab_project.pk}/judge-lab?ppi_share=0.5").json()
    assert body["ppi_human_share"] == 0.5 and body["models"] == ["alpha", "beta"]
    (ppi,) = body["ppi"]
    assert ppi["n_labeled"] == 3 and ppi["n_unlabeled"] == 3 and ppi["human_all"]["n"] == 6
    assert client.get(f"/api/v1/projects/{lab_project.pk}/judge-lab?ppi_share=x").status_code == 400
    assert api_client_for("annotator").get(f"/api/v1/projects/{lab_project.pk}/judge-lab").status_code == 403


def test_a_project_without_judges_says_so(role_client, make_project):
    project = make_project(kind="pairwise", n_prompts=2, n_models=2)
    page = role_client("project_manager").get(f"/analytics/projects/{project.pk}/judge-lab/").content.decode()
    assert "No pairwise judge has run on this project" in page


def test_the_page_lists_prediction_powered_ratings_with_three_models():
    import numpy as np
    import pandas as pd

    from analytics.domain.judge_lab import lab_report
    from analytics.views import lab_context

    rng = np.random.default_rng(2)
    models = np.array(["m1", "m2", "m3"])
    first = rng.integers(0, 3, 90)
    items = pd.DataFrame(
        {"item": [f"i{k}" for k in range(90)], "model_a": models[first], "model_b": models[(first + 1) % 3]}
    )
    human = pd.DataFrame(
        {"item": items["item"][:40], "annotator": "p", "vote": rng.choice(["A", "B", "tie"], 40)}
    )
    judge = pd.DataFrame({"item": items["item"], "judge": "j (run 3)", "vote": rng.choice(["A", "B"], 90)})
    context = lab_context(lab_report(human, judge, items))
    (entry,) = context["ppi_ratings"]
    assert entry["judge"] == "j (run 3)" and (entry["n_labeled"], entry["n_unlabeled"]) == (40, 50)
    assert {row["model"] for row in entry["rows"]} == {"m1", "m2", "m3"}
    assert all(row["ppi"].count("[") == 1 for row in entry["rows"])


def test_the_lab_reads_few_queries_and_is_cached(role_client, lab_project, django_assert_max_num_queries):
    client = role_client("researcher")
    url = f"/analytics/projects/{lab_project.pk}/judge-lab/"
    # Session, user with roles, project, the data version (two), then answers, judgments, responses and
    # model families once.
    with django_assert_max_num_queries(10):
        assert client.get(url).status_code == 200
    with django_assert_max_num_queries(6):  # the report comes from the cache: no answer is read again
        assert client.get(url).status_code == 200


def test_the_dashboards_judge_leaderboard_reads_the_first_sample(lab_project):
    from evaluation.models import PairVerdict

    index = {task.pk: int(task.prompt.external_id[1:]) for task in lab_project.tasks.select_related("prompt")}
    for task in lab_project.tasks.select_related("response_a", "response_b", "prompt"):
        picks = JUDGE[index[task.pk]]
        for sample in (2, 1, 0):  # written last first: a reader taking each item's first row would see 2
            # Later samples always pick response B: were they counted, the leaderboard would change.
            verdict = ("A" if task.response_a.model_name == picks[0] else "B") if sample == 0 else "B"
            PairVerdict.objects.create(
                judge_run=lab_project.lab_run,
                target_key=f"task:{task.pk}" + (f"#{sample}" if sample else ""),
                prompt=task.prompt,
                response_a=task.response_a,
                response_b=task.response_b,
                annotation_task_id=task.pk,
                verdict=verdict,
                consistency="consistent",
                sample=sample,
            )
    report = services.compute_report(project=lab_project, level="ordinal", draws=0, bt_draws=0)
    (row,) = [r for r in report["sections"]["judges"]["tables"]["leaderboard"] if r["kind"] == "pairwise"]
    # Sample 0 is the judge's first pick: right on p0, p1, p3, p4, wrong on p2 (p5 is a human tie).
    assert (row["n_items"], row["accuracy"]) == (6, pytest.approx(4 / 5))
