"""The stub server itself: routes, records, faults and a clean shutdown."""

from __future__ import annotations

import http.client
import json
import threading
import time
from typing import Any

from chimera.testing import OpenAIStubServer, StubFault, StubReply


def request(
    server: OpenAIStubServer, method: str, path: str, body: object = None, timeout: float = 5
) -> tuple[int, dict[str, str], Any]:
    """(status, lower-cased headers, the parsed JSON body)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=timeout)
    try:
        data = json.dumps(body).encode() if body is not None else None
        conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        payload = json.loads(response.read() or b"null")
        return response.status, {k.lower(): v for k, v in response.getheaders()}, payload
    finally:
        conn.close()


def stub_threads() -> list[threading.Thread]:
    return [
        t
        for t in threading.enumerate()
        if t.name.startswith("openai-stub") or "process_request" in t.name
    ]


def test_stub_server_speaks_chat_completions_and_models() -> None:
    with OpenAIStubServer({"a": [StubReply(text="one"), StubReply(text="two")]}) as server:
        status, headers, body = request(server, "GET", "/v1/models")
        assert status == 200 and [m["id"] for m in body["data"]] == ["a"]
        assert headers["connection"] == "close"
        texts = []
        for _ in range(3):
            status, _, body = request(
                server,
                "POST",
                "/v1/chat/completions",
                {"model": "a", "messages": [{"role": "user", "content": "hi"}]},
            )
            assert status == 200
            texts.append(body["choices"][0]["message"]["content"])
        assert texts == ["one", "two", "two"]  # served in order, then the last repeats
        assert (
            body["usage"]["total_tokens"]
            == body["usage"]["prompt_tokens"] + body["usage"]["completion_tokens"]
        )
        assert [r.method for r in server.requests] == ["GET", "POST", "POST", "POST"]
        assert server.completion_requests("a")[0].body["messages"][0]["content"] == "hi"


def test_stub_server_faults_in_order_and_per_model() -> None:
    with OpenAIStubServer({"a": StubReply(text="a"), "b": StubReply(text="b")}) as server:
        server.add_fault(
            StubFault(status=429, retry_after=2, model="b", message="slow"), StubFault(status=500)
        )
        msg = {"messages": [{"role": "user", "content": "x"}]}
        status, _, body = request(server, "POST", "/v1/chat/completions", {"model": "a", **msg})
        assert status == 500 and body["error"]["type"] == "server_error"
        status, headers, body = request(
            server, "POST", "/v1/chat/completions", {"model": "b", **msg}
        )
        assert status == 429 and headers["retry-after"] == "2"
        assert body["error"] == {
            "message": "slow",
            "type": "rate_limit_error",
            "param": None,
            "code": None,
        }
        assert server.pending_faults == 0
        status, _, body = request(server, "POST", "/v1/chat/completions", {"model": "zzz", **msg})
        assert status == 404 and body["error"]["code"] == "model_not_found"
        status, _, _ = request(server, "POST", "/v1/chat/completions", {"model": "a"})
        assert status == 400


def test_stub_server_stops_cleanly_even_with_a_delayed_request_in_flight() -> None:
    before = set(stub_threads())
    server = OpenAIStubServer({"a": StubReply(text="late")}).start()
    server.add_fault(StubFault(delay=30))
    errors: list[BaseException] = []

    def slow_client() -> None:
        try:
            request(
                server, "POST", "/v1/chat/completions", {"model": "a", "messages": []}, timeout=10
            )
        except Exception as exc:  # the server drops the request while stopping
            errors.append(exc)

    client = threading.Thread(target=slow_client)
    client.start()
    deadline = time.monotonic() + 5
    while not server.requests and time.monotonic() < deadline:
        time.sleep(0.01)
    started = time.monotonic()
    server.stop()
    assert time.monotonic() - started < 2  # the delayed handler was woken, not waited out
    client.join(timeout=5)
    assert not client.is_alive()
    assert set(stub_threads()) - before == set()
    server.stop()  # idempotent
