"""Files whose columns are not ours (AlpacaEval-style pairs), shared by the mapping tests."""

from __future__ import annotations

import csv
from pathlib import Path

COLUMNS = ["instruction", "output_1", "generator_1", "output_2", "generator_2", "dataset"]

# The mapping a user chooses for them: prompt from instruction, two responses whose models are named in
# generator_1/generator_2, the id from the row number, every prompt in Indonesian.
MAPPING = {
    "columns": {"prompt": "instruction", "category": "dataset", "id": "#row"},
    "constants": {"language": "ind"},
    "responses": [
        {"text": "output_1", "model_column": "generator_1"},
        {"text": "output_2", "model_column": "generator_2"},
    ],
}


def alpaca_rows(n: int) -> list[dict[str, str]]:
    return [
        {
            "instruction": f"Jelaskan peribahasa nomor {i}.",
            "output_1": f"Penjelasan pertama {i}.",
            "generator_1": "sahabat-ai",
            "output_2": f"Penjelasan kedua {i}.",
            "generator_2": "komodo-7b" if i % 2 else "seallm-v3",
            "dataset": "peribahasa",
        }
        for i in range(n)
    ]


def write_alpaca_csv(path: Path, rows: list[dict[str, str]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return path
