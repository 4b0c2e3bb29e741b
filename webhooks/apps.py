from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class WebhooksConfig(AppConfig):
    name = "webhooks"
    verbose_name = _("Webhooks")

    def ready(self) -> None:
        from accounts.events import event_emitted
        from webhooks.services import deliveries_record_on_event

        event_emitted.connect(deliveries_record_on_event, dispatch_uid="webhooks.deliveries_record")
