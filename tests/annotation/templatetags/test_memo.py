"""``{% memo %}``: kept per key and language, the ``vary`` value put in escaped, unhashable keys not kept."""

import pytest
from django.template import Context, Engine, TemplateSyntaxError
from django.utils import translation

from annotation.templatetags import memo

ENGINE = Engine(libraries={"memo": "annotation.templatetags.memo", "i18n": "django.templatetags.i18n"})


def render(source: str, **values) -> str:
    return ENGINE.from_string(source).render(Context(values))


def test_the_block_is_rendered_once_per_key():
    template = ENGINE.from_string("{% load memo %}{% memo key %}{{ shown }}{% endmemo %}")
    assert template.render(Context({"key": 1, "shown": "first"})) == "first"
    # Same key: what was kept, whatever else the context holds (the key must name what the block shows).
    assert template.render(Context({"key": 1, "shown": "second"})) == "first"
    assert template.render(Context({"key": 2, "shown": "second"})) == "second"


def test_the_vary_value_is_put_in_escaped_at_each_use():
    template = ENGINE.from_string(
        '{% load memo %}{% memo key vary name=field %}<input name="{{ name }}" title="{{ name }}">{% endmemo %}'
    )
    assert template.render(Context({"key": "k", "field": "r-1-fluency"})) == (
        '<input name="r-1-fluency" title="r-1-fluency">'
    )
    assert template.render(Context({"key": "k", "field": 'a"<b>'})) == (
        '<input name="a&quot;&lt;b&gt;" title="a&quot;&lt;b&gt;">'
    )


def test_several_vary_values_each_put_in_where_the_block_shows_them():
    """Each vary value in its places (one twice, one never), text escaped, numbers and decimals as
    ``{{ }}`` shows them in the active language, and with them through a filter in the vary expression."""
    template = ENGINE.from_string(
        "{% load memo i18n %}{% memo key vary name=project done=n total=m|default:1 ratio=r %}"
        "<a>{{ name }}</a> {{ done }}/{{ total }} ({{ done }}) {{ ratio }}{% endmemo %}"
    )
    with translation.override("en"):
        assert template.render(Context({"key": 1, "project": "A & <b>", "n": 3, "m": 0, "r": 2.5})) == (
            "<a>A &amp; &lt;b&gt;</a> 3/1 (3) 2.5"
        )
        assert template.render(Context({"key": 1, "project": "Lain", "n": 12000, "m": 40, "r": 0.25})) == (
            "<a>Lain</a> 12000/40 (12000) 0.25"
        )
    with translation.override("id"):
        assert template.render(Context({"key": 1, "project": "P", "n": 1, "m": 2, "r": 7.5})) == (
            "<a>P</a> 1/2 (1) 7,5"
        )


def test_vary_values_go_into_blocktranslate_and_url_whole():
    template = ENGINE.from_string(
        "{% load memo i18n %}{% memo key vary done=a total=b %}"
        "{% blocktranslate %}{{ done }} of {{ total }} done{% endblocktranslate %}{% endmemo %}"
    )
    with translation.override("en"):
        assert template.render(Context({"key": 1, "a": 2, "b": 9})) == "2 of 9 done"
        assert template.render(Context({"key": 1, "a": 3, "b": 9})) == "3 of 9 done"


def test_vary_takes_name_value_pairs_only():
    with pytest.raises(TemplateSyntaxError, match="name=value"):
        ENGINE.from_string("{% load memo %}{% memo key vary a=x b %}{% endmemo %}")


def test_the_language_is_part_of_the_key():
    template = ENGINE.from_string('{% load memo i18n %}{% memo "x" %}{% translate "Skip" %}{% endmemo %}')
    with translation.override("en"):
        assert template.render(Context()) == "Skip"
    with translation.override("id"):
        assert template.render(Context()) == "Lewati"
    with translation.override("en"):
        assert template.render(Context()) == "Skip"


def test_lists_dicts_and_content_keys_make_keys():
    class View:
        def __init__(self, content_key):
            self.content_key = content_key

    template = ENGINE.from_string("{% load memo %}{% memo views options %}{{ shown }}{% endmemo %}")
    assert template.render(Context({"views": [View("a")], "options": {"k": [1]}, "shown": 1})) == "1"
    assert template.render(Context({"views": [View("a")], "options": {"k": [1]}, "shown": 2})) == "1"
    assert template.render(Context({"views": [View("b")], "options": {"k": [1]}, "shown": 2})) == "2"
    assert template.render(Context({"views": [View("b")], "options": {"k": [2]}, "shown": 3})) == "3"


def test_a_value_that_cannot_be_a_key_renders_every_time():
    template = ENGINE.from_string(
        "{% load memo %}{% memo key vary n=number %}{{ n }}{{ shown }}{% endmemo %}"
    )
    assert template.render(Context({"key": ({1},), "number": 1, "shown": "a"})) == "1a"
    assert template.render(Context({"key": ({1},), "number": 2, "shown": "b"})) == "2b"


def test_what_is_kept_is_bounded():
    template = ENGINE.from_string("{% load memo %}{% memo key %}{{ key }}{% endmemo %}")
    for key in range(memo.MEMO_SIZE + 10):
        assert template.render(Context({"key": key})) == str(key)
    node = next(n for n in template.nodelist if isinstance(n, memo.MemoNode))
    assert len(node.kept) <= memo.MEMO_SIZE


@pytest.mark.parametrize(
    "source",
    ["{% memo %}x{% endmemo %}", "{% memo a vary %}x{% endmemo %}", "{% memo a vary n=b c %}x{% endmemo %}"],
)
def test_malformed_tags_are_refused(source):
    with pytest.raises(TemplateSyntaxError):
        render("{% load memo %}" + source)


# --- {% response_card %} -----------------------------------------------------------------------------------


def _rows(turns_per_response, *, selected="", errors=None):
    from annotation.selectors.core import CriterionView, ShownResponse
    from annotation.views.common import response_rows

    levels = {"en": [(1, "Poor"), (5, "Fine")], "id": [(1, "Buruk"), (5, "Baik")]}
    criteria = [
        CriterionView("relevance", {"en": "Relevance", "id": "Relevansi"}, {}, levels, 1),
        CriterionView("fluency", {"en": "Fluency", "id": "Kelancaran"}, {}, levels, 1),
    ]

    responses = [
        ShownResponse(number=n, label=f"Response {n}", turns=turns)
        for n, turns in enumerate(turns_per_response, start=1)
    ]
    ratings = {"1": {"fluency": selected}} if selected else {}
    return response_rows(responses, criteria, ratings, errors)


TURNS = [
    ["one line"],
    ['two\nlines with <b>markup</b> & "quotes"', "second turn\r\nwith a break"],
    ["memo-0123 looks like a marker", ""],
]


@pytest.mark.parametrize("lang", ["en", "id"])
@pytest.mark.parametrize("read_only", [False, True])
def test_the_response_card_equals_the_include_of_its_template(lang, read_only):
    from django.template import engines
    from django.template.loader import get_template

    include = get_template("annotation/_response_card.html")
    tag = engines["django"].engine.from_string(
        "{% load memo %}{% for row in rows %}{% response_card row read_only %}{% endfor %}"
    )
    with translation.override(lang):
        for rows in (
            _rows(TURNS),
            _rows(TURNS, selected="3"),
            _rows(TURNS, errors={"ratings.1.fluency": ["Choose one."]}),
            _rows([["other text"], ["x"], ["y\n\nz"]]),  # the kept cards, other texts
        ):
            expected = "".join(
                include.template.render(Context({"row": row, "read_only": read_only})) for row in rows
            )
            assert tag.render(Context({"rows": rows, "read_only": read_only})) == expected
