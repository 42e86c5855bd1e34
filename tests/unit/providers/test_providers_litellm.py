from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chimera.config import ChimeraConfig, ModelPrice
from chimera.errors import (
    AuthenticationError,
    BadRequestError,
    ContextWindowExceeded,
    ProviderError,
    ProviderTimeout,
    RateLimitError,
)
from chimera.providers import (
    LiteLLMBackend,
    cost_usd,
    count_tokens,
    is_priced,
    load_dotenv_file,
    make_backend,
    missing_key_message,
    register_prices,
)
from chimera.providers.lazy_litellm import import_litellm

USER = [{"role": "user", "content": "hello"}]


@pytest.fixture(scope="module")
def litellm() -> Any:
    return import_litellm()


def test_litellm_not_imported_by_the_package() -> None:
    code = (
        "import sys\n"
        "import chimera.providers, chimera.config, chimera.governance.audit, chimera.testing\n"
        "heavy = [m for m in ('litellm', 'openai', 'httpx', 'tiktoken') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_litellm_import_sets_offline_defaults(litellm: Any) -> None:
    assert os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"
    assert os.environ["LITELLM_MODE"] == "PRODUCTION"


def test_litellm_mock_response_becomes_a_completion(litellm: Any) -> None:
    register_prices(
        {"openai/chimera-test-mock": ModelPrice(input_per_mtok=3.0, output_per_mtok=6.0)}
    )
    backend = LiteLLMBackend(
        "openai/chimera-test-mock",
        api_key="k",
        extra={
            "mock_response": "hi there",
            "mock_tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "a"}'},
                }
            ],
        },
    )
    completion = backend.complete(USER, max_tokens=20)
    assert completion.text == "hi there"
    assert [(c.id, c.name, c.arguments) for c in completion.tool_calls] == [
        ("c1", "read_file", '{"path": "a"}')
    ]
    usage = completion.usage
    assert usage.prompt_tokens > 0 and usage.completion_tokens > 0
    assert usage.cost_usd == pytest.approx(
        (usage.prompt_tokens * 3.0 + usage.completion_tokens * 6.0) / 1e6
    )
    assert completion.model == "openai/chimera-test-mock"
    assert (
        completion.raw is not None
        and completion.raw["choices"][0]["message"]["content"] == "hi there"
    )
    assert completion.as_message()["tool_calls"][0]["function"]["name"] == "read_file"


def test_litellm_unpriced_model_costs_none(litellm: Any) -> None:
    backend = LiteLLMBackend(
        "openai/chimera-test-never-priced", api_key="k", extra={"mock_response": "x"}
    )
    assert backend.complete(USER).usage.cost_usd is None
    assert cost_usd("openai/chimera-test-never-priced", 10, 10) is None
    assert not is_priced("openai/chimera-test-never-priced")


def test_litellm_cost_and_tokens_from_litellm(litellm: Any) -> None:
    register_prices(
        {"openai/chimera-test-exact": ModelPrice(input_per_token=1e-6, output_per_token=4e-6)}
    )
    assert cost_usd("openai/chimera-test-exact", 1000, 500) == pytest.approx(0.003)
    assert is_priced("gpt-4o")  # LiteLLM's bundled cost map
    n = count_tokens("gpt-4o", USER)
    assert n == litellm.token_counter(model="gpt-4o", messages=USER)
    tool = {
        "type": "function",
        "function": {"name": "f", "description": "d" * 400, "parameters": {"type": "object"}},
    }
    assert count_tokens("gpt-4o", USER, [tool]) > n


@pytest.mark.parametrize(
    ("make", "expected", "label"),
    [
        (
            lambda m: m.RateLimitError("slow down", llm_provider="openai", model="x"),
            RateLimitError,
            "rate limited",
        ),
        (
            lambda m: m.AuthenticationError("bad key", llm_provider="openai", model="x"),
            AuthenticationError,
            "authentication failed",
        ),
        (
            lambda m: m.ContextWindowExceededError("too long", model="x", llm_provider="openai"),
            ContextWindowExceeded,
            "context window exceeded",
        ),
        (
            lambda m: m.Timeout("late", model="x", llm_provider="openai"),
            ProviderTimeout,
            "timed out",
        ),
        (
            lambda m: m.BadRequestError("no", model="x", llm_provider="openai"),
            BadRequestError,
            "bad request",
        ),
        (
            lambda m: m.APIConnectionError("refused", llm_provider="openai", model="x"),
            ProviderError,
            "provider error",
        ),
        (
            lambda m: m.InternalServerError("ise", llm_provider="openai", model="x"),
            ProviderError,
            "provider error",
        ),
    ],
)
def test_litellm_errors_map_onto_chimera_errors(
    litellm: Any, make: Any, expected: type[Exception], label: str
) -> None:
    exc = make(litellm)
    backend = LiteLLMBackend("openai/x", api_key="k", num_retries=0, extra={"mock_response": exc})
    with pytest.raises(expected) as info:
        backend.complete(USER)
    assert type(info.value) is expected
    assert str(info.value).startswith(f"openai/x: {label}: ")
    assert "\n" not in str(info.value)
    assert info.value.__cause__ is exc


def test_litellm_missing_key_is_one_line_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, litellm: Any
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    backend = LiteLLMBackend(
        "anthropic/claude-3-5-sonnet-20240620", extra={"mock_response": "never"}
    )
    with pytest.raises(AuthenticationError) as info:
        backend.complete(USER)
    assert str(info.value) == (
        "model 'anthropic/claude-3-5-sonnet-20240620' needs the environment variable "
        "ANTHROPIC_API_KEY: set it, or put it in the project's .env"
    )
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    assert backend.complete(USER).text == "never"


def test_litellm_missing_key_message_lists_several() -> None:
    assert missing_key_message("m", ["A_KEY", "B_SECRET"]) == (
        "model 'm' needs the environment variables A_KEY, B_SECRET: set them, or put them "
        "in the project's .env"
    )


def test_litellm_request_kwargs_carry_settings() -> None:
    backend = LiteLLMBackend(
        "openai/x", api_base="http://h/v1", timeout=5, num_retries=1, extra={"temperature": 0}
    )
    kwargs = backend.request_kwargs(USER, tools=[{"type": "function"}], max_tokens=7)
    assert kwargs["api_base"] == "http://h/v1" and kwargs["timeout"] == 5
    assert kwargs["max_retries"] == 0 and kwargs["max_tokens"] == 7 and kwargs["temperature"] == 0
    assert kwargs["tools"] == [{"type": "function"}] and kwargs["drop_params"] is True
    assert "num_retries" not in kwargs and "api_key" not in kwargs


def test_litellm_make_backend_uses_config(litellm: Any) -> None:
    config = ChimeraConfig.model_validate(
        {
            "models": {
                "api_base": "http://all/v1",
                "api_bases": {"openai/special": "http://special/v1"},
                "timeout": 9,
                "num_retries": 0,
                "prices": {
                    "openai/chimera-test-config": {"input_per_mtok": 2, "output_per_mtok": 2}
                },
            }
        }
    )
    backend = make_backend("openai/special", config)
    assert isinstance(backend, LiteLLMBackend)
    assert (
        backend.api_base == "http://special/v1"
        and backend.timeout == 9
        and backend.num_retries == 0
    )
    other = make_backend("openai/other", config)
    assert isinstance(other, LiteLLMBackend) and other.api_base == "http://all/v1"
    assert cost_usd("openai/chimera-test-config", 500_000, 500_000) == pytest.approx(2.0)


@pytest.fixture
def clean_env() -> Iterator[list[str]]:
    names: list[str] = []
    yield names
    for name in names:
        os.environ.pop(name, None)


def test_keys_load_dotenv_never_overrides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clean_env: list[str]
) -> None:
    monkeypatch.setenv("CHIMERA_TEST_KEEP", "from-env")
    monkeypatch.delenv("CHIMERA_TEST_NEW_KEY", raising=False)
    (tmp_path / ".env").write_text(
        "CHIMERA_TEST_NEW_KEY=sk-123\nCHIMERA_TEST_KEEP=from-file\n# comment\n", encoding="utf-8"
    )
    clean_env.append("CHIMERA_TEST_NEW_KEY")
    assert load_dotenv_file(tmp_path) == ["CHIMERA_TEST_NEW_KEY"]
    assert os.environ["CHIMERA_TEST_NEW_KEY"] == "sk-123"
    assert os.environ["CHIMERA_TEST_KEEP"] == "from-env"
    assert load_dotenv_file(tmp_path) == []  # already set now


def test_keys_no_dotenv_file(tmp_path: Path) -> None:
    assert load_dotenv_file(tmp_path) == []


def test_litellm_register_price_needs_a_known_provider(litellm: Any) -> None:
    from chimera.errors import ConfigError

    with pytest.raises(
        ConfigError, match=r"models\.prices\.no-provider-model: LiteLLM does not know"
    ):
        register_prices({"no-provider-model": ModelPrice(input_per_mtok=1, output_per_mtok=1)})


def test_make_backend_without_litellm_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from chimera.errors import MissingExtraError
    from chimera.providers import factory

    monkeypatch.setattr(factory, "litellm_available", lambda: False)
    with pytest.raises(MissingExtraError, match=r"pip install 'pytest-chimera\[agent\]'"):
        make_backend("openai/gpt-4o-mini")


class _Exc(Exception):
    def __init__(self, headers: dict[str, str]) -> None:
        super().__init__("x")

        class _Response:
            pass

        self.response = _Response()
        self.response.headers = headers  # type: ignore[attr-defined]


def test_retry_delay_honours_retry_after_forms() -> None:
    from datetime import UTC, datetime, timedelta
    from email.utils import format_datetime

    from chimera.providers.litellm_backend import retry_delay

    assert retry_delay(_Exc({"retry-after": "1.5"}), 0) == 1.5
    assert retry_delay(_Exc({"Retry-After-Ms": "250"}), 0) == 0.25
    soon = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 25 < retry_delay(_Exc({"retry-after": soon}), 0) <= 30
    # Too long or missing: exponential backoff with jitter, capped at 8 s.
    assert 0.375 <= retry_delay(_Exc({"retry-after": "3600"}), 0) <= 0.5
    assert 0.75 <= retry_delay(_Exc({}), 1) <= 1.0
    assert 6.0 <= retry_delay(ValueError("no headers"), 10) <= 8.0


def test_transport_retries_are_inside_one_call(litellm: Any) -> None:
    # mock_response raises the same error on every try: the retries are spent, then the
    # error is mapped once, naming how many transport retries were made.
    exc = litellm.RateLimitError("slow down", llm_provider="openai", model="x")
    exc.response = type("R", (), {"headers": {"retry-after": "0"}})()
    backend = LiteLLMBackend("openai/x", api_key="k", num_retries=2, extra={"mock_response": exc})
    with pytest.raises(
        RateLimitError, match=r"rate limited: slow down \(after 2 transport retries\)$"
    ):
        backend.complete(USER)
    assert backend.transport_retries == 2
    auth = litellm.AuthenticationError("bad key", llm_provider="openai", model="x")
    no_retry = LiteLLMBackend("openai/x", api_key="k", num_retries=2, extra={"mock_response": auth})
    with pytest.raises(AuthenticationError):
        no_retry.complete(USER)
    assert no_retry.transport_retries == 0
