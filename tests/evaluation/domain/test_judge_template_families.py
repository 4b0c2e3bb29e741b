"""Pairwise template families (with and without a tie) and per-turn prompts that show the conversation so far."""

from __future__ import annotations

import pytest

from evaluation.domain.judge_templates import (
    NO_TIE,
    PAIRWISE,
    PAIRWISE_LABELS,
    SHIPPED_TEMPLATES,
    WITH_TIE,
    JudgeTemplate,
    TemplateError,
    default_template,
    pairwise_family_of,
    render_pairwise,
    render_single_grade,
)

USER = ["Sebutkan satu pulau di Indonesia.", "Apa ibu kota provinsinya?"]
ONE = ["Bali.", "Denpasar."]
TWO = ["Pulau Lombok.", "Mataram."]


def test_a_turn_2_verdict_shows_turn_1_of_the_user_and_of_both_assistants():
    [_, user] = render_pairwise(
        default_template(PAIRWISE, "en"), user_turns=USER, response_1=ONE, response_2=TWO, turn_index=1
    )
    text = user["content"]
    assert (
        "[User request]\nTurn 1:\nSebutkan satu pulau di Indonesia.\n\n"
        "Turn 2 (the turn to judge):\nApa ibu kota provinsinya?\n\n"
        "[Response 1]\nTurn 1:\nBali.\n\nTurn 2 (the turn to judge):\nDenpasar.\n\n"
        "[Response 2]\nTurn 1:\nPulau Lombok.\n\nTurn 2 (the turn to judge):\nMataram.\n\n"
    ) in text
    assert "Judge only the answers to the last user message (turn 2); the earlier turns are context." in text


def test_a_turn_1_verdict_of_a_two_turn_conversation_shows_turn_1_only():
    [_, user] = render_pairwise(
        default_template(PAIRWISE, "id", name="with_tie"),
        user_turns=USER,
        response_1=ONE,
        response_2=TWO,
        turn_index=0,
    )
    text = user["content"]
    assert "[Permintaan pengguna]\nSebutkan satu pulau di Indonesia.\n\n[Respons A]\nBali.\n\n" in text
    assert "[Respons B]\nPulau Lombok.\n\n" in text
    assert "Denpasar" not in text and "Apa ibu kota" not in text
    assert "Nilailah respons terhadap permintaan pengguna." in text


def test_a_turn_index_outside_the_conversation_is_refused():
    with pytest.raises(TemplateError, match=r"turn_index must be in 0\.\.1, got 2"):
        render_pairwise(
            default_template(PAIRWISE, "en"), user_turns=USER, response_1=ONE, response_2=TWO, turn_index=2
        )


def test_single_grade_turn_2_shows_the_earlier_turn_of_the_same_answer():
    [_, user] = render_single_grade(
        default_template("single_grade", "en"),
        user_turns=USER,
        answer_turns=TWO,
        turn_index=1,
        category="roleplay",
    )
    text = user["content"]
    assert (
        "[Earlier conversation]\nUser: Sebutkan satu pulau di Indonesia.\nAssistant: Pulau Lombok.\n\n"
        "[User message]\nApa ibu kota provinsinya?\n\n"
    ) in text
    assert "\n\n[Assistant's answer]\nMataram.\n\n" in text


@pytest.mark.parametrize(
    ("language", "family", "first", "second", "asks"),
    [
        ("en", NO_TIE, "[Response 1]", "[Response 2]", '"score": "Response 1" or "Response 2"}'),
        ("id", NO_TIE, "[Respon 1]", "[Respon 2]", '"score": "Respon 1" atau "Respon 2"}'),
        ("en", WITH_TIE, "[Response A]", "[Response B]", '"score": "A", "B" or "tie"}'),
        ("id", WITH_TIE, "[Respons A]", "[Respons B]", '"score": "A", "B" atau "seri"}'),
    ],
)
def test_both_families_ship_in_both_languages(language, family, first, second, asks):
    name = "default" if family == NO_TIE else "with_tie"
    template = SHIPPED_TEMPLATES[(name, PAIRWISE, language)]
    assert pairwise_family_of(template.name) == family
    [_, user] = render_pairwise(template, user_turns="Halo?", response_1="Hai.", response_2="Halo juga.")
    text = user["content"]
    assert f"{first}\nHai.\n\n{second}\nHalo juga.\n\n" in text
    assert text.endswith(asks)
    assert template.output_schema["properties"]["score"]["enum"] == list(PAIRWISE_LABELS[(family, language)])
    forbids_tie = "a tie is not allowed" in text or "hasil seri tidak diperbolehkan" in text
    assert forbids_tie == (family == NO_TIE)


def test_an_edited_with_tie_template_keeps_its_tie_labels():
    edited = JudgeTemplate(
        kind=PAIRWISE,
        language="id",
        version=2,
        name="with_tie",
        system="",
        user="{{question}} | {{response_1}} | {{response_2}}",
    )
    assert edited.output_schema["properties"]["score"]["enum"] == ["A", "B", "seri"]
