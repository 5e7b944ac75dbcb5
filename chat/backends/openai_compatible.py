"""OpenAI-compatible servers (vLLM first of all) through the official SDK.

Structured output uses ``response_format={"type": "json_schema", ...}``,
which vLLM enforces with its structured-output backend (xgrammar). The schema
is bounded first (:func:`chat.backends.base.fit_schema`) so that a reply can
always close its JSON within ``max_tokens``.

Every SDK or transport failure is translated here, and no ``openai``
exception leaves this module:

- connection errors, timeouts, 408/409, 429 and 5xx → ``LLMUnavailable``
  (503 ``llm_unavailable``; the server's ``Retry-After`` is passed on);
- any other 4xx (400 bad request, 401/403 key, 404 unknown model) →
  ``LLMError`` (502 ``llm_error``): a configuration problem that a retry
  cannot fix, logged with the server's own message.

The SDK retries (``OPENAI_MAX_RETRIES``) only connection errors, 408/409 and
5xx; a 4xx, 429 included, goes straight back to the caller (a 429 carries
the server's ``Retry-After`` to the API client instead of blocking the
request thread while the SDK sleeps).
"""

from __future__ import annotations

import email.utils
import logging
import math
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import openai
from django.conf import settings

from chat.backends.base import BaseGenerativeBackend, Generation, GenerationRequest, StreamItem, fit_schema
from chat.contract import ChatMessage, JsonSchema
from chat.output import SCHEMA_NAME
from daneshyar.exceptions import ApplicationError, LLMError, LLMUnavailable

logger = logging.getLogger(__name__)

# Metadata calls (/v1/models, /tokenize) are cheap on the server: a short
# timeout and no retries, so a dead server costs little before the
# generation call reports it.
METADATA_TIMEOUT_SECONDS = 5.0
# Statuses that say "later" rather than "wrong": 408 and 409 as the SDK sees
# them, 429 rate limited, 5xx.
_TRANSIENT_4XX = (408, 409, 429)
_UNSET = object()


class _Client(openai.OpenAI):
    """The SDK client, retrying only what a retry can fix."""

    def _should_retry(self, response: Any) -> bool:
        # The SDK would also retry 429 (sleeping for the server's
        # Retry-After) and any status the server marks with x-should-retry.
        if response.status_code < 500 and response.status_code not in (408, 409):
            return False
        return super()._should_retry(response)


class OpenAIBackend(BaseGenerativeBackend):
    backend_name = "openai"

    def __init__(
        self,
        model_id: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        max_tokens: int | None = None,
        context_length: int | None = None,
    ) -> None:
        """``context_length`` is the model's window when the deployment
        knows it (the model registry); without it the server is asked."""
        super().__init__(model_id)
        self.max_tokens = max_tokens or settings.OPENAI_MAX_TOKENS
        self.base_url = (base_url or settings.OPENAI_BASE_URL or "").rstrip("/")
        # One client per backend: it pools HTTP connections and is thread-safe.
        self._client = _Client(
            base_url=self.base_url,
            api_key=api_key or settings.OPENAI_API_KEY,
            timeout=timeout or settings.OPENAI_TIMEOUT_SECONDS,
            max_retries=settings.OPENAI_MAX_RETRIES if max_retries is None else max_retries,
        )
        self._metadata = self._client.with_options(
            timeout=min(METADATA_TIMEOUT_SECONDS, timeout or settings.OPENAI_TIMEOUT_SECONDS), max_retries=0
        )
        # What the server told us, once: the window (int, or None when it does
        # not report one), and whether it has vLLM's /tokenize.
        self._context_length: object = _UNSET if context_length is None else context_length
        self._has_tokenize = True
        self._lock = threading.Lock()

    # --- what the model holds ----------------------------------------------------

    def context_length(self) -> int | None:
        """The window given to the constructor, else ``max_model_len`` from
        the server's ``/v1/models`` (vLLM reports it), read once and cached.

        None when the server does not report it (a plain OpenAI-compatible
        server, a model it does not list). Never raises: when the server
        cannot be asked now, None (not cached), and the generation call that
        follows reports the failure.
        """
        known = self._context_length
        if known is not _UNSET:
            return known if isinstance(known, int) else None
        try:
            answer: Any = self._metadata.get("/models", cast_to=object)
            listed = answer.get("data") or []
        except (openai.OpenAIError, ValueError, AttributeError) as exc:
            logger.warning("Could not read the model list from %s: %s", self.base_url, exc)
            return None
        length: int | None = None
        for model in listed:
            if isinstance(model, dict) and model.get("id") == self.model_id:
                value = model.get("max_model_len")
                length = value if isinstance(value, int) and not isinstance(value, bool) else None
        if length is None:
            logger.info("%s does not report the window of %s", self.base_url, self.model_id)
        with self._lock:
            self._context_length = length
        return length

    def count_tokens(self, messages: list[ChatMessage]) -> int:
        """Exact, in one call to vLLM's ``POST /tokenize`` (the chat template
        applied, with the generation prompt): the same count as the
        generation's ``prompt_tokens``.

        A server without ``/tokenize`` gets the base class's estimate from
        then on, with no further calls. Never raises: when the server cannot
        be asked now, the estimate (the generation call reports the failure).
        """
        if self._has_tokenize:
            try:
                answer: Any = self._metadata.post(
                    self._server_root() + "/tokenize",
                    cast_to=object,
                    body={
                        "model": self.model_id,
                        "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
                        "add_generation_prompt": True,
                    },
                )
                count = answer["count"]
                if isinstance(count, int):
                    return count
                logger.warning("%s/tokenize answered without a count", self._server_root())
            except openai.APIStatusError as exc:
                if exc.status_code in (404, 405) and not _error_object(exc):
                    # No such route (FastAPI's {"detail": "Not Found"}), not
                    # vLLM's {"error": ...} for an unknown model.
                    logger.info("%s has no /tokenize; estimating prompt tokens", self._server_root())
                    self._has_tokenize = False
                else:
                    logger.warning("Token count failed (%s): %s", exc.status_code, _server_message(exc))
            except (openai.OpenAIError, ValueError, KeyError, TypeError) as exc:
                logger.warning("Token count failed: %s", exc)
        return super().count_tokens(messages)

    def _server_root(self) -> str:
        # vLLM serves /tokenize beside /v1, not under it.
        root = self.base_url
        return root[: -len("/v1")] if root.endswith("/v1") else root

    # --- generation --------------------------------------------------------------

    def arguments(self, request: GenerationRequest) -> dict[str, Any]:
        """The ``chat.completions.create`` arguments (without ``stream``)."""
        limit = request.max_tokens or self.max_tokens
        arguments: dict[str, Any] = {
            "model": self.model_id,
            "messages": [{"role": m["role"], "content": m["content"]} for m in request.messages],
            "response_format": {
                "type": "json_schema",
                "json_schema": {
                    "name": SCHEMA_NAME,
                    "schema": fit_schema(request.schema, limit),
                    "strict": True,
                },
            },
            "max_tokens": limit,
        }
        if request.temperature is not None:
            arguments["temperature"] = request.temperature
        return arguments

    def _generate(self, request: GenerationRequest) -> Generation:
        try:
            completion = self._client.chat.completions.create(**self.arguments(request))
        except openai.OpenAIError as exc:
            raise translate_error(exc) from exc
        text = ""
        if completion.choices:
            text = completion.choices[0].message.content or ""
        usage = completion.usage
        return Generation(
            text=text,
            prompt_tokens=usage.prompt_tokens if usage else None,
            completion_tokens=usage.completion_tokens if usage else None,
        )

    def rewrite(
        self, messages: list[ChatMessage], *, schema: JsonSchema, max_tokens: int, timeout: float
    ) -> Generation | None:
        try:
            completion = self._client.with_options(timeout=timeout, max_retries=0).chat.completions.create(
                **self.arguments(GenerationRequest(messages, schema, max_tokens, 0.0))
            )
        except openai.OpenAIError as exc:
            raise translate_error(exc) from exc
        text = completion.choices[0].message.content or "" if completion.choices else ""
        return Generation(text=text)

    def _stream(self, request: GenerationRequest) -> Iterator[StreamItem]:
        try:
            chunks = self._client.chat.completions.create(
                **self.arguments(request),
                stream=True,
                stream_options={"include_usage": True},
            )
        except openai.OpenAIError as exc:
            raise translate_error(exc) from exc
        parts: list[str] = []
        prompt_tokens: int | None = None
        completion_tokens: int | None = None
        try:
            iterator = iter(chunks)
            while True:
                try:
                    chunk = next(iterator)
                except StopIteration:
                    break
                except Exception as exc:
                    # The SDK and its HTTP transport raise several families
                    # mid-stream (API errors, read timeouts, broken SSE).
                    raise translate_error(exc) from exc
                if chunk.usage is not None:
                    prompt_tokens = chunk.usage.prompt_tokens
                    completion_tokens = chunk.usage.completion_tokens
                if chunk.choices:
                    delta = chunk.choices[0].delta.content
                    if delta:
                        parts.append(delta)
                        yield delta
        finally:
            chunks.close()
        yield Generation(
            text="".join(parts), prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
        )


def translate_error(exc: Exception) -> ApplicationError:
    """The API error for an SDK or transport failure (see the module docstring)."""
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        message = _server_message(exc)
        if status >= 500 or status in _TRANSIENT_4XX:
            logger.warning("Generation server unavailable (%s): %s", status, message)
            return LLMUnavailable(retry_after=_retry_after(exc.response))
        logger.error("Generation server rejected the request (%s): %s", status, message)
        hint = _HINTS.get(status, "the deployment needs attention.")
        return LLMError(f"The generation server rejected the request (HTTP {status}); {hint}")
    # Mid-stream, the SDK's HTTP transport raises its own ReadTimeout.
    if isinstance(exc, openai.APITimeoutError) or "Timeout" in type(exc).__name__:
        logger.warning("Generation server timed out: %s", exc)
        return LLMUnavailable("The generation backend timed out. Try again.")
    if isinstance(exc, openai.APIConnectionError):
        logger.warning("Generation server unreachable: %s", exc.__cause__ or exc)
        return LLMUnavailable("The generation backend could not be reached. Try again.")
    logger.warning("Generation failed: %s: %s", type(exc).__name__, exc)
    return LLMUnavailable()


_HINTS = {
    401: "check OPENAI_API_KEY.",
    403: "check OPENAI_API_KEY.",
    404: "check the model id against the models the server serves.",
}


def _error_object(exc: openai.APIStatusError) -> bool:
    """Whether the body is an OpenAI-style error (the SDK unwraps ``error``)."""
    body = exc.body
    return isinstance(body, dict) and ("message" in body or "type" in body)


def _server_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        for key in ("message", "detail"):
            if body.get(key):
                return str(body[key])
    try:
        return exc.response.text[:1000] or str(exc)
    except Exception:
        return str(exc)


def _retry_after(response: Any) -> int | None:
    """The server's ``Retry-After`` (seconds or an HTTP date) in whole
    seconds, kept within 1 s .. 1 h; None when it sent none."""
    value = response.headers.get("retry-after") if response is not None else None
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    if math.isnan(seconds):
        return None
    return max(1, min(math.ceil(seconds), 3600))
