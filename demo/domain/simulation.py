"""Simulated annotators for the demo: answers drawn from a seeded model of who rates what, and how.

The demo's dashboards need answers from several people to have anything to show. Three simulated annotators
(users ``simulasi1`` .. ``simulasi3``, labelled as simulated everywhere they appear) answer through the same
services as people do, with answers drawn here:

- every response gets a latent quality: the strength of its (fictional) model plus a per-response offset,
  both fixed, so two annotators rating one response see the same thing;
- an annotator has a bias (lenient or strict) and a noise level, so agreement is real but not perfect:
  Krippendorff's alpha lands around 0.5-0.7, which is what careful human raters reach on such tasks;
- pairwise votes follow the difference of the two qualities through the same noise, with ties when the
  difference is small; multiple-choice answers are right most of the time and otherwise pick the
  question's distractor; translation reviews reject what the automatic flags caught and accept the rest.

Everything is a pure function of its arguments and a seed: the same demo gives the same answers.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# Mean quality (1..5) of each fictional model of the sample; unknown models get the middle of the scale.
MODEL_STRENGTH: Mapping[str, float] = {
    "garuda-instruct-13b": 4.1,
    "sahabat-ai-8b": 3.8,
    "nusantara-chat-7b": 3.5,
    "merapi-lm-3b": 2.6,
    "rinjani-mini-1b": 2.3,
}
DEFAULT_STRENGTH = 3.0
RESPONSE_SPREAD = 0.8
TIE_MARGIN = 0.35


@dataclass(frozen=True)
class SimulatedAnnotator:
    username: str
    bias: float
    noise: float
    mcq_skill: float


SIMULATED_ANNOTATORS: tuple[SimulatedAnnotator, ...] = (
    SimulatedAnnotator("simulasi1", bias=0.0, noise=0.55, mcq_skill=0.85),
    SimulatedAnnotator("simulasi2", bias=0.35, noise=0.7, mcq_skill=0.75),
    SimulatedAnnotator("simulasi3", bias=-0.3, noise=0.65, mcq_skill=0.8),
)


def _unit(seed: int, *parts: object) -> float:
    """A number in [0, 1) fixed by ``seed`` and ``parts`` (stable across Python versions and runs)."""
    digest = hashlib.blake2b(repr((seed, *parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def rng_for(seed: int, *parts: object) -> random.Random:
    return random.Random(int(_unit(seed, *parts) * 2**53))


def response_quality(model_name: str, response_key: str, *, seed: int) -> float:
    """The latent quality of one response on the 1..5 scale."""
    offset = rng_for(seed, "quality", response_key).gauss(0.0, RESPONSE_SPREAD)
    return MODEL_STRENGTH.get(model_name, DEFAULT_STRENGTH) + offset


def _clip(value: float, low: int, high: int) -> int:
    return max(low, min(high, round(value)))


def likert_payload(
    qualities: Sequence[float],
    criteria: Sequence[str],
    annotator: SimulatedAnnotator,
    rng: random.Random,
    *,
    scale: tuple[int, int] = (1, 5),
    best_pick: bool = True,
) -> dict[str, object]:
    """Ratings for responses shown in the order of ``qualities`` (positions 1..N), and a best pick."""
    low, high = scale
    ratings: dict[str, dict[str, int]] = {}
    perceived = []
    for position, quality in enumerate(qualities, start=1):
        seen = quality + annotator.bias + rng.gauss(0.0, annotator.noise)
        perceived.append(seen)
        # Fluency tracks overall quality loosely; each criterion gets its own small noise.
        ratings[str(position)] = {
            criterion: _clip(seen + rng.gauss(0.0, 0.35), low, high) for criterion in criteria
        }
    payload: dict[str, object] = {"ratings": ratings}
    if best_pick:
        payload["best"] = str(max(range(len(perceived)), key=perceived.__getitem__) + 1)
    return payload


def pairwise_vote(
    quality_a: float, quality_b: float, annotator: SimulatedAnnotator, rng: random.Random
) -> str:
    """``A``, ``B`` or ``tie`` for responses shown as A and B."""
    difference = quality_a - quality_b + rng.gauss(0.0, annotator.noise * 1.2)
    if abs(difference) < TIE_MARGIN:
        return "tie"
    return "A" if difference > 0 else "B"


def mcq_payload(
    answer: str, distractor: str, annotator: SimulatedAnnotator, rng: random.Random, *, choices: str = "ABCDE"
) -> dict[str, object]:
    """Right with the annotator's skill; otherwise the distractor when there is one (as people do), else
    any wrong option. Now and then an answer flags the question as ambiguous, with a reason."""
    if rng.random() < annotator.mcq_skill:
        choice = answer
    elif distractor and rng.random() < 0.7:
        choice = distractor
    else:
        choice = rng.choice([c for c in choices if c != answer])
    payload: dict[str, object] = {"choice": choice}
    if rng.random() < 0.06:
        payload["ambiguous"] = True
        payload["comment"] = "Dua pilihan bisa sama-sama benar tergantung daerahnya."
    return payload


# What a reviewer usually answers to a unit carrying each automatic flag: an error category and a comment.
_FLAG_REVIEWS: Mapping[str, tuple[str, str]] = {
    "number_mismatch": ("translation_error", "Angka dalam terjemahan tidak sama dengan sumbernya."),
    "untranslated": ("wrong_language", "Kalimat ini belum diterjemahkan."),
    "truncated": ("translation_error", "Terjemahan terpotong; bagian akhir kalimat hilang."),
    "slash_alternative": ("fluency", "Pilih satu bentuk saja, jangan memakai garis miring."),
    "bracket_addition": ("context", "Keterangan dalam kurung tidak ada di sumber; hapus."),
    "register_mismatch": ("context", "Ragam bahasanya tidak sesuai dengan yang diminta."),
    "length_ratio": ("translation_error", "Panjang terjemahan jauh berbeda dari sumbernya."),
    "foreign_script": ("typo_mechanics", "Ada huruf dari aksara lain yang tidak semestinya."),
    "empty": ("translation_error", "Terjemahannya kosong."),
    "low_back_translation": ("translation_error", "Terjemahan balik jauh dari sumbernya; maknanya berubah."),
}


def review_payload(flags: Sequence[Mapping[str, object]], rng: random.Random) -> dict[str, object]:
    """A reviewer's verdict on a translation: flagged units are mostly rejected (with the category the
    flag points to), the rest mostly accepted; now and then a reviewer disagrees with the flags."""
    codes = [str(flag.get("code", "")) for flag in flags]
    known = [code for code in codes if code in _FLAG_REVIEWS]
    if known and rng.random() < 0.85:
        categories = sorted({_FLAG_REVIEWS[code][0] for code in known})
        comment = " ".join(dict.fromkeys(_FLAG_REVIEWS[code][1] for code in known))
        return {"verdict": "reject", "error_categories": categories, "comment": comment}
    if not known and rng.random() < 0.1:
        return {
            "verdict": "reject",
            "error_categories": ["fluency"],
            "comment": "Susunan kalimatnya kurang alami; coba baca ulang.",
        }
    return {"verdict": "accept"}
