"""Reading Label Studio, Argilla and Potato studies (pure code, no database)."""

from __future__ import annotations

import json

import datasets
import pytest

from annotation.domain.tool_studies import argilla, label_studio
from annotation.domain.tool_studies.label_studio import FieldMapping
from annotation.domain.tool_studies.label_studio_export import (
    ExportAnswer,
    ExportItem,
    build_tasks,
    label_config,
)
from annotation.domain.tool_studies.study import StudyInvalid, criterion_name, pseudonym
from annotation.tool_files import read_study
from tests.annotation.tool_studies import files


def _ratings(study, criterion):
    return {(a.annotator, a.item_id): a.ratings.get((0, criterion)) for a in study.answers}


def test_label_studio_rating_and_choices():
    study = label_studio.parse(files.label_studio_rating_tasks(), file="export.json")
    assert study.kind == "likert"
    assert study.fields == {"prompt": "prompt", "responses": ["answer"], "item_id": "item"}
    assert [(c.name, c.points, c.categories) for c in study.criteria] == [
        ("quality", 5, ()),
        ("correct", 0, (("benar", "Benar"), ("salah", "Salah"))),
    ]
    assert [i.external_id for i in study.items] == ["p1", "p2", "p3", "p4"]
    assert study.items[0].prompt == files.PROMPTS["p1"] and study.items[0].responses == (
        ("answer", "Bandung."),
    )
    # 11 answers: the cancelled ones are left out; annotators are Label Studio's user ids.
    assert len(study.answers) == 11 and study.annotators == ["11", "12", "13"]
    quality = _ratings(study, "quality")
    assert quality[("11", "p1")] == 5 and quality[("13", "p3")] == 2 and ("13", "p4") not in quality
    assert _ratings(study, "correct")[("12", "p2")] == "salah"


def test_label_studio_pairwise_votes_map_left_to_a():
    study = label_studio.parse(files.label_studio_pairwise_tasks(), file="pw.json")
    assert study.kind == "pairwise" and study.criteria == ()
    votes = {(a.annotator, a.item_id): a.vote for a in study.answers}
    assert votes == {
        ("ani@example.org", "1"): "A",
        ("ani@example.org", "2"): "B",
        ("ani@example.org", "3"): "A",
        ("budi@example.org", "1"): "A",
        ("budi@example.org", "2"): "B",
        ("budi@example.org", "3"): "B",
    }
    assert study.items[0].responses[0][0] == "answer1"


def test_label_studio_ranker_becomes_rank_scores():
    study = label_studio.parse(files.label_studio_ranker_tasks(), file="rank.json")
    (criterion,) = study.criteria
    assert criterion.name == "rank" and criterion.points == 3 and criterion.from_ranking
    (answer,) = study.answers
    # m2 first, m1 second, m3 last: scores 3, 2, 1 on responses m1, m2, m3 (indexes 0, 1, 2).
    assert dict(answer.ratings) == {(1, "rank"): 3, (0, "rank"): 2, (2, "rank"): 1}


def test_label_studio_bad_file_lists_every_problem_with_its_place():
    tasks = files.label_studio_rating_tasks()
    tasks[1]["annotations"][0]["result"][0]["value"]["rating"] = "lima"
    tasks[2]["annotations"][1]["completed_by"] = None
    tasks[3]["data"].pop("answer")
    with pytest.raises(StudyInvalid) as caught:
        label_studio.parse(tasks, file="export.json")
    lines = [str(p) for p in caught.value.problems]
    assert "export.json: task 4: data.answer: Missing, or not text." in lines
    assert "export.json: task 3 annotation 312: completed_by: Missing: whose answer is this?" in lines
    with pytest.raises(StudyInvalid, match="task 2 annotation 211: result\\[0\\].value.rating"):
        label_studio.parse(files.label_studio_rating_tasks()[:1] + tasks[1:2], file="export.json")
    with pytest.raises(StudyInvalid, match="Expected a JSON list of tasks"):
        label_studio.parse({"tasks": []}, file="export.json")


def test_label_studio_unknown_result_type_is_named():
    tasks = files.label_studio_rating_tasks()
    tasks[0]["annotations"][0]["result"].append({"from_name": "ner", "type": "labels", "value": {"start": 0}})
    with pytest.raises(StudyInvalid, match="Results of type 'labels' cannot be imported"):
        label_studio.parse(tasks, file="export.json")


def test_argilla_settings_questions_and_submitted_responses_only(tmp_path):
    study = read_study("argilla", files.write_argilla(tmp_path / "ds"), shown="ds.zip")
    assert study.kind == "likert"
    assert [(c.name, c.points) for c in study.criteria] == [("quality", 5), ("correct", 0)]
    assert study.criteria[1].categories == (("benar", "Benar"), ("salah", "Salah"))
    # The draft response of "draft-user" is not an answer.
    assert "draft-user" not in study.annotators and len(study.annotators) == 3
    quality = _ratings(study, "quality")
    ani = files.ARGILLA_USERS["ani@example.org"]
    assert quality[(ani, "p1")] == 5 and quality[(ani, "p4")] == 1


def test_argilla_parquet_folder_reads_the_same(tmp_path):
    jsonl = read_study("argilla", files.write_argilla(tmp_path / "a"))
    parquet = read_study("argilla", files.write_argilla(tmp_path / "b", parquet=True))
    assert sorted(jsonl.long_rows()) == sorted(parquet.long_rows())


def test_argilla_ranking_and_bad_values():
    settings = {
        "fields": [{"name": "prompt"}, {"name": "r1"}, {"name": "r2"}],
        "questions": [
            {"name": "pref", "settings": {"type": "ranking", "options": [{"value": "r1"}, {"value": "r2"}]}}
        ],
    }
    record = {"id": "x", "prompt": "P", "r1": "satu", "r2": "dua"}
    ok = dict(record, **{"pref.responses": [["r2", "r1"]], "pref.responses.users": ["u1"]})
    old = dict(record, **{"pref.responses": [[{"value": "r1", "rank": 1}, {"value": "r2", "rank": 2}]]})
    old["pref.responses.users"] = ["u2"]
    study = argilla.parse([ok], settings=settings, file="ds")
    assert dict(study.answers[0].ratings) == {(1, "pref"): 2, (0, "pref"): 1}
    assert dict(argilla.parse([old], settings=settings, file="ds").answers[0].ratings) == {
        (0, "pref"): 2,
        (1, "pref"): 1,
    }
    bad = dict(record, **{"pref.responses": [["r2"]], "pref.responses.users": ["u1"]})
    with pytest.raises(
        StudyInvalid, match="ds: record x: pref.responses: A ranking by u1 must order every option"
    ):
        argilla.parse([bad], settings=settings, file="ds")


def test_potato_likert_and_radio(tmp_path):
    study = read_study(
        "potato", files.write_potato(tmp_path / "annotation_output"), shown="annotation_output"
    )
    assert study.kind == "likert"
    assert [(c.name, c.points) for c in study.criteria] == [("quality", 5), ("correct", 0)]
    assert study.annotators == sorted(files.RATINGS)
    assert _ratings(study, "quality")[("budi@example.org", "p3")] == 3
    assert _ratings(study, "correct")[("budi@example.org", "p2")] == "salah"


def test_potato_pairwise(tmp_path):
    study = read_study("potato", files.write_potato(tmp_path / "out", pairwise=True))
    assert study.kind == "pairwise"
    assert {(a.annotator, a.item_id): a.vote for a in study.answers}[("budi@example.org", "p3")] == "B"
    assert study.items[0].responses == (("response_1", "Bandung."), ("response_2", "Bandung. (2)"))


def test_potato_bad_line_names_the_annotators_file(tmp_path):
    folder = files.write_potato(tmp_path / "out")
    own = folder / "budi@example.org" / "annotated_instances.jsonl"
    own.write_text(
        own.read_text()
        + '{"id": "p9", "displayed_text": "x", "label_annotations": {"quality": {"scale_2": "2", "scale_3": "3"}}}\n{oops\n'
    )
    with pytest.raises(StudyInvalid) as caught:
        read_study("potato", folder, shown="out")
    assert [str(p) for p in caught.value.problems] == [
        "out/budi@example.org/annotated_instances.jsonl: line 6: Not valid JSON: Expecting property name enclosed in double quotes."
    ]
    own.write_text(own.read_text().replace("{oops\n", ""))
    with pytest.raises(
        StudyInvalid,
        match="out/budi@example.org/annotated_instances.jsonl: line 5: label_annotations.quality: More than one point",
    ):
        read_study("potato", folder, shown="out")


def test_names_and_pseudonyms():
    assert criterion_name("Overall Quality (1-5)") == "overall_quality_b_f"
    assert criterion_name("best") == "best_pick"
    assert criterion_name("2nd") == "cnd"
    a = pseudonym("potato", "ani@example.org", b"k")
    assert a == pseudonym("potato", "ani@example.org", b"k") != pseudonym("potato", "ani@example.org", b"j")
    assert a.startswith("pt-") and "ani" not in a


def test_label_studio_export_reads_back_as_the_same_study():
    items = [
        ExportItem("p1", "Tanya?", (("model-x", "Jawab X"), ("model-y", "Jawab Y"))),
        ExportItem("p2", "Lagi?", (("model-x", "X2"), ("model-y", "Y2"))),
    ]
    criteria = {
        "fluency": {"points": 5},
        "tone": {
            "categories": [
                {"value": "formal", "label": {"en": "Formal"}},
                {"value": "casual", "label": {"en": "Casual"}},
            ]
        },
    }
    answers = [
        ExportAnswer(
            "p1",
            "ann-1",
            {(0, "fluency"): 4, (1, "fluency"): 2, (0, "tone"): "formal", (1, "tone"): "casual"},
        ),
        ExportAnswer(
            "p1",
            "ann-2",
            {(0, "fluency"): 5, (1, "fluency"): 1, (0, "tone"): "formal", (1, "tone"): "formal"},
            comment="ok",
        ),
        ExportAnswer(
            "p2",
            "ann-1",
            {(0, "fluency"): 3, (1, "fluency"): 3, (0, "tone"): "casual", (1, "tone"): "casual"},
        ),
    ]
    tasks = build_tasks(kind="likert", criteria=criteria, items=items, answers=answers)
    assert "model-x" not in str([t["data"] for t in tasks])
    study = label_studio.parse(
        tasks, file="t.json", mapping=FieldMapping("prompt", ("response_1", "response_2"), "item_id")
    )
    assert sorted(study.long_rows()) == sorted(
        (f"{a.item_id}/{i}", a.annotator, c, v) for a in answers for (i, c), v in a.ratings.items()
    )
    assert [a.comment for a in study.answers] == ["", "ok", ""]
    config = label_config(kind="likert", criteria=criteria, n_responses=2)
    assert '<Rating name="fluency_2" toName="response_2" maxRating="5"/>' in config
    pair = build_tasks(
        kind="pairwise",
        criteria={},
        items=items[:1],
        answers=[ExportAnswer("p1", "a", vote="tie"), ExportAnswer("p1", "b", vote="B")],
    )
    votes = {a.annotator: a.vote for a in label_studio.parse(pair, file="p.json").answers}
    assert votes == {"a": "tie", "b": "B"}


def test_argilla_datasets_export_saved_to_disk_reads_the_same(tmp_path):
    """``to_datasets()`` saved with ``save_to_disk``: arrow files and no settings; question types are read
    from the values (whole numbers: rating; text: labels)."""
    datasets.Dataset.from_list(files.argilla_records()).save_to_disk(str(tmp_path / "saved"))
    study = read_study("argilla", tmp_path / "saved")
    hub = read_study("argilla", files.write_argilla(tmp_path / "hub"))
    assert sorted(study.long_rows()) == sorted(hub.long_rows())
    # Without settings the rating scale is the highest value given.
    assert [(c.name, c.points) for c in study.criteria][0] == ("quality", 5)


def test_a_problem_keeps_its_template_for_other_languages():
    tasks = files.label_studio_rating_tasks()
    tasks[0]["annotations"][0]["result"][0]["value"]["rating"] = "lima"
    with pytest.raises(StudyInvalid) as caught:
        label_studio.parse(tasks, file="export.json")
    (problem,) = caught.value.problems
    assert problem.message == "Expected a whole number from 1; got 'lima'."
    assert problem.template == "Expected a whole number from 1; got %(value)s."
    assert problem.template % problem.params == problem.message


def test_nul_characters_are_refused_where_they_are(tmp_path):
    tasks = files.label_studio_rating_tasks()
    tasks[2]["data"]["answer"] = "Hatur\u0000nuhun"
    with pytest.raises(StudyInvalid) as caught:
        read_study("label_studio", files.write_json(tmp_path / "nul.json", tasks))
    (problem,) = caught.value.problems
    assert (problem.file, problem.field) == ("nul.json", "[2].data.answer")
    assert "NUL character" in problem.message
    folder = files.write_potato(tmp_path / "out")
    own = folder / "ani@example.org" / "annotated_instances.jsonl"
    own.write_text(own.read_text().replace("Bandung.", "Band\\u0000ung."))
    with pytest.raises(
        StudyInvalid, match="out/ani@example.org/annotated_instances.jsonl: line 1: displayed_text"
    ):
        read_study("potato", folder, shown="out")


def _potato_lines(folder, annotator: str, lines: list[dict]) -> None:
    own = folder / annotator
    own.mkdir(parents=True)
    text = "\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n"
    (own / "annotated_instances.jsonl").write_text(text, encoding="utf-8")


def test_potato_text_boxes_become_the_answers_comments(tmp_path):
    folder = tmp_path / "out"
    _potato_lines(
        folder,
        "ani",
        [
            {
                "id": "1",
                "displayed_text": "Jakarta.",
                "label_annotations": {
                    "quality": {"scale_4": "4"},
                    "why": {"text_box": " Jawaban tepat. "},
                    "notes": {"pro": "singkat", "con": ""},
                },
            },
            {"id": "2", "displayed_text": "Bandung.", "label_annotations": {"quality": {"scale_2": "2"}}},
        ],
    )
    _potato_lines(
        folder,
        "budi",
        [
            {
                "id": "1",
                "displayed_text": "Jakarta.",
                "label_annotations": {"quality": {"scale_5": "5"}, "why": {"text_box": ""}},
            }
        ],
    )
    study = read_study("potato", folder, shown="out")
    # The text schemes are no criteria: a free-text box was read as a one-label choice before.
    assert [(c.name, c.points) for c in study.criteria] == [("quality", 5)]
    comments = {(a.annotator, a.item_id): a.comment for a in study.answers}
    assert comments == {
        ("ani", "1"): "why: Jawaban tepat.\nnotes: pro: singkat",
        ("ani", "2"): "",
        ("budi", "1"): "",
    }
    assert _ratings(study, "quality")[("ani", "1")] == 4


def test_potato_pairwise_keeps_a_rationale_and_still_refuses_the_scale_mode(tmp_path):
    folder = tmp_path / "out"
    pair = ["Satu.", "Dua."]
    _potato_lines(
        folder,
        "ani",
        [
            {
                "id": "1",
                "displayed_text": pair,
                "label_annotations": {"pref": {"selection": "B"}, "why": {"text_box": "Lebih lengkap."}},
            }
        ],
    )
    study = read_study("potato", folder, shown="out")
    assert study.kind == "pairwise"
    assert [(a.vote, a.comment) for a in study.answers] == [("B", "Lebih lengkap.")]
    scale = tmp_path / "scale"
    _potato_lines(
        scale,
        "ani",
        [{"id": "1", "displayed_text": pair, "label_annotations": {"pref": {"scale_value": "-2"}}}],
    )
    with pytest.raises(StudyInvalid, match="scale mode cannot be imported"):
        read_study("potato", scale, shown="scale")


def test_potato_radio_answers_stay_choices(tmp_path):
    # A radio answer ticked with a flag or with its own label is a choice, not text.
    folder = tmp_path / "out"
    for annotator, ticked in (("ani", {"Benar": "Benar"}), ("budi", {"Salah": "1", "Benar": "0"})):
        line = {"id": "1", "displayed_text": "Jakarta.", "label_annotations": {"correct": ticked}}
        _potato_lines(folder, annotator, [line])
    study = read_study("potato", folder, shown="out")
    assert study.criteria[0].categories == (("benar", "Benar"), ("salah", "Salah"))
    assert _ratings(study, "correct") == {("ani", "1"): "benar", ("budi", "1"): "salah"}
    assert {a.comment for a in study.answers} == {""}


def test_argilla_text_questions_become_the_answers_comments():
    settings = {
        "fields": [{"name": "prompt"}, {"name": "answer"}],
        "questions": [
            {
                "name": "quality",
                "settings": {"type": "rating", "options": [{"value": v} for v in range(1, 6)]},
            },
            {"name": "why", "settings": {"type": "text"}},
        ],
    }
    record = {
        "id": "x",
        "prompt": "Ibu kota?",
        "answer": "Jakarta.",
        "quality.responses": [4, 2],
        "quality.responses.users": ["u1", "u2"],
        "why.responses": ["Tepat.", "Kurang lengkap.", "draf"],
        "why.responses.users": ["u1", "u2", "u3"],
        "why.responses.status": ["submitted", "submitted", "draft"],
    }
    study = argilla.parse([record], settings=settings, file="ds")
    assert [c.name for c in study.criteria] == ["quality"]
    assert {a.annotator: (a.ratings[(0, "quality")], a.comment) for a in study.answers} == {
        "u1": (4, "Tepat."),
        "u2": (2, "Kurang lengkap."),
    }
    bad = dict(record, **{"why.responses": [3, "ok", "x"]})
    with pytest.raises(StudyInvalid, match="ds: record x: why.responses: Expected text."):
        argilla.parse([bad], settings=settings, file="ds")


def test_argilla_multi_label_and_span_questions_stay_refused():
    settings = {
        "fields": [{"name": "prompt"}, {"name": "answer"}],
        "questions": [{"name": "tags", "settings": {"type": "multi_label_selection", "options": ["a", "b"]}}],
    }
    record = {"id": "x", "answer": "A", "tags.responses": [["a", "b"]], "tags.responses.users": ["u1"]}
    with pytest.raises(StudyInvalid, match="Questions of type 'multi_label_selection' cannot be imported"):
        argilla.parse([record], settings=settings, file="ds")
