"""The provider-agnostic gateway: one :class:`SupportsComplete` over LiteLLM.

LiteLLM speaks to 100+ providers with OpenAI-shaped requests and responses; this module is
the boundary where its types end. Every LiteLLM (and underlying OpenAI SDK) exception is
mapped onto :mod:`chimera.errors` with ``raise ... from exc``:

=====================================  ===================================
LiteLLM                                Chimera
=====================================  ===================================
AuthenticationError, PermissionDenied  AuthenticationError
RateLimitError                         RateLimitError
Timeout                                ProviderTimeout
ContextWindowExceededError             ContextWindowExceeded
BadRequestError (others), NotFound,    BadRequestError
UnprocessableEntity, UnsupportedParams
APIConnectionError, 5xx, anything else ProviderError
=====================================  ===================================

Transport retries happen inside one :meth:`LiteLLMBackend.complete` call: they are not
agent attempts and carry nothing forward. Chimera runs them itself, the same way for every
provider, with the OpenAI SDK's policy: retry 408/409/429/5xx answers, connection errors and
timeouts up to ``num_retries`` times, waiting what ``retry-after`` (or ``retry-after-ms``)
asks when it is at most 60 s, else an exponential backoff (0.5 s doubling, capped at 8 s, with
jitter). LiteLLM's own mechanisms are switched off (``max_retries=0`` for the provider
client, no ``num_retries``) because they differ per provider (its native Anthropic path has
none) and its outer loop also retries 400s and 401s without waiting. Cost comes from
LiteLLM's cost map (``None`` for an unpriced model).
"""

from __future__ import annotations

import copy
import email.utils
import json
import logging
import random
import re
import threading
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from chimera.errors import (
    AuthenticationError,
    BadRequestError,
    ContextWindowExceeded,
    ProviderError,
    ProviderTimeout,
    RateLimitError,
)
from chimera.protocols import Completion, Message, Purpose, ToolCall, ToolSchema, Usage
from chimera.providers import pricing
from chimera.providers.keys import check_credentials
from chimera.providers.lazy_litellm import import_litellm

__all__ = ["LiteLLMBackend", "map_litellm_error", "retry_delay"]

_log = logging.getLogger(__name__)


_PREFIX = re.compile(r"^(?:litellm\.)?[A-Za-z_]*(?:Error|Exception|Timeout)\s*(?::|-)\s*")


def _provider_text(exc: BaseException, limit: int = 300) -> str:
    """The provider's own message, without LiteLLM's stacked class-name prefixes, one line."""
    text = str(getattr(exc, "message", None) or exc)
    text = " ".join(text.split())
    for _ in range(8):
        stripped = _PREFIX.sub("", text, count=1)
        if stripped == text:
            break
        text = stripped
    text = text or type(exc).__name__
    if len(text) <= limit:
        return text
    from chimera.runner import word_safe_head

    # On whitespace: a cut through a key the provider echoed would keep a piece of it.
    return word_safe_head(text[: limit - 1]) + "…"


_MAPPING: tuple[tuple[tuple[str, ...], type[ProviderError], str], ...] = (
    # Most specific first: ContextWindowExceededError is a BadRequestError, Timeout is an
    # APIConnectionError.
    (("ContextWindowExceededError",), ContextWindowExceeded, "context window exceeded"),
    (("Timeout",), ProviderTimeout, "timed out"),
    (
        ("AuthenticationError", "PermissionDeniedError"),
        AuthenticationError,
        "authentication failed",
    ),
    (("RateLimitError",), RateLimitError, "rate limited"),
    (
        ("BadRequestError", "NotFoundError", "UnprocessableEntityError", "UnsupportedParamsError"),
        BadRequestError,
        "bad request",
    ),
)


def map_litellm_error(exc: BaseException, model: str) -> ProviderError:
    """The Chimera error for a LiteLLM/OpenAI exception raised while calling ``model``.

    The message reads ``MODEL: KIND: provider message`` on one line.
    """
    litellm = import_litellm()
    text = _provider_text(exc)
    for names, target, label in _MAPPING:
        classes = tuple(
            cls for cls in (getattr(litellm, n, None) for n in names) if isinstance(cls, type)
        )
        if classes and isinstance(exc, classes):
            return target(f"{model}: {label}: {text}")
    if isinstance(exc, TimeoutError):
        return ProviderTimeout(f"{model}: timed out: {text}")
    return ProviderError(f"{model}: provider error: {text}")


_RETRYABLE_NAMES = (
    "Timeout",
    "APIConnectionError",
    "RateLimitError",
    "InternalServerError",
    "ServiceUnavailableError",
    "BadGatewayError",
)


def _retryable(exc: BaseException, litellm: Any) -> bool:
    """A transient failure worth a transport retry (the OpenAI SDK's policy)."""
    classes = tuple(
        cls
        for cls in (getattr(litellm, n, None) for n in _RETRYABLE_NAMES)
        if isinstance(cls, type)
    )
    if classes and isinstance(exc, classes):
        return True
    if isinstance(exc, getattr(litellm, "ContextWindowExceededError", ())):
        return False
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and (status in (408, 409, 429) or status >= 500)


def _headers(exc: BaseException) -> Mapping[str, str]:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        headers = getattr(exc, "litellm_response_headers", None)
    if headers is None:
        return {}
    try:
        return {str(k).lower(): str(v) for k, v in dict(headers).items()}
    except (TypeError, ValueError):
        return {}


def retry_delay(exc: BaseException, retry: int) -> float:
    """Seconds to wait before transport retry number ``retry + 1`` after ``exc``.

    ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date) when it asks for at most
    60 s; otherwise ``min(0.5 * 2**retry, 8)`` with up to 25 % jitter (the OpenAI SDK's rule).
    """
    headers = _headers(exc)
    wanted: float | None = None
    try:
        if "retry-after-ms" in headers:
            wanted = float(headers["retry-after-ms"]) / 1000
        elif "retry-after" in headers:
            value = headers["retry-after"]
            try:
                wanted = float(value)
            except ValueError:
                when = email.utils.parsedate_to_datetime(value)
                wanted = (when - datetime.now(when.tzinfo or UTC)).total_seconds()
    except (TypeError, ValueError, OverflowError):
        wanted = None
    if wanted is not None and 0 <= wanted <= 60:
        return wanted
    return min(0.5 * 2.0**retry, 8.0) * (1 - 0.25 * random.random())


def _arguments_text(arguments: Any) -> str:
    if isinstance(arguments, str):
        return arguments
    if arguments is None:
        return "{}"
    return json.dumps(arguments, ensure_ascii=False)


def _dump(response: Any) -> Mapping[str, Any] | None:
    dump = getattr(response, "model_dump", None)
    if callable(dump):
        try:
            value = dump()
        except Exception:
            return None
        return value if isinstance(value, dict) else None
    return None


class LiteLLMBackend:
    """A model reached through LiteLLM.

    Args:
        model: a LiteLLM model name (``anthropic/claude-sonnet-4-5``, ``openai/gpt-4o-mini``,
            ``ollama/llama3``...).
        api_base: endpoint override (a proxy, a local OpenAI-compatible server).
        api_key: a key to use instead of the provider's environment variable.
        timeout: seconds per HTTP request.
        num_retries: transport retries per call (429/5xx, connection errors, timeouts).
        drop_params: let LiteLLM drop parameters a provider does not support.
        extra: further keyword arguments for ``litellm.completion`` (``temperature``,
            ``reasoning_effort``...).

    Raises (from :meth:`complete`):
        AuthenticationError: the key is missing (one line naming the variable) or rejected.
        RateLimitError, ProviderTimeout, ContextWindowExceeded, BadRequestError,
        ProviderError: the provider failed (after the transport retries, for transient
        failures; the message then says how many were made).
    """

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        timeout: float = 120,
        num_retries: int = 2,
        drop_params: bool = True,
        extra: dict[str, Any] | None = None,
    ) -> None:
        self.model = model
        self.api_base = api_base
        self.api_key = api_key
        self.timeout = timeout
        self.num_retries = num_retries
        self.drop_params = drop_params
        self.extra = dict(extra or {})
        self._checked = False
        self._check_lock = threading.Lock()
        self.transport_retries = 0
        """Transport retries made so far by this backend (observability; not attempts)."""

    def __repr__(self) -> str:
        return f"LiteLLMBackend(model={self.model!r}, api_base={self.api_base!r})"

    def check_credentials(self) -> None:
        """Refuse, in one line, when the model's key is not available
        (:func:`~chimera.providers.keys.check_credentials`); checked once per backend.

        Raises:
            AuthenticationError: a credential variable the model needs is unset.
        """
        if self._checked:
            return
        with self._check_lock:
            check_credentials(self.model, api_key=self.api_key, api_base=self.api_base)
            self._checked = True

    def with_reasoning_effort(self, effort: str) -> LiteLLMBackend:
        """A copy whose requests carry ``reasoning_effort`` (through ``extra``, which LiteLLM
        maps onto each provider's own parameter); this backend is unchanged."""
        clone = copy.copy(self)
        clone.extra = {**self.extra, "reasoning_effort": effort}
        return clone

    def count_tokens(
        self, messages: Sequence[Message], tools: Sequence[ToolSchema] | None = None
    ) -> int:
        """Prompt tokens by LiteLLM's counter (:func:`~chimera.providers.pricing.count_tokens`)."""
        return pricing.count_tokens(self.model, messages, tools)

    def cost_usd(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        """USD from LiteLLM's cost map (:func:`~chimera.providers.pricing.cost_usd`)."""
        return pricing.cost_usd(self.model, prompt_tokens, completion_tokens)

    def request_kwargs(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSchema] | None = None,
        max_tokens: int | None = None,
    ) -> dict[str, Any]:
        """The keyword arguments sent to ``litellm.completion`` (without the key)."""
        kwargs: dict[str, Any] = {
            **self.extra,
            "model": self.model,
            "messages": [dict(m) for m in messages],
            "timeout": self.timeout,
            # Transport retries are Chimera's (see the module docstring), so the provider
            # client must not retry on its own as well.
            "max_retries": 0,
            "drop_params": self.drop_params,
        }
        if tools:
            kwargs["tools"] = [dict(t) for t in tools]
        if max_tokens is not None:
            kwargs["max_tokens"] = max_tokens
        if self.api_base is not None:
            kwargs["api_base"] = self.api_base
        return kwargs

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSchema] | None = None,
        purpose: Purpose = Purpose.ACT,
        max_tokens: int | None = None,
    ) -> Completion:
        """Send one chat completion and return it as a :class:`Completion`.

        ``purpose`` does not change the request (routers above this backend use it).
        """
        litellm = import_litellm()
        self.check_credentials()
        kwargs = self.request_kwargs(messages, tools=tools, max_tokens=max_tokens)
        if self.api_key is not None:
            kwargs["api_key"] = self.api_key
        retry = 0
        while True:
            try:
                response = litellm.completion(**kwargs)
            except Exception as exc:
                if retry < self.num_retries and _retryable(exc, litellm):
                    delay = retry_delay(exc, retry)
                    retry += 1
                    with self._check_lock:
                        self.transport_retries += 1
                    _log.info(
                        "%s: transport retry %d/%d in %.2fs after %s",
                        self.model,
                        retry,
                        self.num_retries,
                        delay,
                        type(exc).__name__,
                    )
                    time.sleep(delay)
                    continue
                error = map_litellm_error(exc, self.model)
                if retry:
                    error = type(error)(f"{error} (after {retry} transport retries)")
                raise error from exc
            return self._to_completion(response)

    def _to_completion(self, response: Any) -> Completion:
        try:
            choice = response.choices[0]
            message = choice.message
        except (AttributeError, IndexError, TypeError) as exc:
            raise ProviderError(f"{self.model}: the response has no choices") from exc
        calls: list[ToolCall] = []
        for index, call in enumerate(getattr(message, "tool_calls", None) or []):
            function = getattr(call, "function", None)
            name = getattr(function, "name", None) or ""
            calls.append(
                ToolCall(
                    id=getattr(call, "id", None) or f"call_{index}",
                    name=name,
                    arguments=_arguments_text(getattr(function, "arguments", None)),
                )
            )
        raw_usage = getattr(response, "usage", None)
        prompt_tokens = int(getattr(raw_usage, "prompt_tokens", 0) or 0)
        completion_tokens = int(getattr(raw_usage, "completion_tokens", 0) or 0)
        cost = pricing.completion_cost_usd(response, self.model)
        if cost is None:
            cost = pricing.cost_usd(self.model, prompt_tokens, completion_tokens)
        return Completion(
            text=getattr(message, "content", None) or "",
            tool_calls=tuple(calls),
            usage=Usage(prompt_tokens, completion_tokens, cost),
            # The name the call was made with (it keys prices, ladders and receipts); the
            # provider's own answer (often a dated variant) stays in ``raw``.
            model=self.model,
            raw=_dump(response),
        )
