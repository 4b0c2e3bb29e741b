"""The demo end to end: `manage.py demo` against a real llama.cpp server reaches a judged, exported project.

Celery runs eagerly here, so the judge run's chunks are processed as the command commits them, through the
production code path (OpenAI-compatible backend, judge templates, parsing, verdicts). Two prompts keep the
run short on a CPU: 6 pairs, one random order each.
"""

import json

import pytest
from django.core.management import call_command

from annotation.models import Annotation, Project
from demo.services import PAIRWISE_PROJECT, RATING_PROJECT, SIMULATED_GROUP
from evaluation.models import JudgeRun, PairVerdict
from exports.models import Export
from tests.exports.conftest import load_offline

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.timeout(900)
def test_demo_reaches_a_judged_and_exported_project(
    llamacpp_server, llamacpp_model_id, settings, tmp_path, capsys, client
):
    settings.EXPORTS_DIR = tmp_path / "exports"
    call_command(
        "demo",
        "--json",
        "--password",
        "demo-story-1",
        "--prompts",
        "2",
        "--model-url",
        llamacpp_server,
        "--model-id",
        llamacpp_model_id,
        "--judge-orders",
        "random",
        "--max-tokens",
        "160",
    )
    payload = json.loads(capsys.readouterr().out)

    # Simulated answers: every rating and pairwise task twice (k=2 in the simulated group), every question
    # three times, half the translation units reviewed.
    assert payload["simulated_answers"] == {
        "likert": 4,
        "pairwise": 12,
        "mcq_answer": 24,
        "translation_review": 8,
    }
    pairwise = Project.objects.get(name=PAIRWISE_PROJECT)
    assert pairwise.n_tasks == 6
    simulated = Annotation.objects.filter(
        assignment__project=pairwise, assignment__group__name=SIMULATED_GROUP
    ).count()
    assert simulated == 12

    # The judge run finished over every pairwise task, each verdict from the model's real reply.
    run = JudgeRun.objects.get(pk=payload["judge_run"]["id"])
    assert run.annotation_project_id == pairwise.pk
    assert run.status == "succeeded", run.error
    assert run.n_total == 6 and run.n_done == 6
    verdicts = PairVerdict.objects.filter(judge_run=run)
    assert verdicts.count() == 6
    assert run.judgments.exclude(raw_output="").count() == 6

    # The export is a loadable Hugging Face dataset folder whose card says the answers are simulated.
    export = Export.objects.get(pk=payload["export"]["id"])
    assert export.status == "succeeded", export.error
    loaded = load_offline(tmp_path / "exports" / f"export-{export.pk}", tmp_path)
    assert sum(len(split["rows"]) for split in loaded.values()) > 0
    card = (tmp_path / "exports" / f"export-{export.pk}" / "README.md").read_text()
    assert "simulated" in card

    # The researcher's dashboard shows agreement and the judge beside the simulated humans.
    assert client.login(username="peneliti", password="demo-story-1")
    page = client.get(f"/analytics/projects/{pairwise.pk}/")
    assert page.status_code == 200
    html = page.content.decode()
    assert f"demo-llm (run {run.pk})" in html  # the judge's row on the leaderboard
    rating = Project.objects.get(name=RATING_PROJECT)
    assert client.get(f"/analytics/projects/{rating.pk}/").status_code == 200
