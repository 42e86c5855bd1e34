"""A local OpenAI-compatible chat completions server for tests and demos.

It speaks enough of the OpenAI REST API for LiteLLM (``model="openai/<name>"``,
``api_base=server.api_base``, ``api_key="stub"``) and the OpenAI SDK:

* ``POST /v1/chat/completions`` (non-streaming): the next scripted reply for the requested
  model, as text and/or tool calls with the given usage numbers;
* ``POST /v1/embeddings``: a vector per input — the one set with
  :meth:`OpenAIStubServer.add_embedding` for that text, else a deterministic feature-hashing
  vector of its words (``embedding_dim`` long), so texts sharing words point alike;
* ``POST /v1/messages`` (Anthropic's Messages API, non-streaming): the same scripted replies
  in Anthropic's shape (:mod:`chimera.testing.anthropic_wire`), for LiteLLM's
  ``anthropic/<name>`` with ``api_base=server.url``; the key is checked as ``x-api-key``;
* ``GET /v1/models``: the models that have replies;
* faults, queued and consumed in order before replies: an HTTP status (429 with
  ``retry-after``, 500, 401, 400 with an error ``code``...) and/or a delay (to provoke
  client timeouts);
* a record of every request received (method, path, headers, parsed body).

Every response carries ``Connection: close``, so no client keeps a socket (and a server
thread) open after its request; :meth:`OpenAIStubServer.stop` wakes delayed handlers and
joins every thread, so a test leaks neither threads nor sockets.

Example::

    with OpenAIStubServer() as server:
        server.add_reply("m", StubReply(text="hello", prompt_tokens=12, completion_tokens=3))
        backend = LiteLLMBackend("openai/m", api_base=server.api_base, api_key="stub")
        assert backend.complete([{"role": "user", "content": "hi"}]).text == "hello"

About 450 lines on purpose: the request handler and the server share one script (replies,
faults, the record of requests) and its lock; apart, the handler would reach into the server's
state from another module.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from chimera.testing import anthropic_wire
from chimera.testing._server import LocalServer, OneShotHandler

__all__ = ["OpenAIStubServer", "RecordedRequest", "StubFault", "StubReply", "StubToolCall"]


@dataclass(frozen=True, slots=True)
class StubToolCall:
    """A tool call in a scripted reply; ``arguments`` may be a mapping or raw JSON text."""

    name: str
    arguments: Mapping[str, Any] | str = field(default_factory=dict)
    id: str | None = None


@dataclass(frozen=True, slots=True)
class StubReply:
    """A scripted assistant reply.

    ``prompt_tokens`` / ``completion_tokens`` default to a rough estimate (characters / 4);
    set them for tests that check exact costs.
    """

    text: str | None = None
    tool_calls: tuple[StubToolCall, ...] = ()
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None


@dataclass(frozen=True, slots=True)
class StubFault:
    """An injected failure for the next matching request.

    Attributes:
        status: HTTP status to answer with (``None``: answer normally after ``delay``).
        message: the error message in OpenAI's error body.
        code: OpenAI error ``code`` (``context_length_exceeded``, ``rate_limit_exceeded``...).
        retry_after: seconds for a ``retry-after`` header (429s).
        delay: seconds to wait before answering (a client with a shorter timeout gives up).
        model: only requests for this model consume the fault (``None``: any request).
    """

    status: int | None = None
    message: str = "injected fault"
    code: str | None = None
    retry_after: float | None = None
    delay: float = 0.0
    model: str | None = None


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request as the server received it (``body`` is the parsed JSON, or ``None``)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    received_at: float

    @property
    def model(self) -> str | None:
        return self.body.get("model") if isinstance(self.body, dict) else None


_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
}


def _estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


class _Handler(OneShotHandler):
    @property
    def _owner(self) -> OpenAIStubServer:
        owner: OpenAIStubServer = self.server.owner  # type: ignore[attr-defined]
        return owner

    def _read_body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return raw.decode("utf-8", errors="replace")

    def _send_json(self, status: int, payload: Any, headers: Mapping[str, str] = {}) -> None:
        self.close_connection = True
        self.reply(status, json.dumps(payload).encode("utf-8"), "application/json", headers)

    def _error(self, status: int, message: str, code: str | None = None, **headers: str) -> None:
        payload = {
            "error": {
                "message": message,
                "type": _ERROR_TYPES.get(status, "server_error"),
                "param": None,
                "code": code,
            }
        }
        self._send_json(status, payload, headers)

    def do_GET(self) -> None:
        stub = self._owner
        stub._record(self, None)
        if self.path.rstrip("/") == "/v1/models":
            models = [{"id": m, "object": "model", "owned_by": "stub"} for m in stub.models()]
            self._send_json(200, {"object": "list", "data": models})
        else:
            self._error(404, f"no route for GET {self.path}")

    def do_POST(self) -> None:
        stub = self._owner
        body = self._read_body()
        stub._record(self, body)
        path = self.path.split("?", 1)[0].rstrip("/")
        if path == anthropic_wire.MESSAGES_PATH:
            self._messages(stub, body)
            return
        if path not in ("/v1/chat/completions", "/v1/embeddings"):
            self._error(404, f"no route for POST {self.path}")
            return
        if path == "/v1/embeddings":
            self._embeddings(body)
            return
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            self._error(400, "the body must be a JSON object with 'messages'")
            return
        if body.get("stream"):
            self._error(400, "the stub server does not stream")
            return
        model = str(body.get("model", ""))
        expected = f"Bearer {stub.api_key}"
        if stub.api_key is not None and self.headers.get("Authorization", "") != expected:
            self._error(401, "Incorrect API key provided", "invalid_api_key")
            return
        fault = stub._take_fault(model)
        if fault is not None:
            if fault.delay > 0 and stub._stopping.wait(fault.delay):
                return  # the server is stopping: drop the request
            if fault.status is not None:
                headers = {}
                if fault.retry_after is not None:
                    headers["retry-after"] = f"{fault.retry_after:g}"
                self._error(fault.status, fault.message, fault.code, **headers)
                return
        reply = stub._take_reply(model)
        if reply is None:
            self._error(404, f"The model `{model}` does not exist", "model_not_found")
            return
        self._send_json(200, stub._completion_body(model, body, reply))

    def _embeddings(self, body: Any) -> None:
        stub = self._owner
        raw = body.get("input") if isinstance(body, dict) else None
        texts = [raw] if isinstance(raw, str) else raw
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
            self._error(400, "the body must be a JSON object with 'input': a string or strings")
            return
        expected = f"Bearer {stub.api_key}"
        if stub.api_key is not None and self.headers.get("Authorization", "") != expected:
            self._error(401, "Incorrect API key provided", "invalid_api_key")
            return
        data = [
            {"object": "embedding", "index": i, "embedding": stub.embedding(text)}
            for i, text in enumerate(texts)
        ]
        tokens = sum(_estimate_tokens(t) for t in texts)
        self._send_json(
            200,
            {
                "object": "list",
                "data": data,
                "model": str(body.get("model", "")),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )

    def _messages(self, stub: OpenAIStubServer, body: Any) -> None:
        """Anthropic's ``POST /v1/messages``: the next scripted reply, in its shape."""

        def fail(status: int, message: str, **headers: str) -> None:
            self._send_json(status, anthropic_wire.error_body(status, message), headers)

        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            fail(400, "messages: field required")
            return
        if body.get("stream"):
            fail(400, "the stub server does not stream")
            return
        model = str(body.get("model", ""))
        if stub.api_key is not None and self.headers.get("x-api-key", "") != stub.api_key:
            fail(401, "invalid x-api-key")
            return
        fault = stub._take_fault(model)
        if fault is not None:
            if fault.delay > 0 and stub._stopping.wait(fault.delay):
                return
            if fault.status is not None:
                extra = (
                    {} if fault.retry_after is None else {"retry-after": f"{fault.retry_after:g}"}
                )
                fail(fault.status, fault.message, **extra)
                return
        reply = stub._take_reply(model)
        if reply is None:
            fail(404, f"model: {model}")
            return
        prompt = reply.prompt_tokens
        if prompt is None:
            prompt = _estimate_tokens(anthropic_wire.prompt_text(body))
        completion = reply.completion_tokens
        if completion is None:
            calls = json.dumps([[c.name, c.arguments] for c in reply.tool_calls], default=dict)
            completion = _estimate_tokens((reply.text or "") + calls)
        number = next(stub._ids)
        self._send_json(200, anthropic_wire.message_body(model, reply, number, prompt, completion))


class OpenAIStubServer(LocalServer):
    """A threaded OpenAI-compatible stub on ``127.0.0.1`` (an ephemeral port).

    Args:
        replies: initial replies per model name (the name LiteLLM sends, without the
            ``openai/`` prefix): one :class:`StubReply` or several, served in order; once a
            model's queue is empty, the reply served last repeats.
        api_key: when set, requests without ``Authorization: Bearer <api_key>`` get a 401.
        embedding_dim: the length of the hashed vectors ``/v1/embeddings`` answers with.

    Use as a context manager, or call :meth:`start` and :meth:`stop`.
    """

    def __init__(
        self,
        replies: Mapping[str, StubReply | Iterable[StubReply]] | None = None,
        *,
        api_key: str | None = None,
        embedding_dim: int = 32,
    ) -> None:
        self.api_key = api_key
        self.embedding_dim = embedding_dim
        self._vectors: dict[str, list[float]] = {}
        self._lock = threading.Lock()
        self._replies: dict[str, deque[StubReply]] = {}
        self._last: dict[str, StubReply] = {}
        self._faults: deque[StubFault] = deque()
        self._requests: list[RecordedRequest] = []
        self._ids = itertools.count(1)
        super().__init__()
        for model, value in (replies or {}).items():
            if isinstance(value, StubReply):
                self.add_reply(model, value)
            else:
                self.add_reply(model, *value)

    handler = _Handler
    thread_name = "openai-stub"

    @property
    def api_base(self) -> str:
        """``url + "/v1"``: what LiteLLM's ``api_base`` (or the OpenAI SDK's base_url) takes."""
        return self.url + "/v1"

    # -- scripting -------------------------------------------------------------------------

    def add_reply(self, model: str, *replies: StubReply) -> None:
        """Queue replies for ``model``, served in order; when the queue is empty, the reply
        served last repeats."""
        with self._lock:
            self._replies.setdefault(model, deque()).extend(replies)

    def add_embedding(self, text: str, vector: Iterable[float]) -> None:
        """Answer ``/v1/embeddings`` for exactly ``text`` with ``vector`` (any length; every
        vector a test compares should have the same one)."""
        with self._lock:
            self._vectors[text] = [float(v) for v in vector]

    def embedding(self, text: str) -> list[float]:
        """The vector ``/v1/embeddings`` answers for ``text`` (see the module docstring)."""
        with self._lock:
            if text in self._vectors:
                return list(self._vectors[text])
        vec = [0.0] * self.embedding_dim
        for word in re.findall(r"\w+", text.lower()):
            digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
            vec[int.from_bytes(digest[:4], "little") % self.embedding_dim] += (
                1.0 if digest[4] & 1 else -1.0
            )
        return vec

    def embedding_requests(self) -> list[RecordedRequest]:
        """The ``/v1/embeddings`` requests received."""
        return [r for r in self.requests if r.path.rstrip("/") == "/v1/embeddings"]

    def add_fault(self, *faults: StubFault) -> None:
        """Queue faults; each is consumed by the next request for its model (or any)."""
        with self._lock:
            self._faults.extend(faults)

    def models(self) -> list[str]:
        """The model names that have (or had) replies."""
        with self._lock:
            return sorted(set(self._replies) | set(self._last))

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in arrival order (a copy)."""
        with self._lock:
            return list(self._requests)

    def completion_requests(self, model: str | None = None) -> list[RecordedRequest]:
        """The chat completion requests received, OpenAI's and Anthropic's (optionally only
        for ``model``)."""
        paths = ("/v1/chat/completions", anthropic_wire.MESSAGES_PATH)
        return [
            r
            for r in self.requests
            if r.method == "POST"
            and r.path.split("?", 1)[0].rstrip("/") in paths
            and (model is None or r.model == model)
        ]

    @property
    def pending_faults(self) -> int:
        with self._lock:
            return len(self._faults)

    # -- used by the handler ---------------------------------------------------------------

    def _record(self, handler: BaseHTTPRequestHandler, body: Any) -> None:
        request = RecordedRequest(
            method=handler.command,
            path=handler.path,
            headers={k.lower(): v for k, v in handler.headers.items()},
            body=body,
            received_at=time.time(),
        )
        with self._lock:
            self._requests.append(request)

    def _take_fault(self, model: str) -> StubFault | None:
        with self._lock:
            for index, fault in enumerate(self._faults):
                if fault.model is None or fault.model == model:
                    del self._faults[index]
                    return fault
        return None

    def _take_reply(self, model: str) -> StubReply | None:
        with self._lock:
            queue = self._replies.get(model)
            if queue:
                self._last[model] = queue.popleft()
            return self._last.get(model)

    def _completion_body(self, model: str, request: dict[str, Any], reply: StubReply) -> Any:
        number = next(self._ids)
        tool_calls = [
            {
                "id": call.id or f"call_stub_{number}_{i}",
                "type": "function",
                "function": {
                    "name": call.name,
                    "arguments": call.arguments
                    if isinstance(call.arguments, str)
                    else json.dumps(dict(call.arguments)),
                },
            }
            for i, call in enumerate(reply.tool_calls)
        ]
        message: dict[str, Any] = {"role": "assistant", "content": reply.text}
        if tool_calls:
            message["tool_calls"] = tool_calls
        prompt_tokens = reply.prompt_tokens
        if prompt_tokens is None:
            prompt_tokens = _estimate_tokens(json.dumps(request.get("messages")))
        completion_tokens = reply.completion_tokens
        if completion_tokens is None:
            completion_tokens = _estimate_tokens((reply.text or "") + json.dumps(tool_calls))
        finish = reply.finish_reason or ("tool_calls" if tool_calls else "stop")
        return {
            "id": f"chatcmpl-stub-{number}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
