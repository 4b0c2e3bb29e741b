from csp.decorators import csp_replace, csp_update
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from accounts import views as account_views
from config import views

api_v1 = [
    path("", include("annotation.api_urls")),
    path("", include("accounts.api_urls")),
    path("", include("datasets_app.api_urls")),
    path("", include("evaluation.api_urls")),
    path("", include("arena.api_urls")),
    path("", include("analytics.api_urls")),
    path("exports/", include("exports.api_urls")),
    path("webhooks/", include("webhooks.api_urls")),
]

# The API viewers under the site's Content-Security-Policy (config/settings/base.py). Swagger UI's start-up
# script is served as a file (the split view) and its icons are data: SVG images.
swagger_ui = csp_update({"img-src": ["data:"]})(
    SpectacularSwaggerSplitView.as_view(url_name="schema", template_name="api/swagger_ui.html")
)
# Redoc, on this page only (it shows the public schema and no data), needs: <style> elements written at run
# time by its styled-components and by the perfect-scrollbar it bundles, the latter as the bundle loads,
# before any nonce could reach it (an exception for styles only; scripts stay 'self' only); its search
# index in a web worker made from a blob: URL; and data: SVG icons. Nothing from another host: the logo its
# sidebar would ask of Redocly's CDN is our own icon in the bundle served by views.redoc_bundle.
redoc = csp_replace(
    {
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "worker-src": ["blob:"],
    }
)(views.RedocView.as_view(url_name="schema", template_name="api/redoc.html"))

urlpatterns = [
    path("api/v1/", include(api_v1)),
    path("", views.home, name="home"),
    path("favicon.ico", views.favicon, name="favicon"),
    path("accounts/login/", account_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("i18n/", include("django.conf.urls.i18n")),
    path("", include("accounts.urls")),
    path("datasets/exports/", include("exports.urls")),
    path("datasets/", include("datasets_app.urls")),
    path("annotate/", include("annotation.urls")),
    path("evaluation/", include("evaluation.urls")),
    path("arena/", include("arena.urls")),
    path("analytics/", include("analytics.urls")),
    path("webhooks/", include("webhooks.urls")),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", swagger_ui, name="api-docs"),
    path("api/redoc/", redoc, name="api-redoc"),
    path("api/redoc/redoc.standalone.js", views.redoc_bundle, name="api-redoc-bundle"),
]
