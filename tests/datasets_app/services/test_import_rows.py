"""How an import writes its rows: COPY on PostgreSQL, bulk_create elsewhere; the same rows either way, every
character kept, and nothing at all when a line far into a large file is bad."""

import csv
import json

import pytest
from django.db import connection

from datasets_app import services
from datasets_app.models import Dataset, Prompt, Question, Response, TranslationUnit
from datasets_app.services import BulkCreateRows, CopyRows, ImportFailed, dataset_import

pytestmark = pytest.mark.django_db

# Text that COPY's own format gives a meaning to (tab, newline, backslash, \N, \.), and text outside ASCII.
ODD_TEXTS = [
    "tab\there and\tthere",
    "line\nbreak",
    "carriage\r\nreturn",
    "back\\slash",
    "\\N",
    "\\.",
    "ends with a backslash\\",
    "\\\\ two, then \\t not a tab",
    "quotes \" and ' and `",
    "NULL",
    "ꦲꦏ꧀ꦱꦫ ꦗꦮ (aksara Jawa)",
    "emoji 🙂 and 𝔘 outside the BMP",
    "combining e\u0301 and zero\u200bwidth",
    "  padded  ",
    '{"looks": ["like json"]}',
]


def odd_prompt_rows():
    rows = []
    for i, text in enumerate(ODD_TEXTS):
        rows.append(
            {
                "id": f"odd-{i}",
                "category": f"kat\t{i}",
                "language": ("ind", "sun", "jav")[i % 3],
                "register": "krama" if i % 2 else "",
                "turns": [text, f"second turn {i}: {text}"],
                "references": [text, None],
                "responses": [
                    {"model": "model-ä", "turns": [text, "plain"]},
                    {"model": f"model\\{i}", "turns": ["answer", text]},
                ],
                "meta": {text: [text, 1, 2.5, True, None, {"nested": text}], "n": i},
            }
        )
    return rows


def write_jsonl(path, rows):
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    return path


def write_csv(path, rows):
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def compared_fields(model, *, leave_out=("id", "dataset_id", "prompt_id", "created_at")):
    """Every stored column but the ids and timestamps, so a field added later is compared too."""
    return [f.attname for f in model._meta.concrete_fields if f.attname not in leave_out]


def stored(name):
    """What an import stored, independent of ids: prompts in order, responses by their prompt's id."""
    dataset = Dataset.objects.get(name=name)
    tables = {
        "prompts": list(
            Prompt.objects.filter(dataset=dataset).order_by("id").values_list(*compared_fields(Prompt))
        ),
        "responses": list(
            Response.objects.filter(prompt__dataset=dataset)
            .order_by("id")
            .values_list("prompt__external_id", *compared_fields(Response))
        ),
        "units": list(
            TranslationUnit.objects.filter(dataset=dataset)
            .order_by("id")
            .values_list(*compared_fields(TranslationUnit))
        ),
        "questions": list(
            Question.objects.filter(dataset=dataset).order_by("id").values_list(*compared_fields(Question))
        ),
    }
    assert not Response.objects.filter(prompt__dataset=dataset, created_at__isnull=True).exists()
    return tables


def test_every_character_of_odd_text_is_stored_as_given(tmp_path):
    rows = odd_prompt_rows()
    result = dataset_import(path=write_jsonl(tmp_path / "odd.jsonl", rows), name="odd")
    assert result.counts == {"prompts": len(rows), "responses": 2 * len(rows)}
    prompts = Prompt.objects.filter(dataset__name="odd").order_by("id")
    assert [p.external_id for p in prompts] == [r["id"] for r in rows]
    for prompt, row in zip(prompts, rows, strict=True):
        assert (prompt.category, prompt.language, prompt.register) == (
            row["category"],
            row["language"],
            row["register"],
        )
        assert prompt.turns == row["turns"]
        assert prompt.references == row["references"]
        assert prompt.meta == row["meta"]
        responses = list(prompt.responses.order_by("id").values_list("model_name", "turns", "origin", "meta"))
        assert responses == [(r["model"], r["turns"], "imported", {}) for r in row["responses"]]


@pytest.fixture
def postgresql_only():
    if connection.vendor != "postgresql":
        pytest.skip("COPY is PostgreSQL's; other databases have only the bulk_create path")
    assert isinstance(services.rows_writer(), CopyRows)


def import_both_ways(monkeypatch, **kwargs):
    """Import the same file by COPY (PostgreSQL's default) and by bulk_create; return both datasets' rows."""
    by_copy = dataset_import(name="by-copy", **kwargs)
    with monkeypatch.context() as patch:
        patch.setattr(services, "rows_writer", BulkCreateRows)
        by_bulk_create = dataset_import(name="by-bulk-create", **kwargs)
    assert by_copy.counts == by_bulk_create.counts
    return stored("by-copy"), stored("by-bulk-create")


def test_copy_and_bulk_create_store_the_same_prompts(postgresql_only, monkeypatch, tmp_path):
    # Enough records for more than one batch, so the second batch's prompt ids come from a second block.
    rows = odd_prompt_rows() * (services.BATCH_SIZE // len(ODD_TEXTS) + 2)
    rows = [{**row, "id": f"{row['id']}-{i}"} for i, row in enumerate(rows)]
    copied, bulk_created = import_both_ways(monkeypatch, path=write_jsonl(tmp_path / "p.jsonl", rows))
    assert copied == bulk_created
    assert len(copied["prompts"]) == len(rows) and len(copied["responses"]) == 2 * len(rows)
    # The sequence moved past the ids COPY wrote: rows added later by the ORM do not collide.
    dataset = Dataset.objects.get(name="by-copy")
    prompt = Prompt.objects.create(dataset=dataset, external_id="later", language="ind", turns=["x"])
    Response.objects.create(prompt=prompt, model_name="later", turns=["y"])
    assert prompt.pk > Prompt.objects.filter(dataset=dataset).exclude(pk=prompt.pk).latest("id").pk


def test_copy_and_bulk_create_store_the_same_units_and_questions(postgresql_only, monkeypatch, tmp_path):
    units = [
        {
            "id": f"u{i}",
            "source": text,
            "source_language": "ind",
            "target_language": "jav",
            "register": "ngoko" if i % 2 else "",
            "translation": text if i % 3 else "",
            "translator": f"Siti\t{i}",
            "meta": json.dumps({"note": text}, ensure_ascii=False),
        }
        for i, text in enumerate(ODD_TEXTS)
    ]
    copied, bulk_created = import_both_ways(monkeypatch, path=write_csv(tmp_path / "u.csv", units))
    assert copied == bulk_created and len(copied["units"]) == len(units)

    Dataset.objects.all().delete()
    questions = [
        {
            "id": f"q{i}",
            "category": "budaya",
            "concept": text.strip(),
            "language": "sun",
            "question": text,
            "choices": {"A": f"a {text}", "B": "b", "C": "c\\d"},
            "answer": "A",
            "distractor": "C" if i % 2 else "",
            "origin": "llm" if i % 2 else "human",
            "creator": "Dewi",
        }
        for i, text in enumerate(ODD_TEXTS)
    ]
    copied, bulk_created = import_both_ways(monkeypatch, path=write_jsonl(tmp_path / "q.jsonl", questions))
    assert copied == bulk_created and len(copied["questions"]) == len(questions)


def test_a_bad_line_far_into_a_large_file_writes_nothing(tmp_path):
    n_lines, bad_line = 3 * services.BATCH_SIZE + 10, 2 * services.BATCH_SIZE + 345
    rows = [
        {
            "id": f"p{i}",
            "category": "math",
            "language": "ind",
            "prompt": f"Soal {i}",
            "responses": [{"model": "alpha", "text": "a"}, {"model": "beta", "text": "b"}],
        }
        for i in range(1, n_lines + 1)
    ]
    rows[bad_line - 1]["responses"][1]["model"] = "alpha"
    dataset_import(path=write_jsonl(tmp_path / "old.jsonl", rows[:3]), name="big")
    before = (Dataset.objects.count(), Prompt.objects.count(), Response.objects.count())

    with pytest.raises(ImportFailed) as failed:
        dataset_import(path=write_jsonl(tmp_path / "big.jsonl", rows), name="big", replace=True)

    assert [e.as_dict() for e in failed.value.errors] == [
        {
            "location": f"line {bad_line}",
            "field": "responses[1].model",
            "message": "repeats model 'alpha' in the same prompt",
        }
    ]
    # Two batches had been written when the bad line was read: they went with the transaction, and the
    # dataset the import was to replace is still there as it was.
    assert (Dataset.objects.count(), Prompt.objects.count(), Response.objects.count()) == before
    assert Prompt.objects.filter(dataset__name="big").count() == 3
