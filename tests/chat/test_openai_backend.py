"""The OpenAI-compatible backend against a local fake of vLLM's
``/v1/chat/completions`` (http.server in a thread): the request shape vLLM
accepts, non-streaming and SSE streaming replies, and failures -> 503."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from chat.backends import use_backend
from chat.backends.base import Generation
from chat.backends.openai_compatible import OpenAIBackend
from chat.models import Message
from chat.output import SCHEMA_NAME, output_schema
from daneshyar.exceptions import LLMUnavailable
from tests.chat.helpers import answer, sse_events, stream_of
from tests.conftest import Tenant

REPLY = answer(("Claims are filed within 30 days.", None))


@dataclass
class FakeServer:
    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    status: int = 200
    delay: float = 0.0
    reply: str = REPLY


def _chunks(text: str, size: int = 9) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


@pytest.fixture
def server() -> Iterator[FakeServer]:
    state = FakeServer(url="")

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.requests.append({"path": self.path, **body})
            state.headers.append({k.lower(): v for k, v in self.headers.items()})
            time.sleep(state.delay)
            if state.status != 200:
                self._json(state.status, {"error": {"message": "boom", "type": "server_error"}})
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
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
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
        "json_schema": {"name": SCHEMA_NAME, "schema": output_schema(), "strict": True},
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


def test_stream_parses_sse_deltas(server: FakeServer) -> None:
    items = list(backend(server).stream(MESSAGES, schema=output_schema()))
    *deltas, final = items
    assert deltas == _chunks(REPLY)
    assert final == Generation(text=REPLY, prompt_tokens=120, completion_tokens=17)
    (request,) = server.requests
    assert_vllm_request(request)
    assert request["stream"] is True
    assert request["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize("status", [500, 503, 401, 400])
def test_server_errors_become_llm_unavailable(server: FakeServer, status: int) -> None:
    server.status = status
    with pytest.raises(LLMUnavailable):
        backend(server).generate(MESSAGES, schema=output_schema())
    with pytest.raises(LLMUnavailable):
        list(backend(server).stream(MESSAGES, schema=output_schema()))


def test_timeout_and_unreachable_server_become_llm_unavailable(server: FakeServer) -> None:
    server.delay = 1.5
    with pytest.raises(LLMUnavailable, match="timed out"):
        backend(server, timeout=0.5).generate(MESSAGES, schema=output_schema())
    unreachable = OpenAIBackend(
        "m", base_url="http://127.0.0.1:9/v1", api_key="k", timeout=1.0, max_retries=0
    )
    with pytest.raises(LLMUnavailable):
        unreachable.generate(MESSAGES, schema=output_schema())


def test_retries_are_the_sdks(server: FakeServer) -> None:
    server.status = 503
    with pytest.raises(LLMUnavailable):
        backend(server, max_retries=1).generate(MESSAGES, schema=output_schema())
    assert len(server.requests) == 2


@pytest.mark.django_db(transaction=True)
def test_chat_stream_end_to_end_through_the_fake_server(owner: Tenant, server: FakeServer) -> None:
    with use_backend(backend(server)):
        response = owner.client("chat").post(
            f"/api/v1/workspaces/{owner.workspace.id}/chat/stream/",
            {"external_user_id": "u", "message": "When are claims filed?"},
            format="json",
        )
        events = list(sse_events(stream_of(response)))
    names = [name for name, _ in events]
    assert names[0] == "session" and names[-1] == "message"
    text = "".join(data["text"] for name, data in events if name == "delta")
    assert text == "Claims are filed within 30 days." == events[-1][1]["content"]
    stored = Message.objects.get(id=events[-1][1]["id"])
    assert (stored.prompt_tokens, stored.completion_tokens) == (120, 17)
    request = server.requests[0]
    assert request["messages"][0]["role"] == "system"
    assert request["messages"][-1]["content"].endswith("Question: When are claims filed?")
