"""Run presets: one per study Timbang reproduces, setting every protocol rule to the paper's choice.

A preset is data: the run kind, the study and paper, and the run-form values of its rules. Where a paper
does not state a rule, the preset keeps Timbang's default and says so (``by_paper`` False), so a run page
never claims a choice the paper did not make. The texts of prompts stay Timbang's own; a researcher adds
the paper's (the prompt templates page) and picks them in the run form.

Rules are named by their run-form fields; :func:`rule_values` reads the same rules off a run's stored
settings, so a run page can list every rule in force and mark those that differ from its preset.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

JUDGE = "judge"
BENCHMARK = "benchmark"


@dataclass(frozen=True)
class PresetRule:
    """One rule of a preset: the form field, its value, and whether the paper states it."""

    field: str
    value: Any
    by_paper: bool = True


@dataclass(frozen=True)
class Preset:
    id: str
    kind: str
    study: str
    paper: str
    rules: tuple[PresetRule, ...]

    @property
    def values(self) -> dict[str, Any]:
        return {rule.field: rule.value for rule in self.rules}


def _preset(id: str, kind: str, study: str, paper: str, *rules: PresetRule) -> Preset:
    return Preset(id=id, kind=kind, study=study, paper=paper, rules=rules)


R = PresetRule
PRESETS: Mapping[str, Preset] = MappingProxyType(
    {
        p.id: p
        for p in (
            _preset(
                "indopref-judge",
                JUDGE,
                "IndoPref",
                "IndoPref (pairwise preference data): LLM judges give a pairwise JSON verdict",
                R("judge_kind", "pairwise"),
                R("pairwise_family", "no_tie"),
                R("order_mode", "both", by_paper=False),
                R("on_one_error", "error", by_paper=False),
                R("structured_output", True),
                R("temperature", 0.6),
                R("top_p", 0.95),
                R("top_k", 20),
            ),
            _preset(
                "seabench-judge",
                JUDGE,
                "SeaBench",
                "SeaBench: open two-turn questions graded 1-10 against a reference answer and aspects",
                R("judge_kind", "single_grade"),
                R("structured_output", True, by_paper=False),
                R("temperature", 0.0, by_paper=False),
            ),
            _preset(
                "seaexam-mcq",
                BENCHMARK,
                "SeaExam",
                "SeaExam: multiple-choice exams, one of four prompt templates drawn per question",
                R("task", "mcq"),
                R("mode", "chat", by_paper=False),
                R("prompt_language", "en", by_paper=False),
                R("templates", ["en-1", "en-2", "en-3", "en-4"]),
                R("aggregation", "draw"),
            ),
            _preset(
                "idcsqa-mcq",
                BENCHMARK,
                "id-csqa",
                "id-csqa (culturally relevant commonsense QA): accuracy averaged over three zero-shot prompts",
                R("task", "mcq"),
                R("mode", "chat"),
                R("k_shot", 0),
                R("prompt_language", "id", by_paper=False),
                R("templates", ["id-1", "id-2", "id-3"]),
                R("aggregation", "mean"),
            ),
            _preset(
                "loraxbench-mt",
                BENCHMARK,
                "LoraxBench (MT)",
                "LoraxBench: translation into Indonesian, corpus chrF++ per language, the best prompt",
                R("task", "translation"),
                R("direction", "to_source"),
                R("prompt_language", "id", by_paper=False),
                R("templates", ["mt-id-1", "mt-id-2"]),
                R("aggregation", "max"),
            ),
            _preset(
                "loraxbench-qa",
                BENCHMARK,
                "LoraxBench (QA)",
                "LoraxBench: open QA by normalised substring match, the best prompt",
                R("task", "open_qa"),
                R("scoring", "substring"),
                R("match_rule", "substring"),
                R("prompt_language", "id", by_paper=False),
                R("templates", ["qa-plain", "qa-id-1"]),
                R("aggregation", "max"),
            ),
            _preset(
                "loraxbench-nli",
                BENCHMARK,
                "LoraxBench (NLI)",
                "LoraxBench: inference labels as options read from generated answers, the best prompt",
                R("task", "mcq"),
                R("mode", "chat", by_paper=False),
                R("prompt_language", "id", by_paper=False),
                R("templates", ["id-1", "id-2", "id-3"]),
                R("aggregation", "max"),
            ),
            _preset(
                "loraxbench-cloze",
                BENCHMARK,
                "LoraxBench (cloze)",
                "LoraxBench: options scored by total log-probability, the best prompt",
                R("task", "mcq"),
                R("mode", "cloze"),
                R("cloze_rule", "total"),
                R("prompt_language", "id", by_paper=False),
                R("templates", ["id-1", "id-2", "id-3"]),
                R("aggregation", "max"),
            ),
        )
    }
)


def presets_of(kind: str) -> list[Preset]:
    return [preset for preset in PRESETS.values() if preset.kind == kind]


# The rules a run page lists, per run kind, in order (run-form field names).
BENCHMARK_RULES = (
    "task",
    "mode",
    "scoring",
    "match_rule",
    "cloze_rule",
    "direction",
    "k_shot",
    "prompt_language",
    "templates",
    "aggregation",
    "temperature",
    "max_tokens",
)
JUDGE_RULES = (
    "judge_kind",
    "pairwise_family",
    "order_mode",
    "on_one_error",
    "structured_output",
    "language",
    "temperature",
    "top_p",
    "top_k",
    "max_tokens",
    "ensemble_rule",
)


def benchmark_rule_values(
    *, task: str, mode: str, config: Mapping[str, Any], template_ids: list[str], aggregation: str
) -> dict[str, Any]:
    """The rules in force of a benchmark run, by form field; a rule that does not apply is left out."""
    sampling = config.get("sampling") or {}
    values: dict[str, Any] = {
        "task": task,
        "scoring": config.get("scoring"),
        "k_shot": config.get("k_shot", 0) if task == "mcq" else None,
        "prompt_language": config.get("prompt_language"),
        "templates": template_ids,
        "aggregation": aggregation,
        "temperature": sampling.get("temperature"),
        "max_tokens": sampling.get("max_tokens"),
    }
    if task == "mcq":
        values["mode"] = mode
    if "match_rule" in config:
        values["match_rule"] = config["match_rule"]
    if "cloze_rule" in config:
        values["cloze_rule"] = config["cloze_rule"]
    if "direction" in config:
        values["direction"] = config["direction"]
    return {field: values[field] for field in BENCHMARK_RULES if values.get(field) is not None}


def judge_rule_values(
    *, judge_kind: str, pairwise_family: str, order_mode: str, language: str, config: Mapping[str, Any]
) -> dict[str, Any]:
    """The rules in force of a judge run, by form field (the ensemble rule is the dashboard's, for grades)."""
    sampling = config.get("sampling") or {}
    values: dict[str, Any] = {
        "judge_kind": judge_kind,
        "language": language,
        "structured_output": bool(config.get("structured_output", True)),
        "temperature": sampling.get("temperature"),
        "top_p": sampling.get("top_p"),
        "top_k": sampling.get("top_k"),
        "max_tokens": sampling.get("max_tokens"),
    }
    if judge_kind == "pairwise":
        values.update(
            pairwise_family=pairwise_family, order_mode=order_mode, on_one_error=config.get("on_one_error")
        )
    else:
        values["ensemble_rule"] = "all_judges"
    return {field: values[field] for field in JUDGE_RULES if values.get(field) is not None}


def rules_against_preset(values: Mapping[str, Any], preset: Preset | None) -> list[dict[str, Any]]:
    """Each rule in force with the preset's value for it: ``as_preset`` True, False (changed) or None (the
    preset does not set it), and ``by_paper`` for the preset's own rules."""
    by_field = {rule.field: rule for rule in preset.rules} if preset else {}
    rows = []
    for field, value in values.items():
        rule = by_field.get(field)
        rows.append(
            {
                "field": field,
                "value": value,
                "preset_value": rule.value if rule else None,
                "as_preset": None if rule is None else _same(value, rule.value),
                "by_paper": rule.by_paper if rule else None,
            }
        )
    return rows


def _same(value: Any, expected: Any) -> bool:
    if isinstance(expected, float) or isinstance(value, float):
        try:
            return abs(float(value) - float(expected)) < 1e-9
        except (TypeError, ValueError):
            return False
    return value == expected
