"""Reads of annotation. ``base``: reads every task page shares; ``core``: the blinded rating task, progress,
review queues; ``jobs``: the translation and question jobs (task views, round tables, manager reports,
conflict matrix); ``quality``: the annotator quality signals; ``review``: the filtered, paged review queue and My work. Each module's ``__all__`` is gathered here."""

from annotation.selectors.base import *  # noqa: F403
from annotation.selectors.core import *  # noqa: F403
from annotation.selectors.jobs import *  # noqa: F403
from annotation.selectors.quality import *  # noqa: F403
from annotation.selectors.review import *  # noqa: F403
from annotation.selectors.rubrics import *  # noqa: F403
from annotation.selectors.setup import *  # noqa: F403
from annotation.selectors.spans import *  # noqa: F403
