"""End to end through Redis and a real worker process: a study from another tool imported in the background."""

import pytest

from annotation.models import Annotation, StudyImport
from config.celery import app as celery_app
from datasets_app.models import Dataset
from tests.annotation.tool_studies import files
from tests.integration.conftest import wait_for

pytestmark = pytest.mark.integration


def test_a_study_import_runs_on_a_real_worker_once(celery_worker_process, tmp_path, make_user):
    assert celery_app.conf.broker_url.startswith("redis://")
    path = files.write_json(tmp_path / "export.json", files.label_studio_rating_tasks())
    job = StudyImport.objects.create(
        tool="label_studio",
        name="Studi pekerja",
        upload_path=str(path),
        original_filename="export.json",
        mapping={"prompt": "prompt", "responses": ["answer"], "item_id": "item"},
        created_by=make_user("project_manager"),
    )
    celery_worker_process(concurrency=2)
    # The task sent twice (a duplicate delivery): one import, not two.
    for _ in range(2):
        celery_app.send_task(
            "annotation.study_import_run", args=[job.pk], task_id=job.task_id, queue="default"
        )

    def finished():
        job.refresh_from_db()
        return job.status in ("succeeded", "failed")

    wait_for(finished, timeout=90, message="the study import to finish")
    assert job.status == "succeeded", job.errors
    assert job.attempts == 1 and job.counts["answers"] == 11
    assert Annotation.objects.filter(assignment__project=job.project).count() == 19
    assert job.project.dataset.prompts.filter(external_id="p3").exists()  # read with the stored mapping
    assert Dataset.objects.filter(name="Studi pekerja").count() == 1
    assert not path.exists()
