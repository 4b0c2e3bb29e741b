from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from config import api_tokens, views

api_v1 = [
    path("auth/token/rotate", api_tokens.TokenRotateApi.as_view(), name="api-token-rotate"),
    path("", include("datasets_app.api_urls")),
    path("", include("annotation.api_urls")),
    path("", include("evaluation.api_urls")),
    path("", include("evaluation.analytics_api_urls")),
]

urlpatterns = [
    path("", views.home, name="home"),
    path("accounts/login/", views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("i18n/", include("django.conf.urls.i18n")),
    path("datasets/", include("datasets_app.urls")),
    path("annotate/", include("annotation.urls")),
    path("evaluation/", include("evaluation.urls")),
    path("analytics/", include("evaluation.analytics_urls")),
    path("admin/", admin.site.urls),
    path("api/v1/", include(api_v1)),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    path("api/redoc/", SpectacularRedocView.as_view(url_name="schema"), name="api-redoc"),
]
