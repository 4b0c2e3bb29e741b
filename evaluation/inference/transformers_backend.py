"""Local Hugging Face ``transformers`` models, on CPU or GPU, for generation and option scoring.

Generation renders each conversation with the tokenizer's chat template and runs requests in batches of
``batch_size`` rows, padded on the left so that every row's next token sits in the last column. Only
requests with the same sampling parameters share a batch (``model.generate`` takes one set), and a batch
with a seed runs under ``torch.random.fork_rng`` seeded with it: the same requests with the same seed give
the same texts, and the process-wide random state is left as it was. Greedy decoding is used when the
temperature is 0. ``n > 1`` becomes ``n`` rows of the same prompt.

There is no constrained decoding here: a request's ``response_format`` schema is not enforced, and judge
output goes through the parser's fallback chain like any free text.

Option scoring (LoraxBench's log-probability and cloze modes) scores ``prompt + option`` strings with one
forward pass per batch of rows; see :meth:`TransformersBackend.score_many`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import torch

from evaluation.domain.option_scores import SCORE_MODES, option_score
from evaluation.domain.sampling import SamplingParams
from evaluation.inference.base import (
    Backend,
    BackendConfigError,
    ChatRequest,
    GenerationResult,
    cancelled_result,
    check_remote_code,
    refuse_completion,
    stopped,
)

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Row:
    """One sequence to generate: request ``index``'s ``choice``-th sample."""

    index: int
    choice: int
    prompt_ids: list[int]


class TransformersBackend(Backend):
    """A causal language model loaded with ``AutoModelForCausalLM`` from ``model`` (a folder or hub id).

    ``device`` is ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ... or ``"auto"`` (CUDA when available). ``dtype``
    is a torch dtype name (``"float32"``, ``"bfloat16"``, ...) or ``None`` for float32 on CPU and the
    checkpoint's dtype on GPU. ``model_object``/``tokenizer_object`` take already loaded objects instead.
    ``extra_eos_token_ids`` end a turn besides the configured end tokens, for chat models whose config
    misses their turn-end token.
    """

    name = "transformers"

    def __init__(
        self,
        *,
        model: str | Path | None = None,
        device: str = "auto",
        dtype: str | None = None,
        batch_size: int = 8,
        local_files_only: bool = False,
        trust_remote_code: bool = False,
        remote_code_models: Collection[str] = (),
        model_object: Any = None,
        tokenizer_object: Any = None,
        extra_eos_token_ids: Sequence[int] = (),
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise BackendConfigError(f"batch_size must be an integer >= 1, got {batch_size!r}")
        if model is None and (model_object is None or tokenizer_object is None):
            raise BackendConfigError(
                "give model (a folder or model id), or both model_object and tokenizer_object"
            )
        if model is not None:
            check_remote_code(model, trust_remote_code, remote_code_models)
        self.device = _resolve_device(device)
        self.batch_size = batch_size
        self.model_name = str(model) if model is not None else type(model_object).__name__

        if tokenizer_object is None:
            from transformers import AutoTokenizer

            tokenizer_object = AutoTokenizer.from_pretrained(
                str(model), local_files_only=local_files_only, trust_remote_code=trust_remote_code
            )
        if model_object is None:
            from transformers import AutoModelForCausalLM

            torch_dtype = _resolve_dtype(dtype, self.device)
            model_object = AutoModelForCausalLM.from_pretrained(
                str(model),
                dtype=torch_dtype,
                local_files_only=local_files_only,
                trust_remote_code=trust_remote_code,
            )
        self.tokenizer = tokenizer_object
        self.model = model_object.to(self.device)
        self.model.eval()

        if self.tokenizer.pad_token_id is None:
            if self.tokenizer.eos_token_id is None:
                raise BackendConfigError(f"tokenizer of {self.model_name} has neither a pad nor an eos token")
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.pad_token_id: int = self.tokenizer.pad_token_id
        self.eos_token_ids = _eos_ids(self.model, self.tokenizer)
        self.eos_token_ids += [int(t) for t in extra_eos_token_ids if int(t) not in self.eos_token_ids]
        self.max_positions: int | None = getattr(self.model.config, "max_position_embeddings", None)

    def __repr__(self) -> str:
        return f"TransformersBackend(model={self.model_name!r}, device={str(self.device)!r})"

    def close(self) -> None:
        self.model = None
        if self.device.type == "cuda":
            torch.cuda.empty_cache()

    # ----------------------------------------------------------------------------------------------
    # Generation

    def render_prompt(self, messages: Sequence[Mapping[str, str]]) -> str:
        """The chat-template text the model continues (with the assistant turn opened)."""
        if not getattr(self.tokenizer, "chat_template", None):
            raise BackendConfigError(f"tokenizer of {self.model_name} has no chat template")
        return self.tokenizer.apply_chat_template(
            [dict(message) for message in messages], tokenize=False, add_generation_prompt=True
        )

    def generate(
        self, requests: Sequence[ChatRequest], *, stop: threading.Event | None = None
    ) -> list[GenerationResult]:
        requests = list(requests)
        refuse_completion(self.name, requests)
        results: list[GenerationResult | None] = [None] * len(requests)
        groups: dict[SamplingParams, list[_Row]] = {}
        for index, request in enumerate(requests):
            try:
                prompt_ids = self._encode_prompt(request)
            except BackendConfigError:
                raise
            except Exception as exc:  # a bad prompt fails alone
                results[index] = _error_result(request, f"cannot render the prompt ({exc})")
                continue
            rows = groups.setdefault(request.sampling, [])
            rows.extend(_Row(index, choice, prompt_ids) for choice in range(request.sampling.n))

        for sampling, rows in groups.items():
            outputs: dict[tuple[int, int], tuple[list[int], float] | str] = {}
            for start in range(0, len(rows), self.batch_size):
                if stopped(stop):  # between batches: the rows left are not sent
                    break
                chunk = rows[start : start + self.batch_size]
                outputs.update(self._generate_rows(chunk, sampling))
            prompt_lengths = {row.index: len(row.prompt_ids) for row in rows}
            for index, prompt_tokens in prompt_lengths.items():
                results[index] = self._result(requests[index], prompt_tokens, outputs, index)
        return cast(list[GenerationResult], results)  # every request got a result above

    def _encode_prompt(self, request: ChatRequest) -> list[int]:
        text = self.render_prompt(request.messages)
        # The template already holds the model's special tokens (BOS and turn markers).
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        limit = self.max_positions
        if limit is not None and len(ids) + request.sampling.max_tokens > limit:
            raise ValueError(
                f"{len(ids)} prompt tokens + max_tokens {request.sampling.max_tokens} exceed the model's "
                f"{limit} positions"
            )
        return ids

    def _generate_rows(
        self, rows: Sequence[_Row], sampling: SamplingParams
    ) -> dict[tuple[int, int], tuple[list[int], float] | str]:
        """Generated token ids and the batch's wall time for each row, or the error that row met.

        A failing batch is retried row by row, so that one bad row costs only itself.
        """
        try:
            return dict(self._generate_batch(rows, sampling))
        except (RuntimeError, ValueError, IndexError) as exc:  # CUDA out-of-memory is a RuntimeError
            if len(rows) == 1:
                logger.warning("generation failed for request row %s: %s", rows[0].index, exc)
                return {(rows[0].index, rows[0].choice): f"generation failed: {exc}"}
            logger.warning("batch of %d rows failed (%s); retrying one by one", len(rows), exc)
            outputs: dict[tuple[int, int], tuple[list[int], float] | str] = {}
            for row in rows:
                outputs.update(self._generate_rows([row], sampling))
            return outputs

    def _generate_batch(
        self, rows: Sequence[_Row], sampling: SamplingParams
    ) -> dict[tuple[int, int], tuple[list[int], float]]:
        width = max(len(row.prompt_ids) for row in rows)
        input_ids = torch.full((len(rows), width), self.pad_token_id, dtype=torch.long)
        attention_mask = torch.zeros((len(rows), width), dtype=torch.long)
        for position, row in enumerate(rows):
            input_ids[position, width - len(row.prompt_ids) :] = torch.tensor(row.prompt_ids)
            attention_mask[position, width - len(row.prompt_ids) :] = 1

        options: dict[str, Any] = {
            "max_new_tokens": sampling.max_tokens,
            "pad_token_id": self.pad_token_id,
            "eos_token_id": self.eos_token_ids,
        }
        if sampling.temperature > 0:
            # top_k 0 switches the top-k filter off (None would fall back to the model's default of 50).
            options.update(
                do_sample=True,
                temperature=sampling.temperature,
                top_p=sampling.top_p,
                top_k=sampling.top_k or 0,
            )
        else:
            options.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        if sampling.stop:
            options["stopping_criteria"] = [_StopStrings(self.tokenizer, sampling.stop, width)]

        started = time.perf_counter()
        with torch.random.fork_rng(devices=self._rng_devices()), torch.inference_mode():
            if sampling.seed is not None:
                torch.manual_seed(sampling.seed)
            output = self.model.generate(
                input_ids=input_ids.to(self.device), attention_mask=attention_mask.to(self.device), **options
            )
        elapsed = time.perf_counter() - started
        generated = output[:, width:].tolist()
        return {(row.index, row.choice): (generated[position], elapsed) for position, row in enumerate(rows)}

    def _rng_devices(self) -> list[int]:
        if self.device.type == "cuda":
            return [self.device.index if self.device.index is not None else torch.cuda.current_device()]
        return []

    def _result(
        self,
        request: ChatRequest,
        prompt_tokens: int,
        outputs: Mapping[tuple[int, int], tuple[list[int], float] | str],
        index: int,
    ) -> GenerationResult:
        """Texts and token counts of request ``index``'s choices; ``latency_s`` is the wall time of the
        (slowest) batch its rows ran in, since the rows of a batch finish together."""
        if any((index, choice) not in outputs for choice in range(request.sampling.n)):
            return cancelled_result(request)  # its batch was never run: the run was stopped
        found = [outputs[(index, choice)] for choice in range(request.sampling.n)]
        failure = next((item for item in found if isinstance(item, str)), None)
        if failure is not None:
            return _error_result(request, failure)
        generated = cast(list[tuple[list[int], float]], found)
        texts: list[str] = []
        completion_tokens = 0
        finish_reasons: list[str] = []
        for ids, _elapsed in generated:
            end = next((position for position, token in enumerate(ids) if token in self.eos_token_ids), None)
            kept = ids if end is None else ids[:end]
            text = self.tokenizer.decode(kept, skip_special_tokens=True)
            cut = _cut_at_stop(text, request.sampling.stop)
            if cut != text:
                # Stopped by a stop string: the row was padded after it, so count up to the token completing it.
                used = self._tokens_until_stop(kept, request.sampling.stop or ())
            else:
                used = len(ids) if end is None else end + 1
            completion_tokens += used
            texts.append(cut)
            finish_reasons.append("stop" if end is not None or cut != text else "length")
        return GenerationResult(
            request_id=request.request_id,
            text=texts[0],
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            latency_s=max(elapsed for _ids, elapsed in generated),
            finish_reason=finish_reasons[0],
            choices=tuple(texts),
        )

    def _tokens_until_stop(self, ids: Sequence[int], stop: Sequence[str]) -> int:
        """Fewest leading tokens of ``ids`` whose text contains a stop string (binary search: once a prefix
        contains one, every longer prefix does)."""
        low, high = 1, len(ids)
        while low < high:
            middle = (low + high) // 2
            text = self.tokenizer.decode(list(ids[:middle]), skip_special_tokens=True)
            if any(marker in text for marker in stop):
                high = middle
            else:
                low = middle + 1
        return low

    # ----------------------------------------------------------------------------------------------
    # Option scoring

    def score_options(self, prompt: str, options: Sequence[str], *, mode: str = "sum") -> list[float]:
        """Log-probability of each option as the continuation of ``prompt``; see :meth:`score_many`."""
        return self.score_many([(prompt, options)], mode=mode)[0]

    def score_many(
        self, items: Sequence[tuple[str, Sequence[str]]], *, mode: str = "sum"
    ) -> list[list[float]]:
        """Scores for several questions at once, ``items`` being ``(prompt, options)`` pairs.

        An option's tokens are those of ``prompt + option`` after the longest token prefix it shares with
        ``prompt`` alone, so a tokenizer that merges across the boundary is handled exactly. ``mode="sum"``
        is the natural-log probability of those tokens (log-probability mode); ``mode="cloze"`` divides it
        by their number, so longer option texts are not penalised for their length (cloze mode).
        """
        if mode not in SCORE_MODES:
            raise ValueError(f"mode must be one of {', '.join(SCORE_MODES)}, got {mode!r}")
        sequences: list[tuple[list[int], int]] = []
        for prompt, options in items:
            if not options:
                raise ValueError("no options to score")
            prompt_ids = self.tokenizer(prompt)["input_ids"]
            for option in options:
                whole = self.tokenizer(prompt + option)["input_ids"]
                start = _continuation_start(prompt_ids, whole)
                if start == 0:
                    raise ValueError(
                        "the prompt encodes to no tokens, so the first option token has no context"
                    )
                if start == len(whole):
                    raise ValueError(f"option {option!r} adds no tokens to the prompt")
                sequences.append((whole, start))

        totals: list[float] = []
        for begin in range(0, len(sequences), self.batch_size):
            totals.extend(self._score_batch(sequences[begin : begin + self.batch_size], mode))
        scores: list[list[float]] = []
        offset = 0
        for _prompt, options in items:
            scores.append(totals[offset : offset + len(options)])
            offset += len(options)
        return scores

    def _score_batch(self, sequences: Sequence[tuple[list[int], int]], mode: str) -> list[float]:
        width = max(len(ids) for ids, _start in sequences)
        input_ids = torch.full((len(sequences), width), self.pad_token_id, dtype=torch.long)
        attention_mask = torch.zeros((len(sequences), width), dtype=torch.long)
        for position, (ids, _start) in enumerate(sequences):
            input_ids[position, : len(ids)] = torch.tensor(ids)
            attention_mask[position, : len(ids)] = 1
        with torch.inference_mode():
            logits = self.model(
                input_ids=input_ids.to(self.device), attention_mask=attention_mask.to(self.device)
            ).logits.float()
        # Position t's logits predict token t + 1.
        log_probs = torch.log_softmax(logits[:, :-1, :], dim=-1)
        targets = input_ids[:, 1:].to(self.device)
        token_log_probs = log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1).cpu()
        scores = []
        for position, (ids, start) in enumerate(sequences):
            option_log_probs = token_log_probs[position, start - 1 : len(ids) - 1]
            scores.append(option_score(option_log_probs.double().tolist(), mode))
        return scores


def _continuation_start(prompt_ids: Sequence[int], whole_ids: Sequence[int]) -> int:
    """Length of the longest common prefix of the prompt's tokens and the prompt-plus-option tokens."""
    limit = min(len(prompt_ids), len(whole_ids))
    for position in range(limit):
        if prompt_ids[position] != whole_ids[position]:
            return position
    return limit


def _resolve_device(device: str) -> torch.device:
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        resolved = torch.device(device)
    except RuntimeError as exc:
        raise BackendConfigError(f"unknown device {device!r}") from exc
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise BackendConfigError(f"device {device!r} asked for, but CUDA is not available")
    return resolved


def _resolve_dtype(dtype: str | None, device: torch.device) -> Any:
    if dtype is None:
        return torch.float32 if device.type == "cpu" else "auto"
    value = getattr(torch, dtype, None)
    if not isinstance(value, torch.dtype):
        raise BackendConfigError(f"unknown dtype {dtype!r}; use a torch dtype name such as 'bfloat16'")
    return value


def _eos_ids(model: Any, tokenizer: Any) -> list[int]:
    """Every token id that ends a turn: the generation config's (chat models often list several) and the
    tokenizer's."""
    ids: list[int] = []
    configured = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    for value in configured if isinstance(configured, list) else [configured]:
        if isinstance(value, int) and value not in ids:
            ids.append(value)
    if tokenizer.eos_token_id is not None and tokenizer.eos_token_id not in ids:
        ids.append(tokenizer.eos_token_id)
    return ids


class _StopStrings:
    """Stopping criterion: a row is done once its decoded new text contains a stop string.

    Decoding the text (rather than matching token strings, as ``generate(stop_strings=...)`` does) works
    with every tokenizer, including word-level ones without a byte-level vocabulary.
    """

    def __init__(self, tokenizer: Any, stop: Sequence[str], prompt_width: int) -> None:
        self.tokenizer = tokenizer
        self.stop = tuple(stop)
        self.prompt_width = prompt_width

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor, **kwargs: Any) -> torch.Tensor:
        texts = self.tokenizer.batch_decode(input_ids[:, self.prompt_width :], skip_special_tokens=True)
        done = [any(marker in text for marker in self.stop) for text in texts]
        return torch.tensor(done, dtype=torch.bool, device=input_ids.device)


def _cut_at_stop(text: str, stop: Sequence[str] | None) -> str:
    """``text`` up to the earliest stop string (which is not kept)."""
    if not stop:
        return text
    cuts = [position for position in (text.find(marker) for marker in stop) if position >= 0]
    return text[: min(cuts)] if cuts else text


def _error_result(request: ChatRequest, message: str) -> GenerationResult:
    return GenerationResult(
        request_id=request.request_id,
        text="",
        prompt_tokens=None,
        completion_tokens=None,
        latency_s=0.0,
        error=message,
    )
