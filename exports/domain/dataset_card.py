"""The README.md dataset card of an exported preference dataset (Hugging Face format).

The card is a YAML header (what the Hub and ``datasets`` read: licence, languages, task, size, and which
parquet files make which split) followed by Markdown for people: how the data was made, the rubric and
guidelines the annotators saw, counts, and agreement figures. Nothing is invented: a figure that was not
passed in is written as "not computed", a section with nothing to show (no rubric, no guidelines) is left
out and nothing promises it, and who gave the answers is said only as far as it is known.

The header is written by a small YAML emitter of our own (mappings, sequences and scalars, every string
double-quoted with JSON escapes), so the card needs no YAML library; what it writes is read back by
``yaml.safe_load`` and by ``huggingface_hub.DatasetCard``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from datasets_app.domain.csv_cells import FORMULA_PREFIXES, QUOTE_PREFIX

NOT_COMPUTED = "not computed"
SIZE_BUCKETS = (
    (1_000, "n<1K"),
    (10_000, "1K<n<10K"),
    (100_000, "10K<n<100K"),
    (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"),
    (100_000_000, "10M<n<100M"),
    (1_000_000_000, "100M<n<1B"),
)
STRATEGY_TEXT = {
    "scores": (
        "Every pair of responses to the same prompt, ordered by an aggregated score: for each criterion the "
        "mean rating over annotators, then the weighted sum of those means (or, with lexicographic ordering, "
        "the criteria compared one after another). Pairs whose scores are equal are ties and were left out, "
        "as were pairs whose margin is below the minimum margin."
    ),
    "best_vs_rest": (
        "For each prompt the response picked as best by the most annotators is paired, as chosen, with every "
        "other response to that prompt. Prompts where the most picks are shared, or where most annotators "
        'said "all bad", give no pairs.'
    ),
    "pairwise_majority": (
        "For each pair of responses shown side by side, the response preferred by most annotators' votes is "
        'chosen. Pairs whose most frequent vote was "tie" or "both bad", or where the top votes were shared, '
        "were left out."
    ),
}
COLUMN_TEXT = {
    "item_id": "Timbang's id of the prompt (all pairs of one prompt share it and sit in one split).",
    "prompt_external_id": "The prompt's id in the imported dataset.",
    "prompt": "The conversation up to the first user turn (system messages first).",
    "chosen": (
        "The preferred response's continuation: its first answer, then each later user turn followed by its "
        "answer. `prompt + chosen` is the whole conversation."
    ),
    "rejected": "The other response's continuation, laid out like `chosen`.",
    "chosen_model": "The model that wrote the chosen response.",
    "rejected_model": "The model that wrote the rejected response.",
    "chosen_response_id": "Timbang's id of the chosen response.",
    "rejected_response_id": "Timbang's id of the rejected response.",
    "chosen_score": (
        "Aggregated score of the chosen response (weighted sum of criterion means), number of best-of-N "
        "picks, or number of pairwise votes, depending on the strategy."
    ),
    "rejected_score": "The same score for the rejected response.",
    "margin": "The difference that decided the pair.",
    "n_annotators": "Distinct annotators who judged the prompt (or the pair, for pairwise votes).",
    "agreement": "Share of agreeing annotator pairs on the prompt (empty when no target was judged twice).",
    "category": "The prompt's category.",
    "language": "The prompt's language (ISO 639-3 code).",
    "register": "The prompt's register (empty when the language has none).",
    "dataset_id": "Timbang's id of the dataset the prompt belongs to.",
    "project_id": "Timbang's id of the annotation project.",
}
# Columns named after something the project defines (a criterion), matched by prefix.
COLUMN_PREFIX_TEXT = {
    "chosen_score_": "Mean rating of the chosen response over annotators on the criterion `{}`.",
    "rejected_score_": "Mean rating of the rejected response over annotators on the criterion `{}`.",
}
UNDESCRIBED = "(no description)"
# "unstated": the exporter did not say who the annotators were (the default); the card says so.
PROVENANCES = ("expert", "crowd", "simulated", "unstated")
ANNOTATIONS_CREATORS = {
    "expert": "expert-generated",
    "crowd": "crowdsourced",
    "simulated": "machine-generated",
    "unstated": "other",
}
# ``{guided}`` is where the card says which of the rubric and the guidelines below the annotators followed.
JUDGED_BY = {
    "expert": (
        "Native speakers judged the responses without seeing which model wrote them, in an order shuffled for "
        "each annotator{guided}."
    ),
    "crowd": (
        "Crowd workers judged the responses without seeing which model wrote them, in an order shuffled for "
        "each annotator{guided}."
    ),
    "unstated": (
        "{annotators} judged the responses without seeing which model wrote them, in an order shuffled for "
        "each annotator{guided}. Who they were (native speakers, experts or crowd workers) was not stated "
        "when this dataset was exported."
    ),
    "simulated": (
        "The judgements are simulated: a program stood in for the annotators and drew each answer from a "
        "model of rater bias and noise. No person judged these responses; do not use them as human "
        "preferences."
    ),
}
_PREFIX_NAMES = {"\t": "a tab", "\r": "a carriage return"}
_PREFIXES_TEXT = ", ".join(_PREFIX_NAMES.get(c, f"`{c}`") for c in FORMULA_PREFIXES[:-1])
# One sentence, on every card, about the only place where an exported text differs from what was stored.
CSV_CELLS_NOTE = (
    f"In CSV files a text cell that begins with {_PREFIXES_TEXT} or {_PREFIX_NAMES[FORMULA_PREFIXES[-1]]} "
    f"is written with a leading `{QUOTE_PREFIX}`, so that spreadsheets show it as text instead of running "
    "it as a formula; parquet and JSON files hold the raw text."
)
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_YAML_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~"}
# PyYAML refuses non-printable characters and treats NEL / LS / PS as line breaks; escape them all.
_YAML_UNSAFE = re.compile(
    "[^\x09\x0a\x0d\x20-\x7e\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]|[\u2028\u2029]"
)


@dataclass(frozen=True)
class AlphaFigure:
    """Krippendorff's alpha of one criterion; ``alpha=None`` means undefined (no variation in the data)."""

    alpha: float | None
    ci95: tuple[float, float] | None = None
    level: str = "ordinal"
    n_units: int | None = None


@dataclass(frozen=True)
class CardInput:
    """Everything the card says. Counts are plain mappings so the caller can build them from any source."""

    pretty_name: str
    license: str
    languages: Sequence[str]
    split_rows: Mapping[str, int]
    summary: str = ""
    task_categories: Sequence[str] = ("text-generation",)
    tags: Sequence[str] = ("preference", "dpo", "human-feedback")
    provenance: str = "unstated"
    # Annotators whose answers were simulated, of all who answered (said on the card when some were).
    n_simulated_annotators: int = 0
    n_annotators: int = 0
    parameters: Mapping[str, Any] = field(default_factory=dict)
    # Scores: rated criteria that did not enter the score -> why (said beside the weights).
    left_out_criteria: Mapping[str, str] = field(default_factory=dict)
    pair_counts: Mapping[str, Any] | None = None
    rubric_version: str | int | None = None
    rubrics: Mapping[str, str | Mapping[str, str]] = field(default_factory=dict)
    guidelines: str | Mapping[str, str] | None = None
    category_counts: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    language_counts: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    alpha: Mapping[str, AlphaFigure | None] | None = None
    judge_agreement: Mapping[str, Mapping[str, Any]] | None = None
    data_dir: str = "data"
    # The written parquet schema as (column, Arrow type) pairs, in file order.
    columns: Sequence[tuple[str, str]] = ()
    # Strata (category / language) that got no test item, as (label, items), and the asked test share.
    test_size: float = 0.0
    too_small_strata: Sequence[tuple[str, int]] = ()
    # What the "how to load" section names: the folder holding this card, and the Hub repo when pushed.
    folder_name: str = ""
    hub_repo_id: str = ""
    # Pairwise majority with reliability-weighted votes: pseudonymous annotator -> the weight of their votes.
    vote_weights: Mapping[str, float] | None = None


def size_category(n_rows: int) -> str:
    """The Hub's ``size_categories`` bucket: ``n<1K`` below 1,000, ``1K<n<10K`` from 1,000, and so on."""
    if n_rows < 0:
        raise ValueError("a row count cannot be negative")
    for limit, label in SIZE_BUCKETS:
        if n_rows < limit:
            return label
    return "n>1B"


def counts_by(splits: Mapping[str, pd.DataFrame], column: str) -> dict[str, dict[str, int]]:
    """``{value: {split: rows}}`` for the card's count tables; missing values count under ``""``."""
    out: dict[str, dict[str, int]] = {}
    for split, frame in splits.items():
        values = frame[column].astype(object).where(frame[column].notna(), "")
        for value, n in values.value_counts(sort=False).items():
            out.setdefault(str(value), {})[split] = int(n)
    return {value: out[value] for value in sorted(out)}


def annotations_creators(card: CardInput) -> list[str]:
    """The Hub's ``annotations_creators``: the stated provenance, plus ``machine-generated`` when some of
    the answers were simulated (simulated answers are always declared)."""
    if card.provenance not in ANNOTATIONS_CREATORS:
        raise ValueError(f"provenance must be one of {', '.join(PROVENANCES)}")
    out = [ANNOTATIONS_CREATORS[card.provenance]]
    if card.n_simulated_annotators and "machine-generated" not in out:
        out.append("machine-generated")
    return out


def card_metadata(card: CardInput) -> dict[str, Any]:
    """The YAML header as a plain dict (also what ``DatasetCard(...).data`` should read back)."""
    languages = sorted({str(code) for code in card.languages})
    return {
        "pretty_name": card.pretty_name,
        "license": card.license,
        "language": languages,
        "multilinguality": "multilingual" if len(languages) > 1 else "monolingual",
        "annotations_creators": annotations_creators(card),
        "task_categories": list(card.task_categories),
        "tags": list(card.tags),
        "size_categories": [size_category(sum(card.split_rows.values()))],
        "configs": [
            {
                "config_name": "default",
                "data_files": [
                    {"split": split, "path": f"{card.data_dir}/{split}-*"} for split in card.split_rows
                ],
            }
        ],
    }


def render_dataset_card(card: CardInput) -> str:
    """The full README.md text: ``---`` YAML header ``---`` then the Markdown body."""
    header = render_yaml(card_metadata(card))
    body = [f"# {card.pretty_name}", ""]
    if card.summary:
        body += [card.summary.strip(), ""]
    body += _load_section(card)
    body += _making_section(card)
    body += _split_section(card)
    body += _columns_section(card)
    body += _rubric_section(card)
    body += _counts_section(card)
    body += _agreement_section(card)
    body += ["## License", "", f"`{card.license}`", ""]
    return f"---\n{header}---\n\n" + "\n".join(body).rstrip() + "\n"


def _guided(card: CardInput) -> str:
    """Which of the sections below the annotators followed: only those that are there."""
    followed = [
        name for name, given in (("rubric", _has_rubric(card)), ("guidelines", card.guidelines)) if given
    ]
    return f", following the {' and '.join(followed)} below" if followed else ""


def _judged_by(card: CardInput) -> str:
    if card.provenance not in JUDGED_BY:
        raise ValueError(f"provenance must be one of {', '.join(PROVENANCES)}")
    n = card.n_annotators
    annotators = "Annotators" if not n else f"{n} annotator" if n == 1 else f"{n} annotators"
    return JUDGED_BY[card.provenance].format(guided=_guided(card), annotators=annotators)


def _making_section(card: CardInput) -> list[str]:
    lines = [
        "## How the data was made",
        "",
        "Prompts were grouped by category and answered by several language models. "
        + _judged_by(card)
        + " The judgements were then turned into preference pairs.",
        "",
    ]
    if card.n_simulated_annotators and card.provenance != "simulated":
        lines += [
            f"Of the {card.n_annotators} annotators, {card.n_simulated_annotators} were simulated (a program "
            "standing in for a person); their answers are part of this dataset.",
            "",
        ]
    strategy = card.parameters.get("strategy")
    if strategy in STRATEGY_TEXT:
        lines += [f"Conversion (`{strategy}`): {STRATEGY_TEXT[strategy]}", ""]
    weights = card.parameters.get("weights")
    if strategy == "scores" and isinstance(weights, Mapping) and weights:
        weighed = ", ".join(f"`{name}` (weight {_value(float(w))})" for name, w in weights.items())
        lines += [f"Criteria in the score: {weighed}.", ""]
    if strategy == "scores" and card.left_out_criteria:
        lines += [
            "Rated criteria left out of the score: "
            + "; ".join(f"`{name}`: {why}" for name, why in card.left_out_criteria.items())
            + ".",
            "",
        ]
    if card.vote_weights is not None:
        lines += [
            "Votes were reliability-weighted: each annotator's vote counted with their Dawid-Skene accuracy "
            "(the estimated chance that they give an item's true answer, fitted by EM over the project's "
            "categorical answers) instead of 1, so the side with the larger summed weight was chosen and "
            "`chosen_score` / `rejected_score` are summed weights. Weights per (pseudonymous) annotator:",
            "",
            *_table(
                ["annotator", "weight"],
                [[name, f"{weight:.4f}"] for name, weight in sorted(card.vote_weights.items())],
            ),
            "",
        ]
    if card.parameters:
        lines += [
            "Parameters:",
            "",
            *_table(["parameter", "value"], [[k, _value(v)] for k, v in card.parameters.items()]),
        ]
        lines.append("")
    if card.pair_counts:
        rows = []
        for key, value in card.pair_counts.items():
            if isinstance(value, Mapping):
                rows += [[f"{key}: {sub}", _value(n)] for sub, n in value.items()]
            else:
                rows.append([key, _value(value)])
        lines += ["What went in and what was left out:", "", *_table(["quantity", "count"], rows), ""]
    return lines


def column_text(name: str) -> str:
    """What a written column holds (criterion columns by prefix; unknown columns say so)."""
    if name in COLUMN_TEXT:
        return COLUMN_TEXT[name]
    for prefix, text in COLUMN_PREFIX_TEXT.items():
        if name.startswith(prefix) and len(name) > len(prefix):
            return text.format(name[len(prefix) :])
    return UNDESCRIBED


def _columns_section(card: CardInput) -> list[str]:
    rows = [[f"`{name}`", f"`{arrow_type}`", column_text(name)] for name, arrow_type in card.columns]
    return ["## Columns", "", *_table(["column", "type", "meaning"], rows), "", CSV_CELLS_NOTE, ""]


def _load_section(card: CardInput) -> list[str]:
    folder = card.folder_name or "."
    lines = [
        "## How to load",
        "",
        "This is a Hub-style parquet dataset: this README.md (its header names the splits) and one parquet "
        f"file per split under `{card.data_dir}/`. Load it with `datasets.load_dataset`; "
        "`datasets.load_from_disk` does not read it (that reads folders written by `save_to_disk`). From the "
        "folder that holds this dataset's folder:",
        "",
        "```python",
        "from datasets import load_dataset",
        "",
        f"dataset = load_dataset({json.dumps(folder, ensure_ascii=False)})",
        "```",
        "",
        f"(`{folder}` is the folder this card was written in; for an unzipped download, name the folder you "
        "unzipped it into.)",
        "",
    ]
    if card.hub_repo_id:
        lines += [
            "From the Hugging Face Hub:",
            "",
            "```python",
            "from datasets import load_dataset",
            "",
            f"dataset = load_dataset({json.dumps(card.hub_repo_id)})",
            "```",
            "",
        ]
    return lines


def _split_section(card: CardInput) -> list[str]:
    if len(card.split_rows) < 2 and not card.too_small_strata:
        return []
    share = _value(float(card.test_size))
    lines = [
        "## Splits",
        "",
        f"Prompts (with all their pairs) were split into train and test with a test share of {share} of the "
        "prompts, stratified by category and language: each category and language pair gives test its share "
        "of its prompts (largest remainders, seeded), and keeps at least one prompt in train.",
        "",
    ]
    if card.too_small_strata:
        listed = ", ".join(
            f"{label} ({_value(n)} prompt{'' if n == 1 else 's'})" for label, n in card.too_small_strata
        )
        lines += [
            f"These category / language strata are too small for a test share of {share} and have no prompt "
            f"in test: {listed}.",
            "",
        ]
    return lines


def _has_rubric(card: CardInput) -> bool:
    return card.rubric_version is not None or bool(card.rubrics)


def _rubric_section(card: CardInput) -> list[str]:
    """The rubric (with its version, when there is one) and the guidelines; each only when given."""
    lines: list[str] = []
    if _has_rubric(card):
        lines += ["## Rubric", ""]
        if card.rubric_version is not None:
            lines += [f"Rubric version: {card.rubric_version}", ""]
        if not card.rubrics:
            lines += ["No rubric text was given.", ""]
        for criterion, text in card.rubrics.items():
            lines += [f"### {criterion}", ""]
            lines += _texts(text)
    if card.guidelines:
        lines += ["## Annotation guidelines", "", *_texts(card.guidelines)]
    return lines


WORK_HEADER = ("work", "done", "by people", "by simulated annotators", "person not recorded")
SIMULATED_NOTE = (
    "A simulated annotator is a program standing in for a person (as in Timbang's demo), not a native "
    "speaker: the work it did is part of this dataset and of the counts below; treat it as unchecked by people."
)


def work_lines(work: Sequence[tuple[str, Mapping[str, int]]]) -> list[str]:
    """A table of who did each piece of work (``(what, counts)`` with the counts of
    ``exports.selectors.work_counts``), and the note on simulated annotators when some did part of it."""

    def people(n: int, rows: int) -> str:
        return f"{rows:,} ({n} {'person' if n == 1 else 'people'})" if rows else "0"

    def simulated(n: int, rows: int) -> str:
        return f"{rows:,} ({n} simulated annotator{'' if n == 1 else 's'})" if rows else "0"

    rows = []
    for what, c in work:
        by_people = c["rows"] - c["simulated_rows"] - c["unrecorded_rows"]
        rows.append(
            [
                what,
                f"{c['rows']:,}",
                people(c["people"], by_people),
                simulated(c["simulated"], c["simulated_rows"]),
                f"{c['unrecorded_rows']:,}",
            ]
        )
    lines = [*_table(WORK_HEADER, rows), ""]
    if any(c["simulated_rows"] for _, c in work):
        lines += [SIMULATED_NOTE, ""]
    return lines


def _texts(text: str | Mapping[str, str]) -> list[str]:
    if isinstance(text, Mapping):
        lines: list[str] = []
        for language, value in text.items():
            lines += [f"**{language}**", "", str(value).strip(), ""]
        return lines
    return [str(text).strip(), ""]


def _counts_section(card: CardInput) -> list[str]:
    splits = list(card.split_rows)
    lines = [
        "## Counts",
        "",
        *_table(["split", "rows"], [[s, _value(n)] for s, n in card.split_rows.items()]),
        "",
    ]
    for title, counts in (("category", card.category_counts), ("language", card.language_counts)):
        if not counts:
            continue
        rows = []
        for value, per_split in counts.items():
            row = [value or "(none)"] + [_value(per_split.get(s, 0)) for s in splits]
            rows.append(row + [_value(sum(per_split.get(s, 0) for s in splits))])
        lines += [f"Rows per {title}:", "", *_table([title, *splits, "total"], rows), ""]
    return lines


def _agreement_section(card: CardInput) -> list[str]:
    lines = ["## Agreement", ""]
    if not card.alpha:
        lines += [f"Krippendorff's alpha: {NOT_COMPUTED}.", ""]
    else:
        rows = []
        for criterion, figure in card.alpha.items():
            if figure is None:
                rows.append([criterion, "", NOT_COMPUTED, "", ""])
                continue
            alpha = "undefined (no variation)" if figure.alpha is None else f"{figure.alpha:.3f}"
            ci = NOT_COMPUTED if figure.ci95 is None else f"[{figure.ci95[0]:.3f}, {figure.ci95[1]:.3f}]"
            units = "" if figure.n_units is None else str(figure.n_units)
            rows.append([criterion, figure.level, alpha, ci, units])
        lines += [
            "Krippendorff's alpha per criterion (95% confidence interval from a unit bootstrap):",
            "",
            *_table(["criterion", "level", "alpha", "95% CI", "units"], rows),
            "",
        ]
    if card.judge_agreement is not None and not card.judge_agreement:
        lines += [
            "Agreement of LLM judges with the human preference: no judge verdicts on these prompts.",
            "",
        ]
    if card.judge_agreement:
        metrics: list[str] = []
        for figures in card.judge_agreement.values():
            metrics += [m for m in figures if m not in metrics]
        rows = [
            [judge] + [_value(figures.get(m), NOT_COMPUTED) for m in metrics]
            for judge, figures in card.judge_agreement.items()
        ]
        lines += [
            "Agreement of LLM judges with the human preference:",
            "",
            *_table(["judge", *metrics], rows),
            "",
        ]
    return lines


def _value(value: Any, missing: str = "none") -> str:
    if value is None:
        return missing
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return missing if math.isnan(value) else f"{value:.3f}".rstrip("0").rstrip(".")
    if isinstance(value, (Mapping, list, tuple)):
        return json.dumps(value, ensure_ascii=False, sort_keys=isinstance(value, Mapping))
    return str(value)


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    def cell(text: str) -> str:
        return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return lines


def card_document(header: str, lines: list[str]) -> str:
    """A dataset card: the YAML header between ``---`` lines, then the Markdown lines."""
    return f"---\n{header}---\n\n" + "\n".join(lines)


def render_yaml(data: Mapping[str, Any]) -> str:
    """Block-style YAML for mappings, sequences and scalars (str, int, finite float, bool, None)."""
    return "".join(line + "\n" for line in _yaml_mapping(data, 0))


def _yaml_mapping(data: Mapping[str, Any], indent: int) -> list[str]:
    pad = " " * indent
    lines: list[str] = []
    for key, value in data.items():
        name = _yaml_key(key)
        if isinstance(value, Mapping) and value:
            lines += [f"{pad}{name}:", *_yaml_mapping(value, indent + 2)]
        elif isinstance(value, (list, tuple)) and value:
            lines += [f"{pad}{name}:", *_yaml_sequence(value, indent)]
        else:
            lines.append(f"{pad}{name}: {_yaml_scalar(value)}")
    return lines


def _yaml_sequence(items: Sequence[Any], indent: int) -> list[str]:
    pad = " " * indent
    lines: list[str] = []
    for item in items:
        if isinstance(item, Mapping) and item:
            nested = _yaml_mapping(item, indent + 2)
            lines += [f"{pad}- {nested[0].lstrip()}", *nested[1:]]
        elif isinstance(item, (list, tuple)) and item:
            lines += [f"{pad}-", *_yaml_sequence(item, indent + 2)]
        else:
            lines.append(f"{pad}- {_yaml_scalar(item)}")
    return lines


def _yaml_key(key: Any) -> str:
    key = str(key)
    if _PLAIN_KEY.fullmatch(key) and key.lower() not in _YAML_WORDS:
        return key
    return _yaml_string(key)


def _yaml_scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("YAML header values must be finite numbers")
        text = repr(value)
        # YAML 1.1 (PyYAML) reads 1e-05 as a string: a float needs a dot before its exponent.
        mantissa, e, exponent = text.partition("e")
        return f"{mantissa}.0e{exponent}" if e and "." not in mantissa else text
    if isinstance(value, str):
        return _yaml_string(value)
    if isinstance(value, Mapping):
        return "{}"
    if isinstance(value, (list, tuple)):
        return "[]"
    raise TypeError(f"cannot write {type(value).__name__} into the YAML header")


def _yaml_string(text: str) -> str:
    quoted = json.dumps(text, ensure_ascii=False)
    return _YAML_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted)
