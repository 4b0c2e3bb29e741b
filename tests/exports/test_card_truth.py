"""What an export's card says is true: judge agreement after a judge run, provenance, the written columns,
the seed as written, and a how-to-load call that runs; no weights, rubric or guidelines that the export does
not have, the criteria a score weighs and leaves out (on the form too, in both languages), and who did the
work of a parallel corpus or question set, simulated annotators included."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator

import pandas as pd
import pyarrow.parquet as pq
import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from django.utils import translation
from huggingface_hub import DatasetCard

from analytics.domain import judge_agreement as ja
from annotation.models import Task
from datasets_app.models import Response
from demo.services import SIMULATED_LAST_NAME
from evaluation.services import backend_cache_clear, judge_run_start
from exports.services import ExportOptions, export_create
from tests.evaluation.inference.openai_stub_server import Reply, StubOpenAIServer, completion_body
from tests.evaluation.services.builders import last_user, make_endpoint, shown_block
from tests.exports import test_parallel_corpus_export as corpus_fixtures
from tests.exports import test_question_set_export as question_fixtures
from tests.exports import test_scaled_export as scaled_fixtures
from tests.exports.conftest import MODELS, VOTES

pytestmark = pytest.mark.django_db
User = get_user_model()


@pytest.fixture
def server() -> Iterator[StubOpenAIServer]:
    stub = StubOpenAIServer().start()
    yield stub
    backend_cache_clear()
    stub.stop()


def earlier_model_judge(body: dict) -> Reply:
    """Prefers the response written by the model listed first in ``MODELS`` (consistent in both orders)."""
    text = last_user(body)

    def rank(number: int) -> int:
        block = shown_block(text, number)
        return next(i for i, model in enumerate(MODELS) if model in block)

    winner = "Response 1" if rank(1) < rank(2) else "Response 2"
    return Reply(body=completion_body(json.dumps({"explanation": "earlier", "score": winner})))


def export(project, tmp_path, settings, capture, **options):
    settings.EXPORTS_DIR = tmp_path / "exports"
    with capture(execute=True):
        record = export_create(project=project, options=ExportOptions(bootstrap_draws=0, **options))
    record.refresh_from_db()
    assert record.status == "succeeded", record.error
    folder = tmp_path / "exports" / f"export-{record.pk}"
    return record, folder, (folder / "README.md").read_text(encoding="utf-8")


def test_card_judge_agreement_equals_judge_agreement_on_the_same_votes(
    pairwise_project, server, tmp_path, settings, django_capture_on_commit_callbacks
):
    server.responder = earlier_model_judge
    judge = make_endpoint(server, "juri")
    with django_capture_on_commit_callbacks(execute=True):
        run = judge_run_start(judge_kind="pairwise", endpoint=judge, annotation_project=pairwise_project)
    run.refresh_from_db()
    assert (run.status, run.n_done) == ("succeeded", 6)

    record, _, card = export(pairwise_project, tmp_path, settings, django_capture_on_commit_callbacks)
    figures = record.counts["judges"]
    assert list(figures) == [f"juri (run {run.pk})"]
    on_card = figures[f"juri (run {run.pk})"]

    # The same votes, built by hand from the plan: item = the pair (smaller response id first), human vote
    # A/B/tie in that orientation (both bad counts as tie), the judge always for the earlier model.
    human, verdicts = [], []
    for task in Task.objects.filter(project=pairwise_project).select_related("prompt"):
        lo, hi = sorted((task.response_a_id, task.response_b_id))
        models = dict(Response.objects.filter(pk__in=(lo, hi)).values_list("pk", "model_name"))
        pair = sorted(models.values(), key=MODELS.index)
        for annotator, winner in enumerate(VOTES[(task.prompt.external_id, *pair)]):
            vote = {models[lo]: "A", models[hi]: "B"}.get(winner, "tie")
            human.append({"item": f"{lo}-{hi}", "annotator": annotator, "vote": vote})
        verdicts.append({"item": f"{lo}-{hi}", "vote": "A" if pair[0] == models[lo] else "B"})
    expected = ja.human_judge_agreement(pd.DataFrame(human), pd.DataFrame(verdicts))
    assert on_card["with_ties"] == pytest.approx(expected.with_ties)
    assert on_card["without_ties"] == pytest.approx(expected.without_ties)
    assert (on_card["n_with_ties"], on_card["n_without_ties"]) == (
        expected.n_with_ties,
        expected.n_without_ties,
    )
    # By hand: the judge agrees with 3+2+1+1+3+1 = 11 of 18 votes; the 5 tie / both-bad votes drop out
    # without ties, leaving 11 of 13.
    assert (on_card["with_ties"], on_card["n_with_ties"]) == (pytest.approx(11 / 18), 18)
    assert (on_card["without_ties"], on_card["n_without_ties"]) == (pytest.approx(11 / 13), 13)
    assert (on_card["n"], on_card["consistent"]) == (6, 1.0)
    assert f"| juri (run {run.pk}) | 0.611 | 18 | 0.846 | 13 | 6 | 1 | 0 | 0 | 0 |" in card


def test_simulated_annotators_are_declared(
    pairwise_project, tmp_path, settings, django_capture_on_commit_callbacks
):
    # Marked as the demo marks its simulated annotators (demo.services).
    for user in pairwise_project.annotators:
        user.last_name = SIMULATED_LAST_NAME
        user.set_unusable_password()
        user.save()
    record, folder, card = export(
        pairwise_project, tmp_path, settings, django_capture_on_commit_callbacks, provenance="expert"
    )
    assert record.options["provenance"] == "simulated"
    assert DatasetCard.load(folder / "README.md").data.annotations_creators == ["machine-generated"]
    assert "The judgements are simulated" in card and "Native speakers judged" not in card


def test_stated_crowd_provenance(pairwise_project, tmp_path, settings, django_capture_on_commit_callbacks):
    record, folder, card = export(
        pairwise_project, tmp_path, settings, django_capture_on_commit_callbacks, provenance="crowd"
    )
    assert DatasetCard.load(folder / "README.md").data.annotations_creators == ["crowdsourced"]
    assert "Crowd workers judged" in card


def card_columns(card: str) -> list[str]:
    table = card.split("## Columns\n\n", 1)[1].split("\n\n", 1)[0].splitlines()[2:]
    return [re.match(r"\| `([^`]+)` \|", row).group(1) for row in table]


def test_column_table_is_the_parquet_schema_and_the_seed_is_plain(
    likert_project, tmp_path, settings, django_capture_on_commit_callbacks
):
    _, folder, card = export(
        likert_project, tmp_path, settings, django_capture_on_commit_callbacks, seed=2024
    )
    schema = pq.read_schema(folder / "data" / "train-00000-of-00001.parquet")
    assert card_columns(card) == schema.names
    # The six columns the old table left out, and the criterion columns it named only by pattern.
    for name in ("prompt_external_id", "chosen_response_id", "rejected_response_id", "dataset_id"):
        assert name in schema.names
    assert {"chosen_score_relevance", "rejected_score_fluency"} <= set(schema.names)
    assert "chosen_score_<criterion>" not in card
    assert "| seed | 2024 |" in card and "2,024" not in card


def test_trl_column_table_follows_its_own_schema(
    pairwise_project, tmp_path, settings, django_capture_on_commit_callbacks
):
    _, folder, card = export(
        pairwise_project, tmp_path, settings, django_capture_on_commit_callbacks, kind="trl-strings"
    )
    assert card_columns(card) == pq.read_schema(folder / "data" / "train-00000-of-00001.parquet").names


def test_how_to_load_code_runs_as_printed(
    likert_project, tmp_path, settings, django_capture_on_commit_callbacks
):
    _, folder, card = export(
        likert_project, tmp_path, settings, django_capture_on_commit_callbacks, test_size=0.5, seed=3
    )
    code = card.split("## How to load", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    assert f'load_dataset("{folder.name}")' in code
    script = code + "\nprint(sorted((name, len(part)) for name, part in dataset.items()))\n"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=folder.parent,
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    # 2 prompts, 0.5 -> one test prompt; 3 pairs each.
    assert done.stdout.strip().splitlines()[-1] == "[('test', 3), ('train', 3)]"
    assert "too small for a test share of 0.5" in card


def test_an_unfinished_judge_run_is_marked_partial_on_the_card(
    pairwise_project, tmp_path, settings, django_capture_on_commit_callbacks
):
    from evaluation.models import JudgeRun, JudgeTemplate, ModelEndpoint, PairVerdict

    template = JudgeTemplate.objects.get_or_create(
        kind="pairwise", language="en", version=99, defaults={"user": "x"}
    )[0]
    run = JudgeRun.objects.create(
        judge_kind="pairwise",
        endpoint=ModelEndpoint.objects.create(slug="juri-setengah", model_id="x"),
        template=template,
        annotation_project=pairwise_project,
        status="running",
        n_total=6,
    )
    task = Task.objects.filter(project=pairwise_project).order_by("pk").first()
    PairVerdict.objects.create(
        judge_run=run,
        target_key=f"task:{task.pk}",
        prompt=task.prompt,
        response_a=task.response_a,
        response_b=task.response_b,
        annotation_task_id=task.pk,
        verdict="A",
        consistency="consistent",
    )
    record, _, card = export(pairwise_project, tmp_path, settings, django_capture_on_commit_callbacks)
    assert record.counts["judges"][f"juri-setengah (run {run.pk})"]["partial"] == "partial: 1 of 6 items"
    assert "| unfinished run |" in card and "partial: 1 of 6 items |" in card


# --- a card says only what is true of its export --------------------------------------------------------

scaled_project = scaled_fixtures.scaled_project
corpus_project = corpus_fixtures.corpus_project
answering = question_fixtures.answering


def simulate(*users) -> None:
    """Mark ``users`` as the demo marks its simulated annotators (demo.services)."""
    for user in users:
        user.last_name = SIMULATED_LAST_NAME
        user.set_unusable_password()
        user.save()


def test_a_pairwise_card_names_no_score_weights_and_no_rubric_it_does_not_have(
    pairwise_project, tmp_path, settings, django_capture_on_commit_callbacks
):
    _, _, card = export(pairwise_project, tmp_path, settings, django_capture_on_commit_callbacks)
    # Votes are not scores: no weights, ordering or scales; no criterion is rated, so there is no rubric.
    for row in ("| weights |", "| ordering |", "| scales |", "Criteria in the score"):
        assert row not in card
    assert "Rubric" not in card and "rubric" not in card
    assert "| reliability_weights | false |" in card
    # The guidelines are there, and the card says the annotators followed them (and only them).
    assert "each annotator, following the guidelines below." in card
    assert "## Annotation guidelines" in card and "Rate every answer for relevance and fluency." in card


def test_no_guidelines_are_promised_when_there_are_none(
    pairwise_project, tmp_path, settings, django_capture_on_commit_callbacks
):
    pairwise_project.instructions_en = pairwise_project.instructions_id = ""
    pairwise_project.save()
    _, _, card = export(pairwise_project, tmp_path, settings, django_capture_on_commit_callbacks)
    assert (
        "following" not in card
        and "guidelines" not in card
        and "not computed" not in card.split("## Agreement")[0]
    )


def test_who_judged_is_not_stated_unless_the_exporter_says(
    likert_project, tmp_path, settings, django_capture_on_commit_callbacks
):
    record, folder, card = export(likert_project, tmp_path, settings, django_capture_on_commit_callbacks)
    assert record.options["provenance"] == "unstated"
    assert DatasetCard.load(folder / "README.md").data.annotations_creators == ["other"]
    assert "Native speakers" not in card
    assert (
        "2 annotators judged the responses without seeing which model wrote them, in an order shuffled for "
        "each annotator, following the rubric and guidelines below. Who they were (native speakers, experts "
        "or crowd workers) was not stated when this dataset was exported."
    ) in card
    assert "Rubric version: relevance v1, fluency v1" in card
    # (PostgreSQL's jsonb keeps the stored weights in its own key order.)
    weighed = re.search(r"Criteria in the score: (.*)\.\n", card).group(1).split(", ")
    assert sorted(weighed) == ["`fluency` (weight 1)", "`relevance` (weight 1)"]
    assert "left out of the score" not in card
    # Stated, it is written as stated.
    _, _, card = export(
        likert_project, tmp_path, settings, django_capture_on_commit_callbacks, provenance="expert"
    )
    assert "Native speakers judged" in card and "was not stated" not in card


def test_a_score_card_names_the_criteria_it_weighs_and_those_it_leaves_out(
    scaled_project, tmp_path, settings, django_capture_on_commit_callbacks
):
    _, _, card = export(scaled_project, tmp_path, settings, django_capture_on_commit_callbacks)
    assert "Criteria in the score: `relevance` (weight 1), `helpfulness` (weight 1)." in card
    assert (
        "Rated criteria left out of the score: `safe`: rated on named categories (yes, no), which have no "
        "order, so it cannot enter a score (its answers are in the raw annotation exports)."
    ) in card
    _, _, card = export(
        scaled_project,
        tmp_path,
        settings,
        django_capture_on_commit_callbacks,
        weights={"helpfulness": 2.0},
    )
    assert "Criteria in the score: `helpfulness` (weight 2)." in card
    assert "`relevance`: not named in the weights; `safe`: rated on named categories (yes, no)" in card


def test_the_form_says_which_criteria_weigh_in_both_languages(role_client, scaled_project, pairwise_project):
    client = role_client("researcher")
    url = reverse("exports:export_new", args=[scaled_project.pk])
    page = client.get(url).content.decode()
    assert "every criterion weighs 1" not in page
    assert (
        "empty: relevance, helpfulness weigh 1 each. Left out of every score: safe (rated on named "
        "categories, which have no order)."
    ) in page
    page = client.get(url, HTTP_ACCEPT_LANGUAGE="id").content.decode()
    assert (
        "kosong: relevance, helpfulness masing-masing berbobot 1. Tidak pernah masuk skor: safe (dinilai "
        "dengan kategori bernama, yang tidak berurutan)."
    ) in page
    preview_url = reverse("exports:export_preview", args=[scaled_project.pk])
    form = {"kind": "hf", "min_margin": 0, "min_annotators": 1, "test_size": 0, "ordering": "weighted"}
    html = client.post(preview_url, form, HTTP_HX_REQUEST="true").content.decode()
    assert "Criteria in the score: relevance (1), helpfulness (1)" in html
    assert (
        "Rated criteria left out of the score: safe (rated on named categories (yes, no), which have no order)"
        in html
    )
    html = client.post(preview_url, form, HTTP_HX_REQUEST="true", HTTP_ACCEPT_LANGUAGE="id").content.decode()
    assert "Kriteria dalam skor: relevance (1), helpfulness (1)" in html
    assert (
        "Kriteria yang dinilai tetapi tidak masuk skor: safe (dinilai dengan kategori bernama (yes, no), yang tidak berurutan)"
        in html
    )
    # A pairwise project has nothing to weigh: no weights and no ordering on its form; the provenance is
    # "not stated" until the exporter says otherwise.
    page = client.get(reverse("exports:export_new", args=[pairwise_project.pk])).content.decode()
    assert 'name="weights"' not in page and 'name="ordering"' not in page
    assert '<option value="" selected>Not stated</option>' in page


def test_a_parallel_corpus_card_says_who_reviewed(
    corpus_project, role_client, tmp_path, settings, django_capture_on_commit_callbacks
):
    reviewer = User.objects.get(username=corpus_fixtures.REVIEWER[0])
    simulate(reviewer)
    record, folder, card = export(
        corpus_project, tmp_path, settings, django_capture_on_commit_callbacks, kind=""
    )
    assert record.kind == "parallel-corpus"
    assert "written by a native speaker" not in card
    assert 'corpus of the translation review project "Periksa terjemahan"' in card
    # u00, u01, u04 translated by one person; u03 imported (a name only, never reviewed in Timbang). The
    # simulated reviewer gave every verdict: accept u00, reject then accept u01, fix u04.
    assert "| translations (units) | 4 | 3 (1 person) | 0 | 1 |" in card
    assert "| review verdicts (every round) | 4 | 0 | 4 (1 simulated annotator) | 0 |" in card
    assert "| accepting verdicts (units) | 3 | 0 | 3 (1 simulated annotator) | 0 |" in card
    assert "Of the 4 units, 1 was imported as already accepted and not reviewed in Timbang." in card
    assert "A simulated annotator is a program standing in for a person" in card
    tags = DatasetCard.load(folder / "README.md").data.tags
    assert "human-reviewed" not in tags and "simulated-annotators" in tags
    # The form's preview says the same, in both languages.
    client = role_client("researcher")
    url = reverse("exports:export_preview", args=[corpus_project.pk])
    html = client.post(url, {"kind": "parallel-corpus"}, HTTP_HX_REQUEST="true").content.decode()
    assert (
        '<td>Accepting verdicts</td><td class="num">3</td><td class="num">0 (0 people)</td><td class="num">3 (1 simulated annotator)</td>'
        in html
    )
    html = client.post(
        url, {"kind": "parallel-corpus"}, HTTP_HX_REQUEST="true", HTTP_ACCEPT_LANGUAGE="id"
    ).content.decode()
    assert (
        '<td>Putusan menerima</td><td class="num">3</td><td class="num">0 (0 orang)</td><td class="num">3 (1 anotator simulasi)</td>'
        in html
    )


def test_a_people_reviewed_corpus_keeps_its_tag_and_names_no_simulation(
    corpus_project, tmp_path, settings, django_capture_on_commit_callbacks
):
    # A worker with Indonesian active still writes the English card in English.
    with translation.override("id"):
        _, folder, card = export(
            corpus_project, tmp_path, settings, django_capture_on_commit_callbacks, kind=""
        )
    assert 'corpus of the translation review project "Periksa terjemahan"' in card
    assert "| accepting verdicts (units) | 3 | 3 (1 person) | 0 | 0 |" in card
    assert "| review verdicts (every round) | 4 | 4 (1 person) | 0 | 0 |" in card
    assert "A simulated annotator is" not in card
    tags = DatasetCard.load(folder / "README.md").data.tags
    assert "human-reviewed" in tags and "simulated-annotators" not in tags


def test_a_question_set_card_says_who_answered(
    answering, tmp_path, settings, django_capture_on_commit_callbacks
):
    simulate(User.objects.get(username=question_fixtures.ANSWERERS[0][0]))
    _, folder, card = export(answering, tmp_path, settings, django_capture_on_commit_callbacks, kind="")
    # q0 and q2 are in the set, answered by all three; q1 is over the ambiguity limit.
    assert "| answers (`n_answers`) | 6 | 4 (2 people) | 2 (1 simulated annotator) | 0 |" in card
    assert "| questions written | 2 | 2 (1 person) | 0 | 0 |" in card
    assert "Of the 2 questions, 2 were imported as already accepted and not reviewed in Timbang." in card
    assert "Answers by simulated annotators count in `n_answers`, `accuracy` and `n_ambiguous`" in card
    assert "simulated-annotators" in DatasetCard.load(folder / "README.md").data.tags
