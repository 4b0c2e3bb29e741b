"""Sets of prompt templates in one benchmark run, and how their figures combine.

A benchmark run asks its items with one or more prompt templates. The aggregation says how:

- ``draw``: each item is asked once, with one template drawn per item by the seeded rule
  (:func:`~evaluation.domain.answer_extraction.choose_variant`), as SeaExam does with its four templates.
  The run's figures are over all items, as with one template.
- ``mean``: every item is asked with every template; the figure is the mean over templates of each
  template's figure (id-csqa reports accuracy averaged over its three zero-shot prompts).
- ``max``: every item is asked with every template; the figure is the best template's (LoraxBench reports
  the best of its prompts).

With ``mean`` and ``max`` each template's figures are computed on its own items first (accuracy, the mean
score, the corpus chrF++ of its sentences), then combined per column: per language the mean or the best of
the templates' figures for that language, so with ``max`` each language may take a different template;
``avg`` is the unweighted mean over languages of those combined figures, and ``overall`` combines the
templates' overall figures (the best template over all items, for ``max``).

Translation and open-QA templates are plain texts with ``{{placeholders}}`` (see :data:`TEXT_PLACEHOLDERS`);
multiple-choice templates are :class:`~evaluation.domain.answer_extraction.McqPromptVariant`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from evaluation.domain.judge_templates import fill_placeholders

DRAW = "draw"
MEAN = "mean"
MAX = "max"
AGGREGATIONS = (DRAW, MEAN, MAX)

MCQ = "mcq"
TRANSLATION = "translation"
OPEN_QA = "open_qa"

#: The placeholders a text template of each task must hold (translation: ``{{register}}`` is optional).
TEXT_PLACEHOLDERS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {TRANSLATION: ("source", "target", "text"), OPEN_QA: ("question",)}
)
TEXT_OPTIONAL: Mapping[str, tuple[str, ...]] = MappingProxyType({TRANSLATION: ("register",), OPEN_QA: ()})


@dataclass(frozen=True)
class TextTemplate:
    """A translation or open-QA prompt: ``text`` with the task's ``{{placeholders}}``."""

    id: str
    task: str
    language: str
    text: str

    def __post_init__(self) -> None:
        if self.task not in TEXT_PLACEHOLDERS:
            raise ValueError(f"template {self.id!r}: a text template is for translation or open_qa")
        missing = [name for name in TEXT_PLACEHOLDERS[self.task] if "{{" + name + "}}" not in self.text]
        if missing:
            needed = ", ".join("{{" + name + "}}" for name in missing)
            raise ValueError(f"template {self.id!r}: the text needs {needed}")

    def render(self, **values: str) -> str:
        return fill_placeholders(self.text, values)


#: The text templates Timbang ships (ours), per task and prompt language; a researcher adds others.
TEXT_TEMPLATES: Mapping[str, tuple[TextTemplate, ...]] = MappingProxyType(
    {
        TRANSLATION: (
            TextTemplate(
                id="mt-id-1",
                task=TRANSLATION,
                language="id",
                text=(
                    "Terjemahkan teks berikut dari bahasa {{source}} ke bahasa {{target}}{{register}}. "
                    "Balas hanya dengan terjemahannya.\n\n{{text}}"
                ),
            ),
            TextTemplate(
                id="mt-id-2",
                task=TRANSLATION,
                language="id",
                text=(
                    "Kalimat bahasa {{source}}: {{text}}\n"
                    "Tuliskan padanannya dalam bahasa {{target}}{{register}}, tanpa penjelasan."
                ),
            ),
            TextTemplate(
                id="mt-en-1",
                task=TRANSLATION,
                language="en",
                text=(
                    "Translate the following text from {{source}} into {{target}}{{register}}. "
                    "Reply with the translation only.\n\n{{text}}"
                ),
            ),
            TextTemplate(
                id="mt-en-2",
                task=TRANSLATION,
                language="en",
                text=(
                    "{{source}} sentence: {{text}}\n"
                    "Write the same sentence in {{target}}{{register}}, without any explanation."
                ),
            ),
        ),
        OPEN_QA: (
            TextTemplate(id="qa-plain", task=OPEN_QA, language="id", text="{{question}}"),
            TextTemplate(
                id="qa-id-1",
                task=OPEN_QA,
                language="id",
                text="Jawablah pertanyaan berikut dengan singkat dan tepat.\n\n{{question}}",
            ),
            TextTemplate(id="qa-plain-en", task=OPEN_QA, language="en", text="{{question}}"),
            TextTemplate(
                id="qa-en-1",
                task=OPEN_QA,
                language="en",
                text="Answer the following question briefly and precisely.\n\n{{question}}",
            ),
        ),
    }
)


def combine(values: Sequence[float | None], aggregation: str) -> float | None:
    """The mean or the maximum of the defined ``values`` (None when none is defined)."""
    if aggregation not in (MEAN, MAX):
        raise ValueError(f"aggregation must be {MEAN!r} or {MAX!r} to combine figures, got {aggregation!r}")
    defined = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    if not defined:
        return None
    return math.fsum(defined) / len(defined) if aggregation == MEAN else max(defined)


def combine_template_table(
    table: Mapping[str, object], aggregation: str, *, column: str
) -> dict[str, object]:
    """One row combining the template rows of a per-language ``table`` (its rows keyed by ``column``, the
    template id): per language the mean or best of the templates' figures, ``avg`` the mean over
    languages of those, ``overall`` the mean or best of the templates' overall figures, and ``best`` per
    language the template that gave it (``max`` only; the first in row order on a tie)."""
    rows: list[Mapping[str, object]] = list(table["rows"])  # type: ignore[call-overload]
    languages: list[str] = list(table["languages"])  # type: ignore[call-overload]
    combined: dict[str, object] = {column: f"{aggregation} of {len(rows)}"}
    best: dict[str, str] = {}
    for language in languages:
        values = [row.get(language) for row in rows]
        combined[language] = combine(values, aggregation)  # type: ignore[arg-type]
        if aggregation == MAX and combined[language] is not None:
            best[language] = str(next(row[column] for row in rows if row.get(language) == combined[language]))
    per_language = [combined[language] for language in languages]
    defined = [value for value in per_language if value is not None]
    combined["avg"] = (
        math.fsum(defined) / len(defined) if defined and len(defined) == len(languages) else None
    )  # type: ignore[arg-type]
    if rows and all("overall" in row for row in rows):
        combined["overall"] = combine([row["overall"] for row in rows], aggregation)  # type: ignore[misc]
    combined["n"] = sum(int(row.get("n") or 0) for row in rows)  # type: ignore[call-overload]
    if best:
        combined["best"] = best
    return combined
