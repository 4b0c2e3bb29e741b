"""Rubric texts are kept per process under the project's rubric stamp and read again whenever a rubric row
changes, in any process."""

import pytest
from django.db import transaction
from django.db.models import F
from django.test import override_settings
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


def test_a_rubric_write_moves_every_projects_stamp(make_project):
    first, second = make_project(), make_project()
    stamps = {p.pk: _fresh(p).rubric_stamp for p in (first, second)}
    services.rubric_save(
        criterion="relevance",
        label={"id": "Relevansi", "en": "Relevance"},
        question=None,
        scale={"points": 5},
        levels={lang: {str(v): f"{lang} {v}" for v in range(1, 6)} for lang in ("id", "en")},
    )
    assert {p.pk: _fresh(p).rubric_stamp for p in (first, second)} == {pk: s + 1 for pk, s in stamps.items()}


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


@pytest.mark.django_db(transaction=True)
def test_texts_of_a_rolled_back_edit_are_not_kept(make_project, django_assert_num_queries):
    project = make_project()
    before = _levels(project, "")["relevance"][5]
    with pytest.raises(RuntimeError), transaction.atomic():
        rubric = Rubric.objects.get(criterion="relevance", category="", version=1)
        rubric.levels["en"]["5"] = "Never committed."
        rubric.save()
        assert _levels(project, "")["relevance"][5] == "Never committed."
        raise RuntimeError("the edit fails later in its transaction")
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


def test_texts_of_an_edit_rolled_back_to_a_savepoint_are_not_kept(make_project, django_assert_num_queries):
    project = make_project()
    before = _levels(project, "")["relevance"][5]
    with pytest.raises(RuntimeError), transaction.atomic():
        rubric = Rubric.objects.get(criterion="relevance", category="", version=1)
        rubric.levels["en"]["5"] = "Rolled back to the savepoint."
        rubric.save()
        assert _levels(project, "")["relevance"][5] == "Rolled back to the savepoint."
        raise RuntimeError("the edit fails later in its savepoint")
    assert _levels(project, "")["relevance"][5] == before
