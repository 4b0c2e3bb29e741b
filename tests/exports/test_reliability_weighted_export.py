"""Pairwise majority with reliability-weighted votes, on the pairwise project of conftest.py.

Plain majority (see test_export_service): zeta>kappa and zeta>omega on ext-0000, zeta>kappa on ext-0001;
ext-0001 omega/kappa is dropped (omega, kappa and tie one vote each). Weighted, each vote counts with its
annotator's Dawid-Skene accuracy (the progress page's reliability): annotators 1 and 2 agree on 5 of 6
pairs, annotator 3 rarely, so w1 ~ 0.82, w2 ~ 0.98, w3 ~ 0.34, and ext-0001 omega/kappa now has a winner:
kappa (w2) over omega (w1), tie (w3) last.
"""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest
from django.urls import reverse

from annotation.selectors import quality_report
from exports.selectors import annotator_pseudonym
from exports.services import ExportInvalid, ExportOptions, export_create, export_preview

pytestmark = pytest.mark.django_db


def test_weighted_votes_decide_a_split_pair_and_the_card_lists_the_weights(
    pairwise_project, tmp_path, settings, django_capture_on_commit_callbacks
):
    settings.EXPORTS_DIR = tmp_path / "exports"
    with django_capture_on_commit_callbacks(execute=True):
        record = export_create(
            project=pairwise_project, options=ExportOptions(bootstrap_draws=0, reliability_weights=True)
        )
    record.refresh_from_db()
    assert record.status == "succeeded", record.error
    assert record.options["reliability_weights"] is True
    by_name = {row["annotator"]: row["reliability"] for row in quality_report(project=pairwise_project).rows}
    w1, w2, w3 = (by_name[u.username] for u in pairwise_project.annotators)
    assert (round(w1, 4), round(w2, 4), round(w3, 4)) == (0.8203, 0.9805, 0.3354)
    folder = tmp_path / "exports" / f"export-{record.pk}"
    got = sorted(
        (
            r["prompt_external_id"],
            r["chosen_model"],
            r["rejected_model"],
            r["chosen_score"],
            r["rejected_score"],
        )
        for r in pq.read_table(folder / "data" / "train-00000-of-00001.parquet").to_pylist()
    )
    expected = [
        ("ext-0000", "zeta-7b", "kappa-70b", w1 + w2, w3),
        ("ext-0000", "zeta-7b", "omega-13b", w1 + w2 + w3, 0.0),
        ("ext-0001", "kappa-70b", "omega-13b", w2, w1),  # plain majority: no winner
        ("ext-0001", "zeta-7b", "kappa-70b", w1 + w2 + w3, 0.0),
    ]
    assert [g[:3] for g in got] == [e[:3] for e in expected]
    for g, e in zip(got, expected, strict=True):
        assert g[3:] == pytest.approx(e[3:])
    assert (record.counts["pairs"]["ties_dropped"], record.counts["pairs"]["pairs_out"]) == (1, 4)
    card = (folder / "README.md").read_text()
    assert "Votes were reliability-weighted" in card
    assert "| reliability_weights | true |" in card
    for user, weight in zip(pairwise_project.annotators, (w1, w2, w3), strict=True):
        pseudonym = annotator_pseudonym(project=pairwise_project, user_id=user.pk)
        assert f"| {pseudonym} | {weight:.4f} |" in card
        assert user.username not in card


def test_reliability_weights_are_refused_outside_pairwise_majority(likert_project, pairwise_project):
    with pytest.raises(ExportInvalid) as caught:
        export_preview(project=likert_project, options=ExportOptions(reliability_weights=True))
    assert caught.value.errors == {
        "reliability_weights": "applies to the pairwise_majority strategy only, not scores"
    }
    with pytest.raises(ExportInvalid) as caught:
        export_preview(
            project=pairwise_project, options=ExportOptions(kind="raw-csv", reliability_weights=True)
        )
    assert "reliability_weights" in caught.value.errors


def test_api_and_export_page_offer_the_option(
    api_client_for, client, make_user, pairwise_project, likert_project
):
    api = api_client_for("researcher")
    body = {"project": pairwise_project.pk, "reliability_weights": True}
    response = api.post("/api/v1/exports/preview", body, format="json")
    assert response.status_code == 200
    # Weighted, ext-0001 omega/kappa gets a winner: 4 pairs instead of the plain majority's 3.
    assert response.json()["pairs"]["pairs_out"] == 4
    plain = api.post("/api/v1/exports/preview", {"project": pairwise_project.pk}, format="json")
    assert plain.json()["pairs"]["pairs_out"] == 3
    client.force_login(make_user("researcher"))
    page = client.get(reverse("exports:export_new", args=[pairwise_project.pk])).content.decode()
    assert 'name="reliability_weights"' in page and "Weight votes by annotator reliability" in page
    # A likert project has no votes to weigh: the field is not offered.
    page = client.get(reverse("exports:export_new", args=[likert_project.pk])).content.decode()
    assert 'name="reliability_weights"' not in page
    preview = client.post(
        reverse("exports:export_preview", args=[pairwise_project.pk]),
        {
            "kind": "hf",
            "min_margin": 0,
            "min_annotators": 1,
            "test_size": 0,
            "provenance": "expert",
            "ordering": "weighted",
            "reliability_weights": "on",
        },
    )
    assert preview.context["preview_error"] == ""
    assert preview.context["preview"]["pairs"]["pairs_out"] == 4  # weighted, as through the API
