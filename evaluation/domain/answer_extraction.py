"""Multiple-choice benchmarks: prompt variants, k-shot prompts and rule-based answer extraction.

Answer extraction reads a model's free text and returns the option letter it chose, or ``None`` when it
cannot tell; ``None`` is scored as wrong, never guessed. Each rule has a name (:data:`RULES`), recorded with
every result. The rules were built from what the shipped GGUF models write when asked the demo questions
(``bench/collect_mcq_outputs.py``; the outputs and their hand labels are test data). In order:

1. ``bare_letter``: the whole answer is a letter (``B``, ``(B)``, ``b.``, ``**C**``).
2. The answer stated, every one of these asked at once:

   - ``final_answer``: ``Jawaban akhir: **D**``, ``So the final answer is d.``;
   - ``answer_phrase``: ``Answer: D``, ``Jawaban: D``, ``The correct answer is E``, ``the answer is c``,
     ``Jawaban yang benar adalah E``, ``Pilih yang benar adalah "B"``, ``Pilihan Anda: D``;
   - ``answer_text``: an answer phrase followed by an option's text (``The correct answer is Canting.``);
   - ``own_answer``: ``Jawabannya B``, ``Pilihan saya D``, ``My answer is B``;
   - ``choice_phrase``: ``I choose B``, ``Saya pilih opsi B``;
   - ``correct_letter``: ``Option E is correct``, ``The letter "E" is the correct answer``;
   - ``leading_letter``: the answer opens with a letter form (``(B) text``, ``B. text``, ``B)``, ``B: text``);
   - ``option_text``: the first line is exactly one option's text (after normalisation).

   One letter among them is the answer, under the first rule in this order that named it; two or more
   (``C) Jakarta`` then ``The correct answer is A``; ``Cetak`` then ``The correct answer is Canting``) make
   the answer ``ambiguous``.
3. ``refusal`` (``Maaf, saya tidak bisa menjawab``, ``I cannot answer``): no letter, so a refusal is counted
   apart from an answer that could not be read.
4. ``letter_reference``: letters referred to anywhere (``(C)``, ``option C``, ``pilihan C``).
5. ``option_text_contained``: exactly one option's text occurs in the answer, and most of the words of no
   other option do (a mix of options chooses none).

An option list in the answer (two or more lines opening with different letters: the options echoed back, or
options the model made up) is set aside before the rules run, so the list's first letter is never read as
the answer; a letter read from what is left is recorded as ``echoed_options``.

A lower-case letter counts only where nothing else can be meant: alone (``(d)``, ``d.``), at the end of a
sentence after an answer phrase (``the answer is c.``) or in brackets, never as a word (``Answer: a lot``).
After a blank line a letter no longer answers the phrase before it (``Jawaban:`` then a list ``A: ...``).

Two or more letters named as the answer (``A or B``, ``Jawabannya B atau C``, ``adalah "B" yang adalah
"D"``, two answer phrases that disagree), or two options' texts, give ``None`` with the one reason
``ambiguous`` (:data:`AMBIGUOUS_RULE`), whichever rule found them; a letter ruled out (``not (C)``) is not
named. The other reasons for ``None`` are ``not_found``, ``empty`` and ``no_text``.

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

#: The reason recorded when the answer names two or more letters (or option texts) as its answer.
AMBIGUOUS_RULE = "ambiguous"
#: The reason recorded when the answer declines to choose.
REFUSAL_RULE = "refusal"
#: Rule names in order of precedence; the last four say why no letter was read.
RULES = (
    "bare_letter",
    "final_answer",
    "answer_phrase",
    "answer_text",
    "own_answer",
    "choice_phrase",
    "correct_letter",
    "leading_letter",
    "option_text",
    "echoed_options",
    REFUSAL_RULE,
    "letter_reference",
    "option_text_contained",
    AMBIGUOUS_RULE,
    "not_found",
    "empty",
    "no_text",
)

_BARE = re.compile(r"^\W*([A-Za-z])\W*$")
# A letter as an answer: a capital not followed by another letter or digit (``B``, ``(B)``, ``**B**``), a
# lower-case letter in brackets, or a lower-case letter where the sentence ends after it ("the answer is c.")
# or an alternative follows ("b or c"), so that "the answer is a bit unclear" names nothing.
_LOWER_LETTER_END = r"([a-z])(?=\s*(?:$|[.,;:!)\]/]|(?:or|atau)\s))"
_LETTER = rf"(?:[*\"'(\[]*([A-Z])(?![A-Za-z0-9])|[(\[]([a-z])[)\]]|{_LOWER_LETTER_END})"
_LETTER_WORD = r"(?i:(?:option|pilihan|opsi|huruf|letter)\s+)?"
# What introduces an answer: "the correct answer", "Jawaban akhir", "Pilihan Anda", "yang benar" ...
_ANSWER_HEAD = (
    r"(?i:\b(?:the\s+)?(?:correct\s+|right\s+|best\s+|final\s+)?(?:answer|option|choice)"
    r"|\bjawaban(?:nya)?|\bpilih(?:an(?:nya)?)?|\bopsi)"
    r"(?:\s+(?i:akhir(?:nya)?|final|saya|anda))?"
    r"(?:\s+(?i:yang\s+(?:benar|tepat|paling\s+tepat|paling\s+benar|sesuai)))?"
    r"|(?i:\byang\s+(?:benar|tepat|paling\s+tepat|paling\s+benar))"
)
# ... then "is", "adalah" or a colon; the answer may follow on the next line, not after a blank line.
_ANSWER_VERB = r"[ \t]*(?:(?i:is|adalah|ialah|yaitu|would\s+be)[ \t]*:?|[:：=])[ \t]*(?:\n[ \t]*)?"
_FINAL = re.compile(r"(?i:final|akhir)")
_ANSWER_PHRASE = re.compile(rf"(?:{_ANSWER_HEAD}){_ANSWER_VERB}{_LETTER_WORD}{_LETTER}")
# An answer phrase followed by an option's text instead of its letter: "The correct answer is Canting."
_ANSWER_TEXT = re.compile(rf"(?:{_ANSWER_HEAD}){_ANSWER_VERB}[*\"'(\[]*([^\n]+)")
# The speaker's own answer named without a verb or colon: "Jawabannya B", "Pilihan saya D", "My choice B".
_OWN_ANSWER = re.compile(
    r"(?i:\bjawabannya|\b(?:jawaban|pilihan)\s+saya|\bmy\s+(?:answer|choice)(?:\s+is)?)"
    rf"\s+{_LETTER_WORD}{_LETTER}"
)
_CHOICE_PHRASE = re.compile(
    r"(?i:\b(?:i\s+(?:would\s+)?(?:choose|pick|select|go\s+with)|(?:saya\s+)?(?:memilih|pilih)))\s+"
    r"(?i:(?:option|pilihan|opsi|jawaban|huruf)\s+)?[*\"'(\[]*([A-Z])(?![A-Za-z0-9])"
)
# A letter said to be right: "Option E is correct", '"C" is the correct answer', "B adalah jawaban yang benar".
_CORRECT_LETTER = re.compile(
    r"(?:(?i:\b(?:option|pilihan|opsi|huruf|letter)\s+)|(?<![A-Za-z0-9]))[\"'(\[]?([A-Z])[\"')\]]?"
    r"[ \t]+(?i:is\s+(?:the\s+)?(?:correct|right)\b|adalah\s+jawaban\s+yang\s+(?:benar|tepat)\b)"
)
# Letters quoted or bracketed later in the sentence of an answer phrase, each named as the answer again
# ('adalah "B" yang adalah "D"', 'is (B) or also (C)'); not one the sentence only explains ("because (A) ...").
_SAME_SENTENCE = re.compile(r"[^.!?\n]*")
_QUOTED_LETTER = re.compile(r"(?i:\b(?:adalah|ialah|is|atau|or))\s+[\"'(\[]([A-Z])[\"')\]]")
# A letter that starts the answer: "B. text", "(B) text", "B)", "B: text", or "A or B", "C and D", "B/C"
# (alternatives, read as ambiguous).
_LEADING = re.compile(r"^[(\[]?([A-Z])(?:[)\].:](?:\s|$)|(?=\s*(?:(?i:or|atau|and|dan)\s|[/&])))")
# A line of an option list: "A. text", "(B) text", "C) text", "D: text".
_LIST_LINE = re.compile(r"^\s*[(\[]?([A-Za-z])[)\].:]\s+\S")
# "A or B", "B/C", "A, D" right after a letter: the model named alternatives, not an answer.
_ALTERNATIVE = re.compile(rf"\s*(?:(?i:or|atau|and|dan)\b|[,/&])\s*{_LETTER}")
_REFUSAL = re.compile(
    r"(?i:\b(?:i\s+(?:can\s*not|can't|cannot|am\s+(?:not\s+able|unable)\s+to|won't|will\s+not)\s+"
    r"(?:answer|help|choose|determine|provide)"
    r"|i\s+(?:do\s+not|don't)\s+know|as\s+an\s+ai\b"
    r"|(?:saya\s+)?(?:tidak|tak)\s+(?:bisa|dapat|mampu|akan)\s+(?:menjawab|memilih|membantu|menentukan)"
    r"|saya\s+tidak\s+tahu|maaf,?\s+saya\s+tidak|sebagai\s+(?:ai|model\s+bahasa)\b))"
)
_REFERENCED = re.compile(r"[(\[]([A-Z])[)\]]|(?i:\b(?:option|pilihan|opsi|huruf)\s+)([A-Z])(?![A-Za-z0-9])")


def _clean(text: str) -> str:
    text = strip_reasoning(text)
    text = text.replace("**", "").replace("__", "").replace("`", "")
    return text.strip()


def _without_option_lists(text: str, options: Mapping[str, str]) -> str:
    """``text`` without its option lists: runs of two or more lines that each start with a different
    option's letter marker (``A. ...``, ``(B) ...``), the question's options echoed back or options the model
    made up. A list names every letter and chooses none; the answer is what the model wrote around it.
    Lines marked with letters that are not options (``Q:`` then ``A:``) are no list."""
    lines = text.splitlines()
    keep = [True] * len(lines)
    start = 0
    while start < len(lines):
        end, letters = start, set()
        while end < len(lines) and (marker := _LIST_LINE.match(lines[end])):
            letter = marker.group(1).upper()
            if letter in letters or letter not in options:
                break
            letters.add(letter)
            end += 1
        if end - start >= 2:
            keep[start:end] = [False] * (end - start)
        start = max(end, start + 1)
    return "\n".join(line for line, kept in zip(lines, keep, strict=True) if kept).strip()


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


def _named_in_sentence(match: re.Match[str], allowed: Mapping[str, str]) -> set[str]:
    """Quoted or bracketed letters in the rest of the sentence an answer phrase's letter starts."""
    rest = _SAME_SENTENCE.match(match.string, match.end()).group(0)
    return {letter for letter in _QUOTED_LETTER.findall(rest) if letter in allowed}


def _option_opening(text: str, options: Mapping[str, str]) -> str | None:
    """The option whose whole text ``text`` opens with (the longest, so ``Jawa Barat`` wins over ``Jawa``)."""
    normalised = normalise_text(text)
    found = [
        (len(option), letter)
        for letter, option in ((letter, normalise_text(text)) for letter, text in options.items())
        if option and (normalised == option or normalised.startswith(option + " "))
    ]
    return max(found)[1] if found else None


def _answers_named(text: str, options: Mapping[str, str]) -> dict[str, set[str]]:
    """The letters each rule finds named as the answer, by rule name."""
    named: dict[str, set[str]] = {}
    for match in _ANSWER_PHRASE.finditer(text):
        rule = "final_answer" if _FINAL.search(match.group(0)) else "answer_phrase"
        letters = _letters_from([match], options)
        if letters:
            named.setdefault(rule, set()).update(letters | _named_in_sentence(match, options))
    for match in _ANSWER_TEXT.finditer(text):
        letter = _option_opening(match.group(1), options)
        if letter is not None:
            named.setdefault("answer_text", set()).add(letter)
    for rule, pattern in (
        ("own_answer", _OWN_ANSWER),
        ("choice_phrase", _CHOICE_PHRASE),
        ("correct_letter", _CORRECT_LETTER),
    ):
        letters = _letters_from(list(pattern.finditer(text)), options)
        if letters:
            named[rule] = letters
    leading = _letters_from([m for m in [_LEADING.match(text)] if m], options)
    if leading:
        named["leading_letter"] = leading
    first_line = text.splitlines()[0]
    exact = [
        letter for letter, option in options.items() if normalise_text(option) == normalise_text(first_line)
    ]
    if len(exact) == 1 and normalise_text(first_line):
        named["option_text"] = set(exact)
    return named


def extract_choice_with_rule(text: object, options: Mapping[str, str]) -> tuple[str | None, str]:
    """The chosen letter (or ``None``) and the name of the rule that decided (one of :data:`RULES`).

    Every rule that finds an answer stated (an answer phrase, a letter or an option's text opening the
    answer, a letter said to be correct) is asked; when together they name two or more letters the result
    is ``(None, AMBIGUOUS_RULE)``, and so it is when the weaker rules tried after them (letters referred to,
    option texts contained) find two or more.
    """
    options = _check_options(options)
    if not isinstance(text, str):
        return None, "no_text"
    cleaned = _clean(text)
    if not cleaned:
        return None, "empty"
    rest = _without_option_lists(cleaned, options)
    letter, rule = _read(rest, options)
    if letter is not None and rest != cleaned:
        return letter, "echoed_options"
    return letter, rule


def _read(text: str, options: Mapping[str, str]) -> tuple[str | None, str]:
    if not text:
        return None, "not_found"
    bare = _BARE.match(text)
    if bare and bare.group(1).upper() in options:
        return bare.group(1).upper(), "bare_letter"

    named = _answers_named(text, options)
    stated = set().union(*named.values()) if named else set()
    if len(stated) > 1:
        return None, AMBIGUOUS_RULE
    if stated:
        return stated.pop(), next(rule for rule in RULES if rule in named)

    if _REFUSAL.search(text):
        return None, REFUSAL_RULE

    referenced = _letters_from(list(_REFERENCED.finditer(text)), options)
    if len(referenced) > 1:
        return None, AMBIGUOUS_RULE
    if referenced:
        return referenced.pop(), "letter_reference"

    contained = _contained_options(normalise_text(text), options)
    if len(contained) > 1:
        return None, AMBIGUOUS_RULE
    if contained:
        return contained[0], "option_text_contained"
    return None, "not_found"


def _contained_options(normalised_answer: str, options: Mapping[str, str]) -> list[str]:
    """Options whose normalised text occurs in the answer as whole words, minus options that only occur
    as part of another occurring option (``Jawa`` inside ``Jawa Barat``). One option found beside most of
    the words of another is a mix of options, not a choice: nothing is returned then."""
    padded = f" {normalised_answer} "
    texts = {letter: normalise_text(option) for letter, option in options.items()}
    hits = {letter: text for letter, text in texts.items() if text and f" {text} " in padded}
    found = sorted(
        letter
        for letter, text in hits.items()
        if not any(other != text and f" {text} " in f" {other} " for other in hits.values())
    )
    if len(found) == 1:
        own = set(texts[found[0]].split())
        words = set(normalised_answer.split())
        for letter, text in texts.items():
            rest = [word for word in text.split() if len(word) > 2 and word not in own]
            if letter != found[0] and len(rest) >= 2 and 2 * sum(word in words for word in rest) >= len(rest):
                return []
    return found


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
