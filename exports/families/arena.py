"""An arena's battles as a Hugging Face dataset (``arena-battles``): one row per voted battle with both
conversations as messages, the vote and the leaderboard's outcome, language, register, category, the sampler
and its probability, answer lengths and times to first token, and the voter's pseudonym. The card counts
battles, outcomes per model and the sampling, so a reader can weigh the leaderboard built from it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from analytics.domain.leaderboard import LeaderboardError, leaderboard_fit
from annotation.models import Project
from exports.domain.dataset_card import card_document, render_yaml
from exports.families import arena_selectors
from exports.families.base import Destination, Family, Step
from exports.options import ExportFailed, ExportOptions, corpus_options_resolve
from exports.writers import write_hf_folder

ARENA_BATTLES = "arena-battles"


def offered(project: Project) -> bool:
    return project.kind == Project.Kind.ARENA


def resolve(*, project: Project, options: ExportOptions) -> ExportOptions:
    """One train split of every voted battle: pair options and filters are refused, not ignored."""
    return corpus_options_resolve(project=project, options=options)


def preview(*, project: Project, options: ExportOptions) -> dict[str, Any]:
    counts = arena_selectors.arena_battle_counts(project)
    return {"format": options.kind, "rows": counts["voted"], "battles": counts}


@dataclass
class ArenaBuild:
    frame: pd.DataFrame
    counts: dict[str, int]
    summary: dict[str, Any] = field(default_factory=dict)


def read(*, project: Project, options: ExportOptions, step: Step) -> list[dict[str, Any]]:
    step(10, "reading battles")
    rows = arena_selectors.arena_battle_rows(project)
    if not rows:
        raise ExportFailed("this arena has no voted battle yet; nothing was written")
    return rows


def build(*, project: Project, options: ExportOptions, data: list[dict[str, Any]], step: Step) -> ArenaBuild:
    frame = pd.DataFrame.from_records(data)
    for column in ("created_at", "voted_at"):
        frame[column] = pd.to_datetime(frame[column], utc=True)
    return ArenaBuild(frame=frame, counts=arena_selectors.arena_battle_counts(project))


def write(
    *, destination: Destination, built: ArenaBuild, card: Callable[[], str], step: Step
) -> dict[str, Any]:
    step(40, "writing battles")
    rows = write_hf_folder(destination.folder, {"train": built.frame}, card(), overwrite=True)
    return {"format": ARENA_BATTLES, "rows": rows["train"], "splits": rows}


COLUMN_TEXT = {
    "model_a / model_b": "The model endpoints that answered as A (left) and B (right).",
    "winner": "`model_a`, `model_b`, `tie` or `tie (bothbad)` (both answers bad), as the leaderboard reads it.",
    "vote / reason": "The voter's vote as shown to them (`A`, `B`, `tie`, `both_bad`) and their optional reason.",
    "language / register / category": "ISO 639-3 code of the prompt, its speech level where the language has "
    "them, and the category the voter chose.",
    "conversation_a / conversation_b": "Each side's conversation as `{role, content}` messages.",
    "length_a / length_b": "Answer length in tokens (as the model server counted them), over all turns.",
    "headers_*, bold_*, lists_*": "Markdown headers, bold spans and list items in each side's answers.",
    "ttft_ms_a / ttft_ms_b": "Time to the first token of each answer, per turn, in milliseconds.",
    "turns": "Messages the voter sent before voting.",
    "sampler / probability": "The rule that chose the pair and its probability of choosing it.",
    "voter": "Pseudonymous voter id, stable within this arena (a keyed hash, not reversible).",
    "battle": "The battle's random id.",
}


def _leaderboard_lines(frame: pd.DataFrame, options: ExportOptions) -> list[str]:
    """The leaderboard of these battles (``analytics.domain.leaderboard``: Bradley-Terry, ties as half wins,
    style control on answer length, seeded bootstrap), or why there is none yet."""
    draws = min(int(options.bootstrap_draws), 1000)
    board = None
    # With style control on answer length when the lengths give it something to fit, else without.
    for style in (("length",), ()):
        try:
            board = leaderboard_fit(
                frame,
                ties="half",
                style_features=style,
                bootstrap=draws,
                seed=int(options.seed or 0),
                groups=(),
                vote_drop=False,
            )
            break
        except LeaderboardError as exc:
            reason = str(exc)
    if board is None:
        return [f"No ratings yet: {reason}.", ""]
    lines = [
        "Bradley-Terry ratings on the 400·log10 odds scale, as the `leaderboard` command gives them: ties "
        "(and both bad) count as half a win"
        + (", answer length is a style control" if board.style else "")
        + f", and the 95% intervals come from {draws:,} seeded bootstrap draws (seed {board.seed}).",
        "",
        "| model | rating | 95% interval | rank range | battles | wins | ties | losses |",
        "|---|---:|---|---|---:|---:|---:|---:|",
    ]
    for row in board.models:
        interval = f"{row.ci95[0]:.0f} to {row.ci95[1]:.0f}" if row.ci95 else "-"
        ranks = f"{row.rank_range[0]}-{row.rank_range[1]}" if row.rank_range else "-"
        rating = f"{row.rating:.0f}" if row.rating is not None else "-"
        lines.append(
            f"| {row.model} | {rating} | {interval} | {ranks} | {row.battles:,} | {row.wins:,} | "
            f"{row.ties + row.both_bad:,} | {row.losses:,} |"
        )
    if board.style:
        lines += [
            "",
            "Style coefficients (log-odds per standard deviation of the normalised difference):",
            "",
        ]
    for style in board.style:
        interval = f" (95% {style.ci95[0]:.3f} to {style.ci95[1]:.3f})" if style.ci95 else ""
        lines.append(f"- `{style.feature}`: {style.gamma:.3f}{interval}")
    return [*lines, ""]


def card(*, project: Project, options: ExportOptions, built: ArenaBuild, destination: Destination) -> str:
    frame = built.frame
    samplers = Counter(frame["sampler"])
    languages = sorted(set(frame["language"]))
    header = render_yaml(
        {
            "pretty_name": options.pretty_name,
            "license": options.license,
            "language": languages,
            "tags": ["human-feedback", "preference", "arena"],
            "configs": [
                {
                    "config_name": "default",
                    "data_files": [{"split": "train", "path": "data/train-00000-of-00001.parquet"}],
                }
            ],
        }
    )
    lines = [
        f"# {options.pretty_name}",
        "",
        f'Battles of the arena "{project.name}", exported by Timbang: {len(frame):,} voted battles. In each, '
        "a person typed a prompt in their own language; two anonymous models, chosen by the sampler below, "
        "answered side by side as they streamed; the person voted before the names were shown. Battles in "
        f"which a model failed or took too long were not counted and are not here ({built.counts['not_counted']:,}).",
        "",
        "## Leaderboard",
        "",
        *_leaderboard_lines(frame, options),
        "## Sampling",
        "",
        *[f"- `{name}`: {n:,} battles" for name, n in sorted(samplers.items())],
        "",
        "Each row keeps the probability with which its pair was chosen, so an analysis can correct for the "
        "sampling.",
        "",
        "## Columns",
        "",
        "| column | meaning |",
        "|---|---|",
        *[f"| {column} | {text} |" for column, text in COLUMN_TEXT.items()],
        "",
        "## License",
        "",
        f"`{options.license}`",
        "",
    ]
    return card_document(header, lines)


FAMILY = Family(
    name="arena",
    formats=(ARENA_BATTLES,),
    offered=offered,
    resolve=resolve,
    preview=preview,
    read=read,
    build=build,
    card=card,
    write=write,
)
