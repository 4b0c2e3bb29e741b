import json

from django.core.management.base import BaseCommand, CommandError

from demo.services import (
    DEFAULT_MODEL_URL,
    DEMO_EXPLANATION_CHARS,
    DEMO_MODEL_ALIAS,
    DemoModel,
    demo_judge_start,
    demo_load,
)
from evaluation.models import JudgeRun

ORDER_MODES = {"both": JudgeRun.OrderMode.BOTH, "random": JudgeRun.OrderMode.SINGLE_RANDOM}


class Command(BaseCommand):
    help = (
        "Load the sample project (every role and job kind, simulated answers, a model endpoint, a judge run "
        "and an export) and print the demo users with their passwords."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--password", help="Give every demo user this password (default: a new random one each)."
        )
        parser.add_argument("--json", action="store_true", help="Print one JSON object.")
        parser.add_argument(
            "--site-url",
            default="http://127.0.0.1:8000",
            help="Where the web server answers, for the login address printed with the users.",
        )
        parser.add_argument(
            "--prompts", type=int, default=None, help="Load only the first N sample prompts (a quicker demo)."
        )
        parser.add_argument(
            "--no-simulated", action="store_true", help="Leave out the simulated answers (and the export)."
        )
        parser.add_argument("--no-model", action="store_true", help="No model endpoint and no judge run.")
        parser.add_argument("--model-url", default=DEFAULT_MODEL_URL, help="OpenAI-compatible base URL.")
        parser.add_argument("--model-id", default=DEMO_MODEL_ALIAS, help="Model id the server answers to.")
        parser.add_argument("--model-label", default="", help="Name of the model, shown in the run's name.")
        parser.add_argument(
            "--wait-model", type=float, default=0.0, help="Seconds to wait for the model server to answer."
        )
        parser.add_argument(
            "--judge-orders",
            choices=("both", "random"),
            default="both",
            help="Judge each pair in both orders, or in one random order (half the calls).",
        )
        parser.add_argument("--judge-language", choices=("en", "id"), default="en")
        parser.add_argument(
            "--judge-samples",
            type=int,
            default=1,
            help="Verdicts per pair (3 or more, at temperature 0.6, give the judge lab's calibration).",
        )
        parser.add_argument("--max-tokens", type=int, default=256, help="Longest judge reply, in tokens.")
        parser.add_argument(
            "--explanation-chars",
            type=int,
            default=DEMO_EXPLANATION_CHARS,
            help="Longest judge explanation, in characters, enforced by the output schema (0: no cap).",
        )
        parser.add_argument(
            "--max-concurrency",
            type=int,
            default=1,
            help="Judge requests sent to the model server at once (match its number of slots).",
        )
        parser.add_argument(
            "--no-judge",
            action="store_true",
            help="Create the model endpoint but start no judge run yet (start it later with --judge-only).",
        )
        parser.add_argument(
            "--judge-only",
            action="store_true",
            help="Only start the judge run over the loaded demo (when the model server came up later).",
        )

    def handle(self, *args, **options):
        if options["prompts"] is not None and options["prompts"] < 1:
            raise CommandError("--prompts must be at least 1.")
        if options["explanation_chars"] < 0:
            raise CommandError("--explanation-chars must be 0 (no cap) or more.")
        if options["max_concurrency"] < 1:
            raise CommandError("--max-concurrency must be at least 1.")
        if not 1 <= options["judge_samples"] <= 10:
            raise CommandError("--judge-samples must be from 1 to 10.")
        model = None
        if not options["no_model"]:
            model = DemoModel(
                url=options["model_url"],
                model_id=options["model_id"],
                label=options["model_label"],
                wait_s=options["wait_model"],
                judge_orders=ORDER_MODES[options["judge_orders"]],
                judge_language=options["judge_language"],
                judge_samples=options["judge_samples"],
                max_tokens=options["max_tokens"],
                explanation_max_chars=options["explanation_chars"],
                max_concurrency=options["max_concurrency"],
                judge=not options["no_judge"],
            )
        if options["judge_only"]:
            if model is None:
                raise CommandError("--judge-only needs the model: leave out --no-model.")
            run, message = demo_judge_start(model=model)
            if run is None:
                raise CommandError(message)
            self.stdout.write(
                f"Judge run {run.pk} queued: {run.n_total} pairs on {run.endpoint.base_url}; "
                "the worker works through it (see /evaluation/)."
            )
            return
        result = demo_load(
            password=options["password"],
            prompts=options["prompts"],
            simulate=not options["no_simulated"],
            model=model,
        )
        if options["json"]:
            self.stdout.write(json.dumps(result.as_dict(), ensure_ascii=False))
            return
        for imported in result.datasets:
            counts = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in imported.counts.items())
            self.stdout.write(self.style.SUCCESS(f"Sample dataset {imported.dataset.name!r}: {counts}."))
        self.stdout.write("Projects: " + "; ".join(result.projects) + ".")
        if result.simulated:
            answers = ", ".join(f"{n} {kind.replace('_', ' ')}" for kind, n in result.simulated.items())
            self.stdout.write(f"Simulated answers (users simulasi1-3, labelled as simulated): {answers}.")
        if result.export is not None:
            where = result.export.zip_path or result.export.folder_path
            self.stdout.write(
                f"Export {result.export.pk} ({result.export.kind}): {result.export.status}, {where}"
            )
        if result.judge_run is not None:
            self.stdout.write(
                f"Judge run {result.judge_run.pk} queued: {result.judge_run.n_total} pairs on "
                f"{result.endpoint.base_url}; the model worker works through it (see /evaluation/)."
            )
        elif result.judge_message:
            self.stdout.write(self.style.WARNING(result.judge_message))
        self.stdout.write("")
        login = options["site_url"].rstrip("/") + "/accounts/login/"
        self.stdout.write(f"Demo users (log in at {login}):")
        width = max(len(u.username) for u in result.users)
        for user in result.users:
            self.stdout.write(f"  {user.username:<{width}}  {user.password:<14}  {', '.join(user.roles)}")
