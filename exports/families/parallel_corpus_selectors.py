"""Reads of a parallel corpus export: the accepted translation units of a translation project, their
counts, and who translated and reviewed them."""

from __future__ import annotations

from collections.abc import Iterator

import pandas as pd
from django.db.models import Count, Q, QuerySet

from annotation.models import Project, Task, TranslationRound
from datasets_app.models import TranslationUnit
from exports.selectors import (
    CHUNK_ROWS,
    keyset_pages,
    person_pseudonym,
    work_counts,
)

PARALLEL_CORPUS_COLUMNS = (
    "id",
    "source",
    "target",
    "source_language",
    "target_language",
    "register",
    "translator",
    "n_rounds",
    "fixed_by_reviewer",
    "flags",
)


def corpus_units(project: Project) -> QuerySet[TranslationUnit]:
    """The accepted translation units of the project's tasks: the final corpus."""
    return TranslationUnit.objects.filter(
        pk__in=Task.objects.filter(project_id=project.pk, translation_unit__isnull=False).values(
            "translation_unit_id"
        ),
        status=TranslationUnit.Status.ACCEPTED,
    )


def parallel_corpus_counts(project: Project) -> list[tuple[str, str, str, int]]:
    """``(source_language, target_language, register, units)`` of the final corpus, sorted."""
    rows = (
        corpus_units(project)
        .order_by()
        .values_list("source_language", "target_language", "register")
        .annotate(n=Count("id"))
    )
    return sorted((s, t, r, n) for s, t, r, n in rows)


def parallel_corpus_work(project: Project) -> dict[str, dict[str, int]]:
    """Who translated the units of the final corpus, who gave the review verdicts on them, and who gave the
    verdict that accepted each (``work_counts`` each)."""
    units = corpus_units(project)
    reviews = TranslationRound.objects.filter(unit__in=units).exclude(verdict="")
    accepting = reviews.filter(verdict__in=(TranslationRound.Verdict.ACCEPT, TranslationRound.Verdict.FIX))
    return {
        "translations": work_counts(units, user="translator"),
        "review_verdicts": work_counts(reviews, user="reviewer"),
        "accepting_verdicts": work_counts(accepting, user="reviewer", unit="unit_id"),
    }


def parallel_corpus_chunks(project: Project, *, chunk_rows: int = CHUNK_ROWS) -> Iterator[pd.DataFrame]:
    """The final corpus in unit order, one DataFrame (``PARALLEL_CORPUS_COLUMNS``) per page.

    ``translator`` is ``person_pseudonym`` (the user who translated it, else the imported name);
    ``n_rounds`` counts the unit's review rounds (0 for a unit imported as accepted); ``fixed_by_reviewer``
    says whether the final text is a reviewer's correction; ``flags`` lists the codes of the automatic
    flags still on the final text.
    """
    fields = (
        "external_id",
        "source_text",
        "translation_text",
        "source_language",
        "target_language",
        "register",
        "translator_id",
        "translator_name",
        "flags",
    )
    pseudonyms: dict[tuple[int | None, str], str | None] = {}
    for rows in keyset_pages(corpus_units(project), fields, chunk_rows=chunk_rows):
        ids = [row[0] for row in rows]
        rounds = {
            unit_id: (n, fixes)
            for unit_id, n, fixes in TranslationRound.objects.filter(unit_id__in=ids)
            .order_by()
            .values_list("unit_id")
            .annotate(n=Count("id"), fixes=Count("id", filter=Q(verdict=TranslationRound.Verdict.FIX)))
        }
        out = []
        for pk, external_id, source, target, source_lang, target_lang, register, user_id, name, flags in rows:
            who = (user_id, "" if user_id is not None else name)
            if who not in pseudonyms:
                pseudonyms[who] = person_pseudonym(project=project, user_id=who[0], name=who[1])
            n_rounds, fixes = rounds.get(pk, (0, 0))
            out.append(
                (
                    external_id,
                    source,
                    target,
                    source_lang,
                    target_lang,
                    register,
                    pseudonyms[who],
                    n_rounds,
                    fixes > 0,
                    [str(f.get("code", "")) for f in flags or [] if isinstance(f, dict)],
                )
            )
        yield pd.DataFrame.from_records(out, columns=list(PARALLEL_CORPUS_COLUMNS))


def parallel_corpus_frame(project: Project) -> pd.DataFrame:
    """The whole final corpus in one DataFrame (for small projects and pages; exports stream the chunks)."""
    parts = list(parallel_corpus_chunks(project))
    if not parts:
        return pd.DataFrame({name: pd.Series(dtype=object) for name in PARALLEL_CORPUS_COLUMNS})
    return pd.concat(parts, ignore_index=True)
