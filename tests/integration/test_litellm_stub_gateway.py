"""LiteLLM over real HTTP against the local OpenAI-compatible stub server."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from chimera.config import ChimeraConfig
from chimera.errors import (
    AuthenticationError,
    BadRequestError,
    ContextWindowExceeded,
    ProviderError,
    ProviderTimeout,
    RateLimitError,
)
from chimera.providers import LiteLLMBackend, make_backend
from chimera.testing import OpenAIStubServer, StubFault, StubReply, StubToolCall

USER = [{"role": "user", "content": "please fix calc.py"}]
PRICED = "chimera-stub-priced"  # registered below at $1.25 / $10 per million tokens
WRITE_FILE = {
    "type": "function",
    "function": {
        "name": "write_file",
        "description": "Write a file",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"],
        },
    },
}


@pytest.fixture
def stub() -> Iterator[OpenAIStubServer]:
    with OpenAIStubServer() as server:
        yield server


def backend(stub: OpenAIStubServer, name: str, **kwargs: object) -> LiteLLMBackend:
    return LiteLLMBackend(f"openai/{name}", api_base=stub.api_base, api_key="stub", **kwargs)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def config() -> ChimeraConfig:
    return ChimeraConfig.model_validate(
        {
            "models": {
                "prices": {f"openai/{PRICED}": {"input_per_mtok": 1.25, "output_per_mtok": 10.0}}
            }
        }
    )


def test_stub_text_reply_with_exact_registered_cost(
    stub: OpenAIStubServer, config: ChimeraConfig
) -> None:
    stub.add_reply(PRICED, StubReply(text="Done.", prompt_tokens=1200, completion_tokens=300))
    gateway = make_backend(f"openai/{PRICED}", config.with_overrides(api_base=stub.api_base))
    assert isinstance(gateway, LiteLLMBackend)
    gateway.api_key = "stub"
    completion = gateway.complete(USER, max_tokens=64)
    assert completion.text == "Done."
    assert completion.usage.prompt_tokens == 1200 and completion.usage.completion_tokens == 300
    assert completion.usage.cost_usd == pytest.approx(1200 * 1.25e-6 + 300 * 10e-6)  # 0.0045
    assert completion.model == f"openai/{PRICED}"
    (request,) = stub.completion_requests()
    assert request.body["model"] == PRICED and request.body["max_tokens"] == 64
    assert request.body["messages"] == USER
    assert request.headers["authorization"] == "Bearer stub"


def test_stub_unpriced_model_cost_is_none(stub: OpenAIStubServer) -> None:
    stub.add_reply(
        "chimera-stub-unpriced", StubReply(text="x", prompt_tokens=10, completion_tokens=1)
    )
    completion = backend(stub, "chimera-stub-unpriced").complete(USER)
    assert completion.usage.prompt_tokens == 10 and completion.usage.cost_usd is None


def test_stub_tool_calls_round_trip(stub: OpenAIStubServer) -> None:
    stub.add_reply(
        "tools",
        StubReply(
            text=None,
            tool_calls=(
                StubToolCall("write_file", {"path": "calc.py", "content": "x = 1\n"}, id="call_a"),
                StubToolCall("run_command", '{"command": "pytest -q"'),
            ),
            prompt_tokens=50,
            completion_tokens=20,
        ),
    )
    completion = backend(stub, "tools").complete(USER, tools=[WRITE_FILE])
    assert completion.text == ""
    first, second = completion.tool_calls
    assert first.id == "call_a" and first.name == "write_file"
    assert json.loads(first.arguments) == {"path": "calc.py", "content": "x = 1\n"}
    assert second.name == "run_command" and second.arguments == '{"command": "pytest -q"'
    (request,) = stub.completion_requests()
    assert request.body["tools"] == [WRITE_FILE]
    # The assistant message feeds back into the next turn unchanged.
    follow_up = [
        *USER,
        completion.as_message(),
        {"role": "tool", "tool_call_id": "call_a", "content": "ok"},
    ]
    stub.add_reply("tools", StubReply(text="all done", prompt_tokens=80, completion_tokens=3))
    assert backend(stub, "tools").complete(follow_up, tools=[WRITE_FILE]).text == "all done"
    sent = stub.completion_requests()[-1].body["messages"]
    assert sent[1]["tool_calls"][0]["function"]["name"] == "write_file"
    assert sent[2] == {"role": "tool", "tool_call_id": "call_a", "content": "ok"}


@pytest.mark.parametrize(
    ("fault", "expected", "label"),
    [
        (
            StubFault(status=401, message="Incorrect API key provided"),
            AuthenticationError,
            "authentication failed",
        ),
        (StubFault(status=400, message="'messages' is malformed"), BadRequestError, "bad request"),
        (
            StubFault(
                status=400,
                code="context_length_exceeded",
                message="This model's maximum context length is 8 tokens. "
                "However, your messages resulted in 12 tokens.",
            ),
            ContextWindowExceeded,
            "context window exceeded",
        ),
    ],
)
def test_stub_client_errors_map_and_are_not_retried(
    stub: OpenAIStubServer, fault: StubFault, expected: type[Exception], label: str
) -> None:
    stub.add_reply("m", StubReply(text="never"))
    stub.add_fault(fault)
    with pytest.raises(expected) as info:
        backend(stub, "m", num_retries=2).complete(USER)
    assert type(info.value) is expected
    assert str(info.value).startswith(f"openai/m: {label}: ")
    assert fault.message.split(".")[0] in str(info.value)
    assert len(stub.completion_requests()) == 1  # a client error is not retried


def test_stub_rate_limit_after_transport_retries(stub: OpenAIStubServer) -> None:
    stub.add_reply("m", StubReply(text="never"))
    stub.add_fault(
        *[StubFault(status=429, retry_after=0.01, message="Rate limit reached") for _ in range(3)]
    )
    gateway = backend(stub, "m", num_retries=2)
    with pytest.raises(RateLimitError) as info:
        gateway.complete(USER)
    assert str(info.value) == (
        "openai/m: rate limited: Rate limit reached (after 2 transport retries)"
    )
    assert len(stub.completion_requests()) == 3  # the first try and two transport retries
    assert gateway.transport_retries == 2


def test_stub_transport_retry_is_invisible_to_the_caller(stub: OpenAIStubServer) -> None:
    stub.add_reply("m", StubReply(text="recovered", prompt_tokens=5, completion_tokens=1))
    stub.add_fault(
        StubFault(status=500, message="upstream hiccup"), StubFault(status=429, retry_after=0.01)
    )
    completion = backend(stub, "m", num_retries=2).complete(USER)
    assert completion.text == "recovered"
    assert completion.usage.prompt_tokens == 5  # one completion, not an attempt per retry
    assert len(stub.completion_requests()) == 3


def test_stub_server_error_without_retries_is_a_provider_error(stub: OpenAIStubServer) -> None:
    stub.add_reply("m", StubReply(text="never"))
    stub.add_fault(StubFault(status=500, message="boom"))
    with pytest.raises(ProviderError, match=r"^openai/m: provider error: ") as info:
        backend(stub, "m", num_retries=0).complete(USER)
    assert type(info.value) is ProviderError


def test_stub_timeout(stub: OpenAIStubServer) -> None:
    stub.add_reply("m", StubReply(text="too late"))
    stub.add_fault(StubFault(delay=5.0))
    with pytest.raises(ProviderTimeout, match=r"^openai/m: timed out: "):
        backend(stub, "m", timeout=0.3, num_retries=0).complete(USER)


def test_stub_rejects_a_wrong_key() -> None:
    with OpenAIStubServer({"m": StubReply(text="hi")}, api_key="secret") as server:
        wrong = LiteLLMBackend("openai/m", api_base=server.api_base, api_key="nope", num_retries=0)
        with pytest.raises(AuthenticationError):
            wrong.complete(USER)
        right = LiteLLMBackend("openai/m", api_base=server.api_base, api_key="secret")
        assert right.complete(USER).text == "hi"


def test_stub_unknown_model_is_a_bad_request(stub: OpenAIStubServer) -> None:
    with pytest.raises(BadRequestError, match="does not exist"):
        backend(stub, "nobody", num_retries=0).complete(USER)
