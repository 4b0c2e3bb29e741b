"""Test settings: eager Celery unless a test starts a real worker; fast hashing; a scratch var/ folder."""

import atexit
import os
import shutil
import tempfile

# The suite writes its uploads, exports, broker folders and caches under a folder of its own, never into
# the var/ of a demo or a deployment in the same checkout. Worker processes that tests start inherit it.
if not os.environ.get("TIMBANG_VAR_DIR"):
    _scratch = tempfile.mkdtemp(prefix="timbang-tests-")
    os.environ["TIMBANG_VAR_DIR"] = _scratch
    atexit.register(shutil.rmtree, _scratch, ignore_errors=True)

from .base import *  # noqa: E402, F403
from .base import DATABASES, env  # noqa: E402

DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=True)
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # A file, not memory, so a worker process started by a test can share it.
    DATABASES["default"]["TEST"] = {"NAME": str(env("TIMBANG_TEST_SQLITE", default="")) or None}
