import pytest

from datasets_app.domain import languages
from datasets_app.domain.languages import (
    LANGUAGES,
    TARGET_LANGUAGE_CODES,
    expected_script,
    get_language,
    get_register,
    is_known_language,
    is_valid_register,
    language_name,
    language_register_name,
    register_name,
    registers_for,
)


def test_twenty_target_languages_plus_english_source():
    assert len(TARGET_LANGUAGE_CODES) == 20
    assert TARGET_LANGUAGE_CODES[:4] == ("ind", "jav", "sun", "mad")
    assert "eng" in LANGUAGES and "eng" not in TARGET_LANGUAGE_CODES
    assert all(len(code) == 3 and code.islower() for code in LANGUAGES)
    assert all(lang.name_en and lang.name_id for lang in LANGUAGES.values())


def test_known_language_check():
    assert is_known_language("sun")
    assert is_known_language(" JAV ")
    assert not is_known_language("su")  # ISO 639-1, not ours
    assert not is_known_language("xyz")
    assert not is_known_language(None)  # type: ignore[arg-type]
    assert get_language("ban").name_id == "Bahasa Bali"
    with pytest.raises(KeyError):
        get_language("zzz")


def test_registers_of_the_three_languages_that_have_them():
    assert [r.code for r in registers_for("jav")] == ["krama", "ngoko"]
    assert [r.code for r in registers_for("sun")] == ["lemes", "loma"]
    assert [r.code for r in registers_for("mad")] == ["engghi_ethen", "enja_iya"]
    assert registers_for("ind") == ()
    assert registers_for("xyz") == ()
    with_registers = {code for code, lang in LANGUAGES.items() if lang.registers}
    assert with_registers == {"jav", "sun", "mad"}
    assert get_register("mad", "enja_iya").name_en == "Enja'-Iya"
    with pytest.raises(KeyError):
        get_register("sun", "krama")


def test_register_validity():
    assert is_valid_register("jav", "krama")
    assert is_valid_register("jav", None)
    assert is_valid_register("ind", "")
    assert not is_valid_register("sun", "krama")
    assert not is_valid_register("ind", "krama")
    assert not is_valid_register("xyz", None)


def test_scripts_are_latin_with_traditional_scripts_recorded():
    assert {lang.script for lang in LANGUAGES.values()} == {languages.LATIN}
    assert "Java" in get_language("jav").other_scripts
    assert get_language("sun").other_scripts == ("Sund",)
    assert get_language("ban").other_scripts == ("Bali",)
    assert expected_script("xyz") == "Latn"


def test_names_in_the_page_language():
    assert language_name("jav", "en") == "Javanese"
    assert language_name("jav", "id") == "Bahasa Jawa"
    assert language_name("xyz", "id") == "xyz"
    assert register_name("sun", "lemes", "id") == "Lemes"
    assert register_name("sun", "formal", "en") == "formal"
    assert language_register_name("jav / krama", "en") == "Javanese / Krama"
    assert language_register_name("mad / enja_iya", "id") == "Bahasa Madura / Enja'-Iya"
    assert language_register_name("ind", "id") == "Bahasa Indonesia"
