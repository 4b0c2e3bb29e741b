"""Rubric texts are kept per process and read again whenever a rubric row changes, in any process."""

import logging

import pytest
from django.core.cache import cache
from django.test import override_settings
from rest_framework.test import APIClient

from annotation import selectors
from annotation.models import Rubric
from annotation.selectors.core import (
    RUBRIC_GENERATION_KEY,
    rubric_generation_request_finished,
    rubric_generation_request_started,
)

pytestmark = pytest.mark.django_db


def _levels(project, category: str, lang: str = "en") -> dict[str, dict[int, str]]:
    return {view.key: dict(view.levels[lang]) for view in selectors.rubrics_for(project, category)}


def test_a_second_read_needs_no_query(make_project, django_assert_num_queries):
    project = make_project()
    first = _levels(project, "math")
    with django_assert_num_queries(0):
        assert _levels(project, "math") == first
    with django_assert_num_queries(1):  # another category: its own entry
        _levels(project, "analysis")


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


def test_a_change_announced_by_another_process_is_read_again(make_project, django_assert_num_queries):
    project = make_project()
    _levels(project, "math")
    cache.set(RUBRIC_GENERATION_KEY, "written-by-another-process", timeout=None)
    with django_assert_num_queries(1):
        _levels(project, "math")


def test_without_a_reachable_cache_the_rows_are_read_every_time(
    make_project, django_assert_num_queries, caplog
):
    project = make_project()
    expected = _levels(project, "math")
    unreachable = {
        "default": {
            "BACKEND": "config.cache.RedisCache",
            "LOCATION": "redis://127.0.0.1:9/0",
        }
    }
    with override_settings(CACHES=unreachable), caplog.at_level(logging.WARNING):
        for _ in range(2):
            with django_assert_num_queries(1):
                assert _levels(project, "math") == expected
    assert "cache unavailable" in caplog.text


def test_a_request_reads_the_generation_once(make_project, django_assert_num_queries):
    project = make_project()
    _levels(project, "math")
    rubric_generation_request_started()
    try:
        _levels(project, "math")
        # Announced by another process while this request runs: the request keeps what it read ...
        cache.set(RUBRIC_GENERATION_KEY, "written-during-the-request", timeout=None)
        with django_assert_num_queries(0):
            _levels(project, "math")
    finally:
        rubric_generation_request_finished()
    # ... and the next request (or any read outside a request) sees it.
    rubric_generation_request_started()
    try:
        with django_assert_num_queries(1):
            _levels(project, "math")
    finally:
        rubric_generation_request_finished()


def test_a_rubric_edited_during_a_request_shows_in_the_same_request(make_project):
    project = make_project()
    rubric_generation_request_started()
    try:
        assert _levels(project, "")["relevance"][5] != "Edited in the request."
        rubric = Rubric.objects.get(criterion="relevance", category="", version=1)
        rubric.levels["en"]["5"] = "Edited in the request."
        rubric.save()
        assert _levels(project, "")["relevance"][5] == "Edited in the request."
    finally:
        rubric_generation_request_finished()
