"""A study's import as a background job: queued, run by the worker through ``tool_study_import``, all or
nothing whether it succeeds, fails or is cancelled; retried from its upload."""

from __future__ import annotations

import json

import krippendorff
import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache

from analytics.services import project_alpha
from annotation import services
from annotation.models import Annotation, Project, Rubric, StudyImport
from annotation.services import study_imports
from annotation.tool_files import read_study
from datasets_app.models import Dataset
from tests.annotation.tool_studies import files
from webhooks.models import WebhookDelivery
from webhooks.services import webhook_create

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_progress_of_other_tests():
    cache.clear()


def _queue(tmp_path, *, name="Studi latar", tasks=None, user=None) -> StudyImport:
    path = files.write_json(tmp_path / "export.json", tasks or files.label_studio_rating_tasks())
    study = read_study("label_studio", path, shown="export.json")
    return services.study_import_queue(
        study=study,
        upload_path=path,
        original_filename="export.json",
        name=name,
        language="jav",
        created_by=user,
    )


def _nothing_written() -> None:
    assert not Dataset.objects.exists() and not Project.objects.exists()
    assert not Annotation.objects.exists()
    assert not get_user_model().objects.filter(username__startswith="ls-").exists()


def test_queued_import_runs_on_commit_into_a_project_with_answers(
    tmp_path, make_user, django_capture_on_commit_callbacks
):
    manager = make_user("project_manager")
    with django_capture_on_commit_callbacks(execute=True):
        job = _queue(tmp_path, user=manager)
    job.refresh_from_db()
    assert job.status == "succeeded" and job.attempts == 1 and job.errors == []
    assert job.counts == {"items": 4, "responses": 4, "annotators": 3, "answers": 11, "values": 19}
    assert job.criteria == {"quality": "quality", "correct": "correct"}
    project = job.project
    assert project.status == Project.Status.ACTIVE and project.created_by == manager
    assert project.dataset.prompts.first().language == "jav"
    assert not (tmp_path / "export.json").exists()  # the upload is removed once imported
    assert services.study_import_progress_get(job=job) is None
    # Ordinal alpha on the imported answers equals krippendorff.alpha on the file's values.
    units = ["p1", "p2", "p3", "p4"]
    matrix = np.array(
        [[files.RATINGS[c].get(u, np.nan) for u in units] for c in sorted(files.RATINGS)], dtype=float
    )
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal")
    rows = {r["criterion"]: r for r in project_alpha(project=project, level="ordinal", draws=0)}
    assert rows["quality"]["alpha"] == pytest.approx(expected, abs=1e-9)


def test_a_taken_name_is_refused_before_anything_is_queued(tmp_path):
    Dataset.objects.create(name="Sudah ada")
    with pytest.raises(services.ProjectInvalid, match="exists already"):
        _queue(tmp_path, name="Sudah ada")
    with pytest.raises(services.ProjectInvalid, match="a name"):
        _queue(tmp_path, name="  ")
    assert not StudyImport.objects.exists()


def test_cancelled_before_it_runs_leaves_nothing_and_runs_again_on_retry(
    tmp_path, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as sent:
        job = _queue(tmp_path)
    services.study_import_cancel(job=job)
    for callback in sent:  # the task arrives after the cancel: it finds nothing to run
        callback()
    job.refresh_from_db()
    assert job.status == "cancelled" and job.attempts == 0
    _nothing_written()
    assert (tmp_path / "export.json").exists()  # kept, so that it can be run again

    with django_capture_on_commit_callbacks(execute=True):
        services.study_import_retry(job=job)
    job.refresh_from_db()
    assert job.status == "succeeded" and job.project.assignments.count() == 11


def test_a_cancel_while_it_runs_rolls_the_whole_import_back(tmp_path, monkeypatch):
    job = _queue(tmp_path)
    seen = []
    store = study_imports._progress_store

    def cancel_at_answers(job_id: int, step: str) -> None:
        store(job_id, step)
        seen.append(services.study_import_progress_get(job=StudyImport.objects.get(pk=job_id)))
        if step == "answers":  # by then the dataset, the project and the accounts were written
            assert Project.objects.filter(name="Studi latar").exists()
            services.study_import_cancel(job=StudyImport.objects.get(pk=job_id))

    monkeypatch.setattr(study_imports, "_progress_store", cancel_at_answers)
    job = services.study_import_run(job=job, task_id=job.task_id)
    assert job.status == "cancelled" and job.project is None
    assert [p["step"] for p in seen] == ["read", "items", "project", "annotators", "answers"]
    assert [p["done"] for p in seen] == [0, 1, 2, 3, 4] and {p["total"] for p in seen} == {5}
    _nothing_written()
    assert not Rubric.objects.filter(criterion="correct").exists()  # the study's new criterion too


def test_a_file_that_went_bad_fails_with_every_problem_and_writes_nothing(tmp_path):
    job = _queue(tmp_path)
    tasks = files.label_studio_rating_tasks()
    tasks[0]["annotations"][1]["result"][0]["value"]["rating"] = -2
    tasks[3]["annotations"][0]["completed_by"] = ""
    (tmp_path / "export.json").write_text(json.dumps(tasks), encoding="utf-8")
    job = services.study_import_run(job=job, task_id=job.task_id)
    assert job.status == "failed" and job.n_errors == 2
    assert {(e["record"], e["field"]) for e in job.errors} == {
        ("task 1 annotation 112", "result[0].value.rating"),
        ("task 4 annotation 411", "completed_by"),
    }
    assert all(e["file"] == "export.json" and e["message"] for e in job.errors)
    _nothing_written()


def test_a_name_taken_while_it_waited_fails_on_the_name(tmp_path):
    job = _queue(tmp_path)
    Dataset.objects.create(name="Studi latar")
    job = services.study_import_run(job=job, task_id=job.task_id)
    assert job.status == "failed" and job.n_errors == 1 and job.errors[0]["field"] == "name"
    assert not Project.objects.exists()


def test_a_second_delivery_leaves_an_ended_import_alone(tmp_path):
    job = _queue(tmp_path)
    done = services.study_import_run(job=job, task_id=job.task_id)
    assert done.status == "succeeded"
    again = services.study_import_run(job=done, task_id=job.task_id)
    assert again.status == "succeeded" and Project.objects.count() == 1


def test_retry_is_refused_once_the_upload_is_gone(tmp_path):
    job = _queue(tmp_path)
    services.study_import_cancel(job=job)
    (tmp_path / "export.json").unlink()
    job.refresh_from_db()
    with pytest.raises(services.AnnotationError, match="upload it again"):
        services.study_import_retry(job=job)
    job.refresh_from_db()
    assert job.status == "cancelled"


def test_an_ended_import_tells_site_wide_webhooks(tmp_path, settings):
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    cache.clear()
    hook = webhook_create(project=None, url="http://127.0.0.1:18401/in", events=["import.finished"])
    job = _queue(tmp_path)
    job = services.study_import_run(job=job, task_id=job.task_id)
    delivery = WebhookDelivery.objects.get(endpoint=hook)
    assert delivery.event == "import.finished"
    assert delivery.payload["data"] == {
        "study_import": job.pk,
        "status": "succeeded",
        "project": job.project_id,
    }
    (tmp_path / "again").mkdir()
    failed = _queue(tmp_path / "again", name="Studi lain")
    Dataset.objects.create(name="Studi lain")
    failed = services.study_import_run(job=failed, task_id=failed.task_id)
    assert failed.status == "failed"
    assert WebhookDelivery.objects.filter(endpoint=hook).latest("id").payload["data"] == {
        "study_import": failed.pk,
        "status": "failed",
        "project": None,
    }
