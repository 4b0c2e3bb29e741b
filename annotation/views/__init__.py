"""Pages of annotation under ``/annotate/``, one module per family of pages over shared helpers (``common``):
``annotator`` (the task loop and My work), ``projects``, ``rubrics``, ``quality``, ``gold``, ``flags``,
``questions`` and ``review``. ``annotation/urls.py`` routes to the modules."""
