from django.urls import path

from accounts import api

urlpatterns = [
    path("auth/token/rotate", api.TokenRotateApi.as_view(), name="api-token-rotate"),
    path("auth/token/revoke", api.TokenRevokeApi.as_view(), name="api-token-revoke"),
]
