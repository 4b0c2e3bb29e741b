import pytest

from annotation.domain.rubrics import (
    CATEGORIES,
    CATEGORY_LABELS,
    CRITERIA,
    CRITERION_LABELS,
    CRITERION_QUESTIONS,
    RUBRICS,
    normalize_category,
    rubric_for,
    rubric_levels,
)


def all_level_sets():
    for criterion, entry in RUBRICS.items():
        yield criterion, "default", entry["default"]
        for category, texts in entry["overrides"].items():
            yield criterion, category, texts


def test_every_rubric_has_five_levels_in_both_languages():
    for criterion, where, texts in all_level_sets():
        assert set(texts) == {"id", "en"}, (criterion, where)
        for lang in ("id", "en"):
            assert list(texts[lang]) == [1, 2, 3, 4, 5], (criterion, where, lang)
            assert all(len(text) > 30 for text in texts[lang].values()), (criterion, where, lang)
            assert len(set(texts[lang].values())) == 5, (criterion, where, lang)
        assert texts["id"] != texts["en"]


def test_overrides_cover_safety_math_and_coding_for_both_criteria():
    assert tuple(RUBRICS) == CRITERIA == ("relevance", "fluency")
    for criterion in CRITERIA:
        assert set(RUBRICS[criterion]["overrides"]) == {"safety", "math", "coding"}
        assert set(RUBRICS[criterion]["overrides"]) <= set(CATEGORIES)


def test_labels_cover_every_category_and_criterion():
    assert len(CATEGORIES) == 10
    assert set(CATEGORY_LABELS) == set(CATEGORIES)
    assert set(CRITERION_LABELS) == set(CRITERION_QUESTIONS) == set(CRITERIA)
    assert CATEGORY_LABELS["creative_writing"] == {"id": "Penulisan kreatif", "en": "Creative writing"}


def test_rubric_for_picks_the_override_or_the_default():
    assert rubric_for("relevance", "safety", "en") == RUBRICS["relevance"]["overrides"]["safety"]["en"]
    assert "harmful" in rubric_for("relevance", "safety", "en")[1]
    assert "berbahaya" in rubric_for("relevance", "safety", "id")[5]
    assert "final answer" in rubric_for("relevance", "math", "en")[5]
    assert "dijalankan" in rubric_for("relevance", "coding", "id")[5]
    for category in ("analysis", "translation", "open_question", None, "a category we never heard of"):
        assert rubric_for("fluency", category, "id") == RUBRICS["fluency"]["default"]["id"]


def test_category_names_are_normalized():
    assert normalize_category("Creative Writing") == "creative_writing"
    assert normalize_category(" open-question ") == "open_question"
    assert normalize_category("Mathematics") == "math"
    assert normalize_category("") is None
    assert rubric_for("relevance", "Coding", "en") == rubric_for("relevance", "coding", "en")


def test_returned_levels_are_copies():
    levels = rubric_for("relevance", None, "en")
    levels[1] = "changed"
    assert rubric_for("relevance", None, "en")[1] != "changed"


def test_both_languages_at_once_and_errors():
    both = rubric_levels("fluency", "math")
    assert both == {"id": rubric_for("fluency", "math", "id"), "en": rubric_for("fluency", "math", "en")}
    with pytest.raises(ValueError):
        rubric_for("clarity", None, "en")
    with pytest.raises(ValueError):
        rubric_for("relevance", None, "su")
