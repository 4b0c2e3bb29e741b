"""Export service on small projects annotated through the annotation services (plans in conftest.py).

Likert (both prompts alike): relevance means zeta 4.5, omega 3, kappa 1.5; fluency means 4, 4, 2; so
with weights relevance=1, fluency=1 the scores are zeta 8.5, omega 7.0, kappa 3.5 and each prompt gives
zeta>omega (margin 1.5), zeta>kappa (5.0), omega>kappa (3.5).
"""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from exports.models import Export
from exports.services import ExportInvalid, ExportOptions, export_create, export_preview, export_run

pytestmark = pytest.mark.django_db


def run(project, tmp_path, settings, django_capture_on_commit_callbacks, **options) -> Export:
    settings.EXPORTS_DIR = tmp_path / "exports"
    with django_capture_on_commit_callbacks(execute=True):
        record = export_create(project=project, options=ExportOptions(bootstrap_draws=200, **options))
    record.refresh_from_db()
    return record


def rows(folder, split="train"):
    table = pq.read_table(folder / "data" / f"{split}-00000-of-00001.parquet")
    return table.to_pylist()


def test_likert_scores_export_writes_pairs_counts_card_and_zip(
    likert_project, tmp_path, settings, django_capture_on_commit_callbacks
):
    record = run(likert_project, tmp_path, settings, django_capture_on_commit_callbacks)
    assert record.status == "succeeded", record.error
    assert (record.progress, record.kind, record.strategy) == (100, "hf", "scores")
    folder = tmp_path / "exports" / f"export-{record.pk}"
    assert record.folder_path == str(folder)
    assert record.zip_path == str(folder.with_name(folder.name + ".zip"))
    got = sorted(
        (r["prompt_external_id"], r["chosen_model"], r["rejected_model"], r["margin"]) for r in rows(folder)
    )
    assert got == [
        ("ext-0000", "omega-13b", "kappa-70b", 3.5),
        ("ext-0000", "zeta-7b", "kappa-70b", 5.0),
        ("ext-0000", "zeta-7b", "omega-13b", 1.5),
        ("ext-0001", "omega-13b", "kappa-70b", 3.5),
        ("ext-0001", "zeta-7b", "kappa-70b", 5.0),
        ("ext-0001", "zeta-7b", "omega-13b", 1.5),
    ]
    first = rows(folder)[0]
    assert first["prompt"] == [{"role": "user", "content": "Pertanyaan 0 giliran 1"}]
    assert first["chosen_score_relevance"] == 4.5 and first["n_annotators"] == 2
    counts = record.counts
    assert counts["pairs"]["pairs_out"] == 6 and counts["pairs"]["ties_dropped"] == 0
    assert counts["split_rows"] == {"train": 6}
    # Relevance (ordinal), values 5/4, 3/3, 1/2 on both prompts: mid-ranks 1, 3, 6, 9, 11 give
    # D_o = 32/12 and D_e = 3264/132, alpha = 1 - 4224/39168 = 0.892157.
    assert counts["alpha"]["relevance"]["alpha"] == pytest.approx(0.892157, abs=1e-6)
    assert counts["alpha"]["relevance"]["n_units"] == 6
    # Fluency: both annotators agree everywhere (with variation): alpha 1 and every defined draw is 1.
    assert counts["alpha"]["fluency"]["alpha"] == pytest.approx(1.0)
    assert counts["alpha"]["fluency"]["ci95"] == pytest.approx([1.0, 1.0])
    # Best picks (nominal, units = prompts): ext-0000 zeta/omega, ext-0001 zeta/zeta: D_o = 2/4,
    # D_e = (16 - 6) / 12, alpha = 1 - 0.5 / (10/12) = 0.4.
    assert counts["alpha"]["best pick"]["alpha"] == pytest.approx(0.4)

    card = (folder / "README.md").read_text(encoding="utf-8")
    assert 'license: "cc-by-4.0"' in card
    assert "| relevance | ordinal | 0.892 |" in card
    assert "Rubric version: relevance v1, fluency v1" in card
    assert "Rate every answer for relevance and fluency." in card  # guidelines (project instructions)
    assert "Agreement of LLM judges with the human preference: no judge verdicts on these prompts." in card
    assert (tmp_path / "exports" / f"export-{record.pk}.zip").is_file()


def test_min_margin_and_weights_drop_and_count(likert_project):
    preview = export_preview(project=likert_project, options=ExportOptions(min_margin=2.0))
    # zeta>omega (1.5) falls below the margin on both prompts.
    assert preview["pairs"]["pairs_out"] == 4 and preview["pairs"]["below_margin_dropped"] == 2
    # Fluency alone: zeta 4 = omega 4 is a tie on each prompt; both beat kappa (2) by 2.
    preview = export_preview(project=likert_project, options=ExportOptions(weights={"fluency": 1.0}))
    assert preview["pairs"]["ties_dropped"] == 2 and preview["pairs"]["pairs_out"] == 4
    assert preview["split_rows"] == {"train": 4}


def test_best_vs_rest_from_likert_best_picks(likert_project):
    # ext-0000: zeta 1 pick, omega 1 pick: shared top, no pair. ext-0001: zeta 2 picks beats both others.
    preview = export_preview(project=likert_project, options=ExportOptions(strategy="best_vs_rest"))
    assert preview["pairs"]["ties_dropped"] == 1
    assert preview["pairs"]["pairs_out"] == 2
    assert preview["categories"] == {"math": {"train": 2}}


def test_item_filters(likert_project):
    # Item agreement (scores cells): relevance agrees on omega only, fluency on all three: 4 of 6 cells.
    preview = export_preview(project=likert_project, options=ExportOptions(min_agreement=0.9))
    assert preview["pairs"]["filtered_items"]["min_agreement"] == 2 and preview["pairs"]["pairs_out"] == 0
    preview = export_preview(project=likert_project, options=ExportOptions(languages=["sun"]))
    assert preview["pairs"]["filtered_items"]["language"] == 1 and preview["pairs"]["pairs_out"] == 3
    preview = export_preview(project=likert_project, options=ExportOptions(min_annotators=3))
    assert preview["pairs"]["filtered_items"]["min_annotators"] == 2


def test_pairwise_majority_export(pairwise_project, tmp_path, settings, django_capture_on_commit_callbacks):
    record = run(pairwise_project, tmp_path, settings, django_capture_on_commit_callbacks)
    assert record.status == "succeeded", record.error
    assert record.strategy == "pairwise_majority"
    got = sorted(
        (
            r["prompt_external_id"],
            r["chosen_model"],
            r["rejected_model"],
            r["chosen_score"],
            r["rejected_score"],
        )
        for r in rows(tmp_path / "exports" / f"export-{record.pk}")
    )
    assert got == [
        ("ext-0000", "zeta-7b", "kappa-70b", 2.0, 1.0),
        ("ext-0000", "zeta-7b", "omega-13b", 3.0, 0.0),
        ("ext-0001", "zeta-7b", "kappa-70b", 3.0, 0.0),
    ]
    pairs = record.counts["pairs"]
    # ext-0000 omega/kappa: tie 2 of 3 -> tie; ext-0001 omega/kappa: one vote each -> shared top.
    assert (pairs["candidate_pairs"], pairs["ties_dropped"], pairs["both_bad_dropped"]) == (6, 2, 1)
    # Nominal alpha of the votes (18 values: A 11, B 2, tie 3, both_bad 2): D_o = 9/18,
    # D_e = (324 - 138) / 306, alpha = 1 - 153/186 = 0.177419.
    assert record.counts["alpha"]["pairwise vote"]["alpha"] == pytest.approx(33 / 186)


def test_split_keeps_prompts_whole_and_follows_the_seed(make_rating_project, tmp_path):
    from tests.exports.conftest import drain, likert_plan

    project = make_rating_project(kind="likert", n_annotators=2, criteria=["relevance", "fluency"])
    for index, user in enumerate(project.annotators):
        drain(project, user, lambda a, index=index: {"ratings": likert_plan(index)(a)["ratings"]})
    # Two prompts in two strata of one prompt each; 0.5 of 2 prompts is one test prompt (its 3 pairs). No
    # stratum can keep a prompt in both splits, so one lone prompt goes to test and the other stratum is
    # reported as too small.
    preview = export_preview(project=project, options=ExportOptions(test_size=0.5, seed=3))
    assert preview["split_rows"] == {"train": 3, "test": 3}
    assert len(preview["too_small_strata"]) == 1
    assert preview["too_small_strata"][0]["prompts"] == 1
    again = export_preview(project=project, options=ExportOptions(test_size=0.5, seed=3))
    assert again["categories"] == preview["categories"]


def test_failed_export_records_the_reason(
    likert_project, tmp_path, settings, django_capture_on_commit_callbacks
):
    record = run(likert_project, tmp_path, settings, django_capture_on_commit_callbacks, min_agreement=0.9)
    assert record.status == "failed"
    assert record.error.startswith("no preference pairs came out of these options (0 of 2 prompts kept")
    assert not (tmp_path / "exports" / f"export-{record.pk}").exists()


def test_running_twice_changes_nothing(
    likert_project, tmp_path, settings, django_capture_on_commit_callbacks
):
    record = run(likert_project, tmp_path, settings, django_capture_on_commit_callbacks)
    finished = record.finished_at
    again = export_run(export=record)
    assert again.status == "succeeded" and again.finished_at == finished


def test_options_are_checked_against_the_project(likert_project, pairwise_project):
    with pytest.raises(ExportInvalid) as caught:
        export_create(project=pairwise_project, options=ExportOptions(strategy="scores"))
    assert "pairwise project exports with pairwise_majority" in caught.value.errors["strategy"]
    with pytest.raises(ExportInvalid) as caught:
        export_create(project=likert_project, options=ExportOptions(weights={"accuracy": 1.0}))
    assert "accuracy" in caught.value.errors["weights"]
    with pytest.raises(ExportInvalid) as caught:
        export_create(project=likert_project, options=ExportOptions(), hub_repo_id="not a repo")
    assert "owner/name" in caught.value.errors["push_to_hub"]
    assert Export.objects.count() == 0


def test_stored_options_reproduce_the_export(
    likert_project, tmp_path, settings, django_capture_on_commit_callbacks
):
    record = run(likert_project, tmp_path, settings, django_capture_on_commit_callbacks, test_size=0.0)
    stored = ExportOptions.from_dict(record.options)
    assert stored.strategy == "scores" and stored.weights == {"relevance": 1.0, "fluency": 1.0}
    assert stored.seed == likert_project.seed and stored.license == "cc-by-4.0"
    with django_capture_on_commit_callbacks(execute=True):
        again = export_create(project=likert_project, options=stored)
    again.refresh_from_db()
    first = rows(tmp_path / "exports" / f"export-{record.pk}")
    second = rows(tmp_path / "exports" / f"export-{again.pk}")
    assert first == second and again.options == record.options
