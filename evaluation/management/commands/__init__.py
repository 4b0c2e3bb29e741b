"""Management commands of the evaluation app.

:class:`CsvCommand` is the shared base of the command-line tools that read CSV files: every bad input
(an unknown option, a missing file, a missing column, a bad value) ends with exit code 2 and a single
line on stderr, so scripts can tell bad input from a crash.
"""

from __future__ import annotations

import math
import sys
from typing import Any, NoReturn

from django.core.management.base import BaseCommand, CommandError, CommandParser

BAD_INPUT = 2


class CsvCommand(BaseCommand):
    # These tools read files only; they need neither the database nor the system checks.
    requires_system_checks: list[str] = []

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        parser = super().create_parser(prog_name, subcommand, **kwargs)

        def error(message: str) -> NoReturn:
            if parser.called_from_command_line:
                sys.stderr.write(f"CommandError: {message}\n")
                sys.exit(BAD_INPUT)
            raise CommandError(message, returncode=BAD_INPUT)

        parser.error = error  # type: ignore[method-assign]
        return parser

    def bad_input(self, message: str) -> CommandError:
        """The error to raise for unusable input: exit code 2, the message on one line."""
        return CommandError(" ".join(str(message).split()), returncode=BAD_INPUT)


def json_safe(value: Any) -> Any:
    """A scalar ready for ``json.dumps``: numpy numbers become Python ones, NaN becomes None."""
    if value is None:
        return None
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value
