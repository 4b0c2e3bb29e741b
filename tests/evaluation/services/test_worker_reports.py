"""Worker queue reports: freshness, following new model queues, forgetting a stopped worker."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.utils import timezone

from evaluation.models import ModelEndpoint
from evaluation.services.workers import (
    QueueReporter,
    live_queues,
    queues_consumed,
    queues_to_follow,
    worker_queues_report,
)

pytestmark = pytest.mark.django_db

NOW = timezone.now()


@pytest.fixture(autouse=True)
def _no_reports():
    cache.clear()  # reports of workers an earlier test pretended to run
    yield
    cache.clear()


def test_only_fresh_reports_count_and_each_queue_lists_its_workers():
    reports = {
        "b@host": {"queues": ["gpu.x", "default"], "at": (NOW - timedelta(seconds=5)).isoformat()},
        "a@host": {"queues": ["gpu.x"], "at": NOW.isoformat()},
        "old@host": {"queues": ["gpu.y"], "at": (NOW - timedelta(seconds=21)).isoformat()},
        "gone@host": None,
        "broken@host": {"queues": ["gpu.z"], "at": "yesterday"},
    }
    consumed = live_queues(reports, now=NOW, stale_after=timedelta(seconds=20))
    assert consumed == {"gpu.x": ["a@host", "b@host"], "default": ["b@host"]}


def test_a_follower_adds_the_model_queues_it_does_not_read_yet_never_default():
    assert queues_to_follow(consuming=["models.idle", "gpu.a"], wanted=["gpu.b", "gpu.a", "default"]) == [
        "gpu.b"
    ]


def test_a_following_reporter_adds_new_endpoint_queues_and_reports_them(settings):
    consuming = ["models.idle"]
    added: list[str] = []

    def add(queue):
        added.append(queue)
        consuming.append(queue)

    from evaluation.selectors import model_queues

    reporter = QueueReporter(
        hostname="models1@h", consuming=lambda: consuming, add=add, wanted=model_queues, interval_s=5
    )
    assert reporter.tick() == []
    assert queues_consumed() == {"models.idle": ["models1@h"]}

    ModelEndpoint.objects.create(slug="baru", model_id="m", base_url="http://x/v1", queue="gpu.baru")
    ModelEndpoint.objects.create(slug="web", model_id="m", base_url="http://x/v1", queue="default")
    assert reporter.tick() == ["gpu.baru"]
    assert added == ["gpu.baru"]
    assert queues_consumed()["gpu.baru"] == ["models1@h"]
    assert reporter.tick() == []  # already read: added once

    reporter.stop()
    assert queues_consumed() == {}


def test_a_reporter_that_does_not_follow_reports_what_it_reads():
    ModelEndpoint.objects.create(slug="baru", model_id="m", base_url="http://x/v1", queue="gpu.baru")
    reporter = QueueReporter(
        hostname="default@h", consuming=lambda: ["default"], add=pytest.fail, wanted=None, interval_s=5
    )
    assert reporter.tick() == []
    worker_queues_report(hostname="other@h", queues=["gpu.c"], now=NOW - timedelta(hours=1))
    assert queues_consumed() == {"default": ["default@h"]}
