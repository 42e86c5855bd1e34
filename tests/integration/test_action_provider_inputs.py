"""The Action's provider inputs (``api-base``, ``litellm-settings``) reach LiteLLM: settings
read the way action.yml passes them, carried by the agent request, applied to the config the
child builds, and sent over real HTTP to the local OpenAI-compatible stub."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chimera.config import load_config
from chimera.errors import ConfigError
from chimera.github.agent.child import REQUEST_VERSION, AgentRequest, config_overrides
from chimera.github.trust.settings import ActionSettings
from chimera.providers import make_backend
from chimera.providers.lazy_litellm import litellm_available
from chimera.testing import OpenAIStubServer, StubReply


def test_api_base_and_litellm_settings_reach_the_endpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("litellm")
    monkeypatch.setenv("OPENAI_API_KEY", "stub-key")
    with OpenAIStubServer({"served": StubReply(text="hello")}, api_key="stub-key") as stub:
        settings = ActionSettings.from_env(
            {
                "CHIMERA_MODEL": "openai/served",
                "CHIMERA_API_BASE": stub.api_base,
                "CHIMERA_LITELLM_SETTINGS": "temperature=0.2\ntop_p=0.5\n",
            }
        )
        request = AgentRequest(
            version=REQUEST_VERSION,
            action="start",
            root=tmp_path,
            run_id="r1",
            actor="maintainer",
            task="fix it",
            model=settings.model,
        ).model_copy(update=settings.run_overrides())
        config = load_config(tmp_path).with_overrides(
            model=request.model, **config_overrides(request)
        )
        reply = make_backend("openai/served", config).complete([{"role": "user", "content": "hi"}])
        (sent,) = stub.completion_requests("served")
    assert reply.text == "hello"
    assert sent.body["temperature"] == 0.2 and sent.body["top_p"] == 0.5


def test_a_reserved_litellm_setting_is_refused_in_one_line(tmp_path: Path) -> None:
    settings = ActionSettings.from_env({"CHIMERA_LITELLM_SETTINGS": "api_key=sk-oops"})
    with pytest.raises(ConfigError, match="litellm: api_key cannot be set here") as caught:
        load_config(tmp_path).with_overrides(litellm=settings.litellm)
    assert "\n" not in str(caught.value)


def test_an_anthropic_model_at_a_configured_api_base_gets_the_stubs_scripted_turns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the act harness relies on: the workflows name anthropic/claude-sonnet-4-5, and
    the repository's ``api_bases`` sends it to the stub's Messages API (text, tool calls, the
    key as ``x-api-key``; a wrong key is Anthropic's 401)."""
    if not litellm_available():
        pytest.skip("LiteLLM is not installed (the agent extra)")
    from chimera.testing import StubToolCall

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-stub")
    replies = [
        StubReply(text="1. Write calc.py."),
        StubReply(tool_calls=(StubToolCall("write_file", {"path": "calc.py", "content": "x"}),)),
    ]
    with OpenAIStubServer({"claude-sonnet-4-5": replies}, api_key="sk-ant-stub") as stub:
        (tmp_path / "pyproject.toml").write_text(
            f'[tool.chimera.models]\napi_bases = {{"anthropic/claude-sonnet-4-5" = "{stub.url}"}}\n'
        )
        backend = make_backend("anthropic/claude-sonnet-4-5", load_config(tmp_path))
        first = backend.complete([{"role": "user", "content": "plan"}])
        second = backend.complete([{"role": "user", "content": "act"}])
        assert first.text == "1. Write calc.py."
        assert [(c.name, json.loads(c.arguments)) for c in second.tool_calls] == [
            ("write_file", {"path": "calc.py", "content": "x"})
        ]
        asked = stub.completion_requests("claude-sonnet-4-5")
        assert [r.path for r in asked] == ["/v1/messages", "/v1/messages"]
        assert {r.headers["x-api-key"] for r in asked} == {"sk-ant-stub"}
        monkeypatch.setenv("ANTHROPIC_API_KEY", "wrong")
        with pytest.raises(Exception, match="x-api-key"):
            make_backend("anthropic/claude-sonnet-4-5", load_config(tmp_path)).complete(
                [{"role": "user", "content": "again"}]
            )
