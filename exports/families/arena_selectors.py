"""Reads of an arena export: the voted battles of the arena with their voters under pseudonyms."""

from __future__ import annotations

from typing import Any

from django.db.models import Count

from annotation.models import Project
from arena.models import Battle
from arena.selectors import battle_export_rows
from exports.selectors import annotator_pseudonym


def arena_battle_rows(project: Project) -> list[dict[str, Any]]:
    """One row per voted battle (``arena.selectors.battle_export_rows``), ``voter_id`` replaced by the
    voter's pseudonym in this project; battles not counted are not rows."""
    pseudonyms: dict[int, str] = {}
    rows = []
    for row in battle_export_rows(project=project):
        user_id = row.pop("voter_id")
        if user_id not in pseudonyms:
            pseudonyms[user_id] = annotator_pseudonym(project=project, user_id=user_id)
        rows.append({**row, "voter": pseudonyms[user_id]})
    return rows


def arena_battle_counts(project: Project) -> dict[str, int]:
    """Battles of the arena by status (what a preview shows)."""
    counts = dict.fromkeys(Battle.Status.values, 0)
    by_status = Battle.objects.filter(project_id=project.pk).values_list("status").annotate(n=Count("id"))
    counts.update({status: n for status, n in by_status.order_by()})
    return counts
