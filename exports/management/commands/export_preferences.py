"""``manage.py export_preferences``: a rating project as a preference dataset or raw annotations, a
translation project's parallel corpus or a question project's question set.

Runs in this process (no worker needed) and records an ``Export`` row like the page and the API do.
Exit status 2 with a one-line reason on bad input (unknown project, bad split or options, an occupied
output folder), 1 when the export itself fails (for example when no pair survives the filters).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Project
from exports.domain.preference_pairs import ORDERINGS, STRATEGIES
from exports.families import formats
from exports.models import Export
from exports.options import CORPUS_KINDS, ExportInvalid, ExportOptions, parse_list, parse_split, parse_weights
from exports.services import export_create, export_run


class Command(BaseCommand):
    help = (
        "Export a rating project as a Hugging Face preference dataset, TRL pairs or raw annotations; a "
        "translation project as its parallel corpus; a question project as its question set."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", type=int, required=True, help="Id of the project.")
        parser.add_argument("--out", required=True, help="Folder to write (created; must be empty).")
        parser.add_argument(
            "--format",
            choices=formats(),
            default="",
            dest="kind",
            help="Default: hf for rating projects, parallel-corpus, question-set, error-spans (or mqm-tsv).",
        )
        parser.add_argument("--strategy", choices=STRATEGIES, help="Default: from the project's kind.")
        parser.add_argument("--weights", help="Criterion weights, e.g. relevance=2,fluency=1 (scores).")
        parser.add_argument("--ordering", choices=ORDERINGS, default="weighted")
        parser.add_argument("--min-margin", type=float, default=0.0)
        parser.add_argument("--min-annotators", type=int, default=1)
        parser.add_argument("--min-agreement", type=float, help="Minimum item agreement in [0, 1].")
        parser.add_argument("--categories", help="Comma-separated categories to keep.")
        parser.add_argument("--languages", help="Comma-separated ISO 639-3 codes to keep.")
        parser.add_argument("--registers", help="Comma-separated registers to keep.")
        parser.add_argument("--turn", type=int, help="Pairwise: only votes on this turn (1-based).")
        parser.add_argument(
            "--reliability-weights",
            action="store_true",
            help="Pairwise majority: weight each vote by its annotator's Dawid-Skene reliability "
            "(the weights are written to the dataset card).",
        )
        parser.add_argument("--split", default="none", help="Test share, e.g. test=0.1 (default: none).")
        parser.add_argument("--seed", type=int, help="Split and bootstrap seed (default: the project's).")
        parser.add_argument("--license", default="", help="Default: the dataset's licence, else 'other'.")
        parser.add_argument("--name", default="", help="Pretty name on the dataset card.")
        parser.add_argument(
            "--provenance",
            default="",
            choices=["", "expert", "crowd", "simulated", "unstated"],
            help="Who gave the answers, for the card (default unstated: the card says it was not stated; "
            "simulated annotators are always declared).",
        )
        parser.add_argument("--bootstrap-draws", type=int, default=1000, help="For the card's alpha CI.")
        parser.add_argument("--zip", action="store_true", help="Also write <out>.zip beside the folder.")
        parser.add_argument("--overwrite", action="store_true", help="Replace a previous export in --out.")
        parser.add_argument(
            "--push-to-hub", default="", metavar="REPO", help="owner/name; token from HF_TOKEN."
        )
        parser.add_argument("--private", action="store_true", help="Create the Hub repo as private.")
        parser.add_argument(
            "--max-ambiguous",
            type=int,
            help="Question sets: most ambiguous flags a kept question may have (default: the project's).",
        )
        parser.add_argument("--json", action="store_true", help="Print the result as one JSON object.")

    def _refuse(self, options: dict[str, Any], message: str, errors: dict[str, str] | None = None):
        if options["json"]:
            self.stdout.write(json.dumps({"error": message, "errors": errors or {}}, ensure_ascii=False))
        raise CommandError(message, returncode=2)

    def handle(self, *args, **options):
        project = Project.objects.select_related("dataset").filter(pk=options["project"]).first()
        if project is None:
            self._refuse(options, f"no project with id {options['project']}")
        out = Path(options["out"]).expanduser().resolve()
        if out.exists() and (not out.is_dir() or any(out.iterdir())):
            # Only a previous export is ever replaced: never a folder that merely happens to be there.
            if not (options["overwrite"] and out.is_dir() and (out / "README.md").is_file()):
                self._refuse(
                    options, f"{out} exists and is not empty (pass --overwrite to replace an export)"
                )
        try:
            spec = ExportOptions(
                kind=options["kind"],
                strategy=options["strategy"],
                weights=parse_weights(options["weights"]),
                ordering=options["ordering"],
                min_margin=options["min_margin"],
                min_annotators=options["min_annotators"],
                min_agreement=options["min_agreement"],
                categories=parse_list(options["categories"]),
                languages=parse_list(options["languages"]),
                registers=parse_list(options["registers"]),
                turn=None if options["turn"] is None else options["turn"] - 1,
                reliability_weights=options["reliability_weights"],
                test_size=parse_split(options["split"]),
                seed=options["seed"],
                license=options["license"],
                pretty_name=options["name"],
                provenance=options["provenance"],
                bootstrap_draws=options["bootstrap_draws"],
                zip=options["zip"],
                max_ambiguous=options["max_ambiguous"],
            )
            record = export_create(
                project=project,
                options=spec,
                hub_repo_id=options["push_to_hub"],
                hub_private=options["private"],
                out_dir=out,
                queue=False,
            )
        except ExportInvalid as exc:
            self._refuse(options, str(exc), exc.errors)
        record = export_run(export=record)
        result = _result(record)
        if options["json"]:
            self.stdout.write(json.dumps(result, ensure_ascii=False))
        if record.status != Export.Status.SUCCEEDED:
            raise CommandError(f"export {record.pk} failed: {record.error}", returncode=1)
        if not options["json"]:
            self.stdout.write(self.style.SUCCESS(_summary(record)))


def _result(record: Export) -> dict[str, Any]:
    folder = Path(record.folder_path) if record.folder_path else None
    files = (
        sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) if folder else []
    )
    return {
        "export_id": record.pk,
        "status": record.status,
        "error": record.error or None,
        "format": record.kind,
        "strategy": record.strategy or None,
        "folder": record.folder_path or None,
        "files": files if folder and folder.is_dir() else [],
        "zip": record.zip_path or None,
        "counts": record.counts,
        "options": record.options,
        "hub": {"repo_id": record.hub_repo_id, "revision": record.hub_revision, "url": record.hub_url}
        if record.hub_repo_id
        else None,
    }


def _summary(record: Export) -> str:
    counts = record.counts
    if record.kind in CORPUS_KINDS:
        noun = {"parallel-corpus": "translations", "question-set": "questions"}.get(record.kind, "answers")
        what = f"{counts.get('rows', 0):,} {noun}"
    elif "split_rows" in counts:
        rows = ", ".join(f"{split} {n:,}" for split, n in counts["split_rows"].items())
        what = f"{sum(counts['split_rows'].values()):,} pairs ({rows})"
    else:
        what = f"{counts.get('rows', 0):,} annotation rows"
    lines = [f"Export {record.pk}: {what} in {record.folder_path}"]
    if record.zip_path:
        lines.append(f"Zip: {record.zip_path}")
    if record.hub_revision:
        lines.append(f"Pushed to {record.hub_repo_id} at commit {record.hub_revision}")
    return "\n".join(lines)
