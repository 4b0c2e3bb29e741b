"""Reads about the demo's state, for the home page."""

from demo.services import DEMO_ENDPOINT_SLUG
from evaluation.models import ModelEndpoint


def demo_model_starting() -> bool:
    """Whether the demo's model endpoint exists but no judge run has been started on it yet.

    ``make demo`` loads the demo and starts the web server before the model server answers; the judge run
    is started when it does. Until then the home page says the model is still starting.
    """
    return ModelEndpoint.objects.filter(
        slug=DEMO_ENDPOINT_SLUG, is_active=True, judge_runs__isnull=True
    ).exists()
