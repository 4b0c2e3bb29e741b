"""``manage.py arena_battles --project ID [--out FILE.csv] [--json]``: an arena's voted battles in the
``leaderboard`` command's CSV columns (``model_a, model_b, winner, language, register, category, length_a,
length_b, <feature>_a/_b, ...``), ready for ``manage.py leaderboard --battles FILE.csv``.

Exit status 2 with a one-line reason on bad input (no such arena, an output file that exists).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Project
from arena.domain.battles import LEADERBOARD_COLUMNS
from arena.selectors import battle_leaderboard_rows


class Command(BaseCommand):
    help = "Write an arena's voted battles as the leaderboard command's battle CSV."

    def add_arguments(self, parser):
        parser.add_argument("--project", type=int, required=True, help="Id of the arena project.")
        parser.add_argument("--out", default="", help="CSV file to write (default: standard output).")
        parser.add_argument("--overwrite", action="store_true", help="Replace --out if it exists.")
        parser.add_argument("--json", action="store_true", help="Print a JSON summary (or the rows).")

    def handle(self, *args, **options):
        project = Project.objects.filter(pk=options["project"], kind=Project.Kind.ARENA).first()
        if project is None:
            raise CommandError(f"--project: no arena project with id {options['project']}", returncode=2)
        out = options["out"]
        if out and Path(out).exists() and not options["overwrite"]:
            raise CommandError(f"--out: {out} exists; pass --overwrite to replace it", returncode=2)
        rows = battle_leaderboard_rows(project_ids=[project.pk])
        if options["json"] and not out:
            self.stdout.write(json.dumps({"project": project.pk, "n_battles": len(rows), "rows": rows}))
            return
        if out:
            with open(out, "w", encoding="utf-8", newline="") as handle:
                _write(handle, rows)
            summary = {"project": project.pk, "n_battles": len(rows), "out": str(out)}
            self.stdout.write(
                json.dumps(summary) if options["json"] else f"{len(rows)} battles written to {out}"
            )
        else:
            text = io.StringIO()
            _write(text, rows)
            self.stdout.write(text.getvalue(), ending="")


def _write(handle, rows) -> None:
    writer = csv.DictWriter(handle, fieldnames=list(LEADERBOARD_COLUMNS), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
