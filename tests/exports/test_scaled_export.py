"""Exports follow each criterion's scale: a score puts means of different scales on 0-1 before weighing,
categories (yes/no) never enter a score, and the card shows every scale with its category labels."""

from __future__ import annotations

import pytest

from exports.services import ExportInvalid, ExportOptions, export_preview, options_resolve
from tests.annotation.scaled import seven_point_and_yes_no

from .conftest import MODELS, drain, shown_number
from .test_export_service import rows, run

pytestmark = pytest.mark.django_db

# One annotator, the same on both prompts. Relevance 1-5, helpfulness 1-7, safe yes/no.
PLAN = {
    "zeta-7b": {"relevance": 5, "helpfulness": 1, "safe": "yes"},
    "omega-13b": {"relevance": 1, "helpfulness": 6, "safe": "no"},
    "kappa-70b": {"relevance": 2, "helpfulness": 3, "safe": "yes"},
}


@pytest.fixture
def scaled_project(make_rating_project):
    seven_point_and_yes_no()
    project = make_rating_project(
        kind="likert", n_annotators=1, criteria=["relevance", "helpfulness", "safe"]
    )
    user = project.annotators[0]
    assert (
        drain(project, user, lambda a: {"ratings": {str(shown_number(a, m)): PLAN[m] for m in MODELS}}) == 2
    )
    return project


def test_mixed_scales_are_put_on_zero_to_one_and_categories_left_out(
    scaled_project, tmp_path, settings, django_capture_on_commit_callbacks
):
    resolved = options_resolve(project=scaled_project, options=ExportOptions())
    assert resolved.weights == {"relevance": 1.0, "helpfulness": 1.0}
    assert resolved.scales == {"relevance": (1, 5), "helpfulness": (1, 7)}
    record = run(scaled_project, tmp_path, settings, django_capture_on_commit_callbacks)
    assert record.status == "succeeded", record.error
    folder = tmp_path / "exports" / f"export-{record.pk}"
    # On 0-1: zeta (5-1)/4 + (1-1)/6 = 1, omega 0 + 5/6, kappa 1/4 + 2/6 = 7/12. Raw sums (6, 7, 5) would
    # have put omega above zeta.
    got = sorted(
        (
            r["prompt_external_id"],
            r["chosen_model"],
            r["rejected_model"],
            round(r["margin"], 9),
            r["chosen_score"],
        )
        for r in rows(folder)
    )
    assert got == [
        ("ext-0000", "omega-13b", "kappa-70b", 0.25, pytest.approx(5 / 6)),
        ("ext-0000", "zeta-7b", "kappa-70b", round(5 / 12, 9), 1.0),
        ("ext-0000", "zeta-7b", "omega-13b", round(1 / 6, 9), 1.0),
        ("ext-0001", "omega-13b", "kappa-70b", 0.25, pytest.approx(5 / 6)),
        ("ext-0001", "zeta-7b", "kappa-70b", round(5 / 12, 9), 1.0),
        ("ext-0001", "zeta-7b", "omega-13b", round(1 / 6, 9), 1.0),
    ]
    zeta_omega = next(
        r for r in rows(folder) if r["chosen_model"] == "zeta-7b" and r["rejected_model"] == "omega-13b"
    )
    # Per-criterion scores stay on the criterion's own scale.
    assert (zeta_omega["chosen_score_helpfulness"], zeta_omega["rejected_score_helpfulness"]) == (1.0, 6.0)
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert "Scale: 1-7" in card and "Scale: 1-5" in card
    assert "Scale: yes (Yes), no (No)" in card and "Scale: yes (Ya), no (Tidak)" in card


def test_a_category_criterion_cannot_weigh_in_a_score(scaled_project):
    with pytest.raises(ExportInvalid) as exc:
        export_preview(project=scaled_project, options=ExportOptions(weights={"relevance": 1.0, "safe": 1.0}))
    assert exc.value.errors["weights"] == (
        "safe rated on named categories (yes, no); a score weighs criteria rated on points: relevance, helpfulness"
    )


def test_one_shared_scale_keeps_raw_means(scaled_project):
    preview = export_preview(project=scaled_project, options=ExportOptions(weights={"helpfulness": 1.0}))
    resolved = options_resolve(project=scaled_project, options=ExportOptions(weights={"helpfulness": 1.0}))
    assert resolved.scales is None
    assert preview["pairs"]["pairs_out"] == 6
