"""The MCP transport's hand-off between the SDK's event loop and the
request's thread (chat/mcp_server/transport.py): a tool's synchronous work
runs in the thread that serves the request, its errors reach the coroutine
that asked, and requests served at once do not mix their calls."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from chat.mcp_server.transport import RequestThread, event_loop


def _served(work: Any) -> Any:
    """``work(run)`` on the process's loop, served by this thread."""
    thread = RequestThread()
    done = asyncio.run_coroutine_threadsafe(work(thread.run), event_loop())
    return thread.serve_until(done)


def test_a_tools_work_runs_in_the_requests_own_thread() -> None:
    async def work(run: Any) -> tuple[int, int]:
        first = await run(threading.get_ident)
        second = await run(threading.get_ident)
        return first, second

    assert _served(work) == (threading.get_ident(), threading.get_ident())
    assert threading.get_ident() != event_loop()._thread_id  # type: ignore[attr-defined]


def test_an_error_in_the_work_reaches_the_coroutine_and_the_caller() -> None:
    def fails() -> None:
        raise LookupError("no such passage")

    async def work(run: Any) -> str:
        try:
            await run(fails)
        except LookupError as exc:
            return f"caught: {exc}"
        return "not raised"

    assert _served(work) == "caught: no such passage"

    async def lets_it_through(run: Any) -> None:
        await run(fails)

    with pytest.raises(LookupError):
        _served(lets_it_through)


def test_requests_served_at_once_each_run_their_own_work() -> None:
    def request(n: int) -> tuple[int, list[int]]:
        async def work(run: Any) -> list[int]:
            return [await run(lambda i=i: n * 100 + i) for i in range(20)]

        return threading.get_ident(), _served(work)

    with ThreadPoolExecutor(max_workers=4) as pool:
        answers = list(pool.map(request, range(8)))
    for n, (_, values) in enumerate(answers):
        assert values == [n * 100 + i for i in range(20)]
