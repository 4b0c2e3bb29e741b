"""The interface language a person is written to in, from the ISO 639-3 code of the language they work in."""

from accounts.domain.mail_language import mail_language

UI = ("en", "id")


def test_a_language_of_the_interface_is_its_own():
    assert mail_language("ind", interface_languages=UI, default="en") == "id"
    assert mail_language("eng", interface_languages=UI, default="id") == "en"


def test_a_regional_language_reads_indonesian():
    for code in ("jav", "sun", "mad", "min", "ban", " JAV "):
        assert mail_language(code, interface_languages=UI, default="en") == "id"


def test_no_language_on_record_gets_the_default():
    assert mail_language("", interface_languages=UI, default="en") == "en"
    assert mail_language("", interface_languages=UI, default="id") == "id"


def test_a_language_the_site_does_not_offer_gets_the_default():
    assert mail_language("jav", interface_languages=("en",), default="en") == "en"
