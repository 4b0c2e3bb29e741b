"""Embedded default: what `make demo` and `manage.py` use with no settings module named."""

from .base import *  # noqa: F403
from .base import env

DEBUG = env.bool("DEBUG", default=True)
