"""``manage.py webhook_verify``: check a received webhook as its receiver would (Standard Webhooks).

    manage.py webhook_verify --secret whsec_... --headers headers.json --body body.json [--now 1764406800] --json

``headers.json`` is an object of the request's headers (any case); ``body`` is the raw body as received.
Prints ``{"valid", "reason", "message_id", "timestamp"}``. Exit code 0 when the signature verifies, 1 when
it does not, 2 with a one-line reason on unusable input (a missing file, headers that are not a JSON
object, a secret that is not ``whsec_`` + base64).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from django.core.management.base import CommandError, CommandParser

from evaluation.management.commands import CsvCommand
from webhooks.domain.signing import SignatureError, secret_key, verify


class Command(CsvCommand):
    help = "Check a received webhook's signature and timestamp with the endpoint's secret."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--secret", required=True, help="The endpoint's whsec_ secret.")
        parser.add_argument("--headers", required=True, help="JSON file: the request's headers.")
        parser.add_argument("--body", required=True, help="File: the raw request body.")
        parser.add_argument(
            "--now", type=int, help="Unix seconds to check the timestamp against (default: now)."
        )
        parser.add_argument("--tolerance", type=int, default=300, help="Seconds the timestamp may be off.")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **options) -> None:
        try:
            secret_key(options["secret"])
        except SignatureError as exc:
            raise self.bad_input(f"--secret: {exc}") from exc
        try:
            headers = json.loads(Path(options["headers"]).read_text(encoding="utf-8"))
            body = Path(options["body"]).read_bytes()
        except OSError as exc:
            raise self.bad_input(f"{exc.filename}: {exc.strerror}") from exc
        except json.JSONDecodeError as exc:
            raise self.bad_input(f"--headers: not JSON (line {exc.lineno}, column {exc.colno})") from exc
        if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
            raise self.bad_input("--headers: a JSON object of header names to text values is needed")
        lowered = {k.lower(): v for k, v in headers.items()}
        reason = None
        try:
            verify(
                secret=options["secret"],
                headers=headers,
                body=body,
                now=options["now"] if options["now"] is not None else int(time.time()),
                tolerance_s=options["tolerance"],
            )
        except SignatureError as exc:
            reason = str(exc)
        result = {
            "valid": reason is None,
            "reason": reason,
            "message_id": lowered.get("webhook-id"),
            "timestamp": lowered.get("webhook-timestamp"),
        }
        if options["json"]:
            self.stdout.write(json.dumps(result))
        else:
            self.stdout.write("valid" if reason is None else f"not valid: {reason}")
        if reason is not None:
            raise CommandError(reason, returncode=1)
