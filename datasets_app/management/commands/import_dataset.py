import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from datasets_app.domain.import_records import KINDS
from datasets_app.readers import FORMATS
from datasets_app.services import ImportFailed, dataset_import


class Command(BaseCommand):
    help = "Import prompts (with responses), translation units or questions from JSONL, CSV or a Hugging Face folder."

    def add_arguments(self, parser):
        parser.add_argument("file", help="A .jsonl or .csv file, or a Hugging Face dataset folder.")
        parser.add_argument("--name", required=True, help="Name of the new dataset.")
        parser.add_argument(
            "--format", choices=FORMATS, dest="file_format", help="Default: from the extension."
        )
        parser.add_argument("--kind", choices=KINDS, help="Default: detected from the first record.")
        parser.add_argument("--replace", action="store_true", help="Replace a dataset of the same name.")
        parser.add_argument("--description", default="")
        parser.add_argument("--license", default="")
        parser.add_argument("--json", action="store_true", help="Print the result as JSON.")

    def handle(self, *args, **options):
        try:
            result = dataset_import(
                path=Path(options["file"]),
                name=options["name"],
                file_format=options["file_format"],
                kind=options["kind"],
                replace=options["replace"],
                description=options["description"],
                license=options["license"],
            )
        except ImportFailed as exc:
            if options["json"]:
                self.stdout.write(json.dumps(exc.as_dict(), ensure_ascii=False))
            else:
                for error in exc.errors:
                    self.stderr.write(str(error))
            raise CommandError(f"import failed, nothing written: {exc.summary()}", returncode=2) from None
        if options["json"]:
            self.stdout.write(json.dumps(result.as_dict(), ensure_ascii=False))
        else:
            counts = ", ".join(f"{n} {key.replace('_', ' ')}" for key, n in result.counts.items())
            self.stdout.write(self.style.SUCCESS(f"Imported dataset {result.dataset.name!r}: {counts}."))
