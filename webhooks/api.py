"""REST operations of webhooks (project managers), one view per operation, over the same services as the pages."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.generics import ListAPIView
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.permissions import HasRole
from accounts.roles import PROJECT_MANAGER
from webhooks import selectors, services
from webhooks.models import WebhookDelivery, WebhookEndpoint
from webhooks.serializers import (
    WebhookCreateInputSerializer,
    WebhookDeliverySerializer,
    WebhookErrorSerializer,
    WebhookSerializer,
    WebhookUpdateInputSerializer,
)


def _invalid(exc: services.WebhookInvalid) -> Response:
    return Response({"detail": str(exc), "errors": exc.errors}, status=status.HTTP_400_BAD_REQUEST)


class WebhookListApi(ListAPIView):
    permission_classes = [HasRole(PROJECT_MANAGER)]
    serializer_class = WebhookSerializer

    @extend_schema(parameters=[OpenApiParameter("project", int, description="Only this project's webhooks.")])
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        project = self.request.query_params.get("project")
        return selectors.webhook_list(project_id=int(project) if project and project.isdigit() else None)


class WebhookCreateApi(APIView):
    permission_classes = [HasRole(PROJECT_MANAGER)]

    @extend_schema(
        request=WebhookCreateInputSerializer,
        responses={201: WebhookSerializer, 400: WebhookErrorSerializer},
        summary="Register a URL for a project's events (or the site's, without a project)",
    )
    def post(self, request):
        serializer = WebhookCreateInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            hook = services.webhook_create(created_by=request.user, **serializer.validated_data)
        except services.WebhookInvalid as exc:
            return _invalid(exc)
        return Response(WebhookSerializer(hook).data, status=status.HTTP_201_CREATED)


class WebhookDetailApi(APIView):
    permission_classes = [HasRole(PROJECT_MANAGER)]

    @extend_schema(responses={200: WebhookSerializer})
    def get(self, request, hook_id: int):
        return Response(WebhookSerializer(get_object_or_404(WebhookEndpoint, pk=hook_id)).data)


class WebhookUpdateApi(APIView):
    permission_classes = [HasRole(PROJECT_MANAGER)]

    @extend_schema(
        request=WebhookUpdateInputSerializer, responses={200: WebhookSerializer, 400: WebhookErrorSerializer}
    )
    def patch(self, request, hook_id: int):
        hook = get_object_or_404(WebhookEndpoint, pk=hook_id)
        serializer = WebhookUpdateInputSerializer(data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        try:
            hook = services.webhook_update(hook=hook, **serializer.validated_data)
        except services.WebhookInvalid as exc:
            return _invalid(exc)
        return Response(WebhookSerializer(hook).data)


class WebhookDeleteApi(APIView):
    permission_classes = [HasRole(PROJECT_MANAGER)]

    @extend_schema(responses={204: None})
    def delete(self, request, hook_id: int):
        services.webhook_delete(hook=get_object_or_404(WebhookEndpoint, pk=hook_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class WebhookRotateApi(APIView):
    permission_classes = [HasRole(PROJECT_MANAGER)]

    @extend_schema(
        request=None,
        responses={200: WebhookSerializer},
        summary="A new signing secret; the old one keeps signing beside it for WEBHOOK_SECRET_OVERLAP_HOURS",
    )
    def post(self, request, hook_id: int):
        hook = services.webhook_secret_rotate(hook=get_object_or_404(WebhookEndpoint, pk=hook_id))
        return Response(WebhookSerializer(hook).data)


class WebhookDeliveryListApi(ListAPIView):
    """The endpoint's delivery log, newest first, each delivery with its attempts."""

    permission_classes = [HasRole(PROJECT_MANAGER)]
    serializer_class = WebhookDeliverySerializer

    def get_queryset(self):
        return selectors.delivery_log(hook=get_object_or_404(WebhookEndpoint, pk=self.kwargs["hook_id"]))


class WebhookRedeliverApi(APIView):
    permission_classes = [HasRole(PROJECT_MANAGER)]

    @extend_schema(
        request=None,
        responses={202: WebhookDeliverySerializer, 400: WebhookErrorSerializer},
        summary="Send a delivery's message again (same webhook-id), as a new delivery",
    )
    def post(self, request, delivery_id: int):
        delivery = get_object_or_404(WebhookDelivery.objects.select_related("endpoint"), pk=delivery_id)
        try:
            again = services.webhook_redeliver(delivery=delivery)
        except services.WebhookInvalid as exc:
            return _invalid(exc)
        again.refresh_from_db()
        return Response(WebhookDeliverySerializer(again).data, status=status.HTTP_202_ACCEPTED)
