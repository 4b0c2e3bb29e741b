"""TransformersBackend on a tiny randomly initialised Llama and a word-level tokenizer built here.

Nothing is downloaded: the model (2 layers, hidden size 32) and tokenizer are created in a temp folder and
loaded back through ``from_pretrained`` like a real checkpoint. Each word of the vocabulary is one token,
so token counts can be read off the text. Expected outputs come from a second computation that uses the
model directly: a plain greedy loop (argmax of the last position's logits, one token at a time, no padding)
and a plain unbatched forward pass with ``log_softmax`` for option scores.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="the transformers backend needs torch (extra 'transformers')")
transformers = pytest.importorskip("transformers", reason="the transformers backend needs 'transformers'")

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors  # noqa: E402

from evaluation.domain.sampling import SamplingParams  # noqa: E402
from evaluation.inference.base import BackendConfigError, ChatRequest  # noqa: E402
from evaluation.inference.registry import create_backend  # noqa: E402
from evaluation.inference.transformers_backend import TransformersBackend  # noqa: E402

SPECIAL = ["<pad>", "<unk>", "<s>", "</s>"]
WORDS = (
    "<|user|> <|assistant|> <|system|> halo apa kabar baik saya kamu siapa jawab ya tidak satu dua tiga "
    "empat lima kucing anjing lari makan nasi air besar kecil merah biru"
).split()
VOCAB = {token: index for index, token in enumerate(SPECIAL + WORDS)}
PAD, BOS, EOS = 0, 2, 3
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|> {{ m['content'] }} {{ eos_token }} {% endfor %}"
    "{% if add_generation_prompt %}<|assistant|> {% endif %}"
)
GREEDY = SamplingParams(temperature=0.0, top_k=None, max_tokens=8)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("tiny-llama")
    core = Tokenizer(models.WordLevel(vocab=VOCAB, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    core.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", BOS)])
    core.decoder = decoders.WordPiece()  # joins word tokens with spaces
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=core, bos_token="<s>", eos_token="</s>", pad_token="<pad>", unk_token="<unk>"
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(folder)

    torch.manual_seed(1234)
    config = transformers.LlamaConfig(
        vocab_size=len(VOCAB),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        initializer_range=0.3,  # peaked next-token distributions, so greedy choices are not near-ties
        bos_token_id=BOS,
        eos_token_id=EOS,
        pad_token_id=PAD,
        tie_word_embeddings=False,
    )
    model = transformers.LlamaForCausalLM(config)
    with torch.no_grad():
        # Zero logits for the special tokens, so that greedy answers are words rather than an instant </s>.
        model.lm_head.weight[: len(SPECIAL)] = 0.0
    model.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def backend(model_dir) -> TransformersBackend:
    return TransformersBackend(model=model_dir, device="cpu", batch_size=4, local_files_only=True)


def chat(text: str, request_id: str, sampling: SamplingParams = GREEDY) -> ChatRequest:
    return ChatRequest(messages=[{"role": "user", "content": text}], sampling=sampling, request_id=request_id)


def greedy_by_hand(backend: TransformersBackend, prompt_ids: list[int], steps: int) -> list[int]:
    ids = list(prompt_ids)
    with torch.inference_mode():
        for _ in range(steps):
            logits = backend.model(input_ids=torch.tensor([ids])).logits[0, -1]
            ids.append(int(torch.argmax(logits)))
    return ids[len(prompt_ids) :]


def test_prompt_is_the_chat_template_with_one_bos(backend):
    text = backend.render_prompt([{"role": "user", "content": "halo apa kabar"}])
    assert text == "<s><|user|> halo apa kabar </s> <|assistant|> "
    ids = backend.tokenizer(text, add_special_tokens=False)["input_ids"]
    # <s> <|user|> halo apa kabar </s> <|assistant|>: 7 tokens, BOS once.
    assert ids == [
        BOS,
        VOCAB["<|user|>"],
        VOCAB["halo"],
        VOCAB["apa"],
        VOCAB["kabar"],
        EOS,
        VOCAB["<|assistant|>"],
    ]


def test_batched_left_padded_greedy_equals_one_by_one_and_a_plain_greedy_loop(backend):
    prompts = ["halo", "apa kabar kamu siapa saya", "satu dua tiga empat lima kucing anjing", "nasi air"]
    requests = [chat(text, f"r{i}") for i, text in enumerate(prompts)]

    batched = backend.generate(requests)  # one batch of 4 rows of different lengths
    singles = [backend.generate([request])[0] for request in requests]

    assert [r.request_id for r in batched] == ["r0", "r1", "r2", "r3"]
    for request, together, alone in zip(requests, batched, singles, strict=True):
        assert together.ok and alone.ok
        assert together.text == alone.text
        prompt_ids = backend.tokenizer(backend.render_prompt(request.messages), add_special_tokens=False)[
            "input_ids"
        ]
        expected = greedy_by_hand(backend, prompt_ids, GREEDY.max_tokens)
        if EOS in expected:
            expected = expected[: expected.index(EOS) + 1]
        assert together.completion_tokens == len(expected)
        assert together.text == backend.tokenizer.decode(
            [t for t in expected if t != EOS], skip_special_tokens=True
        )
        assert together.prompt_tokens == len(prompt_ids)
        assert together.latency_s > 0
    # "halo" -> <s> <|user|> halo </s> <|assistant|> = 5 prompt tokens; 7 words -> 9.
    assert [r.prompt_tokens for r in batched] == [5, 9, 11, 6]
    assert all(r.completion_tokens == GREEDY.max_tokens and len(r.text.split()) == 8 for r in batched)


def test_eos_ends_the_answer_and_is_counted(model_dir, backend):
    request = chat("kucing makan nasi", "eos")
    prompt_ids = backend.tokenizer(backend.render_prompt(request.messages), add_special_tokens=False)[
        "input_ids"
    ]
    path = greedy_by_hand(backend, prompt_ids, GREEDY.max_tokens)
    # Declare the first token that repeats nothing before it (from the 2nd on) an end-of-turn token.
    stop_at = next(k for k in range(1, len(path)) if path[k] not in path[:k])
    stopper = TransformersBackend(
        model=model_dir, device="cpu", local_files_only=True, extra_eos_token_ids=[path[stop_at]]
    )
    assert stopper.eos_token_ids == [EOS, path[stop_at]]

    [result] = stopper.generate([request])

    assert result.finish_reason == "stop"
    assert result.completion_tokens == stop_at + 1  # the answer's tokens plus the end token
    assert result.text == backend.tokenizer.decode(path[:stop_at])
    [unbounded] = backend.generate([request])
    assert unbounded.finish_reason == "length" and unbounded.completion_tokens == GREEDY.max_tokens


def test_stop_strings_cut_the_text(backend):
    [free] = backend.generate([chat("merah biru", "free")])
    words = free.text.split()
    assert len(words) >= 3
    marker = words[2]
    first = words.index(marker)
    [cut] = backend.generate([chat("merah biru", "cut", GREEDY.replace(stop=(marker,)))])
    assert cut.text.split() == words[:first]
    assert cut.finish_reason == "stop"
    assert cut.completion_tokens == first + 1  # the words kept and the stop word itself


def test_seeded_sampling_reproduces_and_leaves_the_global_rng_alone(backend):
    sampling = SamplingParams(temperature=1.5, top_p=1.0, top_k=None, max_tokens=12, seed=7)
    requests = [chat("halo apa kabar", "a", sampling), chat("siapa kamu", "b", sampling)]
    torch.manual_seed(99)
    before = torch.get_rng_state()

    first = backend.generate(requests)
    second = backend.generate(requests)
    other_seed = backend.generate([chat("halo apa kabar", "a", sampling.replace(seed=8))])

    assert torch.equal(torch.get_rng_state(), before)
    assert [r.text for r in first] == [r.text for r in second]
    assert first[0].text != other_seed[0].text
    greedy_text = backend.generate([chat("halo apa kabar", "g")])[0].text
    assert first[0].text != greedy_text  # temperature 1.5 really sampled


def test_n_choices_and_mixed_sampling_keep_request_order(backend):
    sampled = SamplingParams(temperature=1.5, top_p=1.0, top_k=5, max_tokens=6, seed=3, n=3)
    requests = [chat("halo", "g1"), chat("halo", "s", sampled), chat("apa kabar", "g2")]

    results = backend.generate(requests)

    assert [r.request_id for r in results] == ["g1", "s", "g2"]
    assert len(results[1].choices) == 3 and results[1].text == results[1].choices[0]
    assert len(set(results[1].choices)) > 1  # three samples, not three copies
    assert results[0].choices == (results[0].text,)
    # Usage adds up the choices: at most 3 x 6 tokens, at least one per word shown.
    assert sum(len(choice.split()) for choice in results[1].choices) <= results[1].completion_tokens <= 18


def test_a_prompt_too_long_fails_alone(backend):
    long_prompt = " ".join(["kucing"] * 60)  # 60 + 5 template tokens + 8 new > 64 positions
    results = backend.generate([chat(long_prompt, "long"), chat("halo", "ok")])
    assert results[0].error is not None and "exceed the model's 64 positions" in results[0].error
    assert results[0].text == "" and results[0].prompt_tokens is None
    assert results[1].ok and results[1].completion_tokens is not None


def option_log_prob_by_hand(backend: TransformersBackend, prompt: str, option: str) -> tuple[float, int]:
    prompt_ids = backend.tokenizer(prompt)["input_ids"]
    ids = backend.tokenizer(prompt + option)["input_ids"]
    with torch.inference_mode():
        log_probs = torch.log_softmax(backend.model(input_ids=torch.tensor([ids])).logits[0].double(), dim=-1)
    total = sum(float(log_probs[t - 1, ids[t]]) for t in range(len(prompt_ids), len(ids)))
    return total, len(ids) - len(prompt_ids)


def test_score_options_sum_and_cloze_match_a_plain_forward_pass(backend):
    prompt = "kucing makan"
    options = [" nasi", " air besar merah", " ikan", " dua tiga"]  # "ikan" is out of vocabulary: <unk>

    summed = backend.score_options(prompt, options)  # batch_size 4: one padded batch
    cloze = backend.score_options(prompt, options, mode="cloze")

    for option, got_sum, got_cloze in zip(options, summed, cloze, strict=True):
        expected, length = option_log_prob_by_hand(backend, prompt, option)
        assert got_sum == pytest.approx(expected, abs=1e-4)
        assert got_cloze == pytest.approx(expected / length, abs=1e-4)
        assert got_sum < 0
    # " air besar merah" is 3 tokens: its cloze score is its sum / 3.
    assert cloze[1] == pytest.approx(summed[1] / 3, abs=1e-6)


def test_single_token_options_over_the_whole_vocabulary_sum_to_probability_one(backend):
    prompt = "saya makan"
    options = [" " + token for token in SPECIAL[1:] + WORDS]  # every token id but <pad> (0)
    scores = backend.score_options(prompt, options)
    with torch.inference_mode():
        ids = backend.tokenizer(prompt)["input_ids"]
        pad_prob = float(
            torch.softmax(backend.model(input_ids=torch.tensor([ids])).logits[0, -1].double(), -1)[PAD]
        )
    assert sum(math.exp(score) for score in scores) + pad_prob == pytest.approx(1.0, abs=1e-4)


def test_score_many_batches_across_questions(model_dir, backend):
    items = [("kucing makan", [" nasi", " air"]), ("halo apa", [" kabar", " kabar baik", " ya"])]
    small_batches = TransformersBackend(model=model_dir, device="cpu", batch_size=2, local_files_only=True)
    scores = small_batches.score_many(items)
    assert [len(row) for row in scores] == [2, 3]
    for (prompt, options), row in zip(items, scores, strict=True):
        assert row == pytest.approx(
            [backend.score_options(prompt, [option])[0] for option in options], abs=1e-4
        )


def test_bad_arguments_are_refused(model_dir, backend):
    with pytest.raises(ValueError, match="mode must be one of sum, cloze"):
        backend.score_options("halo", [" apa"], mode="mean")
    with pytest.raises(ValueError, match="adds no tokens"):
        backend.score_options("halo", [""])
    with pytest.raises(BackendConfigError, match="batch_size must be an integer >= 1"):
        TransformersBackend(model=model_dir, batch_size=0)
    if not torch.cuda.is_available():
        with pytest.raises(BackendConfigError, match="CUDA is not available"):
            TransformersBackend(model=model_dir, device="cuda")


def test_registry_builds_it_by_name(model_dir):
    made = create_backend("hf", model=str(model_dir), device="cpu", local_files_only=True)
    assert isinstance(made, TransformersBackend)
    assert made.device.type == "cpu"
    made.close()
