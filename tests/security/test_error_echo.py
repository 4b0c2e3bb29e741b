"""Error messages repeat a bounded part of the caller's input.

The probe: a run-start request whose ``sampling`` object has a hundred thousand unknown keys was answered with
an error that named every one of them (a 9 MB body gave a 4.4 MB answer). Errors name the first few keys, each
cut short, and count the rest.
"""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from accounts.domain.echo import clipped, echoed
from annotation.domain.submission import FieldError, _check_unknown
from datasets_app.domain.column_mapping import MappingInvalid, mapping_from_dict
from evaluation.domain.sampling import SamplingParams, SamplingParamsError
from evaluation.models import ModelEndpoint
from tests.evaluation.services.builders import make_prompt_dataset

N_KEYS = 100_000
LONG = "k" * 70  # a body of about 8 MB, under the request size limit, as the probe sent


def _flood(prefix: str = "") -> dict[str, int]:
    return {f"{prefix}{LONG}{i:06d}": 1 for i in range(N_KEYS)}


def test_echoed_names_ten_values_each_cut_short_and_counts_the_rest():
    assert echoed(["b", "a"]) == "a, b"
    text = echoed([f"x{i:03d}" for i in range(25)])
    assert text == "x000, x001, x002, x003, x004, x005, x006, x007, x008, x009, and 15 more"
    assert echoed(["z", "y", "x"], limit=2, ordered=False) == "z, y, and 1 more"
    assert clipped("a" * 100) == "a" * 39 + "…"
    assert len(echoed(_flood())) < 600


def test_unknown_sampling_keys_are_named_in_a_short_message():
    with pytest.raises(SamplingParamsError) as caught:
        SamplingParams.from_dict(_flood())
    message = str(caught.value)
    assert len(message) < 800
    assert f"and {N_KEYS - 10} more" in message and "known: max_tokens" in message


@pytest.mark.django_db
def test_the_run_start_and_endpoint_apis_answer_a_flood_of_unknown_keys_briefly(make_user):
    ModelEndpoint.objects.create(slug="echo", base_url="http://127.0.0.1:9/v1", model_id="m")
    dataset = make_prompt_dataset(n_prompts=1)
    api = APIClient()
    api.force_authenticate(make_user("researcher"))
    requests = [
        (
            "/api/v1/evaluation/generation-runs/start",
            {"dataset": dataset.pk, "endpoints": ["echo"], "options": {"sampling": _flood()}},
        ),
        (
            "/api/v1/evaluation/generation-runs/start",
            {"dataset": dataset.pk, "endpoints": ["echo"], "options": _flood()},
        ),
        (
            "/api/v1/evaluation/endpoints/create",
            {
                "slug": "flood",
                "base_url": "http://127.0.0.1:9/v1",
                "model_id": "m",
                "sampling_defaults": _flood(),
            },
        ),
        (
            "/api/v1/evaluation/endpoints/create",
            {
                "slug": "flood",
                "base_url": "http://127.0.0.1:9/v1",
                "model_id": "m",
                "backend_options": _flood(),
            },
        ),
    ]
    for url, body in requests:
        answer = api.post(url, json.dumps(body), content_type="application/json")
        assert answer.status_code == 400, url
        assert len(answer.content) < 2_000, (url, len(answer.content))
        assert f"and {N_KEYS - 10} more" in answer.content.decode()
    assert list(ModelEndpoint.objects.values_list("slug", flat=True)) == ["echo"]


def test_other_refusals_of_unknown_keys_are_bounded_too():
    errors: list[FieldError] = []
    _check_unknown(_flood(), {"best", "comment"}, errors)
    assert len(errors) == 11 and errors[-1].message == f"{N_KEYS - 10} more unknown fields."
    assert all(len(error.field) <= 40 for error in errors)

    with pytest.raises(MappingInvalid) as caught:
        mapping_from_dict({"columns": {}, **_flood()})
    assert len(str(caught.value)) < 800 and f"and {N_KEYS - 10} more" in str(caught.value)
