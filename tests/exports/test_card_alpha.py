"""The alpha on an export's dataset card is the dashboard's alpha: same project, level and seed, same numbers."""

from __future__ import annotations

import pytest

from analytics.services import compute_report
from exports.services import ALPHA_NAMES, ExportOptions, export_create

pytestmark = pytest.mark.django_db

DRAWS = 200


def exported(project, tmp_path, settings, capture):
    settings.EXPORTS_DIR = tmp_path / "exports"
    with capture(execute=True):
        record = export_create(project=project, options=ExportOptions(bootstrap_draws=DRAWS))
    record.refresh_from_db()
    assert record.status == "succeeded", record.error
    return record


def dashboard_alpha(project) -> dict[str, dict]:
    report = compute_report(project=project, level="ordinal", draws=DRAWS)
    return {
        ALPHA_NAMES.get(row["criterion"], row["criterion"]): row
        for row in report["sections"]["alpha"]["tables"]["alpha"]
    }


@pytest.mark.parametrize("fixture", ["likert_project", "pairwise_project"])
def test_card_and_dashboard_give_the_same_alpha_and_interval(
    fixture, request, tmp_path, settings, django_capture_on_commit_callbacks
):
    project = request.getfixturevalue(fixture)
    record = exported(project, tmp_path, settings, django_capture_on_commit_callbacks)
    card = (tmp_path / "exports" / f"export-{record.pk}" / "README.md").read_text(encoding="utf-8")
    on_dashboard = dashboard_alpha(project)
    on_card = record.counts["alpha"]
    assert set(on_card) == set(on_dashboard) and on_card
    for name, figure in on_card.items():
        row = on_dashboard[name]
        assert figure["alpha"] == row["alpha"]
        assert figure["level"] == row["level"]
        assert figure["n_units"] == row["n_units"]
        if row["ci_low"] is None:
            assert figure["ci95"] is None
        else:
            assert figure["ci95"] == [row["ci_low"], row["ci_high"]]
        # The card prints the same figures the dashboard shows.
        assert f"{row['alpha']:.3f}" in card
    if fixture == "likert_project":
        # Relevance, hand-checked in test_export_service.py: 0.892157; its interval is a real interval.
        assert on_card["relevance"]["alpha"] == pytest.approx(0.892157, abs=1e-6)
        low, high = on_card["relevance"]["ci95"]
        assert low <= on_card["relevance"]["alpha"] <= high
