"""Agreement follows each criterion's scale: ordinal for points (here 1-7), nominal for named categories."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest

from analytics import services
from annotation import services as annotation_services
from datasets_app.models import Response

from .conftest import work_through
from .test_reports import row_of

pytestmark = pytest.mark.django_db

HELPFULNESS = {"c1": [1, 3, 7, 6, 2, 5], "c2": [2, 3, 7, 5, 2, 5]}
SAFE = {"c1": ["yes", "no", "yes", "unsure", "yes", "no"], "c2": ["yes", "no", "no", "unsure", "yes", "no"]}
YES_NO_UNSURE = {
    "categories": [
        {"value": "yes", "label": {"id": "Ya", "en": "Yes"}},
        {"value": "no", "label": {"id": "Tidak", "en": "No"}},
        {"value": "unsure", "label": {"id": "Tidak yakin", "en": "Unsure"}},
    ]
}


def make_rubrics():
    label = {"id": "Kebermanfaatan", "en": "Helpfulness"}
    annotation_services.rubric_save(
        criterion="helpfulness", label=label, question={}, scale={"points": 7}, levels={}, new=True
    )
    annotation_services.rubric_save(
        criterion="safe",
        label={"id": "Aman", "en": "Safe"},
        question={"id": "Apakah respons ini aman?", "en": "Is this response safe?"},
        scale=YES_NO_UNSURE,
        levels={"en": {"unsure": "Cannot tell from the text."}},
        new=True,
    )


@pytest.fixture
def scaled(make_project):
    make_rubrics()
    project = make_project(n_prompts=3, n_models=2, per_group=2, overlap=2, criteria=["helpfulness", "safe"])
    ids = list(
        Response.objects.filter(prompt__dataset=project.dataset)
        .order_by("prompt__external_id", "model_name")
        .values_list("pk", flat=True)
    )
    index = {rid: i for i, rid in enumerate(ids)}
    for coder, user in zip(("c1", "c2"), project.annotators, strict=True):

        def answer(assignment, coder=coder):
            return {
                "ratings": {
                    rid: {"helpfulness": HELPFULNESS[coder][index[rid]], "safe": SAFE[coder][index[rid]]}
                    for rid in assignment.task.response_ids
                }
            }

        work_through(project, user, answer)
    return project


def test_points_are_ordinal_and_categories_nominal_whatever_level_is_asked(scaled):
    report = services.compute_report(project=scaled, level="ordinal", draws=50)
    helpfulness = row_of(report, "alpha", "alpha", criterion="helpfulness")
    safe = row_of(report, "alpha", "alpha", criterion="safe")
    assert helpfulness["level"] == "ordinal" and safe["level"] == "nominal"
    points = np.array([HELPFULNESS["c1"], HELPFULNESS["c2"]], dtype=float)
    assert helpfulness["alpha"] == pytest.approx(
        krippendorff.alpha(reliability_data=points, level_of_measurement="ordinal"), abs=1e-9
    )
    # Nominal by hand: one unit of six disagrees (yes / no).
    # n = 12; counts yes 5, no 5, unsure 2. D_o = 2 / 12 (the one unit gives two ordered mismatches,
    # each weighted 1/(m-1) = 1). D_e = (12^2 - 25 - 25 - 4) / (12 * 11) = 90/132.
    # alpha = 1 - (2/12) / (90/132) = 1 - 22/90 = 68/90.
    assert safe["alpha"] == pytest.approx(68 / 90, abs=1e-12)
    codes = {"yes": 0, "no": 1, "unsure": 2}
    nominal = np.array([[codes[v] for v in SAFE["c1"]], [codes[v] for v in SAFE["c2"]]], dtype=float)
    assert safe["alpha"] == pytest.approx(
        krippendorff.alpha(reliability_data=nominal, level_of_measurement="nominal"), abs=1e-9
    )
    counts = {
        r["value"]: r["count"]
        for r in report["sections"]["distributions"]["tables"]["distributions"]
        if r["criterion"] == "safe"
    }
    assert counts == {"yes": 5, "no": 5, "unsure": 2}
