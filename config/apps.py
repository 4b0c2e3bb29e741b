from django.apps import AppConfig


class TimbangConfig(AppConfig):
    """Site-wide pieces: roles, the demo command, the home page."""

    name = "config"
    label = "timbang"
    verbose_name = "Timbang"
