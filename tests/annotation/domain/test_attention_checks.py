"""Attention checks: injected errors with their credited spans, and the scoring of who found them, on
hand-made strings."""

from __future__ import annotations

import pytest

from annotation.domain.attention_checks import (
    KINDS,
    NEGATION_DROP,
    NUMBER_SWAP,
    UNTRANSLATED,
    checks_choose,
    inject,
)
from annotation.domain.error_spans import (
    ErrorSpan,
    InjectedError,
    SegmentRating,
    attention_scores,
    category_matches,
)


def test_number_swap_changes_one_digit_and_credits_the_number():
    target = "Harga 250 rupiah."
    made = inject(NUMBER_SWAP, target=target, source="The price is 250 rupiah.", seed=1)
    assert made is not None
    assert (made.start, made.end) == (6, 9)
    assert made.original == "250" and made.text[6:9] == made.inserted != "250"
    assert made.text[:6] == "Harga " and made.text[9:] == " rupiah."
    changed = [i for i in range(3) if made.inserted[i] != "250"[i]]
    assert len(changed) == 1 and made.inserted[0] != "0"
    assert f"digit {changed[0] + 1} of 3" in made.note
    assert (made.category, made.severity) == ("accuracy/mistranslation", "major")


def test_number_swap_of_a_single_digit_may_become_zero_but_never_stays():
    for seed in range(40):
        made = inject(NUMBER_SWAP, target="Ada 7 ekor.", source="", seed=seed)
        assert made.text[4] != "7" and made.text[4].isdigit() and (made.start, made.end) == (4, 5)


def test_injections_are_deterministic_under_a_seed():
    target = "Dia tidak datang pada 12 Mei, dan bukan 13 Mei."
    for kind in KINDS:
        first = inject(kind, target=target, source="She did not come on May 12, and not May 13.", seed="s")
        again = inject(kind, target=target, source="She did not come on May 12, and not May 13.", seed="s")
        assert first == again
    texts = {inject(NUMBER_SWAP, target=target, source="", seed=s).text for s in range(20)}
    assert len(texts) > 1  # the seed picks the number and the digit


def test_negation_drop_credits_the_word_it_bore_on():
    made = inject(NEGATION_DROP, target="Saya tidak makan nasi.", source="", seed=0)
    assert made.text == "Saya makan nasi."
    assert (made.start, made.end) == (5, 10) and made.text[5:10] == "makan"
    assert made.original == "tidak" and made.inserted == ""


def test_negation_drop_at_the_end_of_a_clause_credits_the_word_before():
    made = inject(NEGATION_DROP, target="Dia sudah makan? Belum.", source="", seed=0)
    assert made.text == "Dia sudah makan?."
    # "Belum" stood alone after "?": the word before it is credited.
    assert made.text[made.start : made.end] == "makan"
    made = inject(NEGATION_DROP, target="I will not.", source="", seed=0)
    assert made.text == "I will." and made.text[made.start : made.end] == "will"


def test_negation_drop_moves_a_sentence_initial_capital():
    made = inject(NEGATION_DROP, target="Jangan pergi ke sana.", source="", seed=0)
    assert made.text == "Pergi ke sana." and (made.start, made.end) == (0, 5)


def test_negation_words_are_whole_words_only():
    # "tidaklah" and "note" hold a negation's letters but are other words.
    assert inject(NEGATION_DROP, target="Itu tidaklah mudah, note this.", source="", seed=0) is None
    made = inject(NEGATION_DROP, target="He never lies.", source="", seed=3)
    assert made.text == "He lies." and made.text[made.start : made.end] == "lies"


def test_untranslated_puts_a_source_word_in_place_of_a_target_word():
    made = inject(UNTRANSLATED, target="kucing itu tidur", source="the cat sleeps", seed=2)
    assert made is not None
    assert made.inserted in {"the", "cat", "sleeps"} and made.original in {"kucing", "itu", "tidur"}
    assert made.text[made.start : made.end] == made.inserted
    assert made.text.replace(made.inserted, made.original, 1) == "kucing itu tidur"
    assert (made.category, made.severity) == ("accuracy/untranslated", "major")


def test_untranslated_takes_the_source_word_at_the_same_relative_place():
    # One target word to replace, at the end: the last source word not in the target is chosen.
    made = inject(UNTRANSLATED, target="Budi Makan nasi", source="Budi eats rice", seed=0)
    assert made.text == "Budi Makan rice" and (made.start, made.end) == (11, 15)


def test_each_kind_refuses_a_target_without_a_place_for_it():
    assert inject(NUMBER_SWAP, target="Tanpa angka.", source="No numbers.", seed=0) is None
    assert inject(NEGATION_DROP, target="Saya makan.", source="I eat.", seed=0) is None
    assert inject(NEGATION_DROP, target="Tidak", source="No", seed=0) is None  # nothing left to credit
    # Every source word is in the target already, or too short, or a name.
    assert inject(UNTRANSLATED, target="halo dunia", source="Halo dunia", seed=0) is None
    assert inject(UNTRANSLATED, target="OK", source="fine", seed=0) is None
    with pytest.raises(ValueError, match="unknown attention check kind 'typo'"):
        inject("typo", target="x", source="y", seed=0)


def test_checks_choose_takes_the_share_and_passes_over_units_without_a_place():
    units = [
        (1, "Ada 3 buku.", "There are 3 books."),
        (2, "Saya tidak tahu.", "I do not know."),
        (3, "OK", "OK"),  # no place for any kind
        (4, "Harga 10 ribu.", "It costs 10 thousand."),
    ]
    chosen = checks_choose(units, share=0.5, kinds=[NUMBER_SWAP, NEGATION_DROP], seed=7)
    assert len(chosen) == 2
    assert 3 not in {unit for unit, _ in chosen}
    assert chosen == checks_choose(units, share=0.5, kinds=[NUMBER_SWAP, NEGATION_DROP], seed=7)
    everything = checks_choose(units, share=1.0, kinds=[NUMBER_SWAP], seed=7)
    assert sorted(unit for unit, _ in everything) == [1, 4]  # 2 and 3 have no number
    assert checks_choose(units, share=0.0, kinds=list(KINDS), seed=7) == []
    assert len(checks_choose(units, share=0.1, kinds=list(KINDS), seed=7, count=3)) == 3
    with pytest.raises(ValueError, match="between 0 and 1"):
        checks_choose(units, share=1.5, kinds=[NUMBER_SWAP], seed=7)


def test_checks_choose_spreads_the_kinds():
    units = [(i, f"Saya tidak punya {i} buku.", "I do not have books.") for i in range(10, 16)]
    chosen = checks_choose(units, share=1.0, kinds=[NUMBER_SWAP, NEGATION_DROP, UNTRANSLATED], seed=1)
    kinds = [made.kind for _, made in chosen]
    assert kinds.count(NUMBER_SWAP) == kinds.count(NEGATION_DROP) == kinds.count(UNTRANSLATED) == 2


def _span(start, end, category="accuracy/mistranslation"):
    return ErrorSpan(start, end, category=category, severity="major")


def test_scoring_credits_an_overlapping_span_and_counts_misses():
    made = inject(NEGATION_DROP, target="Saya tidak makan nasi.", source="", seed=0)
    check = InjectedError("check", "t1", _span(made.start, made.end, made.category), kind=made.kind)
    ratings = [
        SegmentRating("check", "t1", "marks nothing"),
        SegmentRating("check", "t1", "marks the verb", spans=(_span(5, 10, "fluency/grammar"),)),
        SegmentRating("check", "t1", "marks elsewhere", spans=(_span(11, 15),)),
        SegmentRating("check", "t2", "not checked", spans=(_span(0, 4),)),
    ]
    scores = {s.rater: (s.checked, s.found, s.missed, s.share) for s in attention_scores([check], ratings)}
    assert scores == {
        "marks nothing": (1, 0, 1, 0.0),
        "marks the verb": (1, 1, 0, 1.0),
        "marks elsewhere": (1, 0, 1, 0.0),
    }
    strict = {s.rater: s.found for s in attention_scores([check], ratings, match_category=True)}
    assert strict["marks the verb"] == 0  # a grammar error is not the mistranslation injected


def test_category_matches_along_the_tree_path():
    assert category_matches("accuracy/mistranslation", "Accuracy/Mistranslation")
    assert category_matches("accuracy/mistranslation", "Accuracy")
    assert category_matches("accuracy", "accuracy/untranslated")
    assert not category_matches("accuracy/mistranslation", "accuracy/untranslated")
    assert not category_matches("accuracy/mistranslation", "accuracy-x")
    assert not category_matches("accuracy/mistranslation", "")
