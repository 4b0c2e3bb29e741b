"""Rubric texts are kept per process under the project's rubric stamp and read again whenever a rubric row
changes, in any process."""

import pytest
from django.db import connection, transaction
from django.db.models import F
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from annotation import selectors, services
from annotation.models import Project, Rubric

pytestmark = pytest.mark.django_db


def _levels(project, category: str, lang: str = "en") -> dict[str, dict[int, str]]:
    return {view.key: dict(view.levels[lang]) for view in selectors.rubrics_for(project, category)}


def _fresh(project) -> Project:
    return Project.objects.get(pk=project.pk)


def test_a_second_read_needs_no_query(make_project, django_assert_num_queries):
    project = make_project()
    first = _levels(project, "math")
    with django_assert_num_queries(0):
        assert _levels(project, "math") == first
    with django_assert_num_queries(1):  # another category: its own entry
        _levels(project, "analysis")


def test_the_texts_need_no_cache_server(make_project, django_assert_num_queries):
    project = make_project()
    expected = _levels(project, "math")
    unreachable = {"default": {"BACKEND": "config.cache.RedisCache", "LOCATION": "redis://127.0.0.1:9/0"}}
    with override_settings(CACHES=unreachable), django_assert_num_queries(0):
        assert _levels(project, "math") == expected


def test_an_edited_rubric_shows_on_the_next_task(make_project):
    project = make_project(per_group=1)
    api = APIClient()
    api.force_authenticate(project.annotators[0])
    body = api.get(f"/api/v1/projects/{project.pk}/next").json()
    category = body["prompt"]["category"]
    rubric = Rubric.objects.filter(criterion="relevance", category__in=[category, ""]).order_by("-category")[
        0
    ]
    rubric.levels["en"]["5"] = "Edited: exactly what was asked."
    rubric.save()
    again = api.get(f"/api/v1/projects/{project.pk}/next").json()  # the same task, resumed
    assert again["task"] == body["task"]
    relevance = next(c for c in again["criteria"] if c["key"] == "relevance")
    assert relevance["levels"]["en"]["5"] == "Edited: exactly what was asked."


def test_an_added_or_deleted_category_rubric_takes_effect(make_project):
    project = make_project()
    general = _levels(project, "analysis")["fluency"]
    override = Rubric.objects.create(
        criterion="fluency",
        category="analysis",
        version=project.rubric_versions["fluency"],
        label={"id": "Kelancaran", "en": "Fluency"},
        levels={
            "id": {str(v): f"analisis {v}" for v in range(1, 6)},
            "en": {str(v): f"analysis {v}" for v in range(1, 6)},
        },
    )
    assert _levels(project, "analysis")["fluency"][3] == "analysis 3"
    override.delete()
    assert _levels(project, "analysis")["fluency"] == general


def _clarity(text: str, **kwargs) -> None:
    """The designer's save of a criterion no project rates, with its own wording for two categories."""
    levels = {lang: {str(v): f"{text} {v}" for v in range(1, 6)} for lang in ("id", "en")}
    services.rubric_save(
        criterion="clarity",
        label={"id": "Kejelasan", "en": "Clarity"},
        question=None,
        scale={"points": 5},
        levels=levels,
        overrides={"math": levels, "analysis": levels},
        **kwargs,
    )


@pytest.mark.django_db(transaction=True)
def test_a_rubric_save_moves_every_projects_stamp_once(make_project):
    """A save rewrites the criterion's rows in place (three rows deleted, three written, a signal for each
    deleted row): the stamps move once, in one update."""
    first, second = make_project(), make_project()
    _clarity("first", new=True)
    stamps = {p.pk: _fresh(p).rubric_stamp for p in (first, second)}
    with CaptureQueriesContext(connection) as queries:
        _clarity("edited")
    assert Rubric.objects.filter(criterion="clarity").count() == 3
    moves = [q["sql"] for q in queries.captured_queries if q["sql"].startswith('UPDATE "annotation_project"')]
    assert len(moves) == 1
    assert {p.pk: _fresh(p).rubric_stamp for p in (first, second)} == {pk: s + 1 for pk, s in stamps.items()}


@pytest.mark.django_db(transaction=True)
def test_a_write_after_a_rolled_back_savepoint_moves_the_stamps_again(make_project):
    project = make_project()
    before = _fresh(project).rubric_stamp
    with transaction.atomic():
        with pytest.raises(RuntimeError), transaction.atomic():
            _clarity("rolled back", new=True)
            raise RuntimeError("the savepoint with the first write and its move is rolled back")
        assert _fresh(project).rubric_stamp == before
        _clarity("kept", new=True)
    assert _fresh(project).rubric_stamp == before + 1
    assert Rubric.objects.get(criterion="clarity", category="").levels["en"]["5"] == "kept 5"


def test_a_change_committed_by_another_process_is_read_again(make_project, django_assert_num_queries):
    """Another process wrote a rubric row and moved the stamps (no signal reaches this one): a project read
    after it has the new stamp, and its texts are read again."""
    project = make_project()
    before = _levels(project, "")["relevance"][5]
    Rubric.objects.filter(criterion="relevance", category="", version=1).update(
        levels={lang: {str(v): f"elsewhere {v}" for v in range(1, 6)} for lang in ("id", "en")}
    )
    Project.objects.update(rubric_stamp=F("rubric_stamp") + 1)
    with django_assert_num_queries(0):  # a project read before the change keeps what it was shown
        assert _levels(project, "")["relevance"][5] == before
    project = _fresh(project)
    with django_assert_num_queries(1):
        assert _levels(project, "")["relevance"][5] == "elsewhere 5"


def test_a_stale_project_saved_whole_keeps_the_new_stamp(make_project):
    project = make_project()
    stale = _fresh(project)
    Project.objects.update(rubric_stamp=F("rubric_stamp") + 1)
    stale.description = "Edited after a rubric change."
    stale.save()
    saved = _fresh(project)
    assert saved.description == "Edited after a rubric change."
    assert saved.rubric_stamp == stale.rubric_stamp + 1


def test_a_rubric_edited_during_a_transaction_shows_in_it(make_project):
    project = make_project()
    assert _levels(project, "")["relevance"][5] != "Edited in the request."
    rubric = Rubric.objects.get(criterion="relevance", category="", version=1)
    rubric.levels["en"]["5"] = "Edited in the request."
    rubric.save()
    # The project in memory still has its old stamp: the rows are read again all the same.
    assert _levels(project, "")["relevance"][5] == "Edited in the request."


@pytest.mark.parametrize(
    "where",
    [
        # The block is the transaction itself (nothing around it) ...
        pytest.param("transaction", marks=pytest.mark.django_db(transaction=True)),
        # ... or a savepoint inside the test's transaction.
        "savepoint",
    ],
)
def test_texts_of_a_rolled_back_edit_are_not_kept(make_project, django_assert_num_queries, where):
    project = make_project()
    before = _levels(project, "")["relevance"][5]
    with pytest.raises(RuntimeError), transaction.atomic():
        rubric = Rubric.objects.get(criterion="relevance", category="", version=1)
        rubric.levels["en"]["5"] = "Never committed."
        rubric.save()
        assert _levels(project, "")["relevance"][5] == "Never committed."
        raise RuntimeError(f"the edit fails later in its {where}")
    assert _levels(project, "")["relevance"][5] == before
    with django_assert_num_queries(0):  # and kept again once read
        assert _levels(project, "")["relevance"][5] == before


@pytest.mark.django_db(transaction=True)
def test_a_committed_edit_is_read_once_and_then_kept(make_project, django_assert_num_queries):
    project = make_project()
    _levels(project, "")
    with transaction.atomic():
        rubric = Rubric.objects.get(criterion="relevance", category="", version=1)
        rubric.levels["en"]["5"] = "Committed edit."
        rubric.save()
    project = _fresh(project)
    with django_assert_num_queries(1):
        assert _levels(project, "")["relevance"][5] == "Committed edit."
    with django_assert_num_queries(0):
        assert _levels(project, "")["relevance"][5] == "Committed edit."
