"""Production: PostgreSQL, Redis, real secrets. Refuses to start without them."""

import sys

from .base import *  # noqa: F403
from .base import env

_REQUIRED = ("SECRET_KEY", "DATABASE_URL", "REDIS_URL", "ALLOWED_HOSTS")
_missing = [name for name in _REQUIRED if not env(name, default="")]
if _missing:
    sys.stderr.write(
        f"timbang: production settings need the environment variable(s) {', '.join(_missing)}; "
        "see .env.example\n"
    )
    raise SystemExit(2)

DEBUG = False
SECRET_KEY = env("SECRET_KEY")
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS")
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
