"""``manage.py import_study``: a study from Label Studio, Argilla or Potato, with its answers."""

import json
import shutil
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.domain.tool_studies.label_studio import FieldMapping
from annotation.domain.tool_studies.study import TOOLS, StudyInvalid
from annotation.services import ProjectInvalid, tool_study_import
from annotation.tool_files import read_study, study_path


class Command(BaseCommand):
    help = (
        "Import a study made in another tool as a dataset, a project and its answers: a Label Studio JSON "
        "export, an Argilla dataset folder, or Potato's annotation_output folder (a folder or a .zip)."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", help="The export file or folder (or a .zip of the folder).")
        parser.add_argument("--tool", required=True, choices=TOOLS)
        parser.add_argument("--name", required=True, help="Name of the new dataset and project.")
        parser.add_argument(
            "--language", default="ind", help="ISO 639-3 language of the items (default ind)."
        )
        parser.add_argument("--prompt-field", default=None, help="The data field holding the prompt.")
        parser.add_argument(
            "--response-field",
            action="append",
            default=None,
            help="A field holding a response (repeat, in order).",
        )
        parser.add_argument("--item-id-field", default=None, help="The data field holding the item's id.")
        parser.add_argument(
            "--dry-run", action="store_true", help="Check and describe the study; write nothing."
        )
        parser.add_argument("--json", action="store_true", help="Print the result as JSON.")

    def handle(self, *args, **options):
        source = Path(options["path"])
        if not source.exists():
            raise CommandError(f"{source}: no such file or folder", returncode=2)
        mapping = None
        if any(options[k] is not None for k in ("prompt_field", "response_field", "item_id_field")):
            mapping = FieldMapping(
                prompt=options["prompt_field"] or "",
                responses=tuple(options["response_field"] or ()),
                item_id=options["item_id_field"] or "",
            )
        path = None
        try:
            path = study_path(source)
            study = read_study(options["tool"], path, mapping=mapping, shown=source.name)
            if options["dry_run"]:
                out = {"dry_run": True, **study.summary()}
            else:
                done = tool_study_import(study=study, name=options["name"], language=options["language"])
                out = {
                    "project": done.project.pk,
                    "dataset": done.project.dataset_id,
                    "name": done.project.name,
                    "kind": done.project.kind,
                    "tool": study.tool,
                    "tool_version": study.tool_version,
                    "criteria": done.criteria,
                    "counts": done.counts,
                }
        except StudyInvalid as exc:
            if options["json"]:
                self.stdout.write(
                    json.dumps(
                        {"errors": [p.as_dict() for p in exc.problems], "n_errors": exc.total},
                        ensure_ascii=False,
                    )
                )
            else:
                for problem in exc.problems:
                    self.stderr.write(str(problem))
            raise CommandError(f"import failed, nothing written: {exc}", returncode=2) from None
        except ProjectInvalid as exc:
            raise CommandError(f"import failed, nothing written: {exc}", returncode=2) from None
        finally:
            if path is not None and path != source:
                shutil.rmtree(path, ignore_errors=True)
        if options["json"]:
            self.stdout.write(json.dumps(out, ensure_ascii=False))
        elif options["dry_run"]:
            self.stdout.write(
                f"{study.tool_version}: {out['kind']} study, {out['n_items']} items, "
                f"{out['n_annotators']} annotators, {out['n_answers']} answers (nothing written)."
            )
        else:
            counts = ", ".join(f"{n} {key}" for key, n in out["counts"].items())
            self.stdout.write(
                self.style.SUCCESS(f"Imported study {out['name']!r} as project {out['project']}: {counts}.")
            )
