"""Anthropic's Messages API wire format for :class:`~chimera.testing.openai_stub.OpenAIStubServer`.

The stub serves its scripted replies on ``POST /v1/messages`` too, so a client that speaks
Anthropic's API (LiteLLM's ``anthropic/<model>`` with ``api_base`` at the stub) gets them: a
workflow whose ``model`` input is fixed to an Anthropic model can run against scripted turns.
Only the non-streaming form is served. Shapes follow Anthropic's published API reference
(``messages`` request: ``model``, ``system``, ``messages``, ``tools``, ``max_tokens``; response:
``content`` blocks of ``text`` and ``tool_use``, ``stop_reason``, ``usage``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chimera.testing.openai_stub import StubReply

__all__ = ["MESSAGES_PATH", "error_body", "message_body", "prompt_text"]

MESSAGES_PATH = "/v1/messages"
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    529: "overloaded_error",
}


def prompt_text(request: dict[str, Any]) -> str:
    """The request's prompt as one string (system and messages), for a token estimate."""
    return json.dumps([request.get("system"), request.get("messages")])


def message_body(
    model: str, reply: StubReply, number: int, prompt_tokens: int, completion_tokens: int
) -> dict[str, Any]:
    """The ``message`` object answering a request for ``model`` with ``reply``."""
    content: list[dict[str, Any]] = []
    if reply.text:
        content.append({"type": "text", "text": reply.text})
    for i, call in enumerate(reply.tool_calls):
        arguments = call.arguments
        parsed = json.loads(arguments) if isinstance(arguments, str) else dict(arguments)
        content.append(
            {
                "type": "tool_use",
                "id": call.id or f"toolu_stub_{number}_{i}",
                "name": call.name,
                "input": parsed,
            }
        )
    stop = "tool_use" if reply.tool_calls else "end_turn"
    if reply.finish_reason == "length":
        stop = "max_tokens"
    return {
        "id": f"msg_stub_{number}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": prompt_tokens, "output_tokens": completion_tokens},
    }


def error_body(status: int, message: str) -> dict[str, Any]:
    """Anthropic's error shape (``{"type": "error", "error": {"type", "message"}}``)."""
    kind = _ERROR_TYPES.get(status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": message}}
