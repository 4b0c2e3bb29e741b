"""Study files written for the tests in each tool's documented format (our own made-up content).

- Label Studio 1.13 JSON export: a list of tasks with ``data`` and ``annotations[].result``;
- Argilla 2.x ``to_hub`` layout: ``.argilla/settings.json`` and flat records with ``<q>.responses``,
  ``<q>.responses.users`` and ``<q>.responses.status``;
- Potato ``annotation_output/<annotator>/annotated_instances.jsonl``.

The ratings are the same small table in every tool, so the expected alpha is known by hand:
three annotators rate four items 1-5 (``RATINGS``), one value missing.
"""

from __future__ import annotations

import json
from pathlib import Path

PROMPTS = {
    "p1": "Apa ibu kota Jawa Barat?",
    "p2": "Sebutkan makanan khas Minang.",
    "p3": "Terjemahkan 'terima kasih' ke bahasa Sunda.",
    "p4": "Apa arti 'monggo' dalam bahasa Jawa?",
}
ANSWERS = {
    "p1": "Bandung.",
    "p2": "Rendang dan sate Padang.",
    "p3": "Hatur nuhun.",
    "p4": "Silakan.",
}
# annotator -> item -> rating (p4 not rated by "citra")
RATINGS = {
    "ani@example.org": {"p1": 5, "p2": 4, "p3": 2, "p4": 1},
    "budi@example.org": {"p1": 4, "p2": 4, "p3": 3, "p4": 1},
    "citra@example.org": {"p1": 5, "p2": 3, "p3": 2},
}
LABELS = {  # annotator -> item -> label
    "ani@example.org": {"p1": "Benar", "p2": "Benar", "p3": "Salah", "p4": "Benar"},
    "budi@example.org": {"p1": "Benar", "p2": "Salah", "p3": "Salah", "p4": "Benar"},
}
USER_IDS = {"ani@example.org": 11, "budi@example.org": 12, "citra@example.org": 13}


def label_studio_rating_tasks() -> list[dict]:
    tasks = []
    for n, item in enumerate(PROMPTS, start=1):
        annotations = []
        for annotator, ratings in RATINGS.items():
            if item not in ratings:
                continue
            result = [
                {
                    "id": f"r{n}{USER_IDS[annotator]}",
                    "from_name": "quality",
                    "to_name": "answer",
                    "type": "rating",
                    "value": {"rating": ratings[item]},
                    "origin": "manual",
                }
            ]
            if annotator in LABELS:
                result.append(
                    {
                        "from_name": "correct",
                        "to_name": "answer",
                        "type": "choices",
                        "value": {"choices": [LABELS[annotator][item]]},
                    }
                )
            annotations.append(
                {
                    "id": n * 100 + USER_IDS[annotator],
                    "completed_by": USER_IDS[annotator],
                    "result": result,
                    "was_cancelled": False,
                    "ground_truth": False,
                    "lead_time": 12.5,
                    "task": n,
                }
            )
        annotations.append(  # a skipped task is no answer
            {"id": n * 100 + 99, "completed_by": 99, "result": [], "was_cancelled": True, "task": n}
        )
        tasks.append(
            {
                "id": n,
                "data": {"prompt": PROMPTS[item], "answer": ANSWERS[item], "item": item},
                "annotations": annotations,
                "predictions": [],
            }
        )
    return tasks


PAIR_VOTES = {  # annotator -> item -> left/right
    "ani@example.org": {"p1": "left", "p2": "right", "p3": "left"},
    "budi@example.org": {"p1": "left", "p2": "right", "p3": "right"},
}


def label_studio_pairwise_tasks() -> list[dict]:
    tasks = []
    for n, item in enumerate(["p1", "p2", "p3"], start=1):
        tasks.append(
            {
                "id": n,
                "data": {
                    "prompt": PROMPTS[item],
                    "answer1": ANSWERS[item],
                    "answer2": ANSWERS[item] + " (2)",
                },
                "annotations": [
                    {
                        "id": n * 10 + USER_IDS[a],
                        "completed_by": {"id": USER_IDS[a], "email": a},
                        "result": [
                            {
                                "from_name": "pw",
                                "to_name": "pw",
                                "type": "pairwise",
                                "value": {"selected": v[item]},
                            }
                        ],
                        "was_cancelled": False,
                    }
                    for a, v in PAIR_VOTES.items()
                ],
            }
        )
    return tasks


def label_studio_ranker_tasks() -> list[dict]:
    return [
        {
            "id": 1,
            "data": {
                "prompt": PROMPTS["p2"],
                "items": [
                    {"id": "m1", "title": "Jawaban 1", "body": "Rendang."},
                    {"id": "m2", "title": "Jawaban 2", "body": "Sate Padang."},
                    {"id": "m3", "title": "Jawaban 3", "body": "Sushi."},
                ],
            },
            "annotations": [
                {
                    "id": 1,
                    "completed_by": 11,
                    "result": [
                        {
                            "from_name": "rank",
                            "to_name": "results",
                            "type": "ranker",
                            "value": {"ranker": {"results": ["m2", "m1", "m3"]}},
                        }
                    ],
                }
            ],
        }
    ]


def write_json(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


ARGILLA_SETTINGS = {
    "guidelines": "Nilai jawaban.",
    "allow_extra_metadata": False,
    "distribution": {"strategy": "overlap", "min_submitted": 1},
    "fields": [
        {
            "name": "prompt",
            "title": "Prompt",
            "required": True,
            "settings": {"type": "text", "use_markdown": False},
        },
        {
            "name": "answer",
            "title": "Answer",
            "required": True,
            "settings": {"type": "text", "use_markdown": False},
        },
    ],
    "questions": [
        {
            "name": "quality",
            "title": "Quality",
            "required": True,
            "settings": {"type": "rating", "options": [{"value": v} for v in range(1, 6)]},
        },
        {
            "name": "correct",
            "title": "Correct?",
            "required": False,
            "settings": {
                "type": "label_selection",
                "options": [{"value": "Benar", "text": "Benar"}, {"value": "Salah", "text": "Salah"}],
            },
        },
    ],
    "metadata": [],
    "vectors": [],
}
ARGILLA_USERS = {a: f"0000000{n}-aaaa-4bbb-8ccc-00000000000{n}" for n, a in enumerate(RATINGS, start=1)}


def argilla_records() -> list[dict]:
    records = []
    for item in PROMPTS:
        raters = [a for a in RATINGS if item in RATINGS[a]]
        labelers = [a for a in LABELS if item in LABELS[a]]
        records.append(
            {
                "id": item,
                "status": "completed",
                "_server_id": f"srv-{item}",
                "prompt": PROMPTS[item],
                "answer": ANSWERS[item],
                "quality.responses": [RATINGS[a][item] for a in raters] + [3],
                "quality.responses.users": [ARGILLA_USERS[a] for a in raters] + ["draft-user"],
                "quality.responses.status": ["submitted"] * len(raters) + ["draft"],
                "correct.responses": [LABELS[a][item] for a in labelers],
                "correct.responses.users": [ARGILLA_USERS[a] for a in labelers],
                "correct.responses.status": ["submitted"] * len(labelers),
            }
        )
    return records


def write_argilla(folder: Path, *, parquet: bool = False) -> Path:
    (folder / ".argilla").mkdir(parents=True)
    write_json(folder / ".argilla" / "settings.json", ARGILLA_SETTINGS)
    write_json(folder / ".argilla" / "dataset.json", {"name": "nilai-jawaban", "status": "ready"})
    write_json(folder / ".argilla" / "version.json", {"argilla": "2.8.0"})
    (folder / "data").mkdir()
    if parquet:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(
            pa.Table.from_pylist(argilla_records()), folder / "data" / "train-00000-of-00001.parquet"
        )
    else:
        lines = "\n".join(json.dumps(r, ensure_ascii=False) for r in argilla_records())
        (folder / "data" / "train.jsonl").write_text(lines + "\n", encoding="utf-8")
    return folder


def write_potato(folder: Path, *, pairwise: bool = False) -> Path:
    """``annotation_output`` with a likert scheme ``quality`` and a radio scheme ``correct``, or (pairwise)
    one pairwise scheme ``preference``."""
    for annotator, ratings in RATINGS.items():
        own = folder / annotator
        own.mkdir(parents=True)
        lines = []
        for item, rating in ratings.items():
            if pairwise:
                if item == "p4":
                    continue
                pick = {"left": "A", "right": "B"}[
                    PAIR_VOTES.get(annotator, PAIR_VOTES["ani@example.org"])[item]
                ]
                labels = {"preference": {"selection": pick}}
                shown: object = [ANSWERS[item], ANSWERS[item] + " (2)"]
            else:
                labels = {"quality": {f"scale_{rating}": str(rating)}}
                if annotator in LABELS:
                    labels["correct"] = {LABELS[annotator][item]: "true"}
                shown = ANSWERS[item]
            lines.append(
                {
                    "id": item,
                    "displayed_text": shown,
                    "label_annotations": labels,
                    "span_annotations": [],
                    "behavioral_data": {"time_string": "Time spent: 0d 0h 0m 9s "},
                }
            )
        (own / "annotated_instances.jsonl").write_text(
            "\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n", encoding="utf-8"
        )
    return folder
