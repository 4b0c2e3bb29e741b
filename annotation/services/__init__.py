"""Writes of annotation (``<entity>_<verb>``, keyword-only, atomic), one module per job kind over one loop.

From the bottom up: ``loop`` (claim, lease, submit of the stored rows, skip, reopen, errors), ``projects``
(rubrics, status, groups, members, gold), the kinds ``rating``, ``translation`` and ``questions`` beside
``reviews``, then ``kinds`` (dispatch by kind and the entry points that need one), ``studies``
(imports of finished studies) and ``study_imports`` (a study's import as a background job). Each module names its public services in ``__all__``; they are gathered
here so callers may write ``from annotation import services``.
"""

from annotation.services.kinds import *
from annotation.services.loop import *
from annotation.services.projects import *
from annotation.services.qualification import *
from annotation.services.questions import *
from annotation.services.rating import *
from annotation.services.review_queue import *
from annotation.services.reviews import *
from annotation.services.rubrics import *
from annotation.services.spans import *
from annotation.services.studies import *
from annotation.services.study_imports import *
from annotation.services.translation import *
