"""The caller's own API token: ``POST /api/v1/auth/token/rotate`` makes (or replaces) it,
``POST /api/v1/auth/token/revoke`` deletes it.

The old key stops working at once; the new key is shown only in the answer. How long it lasts is
``API_TOKEN_LIFETIME_DAYS`` (see ``accounts.authentication``).
"""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.authentication import token_expires_at
from accounts.services import api_token_revoke, api_token_rotate


class TokenRotateOutputSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="The new key; shown only in this answer.")
    created = serializers.DateTimeField()
    expires_at = serializers.DateTimeField(
        allow_null=True, help_text="When the new key stops working; null when tokens do not expire."
    )


class TokenRotateApi(APIView):
    """Rotate the caller's own API token."""

    @extend_schema(
        operation_id="auth_token_rotate",
        summary="Replace the caller's API token with a new one (the old one stops working at once)",
        request=None,
        responses={201: TokenRotateOutputSerializer},
    )
    def post(self, request: Request) -> Response:
        token = api_token_rotate(user=request.user)
        body = {
            "token": token.key,
            "created": token.created,
            "expires_at": token_expires_at(token.created, settings.API_TOKEN_LIFETIME_DAYS),
        }
        response = Response(TokenRotateOutputSerializer(body).data, status=status.HTTP_201_CREATED)
        response["Cache-Control"] = "no-store"
        return response


class TokenRevokeApi(APIView):
    """Delete the caller's own API token."""

    @extend_schema(
        operation_id="auth_token_revoke",
        summary="Delete the caller's API token (it stops working at once)",
        request=None,
        responses={204: None},
    )
    def post(self, request: Request) -> Response:
        api_token_revoke(user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)
