from rest_framework import serializers

from accounts.events import EVENT_NAMES
from annotation.models import Project
from webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint


class WebhookSerializer(serializers.ModelSerializer):
    class Meta:
        model = WebhookEndpoint
        fields = [
            "id",
            "project",
            "url",
            "events",
            "description",
            "active",
            "secret",
            "previous_secret_until",
            "created_at",
        ]


class WebhookCreateInputSerializer(serializers.Serializer):
    project = serializers.PrimaryKeyRelatedField(
        queryset=Project.objects.all(), required=False, allow_null=True, help_text="Empty: site-wide."
    )
    url = serializers.CharField(max_length=500)
    events = serializers.ListField(child=serializers.ChoiceField(choices=EVENT_NAMES), min_length=1)
    description = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")


class WebhookUpdateInputSerializer(serializers.Serializer):
    url = serializers.CharField(max_length=500, required=False)
    events = serializers.ListField(
        child=serializers.ChoiceField(choices=EVENT_NAMES), min_length=1, required=False
    )
    description = serializers.CharField(max_length=200, required=False, allow_blank=True)
    active = serializers.BooleanField(required=False)


class WebhookAttemptSerializer(serializers.ModelSerializer):
    class Meta:
        model = WebhookAttempt
        fields = ["number", "at", "status_code", "error", "duration_ms"]


class WebhookDeliverySerializer(serializers.ModelSerializer):
    attempt_log = WebhookAttemptSerializer(many=True, read_only=True)

    class Meta:
        model = WebhookDelivery
        fields = [
            "id",
            "endpoint",
            "event",
            "message_id",
            "payload",
            "status",
            "attempts",
            "last_status_code",
            "last_error",
            "next_attempt_at",
            "created_at",
            "finished_at",
            "redelivery_of",
            "attempt_log",
        ]


class WebhookErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()
    errors = serializers.DictField(child=serializers.CharField(), required=False)
