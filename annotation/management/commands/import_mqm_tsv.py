"""``manage.py import_mqm_tsv``: a WMT/Anthea MQM TSV file as an active MQM (or ESA) project with every
rater's spans (``annotation.services.mqm_tsv_import``).

Raters become accounts named ``--rater-prefix`` + the file's rater name (an existing account of that name
is used). With ``--json`` the output is ``{"project", "dataset", "units", "ratings", "spans", "raters"}``.
A bad file: exit code 2 and one line naming the line and column; nothing is written.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.services import PersonInvalid
from annotation.domain.mqm_tsv import TsvError
from annotation.models import Project
from annotation.services import ProjectInvalid, mqm_tsv_import_with_accounts

BAD_INPUT = 2


class Command(BaseCommand):
    help = "Import a WMT/Anthea MQM TSV file as an active MQM or ESA project with its raters' spans."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="MQM TSV: system, doc, doc_id, seg_id, rater, source, target, ...")
        parser.add_argument("--name", required=True, help="Name of the new dataset and project.")
        parser.add_argument("--source-language", required=True, help="ISO 639-3 code, e.g. eng.")
        parser.add_argument("--target-language", required=True, help="ISO 639-3 code, e.g. ind, jav.")
        parser.add_argument(
            "--protocol", choices=("mqm", "esa"), default="mqm", help="esa needs a score column"
        )
        parser.add_argument("--rater-prefix", default="", help="Default: the name in lower case, then '-'.")
        parser.add_argument("--json", action="store_true", help="print JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["file"])
        if not path.is_file():
            raise CommandError(f"{path}: no such file", returncode=BAD_INPUT)
        for flag in ("source_language", "target_language"):
            if not re.fullmatch(r"[a-z]{3}", options[flag]):
                raise CommandError(
                    f"--{flag.replace('_', '-')}: {options[flag]!r} is not an ISO 639-3 code (three letters)",
                    returncode=BAD_INPUT,
                )
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise CommandError(f"{path}: not UTF-8 text (byte {exc.start})", returncode=BAD_INPUT) from exc
        kind = Project.Kind.TRANSLATION_ESA if options["protocol"] == "esa" else Project.Kind.TRANSLATION_MQM
        try:
            done, users = mqm_tsv_import_with_accounts(
                text=text,
                name=options["name"],
                source_language=options["source_language"],
                target_language=options["target_language"],
                kind=kind,
                rater_prefix=options["rater_prefix"],
            )
        except TsvError as exc:
            raise CommandError(f"{path}: {exc}", returncode=BAD_INPUT) from exc
        except (ProjectInvalid, PersonInvalid) as exc:
            raise CommandError(" ".join(str(exc).split()), returncode=BAD_INPUT) from exc
        result = {
            "project": done.project.pk,
            "dataset": done.project.dataset_id,
            "units": done.units,
            "ratings": done.ratings,
            "spans": done.spans,
            "raters": {rater: user.get_username() for rater, user in users.items()},
        }
        if options["json"]:
            self.stdout.write(json.dumps(result, ensure_ascii=False))
            return
        self.stdout.write(
            f"Project {result['project']}: {done.units} units, {done.ratings} ratings, {done.spans} spans "
            f"by {len(users)} raters ({', '.join(result['raters'].values())})"
        )
