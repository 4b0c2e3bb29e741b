from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"

    def ready(self) -> None:
        from django.db.models.signals import post_delete, post_save

        from annotation.models import Rubric
        from annotation.selectors.core import rubrics_changed

        # Task pages keep rubric texts per process; any write to a rubric row makes them read again.
        post_save.connect(rubrics_changed, sender=Rubric, dispatch_uid="annotation-rubrics-saved")
        post_delete.connect(rubrics_changed, sender=Rubric, dispatch_uid="annotation-rubrics-deleted")
