"""The allow-lists of endpoint key variables and hosts, as plain values."""

from __future__ import annotations

import pytest

from evaluation.domain.endpoint_policy import (
    EndpointPolicy,
    api_key_env_refusal,
    base_url_refusal,
    endpoint_refusals,
)

DEFAULT = EndpointPolicy.build(key_prefix="TIMBANG_MODEL_KEY_")


@pytest.mark.parametrize("name", ["", "TIMBANG_MODEL_KEY_OPENAI", "TIMBANG_MODEL_KEY_X"])
def test_names_with_the_prefix_are_allowed(name):
    assert api_key_env_refusal(name, DEFAULT) is None


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("SECRET_KEY", "reserved_key_env"),
        ("DATABASE_URL", "reserved_key_env"),
        ("HF_TOKEN", "reserved_key_env"),
        ("OPENAI_API_KEY", "key_env_not_allowed"),
        ("AWS_SECRET_ACCESS_KEY", "key_env_not_allowed"),
        ("TIMBANG_MODEL_KEY_", "key_env_not_allowed"),  # the prefix alone names nothing
        ("XTIMBANG_MODEL_KEY_A", "key_env_not_allowed"),
    ],
)
def test_other_names_are_refused_with_the_rule(name, code):
    refusal = api_key_env_refusal(name, DEFAULT)
    assert refusal is not None
    assert (refusal.field, refusal.code, refusal.value) == ("api_key_env", code, name)
    assert refusal.message.startswith("api_key_env: ")
    assert name in refusal.message and "names that start with TIMBANG_MODEL_KEY_" in refusal.message


def test_explicit_names_are_allowed_beside_the_prefix_but_never_a_reserved_one():
    policy = EndpointPolicy.build(
        key_prefix="TIMBANG_MODEL_KEY_", key_names=[" OPENAI_API_KEY ", "SECRET_KEY", ""]
    )
    assert api_key_env_refusal("OPENAI_API_KEY", policy) is None
    assert api_key_env_refusal("TIMBANG_MODEL_KEY_A", policy) is None
    assert api_key_env_refusal("SECRET_KEY", policy).code == "reserved_key_env"
    assert "one of OPENAI_API_KEY, SECRET_KEY" in api_key_env_refusal("GROQ_KEY", policy).message


def test_an_empty_prefix_allows_only_the_listed_names():
    only_listed = EndpointPolicy.build(key_prefix="", key_names=["VLLM_API_KEY"])
    assert api_key_env_refusal("VLLM_API_KEY", only_listed) is None
    assert api_key_env_refusal("TIMBANG_MODEL_KEY_A", only_listed).code == "key_env_not_allowed"
    nothing = EndpointPolicy.build(key_prefix="")
    assert "no variable at all" in api_key_env_refusal("ANY_KEY", nothing).message


@pytest.mark.parametrize(
    "url", ["http://anything.example:9/v1", "https://10.0.0.1/v1", "not a url", "", "http://u:p@x/v1"]
)
def test_without_a_host_list_any_url_passes(url):
    assert base_url_refusal(url, DEFAULT) is None


HOSTS = EndpointPolicy.build(
    key_prefix="TIMBANG_MODEL_KEY_",
    hosts=["gpu-1.internal", "127.0.0.1:8081", ".models.example.org", "API.X.COM"],
)


@pytest.mark.parametrize(
    "url",
    [
        "http://gpu-1.internal:8000/v1",
        "https://gpu-1.internal/v1",
        "http://127.0.0.1:8081/v1",
        "https://models.example.org/v1",
        "https://qwen.models.example.org/v1",
        "https://api.x.com/v1",
        "https://API.x.com/v1",
    ],
)
def test_listed_hosts_pass(url):
    assert base_url_refusal(url, HOSTS) is None


@pytest.mark.parametrize(
    ("url", "code"),
    [
        ("http://127.0.0.1:8082/v1", "host_not_allowed"),  # listed with another port
        ("http://127.0.0.1/v1", "host_not_allowed"),
        ("http://attacker.example/v1", "host_not_allowed"),
        ("https://evilmodels.example.org/v1", "host_not_allowed"),  # not under .models.example.org
        ("https://gpu-1.internal.attacker.example/v1", "host_not_allowed"),
        ("http://gpu-1.internal@attacker.example/v1", "bad_url"),  # user info hides the real host
        ("http://attacker.example\\@gpu-1.internal/v1", "bad_url"),
        ("ftp://gpu-1.internal/v1", "bad_url"),
        ("gpu-1.internal:8000/v1", "bad_url"),
        ("http://gpu-1.internal:99999/v1", "bad_url"),
        ("http:///v1", "bad_url"),
    ],
)
def test_other_hosts_and_ambiguous_urls_are_refused(url, code):
    refusal = base_url_refusal(url, HOSTS)
    assert refusal is not None and (refusal.field, refusal.code) == ("base_url", code)
    assert refusal.message.startswith("base_url: ") and "gpu-1.internal" in refusal.message


def test_endpoint_refusals_lists_every_reason():
    refusals = endpoint_refusals(
        api_key_env="SECRET_KEY", base_url="http://attacker.example/v1", policy=HOSTS
    )
    assert [r.field for r in refusals] == ["api_key_env", "base_url"]
    assert (
        endpoint_refusals(
            api_key_env="TIMBANG_MODEL_KEY_A", base_url="http://gpu-1.internal/v1", policy=HOSTS
        )
        == []
    )
