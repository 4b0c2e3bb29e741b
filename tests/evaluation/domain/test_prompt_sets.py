"""Combining the figures of several prompt templates: mean (id-csqa) or best (LoraxBench)."""

from __future__ import annotations

import pytest

from evaluation.domain.prompt_sets import (
    TEXT_TEMPLATES,
    TRANSLATION,
    TextTemplate,
    combine,
    combine_template_table,
)

# Three templates over two languages, each with an overall accuracy of 0.5.
TABLE = {
    "languages": ["ind", "jav"],
    "rows": [
        {"variant": "t1", "ind": 1.0, "jav": 0.0, "avg": 0.5, "overall": 0.5, "n": 4},
        {"variant": "t2", "ind": 0.5, "jav": 0.5, "avg": 0.5, "overall": 0.5, "n": 4},
        {"variant": "t3", "ind": 0.0, "jav": 1.0, "avg": 0.5, "overall": 0.5, "n": 4},
    ],
}


def test_mean_over_templates_per_language_and_overall():
    combined = combine_template_table(TABLE, "mean", column="variant")
    assert (combined["ind"], combined["jav"], combined["avg"], combined["overall"], combined["n"]) == (
        0.5,
        0.5,
        0.5,
        0.5,
        12,
    )
    assert "best" not in combined


def test_max_takes_the_best_template_per_language_and_names_it():
    combined = combine_template_table(TABLE, "max", column="variant")
    # Each language its best template: 1.0 and 1.0, so the average over languages is 1.0, while the best
    # template over all items is still 0.5.
    assert (combined["ind"], combined["jav"], combined["avg"], combined["overall"]) == (1.0, 1.0, 1.0, 0.5)
    assert combined["best"] == {"ind": "t1", "jav": "t3"}


def test_a_language_no_template_has_leaves_the_average_undefined():
    table = {
        "languages": ["ind", "jav"],
        "rows": [{"variant": "t1", "ind": 0.25, "jav": None, "overall": 0.25}],
    }
    combined = combine_template_table(table, "mean", column="variant")
    assert combined["ind"] == 0.25 and combined["jav"] is None and combined["avg"] is None


def test_combine_skips_missing_figures_and_refuses_draw():
    assert combine([0.2, None, 0.4], "mean") == pytest.approx(0.3)
    assert combine([None], "max") is None
    with pytest.raises(ValueError, match="aggregation"):
        combine([0.1], "draw")


def test_text_templates_need_their_placeholders():
    with pytest.raises(ValueError, match=r"\{\{target\}\}, \{\{text\}\}"):
        TextTemplate(id="x", task=TRANSLATION, language="id", text="Terjemahkan dari {{source}}")
    shipped = TEXT_TEMPLATES[TRANSLATION][0]
    assert shipped.render(source="Jawa", target="Indonesia", register="", text="Sugeng enjing") == (
        "Terjemahkan teks berikut dari bahasa Jawa ke bahasa Indonesia. Balas hanya dengan terjemahannya."
        "\n\nSugeng enjing"
    )
