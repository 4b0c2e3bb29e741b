"""Test settings: eager Celery unless a test starts a real worker; fast hashing."""

from .base import *  # noqa: F403
from .base import DATABASES, env

DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=True)
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
SILENCED_SYSTEM_CHECKS = ["django_ratelimit.E003", "django_ratelimit.W001"]
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # A file, not memory, so a worker process started by a test can share it.
    DATABASES["default"]["TEST"] = {"NAME": str(env("TIMBANG_TEST_SQLITE", default="")) or None}
