"""Settings shared by every mode. The only module that reads the environment.

With no environment variables at all Timbang runs embedded: a SQLite file and a
Celery broker on the local filesystem under ``var/``. Setting ``DATABASE_URL``
and ``REDIS_URL`` switches to PostgreSQL and Redis.
"""

from pathlib import Path

import csp.constants
import environ
from django.utils.translation import gettext_lazy as _

BASE_DIR = Path(__file__).resolve().parents[2]

env = environ.Env()

VAR_DIR = Path(env("TIMBANG_VAR_DIR", default=str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

SECRET_KEY = env("SECRET_KEY", default="insecure-embedded-key-change-me-for-any-shared-deployment")
DEBUG = env.bool("DEBUG", default=False)
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "template_partials",
    # The apps, bottom layer first: each imports only those above it in this list.
    "accounts",
    "datasets_app",
    "annotation",
    "evaluation",
    "arena",
    "analytics",
    "exports",
    "webhooks",
    "demo",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "config.middleware.ContentSecurityPolicyMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "config.middleware.MalformedInputMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "config.middleware.LoginThrottleMiddleware",
    "config.middleware.DatabaseUnavailableMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "accounts.context_processors.roles",
            ],
        },
    }
]

# Database: PostgreSQL from DATABASE_URL, else a SQLite file in var/.
DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'timbang.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # IMMEDIATE transactions serialise writers (the task claim relies on it);
    # WAL lets the web server and the worker read while one writes.
    DATABASES["default"]["OPTIONS"] = {
        "transaction_mode": "IMMEDIATE",
        "timeout": 30,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
else:
    DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=60)
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
    if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
        # Django's backend; its health check asks the socket before it sends SELECT 1.
        DATABASES["default"]["ENGINE"] = "config.postgresql"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env("REDIS_URL", default="")

if REDIS_URL:
    CACHES = {"default": {"BACKEND": "config.cache.RedisCache", "LOCATION": REDIS_URL}}
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(VAR_DIR / "cache"),
        }
    }

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"

# E-mail (set-password links for new people and password resets). Embedded: printed on the console by
# Django's console backend. Production: EMAIL_URL, e.g. smtp+tls://user:password@smtp.example.org:587.
EMAIL_URL = env.str("EMAIL_URL", default="") or "consolemail://"
vars().update(env.email_url_config(EMAIL_URL))
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="Timbang <timbang@localhost>")
PASSWORD_RESET_TIMEOUT = env.int("PASSWORD_RESET_TIMEOUT", default=3 * 24 * 3600)
LOGOUT_REDIRECT_URL = "login"
# Login throttling (accounts/backends.py): failed logins are counted per account at a client and per
# client; a count at its limit locks that key for LOGIN_LOCKOUT_SECONDS, and failures older than that
# are forgotten. The client is REMOTE_ADDR unless TRUSTED_PROXY_HEADER names the header in which the
# TRUSTED_PROXY_COUNT reverse proxies in front of the app append the address they were reached from
# (X-Forwarded-For); any header that is not named is ignored, so a client cannot choose its address.
AUTHENTICATION_BACKENDS = ["accounts.backends.ThrottledModelBackend"]
LOGIN_FAILURE_LIMIT = env.int("LOGIN_FAILURE_LIMIT", default=10)
LOGIN_ADDRESS_FAILURE_LIMIT = env.int("LOGIN_ADDRESS_FAILURE_LIMIT", default=50)
LOGIN_LOCKOUT_SECONDS = env.int("LOGIN_LOCKOUT_SECONDS", default=15 * 60)
TRUSTED_PROXY_HEADER = env("TRUSTED_PROXY_HEADER", default="").strip()
TRUSTED_PROXY_COUNT = env.int("TRUSTED_PROXY_COUNT", default=1)
if TRUSTED_PROXY_HEADER and not (
    TRUSTED_PROXY_HEADER.isascii() and TRUSTED_PROXY_HEADER.replace("-", "").isalnum()
):
    raise environ.ImproperlyConfigured(
        f"TRUSTED_PROXY_HEADER={TRUSTED_PROXY_HEADER!r} is not an HTTP header name (e.g. X-Forwarded-For)"
    )
_login_numbers = {
    "LOGIN_FAILURE_LIMIT": LOGIN_FAILURE_LIMIT,
    "LOGIN_ADDRESS_FAILURE_LIMIT": LOGIN_ADDRESS_FAILURE_LIMIT,
    "LOGIN_LOCKOUT_SECONDS": LOGIN_LOCKOUT_SECONDS,
    "TRUSTED_PROXY_COUNT": TRUSTED_PROXY_COUNT,
}
if _bad := [f"{name}={value}" for name, value in _login_numbers.items() if value < 1]:
    raise environ.ImproperlyConfigured(f"{', '.join(_bad)}: must be 1 or more")

LANGUAGE_CODE = "en"
LANGUAGES = [("en", _("English")), ("id", _("Bahasa Indonesia"))]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "Asia/Jakarta"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
MEDIA_ROOT = VAR_DIR / "media"
UPLOADS_DIR = VAR_DIR / "uploads"
EXPORTS_DIR = VAR_DIR / "exports"
# Uploads above this size go to a temporary file instead of memory.
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
IMPORT_MAX_UPLOAD_BYTES = env.int("IMPORT_MAX_UPLOAD_BYTES", default=512 * 1024 * 1024)
# An API upload larger than this is imported (read, checked, its error report built) by a worker, as with
# background=true, instead of in the web request: a file's cost to check grows with its size (a CSV of a
# million columns is a few megabytes).
IMPORT_INLINE_MAX_BYTES = env.int("IMPORT_INLINE_MAX_BYTES", default=1024 * 1024)
# The import page previews and maps files of at most this many columns (a wider file: API or command).
IMPORT_PREVIEW_MAX_COLUMNS = env.int("IMPORT_PREVIEW_MAX_COLUMNS", default=1000)
# Caps on an uploaded zip (a zipped Hugging Face dataset folder): checked from the zip's directory before
# unpacking, and again on the bytes actually written while unpacking. The ratio is unpacked : zipped size.
IMPORT_ZIP_MAX_UNPACKED_BYTES = env.int("IMPORT_ZIP_MAX_UNPACKED_BYTES", default=2 * 1024 * 1024 * 1024)
IMPORT_ZIP_MAX_FILES = env.int("IMPORT_ZIP_MAX_FILES", default=10_000)
IMPORT_ZIP_MAX_RATIO = env.int("IMPORT_ZIP_MAX_RATIO", default=100)

# Model endpoints may only name an API key variable that starts with MODEL_KEY_ENV_PREFIX or is listed in
# MODEL_KEY_ENV_NAMES (never Timbang's own secrets), and, when MODEL_ENDPOINT_HOSTS lists any, only send
# requests to those hosts ("host", "host:port" or ".domain"). API tokens expire API_TOKEN_LIFETIME_DAYS
# after they were made or rotated (0: never).
MODEL_KEY_ENV_PREFIX = env("MODEL_KEY_ENV_PREFIX", default="TIMBANG_MODEL_KEY_")
MODEL_KEY_ENV_NAMES = env.list("MODEL_KEY_ENV_NAMES", default=[])
MODEL_ENDPOINT_HOSTS = env.list("MODEL_ENDPOINT_HOSTS", default=[])
API_TOKEN_LIFETIME_DAYS = env.int("API_TOKEN_LIFETIME_DAYS", default=90)
# Model ids (hub ids or folders, exactly as an endpoint's model_id names them) whose own code a worker may run
# (the transformers and vLLM backends' trust_remote_code). Empty: no endpoint may set it.
TRUST_REMOTE_CODE_MODELS = env.list("TRUST_REMOTE_CODE_MODELS", default=[])
if API_TOKEN_LIFETIME_DAYS < 0:
    raise SystemExit(
        f"timbang: API_TOKEN_LIFETIME_DAYS must be 0 (never) or a number of days, got {API_TOKEN_LIFETIME_DAYS}"
    )
if not all(c.isascii() and (c.isupper() or c.isdigit() or c == "_") for c in MODEL_KEY_ENV_PREFIX):
    raise SystemExit(
        f"timbang: MODEL_KEY_ENV_PREFIX must be capital letters, digits and _, got {MODEL_KEY_ENV_PREFIX!r}"
    )

# Webhooks (webhooks/): a manager's URL must be on WEBHOOK_ALLOWED_HOSTS when it lists any ("host",
# "host:port" or ".domain"), and every address its host resolves to must be public unless it lies in one of
# WEBHOOK_ALLOWED_NETWORKS (CIDR, e.g. "10.0.0.0/8" for receivers inside the site's network). A failed
# delivery is tried WEBHOOK_MAX_ATTEMPTS times in all, WEBHOOK_RETRY_BASE_S doubling per attempt up to
# WEBHOOK_RETRY_CAP_S (or longer when the receiver sends Retry-After). A rotated-out secret keeps signing
# beside the new one for WEBHOOK_SECRET_OVERLAP_HOURS.
WEBHOOK_ALLOWED_HOSTS = env.list("WEBHOOK_ALLOWED_HOSTS", default=[])
WEBHOOK_ALLOWED_NETWORKS = env.list("WEBHOOK_ALLOWED_NETWORKS", default=[])
WEBHOOK_HTTPS_ONLY = env.bool("WEBHOOK_HTTPS_ONLY", default=False)
WEBHOOK_MAX_ATTEMPTS = env.int("WEBHOOK_MAX_ATTEMPTS", default=6)
WEBHOOK_RETRY_BASE_S = env.float("WEBHOOK_RETRY_BASE_S", default=30.0)
WEBHOOK_RETRY_CAP_S = env.float("WEBHOOK_RETRY_CAP_S", default=3600.0)
WEBHOOK_TIMEOUT_S = env.float("WEBHOOK_TIMEOUT_S", default=10.0)
WEBHOOK_SECRET_OVERLAP_HOURS = env.float("WEBHOOK_SECRET_OVERLAP_HOURS", default=24.0)
# A CA bundle (PEM file) to check https receivers' certificates with instead of the system's (an internal CA).
WEBHOOK_CA_BUNDLE = env("WEBHOOK_CA_BUNDLE", default="")
if WEBHOOK_MAX_ATTEMPTS < 1:
    raise environ.ImproperlyConfigured(f"WEBHOOK_MAX_ATTEMPTS must be at least 1, got {WEBHOOK_MAX_ATTEMPTS}")

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "accounts.authentication.SessionAuthentication",
        "accounts.authentication.ExpiringTokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Timbang API",
    "DESCRIPTION": "Human and LLM-judge evaluation data for Indonesian and the regional languages of Indonesia.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Several models have a "kind" or "status" field with different choices: name each enum after its model.
    "ENUM_NAME_OVERRIDES": {
        "DatasetKindEnum": "datasets_app.models.Dataset.Kind",
        "ExportKindEnum": "exports.models.Export.Kind",
        "ProjectKindEnum": "annotation.models.Project.Kind",
        "TranslationUnitStatusEnum": "datasets_app.models.TranslationUnit.Status",
        "QuestionStatusEnum": "datasets_app.models.Question.Status",
        # Imports, exports, flag recomputations and model runs share one set of job states.
        "JobStatusEnum": "datasets_app.models.DatasetImport.Status",
        "ProjectStatusEnum": "annotation.models.Project.Status",
        "AssignmentStatusEnum": "annotation.models.Assignment.Status",
        "RunChunkStatusEnum": "evaluation.models.RunChunk.Status",
    },
}

# Celery: Redis when REDIS_URL is set, else kombu's filesystem transport, which
# needs no server: web process and worker share the folders under var/broker.
BROKER_DIR = VAR_DIR / "broker"
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_RESULT_BACKEND = REDIS_URL
    # Longer than the longest task, so a task acknowledged late is not redelivered while it runs.
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", default=4 * 3600),
        # A worker looks for tasks a dead worker left unacknowledged every 10 s (kombu's interval) and, with
        # kombu's default throttle of 10, searches only on every tenth look: a task whose visibility timeout
        # ran out just after a search waited 100 s more. A search is one ZRANGE on a small sorted set.
        "unacked_restore_throttle": 1,
    }
else:
    for sub in ("queue", "processed", "control"):
        (BROKER_DIR / sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_URL = "filesystem://"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "queue"),
        "data_folder_out": str(BROKER_DIR / "queue"),
        "processed_folder": str(BROKER_DIR / "processed"),
        "control_folder": str(BROKER_DIR / "control"),
        "store_processed": False,
    }
    CELERY_RESULT_BACKEND = f"file://{VAR_DIR / 'celery-results'}"
    (VAR_DIR / "celery-results").mkdir(parents=True, exist_ok=True)
CELERY_TASK_DEFAULT_QUEUE = "default"
# Tasks of the web side run on the default queue; model work is sent to gpu.<endpoint> queues per call.
CELERY_TASK_ROUTES = {
    "datasets_app.*": {"queue": "default"},
    "annotation.*": {"queue": "default"},
    "exports.*": {"queue": "default"},
    "webhooks.*": {"queue": "default"},
    "evaluation.agreement_report": {"queue": "default"},
    "evaluation.chunks_requeue_lost": {"queue": "default"},
}
# The model queues (gpu.<endpoint>) a model worker consumes: `manage.py model_queues` prints these when set
# (a host serving some models only), else the queues of every endpoint in the database.
MODEL_QUEUES = env.list("MODEL_QUEUES", default=[])
# Every worker reports the queues it consumes every WORKER_REPORT_INTERVAL_S seconds; a run whose queue no
# worker reported within WORKER_REPORT_STALE_S says so on its page. A model worker started with
# MODEL_QUEUES_FOLLOW (scripts/serve does) also starts consuming the queue of an endpoint added later.
WORKER_REPORT_INTERVAL_S = env.float("WORKER_REPORT_INTERVAL_S", default=5.0)
WORKER_REPORT_STALE_S = env.float("WORKER_REPORT_STALE_S", default=20.0)
MODEL_QUEUES_FOLLOW = env.bool("MODEL_QUEUES_FOLLOW", default=False)
# How many model worker processes serve the model queues (scripts/serve starts that many). Each process keeps
# its share of an OpenAI-compatible endpoint's max_concurrency in flight, so together they keep the whole
# bound: more than one lets a very fast model server (short replies, many at once) use more than one core of
# the worker host. Local backends (llama.cpp, transformers, vLLM) load their model in every process.
MODEL_WORKER_PROCESSES = env.int("MODEL_WORKER_PROCESSES", default=1)
if MODEL_WORKER_PROCESSES < 1:
    raise environ.ImproperlyConfigured(
        f"MODEL_WORKER_PROCESSES must be at least 1, got {MODEL_WORKER_PROCESSES}"
    )
# Arena: the model worker publishes each battle side's tokens on Redis pub/sub and the web tier relays them
# as server-sent events. Without Redis (the embedded mode) the relay reads the text the worker stores every
# ARENA_PROGRESS_EVERY_S seconds. A stream stays open at most ARENA_STREAM_TIMEOUT_S seconds.
ARENA_STREAM_REDIS_URL = env("ARENA_STREAM_REDIS_URL", default=REDIS_URL)
ARENA_STREAM_TIMEOUT_S = env.float("ARENA_STREAM_TIMEOUT_S", default=180.0)
ARENA_PROGRESS_EVERY_S = env.float("ARENA_PROGRESS_EVERY_S", default=0.5)
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = env.int("CELERY_TASK_SOFT_TIME_LIMIT", default=30 * 60)
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", default=35 * 60)
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=False)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_EXPIRES = 24 * 3600
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TIMEZONE = TIME_ZONE
CELERY_BEAT_SCHEDULE: dict = {
    # Claims reclaim their own project's expired leases; this catches projects nobody is claiming in.
    "annotation-leases-reclaim": {"task": "annotation.leases_reclaim", "schedule": 60.0},
    # A broker that lost its queued tasks (Redis restarted without persistence) would stall runs forever.
    "evaluation-chunks-requeue-lost": {"task": "evaluation.chunks_requeue_lost", "schedule": 60.0},
}
# A run chunk whose task was sent this many seconds ago, has not started and is no longer in its queue
# is sent again.
RUN_CHUNK_LOST_AFTER_S = env.int("RUN_CHUNK_LOST_AFTER_S", default=600)

# Background jobs (imports, exports, flag recomputations, agreement reports): a job whose worker died is
# taken again by the redelivered task, or sent again by these sweeps once its heartbeat is older than
# JOB_HEARTBEAT_TIMEOUT_S (or its task's time limit has passed), whatever the task's time limit; after
# JOB_MAX_ATTEMPTS attempts in all it fails with a message saying so. A running job beats its heartbeat
# every JOB_HEARTBEAT_INTERVAL_S seconds.
JOB_MAX_ATTEMPTS = env.int("JOB_MAX_ATTEMPTS", default=3)
JOB_HEARTBEAT_INTERVAL_S = env.float("JOB_HEARTBEAT_INTERVAL_S", default=15.0)
JOB_HEARTBEAT_TIMEOUT_S = env.float("JOB_HEARTBEAT_TIMEOUT_S", default=90.0)
if JOB_HEARTBEAT_TIMEOUT_S < 2 * JOB_HEARTBEAT_INTERVAL_S:
    raise environ.ImproperlyConfigured(
        f"JOB_HEARTBEAT_TIMEOUT_S ({JOB_HEARTBEAT_TIMEOUT_S:g}) must be at least twice "
        f"JOB_HEARTBEAT_INTERVAL_S ({JOB_HEARTBEAT_INTERVAL_S:g}), or live jobs would pass for stopped ones"
    )
CELERY_BEAT_SCHEDULE |= {
    "datasets-jobs-requeue-stale": {"task": "datasets_app.jobs_requeue_stale", "schedule": 60.0},
    "exports-jobs-requeue-stale": {"task": "exports.jobs_requeue_stale", "schedule": 60.0},
    "annotation-flag-recomputes-requeue-stale": {
        "task": "annotation.flag_recomputes_requeue_stale",
        "schedule": 60.0,
    },
    "annotation-study-imports-requeue-stale": {
        "task": "annotation.study_imports_requeue_stale",
        "schedule": 60.0,
    },
    # Pending webhook deliveries whose task the broker lost (WEBHOOK_STALE_AFTER_S overdue) are sent again.
    "webhooks-deliveries-requeue-stale": {"task": "webhooks.deliveries_requeue_stale", "schedule": 300.0},
}
WEBHOOK_STALE_AFTER_S = env.int("WEBHOOK_STALE_AFTER_S", default=900)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        # httpx logs every request it sends at INFO: on a model worker that is a line per model call, and its
        # formatting and handler lock cost more CPU than our own handling of the reply. Failures are logged
        # by the backends themselves (evaluation/inference).
        "httpx": {"level": "WARNING"},
        "httpcore": {"level": "WARNING"},
    },
}

SESSION_COOKIE_HTTPONLY = True
# Database sessions in accounts.Session, read with their user and roles in one prepared statement
# (accounts/sessions.py).
SESSION_ENGINE = "accounts.sessions"
CSRF_COOKIE_HTTPONLY = False  # htmx reads the token from the page, not the cookie
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True

# Content-Security-Policy (django-csp), enforced on every response in every mode. Scripts and styles come
# only from our own static files: pages carry no inline scripts, event handler attributes or style
# attributes. The one inline <style> left, on the 503 page (which loads no static file), carries the
# request's nonce; the nonce enters the header only on responses that used it. The API viewers under
# /api/ add what Swagger UI and Redoc need to their own responses (config/urls.py).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", csp.constants.NONCE],
        "img-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "frame-ancestors": ["'none'"],
        "form-action": ["'self'"],
    }
}

# Hub imports read datasets with datasets.load_dataset. When this names a folder, a dataset id owner/name is
# read from <folder>/owner/name instead (an offline mirror of the Hub datasets a closed network may use).
IMPORT_HUB_LOCAL_ROOT = env.str("IMPORT_HUB_LOCAL_ROOT", default="")
