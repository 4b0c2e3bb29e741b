"""Judge runs that sample k verdicts per item (the judge lab's calibration): on the real SmolLM2 model behind
a real llama.cpp server, through a proxy that records what was sent; and the options' checks."""

from __future__ import annotations

import pytest

from evaluation.models import Judgment, ModelEndpoint, PairVerdict
from evaluation.services import backend_cache_clear, judge_run_start
from evaluation.services.judging import sampled_items
from evaluation.services.runs import RunConfigError
from tests.evaluation.services.builders import make_pair_dataset
from tests.evaluation.services.recording_proxy import RecordingProxy

pytestmark = pytest.mark.django_db


def test_sampled_items_keep_the_first_key():
    items = [{"key": "p:1-2:all", "a": 1, "b": 2}]
    assert sampled_items(items, 1) == items
    keys = [(i["key"], i.get("sample", 0)) for i in sampled_items(items, 3)]
    assert keys == [("p:1-2:all", 0), ("p:1-2:all#1", 1), ("p:1-2:all#2", 2)]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"samples": 3, "sampling": {"temperature": 0}}, "needs a temperature above 0"),
        ({"samples": 0, "sampling": {"temperature": 0.7}}, "samples must be a whole number from 1 to 10"),
        ({"samples": 11, "sampling": {"temperature": 0.7}}, "samples must be a whole number from 1 to 10"),
        ({"samples": "3", "sampling": {"temperature": 0.7}}, "samples must be a whole number"),
    ],
)
def test_bad_sample_counts_are_refused_and_nothing_is_written(options, message):
    dataset = make_pair_dataset(n_prompts=1)
    endpoint = ModelEndpoint.objects.create(slug="j", base_url="http://127.0.0.1:9/v1", model_id="m")
    with pytest.raises(RunConfigError, match=message):
        judge_run_start(judge_kind="pairwise", endpoint=endpoint, dataset=dataset, options=options)
    assert not endpoint.judge_runs.exists()


@pytest.mark.timeout(600)
def test_three_sampled_verdicts_per_pair_on_a_real_model(
    llamacpp_server, llamacpp_model_id, django_capture_on_commit_callbacks
):
    dataset = make_pair_dataset(n_prompts=1)
    with RecordingProxy(llamacpp_server) as proxy:
        endpoint = ModelEndpoint.objects.create(
            slug="smollm2-samples",
            backend=ModelEndpoint.Backend.OPENAI,
            base_url=proxy.base_url,
            model_id=llamacpp_model_id,
            max_concurrency=2,
            backend_options={"structured_output": "json_object", "timeout_s": 280, "max_attempts": 2},
        )
        try:
            with django_capture_on_commit_callbacks(execute=True):
                run = judge_run_start(
                    judge_kind="pairwise",
                    endpoint=endpoint,
                    dataset=dataset,
                    options={"seed": 5, "max_tokens": 64, "samples": 3, "sampling": {"temperature": 0.8}},
                )
        finally:
            backend_cache_clear()
    run.refresh_from_db()
    assert run.status == "succeeded" and run.n_total == 3 and run.config["samples"] == 3
    verdicts = PairVerdict.objects.filter(judge_run=run).order_by("sample")
    assert [v.sample for v in verdicts] == [0, 1, 2]
    assert len({(v.response_a_id, v.response_b_id) for v in verdicts}) == 1  # one pair, three samples
    judgments = Judgment.objects.filter(judge_run=run)
    assert sorted((j.sample, j.order) for j in judgments) == [(s, o) for s in range(3) for o in ("ab", "ba")]
    # Each sample is its own draw: seeds 5, 6 and 7, each sent for both orders, at the run's temperature.
    assert sorted(body.get("seed") for body in proxy.bodies) == [5, 5, 6, 6, 7, 7]
    assert {body.get("temperature") for body in proxy.bodies} == {0.8}
