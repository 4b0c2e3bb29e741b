"""Multiple-choice benchmarks: prompt variants, k-shot prompts and rule-based answer extraction.

Answer extraction reads a model's free text and returns the option letter it chose, or ``None`` when it
cannot tell; ``None`` is scored as wrong, never guessed. The rules run from the most to the least explicit:

1. the whole answer is a letter (``B``, ``(B)``, ``b.``, ``**C**``);
2. an explicit answer phrase (``Answer: D``, ``Jawaban: D``, ``The correct answer is E``,
   ``Jawaban yang benar adalah E``, ``I choose B``);
3. the answer starts with a letter form (``(B) text``, ``B. text``, ``B)``, ``B: text``);
4. the whole answer is one option's text (after normalisation);
5. a refusal (``Maaf, saya tidak bisa menjawab``, ``I cannot answer``): no letter, rule ``refusal``, so a
   refusal is counted apart from an answer that could not be read;
6. letters referred to anywhere (``(C)``, ``option C``, ``pilihan C``);
7. exactly one option's text occurs in the answer.

A lower-case letter counts only where nothing else can be meant: alone (``(d)``, ``d.``) or in brackets after
an answer phrase (``Answer: (d)``), never as a word (``Answer: a lot``).

Within a rule, two different letters make the answer ambiguous and the result is ``None`` without trying
later rules: a model that says "A or B" has not answered.

Prompt variants are data; :func:`choose_variant` picks one per question by a seeded hash, so a benchmark
run is reproducible across processes and machines (Python's ``hash()`` is salted per process). There are four
per language, as SeaExam drew one of four instructions per question; the texts are ours.

Three ways of asking: chat (the prompt as one user message), completion (the same text continued by a base
model, the answer read from the first line, :func:`first_line`) and cloze (:func:`build_cloze_prompt`: the
question without options, each option's text scored as the continuation).
"""

from __future__ import annotations

import hashlib
import re
import string
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from evaluation.domain.judge_parsing import strip_reasoning
from evaluation.domain.judge_templates import fill_placeholders

DEFAULT_LETTERS = ("A", "B", "C", "D", "E")


def _check_options(options: Mapping[str, str]) -> dict[str, str]:
    if not options:
        raise ValueError("a multiple-choice question needs at least one option")
    checked = {}
    for letter, text in options.items():
        if not (isinstance(letter, str) and len(letter) == 1 and letter in string.ascii_uppercase):
            raise ValueError(f"option keys must be single capital letters, got {letter!r}")
        if not isinstance(text, str):
            raise ValueError(f"option {letter} must be text, got {type(text).__name__}")
        checked[letter] = text
    return checked


def normalise_text(text: str) -> str:
    """Lowercase, NFKC, punctuation to spaces, whitespace collapsed: for comparing option texts."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = "".join(" " if unicodedata.category(char).startswith(("P", "S")) else char for char in text)
    return " ".join(text.split())


# --------------------------------------------------------------------------------------------------
# Extraction rules

_BARE = re.compile(r"^\W*([A-Za-z])\W*$")
# A lower-case letter counts only where the sentence ends after it ("the answer is c.") or an alternative
# follows ("b or c"), so that "the answer is a bit unclear" names nothing.
_LOWER_LETTER_END = r"([a-z])(?=\s*(?:$|[.,;:!)\]/]|(?:or|atau)\s))"
_ANSWER_PHRASE = re.compile(
    r"(?i:\b(?:the\s+)?(?:correct\s+|right\s+|best\s+|final\s+)?(?:answer|option|choice)"
    r"|\bjawaban(?:nya)?|\bpilihan(?:nya)?|\bopsi)"
    r"(?:\s+(?i:akhir(?:nya)?|final|saya))?"
    r"(?:\s+(?i:yang\s+(?:benar|tepat|paling\s+tepat|paling\s+benar|sesuai)))?"
    r"\s*(?:(?i:is|adalah|ialah|yaitu|would\s+be)\s*:?|[:：=])\s*"
    r"(?i:(?:option|pilihan|opsi|huruf)\s+)?"
    rf"(?:[*\"'(\[]*([A-Z])(?![A-Za-z0-9])|[(\[]([a-z])[)\]]|{_LOWER_LETTER_END})"
)
# The speaker's own answer named without a verb or colon: "Jawabannya B", "Pilihan saya D", "Jawaban saya C".
_OWN_ANSWER = re.compile(
    r"(?i:\bjawabannya|\b(?:jawaban|pilihan)\s+saya|\bmy\s+(?:answer|choice)(?:\s+is)?)"
    r"\s+[*\"'(\[]*([A-Z])(?![A-Za-z0-9])"
)
_CHOOSE_PHRASE = re.compile(
    r"(?i:\b(?:i\s+(?:would\s+)?(?:choose|pick|select|go\s+with)|(?:saya\s+)?(?:memilih|pilih)))\s+"
    r"(?i:(?:option|pilihan|opsi|jawaban|huruf)\s+)?[*\"'(\[]*([A-Z])(?![A-Za-z0-9])"
)
_LEADING = re.compile(r"^[(\[]?([A-Z])[)\].:](?:\s|$)")
# "A or B", "B/C", "A, D" right after a letter: the model named alternatives, not an answer.
_ALTERNATIVE = re.compile(
    r"\s*(?:(?i:or|atau|and|dan)\b|[,/&])\s*"
    rf"(?:[*\"'(\[]*([A-Z])(?![A-Za-z0-9])|[(\[]([a-z])[)\]]|{_LOWER_LETTER_END})"
)
_REFUSAL = re.compile(
    r"(?i:\b(?:i\s+(?:can\s*not|can't|cannot|am\s+(?:not\s+able|unable)\s+to|won't|will\s+not)\s+"
    r"(?:answer|help|choose|determine|provide)"
    r"|i\s+(?:do\s+not|don't)\s+know|as\s+an\s+ai\b"
    r"|(?:saya\s+)?(?:tidak|tak)\s+(?:bisa|dapat|mampu|akan)\s+(?:menjawab|memilih|membantu|menentukan)"
    r"|saya\s+tidak\s+tahu|maaf,?\s+saya\s+tidak|sebagai\s+(?:ai|model\s+bahasa)\b))"
)
REFUSAL_RULE = "refusal"
_REFERENCED = re.compile(r"[(\[]([A-Z])[)\]]|(?i:\b(?:option|pilihan|opsi|huruf)\s+)([A-Z])(?![A-Za-z0-9])")


def _clean(text: str) -> str:
    text = strip_reasoning(text)
    text = text.replace("**", "").replace("__", "").replace("`", "")
    return text.strip()


def _letters_from(matches: Sequence[re.Match[str]], allowed: Mapping[str, str]) -> set[str]:
    """Letters named by the matches, plus any alternatives named right after them."""
    found = set()
    for match in matches:
        letter = next((group for group in match.groups() if group), None)
        letter = letter.upper() if letter else None
        if letter in allowed:
            found.add(letter)
            alternative = _ALTERNATIVE.match(match.string, match.end())
            other = next((group for group in alternative.groups() if group), "") if alternative else ""
            if other.upper() in allowed:
                found.add(other.upper())
    return found


def extract_choice_with_rule(text: object, options: Mapping[str, str]) -> tuple[str | None, str]:
    """The chosen letter (or ``None``) and the name of the rule that decided."""
    options = _check_options(options)
    if not isinstance(text, str):
        return None, "no_text"
    cleaned = _clean(text)
    if not cleaned:
        return None, "empty"

    bare = _BARE.match(cleaned)
    if bare and bare.group(1).upper() in options:
        return bare.group(1).upper(), "bare_letter"

    phrased = _letters_from(
        [
            *_ANSWER_PHRASE.finditer(cleaned),
            *_CHOOSE_PHRASE.finditer(cleaned),
            *_OWN_ANSWER.finditer(cleaned),
        ],
        options,
    )
    if len(phrased) == 1:
        return phrased.pop(), "answer_phrase"
    if len(phrased) > 1:
        return None, "ambiguous_answer_phrase"

    leading = _letters_from([m for m in [_LEADING.match(cleaned)] if m], options)
    if len(leading) == 1:
        return leading.pop(), "leading_letter"
    if len(leading) > 1:
        return None, "ambiguous_leading_letters"

    normalised = normalise_text(cleaned)
    exact = [
        letter for letter, option in options.items() if normalise_text(option) == normalised and normalised
    ]
    if len(exact) == 1:
        return exact[0], "option_text"

    if _REFUSAL.search(cleaned):
        return None, REFUSAL_RULE

    referenced = _letters_from(list(_REFERENCED.finditer(cleaned)), options)
    if len(referenced) == 1:
        return referenced.pop(), "letter_reference"
    if len(referenced) > 1:
        return None, "ambiguous_letters"

    contained = _contained_options(normalised, options)
    if len(contained) == 1:
        return contained[0], "option_text_contained"
    if len(contained) > 1:
        return None, "ambiguous_option_text"
    return None, "not_found"


def _contained_options(normalised_answer: str, options: Mapping[str, str]) -> list[str]:
    """Options whose normalised text occurs in the answer as whole words, minus options that only occur
    as part of another occurring option (``Jawa`` inside ``Jawa Barat``)."""
    padded = f" {normalised_answer} "
    texts = {letter: normalise_text(option) for letter, option in options.items()}
    hits = {letter: text for letter, text in texts.items() if text and f" {text} " in padded}
    return sorted(
        letter
        for letter, text in hits.items()
        if not any(other != text and f" {text} " in f" {other} " for other in hits.values())
    )


def extract_choice(text: object, options: Mapping[str, str]) -> str | None:
    """The option letter chosen in ``text``, or ``None`` when no rule finds exactly one."""
    return extract_choice_with_rule(text, options)[0]


def is_correct(predicted: str | None, answer: str) -> bool:
    """A missing prediction is wrong."""
    return predicted is not None and predicted == answer.strip().upper()


# --------------------------------------------------------------------------------------------------
# Prompt variants and k-shot prompts


@dataclass(frozen=True)
class McqPromptVariant:
    """One way of asking a multiple-choice question.

    ``block`` is filled per question with ``{{question}}`` and ``{{choices}}`` and must end with the answer
    prefix, so that the same text serves generation (the model continues after it) and log-probability
    scoring (each option letter is scored as the continuation). ``cloze_block`` asks the same question
    without options, ending where an option's text is scored as the continuation.
    """

    id: str
    language: str
    instruction: str
    block: str
    choice_line: str = "{{letter}}. {{text}}"
    cloze_block: str = "{{question}}"

    def __post_init__(self) -> None:
        if "{{question}}" not in self.block or "{{choices}}" not in self.block:
            raise ValueError(f"variant {self.id!r}: block needs {{{{question}}}} and {{{{choices}}}}")
        if "{{question}}" not in self.cloze_block:
            raise ValueError(f"variant {self.id!r}: cloze_block needs {{{{question}}}}")
        if "{{letter}}" not in self.choice_line:
            raise ValueError(f"variant {self.id!r}: choice_line needs {{{{letter}}}}")


@dataclass(frozen=True)
class McqExample:
    """A solved question shown before the real one in a k-shot prompt."""

    question: str
    choices: Mapping[str, str]
    answer: str


_OR_WORD = {"en": "or", "id": "atau"}

MCQ_PROMPT_VARIANTS: Mapping[str, tuple[McqPromptVariant, ...]] = MappingProxyType(
    {
        "id": (
            McqPromptVariant(
                id="id-1",
                language="id",
                instruction=(
                    "Jawablah pertanyaan pilihan ganda berikut dengan memilih satu jawaban yang paling tepat. "
                    "Tuliskan hanya huruf jawabannya ({{letters}})."
                ),
                block="Pertanyaan: {{question}}\n{{choices}}\nJawaban:",
                cloze_block="Pertanyaan: {{question}}\nJawaban:",
            ),
            McqPromptVariant(
                id="id-2",
                language="id",
                instruction=(
                    "Berikut ini soal pilihan ganda tentang pengetahuan umum dan kehidupan sehari-hari di "
                    "Indonesia. Pilih satu jawaban yang benar dan tulis hurufnya saja ({{letters}})."
                ),
                block="Soal: {{question}}\n\nPilihan:\n{{choices}}\n\nJawaban yang benar adalah huruf",
                choice_line="({{letter}}) {{text}}",
                cloze_block="Soal: {{question}}\nJawaban yang benar adalah",
            ),
            McqPromptVariant(
                id="id-3",
                language="id",
                instruction=(
                    "Bacalah pertanyaan di bawah ini, lalu tentukan pilihan yang paling masuk akal menurut "
                    "akal sehat. Balas dengan satu huruf saja: {{letters}}."
                ),
                block="{{question}}\n{{choices}}\nPilihan Anda:",
                choice_line="{{letter}}) {{text}}",
                cloze_block="{{question}}\nMenurut akal sehat, jawabannya:",
            ),
            McqPromptVariant(
                id="id-4",
                language="id",
                instruction=(
                    "Soal ujian berikut menguji pengetahuan tentang Indonesia. Setiap soal memiliki tepat satu "
                    "jawaban benar di antara pilihan {{letters}}. Jawablah dengan huruf pilihan tersebut."
                ),
                block="Soal ujian: {{question}}\n{{choices}}\nJawaban:",
                choice_line="({{letter}}) {{text}}",
                cloze_block="Soal ujian: {{question}}\nJawaban:",
            ),
        ),
        "en": (
            McqPromptVariant(
                id="en-1",
                language="en",
                instruction=(
                    "Answer the following multiple-choice question by choosing the single best answer. "
                    "Write only the letter of your answer ({{letters}})."
                ),
                block="Question: {{question}}\n{{choices}}\nAnswer:",
                cloze_block="Question: {{question}}\nAnswer:",
            ),
            McqPromptVariant(
                id="en-2",
                language="en",
                instruction=(
                    "Here is a multiple-choice question about general knowledge and everyday life in "
                    "Indonesia. Pick the one correct answer and write only its letter ({{letters}})."
                ),
                block="Question: {{question}}\n\nOptions:\n{{choices}}\n\nThe correct answer is letter",
                choice_line="({{letter}}) {{text}}",
                cloze_block="Question: {{question}}\nThe correct answer is",
            ),
            McqPromptVariant(
                id="en-3",
                language="en",
                instruction=(
                    "Read the question below and decide which option makes the most common sense. "
                    "Reply with a single letter: {{letters}}."
                ),
                block="{{question}}\n{{choices}}\nYour choice:",
                choice_line="{{letter}}) {{text}}",
                cloze_block="{{question}}\nBy common sense, the answer is:",
            ),
            McqPromptVariant(
                id="en-4",
                language="en",
                instruction=(
                    "The following exam questions test knowledge about Indonesia. Each question has exactly one "
                    "correct answer among the options {{letters}}. Answer with the letter of that option."
                ),
                block="Exam question: {{question}}\n{{choices}}\nAnswer:",
                choice_line="({{letter}}) {{text}}",
                cloze_block="Exam question: {{question}}\nAnswer:",
            ),
        ),
    }
)


def choose_variant(question_id: str | int, seed: int, n_variants: int) -> int:
    """Index (0-based) of the prompt variant for ``question_id``: the same for the same (id, seed) in any
    process, and spread evenly over questions."""
    if isinstance(n_variants, bool) or not isinstance(n_variants, int) or n_variants < 1:
        raise ValueError(f"n_variants must be an integer >= 1, got {n_variants!r}")
    digest = hashlib.sha256(f"{seed}\x1f{question_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % n_variants


def _letters_phrase(letters: Sequence[str], language: str) -> str:
    if len(letters) == 1:
        return letters[0]
    return f"{', '.join(letters[:-1])} {_OR_WORD.get(language, 'or')} {letters[-1]}"


def _question_block(variant: McqPromptVariant, question: str, choices: Mapping[str, str]) -> str:
    lines = "\n".join(
        fill_placeholders(variant.choice_line, {"letter": letter, "text": text})
        for letter, text in choices.items()
    )
    return fill_placeholders(variant.block, {"question": question, "choices": lines})


def build_mcq_prompt(
    question: str,
    choices: Mapping[str, str],
    variant: McqPromptVariant,
    examples: Sequence[McqExample] = (),
) -> str:
    """The prompt text: instruction, then ``k = len(examples)`` solved examples, then the question,
    ending with the variant's answer prefix."""
    choices = _check_options(choices)
    parts = [
        fill_placeholders(variant.instruction, {"letters": _letters_phrase(list(choices), variant.language)})
    ]
    for example in examples:
        example_choices = _check_options(example.choices)
        if example.answer not in example_choices:
            raise ValueError(f"example answer {example.answer!r} is not one of its options")
        parts.append(f"{_question_block(variant, example.question, example_choices)} {example.answer}")
    parts.append(_question_block(variant, question, choices))
    return "\n\n".join(parts)


def build_cloze_prompt(
    question: str,
    variant: McqPromptVariant,
    examples: Sequence[McqExample] = (),
) -> str:
    """The cloze prompt: each example as its ``cloze_block`` followed by the text of its answer, then the
    question's ``cloze_block``; no instruction and no options, as the options' texts are what is scored."""
    parts = []
    for example in examples:
        example_choices = _check_options(example.choices)
        if example.answer not in example_choices:
            raise ValueError(f"example answer {example.answer!r} is not one of its options")
        block = fill_placeholders(variant.cloze_block, {"question": example.question})
        parts.append(f"{block} {example_choices[example.answer]}")
    parts.append(fill_placeholders(variant.cloze_block, {"question": question}))
    return "\n\n".join(parts)


def cloze_continuations(choices: Mapping[str, str]) -> list[str]:
    """Continuations scored in cloze mode: a space and each option's text, in option order."""
    return [f" {text}" for text in _check_options(choices).values()]


def best_option(letters: Sequence[str], scores: Sequence[float]) -> str:
    """The letter with the highest score; on a tie the first in option order."""
    if len(letters) != len(scores) or not letters:
        raise ValueError(f"{len(letters)} letters but {len(scores)} scores")
    return letters[max(range(len(letters)), key=lambda i: scores[i])]


def first_line(text: str) -> str:
    """The first line of a completion that has any text, stripped: a base model continuing a k-shot prompt
    goes on to write the next question, which is not part of its answer."""
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def build_mcq_messages(
    question: str,
    choices: Mapping[str, str],
    variant: McqPromptVariant,
    examples: Sequence[McqExample] = (),
) -> list[dict[str, str]]:
    """The prompt as a one-message chat, for chat-completion backends."""
    return [{"role": "user", "content": build_mcq_prompt(question, choices, variant, examples)}]


def option_continuations(choices: Mapping[str, str]) -> list[str]:
    """Continuations to score by log-probability after the prompt: a space and the letter."""
    return [f" {letter}" for letter in _check_options(choices)]
