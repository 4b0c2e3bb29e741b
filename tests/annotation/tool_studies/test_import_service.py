"""A study from another tool becomes a dataset, an active project and submitted answers; agreement on them
equals ``krippendorff.alpha`` on the same values."""

from __future__ import annotations

import json

import krippendorff
import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext

from analytics.services import project_alpha
from annotation import services
from annotation.models import Annotation, Assignment, Project, TaskSlot
from annotation.tool_files import read_study
from datasets_app.models import Dataset, Prompt, Response
from tests.annotation.tool_studies import files

pytestmark = pytest.mark.django_db


def _matrix(table: dict[str, dict[str, object]], units: list[str]) -> np.ndarray:
    """Coders x units, NaN where a coder gave no value: krippendorff's reliability_data."""
    return np.array([[table[c].get(u, np.nan) for u in units] for c in sorted(table)], dtype=float)


def _alpha(project, criterion, level):
    rows = {r["criterion"]: r for r in project_alpha(project=project, level=level, draws=0)}
    return rows[criterion]["alpha"]


def test_label_studio_rating_study_imports_with_answers(tmp_path, make_user):
    manager = make_user("project_manager")
    path = files.write_json(tmp_path / "export.json", files.label_studio_rating_tasks())
    done = services.tool_study_import(
        study=read_study("label_studio", path), name="Nilai LS", created_by=manager
    )
    project = done.project
    assert project.kind == Project.Kind.LIKERT and project.status == Project.Status.ACTIVE
    assert project.criteria == ["quality", "correct"] and project.overlap == 3
    assert done.counts == {"items": 4, "responses": 4, "annotators": 3, "answers": 11, "values": 19}
    assert list(Prompt.objects.filter(dataset=project.dataset).values_list("external_id", flat=True)) == [
        "p1",
        "p2",
        "p3",
        "p4",
    ]
    assert Response.objects.get(prompt__external_id="p2", prompt__dataset=project.dataset).turns == [
        files.ANSWERS["p2"]
    ]
    # Pseudonymous accounts that cannot log in; no e-mail or tool id in their names.
    users = get_user_model().objects.filter(annotation_assignments__project=project).distinct()
    assert users.count() == 3
    assert all(
        u.username.startswith("ls-") and not u.is_active and not u.has_usable_password() for u in users
    )
    assert Assignment.objects.filter(project=project, status="submitted").count() == 11
    assert {(s.submitted_count, s.open_count) for s in TaskSlot.objects.filter(project=project)} == {
        (3, 0),
        (2, 1),
    }
    # Ordinal alpha on the imported answers equals krippendorff.alpha on the same table.
    units = ["p1", "p2", "p3", "p4"]
    expected = krippendorff.alpha(
        reliability_data=_matrix(files.RATINGS, units), level_of_measurement="ordinal"
    )
    assert _alpha(project, "quality", "ordinal") == pytest.approx(expected, abs=1e-9)
    # Nominal alpha of the labels, by hand: 2 coders, B/B, B/S, S/S, B/B -> 1 - (2/8) / (30/56) = 8/15.
    assert _alpha(project, "correct", "ordinal") == pytest.approx(8 / 15, abs=1e-12)
    labels = {c: {u: {"Benar": 1, "Salah": 2}[v] for u, v in t.items()} for c, t in files.LABELS.items()}
    assert krippendorff.alpha(
        reliability_data=_matrix(labels, units), level_of_measurement="nominal"
    ) == pytest.approx(8 / 15)


def test_label_studio_pairwise_study_keeps_votes_on_the_right_response(tmp_path):
    path = files.write_json(tmp_path / "pw.json", files.label_studio_pairwise_tasks())
    project = services.tool_study_import(study=read_study("label_studio", path), name="Pasangan").project
    assert project.kind == Project.Kind.PAIRWISE
    votes = Annotation.objects.filter(assignment__project=project, criterion="vote")
    assert votes.count() == 6
    for vote in votes.select_related("assignment__task", "response"):
        task = vote.assignment.task
        # The winner is the response the vote names (A is the task's response_a).
        assert vote.response_id == {"A": task.response_a_id, "B": task.response_b_id}[vote.choice]
    winners = sorted(votes.values_list("response__model_name", flat=True))
    # "left" is answer1: p1 twice left, p2 twice right, p3 once each.
    assert winners == ["answer1"] * 3 + ["answer2"] * 3
    units = ["1", "2", "3"]
    table = {
        a: {str(n + 1): v[p] for n, p in enumerate(["p1", "p2", "p3"])} for a, v in files.PAIR_VOTES.items()
    }
    codes = {a: {u: {"left": 1, "right": 2}[x] for u, x in t.items()} for a, t in table.items()}
    expected = krippendorff.alpha(reliability_data=_matrix(codes, units), level_of_measurement="nominal")
    assert _alpha(project, "vote", "ordinal") == pytest.approx(expected, abs=1e-9)


def test_argilla_study_imports_and_alpha_matches(tmp_path):
    study = read_study("argilla", files.write_argilla(tmp_path / "ds", parquet=True))
    project = services.tool_study_import(study=study, name="Nilai Argilla").project
    assert project.dataset.source.startswith("Argilla 2")
    units = ["p1", "p2", "p3", "p4"]
    for level in ("ordinal", "interval"):
        expected = krippendorff.alpha(
            reliability_data=_matrix(files.RATINGS, units), level_of_measurement=level
        )
        assert _alpha(project, "quality", level) == pytest.approx(expected, abs=1e-9)
    assert _alpha(project, "correct", "interval") == pytest.approx(8 / 15, abs=1e-12)


def test_potato_study_imports_and_alpha_matches(tmp_path):
    study = read_study("potato", files.write_potato(tmp_path / "annotation_output"))
    done = services.tool_study_import(study=study, name="Nilai Potato")
    assert done.counts["answers"] == 11 and done.counts["annotators"] == 3
    assert all(u.startswith("pt-") for u in done.project.memberships.values_list("user__username", flat=True))
    units = ["p1", "p2", "p3", "p4"]
    expected = krippendorff.alpha(
        reliability_data=_matrix(files.RATINGS, units), level_of_measurement="interval"
    )
    assert _alpha(done.project, "quality", "interval") == pytest.approx(expected, abs=1e-9)


def test_potato_pairwise_study_imports(tmp_path):
    study = read_study("potato", files.write_potato(tmp_path / "out", pairwise=True))
    project = services.tool_study_import(study=study, name="Potato pasangan").project
    assert project.kind == Project.Kind.PAIRWISE
    assert Annotation.objects.filter(assignment__project=project, criterion="vote").count() == 9


def test_same_criterion_name_on_another_scale_gets_its_own_criterion(tmp_path):
    path = files.write_json(tmp_path / "export.json", files.label_studio_rating_tasks())
    services.rubric_save(
        criterion="quality",
        label={"id": "Mutu", "en": "Quality"},
        question=None,
        scale={"points": 7},
        levels={"id": {}, "en": {}},
        new=True,
    )
    done = services.tool_study_import(study=read_study("label_studio", path), name="Nilai")
    assert done.criteria == {"quality": "quality_b", "correct": "correct"}
    assert done.project.criteria == ["quality_b", "correct"]


def test_a_taken_name_writes_nothing(tmp_path):
    Dataset.objects.create(name="Nilai")
    path = files.write_json(tmp_path / "export.json", files.label_studio_rating_tasks())
    with pytest.raises(services.ProjectInvalid, match="exists already"):
        services.tool_study_import(study=read_study("label_studio", path), name="Nilai")
    assert not Project.objects.exists() and not Annotation.objects.exists()
    assert not get_user_model().objects.filter(username__startswith="ls-").exists()


def test_queries_do_not_grow_with_the_number_of_items(tmp_path):
    def tasks(n):
        return [
            {
                "id": i,
                "data": {"answer": f"teks {i}"},
                "annotations": [
                    {
                        "completed_by": u,
                        "result": [
                            {"type": "rating", "from_name": "q", "value": {"rating": 1 + (i + u) % 5}}
                        ],
                    }
                    for u in (1, 2, 3)
                ],
            }
            for i in range(1, n + 1)
        ]

    counts = []
    for n in (5, 6, 60):  # the first one also creates the criterion's rubric
        study = read_study("label_studio", files.write_json(tmp_path / f"{n}.json", tasks(n)))
        with CaptureQueriesContext(connection) as queries:
            services.tool_study_import(study=study, name=f"studi {n}")
        counts.append(len(queries))
    # 54 more items and 162 more answers: a few more batches of inserts, never a query per row.
    assert counts[2] - counts[1] <= 6, counts


def test_text_answers_of_argilla_and_potato_are_kept_as_comments(tmp_path):
    folder = files.write_potato(tmp_path / "annotation_output")
    own = folder / "ani@example.org" / "annotated_instances.jsonl"
    lines = [json.loads(line) for line in own.read_text(encoding="utf-8").splitlines()]
    lines[0]["label_annotations"]["why"] = {"text_box": "Sangat jelas."}
    own.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    project = services.tool_study_import(study=read_study("potato", folder), name="Potato teks").project
    assert project.criteria == ["quality", "correct"]  # the text box is no criterion
    comments = Annotation.objects.filter(assignment__project=project, criterion="comment")
    assert list(comments.values_list("comment", flat=True)) == ["Sangat jelas."]
    assert comments.get().assignment.task.prompt.external_id == lines[0]["id"]
