"""Both pairwise judge families over the demo's pairwise project, with the real SmolLM2 model on CPU.

    python bench/judge_families.py --prompts 1 --max-tokens 96

In a fresh folder (``TIMBANG_VAR_DIR``, SQLite, eager Celery): load the demo without a model
(``manage.py demo --no-model --prompts N``: N sample prompts, 3 pairs each), start llama.cpp's server
(xllamacpp) over SmolLM2-135M-Instruct, add an endpoint for it, then start one judge run per family with
``manage.py judge_run --family no_tie|with_tie`` over the demo's pairwise project (both orders). Prints one
JSON object: per family the calls, parsed and unparsed judgments, the verdict counts (ties included), the
combined pair verdicts, the wall time, and the raw replies of the first few judgments.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prompts", type=int, default=1)
    parser.add_argument("--max-tokens", type=int, default=96)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--language", choices=("en", "id"), default="en")
    args = parser.parse_args()

    scratch = tempfile.mkdtemp(prefix="timbang-judge-families-")
    for name in ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE"):
        os.environ.pop(name, None)
    os.environ["TIMBANG_VAR_DIR"] = scratch
    os.environ["CELERY_TASK_ALWAYS_EAGER"] = "1"
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.local"

    import django

    django.setup()
    from django.core.management import call_command

    from annotation.models import Project
    from demo.services import PAIRWISE_PROJECT
    from evaluation.inference.gguf_models import SMOLLM2_135M, locate_gguf
    from evaluation.inference.llamacpp_server import LlamaCppServer
    from evaluation.models import Judgment, ModelEndpoint, PairVerdict

    call_command("migrate", verbosity=0)
    call_command("demo", "--no-model", "--prompts", str(args.prompts), stdout=io.StringIO())
    project = Project.objects.get(name=PAIRWISE_PROJECT)
    report: dict = {"prompts": args.prompts, "tasks": project.tasks.count(), "families": {}}
    with LlamaCppServer(
        locate_gguf(SMOLLM2_135M), alias="smollm2", n_ctx=2048, n_threads=args.threads
    ) as server:
        ModelEndpoint.objects.create(
            slug="smollm2",
            backend=ModelEndpoint.Backend.OPENAI,
            base_url=server.base_url,
            model_id="smollm2",
            max_concurrency=1,
            backend_options={"structured_output": "json_object", "timeout_s": 600, "max_attempts": 2},
        )
        for family in ("no_tie", "with_tie"):
            out = io.StringIO()
            started = time.perf_counter()
            call_command(
                "judge_run",
                "--endpoint",
                "smollm2",
                "--project",
                str(project.pk),
                "--family",
                family,
                "--language",
                args.language,
                "--seed",
                str(args.seed),
                "--max-tokens",
                str(args.max_tokens),
                "--json",
                stdout=out,
            )
            wall = time.perf_counter() - started
            run_report = json.loads(out.getvalue())
            judgments = Judgment.objects.filter(judge_run_id=run_report["run"]).order_by("id")
            verdicts = PairVerdict.objects.filter(judge_run_id=run_report["run"])
            report["families"][family] = {
                "run": run_report["run"],
                "status": run_report["status"],
                "template": run_report["template"],
                "calls": judgments.count(),
                "parsed": judgments.filter(parse_status="ok").count(),
                "parse_errors": judgments.filter(parse_status="error").count(),
                "judgment_verdicts": {v: judgments.filter(verdict=v).count() for v in ("A", "B", "tie")},
                "pair_verdicts": {v: verdicts.filter(verdict=v).count() for v in ("A", "B", "tie", "error")},
                "wall_s": round(wall, 1),
                "raw_examples": [j.raw_output[:160] for j in judgments[:3]],
                "parse_error_reasons": sorted(
                    set(judgments.filter(parse_status="error").values_list("parse_reason", flat=True))
                ),
            }
    print(json.dumps(report, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
