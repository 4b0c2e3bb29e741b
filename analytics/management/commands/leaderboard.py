"""``manage.py leaderboard``: the arena leaderboard from a CSV (or TSV) file of battles.

Input columns: ``model_a, model_b, winner`` (``model_a``, ``model_b``, ``tie``, ``tie (bothbad)``), optional
``language, register, category`` (one leaderboard per value of each) and ``<f>_a, <f>_b`` for every style
feature f named in ``--style-control`` (``length`` = answer length in tokens; ``headers``, ``bold``,
``lists`` = markdown counts; any other name with its two columns works the same way).

With ``--json`` the output is ``Leaderboard.to_dict()`` of ``analytics.domain.leaderboard``: ``models``
(model, rating, ci95, rank, rank_range, tier, battles, wins, losses, ties, both_bad, rated, note),
``style`` (features and their gamma with ci95), ``davidson_nu``, ``n_battles``, ``n_used``, ``bootstrap``,
``pair_matrix``, ``vote_drop`` and ``breakdowns``. The page and the API serve the same function's output.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from django.core.management.base import CommandParser

from analytics.domain.csv_inputs import InputError, battles_frame, read_csv
from analytics.domain.leaderboard import TIES, Leaderboard, LeaderboardError, leaderboard_fit
from evaluation.management.commands import CsvCommand

_FEATURE = re.compile(r"^[a-z][a-z0-9_]*$")


class Command(CsvCommand):
    help = "Bradley-Terry leaderboard of arena battles: ratings, bootstrap intervals, rank ranges, style control."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--battles",
            required=True,
            help="CSV (or .tsv) with model_a,model_b,winner[,language,register,category,<f>_a,<f>_b]",
        )
        parser.add_argument("--ties", choices=TIES, default="half", help="half wins (default) or Davidson")
        parser.add_argument(
            "--style-control",
            default="",
            metavar="F[,F...]",
            help="style features to control for, e.g. length,headers,bold,lists (columns F_a and F_b)",
        )
        parser.add_argument("--bootstrap", type=int, default=1000, help="bootstrap draws (0: no intervals)")
        parser.add_argument("--seed", type=int, default=0, help="seed of the bootstrap")
        parser.add_argument(
            "--no-vote-drop", action="store_true", help="skip the vote-drop robustness search"
        )
        parser.add_argument("--json", action="store_true", help="print JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["bootstrap"] < 0:
            raise self.bad_input("--bootstrap must be 0 or more")
        features = [f.strip().lower() for f in options["style_control"].split(",") if f.strip()]
        for feature in features:
            if not _FEATURE.match(feature):
                raise self.bad_input(
                    f"--style-control: {feature!r} is not a feature name (letters, digits, _)"
                )
        if len(set(features)) != len(features):
            raise self.bad_input("--style-control names a feature twice")
        path = options["battles"]
        try:
            raw = read_csv(path, sep="\t" if Path(path).suffix.lower() == ".tsv" else ",")
            battles = battles_frame(raw, features, source=path)
            board = leaderboard_fit(
                battles,
                ties=options["ties"],
                style_features=features,
                bootstrap=options["bootstrap"],
                seed=options["seed"],
                vote_drop=not options["no_vote_drop"],
            )
        except (InputError, LeaderboardError) as exc:
            raise self.bad_input(f"{path}: {exc}" if isinstance(exc, LeaderboardError) else str(exc)) from exc
        if options["json"]:
            self.stdout.write(json.dumps(board.to_dict(), ensure_ascii=False))
        else:
            self.stdout.write(_table(board))


def _table(board: Leaderboard) -> str:
    lines = [f"{'rank':>4} {'model':<32} {'rating':>8} {'95% CI':>17} {'ranks':>7} {'battles':>8}"]
    for row in board.models:
        if row.rating is None:
            lines.append(f"{'-':>4} {row.model:<32} {'-':>8} {'':>17} {'':>7} {row.battles:>8}  {row.note}")
            continue
        ci = f"{row.ci95[0]:.1f}..{row.ci95[1]:.1f}" if row.ci95 else "-"
        ranks = f"{row.rank_range[0]}-{row.rank_range[1]}" if row.rank_range else "-"
        lines.append(f"{row.rank:>4} {row.model:<32} {row.rating:>8.1f} {ci:>17} {ranks:>7} {row.battles:>8}")
    for c in board.style:
        ci = f" ({c.ci95[0]:.3f}..{c.ci95[1]:.3f})" if c.ci95 else ""
        lines.append(f"style {c.feature}: gamma {c.gamma:.3f}{ci}")
    if board.tie_nu is not None:
        lines.append(f"Davidson tie parameter nu: {board.tie_nu:.3f}")
    if board.vote_drop is not None:
        drop = board.vote_drop
        if drop.votes_removed is None:
            lines.append(f"vote drop: no flip of {drop.top} found")
        else:
            lines.append(
                f"vote drop: removing {drop.votes_removed} votes ({100 * drop.share:.2f}%) puts {drop.new_top} "
                f"above {drop.top}"
            )
    lines.append(f"{board.n_battles} battles, {board.n_used} in the fit, {board.bootstrap} bootstrap draws")
    return "\n".join(lines)
