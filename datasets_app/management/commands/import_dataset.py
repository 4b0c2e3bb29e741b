import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from datasets_app.domain.import_records import KINDS
from datasets_app.readers import FORMATS, HubSource
from datasets_app.services import (
    ImportFailed,
    dataset_import,
    import_mapping_resolve,
    import_mapping_save,
)


class Command(BaseCommand):
    help = (
        "Import prompts (with responses), translation units or questions from JSONL, CSV, a Hugging Face "
        "folder or a Hub dataset; files whose columns are not ours are read through a column mapping."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "file", nargs="?", help="A .jsonl or .csv file, or a Hugging Face dataset folder (or --hub)."
        )
        parser.add_argument("--name", required=True, help="Name of the new dataset.")
        parser.add_argument(
            "--format", choices=FORMATS, dest="file_format", help="Default: from the extension."
        )
        parser.add_argument("--kind", choices=KINDS, help="Default: detected from the first record.")
        parser.add_argument("--replace", action="store_true", help="Replace a dataset of the same name.")
        parser.add_argument("--description", default="")
        parser.add_argument("--license", default="")
        parser.add_argument(
            "--hub",
            metavar="DATASET_ID",
            help="Read a Hugging Face Hub dataset (owner/name) instead of a file.",
        )
        parser.add_argument("--hub-config", default="")
        parser.add_argument("--hub-split", default="")
        parser.add_argument("--hub-revision", default="")
        mapping = parser.add_mutually_exclusive_group()
        mapping.add_argument("--mapping", metavar="FILE.json", help="A column mapping as a JSON file.")
        mapping.add_argument(
            "--mapping-name", default="", help="Use the column mapping saved under this name."
        )
        mapping.add_argument(
            "--mapping-from-import",
            type=int,
            metavar="IMPORT_ID",
            help="Use the mapping of an earlier import.",
        )
        parser.add_argument("--save-mapping-as", default="", help="Save the mapping used under this name.")
        parser.add_argument("--json", action="store_true", help="Print the result as JSON.")

    def handle(self, *args, **options):
        if bool(options["file"]) == bool(options["hub"]):
            raise CommandError("give a FILE or --hub DATASET_ID (one of them)", returncode=2)
        try:
            mapping_data = None
            if options["mapping"]:
                try:
                    mapping_data = json.loads(Path(options["mapping"]).read_text(encoding="utf-8"))
                except (OSError, ValueError) as exc:
                    raise CommandError(f"--mapping {options['mapping']}: {exc}", returncode=2) from None
            mapping = import_mapping_resolve(
                mapping=mapping_data,
                mapping_name=options["mapping_name"],
                from_import=options["mapping_from_import"],
            )
            hub = None
            if options["hub"]:
                hub = HubSource(
                    options["hub"], options["hub_config"], options["hub_split"], options["hub_revision"]
                )
            result = dataset_import(
                path=Path(options["file"]) if options["file"] else None,
                hub=hub,
                name=options["name"],
                file_format=options["file_format"],
                kind=options["kind"],
                replace=options["replace"],
                description=options["description"],
                license=options["license"],
                mapping=mapping,
            )
        except ImportFailed as exc:
            if options["json"]:
                self.stdout.write(json.dumps(exc.as_dict(), ensure_ascii=False))
            else:
                for error in exc.errors:
                    self.stderr.write(str(error))
            raise CommandError(f"import failed, nothing written: {exc.summary()}", returncode=2) from None
        if options["save_mapping_as"] and mapping is not None:
            import_mapping_save(name=options["save_mapping_as"], mapping=mapping)
        if options["json"]:
            self.stdout.write(json.dumps(result.as_dict(), ensure_ascii=False))
        else:
            counts = ", ".join(f"{n} {key.replace('_', ' ')}" for key, n in result.counts.items())
            self.stdout.write(self.style.SUCCESS(f"Imported dataset {result.dataset.name!r}: {counts}."))
