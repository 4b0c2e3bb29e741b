"""Sampling defaults and their validation."""

from __future__ import annotations

import pytest

from evaluation.domain.sampling import (
    SamplingParams,
    SamplingParamsError,
    checked_template_sampling,
    resolve_sampling,
)


def test_defaults_are_the_studies_settings():
    params = SamplingParams()
    assert (params.temperature, params.top_p, params.top_k) == (0.6, 0.95, 20)
    assert (params.seed, params.n, params.stop) == (None, 1, None)
    assert params.max_tokens == 1024


def test_round_trip_through_a_dict():
    params = SamplingParams(temperature=0.0, top_k=None, max_tokens=32, seed=3, n=2, stop=["###", "\n\n"])
    data = params.to_dict()
    assert data == {
        "temperature": 0.0,
        "top_p": 0.95,
        "top_k": None,
        "max_tokens": 32,
        "seed": 3,
        "n": 2,
        "stop": ["###", "\n\n"],
    }
    assert SamplingParams.from_dict(data) == params
    assert SamplingParams.from_dict({}) == SamplingParams()


def test_a_single_stop_string_becomes_a_tuple():
    assert SamplingParams(stop="</s>").stop == ("</s>",)
    assert SamplingParams(stop=[]).stop is None


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"temperature": -0.1}, "temperature must be a finite number >= 0"),
        ({"temperature": float("nan")}, "temperature"),
        ({"top_p": 0}, r"top_p must be a number in \(0, 1\]"),
        ({"top_p": 1.01}, "top_p"),
        ({"top_k": 0}, "top_k must be None or an integer >= 1"),
        ({"top_k": 2.5}, "top_k"),
        ({"max_tokens": 0}, "max_tokens must be an integer >= 1"),
        ({"seed": -1}, "seed must be None or an integer >= 0"),
        ({"seed": True}, "seed"),
        ({"n": 0}, "n must be an integer >= 1"),
        ({"stop": [""]}, "stop must be None, a string or a list of non-empty strings"),
    ],
)
def test_bad_values_are_refused_with_the_field_named(changes, message):
    with pytest.raises(SamplingParamsError, match=message):
        SamplingParams(**changes)


def test_unknown_keys_in_a_stored_dict_are_refused():
    with pytest.raises(SamplingParamsError, match="unknown sampling parameter\\(s\\): topk"):
        SamplingParams.from_dict({"topk": 5})


def test_replace_validates_again():
    assert SamplingParams().replace(seed=11).seed == 11
    with pytest.raises(SamplingParamsError):
        SamplingParams().replace(top_p=2)


def test_resolved_sampling_takes_each_value_from_the_first_layer_that_sets_it():
    params, sources = resolve_sampling(
        [
            ("run", {"temperature": 0.2, "seed": 9}),
            ("template", {"temperature": 0.0, "max_tokens": 256}),
            ("endpoint", {"top_k": 40, "max_tokens": 4096, "stop": ["###"]}),
        ]
    )
    assert params == SamplingParams(temperature=0.2, top_k=40, max_tokens=256, seed=9, stop=("###",))
    assert sources == {
        "temperature": "run",
        "top_p": "default",
        "top_k": "endpoint",
        "max_tokens": "template",
        "seed": "run",
        "stop": "endpoint",
    }


def test_an_explicit_none_is_a_value_of_its_layer():
    # An endpoint that must not send top_k says so with None; a template's value does not override the run's.
    params, sources = resolve_sampling(
        [("run", {}), ("template", {"top_k": 20}), ("endpoint", {"top_k": None})]
    )
    assert (params.top_k, sources["top_k"]) == (20, "template")
    params, sources = resolve_sampling([("run", {}), ("template", {}), ("endpoint", {"top_k": None})])
    assert (params.top_k, sources["top_k"]) == (None, "endpoint")


def test_template_sampling_is_some_of_four_parameters_in_a_runs_ranges():
    assert checked_template_sampling({"temperature": 0, "top_p": 1, "top_k": 5, "max_tokens": 9}) == {
        "temperature": 0,
        "top_p": 1,
        "top_k": 5,
        "max_tokens": 9,
    }
    with pytest.raises(SamplingParamsError, match="unknown sampling parameter\\(s\\) seed"):
        checked_template_sampling({"seed": 1})
    with pytest.raises(SamplingParamsError, match="top_k must be None or an integer >= 1, got 0"):
        checked_template_sampling({"top_k": 0})
