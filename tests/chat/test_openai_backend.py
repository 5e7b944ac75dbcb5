"""The OpenAI-compatible backend against a local fake server (http.server in
a thread), for what a real vLLM cannot be made to do on demand: answer 5xx
or 429 (with and without ``Retry-After``), time out, refuse connections, lack
``/tokenize`` or ``max_model_len``; and to see the exact request sent. The
backend against the real vLLM server is in test_vllm.py."""

from __future__ import annotations

import email.utils
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from chat.backends.base import BaseBackend, Generation, fit_schema
from chat.backends.openai_compatible import OpenAIBackend
from chat.output import SCHEMA_NAME, output_schema
from daneshyar.exceptions import LLMError, LLMUnavailable
from tests.chat.helpers import answer

REPLY = answer(("Claims are filed within 30 days.", None))


@dataclass
class FakeServer:
    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    status: int = 200
    delay: float = 0.0
    reply: str = REPLY
    # Extra headers on an error answer (Retry-After, x-should-retry).
    error_headers: dict[str, str] = field(default_factory=dict)
    # What GET /v1/models lists (a plain server: no max_model_len).
    models: list[dict[str, Any]] = field(default_factory=lambda: [{"id": "Qwen/Qwen2.5-7B-Instruct"}])


def _chunks(text: str, size: int = 9) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


@pytest.fixture
def server() -> Iterator[FakeServer]:
    state = FakeServer(url="")

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            state.requests.append({"path": self.path})
            if self.path == "/v1/models" and state.status != 200:
                self._json(state.status, {"error": {"message": "busy", "type": "server_error"}})
            elif self.path == "/v1/models":
                self._json(200, {"object": "list", "data": state.models})
            else:
                self._json(404, {"detail": "Not Found"})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.requests.append({"path": self.path, **body})
            state.headers.append({k.lower(): v for k, v in self.headers.items()})
            time.sleep(state.delay)
            if self.path != "/v1/chat/completions":
                self._json(404, {"detail": "Not Found"})  # FastAPI's answer for an unknown route
                return
            if state.status != 200:
                message = f"boom {state.status}"
                self._json(state.status, {"error": {"message": message, "type": "server_error"}})
                return
            if body.get("stream"):
                self._stream(body)
            else:
                self._json(
                    200,
                    {
                        "id": "cmpl-1",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body["model"],
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": state.reply},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {"prompt_tokens": 120, "completion_tokens": 17, "total_tokens": 137},
                    },
                )

        def _json(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            if status != 200:
                for name, value in state.error_headers.items():
                    self.send_header(name, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, body: dict[str, Any]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            base = {"id": "cmpl-1", "object": "chat.completion.chunk", "created": 0, "model": body["model"]}
            first = {"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}
            events = [{**base, "choices": [first]}]
            for piece in _chunks(state.reply):
                events.append(
                    {**base, "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
                )
            events.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
            events.append({**base, "choices": [], "usage": {"prompt_tokens": 120, "completion_tokens": 17}})
            for event in events:
                self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                self.wfile.flush()
            self.wfile.write(b"data: [DONE]\n\n")

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield state
    httpd.shutdown()
    httpd.server_close()


def backend(server: FakeServer, **kwargs: Any) -> OpenAIBackend:
    options: dict[str, Any] = {"api_key": "secret-token", "timeout": 5.0, "max_retries": 0, "max_tokens": 300}
    options.update(kwargs)
    return OpenAIBackend("Qwen/Qwen2.5-7B-Instruct", base_url=server.url, **options)


MESSAGES: list[Any] = [
    {"role": "system", "content": "Rules."},
    {"role": "user", "content": "Earlier question"},
    {"role": "assistant", "content": "Earlier answer"},
    {"role": "user", "content": "<reference_passages>…</reference_passages>\n\nQuestion: When?"},
]


def assert_vllm_request(request: dict[str, Any]) -> None:
    assert request["path"] == "/v1/chat/completions"
    assert request["model"] == "Qwen/Qwen2.5-7B-Instruct"
    assert request["messages"] == MESSAGES
    assert request["response_format"] == {
        "type": "json_schema",
        # Bounded so that the reply can close its JSON within max_tokens.
        "json_schema": {"name": SCHEMA_NAME, "schema": fit_schema(output_schema(), 300), "strict": True},
    }
    assert request["max_tokens"] == 300


def test_generate_sends_a_json_schema_request_vllm_accepts(server: FakeServer) -> None:
    generation = backend(server).generate(MESSAGES, schema=output_schema())
    assert generation == Generation(text=REPLY, prompt_tokens=120, completion_tokens=17)
    (request,) = server.requests
    assert_vllm_request(request)
    assert "stream" not in request or request["stream"] is False
    assert server.headers[0]["authorization"] == "Bearer secret-token"


def test_temperature_is_sent_only_when_set(server: FakeServer) -> None:
    backend(server).generate(MESSAGES, schema=output_schema(), temperature=0.7)
    backend(server).generate(MESSAGES, schema=output_schema())
    assert server.requests[0]["temperature"] == 0.7
    assert "temperature" not in server.requests[1]


def test_stream_sends_stream_options_for_usage(server: FakeServer) -> None:
    *deltas, final = list(backend(server).stream(MESSAGES, schema=output_schema()))
    assert "".join(deltas) == REPLY  # type: ignore[arg-type]
    assert final == Generation(text=REPLY, prompt_tokens=120, completion_tokens=17)
    (request,) = server.requests
    assert_vllm_request(request)
    assert request["stream"] is True
    assert request["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_5xx_is_llm_unavailable_with_retry_after(server: FakeServer, status: int) -> None:
    server.status = status
    with pytest.raises(LLMUnavailable) as raised:
        backend(server).generate(MESSAGES, schema=output_schema())
    assert raised.value.status_code == 503
    assert raised.value.headers["Retry-After"] == str(LLMUnavailable.retry_after_seconds)
    with pytest.raises(LLMUnavailable):
        list(backend(server).stream(MESSAGES, schema=output_schema()))


@pytest.mark.parametrize(
    ("status", "retry_after", "expected"),
    [(503, "7", "7"), (429, "17", "17"), (429, "0.2", "1"), (503, "86400", "3600"), (429, "soon", "5")],
)
def test_the_servers_retry_after_is_passed_on(
    server: FakeServer, status: int, retry_after: str, expected: str
) -> None:
    server.status = status
    server.error_headers = {"Retry-After": retry_after}
    with pytest.raises(LLMUnavailable) as raised:
        backend(server).generate(MESSAGES, schema=output_schema())
    assert raised.value.headers["Retry-After"] == expected


def test_retry_after_as_an_http_date(server: FakeServer) -> None:
    server.status = 503
    server.error_headers = {"Retry-After": email.utils.formatdate(time.time() + 120, usegmt=True)}
    with pytest.raises(LLMUnavailable) as raised:
        backend(server).generate(MESSAGES, schema=output_schema())
    assert 100 <= int(raised.value.headers["Retry-After"]) <= 121


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_4xx_is_llm_error_logged_with_the_servers_message_and_never_retried(
    server: FakeServer, status: int, caplog: pytest.LogCaptureFixture
) -> None:
    server.status = status
    # Even when the server asks for a retry: a rejected request stays rejected.
    server.error_headers = {"x-should-retry": "true"}
    with pytest.raises(LLMError) as raised:
        backend(server, max_retries=2).generate(MESSAGES, schema=output_schema())
    assert raised.value.status_code == 502 and raised.value.code == "llm_error"
    assert f"HTTP {status}" in raised.value.message
    assert "Retry-After" not in raised.value.headers
    assert len(server.requests) == 1
    assert f"boom {status}" in caplog.text  # the server's own message, for the operator
    with pytest.raises(LLMError):
        list(backend(server, max_retries=2).stream(MESSAGES, schema=output_schema()))
    assert len(server.requests) == 2


def test_429_goes_back_at_once_instead_of_sleeping_through_retries(server: FakeServer) -> None:
    server.status = 429
    server.error_headers = {"Retry-After": "30"}
    started = time.monotonic()
    with pytest.raises(LLMUnavailable):
        backend(server, max_retries=2).generate(MESSAGES, schema=output_schema())
    assert len(server.requests) == 1
    assert time.monotonic() - started < 5


def test_timeout_and_unreachable_server_become_llm_unavailable(server: FakeServer) -> None:
    server.delay = 1.5
    with pytest.raises(LLMUnavailable, match="timed out"):
        backend(server, timeout=0.5).generate(MESSAGES, schema=output_schema())
    unreachable = OpenAIBackend(
        "m", base_url="http://127.0.0.1:9/v1", api_key="k", timeout=1.0, max_retries=0
    )
    with pytest.raises(LLMUnavailable, match="could not be reached"):
        unreachable.generate(MESSAGES, schema=output_schema())
    with pytest.raises(LLMUnavailable, match="could not be reached"):
        list(unreachable.stream(MESSAGES, schema=output_schema()))


def test_retries_are_the_sdks(server: FakeServer) -> None:
    server.status = 503
    with pytest.raises(LLMUnavailable):
        backend(server, max_retries=1).generate(MESSAGES, schema=output_schema())
    assert len(server.requests) == 2


def test_a_server_without_tokenize_gets_the_estimate_and_is_asked_once(server: FakeServer) -> None:
    plain = backend(server)
    estimate = BaseBackend.count_tokens(plain, MESSAGES)
    assert plain.count_tokens(MESSAGES) == estimate
    assert plain.count_tokens(MESSAGES) == estimate
    assert [r["path"] for r in server.requests] == ["/tokenize"]  # beside /v1, as vLLM serves it
    assert server.requests[0]["messages"] == MESSAGES
    assert server.requests[0]["add_generation_prompt"] is True


def test_context_length_from_the_model_list_read_once(server: FakeServer) -> None:
    server.models = [
        {"id": "other", "max_model_len": 1},
        {"id": "Qwen/Qwen2.5-7B-Instruct", "max_model_len": 32768},
    ]
    reporting = backend(server)
    assert reporting.context_length() == 32768
    assert reporting.context_length() == 32768
    assert [r["path"] for r in server.requests] == ["/v1/models"]


def test_context_length_is_none_when_the_server_does_not_report_it(server: FakeServer) -> None:
    plain = backend(server)
    assert plain.context_length() is None
    assert plain.context_length() is None
    assert len(server.requests) == 1  # "not reported" is remembered too


def test_an_explicit_context_length_wins_without_asking(server: FakeServer) -> None:
    assert backend(server, context_length=4096).context_length() == 4096
    assert server.requests == []


def test_metadata_calls_never_raise_when_the_server_is_down() -> None:
    down = OpenAIBackend("m", base_url="http://127.0.0.1:9/v1", api_key="k", timeout=1.0, max_retries=0)
    assert down.context_length() is None
    assert down.count_tokens(MESSAGES) == BaseBackend.count_tokens(down, MESSAGES)


def test_metadata_calls_after_the_server_came_back(server: FakeServer) -> None:
    """A failure is not cached: the next call asks again."""
    server.models = [{"id": "Qwen/Qwen2.5-7B-Instruct", "max_model_len": 8192}]
    server.status = 503
    flaky = backend(server)
    assert flaky.context_length() is None
    server.status = 200
    assert flaky.context_length() == 8192
