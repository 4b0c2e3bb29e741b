"""Test settings: eager Celery unless a test starts a real worker; fast hashing; a scratch var/ folder."""

import atexit
import os
import shutil
import tempfile
from urllib.parse import urlsplit, urlunsplit

# The suite writes its uploads, exports, broker folders and caches under a folder of its own, never into
# the var/ of a demo or a deployment in the same checkout. Worker processes that tests start inherit it.
# When pytest-xdist runs the suite in several processes, each has its own folder and its own Redis
# database (the next ones after REDIS_URL's), so their brokers, caches and files never meet; the Celery
# workers a test starts inherit the values, and the marker keeps them from being moved again.
_xdist_worker = os.environ.get("PYTEST_XDIST_WORKER", "")
_fresh = os.environ.get("TIMBANG_TEST_PROCESS") != _xdist_worker
if not os.environ.get("TIMBANG_VAR_DIR") or (_xdist_worker and _fresh):
    _scratch = tempfile.mkdtemp(prefix="timbang-tests-")
    os.environ["TIMBANG_VAR_DIR"] = _scratch
    atexit.register(shutil.rmtree, _scratch, ignore_errors=True)
if _xdist_worker and _fresh and os.environ.get("REDIS_URL"):
    _redis = urlsplit(os.environ["REDIS_URL"])
    _db = int(_redis.path.strip("/") or 0) + 1 + int(_xdist_worker.removeprefix("gw"))
    os.environ["REDIS_URL"] = urlunsplit(_redis._replace(path=f"/{_db}"))
os.environ["TIMBANG_TEST_PROCESS"] = _xdist_worker

from .base import *  # noqa: E402, F403
from .base import DATABASES, REDIS_URL, env  # noqa: E402

DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=True)
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
if env.bool("TIMBANG_TEST_SHARED_CACHE", default=False) and REDIS_URL:
    # A worker process an integration test starts shares the test's cache (job heartbeats) through Redis.
    CACHES = {"default": {"BACKEND": "config.cache.RedisCache", "LOCATION": REDIS_URL}}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # A file, not memory, so a worker process started by a test can share it.
    DATABASES["default"]["TEST"] = {"NAME": str(env("TIMBANG_TEST_SQLITE", default="")) or None}
