from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from accounts import views as account_views
from config import views

api_v1 = [
    path("", include("accounts.api_urls")),
    path("", include("datasets_app.api_urls")),
    path("", include("annotation.api_urls")),
    path("", include("evaluation.api_urls")),
    path("", include("analytics.api_urls")),
    path("exports/", include("exports.api_urls")),
]

urlpatterns = [
    path("", views.home, name="home"),
    path("accounts/login/", account_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("i18n/", include("django.conf.urls.i18n")),
    path("datasets/exports/", include("exports.urls")),
    path("datasets/", include("datasets_app.urls")),
    path("annotate/", include("annotation.urls")),
    path("evaluation/", include("evaluation.urls")),
    path("analytics/", include("analytics.urls")),
    path("admin/", admin.site.urls),
    path("api/v1/", include(api_v1)),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    path("api/redoc/", SpectacularRedocView.as_view(url_name="schema"), name="api-redoc"),
]
