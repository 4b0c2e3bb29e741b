"""Exported folders load back with ``datasets.load_dataset(folder)`` offline; the demo project exports."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from huggingface_hub import DatasetCard

from annotation.models import Project
from demo.services import DEMO_PROJECTS, demo_load
from exports.services import ExportOptions, export_create
from tests.exports.conftest import canonical_models, drain, load_offline, load_offline_many

pytestmark = pytest.mark.django_db


def run(project, tmp_path, settings, capture, **options):
    settings.EXPORTS_DIR = tmp_path / "exports"
    with capture(execute=True):
        record = export_create(project=project, options=ExportOptions(bootstrap_draws=100, **options))
    record.refresh_from_db()
    assert record.status == "succeeded", record.error
    return record


def test_hf_folder_round_trip_rows_and_card(
    likert_project, tmp_path, settings, django_capture_on_commit_callbacks
):
    record = run(likert_project, tmp_path, settings, django_capture_on_commit_callbacks, pretty_name="Contoh")
    loaded = load_offline(tmp_path / "exports" / f"export-{record.pk}", tmp_path)
    assert list(loaded) == ["train"]
    train = loaded["train"]
    assert len(train["rows"]) == 6
    assert train["columns"][:4] == ["item_id", "prompt_external_id", "prompt", "chosen"]
    row = next(
        r for r in train["rows"] if r["chosen_model"] == "zeta-7b" and r["rejected_model"] == "kappa-70b"
    )
    assert row["chosen"] == [
        {"role": "assistant", "content": f"Jawaban zeta-7b untuk {row['prompt_external_id'][-1]} giliran 1"}
    ]
    assert row["margin"] == 5.0 and row["n_annotators"] == 2

    card = DatasetCard.load(tmp_path / "exports" / f"export-{record.pk}" / "README.md")
    assert card.data.pretty_name == "Contoh"
    assert card.data.license == "cc-by-4.0"
    assert card.data.language == ["ind", "sun"]
    assert card.data.size_categories == ["n<1K"]
    assert card.data.task_categories == ["text-generation"]
    assert card.data.configs == [
        {"config_name": "default", "data_files": [{"split": "train", "path": "data/train-*"}]}
    ]
    assert "Krippendorff's alpha per criterion" in card.text


def test_trl_layouts_load(pairwise_project, tmp_path, settings, django_capture_on_commit_callbacks):
    kinds = ("trl-strings", "trl-messages")
    records = [
        run(pairwise_project, tmp_path, settings, django_capture_on_commit_callbacks, kind=k) for k in kinds
    ]
    folders = [tmp_path / "exports" / f"export-{record.pk}" for record in records]
    strings, messages = (loaded["train"] for loaded in load_offline_many(folders, tmp_path))
    for train in (strings, messages):
        assert train["columns"][:3] == ["prompt", "chosen", "rejected"]
        assert len(train["rows"]) == 3
    row = next(r for r in strings["rows"] if r["rejected_model"] == "omega-13b")
    assert row["prompt"] == "User: Pertanyaan 0 giliran 1\n\nAssistant:"
    assert row["chosen"] == " Jawaban zeta-7b untuk 0 giliran 1"
    row = next(r for r in messages["rows"] if r["rejected_model"] == "omega-13b")
    assert row["prompt"] == [{"role": "user", "content": "Pertanyaan 0 giliran 1"}]
    assert row["rejected"] == [{"role": "assistant", "content": "Jawaban omega-13b untuk 0 giliran 1"}]


def test_two_turn_prompts_keep_every_turn(
    make_rating_project, tmp_path, settings, django_capture_on_commit_callbacks
):
    from tests.exports.conftest import pairwise_plan

    project = make_rating_project(kind="pairwise", n_annotators=3, n_turns=2, pair_mode="all")
    for index, user in enumerate(project.annotators):
        drain(project, user, pairwise_plan(index))
    record = run(project, tmp_path, settings, django_capture_on_commit_callbacks)
    train = load_offline(tmp_path / "exports" / f"export-{record.pk}", tmp_path)["train"]
    row = next(r for r in train["rows"] if r["prompt_external_id"] == "ext-0001")
    assert row["prompt"] == [{"role": "user", "content": "Pertanyaan 1 giliran 1"}]
    assert row["chosen"] == [
        {"role": "assistant", "content": "Jawaban zeta-7b untuk 1 giliran 1"},
        {"role": "user", "content": "Pertanyaan 1 giliran 2"},
        {"role": "assistant", "content": "Jawaban zeta-7b untuk 1 giliran 2"},
    ]


def test_demo_project_exports_to_a_valid_dataset_folder(
    tmp_path, settings, django_capture_on_commit_callbacks
):
    demo_load(password="demo-export-test", simulate=False)
    project = Project.objects.get(name=DEMO_PROJECTS[0])

    def plan_for(index: int):
        def plan(assignment):
            models = canonical_models(assignment)
            # A fixed preference per model, nudged per annotator so that annotators disagree a little.
            values = [1 + (len(name) * 7 + index * (m % 2)) % 5 for m, name in enumerate(models)]
            shown = [values[c] for c in assignment.permutation]
            ratings = {str(i + 1): {"relevance": v, "fluency": max(1, v - 1)} for i, v in enumerate(shown)}
            return {"ratings": ratings, "best": shown.index(max(shown)) + 1}

        return plan

    users = get_user_model().objects.filter(username__in=["anotator1", "anotator2", "anotator3", "anotator4"])
    done = sum(drain(project, user, plan_for(i)) for i, user in enumerate(users.order_by("username")))
    assert done == 4 * project.n_tasks
    record = run(project, tmp_path, settings, django_capture_on_commit_callbacks, test_size=0.2, seed=5)
    loaded = load_offline(tmp_path / "exports" / f"export-{record.pk}", tmp_path)
    assert set(loaded) == set(record.counts["split_rows"]) == {"train", "test"}
    assert {name: len(part["rows"]) for name, part in loaded.items()} == record.counts["split_rows"]
    train_prompts = {r["item_id"] for r in loaded["train"]["rows"]}
    assert train_prompts.isdisjoint({r["item_id"] for r in loaded["test"]["rows"]})
    card = DatasetCard.load(tmp_path / "exports" / f"export-{record.pk}" / "README.md")
    assert card.data.license == "cc-by-4.0"
    assert set(card.data.language) <= {"ind", "sun", "jav"} and len(card.data.language) == 3
