"""Agreement reports of projects answered through the annotation services, checked by hand and by
``krippendorff``; caching until the data changes; the background path."""

from __future__ import annotations

import re

import krippendorff
import numpy as np
import pytest

from analytics import selectors, services
from analytics.tasks import agreement_report
from annotation import services as annotation_services
from datasets_app.models import Response

from .conftest import work_through

pytestmark = pytest.mark.django_db

# Six responses (3 prompts x 2 models); two annotators. Relevance units: (1,1) (2,2) (3,4) twice.
RELEVANCE = {"c1": [1, 2, 3, 1, 2, 3], "c2": [1, 2, 4, 1, 2, 4]}
FLUENCY = {"c1": [4, 4, 5, 3, 4, 5], "c2": [4, 5, 5, 3, 4, 4]}


def responses_of(project) -> list[int]:
    return list(
        Response.objects.filter(prompt__dataset=project.dataset)
        .order_by("prompt__external_id", "model_name")
        .values_list("pk", flat=True)
    )


def likert_answers(project, coder: str, relevance=RELEVANCE, fluency=FLUENCY):
    index = {rid: i for i, rid in enumerate(responses_of(project))}

    def answer(assignment):
        return {
            "ratings": {
                rid: {"relevance": relevance[coder][index[rid]], "fluency": fluency[coder][index[rid]]}
                for rid in assignment.task.response_ids
            }
        }

    return answer


@pytest.fixture
def likert(make_project):
    project = make_project(
        n_prompts=3, n_models=2, per_group=2, overlap=2, criteria=["relevance", "fluency"], seed=5
    )
    c1, c2 = project.annotators
    work_through(project, c1, likert_answers(project, "c1"))
    work_through(project, c2, likert_answers(project, "c2"))
    return project


def row_of(report, section, table, **match):
    rows = report["sections"][section]["tables"][table]
    found = [r for r in rows if all(r[k] == v for k, v in match.items())]
    assert len(found) == 1, found
    return found[0]


def test_alpha_per_criterion_matches_hand_arithmetic_and_krippendorff(likert):
    report = services.compute_report(project=likert, level="interval", draws=200)
    relevance = row_of(report, "alpha", "alpha", criterion="relevance")
    # Interval, n = 12 pairable values {1:4, 2:4, 3:2, 4:2}. D_o = (2*1^2 + 2*1^2) / 12 = 1/3.
    # Sum of squares about the mean 13/6: 70 - 12 * (13/6)^2 = 41/3; ordered pairs 2n * 41/3 = 328,
    # D_e = 328 / (12 * 11). alpha = 1 - (1/3) / (328/132) = 1 - 11/82 = 71/82.
    assert relevance["alpha"] == pytest.approx(71 / 82, abs=1e-12)
    assert (relevance["n_units"], relevance["n_coders"], relevance["n_pairable_values"]) == (6, 2, 12)
    assert relevance["ci_low"] <= relevance["alpha"] <= relevance["ci_high"]
    # 4 of 6 units agree exactly.
    assert relevance["percent_agreement"] == pytest.approx(4 / 6)
    # AC1: pi = (2/6, 2/6, 1/6, 1/6), p_e = (2*(1/3)(2/3) + 2*(1/6)(5/6)) / 3 = 26/108,
    # AC1 = (72/108 - 26/108) / (82/108) = 46/82.
    assert relevance["ac1"] == pytest.approx(46 / 82)
    # Cohen's kappa: p_o = 4/6; c1 uses 1, 2, 3 and c2 uses 1, 2, 4 a third each, so p_e = 2/9;
    # kappa = (2/3 - 2/9) / (7/9) = 4/7. Fleiss' kappa (two ratings per unit): p = (1/3, 1/3, 1/6, 1/6),
    # P_e = 5/18, kappa = (2/3 - 5/18) / (13/18) = 7/13.
    assert relevance["cohen_kappa"] == pytest.approx(4 / 7)
    assert relevance["fleiss_kappa"] == pytest.approx(7 / 13)
    fluency = row_of(report, "alpha", "alpha", criterion="fluency")
    matrix = np.array([FLUENCY["c1"], FLUENCY["c2"]], dtype=float)
    assert fluency["alpha"] == pytest.approx(
        krippendorff.alpha(matrix, level_of_measurement="interval"), abs=1e-9
    )


@pytest.mark.parametrize("level", ["nominal", "ordinal", "ratio"])
def test_level_is_selectable_and_equals_krippendorff(likert, level):
    report = services.compute_report(project=likert, level=level, draws=0)
    matrix = np.array([RELEVANCE["c1"], RELEVANCE["c2"]], dtype=float)
    expected = krippendorff.alpha(matrix, level_of_measurement=level)
    assert row_of(report, "alpha", "alpha", criterion="relevance")["alpha"] == pytest.approx(
        expected, abs=1e-9
    )
    assert row_of(report, "alpha", "alpha", criterion="relevance")["level"] == level


def test_bootstrap_interval_is_seeded_by_the_project(likert):
    first = services.compute_report(project=likert, level="ordinal", draws=300)
    again = services.compute_report(project=likert, level="ordinal", draws=300)
    a = row_of(first, "alpha", "alpha", criterion="fluency")
    b = row_of(again, "alpha", "alpha", criterion="fluency")
    assert (a["ci_low"], a["ci_high"]) == (b["ci_low"], b["ci_high"])
    assert a["ci_low"] < a["ci_high"]


def test_breakdowns_distributions_annotators_and_trend(likert):
    report = services.compute_report(project=likert, level="interval", draws=0)
    # Prompts alternate analysis (0, 2) / math (1): units of prompts 0 and 2 are (1,1) (2,2) (2,2) (3,4).
    analysis = row_of(
        report, "breakdowns", "breakdowns", criterion="relevance", dimension="category", group="analysis"
    )
    matrix = np.array([[1, 2, 2, 3], [1, 2, 2, 4]], dtype=float)
    assert analysis["alpha"] == pytest.approx(krippendorff.alpha(matrix, level_of_measurement="interval"))
    assert analysis["n_units"] == 4
    counts = {
        r["value"]: r["count"]
        for r in report["sections"]["distributions"]["tables"]["distributions"]
        if r["criterion"] == "relevance"
    }
    assert counts == {"1": 4, "2": 4, "3": 2, "4": 2, "5": 0}
    c1 = likert.annotators[0].get_username()
    annotator = row_of(report, "annotators", "annotators", criterion="relevance", coder=c1)
    # Without one of two coders nothing is pairable; against the other coder 4 of 6 values agree and the
    # gaps are 0, 0, 1, 0, 0, 1.
    assert annotator["alpha_without"] is None
    assert annotator["percent_agreement"] == pytest.approx(4 / 6)
    assert annotator["mean_abs_gap"] == pytest.approx(1 / 3)
    assert annotator["n_values"] == 6
    trend = [r for r in report["sections"]["trend"]["tables"]["trend"] if r["criterion"] == "relevance"]
    # 6 submissions (3 per coder, the first coder's first): checkpoints 2, 3, 4, 5, 6.
    assert [r["n_submissions"] for r in trend] == [2, 3, 4, 5, 6]
    assert trend[1]["alpha"] is None and trend[1]["undefined_reason"] == "no pairable unit"
    assert trend[-1]["alpha"] == pytest.approx(71 / 82)
    assert report["sections"]["between_groups"]["note"]  # one group only


def test_leave_one_out_names_the_outlier(make_project):
    project = make_project(n_prompts=3, n_models=2, per_group=3, overlap=3, criteria=["relevance", "fluency"])
    ratings = {**RELEVANCE, "c3": [5, 1, 1, 5, 1, 2]}
    for coder, user in zip(("c1", "c2", "c3"), project.annotators, strict=True):
        work_through(project, user, likert_answers(project, coder, relevance=ratings, fluency=ratings))
    report = services.compute_report(project=project, level="interval", draws=0)
    rows = [
        r for r in report["sections"]["annotators"]["tables"]["annotators"] if r["criterion"] == "relevance"
    ]
    outlier = project.annotators[2].get_username()
    assert rows[0]["coder"] == outlier  # sorted by delta, largest first
    without = krippendorff.alpha(
        np.array([RELEVANCE["c1"], RELEVANCE["c2"]], float), level_of_measurement="interval"
    )
    assert rows[0]["alpha_without"] == pytest.approx(without)
    everyone = np.array([RELEVANCE["c1"], RELEVANCE["c2"], ratings["c3"]], float)
    assert rows[0]["delta"] == pytest.approx(
        without - krippendorff.alpha(everyone, level_of_measurement="interval")
    )


def test_between_two_groups(make_project):
    project = make_project(
        n_prompts=3, n_models=2, groups=2, per_group=1, overlap=1, criteria=["relevance", "fluency"]
    )
    a, b = project.annotators
    work_through(project, a, likert_answers(project, "c1"))
    work_through(project, b, likert_answers(project, "c2"))
    report = services.compute_report(project=project, level="interval", draws=0)
    row = row_of(report, "between_groups", "between_groups", criterion="relevance")
    # One annotator per group: the group means are their ratings, so alpha over means is 71/82 again.
    assert row["alpha_means"] == pytest.approx(71 / 82)
    assert row["mean_offset"] == pytest.approx(-1 / 3)  # (0 + 0 - 1 + 0 + 0 - 1) / 6
    assert row["pearson_r"] == pytest.approx(np.corrcoef(RELEVANCE["c1"], RELEVANCE["c2"])[0, 1])
    assert row["n_shared_units"] == 6
    groups = row_of(report, "breakdowns", "breakdowns", criterion="relevance", dimension="group", group="G1")
    assert groups["undefined_reason"] == "no pairable unit"


def test_best_of_n_alpha_is_over_canonical_responses(make_project):
    project = make_project(
        kind="best_of_n", n_prompts=3, n_models=3, per_group=3, overlap=3, allow_all_bad=True
    )
    responses = responses_of(project)
    r = [responses[0:3], responses[3:6], responses[6:9]]
    picks = {  # prompt -> the three coders' picks (canonical)
        0: [r[0][0], r[0][0], r[0][0]],
        1: [r[1][1], r[1][1], r[1][2]],
        2: [r[2][2], r[2][2], "all_bad"],
    }
    prompt_of = {rid: p for p, ids in enumerate(r) for rid in ids}
    for c, user in enumerate(project.annotators):
        work_through(project, user, lambda a, c=c: {"best": picks[prompt_of[a.task.response_ids[0]]][c]})
    # The three coders saw the responses in different orders; agreement is on what they picked.
    shown = {tuple(a.permutation) for a in project.assignments.all()}
    assert len(shown) > 1
    report = services.compute_report(project=project, level="ordinal", draws=0)
    codes = {v: i for i, v in enumerate(dict.fromkeys(v for p in picks.values() for v in p))}
    matrix = np.array([[codes[picks[p][c]] for p in range(3)] for c in range(3)], dtype=float)
    expected = krippendorff.alpha(matrix, level_of_measurement="nominal")
    summary = report["sections"]["best_of_n"]["summary"]
    assert summary["alpha"] == pytest.approx(expected, abs=1e-12)
    assert row_of(report, "alpha", "alpha", criterion="best")["level"] == "nominal"
    picked = {row["model"]: row["picks"] for row in report["sections"]["best_of_n"]["tables"]["picks"]}
    models = dict(Response.objects.filter(pk__in=responses).values_list("pk", "model_name"))
    # The third model: picked once on prompt 1 and twice on prompt 2.
    assert picked[models[r[2][2]]] == 3 and picked[models[r[0][0]]] == 3 and picked["all_bad"] == 1
    ratings = report["sections"]["bradley_terry"]["tables"]["ratings"]
    assert {row["source"] for row in ratings} == {"best_of_n"}
    assert len(ratings) == 3


@pytest.fixture
def pairwise(make_project):
    project = make_project(kind="pairwise", n_prompts=2, n_models=2, per_group=3, overlap=3)
    tasks = list(project.tasks.order_by("prompt__external_id"))
    votes = {tasks[0].pk: ["A", "A", "tie"], tasks[1].pk: ["B", "A", "B"]}
    for c, user in enumerate(project.annotators):
        work_through(project, user, lambda a, c=c: {"vote": votes[a.task_id][c]})
    project.test_tasks = tasks
    return project


def test_pairwise_human_agreement(pairwise):
    report = services.compute_report(project=pairwise, level="ordinal", draws=0, bt_draws=20)
    summary = report["sections"]["pairwise"]["summary"]
    # Item 1 (A, A, tie): 3 pairs, 1 agrees; without ties 1 pair, agrees. Item 2 (B, A, B): 1 of 3 pairs.
    assert (summary["n_with_ties"], summary["with_ties"]) == (6, pytest.approx(2 / 6))
    assert (summary["n_without_ties"], summary["without_ties"]) == (4, pytest.approx(2 / 4))
    counts = {r["value"]: r["count"] for r in report["sections"]["distributions"]["tables"]["distributions"]}
    assert counts == {"A": 3, "B": 2, "tie": 1, "both_bad": 0}
    ratings = report["sections"]["bradley_terry"]["tables"]["ratings"]
    assert {r["source"] for r in ratings} == {"pairwise"} and len(ratings) == 2
    assert all(r["ci_low"] is not None for r in ratings)


def test_bradley_terry_counts_are_whole_numbers_in_the_json_and_on_the_page(pairwise):
    from analytics.views import heading, panels

    report = services.compute_report(project=pairwise, level="ordinal", draws=0, bt_draws=0)
    ratings = report["sections"]["bradley_terry"]["tables"]["ratings"]
    # Six votes, each between the same two models; a tie is half a win for each side.
    assert [r["games"] for r in ratings] == [6, 6] and all(type(r["games"]) is int for r in ratings)
    assert sum(r["wins"] for r in ratings) == 6 and all(isinstance(r["wins"], float) for r in ratings)
    assert all(type(r["n_votes"]) is int for r in ratings)
    panel = next(p for p in panels(report, pairwise.pk, "ordinal") if p["name"] == "bradley_terry")
    table = panel["tables"][0]
    cells = [dict(zip(table["columns"], row, strict=True)) for row in table["rows"]]
    assert [c[heading("games")] for c in cells] == ["6", "6"]
    assert sorted(c[heading("wins")] for c in cells) == ["2.5", "3.5"]
    assert all(c[heading("n_votes")] == "6" for c in cells)
    assert all(re.fullmatch(r"\d+\.\d{3}", c[heading("rating")]) for c in cells)


def test_judge_leaderboard(pairwise):
    from evaluation.models import JudgeRun, JudgeTemplate, Judgment, ModelEndpoint, PairVerdict

    endpoint = ModelEndpoint.objects.create(slug="judge-x", model_id="judge-x")
    t1, t2 = pairwise.test_tasks

    def template(kind):
        return JudgeTemplate.objects.get_or_create(
            kind=kind, language="en", version=99, defaults={"user": "x"}
        )[0]

    run = JudgeRun.objects.create(
        judge_kind="pairwise", endpoint=endpoint, template=template("pairwise"), annotation_project=pairwise
    )
    for task, verdict, consistency in ((t1, "A", "consistent"), (t2, "B", "biased_first")):
        PairVerdict.objects.create(
            judge_run=run,
            target_key=f"task:{task.pk}",
            prompt=task.prompt,
            response_a=task.response_a,
            response_b=task.response_b,
            annotation_task_id=task.pk,
            verdict=verdict,
            consistency=consistency,
        )
    graded = JudgeRun.objects.create(
        judge_kind="single_grade",
        endpoint=endpoint,
        template=template("single_grade"),
        dataset=pairwise.dataset,
    )
    for task, score_a, score_b in ((t1, 8, 7), (t2, 3, 9)):
        for response, score in ((task.response_a, score_a), (task.response_b, score_b)):
            Judgment.objects.create(
                judge_run=graded,
                target_key=f"resp:{response.pk}:t0",
                prompt=task.prompt,
                response_a=response,
                turn=0,
                order="single",
                template_kind="single_grade",
                template_version=1,
                parse_status="ok",
                score=score,
            )
    report = services.compute_report(project=pairwise, level="ordinal", draws=0, bt_draws=0)
    board = report["sections"]["judges"]["tables"]["leaderboard"]
    by_kind = {row["kind"]: row for row in board}
    # Pairwise judge: A on (A, A, tie) and B on (B, A, B): 4 of 6 votes; without ties 2/2 + 2/3 = 4/5.
    pair = by_kind["pairwise"]
    assert (pair["with_ties"], pair["n_with_ties"]) == (pytest.approx(4 / 6), 6)
    assert (pair["without_ties"], pair["n_without_ties"]) == (pytest.approx(4 / 5), 5)
    assert pair["accuracy"] == 1.0 and pair["n_human_ties"] == 0
    # Graded judge: 8 vs 7 is a tie (difference <= 1), 3 vs 9 is B. With ties 1 + 2 of 6; without ties
    # the tie verdict drops item 1, item 2 gives 2 of 3; accuracy: tie on an A item is wrong -> 1/2.
    grade = by_kind["graded"]
    assert (grade["with_ties"], grade["n_with_ties"]) == (pytest.approx(3 / 6), 6)
    assert (grade["without_ties"], grade["n_without_ties"]) == (pytest.approx(2 / 3), 3)
    assert grade["accuracy"] == pytest.approx(0.5)
    human = by_kind["human"]
    assert (human["with_ties"], human["n_with_ties"]) == (pytest.approx(2 / 6), 6)
    consistency = report["sections"]["judges"]["tables"]["position_consistency"][0]
    assert consistency["n"] == 2 and consistency["consistent"] == 0.5 and consistency["biased_first"] == 0.5
    categories = report["sections"]["judges"]["tables"]["by_category"]
    assert {r["category"] for r in categories} == {"analysis", "math"}


def test_decimal_grades_decide_the_graded_judges_verdicts(pairwise):
    from evaluation.models import JudgeRun, JudgeTemplate, Judgment, ModelEndpoint

    endpoint = ModelEndpoint.objects.create(slug="judge-decimal", model_id="judge-decimal")
    template = JudgeTemplate.objects.get_or_create(
        kind="single_grade", language="en", version=97, defaults={"user": "x"}
    )[0]
    graded = JudgeRun.objects.create(
        judge_kind="single_grade", endpoint=endpoint, template=template, dataset=pairwise.dataset
    )
    t1, t2 = pairwise.test_tasks
    # Parsed from "[[8.5]]", "Skor: 7", "Rating: 3.5", "Skor: 9,0".
    for task, score_a, score_b in ((t1, 8.5, 7.0), (t2, 3.5, 9.0)):
        for response, score in ((task.response_a, score_a), (task.response_b, score_b)):
            Judgment.objects.create(
                judge_run=graded,
                target_key=f"resp:{response.pk}:t0",
                prompt=task.prompt,
                response_a=response,
                turn=0,
                order="single",
                template_kind="single_grade",
                template_version=97,
                parse_status="ok",
                score=score,
            )
    report = services.compute_report(project=pairwise, level="ordinal", draws=0, bt_draws=0)
    grade = next(r for r in report["sections"]["judges"]["tables"]["leaderboard"] if r["kind"] == "graded")
    # Item 1: 8.5 - 7 = 1.5 > 1, so A (as whole grades 8 vs 7 it would be a tie); item 2: 9 - 3.5 = 5.5, B.
    # Humans voted (A, A, tie) and (B, A, B): with ties 2 + 2 of 6; without ties 2/2 + 2/3 = 4 of 5;
    # accuracy against the human preference (A, B): 2 of 2.
    assert (grade["with_ties"], grade["n_with_ties"]) == (pytest.approx(4 / 6), 6)
    assert (grade["without_ties"], grade["n_without_ties"]) == (pytest.approx(4 / 5), 5)
    assert grade["accuracy"] == 1.0


def test_judge_leaderboard_has_indopref_avg_the_macro_mean_with_parse_errors_wrong(pairwise):
    from evaluation.models import JudgeRun, JudgeTemplate, ModelEndpoint, PairVerdict

    endpoint = ModelEndpoint.objects.create(slug="judge-y", model_id="judge-y")
    template = JudgeTemplate.objects.get_or_create(
        kind="pairwise", language="en", version=98, defaults={"user": "x"}
    )[0]
    run = JudgeRun.objects.create(
        judge_kind="pairwise", endpoint=endpoint, template=template, annotation_project=pairwise
    )
    t1, t2 = pairwise.test_tasks
    assert t1.prompt.category != t2.prompt.category
    for task, verdict in ((t1, "A"), (t2, "error")):
        PairVerdict.objects.create(
            judge_run=run,
            target_key=f"task:{task.pk}",
            prompt=task.prompt,
            response_a=task.response_a,
            response_b=task.response_b,
            annotation_task_id=task.pk,
            verdict=verdict,
            consistency="consistent" if verdict != "error" else "error",
        )
    report = services.compute_report(project=pairwise, level="ordinal", draws=0, bt_draws=0)
    pair = next(r for r in report["sections"]["judges"]["tables"]["leaderboard"] if r["kind"] == "pairwise")
    # t1's category: 1 of 1 right; t2's: its only verdict did not parse. Valid-only: micro 1/1, macro over
    # the one category with a valid verdict 1.0; raw: micro 1/2, macro (1 + 0) / 2.
    assert (pair["accuracy"], pair["macro_accuracy"]) == (1.0, 1.0)
    assert (pair["accuracy_raw"], pair["macro_accuracy_raw"]) == (0.5, 0.5)


def test_judges_section_without_judgments_says_so(pairwise):
    report = services.compute_report(project=pairwise, level="ordinal", draws=0, bt_draws=0)
    assert report["sections"]["judges"]["tables"] == {}
    assert "No judge" in report["sections"]["judges"]["note"]


# -- caching -----------------------------------------------------------------------------------------


def test_report_is_cached_until_a_new_answer_arrives(make_project, django_assert_num_queries):
    project = make_project(n_prompts=3, n_models=2, per_group=2, overlap=2, criteria=["relevance", "fluency"])
    c1, c2 = project.annotators
    work_through(project, c1, likert_answers(project, "c1"))
    first = services.report_state(project=project, level="interval")
    assert first.ready and first.report["n_values"] == 12
    with django_assert_num_queries(2):  # the data version only: the report comes from the cache
        again = services.report_state(project=project, level="interval")
    assert again.report["computed_at"] == first.report["computed_at"]
    work_through(project, c2, likert_answers(project, "c2"))
    fresh = services.report_state(project=project, level="interval")
    assert fresh.version != first.version
    assert fresh.report["n_values"] == 24
    assert row_of(fresh.report, "alpha", "alpha", criterion="relevance")["alpha"] == pytest.approx(71 / 82)


def test_an_edited_answer_changes_the_version(likert):
    before = services.report_state(project=likert, level="interval")
    c1 = likert.annotators[0]
    assignment = likert.assignments.filter(annotator=c1).order_by("id").first()
    edited = {"ratings": {rid: {"relevance": 5, "fluency": 5} for rid in assignment.task.response_ids}}
    from .conftest import shown_payload

    annotation_services.assignment_submit(
        token=assignment.token, user=c1, payload=shown_payload(assignment, edited)
    )
    after = services.report_state(project=likert, level="interval")
    assert after.version != before.version
    assert after.report["n_values"] == before.report["n_values"]
    old = row_of(before.report, "alpha", "alpha", criterion="relevance")["alpha"]
    assert row_of(after.report, "alpha", "alpha", criterion="relevance")["alpha"] != pytest.approx(old)


def test_large_projects_are_computed_by_the_task(likert, settings, django_capture_on_commit_callbacks):
    settings.ANALYTICS_INLINE_MAX_VALUES = 0
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        state = services.report_state(project=likert, level="interval")
        twice = services.report_state(project=likert, level="interval")
    assert (state.status, state.progress, state.report) == ("queued", 0, None)
    assert twice.status == "queued"
    assert len(callbacks) == 1  # queued once, however many requests ask
    callbacks[0]()  # the eager Celery task runs here
    done = services.report_state(project=likert, level="interval")
    assert done.ready
    assert row_of(done.report, "alpha", "alpha", criterion="relevance")["alpha"] == pytest.approx(71 / 82)


def test_a_running_report_shows_its_progress_and_the_previous_one(likert, settings):
    old = services.report_state(project=likert, level="interval")
    settings.ANALYTICS_INLINE_MAX_VALUES = 0
    c1, c2 = likert.annotators
    assignment = likert.assignments.filter(annotator=c1).order_by("id").first()
    annotation_services.review_create(assignment=assignment, reviewer=c2, verdict="reject", comment="again")
    version = selectors.data_version(project=likert)
    assert version != old.version
    services.status_set(project_id=likert.pk, level="interval", version=version, state="running", progress=40)
    state = services.report_state(project=likert, level="interval")
    assert (state.status, state.progress) == ("running", 40)
    assert state.previous["data_version"] == old.version


def test_task_returns_early_for_a_missing_project_or_a_cached_version(likert):
    assert agreement_report(999_999, "interval", "x") is None
    state = services.report_state(project=likert, level="interval")
    assert agreement_report(likert.pk, "interval", state.version) == state.version


def test_pairwise_judge_against_preferences_derived_from_likert_ratings(likert):
    from evaluation.models import JudgeRun, JudgeTemplate, ModelEndpoint, PairVerdict

    endpoint = ModelEndpoint.objects.create(slug="judge-y", model_id="judge-y")
    template = JudgeTemplate.objects.get_or_create(
        kind="pairwise", language="id", version=98, defaults={"user": "x"}
    )[0]
    run = JudgeRun.objects.create(
        judge_kind="pairwise", endpoint=endpoint, template=template, dataset=likert.dataset
    )
    responses = responses_of(likert)
    # Summed ratings (relevance + fluency) per prompt, first vs second model:
    #   c1: 1+4 vs 2+4, 3+5 vs 1+3, 2+4 vs 3+5 -> B, A, B;  c2: 1+4 vs 2+5, 4+5 vs 1+3, 2+4 vs 4+4 -> B, A, B.
    # The judge prefers the second, first, first response. Each pair is stored with the larger response
    # id as its A, the reverse of the smaller-id-first orientation the report compares in.
    preferred = [1, 0, 0]
    for p in range(3):
        pair = responses[2 * p : 2 * p + 2]
        a, b = Response.objects.get(pk=max(pair)), Response.objects.get(pk=min(pair))
        PairVerdict.objects.create(
            judge_run=run,
            target_key=f"pair:{a.pk}:{b.pk}:tall",
            prompt=a.prompt,
            response_a=a,
            response_b=b,
            verdict="A" if pair[preferred[p]] == a.pk else "B",
            consistency="consistent",
        )
    report = services.compute_report(project=likert, level="interval", draws=0, bt_draws=0)
    judge = row_of(report, "judges", "leaderboard", kind="pairwise")
    # Humans prefer B (second), A (first), B (second) on prompts 0, 1, 2; the judge says second, first,
    # first: 2 of 3 items right, each with two agreeing votes -> 4 of 6 trials.
    assert judge["accuracy"] == pytest.approx(2 / 3)
    assert (judge["with_ties"], judge["n_with_ties"]) == (pytest.approx(4 / 6), 6)
    human = row_of(report, "judges", "leaderboard", kind="human")
    assert (human["with_ties"], human["n_with_ties"]) == (1.0, 3)


def test_conflicts_section_from_the_question_matrix():
    from datasets_app.domain.questions import answer_conflict_matrix

    # Rows: (question, creator, answerer, choice, key). ani's question answered by budi (wrong) and cici
    # (right); budi's question answered by ani (wrong, twice over two questions) and cici (blank).
    rows = [
        (1, "ani", "budi", "B", "A"),
        (1, "ani", "cici", "A", "A"),
        (2, "budi", "ani", "C", "D"),
        (3, "budi", "ani", "E", "D"),
        (2, "budi", "cici", "", "D"),
    ]
    section = services.conflicts_section(answer_conflict_matrix(rows))
    table = {(r["creator"], r["answerer"]): r for r in section["tables"]["conflicts"]}
    assert table[("ani", "budi")]["n_conflicts"] == 1 and table[("ani", "cici")]["n_conflicts"] == 0
    assert table[("budi", "ani")]["conflict_share"] == 1.0
    assert table[("budi", "cici")]["n_blank"] == 1 and table[("budi", "cici")]["conflict_share"] is None
    assert section["total_conflicts"] == 3
    assert services.conflicts_section(None)["note"]
