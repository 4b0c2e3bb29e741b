import csv
import json

import pytest

from datasets_app.models import Dataset, Prompt, Question, Response, TranslationUnit
from datasets_app.services import ImportFailed, dataset_import

pytestmark = pytest.mark.django_db


def prompt_rows(n=10):
    rows = []
    for i in range(1, n + 1):
        rows.append(
            {
                "id": f"p{i}",
                "category": "math" if i % 2 else "analysis",
                "language": "ind",
                "prompt": f"Berapa {i} ditambah {i}?",
                "responses": [
                    {"model": "alpha", "text": f"{2 * i}"},
                    {"model": "beta", "text": f"Jawabannya {2 * i}."},
                ],
            }
        )
    return rows


def write_jsonl(path, rows):
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    return path


def test_jsonl_import_creates_prompts_and_responses(tmp_path):
    result = dataset_import(path=write_jsonl(tmp_path / "p.jsonl", prompt_rows()), name="sample")
    assert result.kind == "prompts"
    assert result.counts == {"prompts": 10, "responses": 20}
    dataset = Dataset.objects.get(name="sample")
    assert dataset.kind == "prompts"
    p3 = Prompt.objects.get(dataset=dataset, external_id="p3")
    assert p3.turns == ["Berapa 3 ditambah 3?"] and p3.category == "math"
    assert sorted(p3.responses.values_list("model_name", flat=True)) == ["alpha", "beta"]


def test_multi_turn_prompt_with_references(tmp_path):
    row = {
        "id": "mt1",
        "category": "logic",
        "language": "jav",
        "register": "krama",
        "turns": ["Pitakon siji", "Pitakon loro"],
        "references": ["Wangsulan siji", "Wangsulan loro"],
        "responses": [{"model": "alpha", "turns": ["a1", "a2"]}],
        "meta": {"difficulty": "hard"},
    }
    dataset_import(path=write_jsonl(tmp_path / "mt.jsonl", [row]), name="mt")
    prompt = Prompt.objects.get(external_id="mt1")
    assert prompt.turns == ["Pitakon siji", "Pitakon loro"]
    assert prompt.references == ["Wangsulan siji", "Wangsulan loro"]
    assert prompt.register == "krama" and prompt.meta == {"difficulty": "hard"}
    assert prompt.responses.get().turns == ["a1", "a2"]


def test_bad_line_seven_names_line_and_field_and_writes_nothing(tmp_path):
    rows = prompt_rows(10)
    del rows[6]["category"]  # line 7
    before = (Dataset.objects.count(), Prompt.objects.count(), Response.objects.count())
    with pytest.raises(ImportFailed) as caught:
        dataset_import(path=write_jsonl(tmp_path / "bad.jsonl", rows), name="bad")
    errors = caught.value.errors
    assert [(e.location, e.field) for e in errors] == [("line 7", "category")]
    assert "line 7" in caught.value.summary() and "category" in caught.value.summary()
    assert (Dataset.objects.count(), Prompt.objects.count(), Response.objects.count()) == before


def test_every_error_is_listed_up_to_the_limit(tmp_path):
    rows = prompt_rows(120)
    for row in rows:
        row["language"] = "indonesian"
    with pytest.raises(ImportFailed) as caught:
        dataset_import(path=write_jsonl(tmp_path / "many.jsonl", rows), name="many")
    assert caught.value.total == 120
    assert len(caught.value.errors) == 50
    assert caught.value.errors[0].location == "line 1" and caught.value.errors[0].field == "language"
    assert not Dataset.objects.filter(name="many").exists()


def test_error_found_after_a_written_batch_rolls_back_everything(tmp_path):
    rows = prompt_rows(2500)  # more than two insert batches before the bad line
    rows[-1]["responses"][1]["model"] = "alpha"
    with pytest.raises(ImportFailed) as caught:
        dataset_import(path=write_jsonl(tmp_path / "late.jsonl", rows), name="late")
    assert [(e.location, e.field) for e in caught.value.errors] == [("line 2500", "responses[1].model")]
    assert Prompt.objects.count() == 0 and Response.objects.count() == 0


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ('{"id": "x", "category": "math", "language": "ind"', ""),
        ('["not", "an", "object"]', ""),
        ('{"id": "x", "category": "math", "language": "ind"}', "prompt"),
        ('{"id": "x", "category": "math", "language": "ind", "prompt": "a", "turns": ["b"]}', "prompt"),
        (
            '{"id": "x", "category": "math", "language": "ind", "turns": ["a", "b"], "references": ["r"]}',
            "references",
        ),
        (
            '{"id": "x", "category": "math", "language": "ind", "prompt": "a", "responses": [{"model": "m", "turns": ["1", "2"]}]}',
            "responses[0].turns",
        ),
        (
            '{"id": "x", "category": "math", "language": "ind", "prompt": "a", "responses": [{"text": "t"}]}',
            "responses[0].model",
        ),
        ('{"category": "math", "language": "ind", "prompt": "a"}', "id"),
        ('{"id": "x", "category": "math", "language": "ind", "prompt": "a", "meta": [1]}', "meta"),
    ],
)
def test_problems_are_reported_with_their_field(tmp_path, line, field):
    path = tmp_path / "one.jsonl"
    path.write_text('{"id": "ok", "category": "math", "language": "ind", "prompt": "fine"}\n' + line + "\n")
    with pytest.raises(ImportFailed) as caught:
        dataset_import(path=path, name="one", kind="prompts")
    assert (caught.value.errors[0].location, caught.value.errors[0].field) == ("line 2", field)
    assert Dataset.objects.count() == 0


def test_duplicate_ids_are_rejected(tmp_path):
    rows = prompt_rows(3)
    rows[2]["id"] = "p1"
    with pytest.raises(ImportFailed) as caught:
        dataset_import(path=write_jsonl(tmp_path / "dup.jsonl", rows), name="dup")
    assert caught.value.errors[0].location == "line 3"
    assert "first seen at line 1" in caught.value.errors[0].message


def test_same_name_is_rejected_unless_replace(tmp_path):
    path = write_jsonl(tmp_path / "p.jsonl", prompt_rows(3))
    dataset_import(path=path, name="again")
    with pytest.raises(ImportFailed) as caught:
        dataset_import(path=path, name="again")
    assert caught.value.errors[0].field == "name" and "--replace" in caught.value.errors[0].message
    result = dataset_import(
        path=write_jsonl(tmp_path / "q.jsonl", prompt_rows(5)), name="again", replace=True
    )
    assert result.counts["prompts"] == 5
    assert Prompt.objects.filter(dataset__name="again").count() == 5
    assert Dataset.objects.filter(name="again").count() == 1


def test_failed_replace_keeps_the_old_dataset(tmp_path):
    dataset_import(path=write_jsonl(tmp_path / "p.jsonl", prompt_rows(3)), name="keep")
    bad = prompt_rows(4)
    bad[3]["language"] = ""
    with pytest.raises(ImportFailed):
        dataset_import(path=write_jsonl(tmp_path / "bad.jsonl", bad), name="keep", replace=True)
    assert Prompt.objects.filter(dataset__name="keep").count() == 3


def test_csv_prompts_with_json_cells(tmp_path):
    path = tmp_path / "p.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(
            handle, fieldnames=["id", "category", "language", "register", "prompt", "responses"]
        )
        writer.writeheader()
        writer.writerow(
            {
                "id": "c1",
                "category": "translation",
                "language": "sun",
                "register": "lemes",
                "prompt": "Tarjamahkeun kana basa Indonesia: Wilujeng enjing",
                "responses": json.dumps([{"model": "alpha", "text": "Selamat pagi"}]),
            }
        )
        writer.writerow(
            {"id": "c2", "category": "math", "language": "ind", "prompt": "1+1?", "responses": ""}
        )
    result = dataset_import(path=path, name="csv")
    assert result.counts == {"prompts": 2, "responses": 1}
    assert Prompt.objects.get(external_id="c1").register == "lemes"


def test_csv_bad_json_cell_names_line_and_field(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text(
        'id,category,language,prompt,responses\nc1,math,ind,"1+1?","[{""model"": ""a"""\n', encoding="utf-8"
    )
    with pytest.raises(ImportFailed) as caught:
        dataset_import(path=path, name="csv")
    assert (caught.value.errors[0].location, caught.value.errors[0].field) == ("line 2", "responses")


def test_translation_units(tmp_path):
    rows = [
        {
            "id": "t1",
            "source": "Saya makan nasi.",
            "source_language": "ind",
            "target_language": "jav",
            "register": "krama",
            "translation": "Kula nedha sekul.",
            "translator": "tr-01",
        },
        {"id": "t2", "source": "Dia pergi ke pasar.", "target_language": "sun"},
    ]
    result = dataset_import(path=write_jsonl(tmp_path / "t.jsonl", rows), name="tr")
    assert result.kind == "translations" and result.counts == {"translation_units": 2}
    t1 = TranslationUnit.objects.get(external_id="t1")
    assert (t1.status, t1.translator_name, t1.register) == ("to_review", "tr-01", "krama")
    t2 = TranslationUnit.objects.get(external_id="t2")
    assert (t2.status, t2.source_language) == ("to_translate", "ind")


def test_imported_back_translations_are_flagged_by_sentence_embedding(tmp_path):
    base = {"source_language": "ind", "target_language": "jav", "register": "krama"}
    rows = [
        {
            **base,
            "id": "t1",
            "source": "Saya makan nasi di rumah.",
            "translation": "Kula nedha sekul wonten griya.",
            "meta": {"back_translation": "Di rumah saya makan nasi."},
        },
        {
            **base,
            "id": "t2",
            "source": "Ibu pergi ke pasar pagi ini.",
            "translation": "Ibu tindak dhateng peken enjing menika.",
            "meta": {"back_translation": "Kereta berangkat setiap pagi."},
        },
        # Not translated yet: its back-translation is not compared.
        {**base, "id": "t3", "source": "Adik sedang belajar.", "meta": {"back_translation": "Hujan turun."}},
    ]
    dataset_import(path=write_jsonl(tmp_path / "t.jsonl", rows), name="tr-back")
    flags = {u.external_id: u.flags for u in TranslationUnit.objects.all()}
    assert flags["t1"] == [] and flags["t3"] == []
    [flag] = flags["t2"]
    assert flag["code"] == "low_back_translation"
    assert flag["details"]["measure"] == "embedding" and flag["details"]["threshold"] == 0.9
    assert flag["details"]["similarity"] < 0.9


def test_translation_bad_line_writes_nothing(tmp_path):
    rows = [
        {"id": "t1", "source": "Saya makan nasi.", "target_language": "jav"},
        {"id": "t2", "source": "Dia pergi.", "target_language": "Javanese"},
    ]
    with pytest.raises(ImportFailed) as caught:
        dataset_import(path=write_jsonl(tmp_path / "t.jsonl", rows), name="tr")
    assert (caught.value.errors[0].location, caught.value.errors[0].field) == ("line 2", "target_language")
    assert TranslationUnit.objects.count() == 0


def test_questions(tmp_path):
    rows = [
        {
            "id": "q1",
            "category": "makanan",
            "concept": "rendang",
            "language": "ind",
            "question": "Rendang berasal dari daerah mana?",
            "choices": {"A": "Sumatra Barat", "B": "Bali", "C": "Papua", "D": "Jawa Timur", "E": "Maluku"},
            "answer": "a",
            "distractor": "D",
            "creator": "c-07",
        }
    ]
    result = dataset_import(path=write_jsonl(tmp_path / "q.jsonl", rows), name="qs")
    assert result.counts == {"questions": 1}
    question = Question.objects.get()
    assert (question.answer_key, question.distractor, question.creator_name) == ("A", "D", "c-07")


def test_four_option_questions_without_a_concept_import(tmp_path):
    # SeaExam's shape: options A-D, no concept; the number of options is per question.
    rows = [
        {
            "id": "s1",
            "category": "sejarah",
            "language": "ind",
            "question": "Kapan Indonesia merdeka?",
            "choices": ["1945", "1949", "1965", "1998"],
            "answer": "A",
        },
        {
            "id": "s2",
            "category": "budaya",
            "language": "ind",
            "question": "Tari Kecak berasal dari?",
            "choices": {"A": "Bali", "B": "Aceh", "C": "Papua"},
            "answer": "a",
        },
        {
            "id": "s3",
            "category": "budaya",
            "concept": "rendang",
            "language": "ind",
            "question": "Rendang dari mana?",
            "A": "Sumatra Barat",
            "B": "Bali",
            "C": "Papua",
            "D": "Jawa Timur",
            "answer": "A",
        },
    ]
    result = dataset_import(path=write_jsonl(tmp_path / "q.jsonl", rows), name="seaexam")
    assert result.counts == {"questions": 3}
    stored = {q.external_id: q for q in Question.objects.all()}
    assert list(stored["s1"].choices) == ["A", "B", "C", "D"] and stored["s1"].concept == ""
    assert stored["s2"].choices == {"A": "Bali", "B": "Aceh", "C": "Papua"}
    assert (list(stored["s3"].choices), stored["s3"].concept) == (["A", "B", "C", "D"], "rendang")


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        (
            {"choices": ["1945", "1949", "1965", "1998"], "answer": "E"},
            "answer",
            "must be one of A, B, C, D, got 'E'",
        ),
        ({"choices": ["1945"]}, "choices", "has 1 options; a question has 2 to 5"),
        ({"choices": {"A": "1945", "C": "1965"}}, "choices.B", "is required and must be non-empty text"),
    ],
)
def test_a_question_with_options_that_do_not_fit_is_refused_and_writes_nothing(
    tmp_path, change, field, message
):
    row = {"id": "s1", "category": "x", "language": "ind", "question": "Kapan?", "answer": "A", **change}
    with pytest.raises(ImportFailed) as caught:
        dataset_import(path=write_jsonl(tmp_path / "q.jsonl", [row]), name="qs")
    error = caught.value.errors[0]
    assert (error.location, error.field) == ("line 1", field) and message in error.message
    assert not Question.objects.exists()


def test_question_distractor_equal_to_answer_is_an_error(tmp_path):
    row = {
        "id": "q1",
        "category": "x",
        "concept": "y",
        "language": "ind",
        "question": "?",
        "choices": {"A": "1", "B": "2", "C": "3", "D": "4", "E": "5"},
        "answer": "B",
        "distractor": "B",
    }
    with pytest.raises(ImportFailed) as caught:
        dataset_import(path=write_jsonl(tmp_path / "q.jsonl", [row]), name="qs")
    assert caught.value.errors[0].field == "distractor"


def test_hugging_face_folder(tmp_path):
    import datasets

    folder = tmp_path / "hf"
    rows = prompt_rows(4)
    for row in rows:
        row["responses"] = json.dumps(row["responses"])
    datasets.Dataset.from_list(rows).to_parquet(str(folder / "data" / "train-00000-of-00001.parquet"))
    result = dataset_import(path=folder, name="hf")
    assert result.counts == {"prompts": 4, "responses": 8}


def test_empty_file_and_missing_file(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    with pytest.raises(ImportFailed, match="holds no records"):
        dataset_import(path=empty, name="empty")
    with pytest.raises(ImportFailed, match="no such file"):
        dataset_import(path=tmp_path / "missing.jsonl", name="missing")
    assert Dataset.objects.count() == 0


def test_a_dataset_in_use_by_a_project_is_not_replaced(tmp_path):
    from annotation import services as annotation_services

    path = write_jsonl(tmp_path / "p.jsonl", prompt_rows(3))
    dataset = dataset_import(path=path, name="in-use").dataset
    annotation_services.project_create(name="rating", kind="likert", dataset=dataset)
    with pytest.raises(ImportFailed) as caught:
        dataset_import(path=write_jsonl(tmp_path / "q.jsonl", prompt_rows(5)), name="in-use", replace=True)
    assert caught.value.errors[0].field == "name"
    assert "in use" in caught.value.errors[0].message and "new name" in caught.value.errors[0].message
    assert Prompt.objects.filter(dataset__name="in-use").count() == 3
