"""Judge templates: data, placeholders, rendering of pairwise / single-grade / factual prompts."""

from __future__ import annotations

import json

import pytest

from evaluation.domain.judge_templates import (
    CATEGORIES,
    DEFAULT_CATEGORY_ASPECTS,
    FACTUAL,
    KINDS,
    LANGUAGES,
    PAIRWISE,
    SINGLE_GRADE,
    JudgeTemplate,
    TemplateError,
    aspects_for,
    default_template,
    fill_placeholders,
    json_schema_for,
    render,
    render_factual,
    render_pairwise,
    render_single_grade,
)


def test_every_kind_has_a_default_in_both_languages():
    for kind in KINDS:
        for language in LANGUAGES:
            template = default_template(kind, language)
            # Pairwise templates are at version 2: they ask about one turn through {{focus}}.
            version = 2 if kind == PAIRWISE else 1
            assert (template.kind, template.language, template.version) == (kind, language, version)
            if kind != PAIRWISE:
                assert template.output_schema == json_schema_for(kind)
    with pytest.raises(
        TemplateError, match="no shipped template 'default' for kind 'pairwise' in language 'jv'"
    ):
        default_template(PAIRWISE, "jv")


def test_placeholders_are_double_braced_and_json_braces_stay_literal():
    text = 'Q: {{question}}\nReply {"score": 1} for {{ answer }}.'
    assert (
        fill_placeholders(text, {"question": "Apa?", "answer": "X"}) == 'Q: Apa?\nReply {"score": 1} for X.'
    )


def test_missing_placeholders_are_all_named():
    with pytest.raises(TemplateError, match="missing value\\(s\\) for placeholder\\(s\\): gold, question"):
        render(default_template(FACTUAL, "en"), answer="x")


def test_values_are_not_expanded_twice():
    template = default_template(FACTUAL, "en")
    [_, message] = render(template, question="{{gold}}", gold="G", answer="{{answer}}")
    assert "[Question]\n{{gold}}\n" in message["content"]
    assert "[Answer]\n{{answer}}\n" in message["content"]


def test_non_text_values_are_refused():
    with pytest.raises(TemplateError, match="placeholder 'answer' needs text, got list"):
        fill_placeholders("{{answer}}", {"answer": ["a"]})


def test_single_turn_pairwise_shows_question_then_response_1_then_response_2():
    messages = render_pairwise(
        default_template(PAIRWISE, "en"),
        user_turns="Apa ibu kota Jawa Barat?",
        response_1="Bandung.",
        response_2="Bogor.",
    )
    assert [m["role"] for m in messages] == ["system", "user"]
    content = messages[1]["content"]
    question_at = content.index("[User request]\nApa ibu kota Jawa Barat?\n")
    first_at = content.index("[Response 1]\nBandung.\n")
    second_at = content.index("[Response 2]\nBogor.\n")
    assert question_at < first_at < second_at
    assert content.endswith(
        '{"explanation": "<a short comparison of the two responses>", "score": "Response 1" or "Response 2"}'
    )


def test_multi_turn_pairwise_in_indonesian_is_turn_by_turn():
    [_, user] = render_pairwise(
        default_template(PAIRWISE, "id"),
        user_turns=["Sebutkan satu pulau.", "Di provinsi mana?"],
        response_1=["Bali.", "Provinsi Bali."],
        response_2=["Lombok.", "NTB."],
    )
    content = user["content"]
    assert (
        "[Permintaan pengguna]\nGiliran 1:\nSebutkan satu pulau.\n\nGiliran 2:\nDi provinsi mana?\n"
        in content
    )
    assert "[Respon 1]\nGiliran 1:\nBali.\n\nGiliran 2:\nProvinsi Bali.\n" in content
    assert "[Respon 2]\nGiliran 1:\nLombok.\n\nGiliran 2:\nNTB.\n" in content
    assert "nilailah setiap giliran dari masing-masing respons." in content
    # The Indonesian no-tie template asks for IndoPref's own labels; its schema allows exactly those.
    assert '"score": "Respon 1" atau "Respon 2"' in content
    assert default_template(PAIRWISE, "id").output_schema["properties"]["score"]["enum"] == [
        "Respon 1",
        "Respon 2",
    ]


def test_pairwise_turn_counts_must_match():
    with pytest.raises(TemplateError, match="turn counts differ: prompt 2, response 1 1, response 2 2"):
        render_pairwise(
            default_template(PAIRWISE, "en"), user_turns=["a", "b"], response_1="x", response_2=["y", "z"]
        )


def test_single_grade_second_turn_has_context_reference_and_aspects():
    [_, user] = render_single_grade(
        default_template(SINGLE_GRADE, "en"),
        user_turns=["What is 2+2?", "And times 3?"],
        answer_turns=["4", "12"],
        turn_index=1,
        category="Math",
        references=["4", "12"],
    )
    content = user["content"]
    assert "Category: Math\n" in content
    assert "1. Accuracy of the final answer\n2. Accuracy of every step of the working\n" in content
    assert "[Earlier conversation]\nUser: What is 2+2?\nAssistant: 4\n" in content
    assert "[User message]\nAnd times 3?\n" in content
    assert "[Reference answer]\n12\n" in content
    assert "[Assistant's answer]\n12\n" in content


def test_single_grade_first_turn_without_reference_in_indonesian():
    [_, user] = render_single_grade(
        default_template(SINGLE_GRADE, "id"),
        user_turns="Tulis pantun tentang hujan.",
        answer_turns="Hujan turun ...",
        turn_index=0,
        category="creative writing",
    )
    content = user["content"]
    assert "Kategori: Penulisan kreatif\n" in content
    assert "1. Kreativitas dan orisinalitas\n" in content
    assert "[Percakapan sebelumnya]\n(tidak ada: ini giliran pertama)\n" in content
    assert (
        "[Jawaban rujukan]\n(tidak ada jawaban rujukan; nilailah berdasarkan pengetahuan Anda sendiri)\n"
        in content
    )


def test_single_grade_turn_index_is_checked():
    with pytest.raises(TemplateError, match="turn_index must be in 0..0, got 1"):
        render_single_grade(
            default_template(SINGLE_GRADE, "en"),
            user_turns="q",
            answer_turns="a",
            turn_index=1,
            category="math",
        )


def test_factual_template_renders_gold_and_answer():
    [system, user] = render_factual(
        default_template(FACTUAL, "id"),
        question="Siapa presiden pertama RI?",
        gold="Soekarno",
        answer="Sukarno",
    )
    assert system["role"] == "system"
    assert "[Jawaban baku]\nSoekarno\n\n[Jawaban]\nSukarno\n" in user["content"]


def test_render_helpers_refuse_the_wrong_kind():
    with pytest.raises(TemplateError, match="render_factual needs a factual template, got 'pairwise'"):
        render_factual(default_template(PAIRWISE, "en"), question="q", gold="g", answer="a")


def test_every_category_has_aspects_in_both_languages():
    for category in CATEGORIES:
        english, indonesian = aspects_for(category, "en"), aspects_for(category, "id")
        assert len(english) == len(indonesian) >= 3
    assert aspects_for("Open Question", "en") == DEFAULT_CATEGORY_ASPECTS["open_question"]["en"]
    assert aspects_for("cooking", "en") == DEFAULT_CATEGORY_ASPECTS["general"]["en"]


def test_aspect_overrides_win_where_given():
    overrides = {"math": {"id": ["Jawaban akhir benar"]}}
    assert aspects_for("math", "id", overrides) == ("Jawaban akhir benar",)
    assert aspects_for("math", "en", overrides) == DEFAULT_CATEGORY_ASPECTS["math"]["en"]


def test_templates_round_trip_as_data_and_are_checked():
    template = default_template(PAIRWISE, "id")
    stored = json.loads(json.dumps(template.to_dict()))
    assert JudgeTemplate.from_dict(stored) == template

    edited = {**stored, "version": 2, "user": "Soal: {{question}}\nA: {{response_1}}\nB: {{response_2}}"}
    assert JudgeTemplate.from_dict(edited).version == 2

    broken = {**stored, "user": "Soal: {{question}}\nA: {{response_1}}"}
    with pytest.raises(TemplateError, match="lacks placeholder\\(s\\): \\{\\{response_2\\}\\}"):
        JudgeTemplate.from_dict(broken)
    with pytest.raises(TemplateError, match="unknown judge kind 'likert'"):
        JudgeTemplate.from_dict({**stored, "kind": "likert"})
    with pytest.raises(TemplateError, match="unknown template field\\(s\\): colour"):
        JudgeTemplate.from_dict({**stored, "colour": "red"})
    with pytest.raises(TemplateError, match="version must be an integer >= 1"):
        JudgeTemplate.from_dict({**stored, "version": 0})


def test_a_template_states_its_sampling_and_it_is_checked_like_a_runs():
    template = JudgeTemplate(
        kind=FACTUAL,
        language="en",
        version=1,
        system="",
        user="{{question}}|{{gold}}|{{answer}}",
        sampling={"temperature": 0, "max_tokens": 256, "top_k": None},
    )
    assert template.sampling == {"temperature": 0, "max_tokens": 256, "top_k": None}
    assert JudgeTemplate.from_dict(json.loads(json.dumps(template.to_dict()))) == template
    base = template.to_dict()
    for sampling, message in (
        ({"temperature": -0.5}, "template sampling: temperature must be a finite number >= 0, got -0.5"),
        ({"top_p": 1.5}, "template sampling: top_p must be a number in \\(0, 1\\], got 1.5"),
        ({"max_tokens": 0}, "template sampling: max_tokens must be an integer >= 1, got 0"),
        (
            {"seed": 1, "n": 2},
            "template sampling: unknown sampling parameter\\(s\\) n, seed; a template may set",
        ),
        ([0.2], "template sampling: sampling must be an object"),
    ):
        with pytest.raises(TemplateError, match=message):
            JudgeTemplate.from_dict({**base, "sampling": sampling})


def test_each_shipped_preset_states_its_judge_temperature():
    # IndoPref's settings for its pairwise judges; MT-bench's judge at 0; SeaBench does not state its
    # judge's temperature, so the single-answer grade takes Timbang's default 0, as does the factual judge.
    assert default_template(PAIRWISE, "id").sampling == {"temperature": 0.6, "top_p": 0.95, "top_k": 20}
    assert default_template(PAIRWISE, "en", name="with_tie").sampling == {"temperature": 0.0}
    assert default_template(SINGLE_GRADE, "en").sampling == {"temperature": 0.0}
    assert default_template(FACTUAL, "id").sampling == {"temperature": 0.0}


def test_empty_system_text_gives_a_single_user_message():
    template = JudgeTemplate(
        kind=FACTUAL, language="en", version=1, system="", user="{{question}}|{{gold}}|{{answer}}"
    )
    assert render(template, question="q", gold="g", answer="a") == [{"role": "user", "content": "q|g|a"}]


def test_json_schemas():
    assert json_schema_for(PAIRWISE) == {
        "title": "pairwise_verdict",
        "type": "object",
        "properties": {
            "explanation": {"type": "string"},
            "score": {"type": "string", "enum": ["Response 1", "Response 2"]},
        },
        "required": ["explanation", "score"],
        "additionalProperties": False,
    }
    assert json_schema_for(SINGLE_GRADE)["properties"]["score"] == {
        "type": "integer",
        "enum": list(range(1, 11)),
    }
    assert json_schema_for(FACTUAL)["properties"]["score"] == {"type": "integer", "enum": [1, 2, 3, 4, 5]}
    with pytest.raises(TemplateError):
        json_schema_for("likert")


def test_seabench_categories_have_their_own_priority_aspects():
    from evaluation.domain.judge_templates import ASPECT_CATEGORIES, GENERAL_CATEGORY, SEABENCH_CATEGORIES

    assert len(SEABENCH_CATEGORIES) == 10 and set(SEABENCH_CATEGORIES) <= set(ASPECT_CATEGORIES)
    general = DEFAULT_CATEGORY_ASPECTS[GENERAL_CATEGORY]["en"]
    for category in SEABENCH_CATEGORIES:
        english, indonesian = aspects_for(category, "en"), aspects_for(category, "id")
        assert english != general and len(english) == len(indonesian) >= 3, category
    # The paper's mapping: roleplay -> lifelikeness of the role; extraction -> faithfulness for translation;
    # safety -> caution, sensitivity in the country of the language; math -> accuracy and explanation.
    assert aspects_for("Roleplay", "en")[0].startswith("Lifelikeness")
    assert "Faithfulness to the meaning of the source text" in aspects_for("extraction", "en")[2]
    assert "country where the language is spoken" in aspects_for("safety", "en")[1]
    assert aspects_for("math", "id") == (
        "Ketepatan jawaban akhir",
        "Ketepatan setiap langkah pengerjaan",
        "Mutu penjelasan: langkah-langkah yang jelas dan mudah diikuti",
    )
    assert aspects_for("STEM", "id") == (
        "Relevansi dengan pertanyaan",
        "Kesesuaian jawaban",
        "Kekayaan informasi",
    )
