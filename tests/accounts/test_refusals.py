"""accounts.refusals.shown: a refusal's text translated before its values are filled in."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.utils import translation

from accounts.refusals import shown
from annotation.services import AnnotationError
from evaluation.services import RunConfigError
from exports.services import Refusal


def test_the_text_is_translated_before_its_values_are_filled_in():
    error = RunConfigError("chunk_size must be an integer in 1..1000, got %(value)s", value="0")
    assert str(error) == "chunk_size must be an integer in 1..1000, got 0"
    assert shown(error) == str(error)
    with translation.override("id"):
        assert shown(error) == "ukuran potongan (chunk_size) harus bilangan bulat 1..1000, bukan 0"


def test_a_value_that_is_itself_a_refusal_is_shown_the_same_way_and_alternatives_take_the_languages_or():
    inner = Refusal("name at least one rated criterion")
    outer = Refusal(
        "a %(kind)s project exports with %(allowed)s, not %(strategy)s",
        kind="likert",
        allowed=("scores", "best_vs_rest"),
        strategy=inner,
    )
    assert (
        outer == "a likert project exports with scores or best_vs_rest, not name at least one rated criterion"
    )
    with translation.override("id"):
        assert shown(outer) == (
            "proyek likert diekspor dengan scores atau best_vs_rest, bukan "
            "sebutkan setidaknya satu kriteria yang dinilai"
        )


def test_texts_without_placeholders_or_translation_and_validation_errors():
    with translation.override("id"):
        assert shown(AnnotationError("Pick the best response.")) == "Pilih respons terbaik."
        assert shown("no entry in the catalogue") == "no entry in the catalogue"
        assert shown(AnnotationError()) == ""
        assert (
            shown(ValidationError("Backend options must be an object.")) == "Opsi backend harus berupa objek."
        )
        # Django's own message, translated lazily, with its values apart.
        error = ValidationError(
            "Ensure this value is less than or equal to %(limit_value)s.", params={"limit_value": 3}
        )
        assert shown(error) == "Pastikan nilai ini lebih kecil dari atau sama dengan 3."


def test_the_services_refusals_keep_their_english_text_and_their_kinds():
    error = RunConfigError("unknown prompt variant %(variant)s", variant="'x'")
    assert isinstance(error, ValueError)  # callers that catch ValueError still catch it
    assert str(error) == "unknown prompt variant 'x'" and error.args == ("unknown prompt variant 'x'",)
    assert (error.message, error.params) == ("unknown prompt variant %(variant)s", {"variant": "'x'"})
    assert str(AnnotationError("50% done")) == "50% done"  # no values: the text is not formatted
