"""Build a small Likert study end to end with timbang-client, as a script would against a running Timbang.

    pip install ./clients/python
    TIMBANG_URL=http://127.0.0.1:8000 \\
    TIMBANG_TOKEN=<a project manager's token (with the researcher role for exports)> \\
    TIMBANG_ANNOTATORS=ani:<token>,budi:<token> TIMBANG_REVIEWER=<a reviewer's token> \\
    python docs/examples/build_study.py [--webhook https://example.org/hooks/timbang]

Tokens are made on each person's Account page (/account/). The script uploads three prompts with two
responses each, creates a project with one group per annotator, lets the annotators rate every task
(here the script rates for them: everyone prefers the first response shown), has the reviewer accept the
first submission, waits for the agreement report, and exports the raw ratings as CSV into ./study-export.zip.
It prints what it did as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from timbang_client import Timbang

PROMPTS = [
    {
        "id": "contoh-1",
        "category": "umum",
        "language": "ind",
        "prompt": "Apa ibu kota Indonesia?",
        "responses": [
            {"model": "model-a", "text": "Ibu kota Indonesia adalah Jakarta."},
            {"model": "model-b", "text": "Bandung."},
        ],
    },
    {
        "id": "contoh-2",
        "category": "umum",
        "language": "ind",
        "prompt": "Sebutkan tiga pulau besar di Indonesia.",
        "responses": [
            {"model": "model-a", "text": "Sumatra, Jawa, dan Kalimantan."},
            {"model": "model-b", "text": "Bali."},
        ],
    },
    {
        "id": "contoh-3",
        "category": "umum",
        "language": "sun",
        "prompt": "Naon hartina 'hatur nuhun'?",
        "responses": [
            {"model": "model-a", "text": "Hartina 'terima kasih'."},
            {"model": "model-b", "text": "Wilujeng enjing."},
        ],
    },
]


def build_study(
    base_url: str,
    *,
    manager_token: str,
    annotators: dict[str, str],
    reviewer_token: str | None,
    webhook_url: str | None = None,
    out: Path = Path("study-export.zip"),
    **client_options,
) -> dict:
    report: dict = {}
    with Timbang(base_url, token=manager_token, **client_options) as tb:
        # 1. the data
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "prompts.jsonl"
            path.write_text(
                "\n".join(json.dumps(p, ensure_ascii=False) for p in PROMPTS) + "\n", encoding="utf-8"
            )
            imported = tb.datasets.upload(path, name="contoh-studi-klien")
        if "id" in imported and "dataset_id" not in imported:  # a large file is imported by a worker
            imported = tb.datasets.wait_import(imported["id"])
        dataset_id = imported["dataset_id"]
        report["dataset"] = dataset_id

        # 2. the project: one group per annotator, each task rated once per group
        groups = [f"G{i + 1}" for i in range(len(annotators))]
        project = tb.projects.create(
            name="Contoh studi (klien Python)",
            kind="likert",
            dataset=dataset_id,
            criteria=["relevance", "fluency"],
            groups=groups,
            overlap=1,
            instructions_id="Nilai setiap respons dari 1 sampai 5.",
            instructions_en="Rate each response from 1 to 5.",
        )
        pid = project["id"]
        for username, group in zip(annotators, groups, strict=True):
            tb.projects.add_member(pid, user=username, group=group)
        if webhook_url:
            hook = tb.webhooks.create(
                url=webhook_url, events=["task.submitted", "project.completed"], project=pid
            )
            report["webhook_secret"] = hook["secret"]
        tb.projects.activate(pid)
        report["project"] = pid
        report["rubric"] = [c["key"] for c in tb.projects.rubric(pid, category="umum")]

    # 3. the annotators rate (each with their own token)
    for token in annotators.values():
        with Timbang(base_url, token=token, **client_options) as annotator:
            for task in annotator.annotation.tasks(pid):
                ratings = {
                    str(r["number"]): {"relevance": 5 if r["number"] == 1 else 2, "fluency": 4}
                    for r in task["responses"]
                }
                annotator.annotation.submit(task["task"], {"ratings": ratings}, seconds=20)

    # 4. a reviewer accepts the first submission
    if reviewer_token:
        with Timbang(base_url, token=reviewer_token, **client_options) as reviewer:
            queue = reviewer.reviews.queue(project=pid)
            if queue:
                reviewer.reviews.accept(queue[0]["assignment"], comment="Baik.")
            report["reviewed"] = 1 if queue else 0

    # 5. agreement, and an export
    with Timbang(base_url, token=manager_token, **client_options) as tb:
        report["progress"] = tb.projects.progress(pid)["project"]
        agreement = tb.agreement.report(pid)
        report["alpha"] = agreement["sections"]["alpha"]
        export = tb.exports.wait(tb.exports.create(project=pid, format="raw-csv")["id"])
        report["export"] = str(tb.exports.download(export["id"], out))
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--webhook", help="Also register this URL for the project's events.")
    parser.add_argument("--out", default="study-export.zip")
    args = parser.parse_args(argv)
    try:
        annotators = dict(pair.split(":", 1) for pair in os.environ["TIMBANG_ANNOTATORS"].split(","))
        report = build_study(
            os.environ.get("TIMBANG_URL", "http://127.0.0.1:8000"),
            manager_token=os.environ["TIMBANG_TOKEN"],
            annotators=annotators,
            reviewer_token=os.environ.get("TIMBANG_REVIEWER"),
            webhook_url=args.webhook,
            out=Path(args.out),
        )
    except KeyError as missing:
        print(f"build_study: set {missing.args[0]} (see the top of this file)", file=sys.stderr)
        return 2
    print(json.dumps(report, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
