from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"

    def ready(self) -> None:
        from django.core.signals import request_finished, request_started
        from django.db.models.signals import post_delete, post_save

        from annotation.models import Rubric
        from annotation.selectors.core import (
            rubric_generation_request_finished,
            rubric_generation_request_started,
            rubrics_changed,
        )

        # Task pages keep rubric texts per process; any write to a rubric row makes them read again.
        post_save.connect(rubrics_changed, sender=Rubric, dispatch_uid="annotation-rubrics-saved")
        post_delete.connect(rubrics_changed, sender=Rubric, dispatch_uid="annotation-rubrics-deleted")
        # A request reads the rubric generation from the shared cache once, not once per use.
        request_started.connect(rubric_generation_request_started, dispatch_uid="annotation-rubrics-request")
        request_finished.connect(
            rubric_generation_request_finished, dispatch_uid="annotation-rubrics-request"
        )
