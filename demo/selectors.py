"""Reads about the demo's state, for the home page."""

from django.core.cache import cache

from evaluation.models import ModelEndpoint

# Here rather than in demo.services, which the home page would otherwise import (with the exports and
# evaluation services under it) at every start-up.
DEMO_ENDPOINT_SLUG = "demo-llm"
# Set when the judge run could not start because the model server did not answer (read by the home page, in
# another process: the cache is Redis, or files under the var folder in the embedded mode).
MODEL_UNREACHABLE_KEY = "demo:model-unreachable"


def demo_model_state() -> dict | None:
    """The demo model's state while its judge run has not started: ``{"state": "starting"}``, or
    ``{"state": "unreachable", "waited_s": N}`` once ``demo --judge-only --wait-model N`` gave up on it;
    None when there is no demo model or its judge run exists.

    ``make demo`` loads the demo and starts the web server before the model server answers; the judge run
    is started when it does. Until then the home page says the model is still starting, or that it never
    answered.
    """
    waiting = ModelEndpoint.objects.filter(
        slug=DEMO_ENDPOINT_SLUG, is_active=True, judge_runs__isnull=True
    ).exists()
    if not waiting:
        return None
    unreachable = cache.get(MODEL_UNREACHABLE_KEY)
    if unreachable is not None:
        return {"state": "unreachable", "waited_s": unreachable.get("waited_s", 0)}
    return {"state": "starting"}
